"""Where a loaded mitmdump spends its time: py-spy samples it while (b)'s load runs through it,
and the samples are read into the functions with the most cumulative time (issue 25: where a
target is not met, what the time is spent on, measured inside a loaded mitmdump).

py-spy is a sampling profiler that reads the process from outside (it is not loaded into it,
so the code measured is the code that runs). It pauses mitmdump for each sample: with
`--nonblocking` it read the stack of a running process, and most stacks came out cut short
(at 10 tools, 73% of 1,315 samples lacked their outer frames, so a hook's cumulative share
was a fraction of its own). Pausing slows the load while it samples (at 10 tools, 419 req/s
without it, 263 with it), not where mitmdump's time goes: the shares are of whole stacks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

from benchmark.report import table
from benchmark.throughput import FIX_MODE
from benchmark.throughput import JSON_ONLY
from benchmark.throughput import JSON_ONLY_SCRIPT_NAME
from benchmark.throughput import NAIVE_RENAMING
from benchmark.throughput import OBSERVE_MODE
from benchmark.throughput import RENAMING_SCRIPT_NAME
from benchmark.throughput import Variant
from benchmark.throughput import first_alias
from benchmark.throughput import observe_variants
from benchmark.throughput import raise_on_logged_errors
from benchmark.throughput import renaming_variants
from benchmark.throughput import requests_in_turn
from benchmark.throughput import schedule
from benchmark.throughput import sink_answer
from benchmark.throughput import start_bench_mitmdump
from benchmark.workload import Case
from benchmark.workload import renaming_requests
from harness.load import progress
from harness.load import run_load
from harness.processes import ProcessGroup
from harness.sink import start_sink

__all__ = [
    "ADDON_PART",
    "SCRIPT_PARTS",
    "STACK_PARTS",
    "Comparison",
    "FunctionTime",
    "Profile",
    "Profiled",
    "StackPart",
    "parse_collapsed",
    "read_collapsed",
    "compare",
    "observing_load",
    "profile_mitmdump",
    "renaming_load",
    "report_comparison",
    "py_spy",
    "report_profile",
]

SAMPLE_RATE = 200  # per second
SECONDS = {True: 4.0, False: 12.0}  # quick, full


class FunctionTime(NamedTuple):
    """One function's samples: on the stack at all (cumulative), and on top (self)."""

    function: str  # "name (file)", the line left out: a function is one row
    cumulative: int
    own: int


class StackPart(NamedTuple):
    """A part of a loaded mitmdump's time: the samples whose stack (its functions, outermost
    first) ``holds`` it."""

    name: str
    holds: Callable[[list[str]], bool]


def _calls(function: str) -> Callable[[list[str]], bool]:
    return lambda frames: function in frames


def _in_file(file: str) -> Callable[[list[str]], bool]:
    return lambda frames: any(f.endswith(f"({file})") for f in frames)


def _log_fan_out(frames: list[str]) -> bool:
    # mitmproxy's LegacyLogEvents handler schedules AddonManager.trigger(AddLogHook) for
    # every log record; the event loop runs it later, through every addon.
    return any(
        outer == "_run (asyncio/events.py)" and inner == "trigger (mitmproxy/addonmanager.py)"
        for outer, inner in pairwise(frames)
    )


_DISPATCH = frozenset(
    f"{name} (mitmproxy/addonmanager.py)" for name in ("_iter_hooks", "traverse", "trigger_event")
)


def _in_script(name: str) -> Callable[[list[str]], bool]:
    # A script mitmdump loads with -s is named by its path, wherever the bench wrote it.
    return lambda frames: any(f.endswith((f"/{name})", f"({name})")) for f in frames)


# What a loaded mitmdump's time goes to (docs/performance.md, "Where the time goes inside
# mitmdump"): the addon's parts; the scripts' it is judged against (profiled beside it, under
# the same load); then what the addon costs mitmproxy and what mitmproxy costs.
ADDON_PART = "toolnames, all of it"
# The part of each reference mitmdump's samples that is its script's, by (b)'s name for it.
SCRIPT_PARTS = {
    JSON_ONLY: "the json.loads-only script's hooks",
    NAIVE_RENAMING: "the naive renaming script's hooks",
}
STACK_PARTS = [
    StackPart(ADDON_PART, lambda frames: any("(toolnames_" in f for f in frames)),
    StackPart("its request hook", _calls("request (toolnames_mitm/addon.py)")),
    StackPart("its response hook", _calls("response (toolnames_mitm/addon.py)")),
    StackPart("of them: the splice", _calls("replace_strings (toolnames_core/jsonsplice.py)")),
    StackPart("of them: reading the body", _in_file("toolnames_core/readers.py")),
    StackPart("of them: marking and commenting the flow", _calls("mark (toolnames_mitm/flows.py)")),
    StackPart("of them: its log lines, in the hook", _calls("log (toolnames_mitm/addon.py)")),
    StackPart(SCRIPT_PARTS[JSON_ONLY], _in_script(JSON_ONLY_SCRIPT_NAME)),
    StackPart(SCRIPT_PARTS[NAIVE_RENAMING], _in_script(RENAMING_SCRIPT_NAME)),
    StackPart("mitmproxy's add_log fan-out of every log record", _log_fan_out),
    StackPart("mitmproxy's hook dispatch, on top of the stack", lambda f: f[-1] in _DISPATCH),
]


