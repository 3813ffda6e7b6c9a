"""Helpers several test files share: the fixtures on disk, the addon in a test master, SDK
clients answered by a mock transport, hypothesis strategies for whatever JSON, and readers of
mitmdump's log and saved flows for the end-to-end tests.

Also builds raw streamed bodies (SSE and AWS event streams), independently of the code that
reads them.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import strategies as st
from mitmproxy import io as mitmproxy_io
from mitmproxy.exceptions import FlowReadException

from scanner import cli
from scanner import samples
from tests.conftest import REPO_ROOT
from toolnames_core import Exchange
from toolnames_core import FlowRecord
from toolnames_core import detect_api
from toolnames_core import render_request
from toolnames_core import render_response
from toolnames_core.formats import FORMATS
from toolnames_core.formats import BlockResponse
from toolnames_core.model import NameRef
from toolnames_core.record import RecordedFix

SDK_DIR = Path(__file__).parent / "fixtures" / "sdk"
RESPONSES_DIR = Path(__file__).parent / "fixtures" / "responses"


# -- fixtures on disk -------------------------------------------------------------------------


def sdk_fixture(name: str) -> dict:
    """tests/fixtures/sdk/<name>.json: {"sdk", "path", "body", "body_text"}."""
    path = SDK_DIR / f"{name}.json"
    assert path.exists(), (
        f"missing SDK fixture {path} (tests/fixtures/capture_sdk_bodies.py writes it)"
    )
    return json.loads(path.read_text(encoding="utf-8"))


def response_api(name: str) -> str:
    # Response fixtures are named after their format: gemini-vertex-... is gemini.
    return next(api for api in sorted(FORMATS, key=len, reverse=True) if name.startswith(api))


def response_body(path: Path) -> tuple[str, bytes]:
    """(content type, wire bytes) of a response fixture; jsonl files are framed as on the wire."""
    raw = path.read_bytes()
    if path.suffix == ".json":
        return "application/json", raw
    if path.suffix == ".sse" or raw.startswith((b"data:", b"event:")):
        return "text/event-stream", raw
    events = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    if response_api(path.name) == "bedrock-converse":
        frames = b"".join(aws_event(*next(iter(e.items()))) for e in events)
        return "application/vnd.amazon.eventstream", frames
    return "text/event-stream", sse(events, done=False)


def response_fixture(name: str):
    """A body (.json), or the data payloads of a raw SSE stream (.sse), in order."""
    text = (RESPONSES_DIR / name).read_text(encoding="utf-8")
    if name.endswith(".json"):
        return json.loads(text)
    return [
        json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")
    ]


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


# -- what an adapter read ---------------------------------------------------------------------


def found(result: Exchange) -> list[tuple[str, str, str]]:
    return sorted((f.code, f.severity, f.path) for f in result.findings)


def refs(calls: Iterable[NameRef]) -> list[tuple[str, str, str]]:
    return [(c.name, c.kind, c.path) for c in calls]


def stream_calls(api: str, events: Iterable[object]) -> list[NameRef]:
    """The calls a fresh stream collector of ``api`` finds in ``events``, given in order."""
    collector = FORMATS[api].stream_collector()
    for event in events:
        collector.event(event)
    return collector.calls()


# -- the addon in mitmproxy's test master -----------------------------------------------------


# -- SDKs answered by a mock transport --------------------------------------------------------


def sdk_http_module():
    # openai 3.x and anthropic 2.x are built on httpx2 (the same API as httpx); older releases
    # on httpx.
    for name in ("httpx2", "httpx"):
        try:
            return importlib.import_module(name)
        except ImportError:
            pass
    pytest.skip("neither httpx2 nor httpx is installed")


def answering_http_client(answer: BlockResponse):
    """An http client for an SDK that answers every request with (status, headers, body)."""
    httpx = sdk_http_module()
    status, headers, content = answer
    transport = httpx.MockTransport(
        lambda request: httpx.Response(status, headers=headers, content=content)
    )
    return httpx.Client(transport=transport)


# -- hypothesis: whatever JSON ----------------------------------------------------------------
# Two families, each drawn exactly as the tests that use it always drew it.

_json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=25,
)


def vocabulary_bodies(words: list[str], types: list[str]) -> st.SearchStrategy[dict]:
    """Objects keyed by a format's ``words`` with its ``types`` among the values, so that its
    shapes get read deeply, or else arbitrary JSON objects (the Anthropic and Responses tests)."""
    shaped_values = st.recursive(
        _json_scalars | st.sampled_from(types),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.sampled_from(words) | st.text(max_size=3), inner, max_size=5)
        ),
        max_leaves=30,
    )
    return st.dictionaries(st.sampled_from(words), shaped_values, max_size=6) | st.dictionaries(
        st.text(max_size=6), _json_values, max_size=4
    )


_any_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def keyed_bodies(keys: list[str], strings: list[str]) -> st.SearchStrategy[dict]:
    """Bodies shaped like requests and responses (only ``keys`` as keys, ``strings`` among the
    values), or objects with arbitrary JSON wherever a value goes (the Gemini and Bedrock tests)."""
    key = st.sampled_from(keys)
    shaped = st.recursive(
        st.none() | st.integers() | st.sampled_from(strings),
        lambda children: (
            st.lists(children, max_size=3) | st.dictionaries(key, children, max_size=4)
        ),
        max_leaves=30,
    )
    return st.dictionaries(key, shaped, max_size=4) | st.dictionaries(
        st.text(max_size=8), _any_json, max_size=4
    )


# -- end to end: mitmdump's log, plain HTTP, saved flows --------------------------------------

# Straight to loopback, whatever http_proxy says.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def toolnames_lines(log: str) -> list[str]:
    """The addon's log lines without mitmdump's timestamp: 'POST host/path: toolnames …'."""
    return [m[1] for m in re.finditer(r"(?m)^\[[\d:.]+\] (\w+ \S+: toolnames .*)$", log)]


def annotations(log: str) -> list[str]:
    """The addon's log lines from 'toolnames' on (the URL before it differs once redacted)."""
    return ["toolnames " + line.split(": toolnames ", 1)[1] for line in toolnames_lines(log)]


