"""What the addon does to the project's fixtures and sample flows, as one JSON document: the
record, marker, comment and log lines of every flow, the bytes it sent on and answered, and
the file it saved. tests/fixtures/behaviour.json holds this document as the code made it
before the house moves (issue 26); tests/test_behaviour.py runs the addon again and compares.

Regenerate it only when a change of behaviour is intended, and say so in the commit:

    .venv/bin/python -m tests.testkit.behaviour        # writes tests/fixtures/behaviour.json
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import tempfile
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

from mitmproxy import http
from mitmproxy import io
from mitmproxy import websocket
from mitmproxy.test import tflow
from mitmproxy.test import tutils
from wsproto.frame_protocol import Opcode

from harness.inprocess import running
from tests.testkit.disk import RESPONSE_SUFFIXES
from tests.testkit.disk import RESPONSES_DIR
from tests.testkit.disk import SDK_DIR
from tests.testkit.disk import response_api
from tests.testkit.disk import response_body
from tests.testkit.infrastructure import REPO_ROOT
from tests.testkit.streams import sent_on

__all__ = ["GOLDEN", "MODES", "behaviour", "cases", "digest", "run_case", "summary"]

GOLDEN = REPO_ROOT / "tests" / "fixtures" / "behaviour.json"
MODES = ("observe", "fix", "block")
# Fixed clock and ids: the saved file is compared byte for byte.
T0 = 946681200.0
HOSTS = {
    "openai-chat": "api.openai.com",
    "openai-responses": "api.openai.com",
    "anthropic-messages": "api.anthropic.com",
    "anthropic-vertex": "us-east5-aiplatform.googleapis.com",
    "anthropic-batches": "api.anthropic.com",
    "gemini": "generativelanguage.googleapis.com",
    "bedrock-converse": "bedrock-runtime.us-east-1.amazonaws.com",
    "bedrock-invoke": "bedrock-runtime.us-east-1.amazonaws.com",
    "cohere-chat": "api.cohere.com",
    "bedrock-count-tokens": "bedrock-runtime.us-east-1.amazonaws.com",
    "ollama": "localhost",
}
REJECTED = json.dumps(
    {
        "error": {
            "message": "Invalid 'tools[0].function.name': string does not match pattern. "
            "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
            "type": "invalid_request_error",
            "param": "tools[0].function.name",
            "code": "invalid_value",
        }
    }
).encode()
ONCE = re.compile(r"reading bodies with|content view needs mitmproxy 12")
# Names a provider's rule rejects, put in place of the fixtures' own, so that fix mode renames.
RENAMES = {
    b'"get_weather"': b'"weather.get"',
    b'"search_knowledge_base"': b'"kb:search"',
    b'"run_sql"': b'"sql.run"',
}


def _fixed(f: http.HTTPFlow, name: str) -> http.HTTPFlow:
    digest = hashlib.sha256(name.encode()).hexdigest()
    f.id = f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
    f.client_conn.id = f.id[:-1] + "c"
    f.server_conn.id = f.id[:-1] + "s"
    f.timestamp_created = T0
    return f


def _answer(status: int, body: bytes, content_type: str) -> http.Response:
    response = http.Response.make(status, body, {"content-type": content_type})
    response.timestamp_start = response.timestamp_end = T0 + 1
    return response


def _request_flow(name: str, method: str, host: str, path: str, body: bytes, ctype: str):
    req = tutils.treq(
        method=method.encode(), scheme=b"https", host=host, port=443, path=path.encode()
    )
    req.headers["host"] = host
    req.headers["content-type"] = ctype
    req.headers["authorization"] = "Bearer sk-test-not-a-key"
    req.headers["user-agent"] = "OpenAI/Python 1.99.0"
    req.headers["accept-encoding"] = "gzip, deflate"
    req.content = body
    f = _fixed(tflow.tflow(req=req), name)
    f.live = True
    return f


def _answered(hooks, f: http.HTTPFlow, response: http.Response | None) -> None:
    """The answer's hooks as mitmproxy runs them; a stream is fed in 97-byte chunks."""
    if response is None:
        return
    answer = response.content or b""
    f.response = response
    hooks.responseheaders(f)
    if callable(f.response.stream):
        out = b"".join(
            sent_on(f.response.stream, answer[i : i + 97]) for i in range(0, len(answer), 97)
        )
        f.response.content = out + sent_on(f.response.stream, b"")
    hooks.response(f)


def _ws_message(f: http.HTTPFlow, from_client: bool, content: bytes, index: int):
    message = websocket.WebSocketMessage(Opcode.TEXT, from_client, content, T0 + 2 + index)
    f.websocket.messages.append(message)
    return message


# -- the cases ---------------------------------------------------------------------------------


def _sdk_requests() -> Iterator[tuple[str, dict, bytes]]:
    for path in sorted(SDK_DIR.glob("*.json")):
        sdk = json.loads(path.read_text())
        text = sdk["body_text"].encode()
        renamed = text
        for old, new in RENAMES.items():
            renamed = renamed.replace(old, new)
        yield path.stem, sdk, text
        if renamed != text:
            yield path.stem + "+renamed", sdk, renamed


