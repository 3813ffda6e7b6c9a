"""How much the toolnames addon costs, measured three ways in one run, and how fast scripts/scan
reads recorded traffic (scripts/bench runs it).

(a) CPU per request, in process: Exchange.check_request, the addon's request hook (through
    mitmproxy's taddons) and a whole flow's hooks (request, then response), against json.loads
    of the same body. Bodies with 1 to 1,000 tools, a ~2 MB conversation with tools, and bodies
    without tools (small and ~2 MB). Targets: at most 1.5x json.loads from 10 tools up; at
    most 25 µs for one tool and 5 µs for a small body without tools, where fixed costs
    dominate; a large body without tools at most 0.5x (it is scanned, never parsed).
(b) Requests per second through a real mitmdump, without and with the addon, the same bodies,
    from 1 and from 16 keep-alive connections (client threads), alternating, mitmdump's own
    CPU per request beside each, to a loopback upstream that answers
    without reading them (harness.sink: the stand-in's own parse set the pace for large
    bodies, and a provider's cost is not the proxy's). Targets, at 16 connections, against
    the json.loads-only mitmdump (it parses the request and the JSON answer, as toolnames
    must): at least 0.97 of it on every row, with msgspec at least 1.2 from 100 tools up.
    Fix mode: at least 1.0 of a naive json.loads/json.dumps renaming script from 10 tools
    up, 1.3 with msgspec.
(c) Time to the first streamed chunk, through mitmdump without and with the addon, from a
    stand-in that streams slowly (x-standin-delay-ms between events), for each framing: OpenAI's
    SSE, Bedrock InvokeModel's AWS event stream (names in each chunk's base64) and Ollama's
    NDJSON. Target: at most 1.05 for each.
    mitmproxy buffers a response body unless an addon sets flow.response.stream, so plain
    mitmdump delivers the first chunk only once the whole stream is done. The fair baseline
    is therefore mitmdump with a four-line script that streams text/event-stream,
    application/vnd.amazon.eventstream and application/x-ndjson; both baselines are reported
    for SSE.
(d) scripts/scan's throughput in MB/s over a flow file, a HAR file and a YAML cassette of
    about 10 MB each (3 MB with --quick), and its peak memory. Target: cassettes at 20 MB/s
    or more. `--only d --quick` takes about 5 seconds.
(e) An MCP server's tools/list answer of 1,000 tools, JSON and SSE, through the MCP hooks in
    process, observe and fix, against json.loads of the answer (no target yet).

    scripts/bench              # ~13 minutes (estimated: (b) is 495 s under load)
    scripts/bench --quick      # ~2 minutes, rougher figures
    scripts/bench --only a,c   # some parts only
    scripts/bench --mitmdump .venv-mitmproxy11/bin/mitmdump   # (b) and (c) on mitmproxy 11

Ratios use the fastest of several interleaved repeats for (a) (the least noisy estimate of CPU
cost on a busy machine), the best of alternating rounds for (b), and medians for (c).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import mitmproxy.version

from benchmark.cpu import bench_cpu
from benchmark.mcp import bench_mcp
from benchmark.profile import SAMPLE_RATE
from benchmark.profile import Profile
from benchmark.profile import Profiled
from benchmark.profile import compare
from benchmark.profile import observing_load
from benchmark.profile import profile_mitmdump
from benchmark.profile import renaming_load
from benchmark.profile import report_comparison
from benchmark.profile import report_profile
from benchmark.report import TARGET_CPU
from benchmark.report import TARGET_CPU_NO_TOOLS
from benchmark.report import TARGET_FAST_RPS_MANY_TOOLS
from benchmark.report import TARGET_ONE_TOOL
from benchmark.report import TARGET_RENAMING_RPS
from benchmark.report import TARGET_RENAMING_RPS_FAST
from benchmark.report import TARGET_RPS
from benchmark.report import TARGET_SMALL_NO_TOOLS
from benchmark.report import Target
from benchmark.report import report_cpu
from benchmark.report import report_mcp
from benchmark.report import report_renaming
from benchmark.report import report_rps
from benchmark.report import report_stream
from benchmark.report import table
from benchmark.scanning import TARGET_CASSETTE_MB_S
from benchmark.scanning import bench_scan
from benchmark.scanning import report_scan
from benchmark.streaming import bench_stream
from benchmark.throughput import CONNECTIONS
from benchmark.throughput import FIX_MODE
from benchmark.throughput import JSON_ONLY
from benchmark.throughput import NAIVE_RENAMING
from benchmark.throughput import OBSERVE_MODE
from benchmark.throughput import bench_renaming
from benchmark.throughput import bench_rps
from benchmark.throughput import planned_seconds
from benchmark.workload import Case
from benchmark.workload import cases
from harness.load import progress
from harness.mitmdump import own_mitmdump
from harness.processes import REPO_ROOT

__all__ = [
    "ALL_PARTS",
    "FULL_RUN_NOTE",
    "default_markdown_path",
    "main",
    "markdown",
    "profiled_cases",
]

ALL_PARTS = "a,b,c,d,e"
# What docs/performance.md's "latest full run" is: a run of every part, not --quick.
FULL_RUN_NOTE = "A full run: every part, not --quick; its figures may go to docs/performance.md."


def default_markdown_path(quick: bool, now: float | None = None) -> Path:
    """artifacts/bench/20261203T1100Z.md: one file a run, never overwritten by the next."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    return REPO_ROOT / "artifacts" / "bench" / f"{stamp}{'-quick' if quick else ''}.md"


