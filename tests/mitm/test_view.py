"""The toolnames content view: the pure tables on every format, then the mitmproxy 12 view.

Request bodies are the SDK captures in tests/fixtures/sdk/*.json; response bodies are our own,
in tests/fixtures/responses/ (README.md there). The table tests run on mitmproxy 11 and 12; the
view itself exists on mitmproxy 12 only, and its tests skip on 11.
"""

import logging
from pathlib import Path

import pytest
from mitmproxy import contentviews
from mitmproxy import http
from mitmproxy import version
from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from harness.inprocess import running
from harness.mitmdump import ADDON_SCRIPT
from tests.testkit import REQUEST_FIXTURES
from tests.testkit import RESPONSE_FIXTURES
from tests.testkit import SDK_DIR
from tests.testkit import api_for
from tests.testkit import chat_answer
from tests.testkit import chat_body
from tests.testkit import load_sdk
from tests.testkit import response_api
from tests.testkit import response_body
from tests.testkit import row_of
from toolnames_core import bodies
from toolnames_core import readers
from toolnames_core.formats import FORMATS
from toolnames_mitm import view as mitm_view

SDK = SDK_DIR
MITMPROXY_12 = int(version.VERSION.split(".")[0]) >= 12
needs_mitmproxy12 = pytest.mark.skipif(
    not MITMPROXY_12, reason="the toolnames content view uses mitmproxy 12's content view API"
)


# --- the mitmproxy 12 content view ------------------------------------------------------------


def sdk_flow(path: Path, host: str = "api.example.com") -> http.HTTPFlow:
    sdk = load_sdk(path)
    f = tflow.tflow(
        req=tutils.treq(
            method=b"POST", scheme=b"https", host=host, port=443, path=sdk["path"].encode()
        ),
        resp=True,
    )
    f.request.headers["content-type"] = sdk["content_type"]
    f.request.text = sdk["body_text"]
    return f


def chat_flow(body: bytes, host: str = "api.openai.com", answer: bytes | None = None):
    f = tflow.tflow(
        req=tutils.treq(
            method=b"POST", scheme=b"https", host=host, port=443, path=b"/v1/chat/completions"
        ),
        resp=True,
    )
    f.request.headers["content-type"] = "application/json"
    f.request.content = body
    if answer is not None:
        f.response.headers["content-type"] = "application/json"
        f.response.content = answer
    return f


@pytest.fixture
def view():
    """The addon loaded (which registers the view) and configured, as mitmproxy does at startup."""
    with running() as started:
        yield started


@needs_mitmproxy12
@pytest.mark.parametrize("path", REQUEST_FIXTURES, ids=[p.stem for p in REQUEST_FIXTURES])
def test_the_view_opens_by_itself_on_every_formats_request_with_tools(view, path):
    f = sdk_flow(path)
    shown = contentviews.prettify_message(f.request, f)
    assert shown.view_name == "toolnames"
    api = api_for("POST", f.request.path)
    assert shown.text.startswith(f"toolnames: {FORMATS[api].title} request")


@needs_mitmproxy12
@pytest.mark.parametrize("path", RESPONSE_FIXTURES, ids=[p.name for p in RESPONSE_FIXTURES])
def test_the_view_reads_every_formats_response_when_chosen(view, path):
    api = response_api(path.name)
    request = next(p for p in REQUEST_FIXTURES if p.name.startswith(api))
    f = sdk_flow(request)
    content_type, content = response_body(path)
    f.response.headers["content-type"] = content_type
    f.response.content = content
    shown = contentviews.prettify_message(f.response, f, view_name="toolnames")
    assert shown.view_name == "toolnames"
    assert shown.text.startswith(f"toolnames: {FORMATS[api].title} response")
    found, _ = bodies.read_response_calls(FORMATS[api], content_type, content)
    assert f"Calls in this response: {len(found) or 'none'}\n" in shown.text


@needs_mitmproxy12
@pytest.mark.parametrize(
    "flow, expected",
    [
        pytest.param(lambda: chat_flow(chat_body()), "toolnames", id="request-with-tools"),
        pytest.param(lambda: chat_flow(chat_body(tools=None)), "JSON", id="request-without-tools"),
        pytest.param(lambda: chat_flow(b'{"a": 1}', host="example.com"), "JSON", id="not-llm"),
    ],
)
def test_the_view_is_chosen_only_for_requests_that_name_tools(view, flow, expected):
    f = flow()
    if "example.com" in f.request.host:
        f.request.path = "/api/things"
    assert contentviews.prettify_message(f.request, f).view_name == expected


@needs_mitmproxy12
def test_a_response_opens_in_the_view_only_when_toolnames_flagged_it(view):
    tctx, tn = view
    f = chat_flow(chat_body(), answer=chat_answer("get_time"))
    assert contentviews.prettify_message(f.response, f).view_name == "JSON"
    tn.response(f)
    assert f.metadata["toolnames"]["findings"][0]["code"] == "response-unknown-tool"
    shown = contentviews.prettify_message(f.response, f)
    assert shown.view_name == "toolnames"
    assert "✗ never offered" in row_of(shown.text, "get_time")
    assert "Findings: 1 error (recorded by toolnames for this flow)" in shown.text


