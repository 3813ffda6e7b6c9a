"""The stand-in live providers on loopback: OpenAI Realtime and Gemini Live over a WebSocket.

Both protocols on one port, told apart by path as the providers' URLs are. Each validates
declarations as its provider documents them and answers with calls, so the end-to-end
tests can drive the real SDKs' realtime and live clients through a real mitmdump:

- OpenAI Realtime (``/v1/realtime``, ``/openai/realtime``): ``session.update`` and
  ``response.create`` tools must match ``^[a-zA-Z0-9_-]{1,64}$`` (docs/providers.md §2,
  §19); a bad one gets Realtime's error event, with OpenAI's text and ``param``, and the
  session goes on. ``response.create`` answers with one call, in the events and order the
  API sends (``response.created``, ``output_item.added``, ``function_call_arguments.done``,
  ``output_item.done``, ``response.done``).
- Gemini Live (``…BidiGenerateContent``): ``setup`` declarations must match Gemini's rule
  (a letter or ``_`` first, then letters, digits, ``_ . : -``, 64 at most, distinct;
  docs/providers.md §6) and a tool response must name a declared function; otherwise the
  session is closed with 1007, as Gemini closes it. A finished ``clientContent`` turn gets
  one ``toolCall``; a ``toolResponse`` gets a finished model turn.

``call`` sets the name the model calls (default: the first declared tool), e.g. a tool
that was never declared. Everything received is kept in ``received`` (protocol, message)
and the handshakes' headers in ``handshakes``, for the tests to look at. Like the HTTP
stand-in, it does not import the addon.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading

from websockets.asyncio.server import ServerConnection
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

__all__ = ["GEMINI_NAME", "OPENAI_NAME", "LiveStandin"]

OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
GEMINI_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}")
# Gemini's close for an invalid request, as google-genai users see it.
GEMINI_INVALID = (1007, "Request contains an invalid argument.")


def _either(obj: dict, camel: str, snake: str):
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


class LiveStandin:
    def __init__(self, port: int = 0, call: str | None = None) -> None:
        self.port = port
        self.call = call
        self.received: list[tuple[str, dict]] = []
        self.handshakes: list[dict[str, str]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopped: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the live stand-in did not start")

    def stop(self) -> None:
        if self._loop is not None and self._stopped is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
        if self._thread is not None:
            self._thread.join(5)

    def messages(self, protocol: str) -> list[dict]:
        return [m for p, m in self.received if p == protocol]

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        async with serve(
            self._handle, "127.0.0.1", self.port, select_subprotocol=_select_subprotocol
        ) as server:
            self.port = server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._stopped.wait()

    async def _handle(self, ws: ServerConnection) -> None:
        self.handshakes.append({k.lower(): v for k, v in ws.request.headers.raw_items()})
        path = ws.request.path.split("?", 1)[0]
        try:
            if path.endswith("/realtime"):
                await self._realtime(ws)
            elif path.endswith("BidiGenerateContent"):
                await self._live(ws)
            else:
                await ws.close(1008, f"no live API at {path}")
        except ConnectionClosed:
            pass

    # -- OpenAI Realtime ------------------------------------------------------------------

    async def _realtime(self, ws: ServerConnection) -> None:
        tools: list[dict] = []
        sent = 0

        async def send(event: dict) -> None:
            nonlocal sent
            sent += 1
            await ws.send(json.dumps({"event_id": f"event_{sent}", **event}))

        def session(tools: list[dict]) -> dict:
            return {"type": "realtime", "object": "realtime.session", "tools": tools}

        await send({"type": "session.created", "session": session([])})
        async for raw in ws:
            event = json.loads(raw)
            self.received.append(("openai-realtime", event))
            kind = event.get("type")
            if kind not in ("session.update", "response.create"):
                continue
            key = "session" if kind == "session.update" else "response"
            offered = event.get(key, {}).get("tools")
            error = _realtime_tool_error(key, offered or [], event.get("event_id"))
            if error:
                await send({"type": "error", "error": error})
                continue
            if kind == "session.update":
                if offered is not None:
                    tools = offered
                await send({"type": "session.updated", "session": session(tools)})
                continue
            available = offered if offered is not None else tools
            name = self.call or (available[0]["name"] if available else None)
            await self._realtime_response(send, name)

    async def _realtime_response(self, send, name: str | None) -> None:
        response = {"id": "resp_1", "object": "realtime.response", "status": "in_progress"}
        await send({"type": "response.created", "response": {**response, "output": []}})
        output = []
        if name is not None:
            item = {
                "id": "item_1",
                "object": "realtime.item",
                "type": "function_call",
                "status": "in_progress",
                "name": name,
                "call_id": "call_1",
                "arguments": "",
            }
            at = {"response_id": "resp_1", "output_index": 0}
            await send({"type": "response.output_item.added", **at, "item": item})
            await send(
                {
                    "type": "response.function_call_arguments.done",
                    **at,
                    "item_id": "item_1",
                    "call_id": "call_1",
                    "name": name,
                    "arguments": "{}",
                }
            )
            done = {**item, "status": "completed", "arguments": "{}"}
            await send({"type": "response.output_item.done", **at, "item": done})
            output.append(done)
        await send(
            {
                "type": "response.done",
                "response": {**response, "status": "completed", "output": output},
            }
        )

    # -- Gemini Live ------------------------------------------------------------------------

    async def _live(self, ws: ServerConnection) -> None:
        declared: list[str] = []
        async for raw in ws:
            event = json.loads(raw)
            self.received.append(("gemini-live", event))
            if "setup" in event:
                for tool in event["setup"].get("tools") or []:
                    for decl in (
                        _either(tool, "functionDeclarations", "function_declarations") or []
                    ):
                        name = decl.get("name", "")
                        if not GEMINI_NAME.fullmatch(name) or name in declared:
                            await ws.close(*GEMINI_INVALID)
                            return
                        declared.append(name)
                await ws.send(json.dumps({"setupComplete": {}}).encode())
            elif _either(event, "clientContent", "client_content") is not None:
                name = self.call or (declared[0] if declared else None)
                if name is not None:
                    call = {"id": "fc_1", "name": name, "args": {}}
                    await ws.send(json.dumps({"toolCall": {"functionCalls": [call]}}).encode())
            elif (response := _either(event, "toolResponse", "tool_response")) is not None:
                for answer in _either(response, "functionResponses", "function_responses") or []:
                    if answer.get("name") not in declared:
                        await ws.close(*GEMINI_INVALID)
                        return
                turn = {"modelTurn": {"parts": [{"text": "done"}]}, "turnComplete": True}
                await ws.send(json.dumps({"serverContent": turn}).encode())


def _select_subprotocol(connection: ServerConnection, offered) -> str | None:
    # Browsers offer "realtime" (with the key as a second subprotocol); SDKs offer none.
    return "realtime" if "realtime" in offered else None


def _realtime_tool_error(key: str, tools: list, event_id: str | None) -> dict | None:
    for i, tool in enumerate(tools):
        if tool.get("type", "function") != "function":
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not OPENAI_NAME.fullmatch(name):
            # OpenAI's text for a name outside the pattern (docs/providers.md §2).
            return {
                "type": "invalid_request_error",
                "code": "invalid_value",
                "message": f"Invalid '{key}.tools[{i}].name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                "param": f"{key}.tools[{i}].name",
                "event_id": event_id,
            }
    return None
