"""(b) Requests per second through a real mitmdump: plain, with a json.loads-only script, and
with the addon, the same bodies, to an upstream that answers without reading them
(harness.sink), so that mitmdump, not the provider, sets the pace."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import NamedTuple
from typing import TypeVar

from benchmark.workload import CHAT_PATH
from benchmark.workload import PROVIDER_RESPONSE_HEADERS
from benchmark.workload import QUICK_RPS_CASES
from benchmark.workload import SDK_LOAD_HEADERS
from benchmark.workload import Case
from benchmark.workload import chat_answer
from benchmark.workload import mcp_named
from harness.load import LoadRequest
from harness.load import progress
from harness.load import run_load
from harness.mitmdump import ADDON_SCRIPT
from harness.mitmdump import start_mitmdump
from harness.processes import Process
from harness.processes import ProcessGroup
from harness.sink import http_answer
from harness.sink import start_sink
from toolnames_core import READERS
from toolnames_core import Exchange
from toolnames_core import choose_rule
from toolnames_core import format_for

__all__ = [
    "FIX_JSON_READER",
    "FIX_MODE",
    "JSON_ONLY_SCRIPT",
    "JSON_READER",
    "NAIVE_RENAMING",
    "RENAMING_SCRIPT",
    "RENAMING_VARIANTS",
    "VARIANTS",
    "RenamingRow",
    "RpsRow",
    "Variant",
    "bench_renaming",
    "bench_rps",
    "raise_on_logged_errors",
    "run_rows",
    "start_bench_mitmdump",
]

# A reference for (b): the least any addon that reads the tools must do, parse the body once.
JSON_ONLY_SCRIPT = """\
import json
def request(flow):
    json.loads(flow.request.content or b"null")
