"""The live stand-in on its own: it validates declarations as the providers document them
and answers with calls, spoken to with a plain websockets client."""

import asyncio
import json

import pytest

# websockets comes with the SDKs' environment (requirements/test.txt), not mitmproxy 11's.
pytestmark = pytest.mark.needs_sdk


@pytest.fixture
def standin():
    from standin.live import LiveStandin

    live = LiveStandin()
    live.start()
    yield live
    live.stop()


def talk(url: str, messages: list[dict], replies: int) -> tuple[list[dict], object]:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async def run():
        got = []
        async with connect(url) as ws:
            for message in messages:
                await ws.send(json.dumps(message))
            try:
                for _ in range(replies):
                    got.append(json.loads(await asyncio.wait_for(ws.recv(), 5)))
            except ConnectionClosed as closed:
                return got, closed.rcvd
        return got, None

    return asyncio.run(run())


def test_realtime_rejects_a_bad_name_with_openais_error_event_and_goes_on(standin):
    bad = {
        "type": "session.update",
        "event_id": "e1",
        "session": {"tools": [{"type": "function", "name": "a.b"}]},
    }
    good = {"type": "session.update", "session": {"tools": [{"type": "function", "name": "a_b"}]}}
    got, closed = talk(
        f"ws://127.0.0.1:{standin.port}/v1/realtime?model=m",
        [bad, good, {"type": "response.create"}],
        8,
    )
    assert [e["type"] for e in got] == [
        "session.created",
        "error",
        "session.updated",
        "response.created",
        "response.output_item.added",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.done",
    ]
    assert (
        got[1]["error"]["param"] == "session.tools[0].name" and got[1]["error"]["event_id"] == "e1"
    )
    assert got[5]["name"] == "a_b" and closed is None


def test_live_closes_with_1007_on_a_bad_declaration_or_an_undeclared_response(standin):
    url = f"ws://127.0.0.1:{standin.port}/ws/x.GenerativeService.BidiGenerateContent"
    bad = {"setup": {"tools": [{"functionDeclarations": [{"name": "1a"}]}]}}
    got, closed = talk(url, [bad], 1)
    assert got == [] and (closed.code, closed.reason) == (
        1007,
        "Request contains an invalid argument.",
    )
    setup = {"setup": {"tools": [{"functionDeclarations": [{"name": "a.b"}]}]}}
    turn = {
        "clientContent": {
            "turns": [{"role": "user", "parts": [{"text": "hi"}]}],
            "turnComplete": True,
        }
    }
    got, closed = talk(url, [setup, turn], 2)
    assert got == [
        {"setupComplete": {}},
        {"toolCall": {"functionCalls": [{"id": "fc_1", "name": "a.b", "args": {}}]}},
    ]
    answer = {
        "tool_response": {"functionResponses": [{"id": "fc_1", "name": "zz", "response": {}}]}
    }
    got, closed = talk(url, [setup, answer], 2)
    assert closed.code == 1007