@dataclass
class Profile:
    samples: int
    functions: list[FunctionTime]  # most cumulative time first
    parts: dict[str, int] = field(default_factory=dict)  # STACK_PARTS' samples, by name

    def top(self, n: int) -> list[FunctionTime]:
        return self.functions[:n]

    def share(self, part: str) -> float:
        """The share of samples whose stack holds ``part`` (a STACK_PARTS name)."""
        return self.parts[part] / self.samples if self.samples else 0.0


class Comparison(NamedTuple):
    """The addon's mitmdump and the one it is judged against, under the same load, by their
    profiles: the share of each one's samples in its hooks (the addon's, the script's).

    A mitmdump spends ``r`` a request on the rest of the flow (mitmproxy's work, the same
    for both) and ``s / (1 - s) * r`` in hooks that hold a share ``s`` of its samples, so it
    serves ``(1 - s) / r`` requests a second. The addon's over the reference's is then
    ``(1 - addon) / (1 - reference)``, whatever ``r`` is, and an addon that cost nothing
    would reach ``1 / (1 - reference)``: what (b)'s ratio would read without the noise of
    two processes measured apart (the rest is not quite the same: the addon's log lines are
    fanned out by mitmproxy, and a renamed body's bytes differ)."""

    addon: float
    reference: float

    @property
    def ratio(self) -> float:
        return (1 - self.addon) / (1 - self.reference)

    @property
    def ceiling(self) -> float:
        return 1 / (1 - self.reference)


def compare(addon: Profile, reference: Profile, reference_name: str) -> Comparison:
    """``addon``'s profile against ``reference``'s, the mitmdump (b) names ``reference_name``."""
    return Comparison(addon.share(ADDON_PART), reference.share(SCRIPT_PARTS[reference_name]))


def report_comparison(found: Comparison, addon_name: str, reference_name: str) -> str:
    return (
        f"From the two profiles: toolnames in {100 * found.addon:.1f}% of the samples of "
        f"{addon_name}, the script in {100 * found.reference:.1f}% of those of "
        f"{reference_name}. With mitmproxy's own work per request the same in both, "
        f"{addon_name} serves {found.ratio:.3f} of {reference_name}'s requests; an addon "
        f"that cost nothing would serve {found.ceiling:.3f} of them "
        "(benchmark.profile.Comparison)."
    )


def _function(frame: str) -> str:
    """``request (toolnames_mitm/addon.py:120)`` -> ``request (toolnames_mitm/addon.py)``."""
    name, sep, where = frame.rpartition(" (")
    if not sep:
        return frame
    return f"{name} ({where.rstrip(')').rsplit(':', 1)[0]})"


def read_collapsed(path: Path) -> Profile:
    """py-spy's raw output file. Its frames carry whatever bytes a symbol or thread name holds
    (a full run met a 0xff), so it is decoded with replacement: a stray byte can only spoil
    one frame's name, not the report."""
    return parse_collapsed(path.read_bytes().decode("utf-8", errors="replace"))


def parse_collapsed(text: str) -> Profile:
    """py-spy's raw (collapsed) output: a line per distinct stack, its frames outermost first
    joined by ";", then its count of samples. A function counts once per sample however deep
    it recurses, so its cumulative share is the share of samples it was running in."""
    cumulative: Counter[str] = Counter()
    own: Counter[str] = Counter()
    parts: Counter[str] = Counter()
    samples = 0
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_function(f) for f in stack.split(";") if f]
        if not frames:
            continue
        samples += n
        for function in set(frames):
            cumulative[function] += n
        own[frames[-1]] += n
        for part in STACK_PARTS:
            if part.holds(frames):
                parts[part.name] += n
    functions = [FunctionTime(f, c, own[f]) for f, c in cumulative.items()]
    functions.sort(key=lambda t: (-t.cumulative, -t.own, t.function))
    return Profile(samples, functions, {p.name: parts[p.name] for p in STACK_PARTS})


