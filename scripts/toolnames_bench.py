"""How much the toolnames addon costs, measured three ways in one run (run it as scripts/bench).

(a) CPU per request, in process: Exchange.check_request, the addon's request hook (through
    mitmproxy's taddons) and a whole flow's hooks (request, then response), against json.loads
    of the same body. Bodies with 1 to 1,000 tools, a ~2 MB conversation with tools, and bodies
    without tools (small and ~2 MB). Targets: at most 1.5x json.loads; a body without tools
    costs close to nothing (it is scanned for tool keys, never parsed).
(b) Requests per second through a real mitmdump, without and with the addon, to the same
    loopback stand-in provider (scripts/standin_provider.py, in its own process), the same
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
import contextlib
import functools
import gc
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ADDON_DIR = REPO_ROOT / "addon"
ADDON_SCRIPT = ADDON_DIR / "toolnames.py"
STANDIN_SCRIPT = REPO_ROOT / "scripts" / "standin_provider.py"
CHAT_PATH = "/v1/chat/completions"

# The baseline for (c): what any user who wants SSE streamed through mitmdump has to load.
STREAM_SSE_SCRIPT = """\
def responseheaders(flow):
    if flow.response.headers.get("content-type", "").startswith("text/event-stream"):
        flow.response.stream = True
"""
# A reference for (b): the least any addon that reads the tools must do, parse the body once.
JSON_ONLY_SCRIPT = """\
import json
def request(flow):
    json.loads(flow.request.content or b"null")