def markdown(heading: str, sections: list[str], summary: str) -> str:
    """The run's report as markdown: its tables as they print (they are markdown tables
    already), each indented note a paragraph of its own (indented, it would be code)."""
    lines = [f"# {heading}", ""]
    for section in sections:
        for line in section.splitlines():
            if line.startswith("    ") and not line.lstrip().startswith("|"):
                lines += ["", line.strip()]
            else:
                lines.append(line)
        lines.append("")
    return "\n".join([*lines, summary, ""])


def profiled_cases(
    labels: list[str], option: str = "--profile", tools_only: bool = True
) -> list[Case]:
    """The bodies ``option`` names, in its order: each a label of a body (of a body with
    tools if ``tools_only``, as fix mode's are; a label may hold a comma, as "2 MB, 50 tools"
    does, so each body takes its own flag)."""
    known = {c.label: c for c in cases() if c.tools or not tools_only}
    unknown = [label for label in labels if label not in known]
    if unknown:
        kind = "body with tools" if tools_only else "body"
        raise SystemExit(f"{option}: no {kind} is labelled {unknown[0]!r} ({', '.join(known)})")
    return [known[label] for label in dict.fromkeys(labels)]


# What each profile section says its mitmdump is, by the table's variant name.
_PROFILED_AS = {
    FIX_MODE: "fix mode's mitmdump (msgspec), the body MCP-named",
    NAIVE_RENAMING: "the naive renaming mitmdump fix mode is judged against, the body MCP-named",
    OBSERVE_MODE: "observe mode's mitmdump (msgspec)",
    JSON_ONLY: "the json.loads-only mitmdump observe mode is judged against",
}


def _profile(
    args: argparse.Namespace, profiled: Profiled, binary: Path, workdir: Path, connections: int
) -> tuple[str, Profile]:
    """One of (b)'s mitmdumps under its row's load, profiled, and its report; its raw stacks
    beside the run's markdown."""
    path = args.markdown
    name = _slug(f"{profiled.variant.name} {profiled.label}")
    raw = path.with_name(f"{path.stem}.profile-{name}.txt")
    raw.parent.mkdir(parents=True, exist_ok=True)
    found = profile_mitmdump(profiled, binary, workdir, args.quick, connections, raw_out=raw)
    text = (
        f"(b) Profile of {_PROFILED_AS[profiled.variant.name]}, {profiled.label}, under load "
        f"from {connections} connections: py-spy, {SAMPLE_RATE} samples/s, pausing it for each "
        "(whole stacks); cumulative = share of samples with the function on the stack, self = "
        "on top.\n    "
        f"py-spy's raw stacks (collapsed, for a flame graph): {raw}\n\n" + report_profile(found)
    )
    return text, found


