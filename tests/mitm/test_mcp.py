"""The MCP hooks (toolnames_mitm/mcp.py) on MCP traffic, through mitmproxy's test helpers:
found by content at any path, marked, logged and saved like LLM traffic, and fixed."""

import json

import pytest
from mitmproxy import http
from mitmproxy import io
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from harness.inprocess import running
from tests.testkit.sigv4 import KEY
from tests.testkit.sigv4 import SECRET
from tests.testkit.sigv4 import Signer
from tests.testkit.sigv4 import core_signed
from toolnames_core import Credentials
from toolnames_core import FlowRecord
from toolnames_core import codes
from toolnames_core import read_signature
from toolnames_core import verifies

DOTTED = "github.create_issue"
PLAIN = "get_weather"
SESSION = "5b1c0d"


def rpc(method: str, id_=1, **params) -> dict:
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params:
        message["params"] = params
    return message


def mcp_flow(message, *, path=b"/any/path", method=b"POST", headers=None, live=True):
    f = tflow.tflow(
        req=tutils.treq(method=method, scheme=b"http", host="127.0.0.1", port=8000, path=path),
        live=live,
    )
    f.request.headers["mcp-session-id"] = SESSION
    f.request.headers["authorization"] = "Bearer secret-token-123"
    for name, value in (headers or {}).items():
        f.request.headers[name] = value
    f.request.content = json.dumps(message).encode() if message is not None else b""
    return f


def answer(f, message, content_type="application/json", status=200):
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    f.response = http.Response.make(status, body, {"content-type": content_type})
    return f


LISTING = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": DOTTED}, {"name": PLAIN}]}}


def run(mcp, f, message=None, content_type="application/json", status=200):
    mcp.request(f)
    if message is not None:
        answer(f, message, content_type, status)
        mcp.responseheaders(f)
        if callable(f.response.stream):
            stream = f.response.stream
            f.response.content = b"".join([*stream(f.response.content), *stream(b"")])
        mcp.response(f)
    return f


def test_observe_marks_logs_and_records_a_bad_listed_name_and_changes_no_byte(caplog):
    with running(toolnames_mode="observe") as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        f = mcp_flow(rpc("tools/list"))
        sent = f.request.raw_content
        run(mcp, f, LISTING)
    assert f.request.raw_content == sent
    assert json.loads(f.response.content) == LISTING
    recorded = FlowRecord.from_metadata(f.metadata["toolnames"])
    assert recorded.api == "mcp" and recorded.rule == "openai"
    assert [x.code for x in recorded.findings] == [codes.MCP_NAME_REJECTED]
    assert f.marked == ":warning:" and DOTTED in f.comment
    assert any("mcp-name-rejected" in r.getMessage() for r in caplog.records)


def test_a_clean_listing_and_a_listed_call_get_no_record():
    with running() as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        clean = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": PLAIN}]}}
        f = run(mcp, mcp_flow(rpc("tools/list")), clean)
        call = run(
            mcp,
            mcp_flow(rpc("tools/call", 2, name=PLAIN)),
            {"jsonrpc": "2.0", "id": 2, "result": {}},
        )
    assert "toolnames" not in f.metadata and "toolnames" not in call.metadata


def test_an_unlisted_call_is_flagged_and_a_delete_forgets_the_session():
    with running() as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        run(mcp, mcp_flow(rpc("tools/list")), LISTING)
        call = run(mcp, mcp_flow(rpc("tools/call", 2, name="delete_repo")))
        assert call.metadata["toolnames"]["findings"][0]["code"] == codes.MCP_CALL_UNLISTED
        run(mcp, mcp_flow(None, method=b"DELETE"))
        again = run(mcp, mcp_flow(rpc("tools/call", 3, name="delete_repo")))
        assert again.metadata["toolnames"]["findings"][0]["severity"] == "info"


def test_a_body_that_is_no_mcp_is_left_alone():
    with running() as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        f = run(mcp, mcp_flow({"jsonrpc": "2.0", "id": 1, "method": "eth_call"}), LISTING)
    assert tn.tracked.get(f) is None and "toolnames" not in f.metadata


@pytest.mark.parametrize("content_type", ["application/json", "text/event-stream"])
def test_fix_lists_an_alias_and_calls_it_back_under_the_servers_name(content_type):
    with running(toolnames_mode="fix") as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        body = json.dumps(LISTING).encode()
        if content_type == "text/event-stream":
            body = b"event: message\r\ndata: " + body + b"\r\n\r\n"
        listed = run(mcp, mcp_flow(rpc("tools/list")), body, content_type)
        text = listed.response.content
        alias = json.loads(text.split(b"data: ")[-1])["result"]["tools"][0]["name"]
        assert alias != DOTTED and text == body.replace(DOTTED.encode(), alias.encode())
        assert listed.marked == ":hammer_and_wrench:"
        call = mcp_flow(
            rpc("tools/call", 2, name=alias),
            headers={"mcp-name": alias, "mcp-method": "tools/call"},
        )
        run(mcp, call, {"jsonrpc": "2.0", "id": 2, "result": {}})
    assert json.loads(call.request.content)["params"]["name"] == DOTTED
    assert call.request.headers["mcp-name"] == DOTTED
    fixes = call.metadata["toolnames"]["fixes"]
    assert [(x["path"], x["from"], x["to"]) for x in fixes] == [
        ("params.name", alias, DOTTED),
        ("Mcp-Name", alias, DOTTED),
    ]


