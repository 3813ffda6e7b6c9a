"""Voice and live agents end to end: the real openai realtime client and google-genai live
client, through a real mitmdump (mitmproxy 12 and 11) with toolnames, against the stand-in
live providers on loopback, in observe, block and fix mode; saved sessions hold no key."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.testkit import read_flows

pytestmark = [pytest.mark.e2e, pytest.mark.needs_sdk]

MCP_NAME = "github.create_issue"  # OpenAI's rule rejects the dot
LIVE_NAME = "1password.lookup"  # Gemini's rule rejects the leading digit
SECRET = "sk-toolnames-e2e-secret"


@pytest.fixture
def live_standin() -> Iterator:
    from standin.live import LiveStandin

    standin = LiveStandin()
    standin.start()
    try:
        yield standin
    finally:
        standin.stop()


def start(mitmdump, binary, standin, *args: str):
    return mitmdump(*args, mode=f"reverse:{standin.url}", binary=binary)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


# -- the real clients ----------------------------------------------------------------------


def tool(name: str) -> dict:
    return {"type": "function", "name": name, "parameters": {"type": "object", "properties": {}}}


async def realtime_session(port: int, *names: str) -> list:
    """Declare ``names``, ask for a response; every event the SDK gives, as parsed."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key=SECRET, base_url=f"http://127.0.0.1:{port}/v1")
    events = []
    async with client.realtime.connect(model="gpt-realtime") as connection:
        # The server speaks first (session.created, as OpenAI's does). Waiting for it keeps the
        # session's messages in one order through the proxy, so each message's index in the
        # log is the same from run to run: sent at once, the client's session.update reached
        # mitmdump first now and then, and became message 0 instead of 1.
        events.append(await connection.recv())
        await connection.session.update(
            session={"type": "realtime", "tools": [tool(n) for n in names]}
        )
        await connection.response.create()
        async for event in connection:
            events.append(event)
            if event.type == "response.done":
                break
    return events


async def live_session(port: int, name: str, confdir: Path) -> list:
    """Declare ``name``, say hello, answer every call under the name it was called by."""
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key=SECRET,
        http_options=types.HttpOptions(
            base_url=f"https://127.0.0.1:{port}",
            # genai's live client speaks wss only: it trusts the mitmdump's CA.
            async_client_args={"ssl": _trusting(confdir)},
        ),
    )
    config = types.LiveConnectConfig(
        response_modalities=["TEXT"],
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name=name)])],
    )
    seen: list = []
    async with client.aio.live.connect(model="gemini-live-2.5-flash", config=config) as session:
        await session.send_client_content(
            turns=types.Content(role="user", parts=[types.Part(text="hi")]), turn_complete=True
        )
        async for message in session.receive():
            if message.tool_call:
                calls = message.tool_call.function_calls
                seen.append(("call", [c.name for c in calls]))
                await session.send_tool_response(
                    function_responses=[
                        types.FunctionResponse(id=c.id, name=c.name, response={"ok": True})
                        for c in calls
                    ]
                )
            if message.server_content and message.server_content.turn_complete:
                seen.append(("done",))
                break
    return seen


def _trusting(confdir: Path):
    import ssl

    return ssl.create_default_context(cafile=str(confdir / "mitmproxy-ca-cert.pem"))


# -- observe ----------------------------------------------------------------------------------


def test_observe_flags_a_bad_declaration_and_an_undeclared_call(
    mitmdump, mitmdump_binary, live_standin
):
    live_standin.call = "ghost_tool"
    proxy = start(mitmdump, mitmdump_binary, live_standin)
    events = run(realtime_session(proxy.port, "search", MCP_NAME))
    # The stand-in rejected the declaration, as OpenAI does; toolnames changed nothing.
    errors = [e for e in events if e.type == "error"]
    assert errors and errors[0].error.param == "session.tools[1].name"
    assert not errors[0].error.message.startswith("toolnames")
    updates = [m for m in live_standin.messages("openai-realtime") if m["type"] == "session.update"]
    assert [t["name"] for t in updates[0]["session"]["tools"]] == ["search", MCP_NAME]
    log = proxy.wait_for_log("response-unknown-tool")
    assert (
        "message 1 (client): toolnames error: name-invalid-chars: session.tools[1].name 'github.create_issue'"
        in log
    )
    assert "(server): toolnames error: response-unknown-tool: the model called 'ghost_tool'" in log


# -- block ------------------------------------------------------------------------------------


def test_block_answers_realtime_with_its_error_event(mitmdump, mitmdump_binary, live_standin):
    proxy = start(mitmdump, mitmdump_binary, live_standin, "--set", "toolnames_mode=block")
    events = run(realtime_session(proxy.port, MCP_NAME))
    (error,) = [e for e in events if e.type == "error"]
    assert error.error.message.startswith("toolnames: session.tools[0].name 'github.create_issue'")
    assert error.error.code == "name-invalid-chars" and error.error.param == "session.tools[0].name"
    # The stand-in never saw the update; the session went on (the response came, with no call).
    assert all(m["type"] != "session.update" for m in live_standin.messages("openai-realtime"))
    assert events[-1].type == "response.done"
    proxy.wait_for_log("toolnames error: name-invalid-chars")


