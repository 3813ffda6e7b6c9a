"""(b) Requests per second through a real mitmdump: plain, with a json.loads-only script, and
with the addon, the same bodies, to an upstream that answers without reading them
(harness.sink), so that mitmdump, not the provider, sets the pace."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
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
from benchmark.workload import renaming_requests
from harness.load import LoadRequest
from harness.load import progress
from harness.load import run_load
from harness.mitmdump import ADDON_SCRIPT
from harness.mitmdump import start_mitmdump
from harness.processes import STARTUP_TIMEOUT
from harness.processes import Process
from harness.processes import ProcessGroup
from harness.sink import http_answer
from harness.sink import start_sink
from toolnames_core import READERS
from toolnames_core import Exchange
from toolnames_core import choose_rule
from toolnames_core import format_for

__all__ = [
    "CONNECTIONS",
    "FIX_JSON_READER",
    "FIX_MODE",
    "FULL_SCHEDULE",
    "JSON_ONLY",
    "JSON_ONLY_AGAIN",
    "JSON_ONLY_SCRIPT",
    "JSON_ONLY_SCRIPT_NAME",
    "JSON_READER",
    "NAIVE_RENAMING",
    "OBSERVE_MODE",
    "QUICK_SCHEDULE",
    "RENAMING_SCRIPT",
    "RENAMING_SCRIPT_NAME",
    "RENAMING_VARIANTS",
    "VARIANTS",
    "RateRow",
    "RenamingRow",
    "Rounds",
    "RpsRow",
    "Schedule",
    "Variant",
    "bench_renaming",
    "bench_rps",
    "first_alias",
    "json_only_script",
    "observe_variants",
    "per_connections",
    "planned_seconds",
    "raise_on_logged_errors",
    "renaming_variants",
    "requests_in_turn",
    "run_rounds",
    "run_rows",
    "schedule",
    "sink_answer",
    "start_bench_mitmdump",
]

# A reference for (b): the least any addon that reads the tools must do: parse the request
# once, and the JSON answer once (toolnames reads the answer for the calls the model made).
JSON_ONLY_SCRIPT = """\
import json
def request(flow):
    json.loads(flow.request.content or b"null")
def response(flow):
    json.loads(flow.response.content or b"null")
"""

JSON_ONLY_SCRIPT_NAME = "json_only.py"  # its file's, in the bench's working directory
# The mitmdump running JSON_ONLY_SCRIPT, in both (b) tables. In the observe table it is the
# least an addon that reads the tools can cost; in the renaming table, on the same bodies and
# answer in the same rounds, the floor: it parses what a renamer must and renames nothing, so
# its ratio to the naive renamer is the most a target over the naive renamer can ask.
JSON_ONLY = "json.loads only"
# A second mitmdump running the same json.loads-only script: its rate over the first's is
# what two processes doing the same work differ by on this machine (an A/A comparison), the
# noise a ratio of two mitmdumps carries before either addon is judged.
JSON_ONLY_AGAIN = "json.loads only, again"
# The addon as it runs by default (observe mode, msgspec where it can be imported), and with
# each other reader.
OBSERVE_MODE = "toolnames"
JSON_READER = "toolnames, json reader"
VARIANTS = (
    "plain",
    JSON_ONLY,
    JSON_ONLY_AGAIN,
    OBSERVE_MODE,
    *([JSON_READER] if len(READERS) > 1 else []),
)

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
    JSON_ONLY,
    FIX_MODE,
    *([FIX_JSON_READER] if len(READERS) > 1 else []),
)


@dataclass
class Rounds:
    """One mitmdump's rounds at one number of client connections."""

    rps: list[float] = field(default_factory=list)
    # mitmdump's own CPU seconds (user + system, /proc) per request, one per round
    cpu: list[float] = field(default_factory=list)


