"""One run of the soak: flows sent through mitmdump, its memory sampled, optionally a kill -9;
and what it left: its log, its saved file."""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
import threading
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import NamedTuple

from mitmproxy import exceptions
from mitmproxy import http
from mitmproxy import io

from harness.load import Answer
from harness.load import progress
from harness.load import run_load
from harness.processes import Process
from soaktest.traffic import ID_HEADER
from soaktest.traffic import flow_for

__all__ = [
    "Completion",
    "RssSample",
    "RunResult",
    "SavedFlows",
    "drive",
    "log_problems",
    "read_saved",
    "saved_ids",
]


class RssSample(NamedTuple):
    flows: int  # flows done when it was taken
    kib: int


class SavedFlows(NamedTuple):
    """The complete flows of a toolnames_save file, and why reading stopped early, if it did."""

    flows: list[http.HTTPFlow]
    cut: str | None


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
    rss_kib: list[RssSample] = field(default_factory=list)
    log_problems: list[str] = field(default_factory=list)
    killed_at: float | None = None
    save: Path | None = None  # the toolnames_save file

    def wrong(self) -> list[int]:
        return sorted(i for i, c in self.done.items() if not c.ok)


# Bedrock InvokeModel's stream carries each event base64 in a chunk's {"bytes": ...}.
_CHUNK_BYTES = re.compile(rb'"bytes":\s*"([A-Za-z0-9+/=]*)"')


def _readable(body: bytes) -> bytes:
    """The answer's text, with what its base64 chunks hold."""
    inner = []
    for m in _CHUNK_BYTES.finditer(body):
        with contextlib.suppress(binascii.Error):
            inner.append(base64.b64decode(m[1], validate=True))
    return body + b"".join(inner)


def _expected(i: int, answer: Answer) -> bool:
    kind = flow_for(i).kind
    if answer.status != kind.status:
        return False
    # The stand-in's model really called the tool the header asked for.
    return not kind.call or kind.call.encode() in _readable(answer.body)


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

    def on_done(i: int, answer: Answer) -> None:
        at = time.monotonic()
        with lock:
            result.done[i] = Completion(answer.status, at, _expected(i, answer))
            n = len(result.done)
        if n % every == 0 and proc.process.poll() is None:
            rss = proc.rss_kib()
            if rss is not None:
                with lock:
                    result.rss_kib.append(RssSample(n, rss))
            progress(
                f"{label}: {n}/{flows} flows, {n / (at - started):.0f} flows/s, "
                f"mitmdump RSS {rss / 1024 if rss else 0:.1f} MiB, "
                f"client errors {len(result.client_errors)}, wrong answers {len(result.wrong())}"
            )

    def load() -> None:
        outcome = run_load(
            proc.port,
            lambda i: flow_for(i).request,
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


def read_saved(path: Path) -> SavedFlows:
    flows = []
    with open(path, "rb") as fo:
        try:
            for flow in io.FlowReader(fo).stream():
                flows.append(flow)
        except exceptions.FlowReadException as e:
            return SavedFlows(flows, str(e))
    return SavedFlows(flows, None)


def saved_ids(flows: list) -> list[int]:
    ids = []
    for flow in flows:
        value = flow.request.headers.get(ID_HEADER)
        if value is not None and value.isdigit():
            ids.append(int(value))
    return ids