"""

# The addon as it runs (msgspec where it can be imported), and with each other reader.
JSON_READER = "toolnames, json reader"
VARIANTS = ("plain", "json.loads only", "toolnames", *([JSON_READER] if len(READERS) > 1 else []))

# A reference for fix mode's renaming: what a script that renames with json.loads and
# json.dumps does, both ways. It aliases every name OpenAI's rule rejects as toolnames does
# (so the sink's call to an alias is renamed back by both), in the tools, a named
# tool_choice and the calls in the history, and gives the answer's calls their names back;
# it keeps no byte the client sent (key order, spacing, escapes are json.dumps').
RENAMING_SCRIPT = """\
import hashlib, json, re
INVALID = re.compile(r"[^a-zA-Z0-9_-]")
def alias(name):
    if name and len(name) <= 64 and not INVALID.search(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return INVALID.sub("_", name)[:55] + "_" + digest
def request(flow):
    body = json.loads(flow.request.content or b"null")
    if not isinstance(body, dict):
        return
    aliases = {}
    def rename(function):
        new = alias(function["name"])
        if new != function["name"]:
            aliases[new] = function["name"]
            function["name"] = new
    for tool in body.get("tools") or ():
        rename(tool["function"])
    if isinstance(body.get("tool_choice"), dict):
        rename(body["tool_choice"]["function"])
    for message in body.get("messages") or ():
        for call in message.get("tool_calls") or ():
            rename(call["function"])
    if aliases:
        flow.request.content = json.dumps(body).encode()
        flow.metadata["aliases"] = aliases
def response(flow):
    aliases = flow.metadata.get("aliases")
    if not aliases:
        return
    body = json.loads(flow.response.content or b"null")
    for choice in body.get("choices") or ():
        for call in choice["message"].get("tool_calls") or ():
            function = call["function"]
            function["name"] = aliases.get(function["name"], function["name"])
    flow.response.content = json.dumps(body).encode()
"""
NAIVE_RENAMING = "naive renaming"
FIX_MODE = "toolnames fix"
FIX_JSON_READER = "toolnames fix, json reader"
RENAMING_VARIANTS = (
    NAIVE_RENAMING,
    FIX_MODE,
    *([FIX_JSON_READER] if len(READERS) > 1 else []),
)


@dataclass
class RpsRow:
    case: Case
    # variant -> requests per second, one per round
    rps: dict[str, list[float]] = field(default_factory=lambda: {v: [] for v in VARIANTS})
    # variant -> mitmdump's own CPU seconds per request, one per round
    cpu: dict[str, list[float]] = field(default_factory=lambda: {v: [] for v in VARIANTS})
    problems: list[str] = field(default_factory=list)

    def best(self, variant: str) -> float:
        return max(self.rps[variant])

    def cpu_ms(self, variant: str) -> float:
        return min(self.cpu[variant]) * 1e3

    @property
    def ratio(self) -> float:
        """The addon against the least any addon that reads the tools can cost: mitmdump
        with a json.loads-only script (best rounds)."""
        return self.best("toolnames") / self.best("json.loads only")

    @property
    def ratio_to_plain(self) -> float:
        return self.best("toolnames") / self.best("plain")

    @property
    def paired_median(self) -> float:
        """The median over rounds of the addon's rate against json.loads only in the same
        round: steadier than best-of on a busy machine, where rounds drift together."""
        pairs = zip(self.rps["toolnames"], self.rps["json.loads only"], strict=True)
        return statistics.median(t / j for t, j in pairs if j)

    def of_json_only(self, variant: str) -> float | None:
        """``variant``'s req/s over the json.loads-only mitmdump's; None if not measured."""
        if not self.rps.get(variant):
            return None
        return self.best(variant) / self.best("json.loads only")

    @property
    def cpu_ratio(self) -> float:
        """What the ratio would be if mitmdump's CPU were all that limited the rate."""
        return self.cpu_ms("plain") / self.cpu_ms("toolnames")


def start_bench_mitmdump(
    group: ProcessGroup,
    name: str,
    binary: Path,
    upstream: str,
    workdir: Path,
    scripts: list[Path],
    options: dict[str, str] | None = None,
) -> Process:
    """mitmdump as (b) and (c) run it: reverse proxy to ``upstream``, logging only warnings
    and no flow lines, so that its terminal output costs it nothing; ``options``: more
    ``--set`` options (the addon's mode)."""
    return group.add(
        start_mitmdump(
            binary,
            f"reverse:{upstream}",
            confdir=workdir / "confdir",
            log_dir=workdir,
            name=f"mitmdump ({name})",
            scripts=scripts,
            options={"flow_detail": "0", **(options or {})},
            verbosity="warn",
        )
    )


@dataclass
class RenamingRow:
    """Fix mode's renaming of one body (every tool MCP-named, the calls in its history too;
    the answer calls the first tool by its alias) against the naive renaming script."""

    case: Case
    rps: dict[str, list[float]] = field(default_factory=lambda: {v: [] for v in RENAMING_VARIANTS})
    cpu: dict[str, list[float]] = field(default_factory=lambda: {v: [] for v in RENAMING_VARIANTS})
    problems: list[str] = field(default_factory=list)

    def best(self, variant: str) -> float:
        return max(self.rps[variant])

    def cpu_ms(self, variant: str) -> float:
        return min(self.cpu[variant]) * 1e3

    def ratio(self, variant: str) -> float:
        """``variant``'s req/s over the naive renaming script's (best rounds)."""
        return self.best(variant) / self.best(NAIVE_RENAMING)

    def paired_median(self, variant: str) -> float:
        pairs = zip(self.rps[variant], self.rps[NAIVE_RENAMING], strict=True)
        return statistics.median(t / n for t, n in pairs if n)


def _rounds(row, procs, variants, requests, concurrency, duration, rounds, warm) -> None:
    """Warm up every mitmdump (connections, the first parse), then take turns, the order
    rotating each round, so that drift and order favour no one."""
    for variant in variants:
        run_load(procs[variant].port, requests, concurrency, count=warm)
    for r in range(rounds):
        turn = r % len(variants)
        for variant in variants[turn:] + variants[:turn]:
            proc = procs[variant]
            cpu = proc.cpu_seconds()
            result = run_load(proc.port, requests, concurrency, duration=duration)
            row.rps[variant].append(result.rps)
            row.cpu[variant].append((proc.cpu_seconds() - cpu) / max(result.requests, 1))
            bad = {s: n for s, n in result.statuses.items() if s != 200}
            if bad or result.errors:
                row.problems.append(f"{variant}: statuses {bad} {result.errors[:2]}")


def _first_alias(named: bytes) -> str:
    """The alias fix mode sends the body's first tool under."""
    chat = format_for("POST", CHAT_PATH)
    exchange = Exchange(chat, choose_rule(chat, "api.openai.com"))
    exchange.check_request(named, fix=True)
    if exchange.new_body is None:
        raise SystemExit("fix mode renamed nothing in the renaming bench's body")
    return json.loads(exchange.new_body)["tools"][0]["function"]["name"]


class Variant(NamedTuple):
    """One mitmdump of a (b) table: its column's name, the scripts it loads and its options."""

    name: str
    scripts: list[Path]
    options: dict[str, str]


# A row of a (b) table.
R = TypeVar("R", "RpsRow", "RenamingRow")


def raise_on_logged_errors(procs: Iterable[Process]) -> None:
    """A hook exception is a bug, and a figure measured through it means nothing: a mitmdump
    that logged a Traceback or an addon error ends the run, with the tail of its log."""
    for proc in procs:
        log = proc.log_text()
        if "Traceback" in log or "Addon error" in log:
            raise RuntimeError(f"{proc.name} logged an error:\n{log[-4000:]}")


def run_rows(
    row_class: type[R],
    variants: list[Variant],
    chosen: list[Case],
    bodies: dict[str, bytes],
    answer: bytes,
    binary: Path,
    workdir: Path,
    quick: bool,
    concurrency: int,
    line: Callable[[R], str],
) -> list[R]:
    """One row of ``row_class`` per case: a sink answering ``answer``, a mitmdump per variant
    in front of it, each case's body (``bodies[label]``) sent through every one in rotating
    rounds; ``line(row)`` is printed as each row is done. Raises if a mitmdump logged an
    error."""
    duration, rounds = (0.6, 2) if quick else (1.5, 3)
    names = tuple(v.name for v in variants)
    rows = []
    with ProcessGroup() as group:
        upstream = group.add(start_sink(workdir, answer, name=f"sink-b-{row_class.__name__}"))
        procs = {
            v.name: start_bench_mitmdump(
                group, v.name, binary, upstream.url, workdir, v.scripts, v.options
            )
            for v in variants
        }
        for case in chosen:
            row = row_class(case)

            def requests(i: int, body=bodies[case.label]) -> LoadRequest:
                return LoadRequest(CHAT_PATH, body, SDK_LOAD_HEADERS)

            warm = concurrency * (1 if quick else 2)
            _rounds(row, procs, names, requests, concurrency, duration, rounds, warm)
            rows.append(row)
            progress(line(row) + (f"   PROBLEMS: {row.problems}" if row.problems else ""))
        raise_on_logged_errors(procs.values())
    return rows


def bench_rps(
    chosen: list[Case], binary: Path, workdir: Path, quick: bool, concurrency: int
) -> list[RpsRow]:
    json_only = workdir / "json_only.py"
    json_only.write_text(JSON_ONLY_SCRIPT)
    variants = [
        Variant("plain", [], {}),
        Variant("json.loads only", [json_only], {}),
        Variant("toolnames", [ADDON_SCRIPT], {}),
        *(
            [Variant(JSON_READER, [ADDON_SCRIPT], {"toolnames_reader": "json"})]
            if JSON_READER in VARIANTS
            else []
        ),
    ]
    chosen = [c for c in chosen if not quick or c.label in QUICK_RPS_CASES]

    def line(row: RpsRow) -> str:
        return (
            f"(b) {row.case.label:<16} req/s plain {row.best('plain'):6.1f}  "
            f"json.loads only {row.best('json.loads only'):6.1f}  "
            f"toolnames {row.best('toolnames'):6.1f}  ratio to json.loads only {row.ratio:.3f}   "
            f"mitmdump CPU/request {row.cpu_ms('plain'):.2f} / "
            f"{row.cpu_ms('json.loads only'):.2f} / {row.cpu_ms('toolnames'):.2f} ms"
        )

    answer = http_answer(200, PROVIDER_RESPONSE_HEADERS, chat_answer())
    bodies = {c.label: c.raw for c in chosen}
    return run_rows(
        RpsRow, variants, chosen, bodies, answer, binary, workdir, quick, concurrency, line
    )


def bench_renaming(
    chosen: list[Case], binary: Path, workdir: Path, quick: bool, concurrency: int
) -> list[RenamingRow]:
    """(b) for fix mode: the bodies with tools, every tool and call MCP-named, through the
    naive renaming script and through the addon in fix mode, to a sink whose answer calls
    the first tool by its alias (the same in every body), which both give back."""
    chosen = [c for c in chosen if c.tools and (not quick or c.label in QUICK_RPS_CASES)]
    if not chosen:
        return []
    named = {case.label: mcp_named(case.raw) for case in chosen}
    (alias,) = {_first_alias(body) for body in named.values()}
    script = workdir / "naive_renaming.py"
    script.write_text(RENAMING_SCRIPT)
    fix = {"toolnames_mode": "fix"}
    variants = [
        Variant(NAIVE_RENAMING, [script], {}),
        Variant(FIX_MODE, [ADDON_SCRIPT], fix),
        *(
            [Variant(FIX_JSON_READER, [ADDON_SCRIPT], {**fix, "toolnames_reader": "json"})]
            if FIX_JSON_READER in RENAMING_VARIANTS
            else []
        ),
    ]

    def line(row: RenamingRow) -> str:
        return (
            f"(b) fix: {row.case.label:<16} req/s naive renaming {row.best(NAIVE_RENAMING):6.1f}  "
            f"toolnames fix {row.best(FIX_MODE):6.1f} ({row.ratio(FIX_MODE):.3f})   "
            f"mitmdump CPU/request {row.cpu_ms(NAIVE_RENAMING):.2f} / "
            f"{row.cpu_ms(FIX_MODE):.2f} ms"
        )

    answer = http_answer(200, PROVIDER_RESPONSE_HEADERS, chat_answer(alias))
    return run_rows(
        RenamingRow, variants, chosen, named, answer, binary, workdir, quick, concurrency, line
    )