@needs_mitmproxy12
def test_the_view_chosen_by_hand_on_other_traffic_says_what_it_reads(view):
    f = tflow.tflow(resp=True)
    shown = contentviews.prettify_message(f.request, f, view_name="toolnames")
    assert shown.view_name == "toolnames"
    assert shown.text == mitm_view.NOT_LLM


@needs_mitmproxy12
def test_the_view_applies_the_rule_the_addon_recorded(view):
    tctx, tn = view
    f = chat_flow(chat_body(tools=("a-b",)))
    tctx.configure(tn, toolnames_rule=["*=portable"])
    tn.request(f)
    tctx.configure(tn, toolnames_rule=[])
    shown = contentviews.prettify_message(f.request, f)
    assert "Name rule: portable" in shown.text
    assert "✗ bad chars '-'" in row_of(shown.text, "a-b")


@needs_mitmproxy12
def test_the_view_names_the_client_that_sent_the_request(view):
    tctx, tn = view
    f = chat_flow(chat_body(tools=("a.b",)))
    f.request.headers["user-agent"] = "OpenAI/Python 3.57.0"
    f.request.headers["x-stainless-runtime"] = "CPython"
    f.request.headers["x-stainless-runtime-version"] = "3.13.0"
    shown = contentviews.prettify_message(f.request, f).text
    assert "Client: openai Python SDK 3.57.0 (CPython 3.13.0)" in shown
    # Recorded live, it is shown as recorded, even once the saved copy lost its headers.
    tn.request(f)
    assert f.metadata["toolnames"]["client"] == "openai Python SDK 3.57.0 (CPython 3.13.0)"
    del f.request.headers["user-agent"]
    shown = contentviews.prettify_message(f.response, f, view_name="toolnames").text
    assert "Client: openai Python SDK 3.57.0 (CPython 3.13.0)" in shown


@needs_mitmproxy12
def test_without_a_record_the_view_applies_the_toolnames_rule_option(view):
    tctx, tn = view
    f = chat_flow(chat_body(tools=("a-b",)), host="openrouter.ai")
    assert "Name rule: openai" in contentviews.prettify_message(f.request, f).text
    tctx.configure(tn, toolnames_rule=["openrouter.ai=gemini"])
    assert "Name rule: gemini" in contentviews.prettify_message(f.request, f).text


@needs_mitmproxy12
def test_render_priority_never_raises(view, monkeypatch):
    f = chat_flow(chat_body())
    metadata = contentviews.Metadata(flow=f, http_message=f.request)

    def broken(*args):
        raise RuntimeError("bug")

    monkeypatch.setattr(mitm_view, "has_tool_keys", broken)
    assert mitm_view.ToolnamesView().render_priority(f.request.content, metadata) == -1


@needs_mitmproxy12
def test_choosing_the_view_for_a_request_never_parses_its_body(view, monkeypatch):
    f = chat_flow(chat_body())
    metadata = contentviews.Metadata(flow=f, http_message=f.request)

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed")

    for reader in readers.READERS:
        monkeypatch.setattr(reader, "body", no_parse)
    assert mitm_view.ToolnamesView().render_priority(f.request.content, metadata) == 2.0


@needs_mitmproxy12
def test_loading_the_addon_again_keeps_the_one_view(view, caplog):
    tctx, tn = view
    caplog.set_level(logging.INFO)
    tctx.script(str(ADDON_SCRIPT))
    assert "Replacing existing toolnames contentview" not in caplog.text
    assert isinstance(contentviews.registry["toolnames"], mitm_view.ToolnamesView)


def test_without_the_new_api_the_addon_works_and_says_so_once(monkeypatch, caplog):
    # What mitmproxy 11 does; on 11 this is the real code path, on 12 it is simulated.
    monkeypatch.setattr(mitm_view, "_Base", object)
    monkeypatch.setattr(mitm_view, "_said_unavailable", False)
    caplog.set_level(logging.INFO)
    with taddons.context() as tctx:
        tn = tctx.script(str(ADDON_SCRIPT)).addons[0]
        tctx.script(str(ADDON_SCRIPT))
        f = chat_flow(chat_body(tools=("a.b",)))
        tn.request(f)
    assert f.marked == ":warning:"
    notes = [r for r in caplog.records if "needs mitmproxy 12" in r.getMessage()]
    assert len(notes) == 1
    assert notes[0].levelno == logging.INFO
    assert f"this is mitmproxy {version.VERSION}" in notes[0].getMessage()


@pytest.mark.skipif(MITMPROXY_12, reason="checks mitmproxy 11's real content view API")
def test_on_mitmproxy_11_no_view_is_registered():
    assert not mitm_view.available()
    with taddons.context() as tctx:
        tctx.script(str(ADDON_SCRIPT))
    assert contentviews.get("toolnames") is None