"""

TARGET_CPU = 1.5
TARGET_CPU_NO_TOOLS = 0.5
TARGET_RPS = 0.95
TARGET_TTFC = 1.05


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- bodies -------------------------------------------------------------------------------------

_WORD_TEXT = (
    "the a to of and in is it you that for on with as this be are can not or by what your from "
    "at an if will have do we use when which one all but more so also how there these then each "
    "value request model answer customer order invoice report data table list file code line "
    "error result test change version server client user account payment date time number name "
    "field query page item text message summary update option method return call variable class "
    "function tool loop string array object key index build deploy config check run send read"
)
_WORDS = _WORD_TEXT.split()
_VERBS = ("get", "search", "create", "update", "delete", "list", "send", "fetch", "run", "check")
_NOUNS = (
    "weather",
    "invoice",
    "customer",
    "ticket",
    "calendar_event",
    "document",
    "repository",
    "order",
    "message",
    "report",
)


def _prose(rng: random.Random, words: int) -> str:
    out = []
    for i in range(words):
        word = rng.choice(_WORDS)
        out.append(word.capitalize() if i == 0 or out[-1].endswith(".") else word)
        if rng.random() < 0.08:
            out[-1] += "."
    return " ".join(out) + "."


def tool_name(i: int) -> str:
    base = f"{_VERBS[i % 10]}_{_NOUNS[(i // 10) % 10]}"
    return base if i < 100 else f"{base}_{i // 100}"


def chat_tool(i: int) -> dict:
    """A function tool shaped like the ones agent SDKs send: a sentence or two and a
    JSON schema with a few described properties (about 800 bytes of JSON)."""
    noun = _NOUNS[(i // 10) % 10].replace("_", " ")
    return {
        "type": "function",
        "function": {
            "name": tool_name(i),
            "description": (
                f"{_VERBS[i % 10].capitalize()} a {noun} by its id or by a free-text query. "
                f"Returns a JSON object with the {noun} fields that were asked for, or an "
                "error message when nothing matches."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": f"The {noun} id, e.g. abc_12345."},
                    "query": {
                        "type": "string",
                        "description": "Free text to match when no id is known.",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 100,
                        "description": "How many results to return at most.",
                    },
                    "fields": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Which fields to include; all of them when empty.",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            "strict": False,
        },
    }


def _turn(rng: random.Random, n: int, tools: int) -> list[dict]:
    """One round of a conversation; with tools, the assistant calls one and reads its result."""
    messages: list[dict] = [{"role": "user", "content": _prose(rng, 60)}]
    if tools:
        call_id = f"call_{n:06d}"
        name = tool_name(n % tools)
        arguments = json.dumps({"query": _prose(rng, 6), "limit": 5})
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": call_id,
                "content": json.dumps({"results": [_prose(rng, 12) for _ in range(3)]}),
            },
        ]
    messages.append({"role": "assistant", "content": _prose(rng, 80)})
    return messages


def chat_body(tools: int, size: int = 0, seed: int = 0) -> dict:
    """A chat completions request: a system prompt, conversation rounds until the body is
    about ``size`` bytes (one round at least), a last user message, and ``tools`` tools."""
    rng = random.Random(seed)
    messages = [{"role": "system", "content": _prose(rng, 120)}]
    approx = 0
    n = 0
    while n == 0 or approx < size:
        turn = _turn(rng, n, tools)
        approx += len(json.dumps(turn))
        messages += turn
        n += 1
    messages.append({"role": "user", "content": _prose(rng, 30)})
    body: dict = {"model": "gpt-4.1", "messages": messages}
    if tools:
        body["tools"] = [chat_tool(i) for i in range(tools)]
        body["tool_choice"] = "auto"
    return body


def small_body() -> dict:
    rng = random.Random(1)
    return {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": _prose(rng, 25)},
        ],
    }


def encode(body: dict) -> bytes:
    # What the openai SDK sends: compact separators, raw UTF-8.
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass
class Case:
    label: str
    raw: bytes
    tools: int

    @property
    def size(self) -> str:
        n = len(self.raw)
        return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} kB"


CASE_FILTER: list[str] = []


# The bodies (b) sends in a --quick run, to keep it near 30 seconds.
QUICK_RPS_CASES = ("10 tools", "1000 tools", "no tools, small")


@functools.cache
def _all_cases() -> tuple[Case, ...]:
    two_mb = 2_000_000
    out = [Case(f"{n} tool{'s' if n > 1 else ''}", encode(chat_body(n)), n) for n in (1, 10, 100)]
    out.append(Case("1000 tools", encode(chat_body(1000)), 1000))
    out.append(Case("2 MB, 50 tools", encode(chat_body(50, two_mb, seed=2)), 50))
    out.append(Case("no tools, small", encode(small_body()), 0))
    out.append(Case("no tools, 2 MB", encode(chat_body(0, two_mb, seed=3)), 0))
    return tuple(out)


def cases(only: tuple[str, ...] = ()) -> list[Case]:
    out = list(_all_cases())
    if only:
        out = [c for c in out if c.label in only]
    if CASE_FILTER:
        out = [c for c in out if any(f in c.label for f in CASE_FILTER)]
    return out


# --- (a) CPU per request --------------------------------------------------------------------------


@dataclass
class CpuRow:
    case: Case
    # name -> seconds per call, one entry per repeat
    samples: dict[str, list[float]] = field(default_factory=dict)

    def best(self, name: str) -> float:
        return min(self.samples[name])

    def median(self, name: str) -> float:
        return statistics.median(self.samples[name])

    def ratio(self, name: str) -> float:
        return self.best(name) / self.best("json.loads")


def _calibrate(fn: Callable[[], object], min_time: float) -> int:
    number = 1
    while True:
        took = timeit.Timer(fn).timeit(number)
        if took >= min_time or number >= 1 << 20:
            return number
        number = max(number * 2, int(number * min_time / max(took, 1e-9) * 1.2))


def time_interleaved(
    fns: dict[str, Callable[[], object]], min_time: float, repeats: int
) -> dict[str, list[float]]:
    """Seconds per call of each function, ``repeats`` times, the functions taking turns so
    that a noisy neighbour slows them all alike."""
    numbers = {name: _calibrate(fn, min_time) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            # timeit turns the garbage collector off; a parsed body's objects are its work too.
            timer = timeit.Timer(fn, setup="gc.enable()", globals={"gc": gc})
            samples[name].append(timer.timeit(numbers[name]) / numbers[name])
    return samples


@contextlib.contextmanager
def addon_in_taddons() -> Iterator[object]:
    """The real addon class inside mitmproxy's test master, configured as mitmdump would."""
    import logging

    from mitmproxy import hooks
    from mitmproxy.test import taddons

    import toolnames

    root = logging.getLogger()
    handlers = list(root.handlers)
    tn = toolnames.ToolNames()
    try:
        with taddons.context(tn) as tctx:
            tctx.master.addons.invoke_addon_sync(tn, hooks.ConfigureHook(set(tctx.options.keys())))
            yield tn
            tn.done()
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)


