"""Soak: many flows through a real mitmdump with the addon, then a kill -9 (scripts/soak runs it).

Phase 1 sends ``--flows`` requests (20,000 by default), ``--concurrency`` at a time (16), through
mitmdump with the addon and ``toolnames_save`` on, to the loopback stand-in provider. The flows
mix every wire format (soaktest.traffic.FORMATS), non-streamed and streamed, clean and flagged
(a tool the provider rejects; a call to a tool that was never offered, in a body or in a
stream). Checks:

- every client got its full response, with the status its kind expects;
- mitmdump logged nothing but the addon's own lines for flagged flows (no error, no traceback);
- memory stays flat: mitmdump's RSS (from /proc) at the end is within ``--rss-growth`` (15%)
  of its value after the warm-up (the first 10% of the flows), so no per-flow state is kept;
- the saved file is readable, owner-only (0600), and holds exactly the flagged flows, once each.

Phase 2 starts mitmdump again on a fresh file, sends flows until ``--kill-after`` of them have
completed, sends it SIGKILL, and checks that every flagged flow whose client had its full
response before the kill can be read back from the file (a record cut by the kill, at the end,
is allowed and reported); then starts mitmdump again on the same file, sends up to 100 more
flows, and checks that the whole file reads back, both runs' flagged flows, the cut record
truncated with one line.

    scripts/soak                        # 20,000 flows, then the kill -9 phase
    scripts/soak --flows 2000           # shorter
    scripts/soak --mitmdump .venv-mitmproxy11/bin/mitmdump
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from harness.mitmdump import own_mitmdump
from soaktest.phases import phase_control
from soaktest.phases import phase_kill
from soaktest.phases import phase_soak
from soaktest.traffic import FORMATS
from soaktest.traffic import flow_for

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", type=int, default=20_000, help="flows in phase 1")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--kill-flows", type=int, default=3000, help="flows sent in phase 2")
    parser.add_argument(
        "--kill-after", type=int, default=None, help="completed flows before the kill (half)"
    )
    parser.add_argument("--rss-growth", type=float, default=0.15, help="allowed RSS growth")
    parser.add_argument("--mitmdump", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=None, help="keep files here")
    parser.add_argument("--no-kill", action="store_true", help="skip phase 2")
    parser.add_argument(
        "--control",
        action="store_true",
        help="first send the same flows through mitmdump without the addon, for its memory",
    )
    args = parser.parse_args(argv)
    binary = args.mitmdump or own_mitmdump()
    started = time.monotonic()

    with tempfile.TemporaryDirectory(prefix="toolnames-soak-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        checks = []
        if args.control:
            checks.append(phase_control(binary, workdir, args.flows, args.concurrency))
        run, more = phase_soak(binary, workdir, args.flows, args.concurrency, args.rss_growth)
        checks += more
        if not args.no_kill:
            kill_after = args.kill_after or args.kill_flows // 2
            _, more = phase_kill(binary, workdir, args.kill_flows, args.concurrency, kill_after)
            checks += more

    flagged = sum(1 for i in run.done if flow_for(i).kind.flagged)
    streamed = sum(1 for i in run.done if flow_for(i).kind.stream)
    print()
    print(
        f"soak: {len(run.done)} flows through {binary} in {run.seconds:.0f}s "
        f"({len(run.done) / run.seconds:.0f} flows/s, {args.concurrency} at a time): "
        f"{flagged} flagged, {streamed} streamed, {len(FORMATS)} wire formats"
    )
    for check in checks:
        print(f"  {'PASS' if check.ok else 'FAIL'}  {check.name}: {check.detail}")
    ok = all(c.ok for c in checks)
    print(
        f"{'all checks passed' if ok else 'SOME CHECKS FAILED'} in {time.monotonic() - started:.0f}s"
    )
    return 0 if ok else 1
