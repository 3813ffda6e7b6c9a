"""Instructions per renamed flow, and per request through mitmdump, counted by callgrind: the
figures docs/performance.md gives for fix mode's renaming (issue 25), repeatable on a loaded
machine where wall-clock times are not. Not part of scripts/bench (valgrind is slow and not
everywhere).

    .venv/bin/python -m benchmark.instructions                 # every body and workload
    .venv/bin/python -m benchmark.instructions --case "10 tools" --workload fix
    .venv/bin/python -m benchmark.instructions --case "100 tools" --n 10 \
        --workload mitmdump-naive --workload mitmdump-fix      # (b), counted

Each in-process workload runs in its own valgrind process twice, after the same set-up and
warm-up, once ``--n`` more times than the other: the difference divided by ``--n`` is one
run's count, with the interpreter's start, the imports and the set-up taken out. Workloads:

Every workload but the streams sends the body as fix mode's renaming is timed over
(``benchmark.workload.renaming_requests``): MCP-named, its last question asked a few ways in
turn.

- loads: ``json.loads`` of those requests, in turn (the yardstick);
- fix: a whole renamed flow through the addon's hooks (request, responseheaders, response;
  mitmproxy's taddons, as (a) runs it), every tool and every call in the history aliased,
  the answer's call given back;
- stream-observe, stream-fix: the same request with ``stream`` set, and its streamed answer
  (a call of the first tool, its arguments in fragments) through the tap the addon's
  responseheaders hook makes, chunk by chunk, observed (the stream names the app's tool) and
  in fix mode (it names the alias, given back); the count is per chunk;
- mitmdump-loads, mitmdump-naive, mitmdump-fix, mitmdump-fix-unlogged: (b)'s renaming table,
  counted instead of timed. Those requests through mitmdump itself, run under
  valgrind as (b) runs it (a reverse proxy to the sink, whose answer calls the first tool by
  its alias; ``--connections`` keep-alive connections, 16 as (b) judges), with the
  json.loads-only script, the naive renaming script, the addon in fix mode, and the addon in
  fix mode with its ``toolnames`` logger disabled (what its line a flow costs inside
  mitmproxy). Counted over ``--n`` requests on each connection after a warm-up, between a
  zeroing and a dump of callgrind's counters (``callgrind_control``): mitmdump's start is not
  in the count; the sockets' Python side, HTTP and the proxy's layers are. What the kernel
  does for the sockets, which (b)'s CPU figures include, is not.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import NamedTuple

from benchmark.workload import stream_chunks

if TYPE_CHECKING:
    from harness.processes import Process

__all__ = ["WORKLOADS", "main"]

MITMDUMP_WORKLOADS = ("mitmdump-loads", "mitmdump-naive", "mitmdump-fix", "mitmdump-fix-unlogged")
WORKLOADS = ("loads", "fix", "stream-observe", "stream-fix", *MITMDUMP_WORKLOADS)
CASES = ("10 tools", "100 tools", "1000 tools", "2 MB, 50 tools")
WARMUP = 3
CONNECTIONS = 16
# Each count's hashing alike (set, dict and str orders), so that two runs count alike.
COUNTED_ENV = {"PYTHONHASHSEED": "0"}
# mitmdump under valgrind starts some 50 times slower than on its own.
VALGRIND_STARTUP = 600.0


def _workload(name: str, case: str) -> tuple[Callable[[], object], Callable[[], None]]:
    """(one run of the workload, what leaves its context) for a body."""
    from benchmark.cpu import loads_in_turn
    from benchmark.cpu import renamed_flows
    from benchmark.cpu import streamed_answer
    from benchmark.workload import cases
    from benchmark.workload import renaming_requests

    (found,) = cases(only=[case])
    sent = renaming_requests(found.raw)
    if name == "loads":
        return loads_in_turn(sent), lambda: None
    if name.startswith("stream"):
        mode = "observe" if name == "stream-observe" else "fix"
        return streamed_answer(found.raw, mode), lambda: None
    # (a)'s renamed flow (benchmark.cpu), checked once as it is made.
    context = renamed_flows(sent)
    renaming = context.__enter__()
    return renaming, lambda: context.__exit__(None, None, None)


def run(name: str, case: str, n: int) -> None:
    """The workload's set-up, its warm-up, then ``n`` runs (under valgrind, by ``count``);
    a mitmdump workload's ``n`` requests on each connection, checked, through mitmdump on
    its own."""
    if name in MITMDUMP_WORKLOADS:
        with through_mitmdump(name, case, CONNECTIONS) as (_, send):
            send(n * CONNECTIONS)
        return
    fn, close = _workload(name, case)
    for _ in range(WARMUP):
        fn()
    gc.collect()
    for _ in range(n):
        fn()
    close()


def count(name: str, case: str, n: int, connections: int = CONNECTIONS) -> float:
    """Instructions of one run of the workload: two valgrind runs, ``n`` runs apart (one
    valgrind run of mitmdump, counted over ``n`` requests on each of ``connections``, for
    the mitmdump workloads: one request's count)."""
    if name in MITMDUMP_WORKLOADS:
        return count_mitmdump(name, case, n, connections)
    totals = []
    # Bytecode is written by the plain run and read by the counted ones, where the
    # environment says not to write it (as this project's machines do): else every run
    # compiles every module it imports, and the two runs differ by more than n runs.
    env = {**os.environ, **COUNTED_ENV}
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


class MitmdumpWorkload(NamedTuple):
    """What a mitmdump workload's mitmdump loads, and whether it renames the request."""

    scripts: list[Path]
    options: dict[str, str]
    renames: bool


def mitmdump_workload(name: str, folder: Path) -> MitmdumpWorkload:
    """The scripts (written to ``folder`` where they are the bench's) and options of ``name``."""
    from benchmark.throughput import JSON_ONLY_SCRIPT
    from benchmark.throughput import RENAMING_SCRIPT
    from harness.mitmdump import ADDON_SCRIPT

    texts = {"mitmdump-loads": JSON_ONLY_SCRIPT, "mitmdump-naive": RENAMING_SCRIPT}
    if name in texts:
        script = folder / f"{name}.py"
        script.write_text(texts[name])
        return MitmdumpWorkload([script], {}, name == "mitmdump-naive")
    scripts = [ADDON_SCRIPT]
    if name == "mitmdump-fix-unlogged":
        # Disabled, the logger drops each record before mitmproxy's handlers see it.
        quiet = folder / "unlogged.py"
        quiet.write_text('import logging\nlogging.getLogger("toolnames").disabled = True\n')
        scripts.append(quiet)
    return MitmdumpWorkload(scripts, {"toolnames_mode": "fix"}, True)


@contextlib.contextmanager
def through_mitmdump(
    name: str, case: str, connections: int, wrapper: Sequence[str] = ()
) -> Iterator[tuple[Process, Callable[[int], None]]]:
    """mitmdump running workload ``name`` (under ``wrapper``: valgrind) as (b) runs it, between
    (b)'s client and sink, warmed up; yields it and what sends ``n`` requests of the body,
    each checked: answered 200, its call given back under the app's name (the request went
    out under an alias, where the workload renames)."""
    from benchmark.throughput import first_alias
    from benchmark.throughput import sink_answer
    from benchmark.throughput import start_bench_mitmdump
    from benchmark.workload import CHAT_PATH
    from benchmark.workload import SDK_LOAD_HEADERS
    from benchmark.workload import cases
    from benchmark.workload import renaming_requests
    from harness.load import Answer
    from harness.load import LoadRequest
    from harness.load import run_load
    from harness.mitmdump import own_mitmdump
    from harness.processes import STARTUP_TIMEOUT
    from harness.processes import STOP_TIMEOUT
    from harness.processes import ProcessGroup
    from harness.sink import start_sink

    (found,) = cases(only=[case])
    sent = renaming_requests(found.raw)
    app = json.loads(sent[0])["tools"][0]["function"]["name"]
    alias = first_alias(sent[0])
    requests = [LoadRequest(CHAT_PATH, body, dict(SDK_LOAD_HEADERS)) for body in sent]
    with tempfile.TemporaryDirectory(prefix="toolnames-mitmdump-") as tmp, ProcessGroup() as group:
        folder = Path(tmp)
        workload = mitmdump_workload(name, folder)
        answer = sink_answer(alias if workload.renames else app)
        sink = group.add(start_sink(folder, answer))
        mitmdump = start_bench_mitmdump(
            group,
            name,
            own_mitmdump(),
            sink.url,
            folder,
            workload.scripts,
            workload.options,
            wrapper=wrapper,
            startup_timeout=VALGRIND_STARTUP if wrapper else STARTUP_TIMEOUT,
            env=COUNTED_ENV,
        )
        port = mitmdump.port

        wrong: list[Answer] = []

        def checked(_: int, got: Answer) -> None:
            # In the client's threads: what is wrong is said by send, not raised here.
            if got.status != 200:
                wrong.append(got)
                return
            calls = json.loads(got.body)["choices"][0]["message"]["tool_calls"]
            if [call["function"]["name"] for call in calls] != [app]:
                wrong.append(got)

        def send(n: int) -> None:
            done = run_load(
                port, lambda i: requests[i % len(requests)], connections, count=n, on_done=checked
            )
            if wrong:
                got = wrong[0]
                raise SystemExit(f"{name}: the client got {got.status} {got.body[:300]!r}")
            if done.statuses != {200: n} or done.errors:
                log = mitmdump.log_text()[-2000:]
                raise SystemExit(f"{name}: {done.statuses} {done.errors[:3]}\n{log}")

        send(2 * connections)  # every connection opened, upstream too, and the tools seen
        yield mitmdump, send
        mitmdump.stop(timeout=VALGRIND_STARTUP if wrapper else STOP_TIMEOUT)


def count_mitmdump(name: str, case: str, n: int, connections: int = CONNECTIONS) -> float:
    """Instructions of one request through mitmdump running workload ``name``: its counters
    zeroed after the warm-up, ``n`` requests on each connection, a dump of what they counted,
    divided by the requests (a full collection of the garbage collector, some tens of millions
    of instructions, falls in one window and not in another: the more requests, the less it
    moves the figure)."""
    with tempfile.TemporaryDirectory(prefix="toolnames-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        with through_mitmdump(name, case, connections, valgrind) as (mitmdump, send):
            pid = str(mitmdump.process.pid)
            subprocess.run(["callgrind_control", "-z", pid], capture_output=True, check=True)
            send(n * connections)
            subprocess.run(["callgrind_control", "-d", pid], capture_output=True, check=True)
            dump = next(Path(tmp).glob("callgrind.out.*"), None)
            if dump is None:
                raise SystemExit(f"callgrind wrote no dump for {name}")
            return dump_total(dump.read_text()) / (n * connections)


def dump_total(text: str) -> int:
    """The instructions a callgrind dump counted (its ``totals:`` line)."""
    found = re.search(r"^totals: (\d+)", text, re.MULTILINE)
    if found is None:
        raise SystemExit("a callgrind dump without its totals line")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark.instructions")
    parser.add_argument("--case", action="append", choices=CASES, help="a body (default all)")
    parser.add_argument("--workload", action="append", choices=WORKLOADS)
    parser.add_argument(
        "--n",
        type=int,
        default=5,
        help="runs counted; requests on each connection for the mitmdump workloads (default 5)",
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=CONNECTIONS,
        help=f"client connections of the mitmdump workloads (default {CONNECTIONS})",
    )
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
            figures[name] = count(name, case, args.n, args.connections)
        line = [f"{case:<16}"]
        for name, ir in figures.items():
            per = ir / len(stream_chunks("x")) if name.startswith("stream") else ir
            unit = " per chunk" if name.startswith("stream") else ""
            line.append(f"{name} {per / 1e6:8.4f} M{unit}")
        if "loads" in figures and "fix" in figures:
            line.append(f"fix/loads {figures['fix'] / figures['loads']:.2f}x")
        if "mitmdump-naive" in figures:
            # As (b)'s renaming table puts it: the naive renamer's cost over each one's.
            for name in ("mitmdump-loads", "mitmdump-fix", "mitmdump-fix-unlogged"):
                if name in figures:
                    ratio = figures["mitmdump-naive"] / figures[name]
                    line.append(f"naive/{name.removeprefix('mitmdump-')} {ratio:.3f}")
        if "stream-observe" in figures and "stream-fix" in figures:
            ratio = figures["stream-fix"] / figures["stream-observe"]
            line.append(f"stream fix/observe {ratio:.2f}x")
        print("   ".join(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