@dataclass
class RateRow:
    """One body's rounds through every mitmdump of a table, at each number of client
    connections; the targets are judged at the most connections (``judged``)."""

    case: Case
    # connections -> variant -> its rounds
    rounds: dict[int, dict[str, Rounds]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def connections(self) -> list[int]:
        return sorted(self.rounds)

    @property
    def judged(self) -> int:
        return max(self.rounds)

    def of(self, variant: str, connections: int | None = None) -> Rounds:
        by_variant = self.rounds.setdefault(self.judged if connections is None else connections, {})
        return by_variant.setdefault(variant, Rounds())

    def measured(self, variant: str) -> bool:
        return any(by_variant.get(variant, Rounds()).rps for by_variant in self.rounds.values())

    def best(self, variant: str, connections: int | None = None) -> float:
        return max(self.of(variant, connections).rps)

    def cpu_ms(self, variant: str, connections: int | None = None) -> float:
        return min(self.of(variant, connections).cpu) * 1e3

    def rates(self, variant: str) -> str:
        """``variant``'s best req/s at each number of connections: "402.1 / 681.0"."""
        return " / ".join(f"{self.best(variant, n):.1f}" for n in self.connections)

    def cpu_text(self, variant: str) -> str:
        """mitmdump's CPU ms per request at each number of connections: "1.52 / 1.43"."""
        return " / ".join(f"{self.cpu_ms(variant, n):.2f}" for n in self.connections)

    def rate_ratio(self, variant: str, base: str, connections: int | None = None) -> float:
        """``variant``'s req/s over ``base``'s (best rounds)."""
        return self.best(variant, connections) / self.best(base, connections)

    def per_round(self, variant: str, base: str, connections: int | None = None) -> list[float]:
        """``variant``'s rate against ``base``'s in each round (both measured in it)."""
        pairs = zip(self.of(variant, connections).rps, self.of(base, connections).rps, strict=True)
        return [t / j for t, j in pairs if j]

    def paired(self, variant: str, base: str, connections: int | None = None) -> float:
        """The median over rounds of ``variant``'s rate against ``base``'s in the same round:
        steadier than best-of on a busy machine, where rounds drift together."""
        return statistics.median(self.per_round(variant, base, connections))

    def spread(self, variant: str, base: str, connections: int | None = None) -> str:
        """The lowest and highest of the per-round ratios, "0.861-0.974": how far this run's
        rounds alone move the figure, so that a ratio a few percent from its target can be
        told from noise by the run that measured it."""
        ratios = self.per_round(variant, base, connections)
        return f"{min(ratios):.3f}-{max(ratios):.3f}"


def per_connections(row: RateRow) -> str:
    """What the figures joined by " / " are: "(1 / 16 connections)"."""
    return "(" + " / ".join(str(n) for n in row.connections) + " connections)"


@dataclass
class RpsRow(RateRow):
    @property
    def ratio(self) -> float:
        """The addon against the least any addon that reads the tools can cost: mitmdump
        with a json.loads-only script (best rounds)."""
        return self.rate_ratio(OBSERVE_MODE, JSON_ONLY)

    @property
    def ratio_to_plain(self) -> float:
        return self.rate_ratio(OBSERVE_MODE, "plain")

    def of_json_only(self, variant: str, connections: int | None = None) -> float | None:
        """``variant``'s req/s over the json.loads-only mitmdump's; None if not measured."""
        if not self.measured(variant):
            return None
        return self.rate_ratio(variant, JSON_ONLY, connections)

    @property
    def cpu_ratio(self) -> float:
        """What the ratio would be if mitmdump's CPU were all that limited the rate."""
        return self.cpu_ms("plain") / self.cpu_ms(OBSERVE_MODE)


def start_bench_mitmdump(
    group: ProcessGroup,
    name: str,
    binary: Path,
    upstream: str,
    workdir: Path,
    scripts: list[Path],
    options: dict[str, str] | None = None,
    *,
    wrapper: Sequence[str] = (),
    startup_timeout: float = STARTUP_TIMEOUT,
    env: Mapping[str, str] | None = None,
) -> Process:
    """mitmdump as (b) and (c) run it: reverse proxy to ``upstream``, logging only warnings
    and no flow lines, so that its terminal output costs it nothing; ``options``: more
    ``--set`` options (the addon's mode); ``wrapper``, ``startup_timeout`` and ``env``: how
    benchmark.instructions runs it under valgrind (``start_mitmdump``)."""
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
            wrapper=wrapper,
            startup_timeout=startup_timeout,
            env=env,
        )
    )


@dataclass
class RenamingRow(RateRow):
    """Fix mode's renaming of one body (every tool MCP-named, the calls in its history too;
    the answer calls the first tool by its alias) against the naive renaming script."""

    def ratio(self, variant: str, connections: int | None = None) -> float:
        """``variant``'s req/s over the naive renaming script's (best rounds)."""
        return self.rate_ratio(variant, NAIVE_RENAMING, connections)


