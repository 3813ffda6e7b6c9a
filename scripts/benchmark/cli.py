"""How much the toolnames addon costs, measured three ways in one run (scripts/bench runs it).

(a) CPU per request, in process: Exchange.check_request, the addon's request hook (through
    mitmproxy's taddons) and a whole flow's hooks (request, then response), against json.loads
    of the same body. Bodies with 1 to 1,000 tools, a ~2 MB conversation with tools, and bodies
    without tools (small and ~2 MB). Targets: at most 1.5x json.loads; a body without tools
    costs close to nothing (it is scanned for tool keys, never parsed).
(b) Requests per second through a real mitmdump, without and with the addon, to the same
    loopback stand-in provider (scripts/standin/, in its own process), the same
    bodies, 16 keep-alive connections from 16 client threads. Target: a ratio of at least 0.95.
(c) Time to the first streamed chunk, through mitmdump without and with the addon, from a
    stand-in that streams slowly (x-standin-delay-ms between events). Target: at most 1.05.
    mitmproxy buffers a response body unless an addon sets flow.response.stream, so plain
    mitmdump delivers the first chunk only once the whole stream is done. The fair baseline
    is therefore mitmdump with a three-line script that streams text/event-stream; both
    baselines are reported.

    scripts/bench              # ~3 minutes
    scripts/bench --quick      # ~30 seconds, rougher figures
    scripts/bench --only a,c   # some parts only
    scripts/bench --mitmdump .venv-mitmproxy11/bin/mitmdump   # (b) and (c) on mitmproxy 11

Ratios use the fastest of several interleaved repeats for (a) (the least noisy estimate of CPU
cost on a busy machine), the best of alternating rounds for (b), and medians for (c).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import mitmproxy.version

from benchmark.cpu import bench_cpu
from benchmark.report import TARGET_CPU
from benchmark.report import TARGET_CPU_NO_TOOLS
from benchmark.report import Target
from benchmark.report import report_cpu
from benchmark.report import report_rps
from benchmark.report import report_stream
from benchmark.report import table
from benchmark.streaming import bench_stream
from benchmark.throughput import bench_rps
from benchmark.workload import cases
from harness.load import progress
from harness.mitmdump import own_mitmdump

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="about 30 seconds, rougher figures")
    parser.add_argument("--only", default="a,b,c", help="comma-separated parts: a, b, c")
    parser.add_argument("--mitmdump", type=Path, default=None, help="the mitmdump for (b) and (c)")
    parser.add_argument("--concurrency", type=int, default=16, help="client connections in (b)")
    parser.add_argument(
        "--delay-ms", type=int, default=50, help="stand-in delay between stream events in (c)"
    )
    parser.add_argument(
        "--cases", default="", help="only bodies whose label holds one of these, comma-separated"
    )
    args = parser.parse_args(argv)
    chosen = cases(labels_with=[c.strip() for c in args.cases.split(",") if c.strip()])
    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    binary = args.mitmdump or own_mitmdump()
    started = time.monotonic()

    progress(
        f"toolnames bench: Python {sys.version.split()[0]}, mitmproxy "
        f"{mitmproxy.version.VERSION} in process, {binary} for (b)/(c), {os.cpu_count()} CPUs"
        + (", quick" if args.quick else "")
    )
    sections: list[str] = []
    targets: list[Target] = []
    with tempfile.TemporaryDirectory(prefix="toolnames-bench-") as tmp:
        workdir = Path(tmp)
        if "a" in parts:
            progress("(a) CPU per request, in process")
            part = report_cpu(bench_cpu(chosen, args.quick))
            sections.append(
                "(a) CPU per request: fastest of interleaved repeats, garbage collector on; ratio "
                "to json.loads of the same body.\n    request hook = ToolNames.request through "
                "taddons (the target); request + response hooks = one whole non-streamed flow "
                "(request, responseheaders, response), for reference.\n    Targets: <= "
                f"{TARGET_CPU}x with tools; without tools 'close to nothing', taken as <= "
                f"{TARGET_CPU_NO_TOOLS}x (the body is scanned for tool keys, never parsed).\n\n"
                + part.text
            )
            targets += part.targets
        if "b" in parts:
            progress(f"(b) requests per second through {binary}")
            rows = bench_rps(chosen, binary, workdir, args.quick, args.concurrency)
            part = report_rps(rows, args.concurrency)
            sections.append(
                f"(b) Requests per second: {args.concurrency} keep-alive connections, reverse "
                "proxy to the loopback stand-in provider (own process), best of rotating rounds; "
                "ratio = toolnames / plain.\n    json.loads only = mitmdump -s a 3-line script "
                "that parses each request body once: the floor for any addon that reads the tools."
                "\n    mitmdump CPU = its user+system time per request (/proc), the steadier "
                "figure on a busy machine; CPU ratio = plain / toolnames CPU, the req/s ratio "
                "if mitmdump's CPU alone set the pace.\n    With large bodies the stand-in "
                "(which parses and validates every body itself) or the client can set the "
                "pace instead, and the req/s ratio then understates the addon's cost.\n\n"
                + part.text
            )
            targets += part.targets
        if "c" in parts:
            progress(f"(c) time to first streamed chunk, stand-in delay {args.delay_ms} ms")
            streamed = bench_stream(binary, workdir, args.quick, args.delay_ms)
            part = report_stream(streamed.rows, args.delay_ms)
            sections.append(
                f"(c) Time to first streamed chunk: chat completions stream with 10 tools, the "
                f"stand-in waits {args.delay_ms} ms between its events ({streamed.reference.count(b'data:')} "
                "events), one keep-alive connection per path, rotating order.\n"
                "    plain mitmdump buffers text/event-stream: its first chunk arrives with the "
                "last.\n    streaming mitmdump = mitmdump -s a 3-line script setting "
                "flow.response.stream = True for SSE: the fair baseline.\n\n" + part.text
            )
            targets += part.targets
    print()
    for section in sections:
        print(section)
        print()
    print("Targets\n")
    print(table(["target", "goal", "measured", "result"], targets))
    print(
        f"\n{sum(t.result == 'PASS' for t in targets)}/{len(targets)} targets met in "
        f"{time.monotonic() - started:.0f}s"
    )
    return 0
