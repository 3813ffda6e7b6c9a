"""toolnames' own tools/list (toolnames_mitm/mcp_lookup.py), through the MCP hooks: a fix-mode
call of an alias that no listing explains waits while the server is asked, through
mitmproxy's client replay (here a stand-in for it that answers as a server would)."""

import json

from mitmproxy import http

from harness.inprocess import running
from tests.mitm.test_mcp import DOTTED
from tests.mitm.test_mcp import PLAIN
from tests.mitm.test_mcp import mcp_flow
from tests.mitm.test_mcp import rpc
from toolnames_core import codes
from toolnames_core.aliases import alias_for
from toolnames_core.rules import RULES

ALIAS = alias_for(DOTTED, RULES["openai"])


class Server:
    """Stands in for mitmproxy's ReplayHandler: the server answers toolnames' tools/list
    through the MCP hooks, as a replayed flow's answer passes them."""

    def __init__(self, mcp, status=200, content_type="application/json"):
        self.mcp, self.status, self.content_type = mcp, status, content_type
        self.asked: list[http.HTTPFlow] = []

    def __call__(self, flow, options):
        server = self

        class Replay:
            transports: dict = {}

            async def replay(self):
                server.asked.append(flow)
                page = json.loads(flow.request.content)
                answer = {
                    "jsonrpc": "2.0",
                    "id": page["id"],
                    "result": {"tools": [{"name": DOTTED}, {"name": PLAIN}]},
                }
                body = json.dumps(answer).encode()
                if server.content_type == "text/event-stream":
                    body = b"event: message\r\ndata: " + body + b"\r\n\r\n"
                flow.response = http.Response.make(
                    server.status, body, {"content-type": server.content_type}
                )
                server.mcp.responseheaders(flow)
                if callable(flow.response.stream):
                    flow.response.stream(flow.response.content)
                    flow.response.stream(b"")
                server.mcp.response(flow)

        return Replay()


async def call_after_a_restart(monkeypatch, **server):
    with running(toolnames_mode="fix") as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        stand_in = Server(mcp, **server)
        monkeypatch.setattr("toolnames_mitm.mcp_lookup.ReplayHandler", stand_in)
        call = mcp_flow(
            rpc("tools/call", 7, name=ALIAS),
            headers={"mcp-name": ALIAS, "mcp-method": "tools/call"},
        )
        waiting = mcp.request(call)
        assert waiting is not None  # the call is held while the server is asked
        await waiting
    return call, stand_in.asked


async def test_a_call_of_an_alias_no_listing_explains_reaches_the_server_under_its_name(
    monkeypatch,
):
    for content_type in ("application/json", "text/event-stream"):
        call, asked = await call_after_a_restart(monkeypatch, content_type=content_type)
        assert json.loads(call.request.content)["params"]["name"] == DOTTED
        assert call.request.headers["mcp-name"] == DOTTED
        (lookup,) = asked
        sent = json.loads(lookup.request.content)
        assert sent["method"] == "tools/list" and sent["id"] == "toolnames-lookup-0"
        headers = lookup.request.headers
        # The call's session and credentials, in memory only; its body's own headers not.
        assert headers["mcp-session-id"] == call.request.headers["mcp-session-id"]
        assert headers["authorization"] == call.request.headers["authorization"]
        assert headers["mcp-method"] == "tools/list" and "mcp-name" not in headers
        assert headers["accept-encoding"] == "identity"
        assert "toolnames" not in lookup.metadata  # toolnames' own flow is not judged


async def test_a_server_that_cannot_tell_leaves_the_call_as_it_came_and_says_why(monkeypatch):
    call, asked = await call_after_a_restart(monkeypatch, status=401)
    assert len(asked) == 1
    assert json.loads(call.request.content)["params"]["name"] == ALIAS
    findings = call.metadata["toolnames"]["findings"]
    unrestored = [f for f in findings if f["code"] == codes.MCP_ALIAS_UNRESTORED]
    assert len(unrestored) == 1 and "HTTP 401" in unrestored[0]["message"]