def py_spy() -> Path:
    """The py-spy of the venv this Python runs in (requirements/test.txt), else on PATH."""
    own = Path(sys.executable).parent / "py-spy"
    if own.exists():
        return own
    found = shutil.which("py-spy")
    if found is None:
        raise SystemExit("--profile needs py-spy: pip install -r requirements/test.txt")
    return Path(found)


def report_profile(profile: Profile, n: int = 25, own: tuple[str, ...] = ("toolnames",)) -> str:
    """The top ``n`` functions by cumulative time, then the top ``n`` of those whose file is in
    the addon (``own``: mitmproxy's event loop and hooks hold every sample above them)."""

    def share(count: int) -> str:
        return f"{100 * count / max(profile.samples, 1):.1f}%"

    def rows(functions: list[FunctionTime]) -> str:
        body = [[t.function, share(t.cumulative), share(t.own)] for t in functions[:n]]
        return table(["function (file)", "cumulative", "self"], body)

    mine = [t for t in profile.functions if any(f"({o}" in t.function for o in own)]
    parts = [[name, share(count)] for name, count in profile.parts.items()]
    return (
        f"{profile.samples} samples.\n\n"
        + "By part (the samples whose stack holds it):\n\n"
        + table(["part", "samples"], parts)
        + "\n\nBy function:\n\n"
        + rows(profile.functions)
        + "\n\nThe addon's own functions:\n\n"
        + rows(mine)
    )


class Profiled(NamedTuple):
    """A mitmdump of one of (b)'s tables and the load of one body through it, to profile."""

    variant: Variant
    label: str  # the body's
    bodies: Sequence[bytes]  # sent in turn
    answer: bytes  # the sink's, to every request


def renaming_load(case: Case, workdir: Path, variant: str = FIX_MODE) -> Profiled:
    """(b)'s fix-mode row of ``case`` (every tool MCP-named, the last question asked a few
    ways in turn, the answer calling the first tool by its alias) through one of that table's
    mitmdumps (``variant``: the addon in fix mode by default)."""
    sent = renaming_requests(case.raw)
    answer = sink_answer(first_alias(sent[0]))
    return Profiled(_variant(renaming_variants(workdir), variant), case.label, sent, answer)


def observing_load(case: Case, workdir: Path, variant: str = OBSERVE_MODE) -> Profiled:
    """(b)'s observe row of ``case`` (the body as the app sends it, a text answer) through one
    of that table's mitmdumps (``variant``: the addon in observe mode by default, or the
    json.loads-only script it is judged against)."""
    return Profiled(
        _variant(observe_variants(workdir), variant), case.label, [case.raw], sink_answer()
    )


def _variant(variants: list[Variant], name: str) -> Variant:
    found = {v.name: v for v in variants}
    if name not in found:
        raise SystemExit(f"no mitmdump {name!r} to profile ({', '.join(found)})")
    return found[name]


def profile_mitmdump(
    profiled: Profiled,
    binary: Path,
    workdir: Path,
    quick: bool,
    connections: int,
    raw_out: Path | None = None,
) -> Profile:
    """``profiled``'s mitmdump, loaded with its body from ``connections`` connections while
    py-spy samples it; py-spy's raw stacks are kept in ``raw_out``."""
    variant = profiled.variant
    seconds = SECONDS[quick]
    raw_out = raw_out or workdir / "profile.txt"

    requests = requests_in_turn(profiled.bodies)
    with ProcessGroup() as group:
        upstream = group.add(start_sink(workdir, profiled.answer, name="sink-profile"))
        proc = start_bench_mitmdump(
            group, variant.name, binary, upstream.url, workdir, variant.scripts, variant.options
        )
        warm = connections * schedule(quick).warm_per_connection
        run_load(proc.port, requests, connections, count=warm)
        command = [
            str(py_spy()),
            "record",
            "--pid",
            str(proc.process.pid),
            "--format",
            "raw",
            "--rate",
            str(SAMPLE_RATE),
            "--duration",
            str(int(seconds)),
            "--output",
            str(raw_out),
        ]
        progress(
            f"(b) profile: {variant.name}, {profiled.label}, {seconds:.0f}s of py-spy under load"
        )
        spy = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            # The load outlasts the sampling, so that every sample is of a loaded mitmdump.
            result = run_load(proc.port, requests, connections, duration=seconds + 1.5)
            said = spy.communicate(timeout=seconds + 30)[0].decode(errors="replace")
        finally:
            if spy.poll() is None:
                spy.kill()
                spy.wait()
        if spy.returncode != 0 or not raw_out.exists():
            raise SystemExit(f"py-spy failed (exit {spy.returncode}):\n{said[-2000:]}")
        progress(f"(b) profile: {result.requests} requests at {result.rps:.1f} req/s meanwhile")
        raise_on_logged_errors([proc])
    return read_collapsed(raw_out)