def _profiles(
    args: argparse.Namespace,
    pair: tuple[Profiled, Profiled],
    binary: Path,
    workdir: Path,
    connections: int,
) -> list[str]:
    """The addon's mitmdump and the one it is judged against, profiled under the same load
    from ``connections`` connections, and what their profiles say of the two side by side."""
    addon, reference = pair
    addon_text, addon_found = _profile(args, addon, binary, workdir, connections)
    reference_text, reference_found = _profile(args, reference, binary, workdir, connections)
    found = compare(addon_found, reference_found, reference.variant.name)
    names = addon.variant.name, reference.variant.name
    return [addon_text, reference_text, f"(b) {addon.label}: " + report_comparison(found, *names)]


def _slug(label: str) -> str:
    """A body's label as a piece of a file name: "2 MB, 50 tools" -> "2-mb-50-tools"."""
    return "-".join(re.findall(r"[a-z0-9]+", label.lower()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="about 2 minutes, rougher figures")
    parser.add_argument("--only", default=ALL_PARTS, help="comma-separated parts: a, b, c, d, e")
    parser.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="BODY",
        help="after (b), py-spy samples fix mode's mitmdump under load with this body (a "
        "label, e.g. '100 tools'; again for another body), and the naive renaming mitmdump "
        "under the same load; the report lists where each spends its time",
    )
    parser.add_argument(
        "--profile-observe",
        action="append",
        default=[],
        metavar="BODY",
        help="the same for observe mode's mitmdump, and for the json.loads-only mitmdump it "
        "is judged against, under the same load (any body, e.g. 'no tools, small')",
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        default=None,
        help="where to write the run's tables as markdown (default: "
        "artifacts/bench/<UTC time>[-quick].md)",
    )
    parser.add_argument("--mitmdump", type=Path, default=None, help="the mitmdump for (b) and (c)")
    parser.add_argument(
        "--connections",
        default=",".join(str(n) for n in CONNECTIONS),
        help="client connections in (b), comma-separated: each row is measured with each, "
        "alternating; the targets are judged at the most",
    )
    parser.add_argument(
        "--delay-ms", type=int, default=50, help="stand-in delay between stream events in (c)"
    )
    parser.add_argument(
        "--cases", default="", help="only bodies whose label holds one of these, comma-separated"
    )
    args = parser.parse_args(argv)
    connections = sorted({int(n) for n in args.connections.split(",") if n.strip()})
    chosen = cases(labels_with=[c.strip() for c in args.cases.split(",") if c.strip()])
    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    # A wrong label stops the run before it starts.
    profiled = profiled_cases(args.profile)
    profiled_observing = profiled_cases(args.profile_observe, "--profile-observe", tools_only=False)
    # Named at the start: the profiles' raw stacks are written beside it, during the run.
    args.markdown = args.markdown or default_markdown_path(args.quick)
    binary = args.mitmdump or own_mitmdump()
    started = time.monotonic()

    heading = (
        f"toolnames bench, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: Python "
        f"{sys.version.split()[0]}, mitmproxy {mitmproxy.version.VERSION} in process, "
        f"{binary} for (b)/(c), {os.cpu_count()} CPUs"
        + (", quick" if args.quick else "")
        + (f", parts {args.only}" if args.only != ALL_PARTS else "")
        + (f", cases {args.cases}" if args.cases else "")
    )
    progress(heading)
    sections: list[str] = []
    targets: list[Target] = []
    took: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="toolnames-bench-") as tmp:
        workdir = Path(tmp)
        if "a" in parts:
            part_started = time.monotonic()
            progress("(a) CPU per request, in process")
            part = report_cpu(bench_cpu(chosen, args.quick))
            sections.append(
                "(a) CPU per request: fastest of interleaved repeats, garbage collector on; ratio "
                "to json.loads of the same body.\n    request hook = ToolNames.request through "
                "taddons (the target); request + response hooks = one whole non-streamed flow "
                "(request, responseheaders, response), for reference; paired median = the "
                "median of the per-repeat ratios.\n    Targets: <= "
                f"{TARGET_CPU}x from 10 tools up; <= {TARGET_ONE_TOOL * 1e6:.0f} µs for one tool "
                f"and <= {TARGET_SMALL_NO_TOOLS * 1e6:.0f} µs for a small body without tools; "
                f"<= {TARGET_CPU_NO_TOOLS}x for a large one (scanned for tool keys, never "
                "parsed).\n\n" + part.text
            )
            targets += part.targets
            took["a"] = time.monotonic() - part_started
        if "b" in parts:
            part_started = time.monotonic()
            progress(
                f"(b) requests per second through {binary}: about "
                f"{planned_seconds(chosen, args.quick, connections):.0f}s under load, "
                f"{planned_seconds(chosen, False, connections):.0f}s in a full run"
            )
            rows = bench_rps(chosen, binary, workdir, args.quick, connections)
            part = report_rps(rows)
            conns = " and ".join(str(n) for n in connections)
            sections.append(
                f"(b) Requests per second: {conns} keep-alive connections (alternating; the "
                f"targets at {max(connections)}), reverse "
                "proxy to a loopback upstream that answers every request alike without reading it "
                "(own process), best of rotating rounds, "
                "and the median of each round's toolnames / json.loads only, with the lowest "
                "and highest of those rounds (what this run's noise alone moves).\n    Targets: "
                f">= {TARGET_RPS} of json.loads only on every row; with msgspec >= "
                f"{TARGET_FAST_RPS_MANY_TOOLS} from 100 tools up, > 1.0 for the other rows with "
                "tools past 10.\n    json.loads only = mitmdump -s a 5-line script that parses "
                "each request body and each answer once: the floor for any addon that reads the "
                "tools and the calls."
                "\n    mitmdump CPU = its user+system time per request (/proc), the steadier "
                "figure on a busy machine (best round).\n    With one connection each request "
                "waits for the one before, so req/s is a request's latency through mitmdump."
                "\n    With large bodies the client, "
                "sending 2 MB a request from Python threads, can set the pace instead.\n\n"
                + part.text
            )
            targets += part.targets
            progress(f"(b) fix mode's renaming through {binary}")
            renamed = bench_renaming(chosen, binary, workdir, args.quick, connections)
            part = report_renaming(renamed)
            sections.append(
                f"(b) Fix mode's renaming, requests per second: the bodies with tools, every "
                "tool and every call in the history MCP-named (get.weather, which OpenAI's rule "
                "rejects), to a sink whose answer calls the first tool by its alias; "
                f"{conns} keep-alive connections, best of rotating rounds (the paired median "
                "and the range of the rounds beside it, as above).\n"
                "    naive renaming = mitmdump -s a script that does it with json.loads and "
                "json.dumps, both ways (benchmark.throughput.RENAMING_SCRIPT): the request's "
                "tools, tool_choice and history renamed, the answer's calls renamed back.\n"
                "    json.loads only = the json.loads-only script on the same bodies, in the same "
                "rounds: it parses what a renamer must and renames nothing, so its ratio to the "
                "naive renamer is the floor, the most any renamer can reach.\n"
                f"    Targets: the json reader >= {TARGET_RENAMING_RPS} of it, msgspec >= "
                f"{TARGET_RENAMING_RPS_FAST}.\n\n" + part.text
            )
            targets += part.targets
            pairs = [
                (renaming_load(case, workdir), renaming_load(case, workdir, NAIVE_RENAMING))
                for case in profiled
            ]
            pairs += [
                (observing_load(case, workdir), observing_load(case, workdir, JSON_ONLY))
                for case in profiled_observing
            ]
            for pair in pairs:
                sections += _profiles(args, pair, binary, workdir, max(connections))
            took["b"] = time.monotonic() - part_started
        if "c" in parts:
            part_started = time.monotonic()
            progress(f"(c) time to first streamed chunk, stand-in delay {args.delay_ms} ms")
            streamed = bench_stream(binary, workdir, args.quick, args.delay_ms)
            part = report_stream(streamed.rows, args.delay_ms)
            sections.append(
                f"(c) Time to first streamed chunk: chat completions stream with 10 tools, the "
                f"stand-in waits {args.delay_ms} ms between its events ({streamed.reference.count(b'data:')} "
                "events), one keep-alive connection per path, rotating order.\n"
                "    plain mitmdump buffers text/event-stream: its first chunk arrives with the "
                "last.\n    streaming mitmdump = mitmdump -s a 3-line script setting "
                "flow.response.stream = True for SSE, the AWS event stream and NDJSON: the fair "
                "baseline.\n"
                "    fix: renaming = the addon in fix mode, every tool of the body MCP-named "
                "(aliased on the way out), the first one forced, its streamed call given back "
                "under the app's name; 'bytes identical' compares its samples with each other.\n"
                "    The second table: Bedrock InvokeModel's stream (AWS event stream, each "
                "chunk's Anthropic event in base64, "
                f"{streamed.event_stream.count(b':event-type')} events), the same 10 tools in "
                "Anthropic's shape; fix mode restores the name inside the base64 and "
                "recomputes both CRCs of each message it changes.\n"
                "    The third table: Ollama's /api/chat stream (NDJSON, "
                f"{len(streamed.ndjson.splitlines())} lines), the same 10 tools, the first called; "
                "fix mode under toolnames_rule='*=openai' (under rule ollama it renames "
                "nothing) gives the name back a whole line at a time.\n\n" + part.text
            )
            targets += part.targets
            took["c"] = time.monotonic() - part_started
        if "d" in parts:
            part_started = time.monotonic()
            progress("(d) scripts/scan's throughput")
            part = report_scan(bench_scan(workdir, args.quick))
            sections.append(
                "(d) scripts/scan in process: MB per CPU second (steadier than wall time on a "
                "shared machine), fastest of 3 repeats (1 with --quick); reading = the reader "
                "alone; peak RSS of `python -m scanner` on the file (not with --quick).\n    The "
                "same agent traffic in each format. Target: cassettes at >= "
                f"{TARGET_CASSETTE_MB_S:.0f} MB/s (the whole scan).\n\n" + part.text
            )
            targets += part.targets
            took["d"] = time.monotonic() - part_started
        if "e" in parts:
            part_started = time.monotonic()
            progress("(e) an MCP tools/list page, in process")
            part = report_mcp(bench_mcp(args.quick))
            sections.append(
                "(e) MCP: a tools/list answer of 1,000 tools (every fifth name dotted) through "
                "the MCP hooks in process, the whole flow (request, responseheaders, response; "
                "the SSE answer through its tap); fastest of interleaved repeats; ratio to "
                "json.loads of the answer. No target yet.\n\n" + part.text
            )
            took["e"] = time.monotonic() - part_started
    print()
    for section in sections:
        print(section)
        print()
    targets_text = "Targets\n\n" + table(["target", "goal", "measured", "result"], targets)
    print(targets_text)
    summary = (
        f"{sum(t.result == 'PASS' for t in targets)}/{len(targets)} targets met in "
        f"{time.monotonic() - started:.0f}s ("
        + ", ".join(f"({p}) {seconds:.0f}s" for p, seconds in took.items())
        + ")"
    )
    print(f"\n{summary}")
    if not args.quick and args.only == ALL_PARTS and not args.cases:
        print(f"\n{FULL_RUN_NOTE}")
    path = args.markdown
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(markdown(heading, [*sections, targets_text], summary))
    progress(f"the figures as markdown, for docs/performance.md: {path}")
    return 0