def run_rounds(
    row: RateRow,
    procs: dict[str, Process],
    variants: tuple[str, ...],
    requests: Callable[[int], LoadRequest],
    connections: list[int],
    duration: float,
    rounds: int,
    warm: int,
) -> None:
    """Warm up every mitmdump (connections, the first parse), then take turns, each number
    of client connections and each mitmdump, the order of the mitmdumps rotating each round,
    so that drift and order favour no one."""
    for variant in variants:
        run_load(procs[variant].port, requests, max(connections), count=warm)
    for r in range(rounds):
        turn = r % len(variants)
        for count in connections:
            for variant in variants[turn:] + variants[:turn]:
                proc = procs[variant]
                cpu = proc.cpu_seconds()
                result = run_load(proc.port, requests, count, duration=duration)
                measured = row.of(variant, count)
                measured.rps.append(result.rps)
                measured.cpu.append((proc.cpu_seconds() - cpu) / max(result.requests, 1))
                bad = {s: n for s, n in result.statuses.items() if s != 200}
                if bad or result.errors:
                    row.problems.append(
                        f"{variant}, {count} connections: statuses {bad} {result.errors[:2]}"
                    )


def first_alias(named: bytes) -> str:
    """The alias fix mode sends the body's first tool under."""
    chat = format_for("POST", CHAT_PATH)
    exchange = Exchange(chat, choose_rule(chat, "api.openai.com"))
    exchange.check_request(named, fix=True)
    if exchange.new_body is None:
        raise SystemExit("fix mode renamed nothing in the renaming bench's body")
    return json.loads(exchange.new_body)["tools"][0]["function"]["name"]


RENAMING_SCRIPT_NAME = "naive_renaming.py"  # its file's, in the bench's working directory


def sink_answer(call: str | None = None) -> bytes:
    """What (b)'s sink answers every request with: OpenAI's headers and the stand-in's
    answer, text, or a call to the tool named ``call``."""
    return http_answer(200, PROVIDER_RESPONSE_HEADERS, chat_answer(call))


class Variant(NamedTuple):
    """One mitmdump of a (b) table: its column's name, the scripts it loads and its options."""

    name: str
    scripts: list[Path]
    options: dict[str, str]


class Schedule(NamedTuple):
    """How long (b) loads each mitmdump, per body and number of client connections."""

    duration: float  # seconds per round
    rounds: int
    warm_per_connection: int  # warm-up requests, per connection of the most connections

    def seconds(self, rows: int, variants: int, connections: list[int]) -> float:
        """Time under load for a table of ``rows`` bodies (warm-ups and start-up not
        counted): what makes (b) the longest part of a run."""
        return rows * variants * len(connections) * self.rounds * self.duration


QUICK_SCHEDULE = Schedule(duration=0.6, rounds=2, warm_per_connection=1)
FULL_SCHEDULE = Schedule(duration=1.5, rounds=3, warm_per_connection=2)
# The numbers of client connections each row is measured with: one client (each request
# waits for the last, so the figure is a request's latency through mitmdump) and 16 (mitmdump
# kept busy, as under an agent's parallel calls); the targets are judged at the most.
CONNECTIONS = (1, 16)


def schedule(quick: bool) -> Schedule:
    return QUICK_SCHEDULE if quick else FULL_SCHEDULE


def planned_seconds(chosen: list[Case], quick: bool, connections: list[int]) -> float:
    """Time under load of both (b) tables for ``chosen`` (warm-ups and start-up not counted)."""
    rows = [c for c in chosen if not quick or c.label in QUICK_RPS_CASES]
    plan = schedule(quick)
    return plan.seconds(len(rows), len(VARIANTS), connections) + plan.seconds(
        sum(1 for c in rows if c.tools), len(RENAMING_VARIANTS), connections
    )


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
    bodies: dict[str, Sequence[bytes]],
    answer: bytes,
    binary: Path,
    workdir: Path,
    quick: bool,
    connections: list[int],
    line: Callable[[R], str],
) -> list[R]:
    """One row of ``row_class`` per case: a sink answering ``answer``, a mitmdump per variant
    in front of it, each case's requests (``bodies[label]``, in turn) sent through every one in
    rotating rounds, from each number of client ``connections`` in turn; ``line(row)`` is
    printed as each row is done. Raises if a mitmdump logged an error."""
    plan = schedule(quick)
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

            requests = requests_in_turn(bodies[case.label])
            warm = max(connections) * plan.warm_per_connection
            run_rounds(row, procs, names, requests, connections, plan.duration, plan.rounds, warm)
            rows.append(row)
            progress(line(row) + (f"   PROBLEMS: {row.problems}" if row.problems else ""))
        raise_on_logged_errors(procs.values())
    return rows