# What the openai Python SDK sends (captured from openai 3.57 against a local socket), and what
# OpenAI answers with: header lookups walk every field, so their number shows in the hooks.
SDK_REQUEST_HEADERS = (
    ("Host", "api.openai.com"),
    ("Accept-Encoding", "gzip, deflate, br, zstd"),
    ("Connection", "keep-alive"),
    ("authorization", "Bearer sk-bench-not-a-key"),
    ("accept", "application/json"),
    ("content-type", "application/json"),
    ("user-agent", "OpenAI/Python 3.57.0"),
    ("x-stainless-lang", "python"),
    ("x-stainless-package-version", "3.57.0"),
    ("x-stainless-os", "Linux"),
    ("x-stainless-arch", "x64"),
    ("x-stainless-runtime", "CPython"),
    ("x-stainless-runtime-version", "3.13.0"),
    ("x-stainless-async", "false"),
    ("x-stainless-retry-count", "0"),
    ("x-stainless-read-timeout", "600"),
)
# The same for (b) and (c), over http.client, which sets Host and Accept-Encoding itself.
SDK_LOAD_HEADERS = {
    name: value
    for name, value in SDK_REQUEST_HEADERS
    if name.lower() not in ("host", "connection", "accept-encoding")
}
PROVIDER_RESPONSE_HEADERS = (
    ("date", "Sun, 29 Nov 2026 12:00:00 GMT"),
    ("content-type", "application/json"),
    ("connection", "keep-alive"),
    ("access-control-expose-headers", "X-Request-ID"),
    ("openai-organization", "org-bench"),
    ("openai-processing-ms", "412"),
    ("openai-version", "2020-10-01"),
    ("x-ratelimit-limit-requests", "10000"),
    ("x-ratelimit-limit-tokens", "30000000"),
    ("x-ratelimit-remaining-requests", "9999"),
    ("x-ratelimit-remaining-tokens", "29999000"),
    ("x-ratelimit-reset-requests", "6ms"),
    ("x-ratelimit-reset-tokens", "2ms"),
    ("x-request-id", "req_bench"),
    ("strict-transport-security", "max-age=31536000; includeSubDomains; preload"),
    ("cf-cache-status", "DYNAMIC"),
    ("x-content-type-options", "nosniff"),
    ("server", "cloudflare"),
    ("alt-svc", 'h3=":443"; ma=86400'),
)


def _fields(headers: tuple[tuple[str, str], ...]) -> list[tuple[bytes, bytes]]:
    return [(name.encode(), value.encode()) for name, value in headers]


def chat_flow(raw: bytes):
    from mitmproxy import http
    from mitmproxy.test import tflow
    from mitmproxy.test import tutils

    request = tutils.treq(
        method=b"POST",
        scheme=b"https",
        host="api.openai.com",
        port=443,
        path=CHAT_PATH.encode(),
        headers=http.Headers(_fields(SDK_REQUEST_HEADERS)),
    )
    request.content = raw
    response = tutils.tresp(
        content=encode(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": "gpt-4.1",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "hello"},
                        "finish_reason": "stop",
                    }
                ],
            }
        )
    )
    content_length = response.headers["content-length"]
    response.headers = http.Headers(_fields(PROVIDER_RESPONSE_HEADERS))
    response.headers["content-length"] = content_length
    flow = tflow.tflow(req=request, live=True)
    return flow, response