def _responses_of(api: str) -> list[tuple[str, str, bytes]]:
    found = []
    for path in sorted(RESPONSES_DIR.iterdir()):
        if path.suffix in RESPONSE_SUFFIXES and response_api(path.name) == api:
            found.append((path.name, *response_body(path)))
    return found


def cases() -> Iterator[tuple[str, dict, Callable]]:
    """(name, options, run): run(tctx, addons) drives the hooks and returns the flows."""
    for name, sdk, body in _sdk_requests():
        fixture = SDK_DIR / f"{name.split('+')[0]}.json"
        api = response_api(fixture.name)
        host = HOSTS[api]
        path = sdk["path"] + (f"?{sdk['query']}" if sdk["query"] else "")
        answers = [(n, 200, t, b) for n, t, b in _responses_of(api)]
        answers.append(("rejected", 400, "application/json", REJECTED))
        answers.append(("no answer", 0, "", b""))
        for answer_name, status, ctype, answer in answers:
            for mode in MODES:
                case = f"{name} / {answer_name} / {mode}"

                def run(
                    tctx,
                    hooks,
                    case=case,
                    request=(sdk["method"], host, path, body, sdk["content_type"]),
                    status=status,
                    ctype=ctype,
                    answer=answer,
                ):
                    f = _request_flow(case, *request)
                    hooks.request(f)
                    if status:
                        _answered(hooks, f, _answer(status, answer, ctype))
                    return [f]

                yield case, {"toolnames_mode": mode}, run
    for flows_file in sorted((REPO_ROOT / "flows").glob("*.mitm")):
        for mode in MODES:
            for how in ("read back", "afresh", "live"):
                case = f"{flows_file.name} / {how} / {mode}"

                def run(tctx, hooks, flows_file=flows_file, how=how):
                    with open(flows_file, "rb") as fo:
                        read = list(io.FlowReader(fo).stream())
                    for f in read:
                        if how != "read back":
                            f.metadata.clear()
                            f.marked = ""
                            f.comment = ""
                        response = f.response
                        if how == "live":
                            f.live = True
                            f.response = None
                        hooks.request(f)
                        if how == "live":
                            _answered(hooks, f, response)
                        elif f.response is not None:
                            hooks.responseheaders(f)
                            hooks.response(f)
                    return read

                yield case, {"toolnames_mode": mode}, run
    yield from _session_cases()


def _session_cases() -> Iterator[tuple[str, dict, Callable]]:
    realtime = "/v1/realtime?model=gpt-realtime"
    live = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=sk-live-secret"

    def tools_rt(*names):
        tools = [{"type": "function", "name": n, "parameters": {}} for n in names]
        return {
            "type": "session.update",
            "event_id": "evt_1",
            "session": {"type": "realtime", "tools": tools},
        }

    def tools_live(*names):
        return {
            "setup": {
                "model": "models/g",
                "tools": [{"functionDeclarations": [{"name": n} for n in names]}],
            }
        }

    def call_rt(name):
        return {
            "type": "response.function_call_arguments.done",
            "name": name,
            "call_id": "c1",
            "arguments": "{}",
        }

    def call_live(name):
        return {"toolCall": {"functionCalls": [{"name": name, "id": "c1", "args": {}}]}}

    sessions = {
        "realtime": ("api.openai.com", realtime, tools_rt, call_rt),
        "gemini-live": ("generativelanguage.googleapis.com", live, tools_live, call_live),
    }
    for session, (host, path, tools, call) in sessions.items():
        for names, called in (
            (("get_weather",), "get_weather"),
            (("github.create_issue", "ok_tool"), "github_create_issue_"),
            (("x" * 70,), "unknown_tool"),
            (("a.b", "a.b"), "a_b"),
        ):
            for mode in MODES:
                case = f"{session} / {','.join(names)} / {mode}"

                def run(
                    tctx,
                    hooks,
                    case=case,
                    host=host,
                    path=path,
                    tools=tools,
                    call=call,
                    names=names,
                    called=called,
                ):
                    tctx.master.commands.call = lambda *a: injected.append(a)
                    injected = []
                    f = _fixed(tflow.twebsocketflow(), case)
                    f.websocket.messages = []
                    f.request.host = f.request.headers["host"] = host
                    f.request.path = path
                    f.request.headers["sec-websocket-protocol"] = (
                        "realtime, openai-insecure-api-key.sk-secret"
                    )
                    hooks.websocket_start(f)
                    sent = _ws_message(f, True, json.dumps(tools(*names)).encode(), 0)
                    hooks.websocket_message(f)
                    name = called
                    if called.endswith("_") and sent.content != json.dumps(tools(*names)).encode():
                        # the alias fix mode sent out comes back in the call
                        name = (
                            re.search(rb'"(github_create_issue_[0-9a-f]+)"', sent.content)
                            .group(1)
                            .decode()
                        )
                    _ws_message(f, False, json.dumps(call(name)).encode(), 1)
                    hooks.websocket_message(f)
                    hooks.websocket_end(f)
                    # An injected event's id is random: the rest of it is compared.
                    f.metadata["injected"] = [
                        [
                            a[0],
                            a[2],
                            re.sub(
                                rb"event_toolnames_[0-9a-f]+", b"event_toolnames_", a[3]
                            ).decode(),
                        ]
                        for a in injected
                    ]
                    return [f]

                yield case, {"toolnames_mode": mode}, run