def requests_in_turn(bodies: Sequence[bytes]) -> Callable[[int], LoadRequest]:
    """The load's request ``i``: the SDK's chat completions request of ``bodies[i]``, taken
    in turn."""

    def request(i: int) -> LoadRequest:
        return LoadRequest(CHAT_PATH, bodies[i % len(bodies)], SDK_LOAD_HEADERS)

    return request


def json_only_script(workdir: Path) -> Path:
    """JSON_ONLY_SCRIPT as a file in ``workdir``, for mitmdump's ``-s``."""
    path = workdir / JSON_ONLY_SCRIPT_NAME
    path.write_text(JSON_ONLY_SCRIPT)
    return path


def observe_variants(workdir: Path) -> list[Variant]:
    """The mitmdumps of (b)'s observe table, in its column order."""
    json_only = json_only_script(workdir)
    return [
        Variant("plain", [], {}),
        Variant(JSON_ONLY, [json_only], {}),
        Variant(JSON_ONLY_AGAIN, [json_only], {}),
        Variant(OBSERVE_MODE, [ADDON_SCRIPT], {}),
        *(
            [Variant(JSON_READER, [ADDON_SCRIPT], {"toolnames_reader": "json"})]
            if JSON_READER in VARIANTS
            else []
        ),
    ]


def renaming_variants(workdir: Path) -> list[Variant]:
    """The mitmdumps of (b)'s fix-mode table, in its column order."""
    script = workdir / RENAMING_SCRIPT_NAME
    script.write_text(RENAMING_SCRIPT)
    fix = {"toolnames_mode": "fix"}
    return [
        Variant(NAIVE_RENAMING, [script], {}),
        Variant(JSON_ONLY, [json_only_script(workdir)], {}),
        Variant(FIX_MODE, [ADDON_SCRIPT], fix),
        *(
            [Variant(FIX_JSON_READER, [ADDON_SCRIPT], {**fix, "toolnames_reader": "json"})]
            if FIX_JSON_READER in RENAMING_VARIANTS
            else []
        ),
    ]


def bench_rps(
    chosen: list[Case], binary: Path, workdir: Path, quick: bool, connections: list[int]
) -> list[RpsRow]:
    variants = observe_variants(workdir)
    chosen = [c for c in chosen if not quick or c.label in QUICK_RPS_CASES]

    def line(row: RpsRow) -> str:
        return (
            f"(b) {row.case.label:<16} req/s {per_connections(row)}: "
            + "  ".join(f"{v} {row.rates(v)}" for v in ("plain", JSON_ONLY, OBSERVE_MODE))
            + f"  ratio to json.loads only {row.ratio:.3f}   mitmdump CPU ms/request "
            + ", ".join(f"{v} {row.cpu_text(v)}" for v in ("plain", JSON_ONLY, OBSERVE_MODE))
        )

    answer = sink_answer()
    bodies = {c.label: [c.raw] for c in chosen}
    return run_rows(
        RpsRow, variants, chosen, bodies, answer, binary, workdir, quick, connections, line
    )


def bench_renaming(
    chosen: list[Case], binary: Path, workdir: Path, quick: bool, connections: list[int]
) -> list[RenamingRow]:
    """(b) for fix mode: the bodies with tools, every tool and call MCP-named and the last
    question asked a few ways in turn (renaming_requests), through the naive renaming script
    and through the addon in fix mode, to a sink whose answer calls the first tool by its
    alias (the same in every body), which both give back."""
    chosen = [c for c in chosen if c.tools and (not quick or c.label in QUICK_RPS_CASES)]
    if not chosen:
        return []
    named = {case.label: renaming_requests(case.raw) for case in chosen}
    (alias,) = {first_alias(body) for sent in named.values() for body in sent}
    variants = renaming_variants(workdir)

    def line(row: RenamingRow) -> str:
        return (
            f"(b) fix: {row.case.label:<16} req/s {per_connections(row)}: naive renaming "
            f"{row.rates(NAIVE_RENAMING)}  toolnames fix {row.rates(FIX_MODE)} "
            f"({row.ratio(FIX_MODE):.3f}; the floor, json.loads only, "
            f"{row.ratio(JSON_ONLY):.3f})   mitmdump CPU ms/request naive renaming "
            f"{row.cpu_text(NAIVE_RENAMING)}, toolnames fix {row.cpu_text(FIX_MODE)}"
        )

    answer = sink_answer(alias)
    return run_rows(
        RenamingRow, variants, chosen, named, answer, binary, workdir, quick, connections, line
    )