def bench_cpu(quick: bool) -> list[CpuRow]:
    sys.path.insert(0, str(ADDON_DIR))
    from toolnames_core import Exchange

    min_time, repeats = (0.01, 3) if quick else (0.04, 7)
    rows = []
    with addon_in_taddons() as tn:
        for case in cases():
            raw = case.raw
            flow, response = chat_flow(raw)
            tn.request(flow)
            if "toolnames" in flow.metadata:
                raise SystemExit(f"bench body {case.label!r} is flagged: {flow.metadata}")

            def whole_flow(flow=flow, response=response) -> None:
                flow.response = None
                tn.request(flow)
                flow.response = response
                tn.responseheaders(flow)
                tn.response(flow)

            fns = {
                "json.loads": lambda raw=raw: json.loads(raw),
                "check_request": lambda raw=raw: Exchange("openai-chat", "openai").check_request(
                    raw
                ),
                "request hook": lambda flow=flow: tn.request(flow),
                "flow hooks": whole_flow,
            }
            gc.collect()
            row = CpuRow(case, time_interleaved(fns, min_time, repeats))
            rows.append(row)
            progress(
                f"(a) {case.label:<16} json.loads {row.best('json.loads') * 1e6:9.1f} µs   "
                f"request hook {row.ratio('request hook'):5.2f}x   "
                f"flow hooks {row.ratio('flow hooks'):5.2f}x"
            )
    return rows