def post(url: str, body: dict, headers: dict | None = None) -> tuple[int, dict, bytes]:
    """(status, headers with lowercase names, body) of a plain HTTP POST."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with DIRECT.open(request, timeout=10) as response:
            return (
                response.status,
                {k.lower(): v for k, v in response.headers.items()},
                response.read(),
            )
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


def recording_client(sdk):
    """An httpx client for `sdk` (anthropic or openai) and the list of request bodies it sends."""
    sent: list[bytes] = []

    def record(request) -> None:
        sent.append(request.read())

    return sdk.DefaultHttpxClient(event_hooks={"request": [record]}, trust_env=False), sent


def read_flows(path: Path) -> list:
    with open(path, "rb") as f:
        return list(mitmproxy_io.FlowReader(f).stream())


def wait_for_flows(path: Path, count: int, timeout: float = 10.0) -> list:
    """The flows saved so far, once there are `count` (a flow is saved when it completes)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            flows = read_flows(path) if path.exists() else []
        except FlowReadException:
            # Read while mitmdump was writing a flow: its record is not whole yet.
            if time.monotonic() > deadline:
                raise
            flows = []
        if len(flows) >= count or time.monotonic() > deadline:
            return flows
        time.sleep(0.05)


def mitmdump_read(binary: Path, confdir: Path, path: Path, *args: str) -> str:
    """What `mitmdump -nr path` prints; fails the test if it cannot read the file."""
    result = subprocess.run(
        [str(binary), "-nr", str(path), "--set", f"confdir={confdir}", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


# -- raw streamed bodies ----------------------------------------------------------------------


def sse(events: list, newline: bytes = b"\n", done: bool = True) -> bytes:
    out = b""
    for event in events:
        data = event if isinstance(event, bytes) else json.dumps(event).encode()
        out += b"data: " + data + newline + newline
    if done:
        out += b"data: [DONE]" + newline + newline
    return out


def _header(name: str, value: str) -> bytes:
    # surrogatepass: property tests draw event types that hold lone surrogates.
    raw_name, raw_value = name.encode(), value.encode("utf-8", "surrogatepass")
    return (
        bytes([len(raw_name)]) + raw_name + b"\x07" + struct.pack(">H", len(raw_value)) + raw_value
    )


def aws_event(event_type: str, payload: dict, message_type: str = "event") -> bytes:
    headers = (
        _header(":event-type", event_type)
        + _header(":content-type", "application/json")
        + _header(":message-type", message_type)
    )
    body = json.dumps(payload).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def aws_stream(events: list[tuple[str, dict]]) -> bytes:
    return b"".join(aws_event(kind, payload) for kind, payload in events)


def every_split(raw: bytes):
    """Two-chunk splits at every byte offset, then the whole body byte by byte."""
    for k in range(len(raw) + 1):
        yield [raw[:k], raw[k:]]
    yield [raw[i : i + 1] for i in range(len(raw))]


# -- the core, as the tests drive it -----------------------------------------------------------


def exchange_for(content: bytes, api: str, rule: str, fix: bool = False) -> Exchange:
    """An exchange whose request ``content`` has been checked."""
    exchange = Exchange(api, rule)
    exchange.check_request(content, fix=fix)
    return exchange


def judge(
    request: bytes | None, api: str, calls: list, complete: bool = True, rule: str = "openai"
) -> list:
    """The findings about ``calls`` in an answer to ``request`` (None: a request not read)."""
    exchange = Exchange(api, rule)
    if request is None:
        exchange.request_unreadable("the body was not read")
    else:
        exchange.check_request(request)
    return exchange.check_calls(calls, complete)


def render_request_text(content: bytes, api: str, rule: str, meta: object = None) -> str:
    exchange = exchange_for(content, api, rule)
    return render_request(exchange, FlowRecord.from_metadata(meta))


def render_response_text(
    content: bytes,
    content_type: str,
    api: str,
    rule: str,
    request_content: bytes | None = None,
    meta: object = None,
    status: int | None = 200,
) -> str:
    exchange = Exchange(api, rule)
    if request_content is None:
        exchange.request_unreadable("the body was not read")
    else:
        exchange.check_request(request_content)
    exchange.check_response(status, content_type, content)
    return render_response(exchange, status, FlowRecord.from_metadata(meta))


def record_metadata(
    api: str, rule: str, mode: str, action: str, findings: list, fixes: list | None = None
) -> dict:
    """A flow's toolnames metadata as the addon writes it; ``fixes`` are ``Fix`` records."""
    recorded = [RecordedFix(f.path, f.old, f.new, f.rewrite) for f in fixes or []]
    return FlowRecord(api, rule, mode, action, list(findings), recorded).to_metadata()


# -- request and answer bodies the view tests render ---------------------------------------------


def load_sdk(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


REQUEST_FIXTURES = sorted(SDK_DIR.glob("*.json"))


def fixtures_of(api: str) -> list[Path]:
    return [p for p in REQUEST_FIXTURES if detect_api("POST", load_sdk(p)["path"]) == api]


# tests/fixtures/responses/ (README.md there); older trees kept them in sdk/responses/.
RESPONSES = next(
    d
    for d in (SDK_DIR.parent / "responses", SDK_DIR / "responses")
    if d.is_dir() and any(d.iterdir())
)
RESPONSE_FIXTURES = sorted(
    p for p in RESPONSES.iterdir() if p.suffix in (".json", ".sse", ".jsonl", ".txt")
)


def chat_body(tools=("get_weather",), tool_choice=None, history=()) -> bytes:
    messages: list[dict] = [{"role": "user", "content": "hi"}]
    for name in history:
        call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
        messages.append({"role": "assistant", "tool_calls": [call]})
    body: dict = {"model": "gpt-4.1", "messages": messages}
    if tools is not None:
        body["tools"] = [{"type": "function", "function": {"name": n}} for n in tools]
    if tool_choice is not None:
        body["tool_choice"] = {"type": "function", "function": {"name": tool_choice}}
    return json.dumps(body).encode()


def chat_answer(*names: str) -> bytes:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
        for i, n in enumerate(names)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return json.dumps({"choices": [{"index": 0, "message": message}]}).encode()


def row_of(text: str, name: str) -> str:
    """The table row that starts with ``name`` (rows are indented by two spaces)."""
    return next(line for line in text.splitlines() if line.startswith(f"  {name} "))


def cells(row: str) -> list[str]:
    """A row's cells: columns are at least two spaces apart."""
    return re.split(r" {2,}", row.strip())


# -- scripts/scan -------------------------------------------------------------------------


SCAN_SCRIPT = REPO_ROOT / "scripts" / "scan"


ANSI = "\x1b["


def scan_env() -> dict[str, str]:
    return {**os.environ, "TOOLNAMES_SCAN_PYTHON": sys.executable}


def big_flagged_flow():
    """A flow whose 110 KB request (a long conversation) offers a bad name and whose answer
    calls a tool never offered: two errors, for the scanner's memory tests."""
    body = samples.weather_request_body()
    body["messages"] = [
        {"role": "user" if i % 2 else "assistant", "content": "lorem ipsum dolor " * 300}
        for i in range(20)
    ]
    body["tools"].append(samples.function_tool("bad.name"))
    return samples.chat_flow("big", body, samples.hallucinated_call_response())


class MeasuredScan(NamedTuple):
    code: int
    peak_mb: float  # the scan's peak RSS
    stderr: str


# Run by a small Python between pytest and the scan: measured from pytest directly, the scan's
# figure would include pytest's own pages (Linux counts what a process held before exec in its
# maxrss).
_MEASURE = (
    "import resource, subprocess, sys\n"
    "with open(sys.argv[1], 'wb') as err:\n"
    "    code = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err,"
    " stdin=subprocess.DEVNULL)\n"
    "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def measured_scan(path: Path, workdir: Path) -> MeasuredScan:
    """``scripts/scan --json path``: its exit code, peak RSS and what it wrote to stderr."""
    err = workdir / "scan-stderr.txt"
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, err, SCAN_SCRIPT, "--json", path],
        capture_output=True,
        text=True,
        env=scan_env(),
        timeout=600,
        check=True,
    )
    code, peak_kib = map(int, result.stdout.split())
    return MeasuredScan(code, peak_kib / 1024, err.read_text())  # ru_maxrss is in KiB


def run_scan(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCAN_SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        env=scan_env(),
        cwd=cwd,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def scan_json(capsys, *args: str | Path) -> tuple[int, list[dict], str]:
    code = cli.main(["--json", *map(str, args)])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def scan_found(rows: list[dict]) -> list[tuple[int, str, str]]:
    return sorted((r["flow"], r["code"], r["path"]) for r in rows)


# The bad cases of issues 2 and 3, one exchange each, and what the scan reports for each.
def bad_flows() -> list:
    return [
        samples.chat_flow(
            "mastra", samples.mastra_choice_mismatch_body(), samples.rejected("x", None), status=400
        ),
        samples.chat_flow(
            "names", samples.bad_names_body(), samples.rejected("x", None), status=400
        ),
        samples.chat_flow(
            "hallucinated",
            samples.weather_request_body(),
            samples.hallucinated_call_response(),
            response_encoding="gzip",
        ),
        samples.chat_flow(
            "parallel", samples.weather_request_body(), samples.parallel_wrapper_response()
        ),
        samples.chat_flow(
            "streamed",
            samples.weather_request_body(stream=True),
            samples.streamed_call_response(),
            content_type="text/event-stream",
        ),
        samples.chat_flow(
            "clean", samples.weather_request_body(), samples.clean_flows()[0].response.text
        ),
        samples.chat_flow("not-llm", b"hello", method="GET", path="/index.html"),
    ]


BAD_CASE_FINDINGS = [
    (0, "choice-not-in-tools", "tool_choice.function.name"),
    (1, "name-invalid-chars", "tools[0].function.name"),  # github.create_issue
    (1, "name-invalid-chars", "tools[2].function.name"),  # filesystem:read_file
    (1, "name-too-long", "tools[1].function.name"),  # 70 characters
    (2, "response-unknown-tool", "choices[0].message.tool_calls[0].function.name"),
    (3, "response-unknown-tool", "choices[0].message.tool_calls[0].function.name"),
    (4, "response-unknown-tool", "events[1].choices[0].delta.tool_calls[0].function.name"),
]


WRITERS = {
    "flows.mitm": samples.write_flows,
    "traffic.har": samples.write_har,
    "cassette.yaml": samples.write_cassette,
}


FORMAT_OF = {"flows.mitm": "mitmproxy", "traffic.har": "har", "cassette.yaml": "cassette"}


UNIT_OF = {"flows.mitm": "flow", "traffic.har": "entries", "cassette.yaml": "interactions"}


def strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)


def cut_file(path: Path, fraction: float = 0.5) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path
