"""Soak: many flows through a real mitmdump with the addon, then a kill -9 (run it as scripts/soak).

Phase 1 sends ``--flows`` requests (20,000 by default), ``--concurrency`` at a time (16), through
mitmdump with the addon and ``toolnames_save`` on, to the loopback stand-in provider. The flows
mix all five wire formats, non-streamed and streamed, clean and flagged (a tool name the
provider rejects; a call to a tool that was never offered, in a body or in a stream). Checks:

- every client got its full response, with the status its kind expects;
- mitmdump logged nothing but the addon's own lines for flagged flows (no error, no traceback);
- memory stays flat: mitmdump's RSS (from /proc) at the end is within ``--rss-growth`` (15%)
  of its value after the warm-up (the first 10% of the flows), so no per-flow state is kept;
- the saved file is readable, owner-only (0600), and holds exactly the flagged flows, once each.

Phase 2 starts mitmdump again on a fresh file, sends flows until ``--kill-after`` of them have
completed, sends it SIGKILL, and checks that every flagged flow whose client had its full
response before the kill can be read back from the file (a record cut by the kill, at the end,
is allowed and reported).

    scripts/soak                        # 20,000 flows, then the kill -9 phase
    scripts/soak --flows 2000           # shorter
    scripts/soak --mitmdump .venv-mitmproxy11/bin/mitmdump
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from toolnames_bench import ADDON_SCRIPT
from toolnames_bench import Process
from toolnames_bench import default_mitmdump
from toolnames_bench import progress
from toolnames_bench import run_load
from toolnames_bench import start_mitmdump
from toolnames_bench import start_standin

ID_HEADER = "x-soak-id"
UNOFFERED = "drop_tables"
BAD_NAME = "get weather"  # a space: invalid under every provider's rule


# --- the traffic -------------------------------------------------------------------------------------


def _chat(name: str, stream: bool) -> tuple[str, dict]:
    tool = {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}], "tools": [tool]}
    return "/v1/chat/completions", {**body, "stream": stream}


def _responses(name: str, stream: bool) -> tuple[str, dict]:
    tool = {"type": "function", "name": name, "parameters": {"type": "object"}}
    return "/v1/responses", {"model": "gpt-4.1", "input": "hi", "tools": [tool], "stream": stream}


def _anthropic(name: str, stream: bool) -> tuple[str, dict]:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": name, "input_schema": {"type": "object"}}],
    }
    return "/v1/messages", {**body, "stream": stream}


def _gemini(name: str, stream: bool) -> tuple[str, dict]:
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": name, "parameters": {"type": "object"}}]}],
    }
    return f"/v1beta/models/gemini-2.5-flash:{method}", body


def _bedrock(name: str, stream: bool) -> tuple[str, dict]:
    op = "converse-stream" if stream else "converse"
    body = {
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "toolConfig": {
            "tools": [{"toolSpec": {"name": name, "inputSchema": {"json": {"type": "object"}}}}]
        },
    }
    return f"/model/anthropic.claude-3-5-sonnet-20240620-v1:0/{op}", body


FORMATS = (_chat, _responses, _anthropic, _gemini, _bedrock)


@dataclass(frozen=True)
class Kind:
    name: str
    stream: bool
    flagged: bool
    status: int
    tool: str = "get_weather"
    call: str = ""  # x-standin-call: the tool the stand-in's model calls


KINDS = (
    Kind("clean", False, False, 200),
    Kind("clean", False, False, 200),
    Kind("clean streamed", True, False, 200),
    Kind("clean streamed", True, False, 200),
    Kind("unoffered call", False, True, 200, call=UNOFFERED),
    Kind("unoffered call streamed", True, True, 200, call=UNOFFERED),
    Kind("invalid name", False, True, 400, tool=BAD_NAME),
)


def flow_for(i: int) -> tuple[Kind, str, bytes, dict[str, str]]:
    """Flow ``i``: its kind and (path, body, headers); every kind meets every format."""
    kind = KINDS[i % len(KINDS)]
    fmt = FORMATS[(i // len(KINDS)) % len(FORMATS)]
    path, body = fmt(kind.tool, kind.stream)
    headers = {ID_HEADER: str(i)}
    if kind.call:
        headers["x-standin-call"] = kind.call
    return kind, path, json.dumps(body).encode(), headers


# --- one run -----------------------------------------------------------------------------------------


@dataclass
class Completion:
    status: int
    at: float  # time.monotonic() when the client had the whole response
    ok: bool


@dataclass
class RunResult:
    flows: int = 0
    seconds: float = 0.0
    done: dict[int, Completion] = field(default_factory=dict)
    client_errors: list[str] = field(default_factory=list)
    rss_kib: list[tuple[int, int]] = field(default_factory=list)  # (flows done, RSS)
    log_problems: list[str] = field(default_factory=list)
    killed_at: float | None = None
    save: Path | None = None  # the toolnames_save file

    def wrong(self) -> list[int]:
        return sorted(i for i, c in self.done.items() if not c.ok)


def _expected(i: int, status: int, data: bytes) -> bool:
    kind = flow_for(i)[0]
    if status != kind.status:
        return False
    # The stand-in's model really called the tool the header asked for.
    return not kind.call or kind.call.encode() in data


def drive(
    proc: Process,
    flows: int,
    concurrency: int,
    label: str,
    kill_after: int | None = None,
) -> RunResult:
    """Send ``flows`` flows through ``proc``; with ``kill_after``, SIGKILL it once that many
    have completed. Samples mitmdump's RSS along the way."""
    result = RunResult(flows=flows)
    lock = threading.Lock()
    stop = threading.Event()
    every = max(100, flows // 40)
    started = time.monotonic()

    def on_done(i: int, status: int, data: bytes) -> None:
        at = time.monotonic()
        with lock:
            result.done[i] = Completion(status, at, _expected(i, status, data))
            n = len(result.done)
        if n % every == 0 and proc.popen.poll() is None:
            rss = proc.rss_kib()
            if rss is not None:
                with lock:
                    result.rss_kib.append((n, rss))
            progress(
                f"{label}: {n}/{flows} flows, {n / (at - started):.0f} flows/s, "
                f"mitmdump RSS {rss / 1024 if rss else 0:.1f} MiB, "
                f"client errors {len(result.client_errors)}, wrong answers {len(result.wrong())}"
            )

    def load() -> None:
        outcome = run_load(
            proc.port,
            lambda i: flow_for(i)[1:],
            concurrency,
            count=flows,
            on_done=on_done,
            stop=stop,
            retry=False,  # a flow sent twice would be saved twice: count errors instead
        )
        result.client_errors.extend(outcome.errors)

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    if kill_after is not None:
        while thread.is_alive():
            with lock:
                n = len(result.done)
            if n >= kill_after:
                result.killed_at = time.monotonic()
                proc.kill9()
                stop.set()
                progress(f"{label}: kill -9 mitmdump after {n} completed flows")
                break
            time.sleep(0.002)
    thread.join()
    result.seconds = time.monotonic() - started
    return result


def log_problems(proc: Process) -> list[str]:
    """Lines of mitmdump's output other than the addon's own notes on flagged flows."""
    problems = []
    for line in proc.log_text().splitlines():
        text = line.split("] ", 1)[-1] if line.startswith("[") else line
        if not text.strip():
            continue
        if ": toolnames " in text or text.startswith("Loading script") or "proxy listening" in text:
            continue
        problems.append(line)
    return problems


def read_saved(path: Path) -> tuple[list, str | None]:
    """Every complete flow in a toolnames_save file, and why reading stopped early, if it did."""
    from mitmproxy import exceptions
    from mitmproxy import io

    flows = []
    with open(path, "rb") as fo:
        try:
            for flow in io.FlowReader(fo).stream():
                flows.append(flow)
        except exceptions.FlowReadException as e:
            return flows, str(e)
    return flows, None


def saved_ids(flows: list) -> list[int]:
    ids = []
    for flow in flows:
        value = flow.request.headers.get(ID_HEADER)
        if value is not None and value.isdigit():
            ids.append(int(value))
    return ids


# --- the two phases ----------------------------------------------------------------------------------


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


def memory_check(samples: list[tuple[int, int]], flows: int, growth: float) -> Check:
    if len(samples) < 3:
        return Check("memory flat", True, "too few flows to sample (not checked)")
    warm = next((kib for n, kib in samples if n >= flows // 10), samples[0][1])
    first, last, top = samples[0][1], samples[-1][1], max(k for _, k in samples)
    return Check(
        "memory flat",
        last <= warm * (1 + growth),
        f"RSS first {first / 1024:.1f} MiB, after warm-up {warm / 1024:.1f} MiB, "
        f"last {last / 1024:.1f} MiB ({(last / warm - 1) * 100:+.1f}%), "
        f"max {top / 1024:.1f} MiB; {len(samples)} samples",
    )


def _run(binary: Path, workdir: Path, name: str, flows: int, concurrency: int, addon: bool):
    standin = start_standin(workdir)
    save = workdir / f"{name.replace(' ', '-')}.mitm"
    proc = start_mitmdump(
        name,
        binary,
        standin.url,
        workdir / "confdir",
        workdir,
        [ADDON_SCRIPT] if addon else [],
        {"toolnames_save": str(save)} if addon else {},
    )
    try:
        progress(f"{name}: {flows} flows, {concurrency} at a time, through {proc.name}")
        run = drive(proc, flows, concurrency, name)
        rss_end = proc.rss_kib()
        if rss_end is not None:
            run.rss_kib.append((len(run.done), rss_end))
    finally:
        proc.stop()
        standin.stop()
    run.log_problems = log_problems(proc)
    run.save = save if addon else None
    return run, save


def phase_control(binary: Path, workdir: Path, flows: int, concurrency: int) -> Check:
    """The same traffic through mitmdump without the addon: how much mitmproxy grows alone."""
    run, _ = _run(binary, workdir, "control", flows, concurrency, addon=False)
    check = memory_check(run.rss_kib, flows, float("inf"))
    return Check("control: mitmdump without the addon", True, check.detail)


def phase_soak(binary: Path, workdir: Path, flows: int, concurrency: int, growth: float):
    run, save = _run(binary, workdir, "phase 1", flows, concurrency, addon=True)

    expected = {i for i in run.done if flow_for(i)[0].flagged}
    saved, cut = read_saved(save)
    ids = saved_ids(saved)
    mode = stat.S_IMODE(os.stat(save).st_mode)
    checks = [
        Check(
            "every client had its full, expected answer",
            len(run.done) == flows and not run.wrong() and not run.client_errors,
            f"{len(run.done)}/{flows} completed, {len(run.wrong())} unexpected answers, "
            f"{len(run.client_errors)} client errors {run.client_errors[:3]}",
        ),
        Check(
            "mitmdump logged no errors",
            not run.log_problems,
            f"{len(run.log_problems)} other lines {run.log_problems[:5]}",
        ),
        Check(
            "saved file: readable, owner-only, the flagged flows once each",
            cut is None and mode == 0o600 and sorted(ids) == sorted(expected),
            f"{len(saved)} flows read (expected {len(expected)} flagged), "
            f"{len(ids) - len(set(ids))} duplicates, {len(expected - set(ids))} missing, "
            f"{len(set(ids) - expected)} unexpected, mode {mode:o}"
            + (f", reading stopped: {cut}" if cut else ""),
        ),
    ]
    checks.append(memory_check(run.rss_kib, flows, growth))
    return run, checks


def phase_kill(binary: Path, workdir: Path, flows: int, concurrency: int, kill_after: int):
    standin = start_standin(workdir)
    save = workdir / "killed.mitm"
    proc = start_mitmdump(
        "kill",
        binary,
        standin.url,
        workdir / "confdir",
        workdir,
        [ADDON_SCRIPT],
        {"toolnames_save": str(save)},
    )
    try:
        progress(f"phase 2: kill -9 mitmdump after {kill_after} of {flows} flows")
        run = drive(proc, flows, concurrency, "phase 2", kill_after=kill_after)
    finally:
        proc.stop()
        standin.stop()
    killed_at = run.killed_at if run.killed_at is not None else float("inf")
    before = {
        i for i, c in run.done.items() if c.at < killed_at and c.ok and flow_for(i)[0].flagged
    }
    saved, cut = read_saved(save)
    ids = set(saved_ids(saved))
    missing = sorted(before - ids)
    checks = [
        Check(
            "mitmdump was killed mid-run",
            run.killed_at is not None and len(run.done) < flows,
            f"{len(run.done)} flows completed of {flows}",
        ),
        Check(
            "after kill -9: every flagged flow completed before it is readable",
            not missing,
            f"{len(before)} flagged flows completed before the kill, {len(saved)} read back, "
            f"{len(missing)} missing {missing[:5]}"
            + (f"; the last record was cut: {cut}" if cut else "; no record was cut"),
        ),
    ]
    return run, checks


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
    binary = args.mitmdump or default_mitmdump()
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

    flagged = sum(1 for i in run.done if flow_for(i)[0].flagged)
    streamed = sum(1 for i in run.done if flow_for(i)[0].stream)
    print()
    print(
        f"soak: {len(run.done)} flows through {binary} in {run.seconds:.0f}s "
        f"({len(run.done) / run.seconds:.0f} flows/s, {args.concurrency} at a time): "
        f"{flagged} flagged, {streamed} streamed, five wire formats"
    )
    for check in checks:
        print(f"  {'PASS' if check.ok else 'FAIL'}  {check.name}: {check.detail}")
    ok = all(c.ok for c in checks)
    print(
        f"{'all checks passed' if ok else 'SOME CHECKS FAILED'} in {time.monotonic() - started:.0f}s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