@pytest.mark.parametrize("mode", ["observe", "fix"])
def test_a_gzip_sse_answer_is_read_as_it_streams(mode):
    import gzip

    events = b"event: message\r\ndata: " + json.dumps(LISTING).encode() + b"\r\n\r\n"
    body = gzip.compress(events)
    with running(toolnames_mode=mode) as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        f = mcp_flow(rpc("tools/list"))
        mcp.request(f)
        f.response = http.Response.make(
            200, b"", {"content-type": "text/event-stream", "content-encoding": "gzip"}
        )
        mcp.responseheaders(f)
        sent = b"".join([*f.response.stream(body[:7]), *f.response.stream(body[7:])])
        sent += b"".join(f.response.stream(b""))
        mcp.response(f)
    recorded = f.metadata["toolnames"]
    assert codes.MCP_NAME_REJECTED in [x["code"] for x in recorded["findings"]]
    if mode == "observe":
        assert sent == body and f.response.headers["content-encoding"] == "gzip"
    else:  # decoded for the client, the alias spliced in, Content-Encoding gone
        assert "content-encoding" not in f.response.headers
        assert DOTTED.encode() not in sent and b"github_create_issue_" in sent
        assert recorded["action"] == "fixed"


def test_a_header_that_disagrees_with_the_body_is_an_error():
    with running() as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        f = run(mcp, mcp_flow(rpc("tools/call", 2, name=PLAIN), headers={"mcp-name": "other"}))
    assert codes.MCP_HEADER_MISMATCH in [x["code"] for x in f.metadata["toolnames"]["findings"]]


def test_a_saved_mcp_flow_loses_its_bearer_token_and_reads_back_as_recorded(tmp_path):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path)) as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        run(mcp, mcp_flow(rpc("tools/list")), LISTING)
    with open(path, "rb") as fo:
        (saved,) = list(io.FlowReader(fo).stream())
    assert "secret-token-123" not in saved.request.headers["authorization"]
    assert b"secret-token-123" not in path.read_bytes()
    with running() as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        saved.live = False
        tn.request(saved)
        mcp.request(saved)
        tn.response(saved)
        mcp.response(saved)
    assert saved.marked == ":warning:" and DOTTED in saved.comment


def test_a_recorded_mcp_flow_is_checked_in_observe_mode_even_in_fix_mode():
    with running(toolnames_mode="fix") as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        f = run(mcp, mcp_flow(rpc("tools/list"), live=False), LISTING)
    assert json.loads(f.response.content) == LISTING
    assert f.metadata["toolnames"]["action"] == "observed"


def sse_get(path=b"/sse"):
    f = tflow.tflow(
        req=tutils.treq(method=b"GET", scheme=b"http", host="127.0.0.1", port=8000, path=path),
        live=True,
    )
    f.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    return f


def test_an_http_sse_stream_is_read_for_the_answers_to_its_sessions_posts():
    with running(toolnames_mode="fix") as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        stream_flow = sse_get()
        mcp.request(stream_flow)
        mcp.responseheaders(stream_flow)
        tap = stream_flow.response.stream
        assert callable(tap)  # streamed, never held until it ends
        endpoint = b"event: endpoint\r\ndata: /messages/?session_id=ab12\r\n\r\n"
        assert tap(endpoint) == [endpoint]
        post = mcp_flow(rpc("tools/list", 4), path=b"/messages/?session_id=ab12")
        del post.request.headers["mcp-session-id"]
        run(mcp, post, b"Accepted", "text/plain", status=202)
        listing = dict(LISTING, id=4)
        event = b"event: message\r\ndata: " + json.dumps(listing).encode() + b"\r\n\r\n"
        out = b"".join(tap(event) + tap(b""))
        assert DOTTED.encode() not in out and b"github_create_issue_" in out
        unlisted = mcp_flow(rpc("tools/call", 5, name="delete_repo"), path=post.request.path)
        del unlisted.request.headers["mcp-session-id"]
        run(mcp, unlisted)
        mcp.response(stream_flow)
        # The stream ended, and the session with it: its names are gone.
        after = mcp_flow(rpc("tools/call", 6, name="delete_repo"), path=post.request.path)
        del after.request.headers["mcp-session-id"]
        run(mcp, after)
    assert "toolnames" not in post.metadata  # the 202 holds no listing
    assert stream_flow.metadata["toolnames"]["action"] == "fixed"
    assert unlisted.metadata["toolnames"]["findings"][0]["severity"] == "warning"
    assert after.metadata["toolnames"]["findings"][0]["severity"] == "info"