# --- processes: stand-in provider and mitmdump ----------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Process:
    name: str
    popen: subprocess.Popen
    port: int
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def rss_kib(self) -> int | None:
        """Resident memory from /proc (Linux), None when the process is gone."""
        try:
            status = Path(f"/proc/{self.popen.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return None

    def cpu_seconds(self) -> float:
        """User plus system CPU time the process has used so far, from /proc (Linux)."""
        try:
            fields = Path(f"/proc/{self.popen.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()

    def kill9(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
            self.popen.wait()


def _wait_listening(proc: Process, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.popen.poll() is not None:
            raise RuntimeError(
                f"{proc.name} exited with code {proc.popen.returncode}:\n{proc.log_text()}"
            )
        try:
            with socket.create_connection(("127.0.0.1", proc.port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{proc.name} did not listen within {timeout:.0f}s:\n{proc.log_text()}")


# http.server leaves Nagle's algorithm on, and the stand-in writes a response's head and body
# separately: the body then waits for the peer's delayed ACK (40 ms on Linux), which caps each
# connection at about 25 requests per second (350/s for 16) and would hide mitmdump's own cost.
STANDIN_NODELAY = """\
import sys
import standin_provider
standin_provider._Handler.disable_nagle_algorithm = True
sys.exit(standin_provider.main(sys.argv[1:]))
"""


def start_standin(workdir: Path) -> Process:
    """The stand-in provider in its own process, so that it does not share the client's GIL."""
    port = free_port()
    log_path = workdir / f"standin-{port}.log"
    with open(log_path, "wb") as log:
        popen = subprocess.Popen(
            # --no-record: thousands of megabyte bodies would otherwise pile up in its memory.
            [sys.executable, "-c", STANDIN_NODELAY, "--port", str(port), "--quiet", "--no-record"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=STANDIN_SCRIPT.parent,
            start_new_session=True,
        )
    proc = Process("stand-in provider", popen, port, log_path)
    _wait_listening(proc)
    return proc


def default_mitmdump() -> Path:
    own = Path(sys.executable).parent / "mitmdump"
    return own if own.exists() else REPO_ROOT / ".venv" / "bin" / "mitmdump"


def start_mitmdump(
    name: str,
    binary: Path,
    upstream: str,
    confdir: Path,
    workdir: Path,
    scripts: list[Path],
    options: dict[str, str] | None = None,
    verbosity: str = "warn",
) -> Process:
    port = free_port()
    command = [
        str(binary),
        "--listen-host",
        "127.0.0.1",
        "--listen-port",
        str(port),
        "--mode",
        f"reverse:{upstream}",
        "--set",
        f"confdir={confdir}",
        "--set",
        f"termlog_verbosity={verbosity}",
        "--set",
        "flow_detail=0",
    ]
    for script in scripts:
        command += ["-s", str(script)]
    for key, value in (options or {}).items():
        command += ["--set", f"{key}={value}"]
    log_path = workdir / f"mitmdump-{name.replace(' ', '-')}-{port}.log"
    with open(log_path, "wb") as log:
        popen = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
        )
    proc = Process(f"mitmdump ({name})", popen, port, log_path)
    _wait_listening(proc)
    return proc


class Client:
    """One keep-alive HTTP/1.1 connection; reconnects when the server closed it."""

    def __init__(self, port: int, timeout: float = 60.0, retry: bool = True) -> None:
        self.port, self.timeout, self.retry = port, timeout, retry
        self.conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        return self.conn

    def post(
        self, path: str, body: bytes, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(
                    "POST", path, body, {"content-type": "application/json", **(headers or {})}
                )
                response = conn.getresponse()
                data = response.read()
            except (ConnectionError, http.client.RemoteDisconnected, BrokenPipeError):
                # A keep-alive connection the server closed while idle: send again, once.
                self.close()
                if attempt == 2 or not self.retry:
                    raise
                continue
            if response.will_close:
                self.close()
            return response.status, data
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


@dataclass
class LoadResult:
    requests: int
    seconds: float
    statuses: dict[int, int]
    errors: list[str]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def run_load(
    port: int,
    bodies: Callable[[int], tuple[str, bytes, dict[str, str]]],
    concurrency: int,
    *,
    duration: float | None = None,
    count: int | None = None,
    on_done: Callable[[int, int, bytes], None] | None = None,
    stop: threading.Event | None = None,
    retry: bool = True,
) -> LoadResult:
    """``concurrency`` threads, each on its own keep-alive connection, send requests
    ``bodies(i)`` -> (path, body, headers) until ``duration`` seconds or ``count`` requests,
    or until ``stop`` is set. ``on_done(i, status, body)`` runs for every full response."""
    lock = threading.Lock()
    next_index = 0
    statuses: dict[int, int] = {}
    errors: list[str] = []
    done = 0
    start = time.perf_counter()
    deadline = start + duration if duration else None

    def worker() -> None:
        nonlocal next_index, done
        client = Client(port, retry=retry)
        try:
            while True:
                with lock:
                    if stop is not None and stop.is_set():
                        return
                    if count is not None and next_index >= count:
                        return
                    if deadline is not None and time.perf_counter() >= deadline:
                        return
                    i = next_index
                    next_index += 1
                path, body, headers = bodies(i)
                try:
                    status, data = client.post(path, body, headers)
                except Exception as e:  # noqa: BLE001 (reported, and the run goes on)
                    client.close()
                    with lock:
                        errors.append(f"request {i}: {type(e).__name__}: {e}")
                    continue
                if on_done is not None:
                    on_done(i, status, data)
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1
                    done += 1
        finally:
            client.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return LoadResult(done, time.perf_counter() - start, statuses, errors)


# --- (b) requests per second ------------------------------------------------------------------------


VARIANTS = ("plain", "json.loads only", "toolnames")


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
        return self.best("toolnames") / self.best("plain")

    @property
    def cpu_ratio(self) -> float:
        """What the ratio would be if mitmdump's CPU were all that limited the rate."""
        return self.cpu_ms("plain") / self.cpu_ms("toolnames")


def bench_rps(binary: Path, workdir: Path, quick: bool, concurrency: int) -> list[RpsRow]:
    duration, rounds = (0.6, 2) if quick else (1.5, 3)
    standin = start_standin(workdir)
    confdir = workdir / "confdir"
    json_only = workdir / "json_only.py"
    json_only.write_text(JSON_ONLY_SCRIPT)
    scripts = {"plain": [], "json.loads only": [json_only], "toolnames": [ADDON_SCRIPT]}
    rows = []
    procs: dict[str, Process] = {}
    try:
        for variant in VARIANTS:
            procs[variant] = start_mitmdump(
                variant, binary, standin.url, confdir, workdir, scripts[variant]
            )
        for case in cases(QUICK_RPS_CASES if quick else ()):
            row = RpsRow(case)

            def bodies(i: int, body=case.raw) -> tuple[str, bytes, dict[str, str]]:
                return CHAT_PATH, body, SDK_LOAD_HEADERS

            # Warm up every mitmdump (connections, the stand-in's first parse), then take
            # turns, the order rotating each round, so that drift and order favour no one.
            for proc in procs.values():
                run_load(proc.port, bodies, concurrency, count=concurrency * (1 if quick else 2))
            for r in range(rounds):
                order = VARIANTS[r % 3 :] + VARIANTS[: r % 3]
                for variant in order:
                    proc = procs[variant]
                    cpu = proc.cpu_seconds()
                    result = run_load(proc.port, bodies, concurrency, duration=duration)
                    row.rps[variant].append(result.rps)
                    row.cpu[variant].append((proc.cpu_seconds() - cpu) / max(result.requests, 1))
                    bad = {s: n for s, n in result.statuses.items() if s != 200}
                    if bad or result.errors:
                        row.problems.append(f"{variant}: statuses {bad} {result.errors[:2]}")
            rows.append(row)
            progress(
                f"(b) {case.label:<16} req/s plain {row.best('plain'):6.1f}  "
                f"json.loads only {row.best('json.loads only'):6.1f}  "
                f"toolnames {row.best('toolnames'):6.1f}  ratio {row.ratio:.3f}   "
                f"mitmdump CPU/request {row.cpu_ms('plain'):.2f} / "
                f"{row.cpu_ms('json.loads only'):.2f} / {row.cpu_ms('toolnames'):.2f} ms"
                + (f"   PROBLEMS: {row.problems}" if row.problems else "")
            )
    finally:
        for proc in procs.values():
            proc.stop()
        standin.stop()
    for proc in procs.values():
        log = proc.log_text()
        if "Traceback" in log or "Addon error" in log:
            raise RuntimeError(f"{proc.name} logged an error:\n{log[-4000:]}")
    return rows


# --- (c) time to first streamed chunk ---------------------------------------------------------------


def first_chunk(
    conn: http.client.HTTPConnection, body: bytes, headers: dict[str, str]
) -> tuple[float, float, bytes]:
    """(seconds to the first body byte, seconds to the end, the body) of one streamed request."""
    start = time.perf_counter()
    conn.request("POST", CHAT_PATH, body, {"content-type": "application/json", **headers})
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"status {response.status}: {response.read()[:500]!r}")
    first = response.read1(65536)
    ttfc = time.perf_counter() - start
    rest = response.read()
    return ttfc, time.perf_counter() - start, first + rest


@dataclass
class StreamRow:
    name: str
    ttfc: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    identical: bool = True

    @property
    def median_ttfc(self) -> float:
        return statistics.median(self.ttfc)


def bench_stream(
    binary: Path, workdir: Path, quick: bool, delay_ms: int
) -> tuple[list[StreamRow], bytes]:
    samples = 6 if quick else 30
    body = chat_body(10)
    body["stream"] = True
    raw = encode(body)
    headers = {**SDK_LOAD_HEADERS, "x-standin-delay-ms": str(delay_ms)}
    standin = start_standin(workdir)
    confdir = workdir / "confdir"
    sse_script = workdir / "stream_sse.py"
    sse_script.write_text(STREAM_SSE_SCRIPT)
    procs = []
    try:
        targets = {"direct (no proxy)": standin}
        for name, scripts in (
            ("plain mitmdump", []),
            ("streaming mitmdump", [sse_script]),
            ("mitmdump + toolnames", [ADDON_SCRIPT]),
        ):
            proc = start_mitmdump(name, binary, standin.url, confdir, workdir, scripts)
            procs.append(proc)
            targets[name] = proc
        conns = {
            name: http.client.HTTPConnection("127.0.0.1", proc.port, timeout=60)
            for name, proc in targets.items()
        }
        rows = {name: StreamRow(name) for name in targets}
        reference = b""
        for conn in conns.values():  # warm up every connection and path
            reference = first_chunk(conn, raw, headers)[2]
        for i in range(samples):
            names = list(conns)
            # Take turns in a rotating order, so drift and the order itself favour no one.
            names = names[i % len(names) :] + names[: i % len(names)]
            for name in names:
                ttfc, total, data = first_chunk(conns[name], raw, headers)
                row = rows[name]
                row.ttfc.append(ttfc)
                row.total.append(total)
                row.identical = row.identical and data == reference
            if (i + 1) % max(1, samples // 4) == 0:
                progress(f"(c) {i + 1}/{samples} streamed requests through each")
        for conn in conns.values():
            conn.close()
    finally:
        for proc in procs:
            proc.stop()
        standin.stop()
    return list(rows.values()), reference


# --- report ------------------------------------------------------------------------------------------


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} µs"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def report_cpu(rows: list[CpuRow]) -> tuple[str, list[list[str]]]:
    body = []
    targets = []
    for row in rows:
        body.append(
            [
                row.case.label,
                row.case.size,
                _us(row.best("json.loads")),
                f"{_us(row.best('check_request'))} ({row.ratio('check_request'):.2f}x)",
                f"{_us(row.best('request hook'))} ({row.ratio('request hook'):.2f}x)",
                f"{_us(row.best('flow hooks'))} ({row.ratio('flow hooks'):.2f}x)",
            ]
        )
        limit = TARGET_CPU if row.case.tools else TARGET_CPU_NO_TOOLS
        targets.append(
            [
                f"(a) {row.case.label}: request hook",
                f"<= {limit}x json.loads",
                f"{row.ratio('request hook'):.2f}x ({_us(row.best('request hook'))})",
                verdict(row.ratio("request hook") <= limit),
            ]
        )
    text = table(
        [
            "body",
            "size",
            "json.loads",
            "check_request",
            "request hook",
            "request + response hooks",
        ],
        body,
    )
    return text, targets


def report_rps(rows: list[RpsRow], concurrency: int) -> tuple[str, list[list[str]]]:
    body = []
    targets = []
    for row in rows:
        body.append(
            [
                row.case.label,
                row.case.size,
                f"{row.best('plain'):.1f}",
                f"{row.best('json.loads only'):.1f}",
                f"{row.best('toolnames'):.1f}",
                f"{row.ratio:.3f}",
                f"{row.cpu_ms('plain'):.2f} / {row.cpu_ms('json.loads only'):.2f} / "
                f"{row.cpu_ms('toolnames'):.2f}",
                f"{row.cpu_ratio:.3f}",
                "; ".join(row.problems) or "none",
            ]
        )
        targets.append(
            [
                f"(b) {row.case.label}",
                f">= {TARGET_RPS} of plain mitmdump",
                f"{row.ratio:.3f} (CPU ratio {row.cpu_ratio:.3f})",
                verdict(row.ratio >= TARGET_RPS and not row.problems),
            ]
        )
    text = table(
        [
            "body",
            "size",
            "plain req/s",
            "json.loads only req/s",
            "toolnames req/s",
            "ratio",
            "mitmdump CPU ms/request (plain / json / toolnames)",
            "CPU ratio",
            "errors",
        ],
        body,
    )
    return text, targets


def report_stream(rows: list[StreamRow], delay_ms: int) -> tuple[str, list[list[str]]]:
    by_name = {r.name: r for r in rows}
    base = by_name["streaming mitmdump"].median_ttfc
    body = [
        [
            r.name,
            _ms(r.median_ttfc),
            _ms(min(r.ttfc)),
            _ms(statistics.median(r.total)),
            f"{r.median_ttfc / base:.3f}",
            f"{(r.median_ttfc - base) * 1e3:+.2f} ms",
            "yes" if r.identical else "NO",
        ]
        for r in rows
    ]
    addon = by_name["mitmdump + toolnames"]
    ratio = addon.median_ttfc / base
    plain_ratio = addon.median_ttfc / by_name["plain mitmdump"].median_ttfc
    targets = [
        [
            "(c) first chunk vs streaming mitmdump",
            f"<= {TARGET_TTFC}",
            f"{ratio:.3f}",
            verdict(ratio <= TARGET_TTFC and all(r.identical for r in rows)),
        ],
        [
            "(c) first chunk vs plain mitmdump",
            f"<= {TARGET_TTFC}",
            f"{plain_ratio:.3f}",
            verdict(plain_ratio <= TARGET_TTFC),
        ],
    ]
    text = table(
        [
            "path",
            "first chunk (median)",
            "first chunk (best)",
            "whole stream (median)",
            "first chunk / streaming mitmdump",
            "difference",
            "bytes identical",
        ],
        body,
    )
    return text, targets


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
    CASE_FILTER[:] = [c.strip() for c in args.cases.split(",") if c.strip()]
    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    binary = args.mitmdump or default_mitmdump()
    started = time.monotonic()

    import mitmproxy.version

    progress(
        f"toolnames bench: Python {sys.version.split()[0]}, mitmproxy "
        f"{mitmproxy.version.VERSION} in process, {binary} for (b)/(c), {os.cpu_count()} CPUs"
        + (", quick" if args.quick else "")
    )
    sections: list[str] = []
    targets: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="toolnames-bench-") as tmp:
        workdir = Path(tmp)
        if "a" in parts:
            progress("(a) CPU per request, in process")
            text, found = report_cpu(bench_cpu(args.quick))
            sections.append(
                "(a) CPU per request: fastest of interleaved repeats, garbage collector on; ratio "
                "to json.loads of the same body.\n    request hook = ToolNames.request through "
                "taddons (the target); request + response hooks = one whole non-streamed flow "
                "(request, responseheaders, response), for reference.\n    Targets: <= "
                f"{TARGET_CPU}x with tools; without tools 'close to nothing', taken as <= "
                f"{TARGET_CPU_NO_TOOLS}x (the body is scanned for tool keys, never parsed).\n\n"
                + text
            )
            targets += found
        if "b" in parts:
            progress(f"(b) requests per second through {binary}")
            rows = bench_rps(binary, workdir, args.quick, args.concurrency)
            text, found = report_rps(rows, args.concurrency)
            sections.append(
                f"(b) Requests per second: {args.concurrency} keep-alive connections, reverse "
                "proxy to the loopback stand-in provider (own process), best of rotating rounds; "
                "ratio = toolnames / plain.\n    json.loads only = mitmdump -s a 3-line script "
                "that parses each request body once: the floor for any addon that reads the tools."
                "\n    mitmdump CPU = its user+system time per request (/proc), the steadier "
                "figure on a busy machine; CPU ratio = plain / toolnames CPU, the req/s ratio "
                "if mitmdump's CPU alone set the pace.\n    With large bodies the stand-in "
                "(which parses and validates every body itself) or the client can set the "
                "pace instead, and the req/s ratio then understates the addon's cost.\n\n" + text
            )
            targets += found
        if "c" in parts:
            progress(f"(c) time to first streamed chunk, stand-in delay {args.delay_ms} ms")
            rows_c, reference = bench_stream(binary, workdir, args.quick, args.delay_ms)
            text, found = report_stream(rows_c, args.delay_ms)
            sections.append(
                f"(c) Time to first streamed chunk: chat completions stream with 10 tools, the "
                f"stand-in waits {args.delay_ms} ms between its events ({reference.count(b'data:')} "
                "events), one keep-alive connection per path, rotating order.\n"
                "    plain mitmdump buffers text/event-stream: its first chunk arrives with the "
                "last.\n    streaming mitmdump = mitmdump -s a 3-line script setting "
                "flow.response.stream = True for SSE: the fair baseline.\n\n" + text
            )
            targets += found
    print()
    for section in sections:
        print(section)
        print()
    print("Targets\n")
    print(table(["target", "goal", "measured", "result"], targets))
    print(
        f"\n{sum(t[3] == 'PASS' for t in targets)}/{len(targets)} targets met in "
        f"{time.monotonic() - started:.0f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