# --- WebSocket sessions ------------------------------------------------------------------------


def realtime_flow(*events: tuple[bool, dict]) -> http.HTTPFlow:
    import json

    from mitmproxy import websocket
    from wsproto.frame_protocol import Opcode

    f = tflow.twebsocketflow()
    f.request.host = "api.openai.com"
    f.request.path = "/v1/realtime?model=gpt-realtime"
    f.websocket.messages = [
        websocket.WebSocketMessage(Opcode.TEXT, from_client, json.dumps(e).encode())
        for from_client, e in events
    ]
    return f


DECLARE = (
    True,
    {"type": "session.update", "session": {"tools": [{"type": "function", "name": "a.b"}]}},
)
CALL = (
    False,
    {
        "type": "response.output_item.added",
        "item": {"type": "function_call", "name": "zz", "call_id": "c"},
    },
)


def test_a_websocket_message_is_shown_against_the_session_before_it():
    f = realtime_flow(DECLARE, (True, {"type": "input_audio_buffer.append", "audio": "AA"}), CALL)
    text = mitm_view.session_view(f, f.websocket.messages[2], f.websocket.messages[2].content)
    assert "OpenAI Realtime message 2 (provider → client)" in text
    assert "✗ never declared" in text and "Tools in force: 1: a.b" in text
    assert "response-unknown-tool at item.name" in text
    other = tflow.twebsocketflow()
    assert mitm_view.session_view(other, other.websocket.messages[0], b"hi") is None


def test_a_renamed_session_message_shows_what_fix_mode_did_to_it():
    from toolnames_core import FlowRecord
    from toolnames_core.model import Finding
    from toolnames_core.record import RecordedFix

    f = realtime_flow(DECLARE, CALL)
    path = "session.tools[0].name"
    f.metadata["toolnames"] = FlowRecord(
        "openai-realtime",
        "openai",
        "fix",
        "fixed",
        [Finding("name-invalid-chars", "error", path, "'a.b' has a dot", message_index=0)],
        [RecordedFix(path, "a.b", "a_b_12345678", "alias", 0)],
    ).to_metadata()
    shown = mitm_view.session_view(f, f.websocket.messages[0], f.websocket.messages[0].content)
    assert "Outcome: fixed in fix mode: renamed 'a.b' → 'a_b_12345678'\n" in shown
    other = mitm_view.session_view(f, f.websocket.messages[1], f.websocket.messages[1].content)
    assert "Outcome:" not in other  # the answer was not rewritten


@needs_mitmproxy12
def test_the_view_opens_by_itself_on_a_session_message_that_names_tools(view):
    f = realtime_flow(DECLARE, (True, {"type": "input_audio_buffer.append", "audio": "AA"}))
    declared = contentviews.prettify_message(f.websocket.messages[0], f)
    assert declared.view_name == "toolnames"
    assert "Tools declared (session): 1" in declared.text and "bad chars '.'" in declared.text
    assert contentviews.prettify_message(f.websocket.messages[1], f).view_name != "toolnames"


# --- MCP ----------------------------------------------------------------------------------------


def mcp_flow(message: dict, answer: bytes, content_type: str = "application/json"):
    import json

    f = tflow.tflow(
        req=tutils.treq(method=b"POST", scheme=b"http", host="127.0.0.1", port=8931, path=b"/x"),
        resp=True,
    )
    f.request.content = json.dumps(message).encode()
    f.response.headers["content-type"] = content_type
    f.response.content = answer
    return f


MCP_LISTING = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"github.create_issue"},{"name":"get_weather"}]}}'


@needs_mitmproxy12
@pytest.mark.parametrize("sse", [False, True])
def test_an_mcp_listing_opens_in_the_view_with_each_names_verdict(view, sse):
    tctx, tn = view
    answer = b"event: message\ndata: " + MCP_LISTING + b"\n\n" if sse else MCP_LISTING
    kind = "text/event-stream" if sse else "application/json"
    f = mcp_flow({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, answer, kind)
    shown = contentviews.prettify_message(f.response, f)
    assert shown.view_name == "toolnames"
    assert "toolnames: MCP answer" in shown.text
    row = row_of(shown.text, "github.create_issue")
    assert "openai" in row and "github_create_issue_" in row
    assert "as it is" in row_of(shown.text, "get_weather")
    assert "mcp-name-rejected" in shown.text
    request = contentviews.prettify_message(f.request, f)
    assert request.view_name == "toolnames" and "tools/list (id 1)" in request.text


@needs_mitmproxy12
def test_an_mcp_flow_shows_what_the_addon_recorded(view):
    tctx, tn = view
    f = mcp_flow({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, MCP_LISTING)
    mcp = tctx.master.addons.get("mcptraffic")
    mcp.request(f)
    mcp.response(f)
    shown = contentviews.prettify_message(f.response, f)
    assert "recorded by toolnames for this flow" in shown.text
    assert "Outcome: flagged in observe mode" in shown.text
