"""Instructions per renamed flow, counted by callgrind: the figure docs/performance.md gives
for fix mode's renaming (issue 25), repeatable on a loaded machine where wall-clock times are
not. Not part of scripts/bench (valgrind is slow and not everywhere).

    .venv/bin/python -m benchmark.instructions                 # every body and workload
    .venv/bin/python -m benchmark.instructions --case "10 tools" --workload fix

Each workload runs in its own valgrind process twice, after the same set-up and warm-up,
once ``--n`` more times than the other: the difference divided by ``--n`` is one run's
count, with the interpreter's start, the imports and the set-up taken out. Workloads:

- loads: ``json.loads`` of the MCP-named body (the yardstick);
- fix: a whole renamed flow through the addon's hooks (request, responseheaders, response;
  mitmproxy's taddons, as (a) runs it), every tool and every call in the history aliased,
  the answer's call given back;
- stream-observe, stream-fix: the same request with ``stream`` set, and its streamed answer
  (a call of the first tool, its arguments in fragments) through the tap the addon's
  responseheaders hook makes, chunk by chunk, observed (the stream names the app's tool) and
  in fix mode (it names the alias, given back); the count is per chunk.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable

from benchmark.workload import stream_chunks

__all__ = ["WORKLOADS", "main"]

WORKLOADS = ("loads", "fix", "stream-observe", "stream-fix")
CASES = ("10 tools", "100 tools", "1000 tools", "2 MB, 50 tools")
WARMUP = 3


def _workload(name: str, case: str) -> tuple[Callable[[], object], Callable[[], None]]:
    """(one run of the workload, what leaves its context) for a body."""
    from benchmark.cpu import chat_flow
    from benchmark.cpu import renewer
    from benchmark.cpu import streamed_answer
    from benchmark.workload import cases
    from benchmark.workload import mcp_named
    from harness.inprocess import running

    (found,) = cases(only=[case])
    named = mcp_named(found.raw)
    if name == "loads":
        return (lambda: json.loads(named)), lambda: None
    if name.startswith("stream"):
        mode = "observe" if name == "stream-observe" else "fix"
        return streamed_answer(found.raw, mode), lambda: None
    context = running(toolnames_mode="fix")
    _, tn = context.__enter__()
    flow, _ = chat_flow(named)
    tn.request(flow)
    sent = json.loads(flow.request.content)["tools"][0]["function"]["name"]
    flow, response = chat_flow(named, call=sent)
    renew = renewer(flow, response)

    def close() -> None:
        context.__exit__(None, None, None)

    def renaming() -> None:
        renew()
        tn.request(flow)
        flow.response = response
        tn.responseheaders(flow)
        tn.response(flow)
        if flow.metadata["toolnames"].get("restored") != 1:
            raise SystemExit(f"fix mode did not restore the call: {flow.metadata}")

    return renaming, close


def run(name: str, case: str, n: int) -> None:
    """The workload's set-up, its warm-up, then ``n`` runs (under valgrind, by ``count``)."""
    fn, close = _workload(name, case)
    for _ in range(WARMUP):
        fn()
    gc.collect()
    for _ in range(n):
        fn()
    close()


def count(name: str, case: str, n: int) -> float:
    """Instructions of one run of the workload: two valgrind runs, ``n`` runs apart."""
    totals = []
    # Bytecode is written by the plain run and read by the counted ones, where the
    # environment says not to write it (as this project's machines do): else every run
    # compiles every module it imports, and the two runs differ by more than n runs.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    plain = [sys.executable, "-m", "benchmark.instructions", "--run", name, "--case", case]
    # A plain run first: it writes the .pyc files of whatever changed, so that neither counted
    # run compiles (the first would, and the difference would be off by the compiling).
    subprocess.run([*plain, "--n", "1"], capture_output=True, env=env, check=True)
    with tempfile.TemporaryDirectory(prefix="toolnames-callgrind-") as tmp:
        for runs in (1, 1 + n):
            out = os.path.join(tmp, f"callgrind.{runs}")
            command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *plain]
            command += ["--n", str(runs)]
            done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
            found = re.search(r"Collected : (\d+)", done.stderr)
            if done.returncode != 0 or found is None:
                raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
            totals.append(int(found.group(1)))
    return (totals[1] - totals[0]) / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark.instructions")
    parser.add_argument("--case", action="append", choices=CASES, help="a body (default all)")
    parser.add_argument("--workload", action="append", choices=WORKLOADS)
    parser.add_argument("--n", type=int, default=5, help="runs counted (default 5)")
    parser.add_argument("--run", choices=WORKLOADS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        run(args.run, args.case[0], args.n)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    for case in args.case or CASES:
        figures = {}
        for name in args.workload or WORKLOADS:
            figures[name] = count(name, case, args.n)
        line = [f"{case:<16}"]
        for name, ir in figures.items():
            per = ir / len(stream_chunks("x")) if name.startswith("stream") else ir
            unit = " per chunk" if name.startswith("stream") else ""
            line.append(f"{name} {per / 1e6:8.4f} M{unit}")
        if "loads" in figures and "fix" in figures:
            line.append(f"fix/loads {figures['fix'] / figures['loads']:.2f}x")
        if "stream-observe" in figures and "stream-fix" in figures:
            ratio = figures["stream-fix"] / figures["stream-observe"]
            line.append(f"stream fix/observe {ratio:.2f}x")
        print("   ".join(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