def test_block_closes_gemini_live_with_a_toolnames_reason(
    mitmdump, mitmdump_binary, live_standin, mitmproxy_confdir
):
    from google.genai import errors

    proxy = start(mitmdump, mitmdump_binary, live_standin, "--set", "toolnames_mode=block")
    with pytest.raises(errors.APIError) as raised:
        run(live_session(proxy.port, LIVE_NAME, mitmproxy_confdir))
    assert raised.value.code == 1007
    assert "toolnames: setup.tools[0].functionDeclarations[0].name '1password.lookup'" in str(
        raised.value
    )
    assert live_standin.messages("gemini-live") == []  # the setup never reached it


def test_a_message_split_across_frames_is_read_whole(mitmdump, mitmdump_binary, live_standin):
    from websockets.asyncio.client import connect

    proxy = start(mitmdump, mitmdump_binary, live_standin, "--set", "toolnames_mode=block")
    update = json.dumps({"type": "session.update", "session": {"tools": [tool(MCP_NAME)]}})

    async def session() -> dict:
        async with connect(f"ws://127.0.0.1:{proxy.port}/v1/realtime?model=m") as ws:
            await ws.recv()  # session.created
            # Three frames, the name cut in two.
            cut = update.index("create_issue")
            await ws.send([update[:20], update[20:cut], update[cut:]])
            return json.loads(await ws.recv())

    answer = run(session())
    assert answer["type"] == "error" and answer["error"]["code"] == "name-invalid-chars"


# -- fix --------------------------------------------------------------------------------------


def test_fix_runs_realtime_tools_with_mcp_names_under_their_own_names(
    mitmdump, mitmdump_binary, live_standin
):
    proxy = start(mitmdump, mitmdump_binary, live_standin, "--set", "toolnames_mode=fix")
    events = run(realtime_session(proxy.port, MCP_NAME))
    assert not [e for e in events if e.type == "error"]
    called = [e.name for e in events if e.type == "response.function_call_arguments.done"]
    assert called == [MCP_NAME]
    assert [e.item.name for e in events if e.type == "response.output_item.done"] == [MCP_NAME]
    (update,) = [
        m for m in live_standin.messages("openai-realtime") if m["type"] == "session.update"
    ]
    alias = update["session"]["tools"][0]["name"]
    assert alias.startswith("github_create_issue_")
    proxy.wait_for_log("toolnames fixed renamed 'github.create_issue'")
    proxy.stop()
    # One outcome, said once: the renamed declaration is fixed, not an error and a fix.
    lines = [line for line in proxy.log_text().splitlines() if ": toolnames " in line]
    assert len(lines) == 1, lines
    assert re.search(
        r"/v1/realtime\?model=gpt-realtime: message \d+ \(client\): toolnames fixed renamed "
        + re.escape(f"'{MCP_NAME}' → '{alias}'")
        + "$",
        lines[0],
    )


def test_fix_runs_a_gemini_live_session_and_its_tool_response(
    mitmdump, mitmdump_binary, live_standin, mitmproxy_confdir
):
    proxy = start(mitmdump, mitmdump_binary, live_standin, "--set", "toolnames_mode=fix")
    seen = run(live_session(proxy.port, LIVE_NAME, mitmproxy_confdir))
    assert seen == [("call", [LIVE_NAME]), ("done",)]
    sent = live_standin.messages("gemini-live")
    alias = sent[0]["setup"]["tools"][0]["functionDeclarations"][0]["name"]
    assert alias.startswith("_1password.lookup_")
    assert sent[-1]["tool_response"]["functionResponses"][0]["name"] == alias


# -- save -------------------------------------------------------------------------------------


def test_a_saved_session_holds_no_credential(mitmdump, mitmdump_binary, live_standin, tmp_path):
    from websockets.asyncio.client import connect

    saved = tmp_path / "flagged.mitm"
    proxy = start(mitmdump, mitmdump_binary, live_standin, "--set", f"toolnames_save={saved}")
    run(realtime_session(proxy.port, MCP_NAME))

    async def browser_like() -> None:
        # How a browser authenticates: the key as a subprotocol.
        async with connect(
            f"ws://127.0.0.1:{proxy.port}/v1/realtime?model=m&key={SECRET}",
            subprotocols=["realtime", f"openai-insecure-api-key.{SECRET}"],
        ) as ws:
            await ws.recv()
            await ws.send(
                json.dumps({"type": "session.update", "session": {"tools": [tool("a.b")]}})
            )
            await ws.recv()

    run(browser_like())
    proxy.stop()
    flows = read_flows(saved)
    assert len(flows) == 2 and all(f.websocket and f.websocket.messages for f in flows)
    assert SECRET.encode() not in saved.read_bytes()
    assert any(SECRET in str(h) for h in live_standin.handshakes)  # it was sent, and is gone
    assert flows[1].request.headers["sec-websocket-protocol"] == (
        "realtime, openai-insecure-api-key.REDACTED-by-toolnames"
    )
    assert flows[0].metadata["toolnames"]["findings"][0]["message_index"] == 1