# -- what a case did ---------------------------------------------------------------------------


def _digest(data: bytes | None) -> str | None:
    """Short bodies as they are, long ones by length and hash: the file stays small."""
    if data is None or len(data) <= 200:
        return None if data is None else data.decode("latin-1")
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}"


def _message_state(message: http.Message | None) -> dict | None:
    if message is None:
        return None
    raw = message.raw_content
    return {
        "headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in message.headers.fields],
        "raw_content": _digest(raw),
    }


def _flow_state(f: http.HTTPFlow) -> dict:
    state = {
        "request": _message_state(f.request),
        "response": _message_state(f.response),
        "status": f.response.status_code if f.response is not None else None,
        "metadata": json.loads(json.dumps(f.metadata, default=repr)),
        "marked": f.marked,
        "comment": f.comment,
    }
    if f.websocket is not None:
        state["messages"] = [
            [m.from_client, _digest(m.content), m.dropped, m.injected] for m in f.websocket.messages
        ]
    return state


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[list[str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        # Which of toolnames' modules logs a line is its own affair; that the addon's
        # lines come from the "toolnames" logger is not.
        if record.name.startswith("toolnames"):
            self.lines.append([record.name == "toolnames", record.levelname, record.getMessage()])


def run_case(options: dict, run: Callable) -> dict:
    lines = _Lines()
    root = logging.getLogger()
    level = root.level
    root.addHandler(lines)
    root.setLevel(logging.DEBUG)
    try:
        with tempfile.TemporaryDirectory() as folder:
            saved = Path(folder) / "flagged.mitm"
            with running(toolnames_save=str(saved), **options) as (tctx, tn):
                hooks = tctx.master.addons.get("livesessions") or tn
                flows = run(tctx, _Hooks(tn, hooks))
            data = saved.read_bytes() if saved.exists() else b""
    finally:
        root.removeHandler(lines)
        root.setLevel(level)
    return {
        "flows": [_flow_state(f) for f in flows],
        # Said once a process (or once a start-up), whichever case comes first.
        "log": [line for line in lines.lines if not ONCE.search(line[2])],
        "saved_sha256": hashlib.sha256(data).hexdigest(),
        "saved_flows": len(list(io.FlowReader(__import__("io").BytesIO(data)).stream())),
    }


class _Hooks:
    """The HTTP hooks from the HTTP addon, the WebSocket hooks from the sessions' addon."""

    def __init__(self, http_addon, ws_addon) -> None:
        self.request = http_addon.request
        self.responseheaders = http_addon.responseheaders
        self.response = http_addon.response
        self.error = http_addon.error
        self.websocket_start = ws_addon.websocket_start
        self.websocket_message = ws_addon.websocket_message
        self.websocket_end = ws_addon.websocket_end


def behaviour() -> dict[str, dict]:
    """Every case's full outcome, by name."""
    return {name: run_case(options, run) for name, options, run in cases()}


def digest(outcome: dict) -> str:
    return hashlib.sha256(json.dumps(outcome, sort_keys=True).encode()).hexdigest()


def summary(outcome: dict) -> str:
    """A case's outcome in a few words a failing comparison shows: each flow's action and
    finding codes, the number of log lines and of flows saved."""
    shown = []
    for f in outcome["flows"]:
        meta = f["metadata"].get("toolnames") or {}
        codes = ",".join(x["code"] for x in meta.get("findings", []))
        shown.append(f"{meta.get('action')}({codes})")
    return f"{' '.join(shown)}; {len(outcome['log'])} lines; {outcome['saved_flows']} saved"


if __name__ == "__main__":
    import sys

    from mitmproxy import version

    outcomes = behaviour()
    if len(sys.argv) > 1:  # the full outcomes, to diff by hand
        Path(sys.argv[1]).write_text(json.dumps(outcomes, indent=1) + "\n")
    # Each mitmproxy major version's digests (their flow files may differ); one summary.
    major = version.VERSION.split(".")[0]
    document = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {"digests": {}}
    document["digests"][major] = {name: digest(o) for name, o in outcomes.items()}
    document["summaries"] = {name: summary(o) for name, o in outcomes.items()}
    GOLDEN.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(f"wrote mitmproxy {major}'s cases to {GOLDEN.relative_to(REPO_ROOT)}")