@pytest.mark.parametrize("mode", ["observe", "fix"])
def test_a_get_streams_listing_is_said_as_it_passes_not_when_the_stream_ends(caplog, mode):
    with running(toolnames_mode=mode) as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        stream_flow = sse_get()
        mcp.request(stream_flow)
        mcp.responseheaders(stream_flow)
        tap = stream_flow.response.stream
        tap(b"event: endpoint\r\ndata: /messages/?session_id=cd34\r\n\r\n")
        post = mcp_flow(rpc("tools/list", 4), path=b"/messages/?session_id=cd34")
        del post.request.headers["mcp-session-id"]
        run(mcp, post, b"Accepted", "text/plain", status=202)
        tap(b"event: message\r\ndata: " + json.dumps(dict(LISTING, id=4)).encode() + b"\r\n\r\n")
        # The stream goes on (a session's stream lasts as long as the session): said now.
        passing = [r.getMessage() for r in caplog.records if "toolnames" in r.getMessage()]
        assert stream_flow.marked and DOTTED in stream_flow.comment
        assert any("event 1: toolnames warning: mcp-name-rejected" in m for m in passing)
        assert (mode == "fix") == any("event 1: toolnames fixed: listed" in m for m in passing)
        tap(b"")
        mcp.response(stream_flow)
        ended = [r.getMessage() for r in caplog.records if "toolnames" in r.getMessage()]
    assert ended == passing  # not said again when it ends
    assert stream_flow.metadata["toolnames"]["findings"][0]["code"] == codes.MCP_NAME_REJECTED


def test_mcp_servers_at_two_paths_of_one_host_have_their_own_listings():
    with running() as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        run(mcp, mcp_flow(rpc("tools/list"), path=b"/github/mcp"), LISTING)
        jira = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "jira_search"}]}}
        run(mcp, mcp_flow(rpc("tools/list"), path=b"/jira/mcp"), jira)
        other = run(mcp, mcp_flow(rpc("tools/call", 2, name=PLAIN), path=b"/jira/mcp"))
        own = run(mcp, mcp_flow(rpc("tools/call", 3, name=PLAIN), path=b"/github/mcp?x=1"))
    assert other.metadata["toolnames"]["findings"][0]["code"] == codes.MCP_CALL_UNLISTED
    assert "toolnames" not in own.metadata


def test_another_event_stream_goes_on_as_it_comes_and_gets_no_record():
    with running() as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        f = sse_get(b"/prices")
        mcp.request(f)
        mcp.responseheaders(f)
        events = b'data: {"price": 3}\n\ndata: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n'
        assert b"".join(f.response.stream(events) + f.response.stream(b"")) == events
        mcp.response(f)
    assert "toolnames" not in f.metadata


# -- an MCP server behind AWS SigV4 (IAM-authenticated gateways) --------------------------------


def signed_mcp(message) -> http.HTTPFlow:
    f = mcp_flow(message)
    del f.request.headers["authorization"]
    pairs = [(k.decode(), v.decode()) for k, v in f.request.headers.fields]
    agentcore = Signer(service="bedrock-agentcore")
    signed = core_signed(f.request.path, pairs, f.request.raw_content, agentcore)
    f.request.headers = http.Headers([(k.encode(), v.encode()) for k, v in signed])
    return f


def still_verifies(f: http.HTTPFlow) -> bool:
    request = f.request
    pairs = [(k.decode(), v.decode()) for k, v in request.headers.fields]
    signed = read_signature([request.headers["authorization"]], "")
    path, _, query = request.path.partition("?")
    credentials = Credentials(KEY, SECRET)
    return verifies(request.method, path, query, pairs, request.raw_content, signed, credentials)


def test_fix_mode_leaves_a_signed_mcp_exchange_as_it_came_and_says_why(monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    with running(toolnames_mode="fix") as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        body = json.dumps(LISTING).encode()
        listed = run(mcp, signed_mcp(rpc("tools/list")), body)
        call = signed_mcp(rpc("tools/call", 2, name=DOTTED))
        sent = call.request.raw_content
        run(mcp, call, {"jsonrpc": "2.0", "id": 2, "result": {}})
    # No alias reaches the client, whose calls could not be sent back changed.
    assert listed.response.content == body
    assert call.request.raw_content == sent and still_verifies(call)
    meta = listed.metadata["toolnames"]
    assert meta["signed"]["declined"] == "toolnames_resign is off"
    assert "not fixed: the request is signed with AWS SigV4 (access key AKIDTESTNOTAKEY" in (
        listed.comment
    )


def test_fix_mode_signs_a_changed_mcp_call_again_with_the_clients_key(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    with running(toolnames_mode="fix", toolnames_resign=True) as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        listed = run(mcp, signed_mcp(rpc("tools/list")), json.dumps(LISTING).encode())
        alias = json.loads(listed.response.content)["result"]["tools"][0]["name"]
        assert alias != DOTTED
        call = signed_mcp(rpc("tools/call", 2, name=alias))
        run(mcp, call, {"jsonrpc": "2.0", "id": 2, "result": {}})
    assert json.loads(call.request.content)["params"]["name"] == DOTTED
    assert still_verifies(call)
    assert call.metadata["toolnames"]["signed"]["resigned"] is True
