"""Gemini Live (``BidiGenerateContent``, Gemini API and Vertex AI) over a WebSocket.

Shapes from google-genai's ``types.py`` and ``live.py``: the first client message is
``{"setup": {"model", "tools": [{"functionDeclarations": [...]}]}}`` (``LiveClientSetup``;
the SDK sends camelCase, the proto's snake_case is read too, as for HTTP, and some
messages mix them: ``send_tool_response`` sends ``{"tool_response": {"functionResponses":
…}}``). A later ``contextUpdate.tools.tools`` replaces the session's tools
(``LiveClientContextUpdate``). The server calls with
``{"toolCall": {"functionCalls": [{"id", "name", "args"}]}}`` (``LiveServerToolCall``), the
client answers with ``{"toolResponse": {"functionResponses": [{"id", "name",
"response"}]}}`` (``LiveClientToolResponse``), whose names must be declared functions, and
puts history in ``clientContent.turns`` (``LiveClientContent``). The protocol has no
error event: the server closes the connection, the reason holding its message.
"""

from __future__ import annotations

from toolnames_core.findings import malformed
from toolnames_core.model import Finding
from toolnames_core.model import JsonPath
from toolnames_core.model import NameRef
from toolnames_core.sessions.base import Block
from toolnames_core.sessions.base import ClientMessage
from toolnames_core.sessions.base import ServerMessage
from toolnames_core.sessions.base import SessionProtocol

__all__ = ["CLOSE_CODE", "MAX_REASON_BYTES", "PROTOCOL", "close_reason"]

NAME = "gemini-live"
# What Gemini Live closes with for a request it rejects, tools included ("1007 (invalid
# frame payload data) Request contains an invalid argument."; docs/providers.md §19).
CLOSE_CODE = 1007
# RFC 6455 §5.5: a control frame's payload is at most 125 bytes, two of them the code.
MAX_REASON_BYTES = 123


def _member(obj: dict, camel: str, snake: str) -> tuple[str, object] | None:
    for key in (camel, snake):
        if obj.get(key) is not None:
            return key, obj[key]
    return None


def _read_tools(tools: object, where: JsonPath, message: ClientMessage) -> None:
    for at, tool in message.declare_tools(tools, where):
        # A tool without declarations is a built-in (googleSearch, codeExecution): no name.
        found = _member(tool, "functionDeclarations", "function_declarations")
        if found is None:
            continue
        key, decls = found
        if not isinstance(decls, list):
            message.problems.append(malformed((*at, key), "an array", decls))
            continue
        for j, decl in enumerate(decls):
            name = decl.get("name") if isinstance(decl, dict) else None
            message.declare(name, (*at, key, j, "name"))


def _read_parts(turns: object, where: JsonPath, message: ClientMessage) -> None:
    for i, turn in enumerate(turns if isinstance(turns, list) else ()):
        parts = turn.get("parts") if isinstance(turn, dict) else None
        for j, part in enumerate(parts if isinstance(parts, list) else ()):
            if not isinstance(part, dict):
                continue
            for camel, snake in (
                ("functionCall", "function_call"),
                ("functionResponse", "function_response"),
            ):
                found = _member(part, camel, snake)
                if found and isinstance(found[1], dict) and isinstance(found[1].get("name"), str):
                    at = (*where, i, "parts", j, found[0], "name")
                    message.history.append(NameRef(found[1]["name"], at))


def read_client(event: dict) -> ClientMessage:
    message = ClientMessage()
    setup = event.get("setup")
    if isinstance(setup, dict):
        found = _member(setup, "tools", "tools")
        # A setup without tools declares that there are none: the session's offer is empty.
        _read_tools(found[1] if found else [], ("setup", "tools"), message)
        return message
    found = _member(event, "contextUpdate", "context_update")
    if found and isinstance(found[1], dict):
        # LiveClientContextUpdate: the tools replace the session's, under a wrapper whose
        # presence tells "no update" from "clear all tools" (LiveClientContextUpdateTools).
        wrapper = _member(found[1], "tools", "tools")
        if wrapper and isinstance(wrapper[1], dict):
            inner = _member(wrapper[1], "tools", "tools")
            _read_tools(inner[1] if inner else [], (found[0], "tools", "tools"), message)
        return message
    found = _member(event, "toolResponse", "tool_response")
    if found and isinstance(found[1], dict):
        key = found[0]
        inner = _member(found[1], "functionResponses", "function_responses")
        if inner and isinstance(inner[1], list):
            for i, response in enumerate(inner[1]):
                name = response.get("name") if isinstance(response, dict) else None
                if isinstance(name, str):
                    message.results.append(NameRef(name, (key, inner[0], i, "name")))
        return message
    found = _member(event, "clientContent", "client_content")
    if found and isinstance(found[1], dict):
        turns = _member(found[1], "turns", "turns")
        if turns:
            _read_parts(turns[1], (found[0], "turns"), message)
    return message


def read_server(event: dict) -> ServerMessage:
    message = ServerMessage()
    found = _member(event, "toolCall", "tool_call")
    if found and isinstance(found[1], dict):
        inner = _member(found[1], "functionCalls", "function_calls")
        if inner and isinstance(inner[1], list):
            for i, call in enumerate(inner[1]):
                if isinstance(call, dict) and isinstance(call.get("name"), str):
                    where = (found[0], inner[0], i, "name")
                    # Without an id, each call is its own; Gemini sends each call once.
                    key = f"call:{call['id']}" if call.get("id") else None
                    message.calls.append((key, NameRef(call["name"], where)))
    return message


def close_reason(text: str) -> str:
    """``text`` cut to what a close frame holds, never inside a character."""
    data = text.encode("utf-8")
    if len(data) <= MAX_REASON_BYTES:
        return text
    return data[: MAX_REASON_BYTES - 3].decode("utf-8", "ignore") + "..."


def block(text: str, first: Finding, blocked: ClientMessage) -> Block:
    """No error event exists: close as the server does, the reason naming the name."""
    return Block(close_code=CLOSE_CODE, close_reason=close_reason(text))


# The Gemini API's rule (docs/providers.md §6).
PROTOCOL = SessionProtocol(NAME, "Gemini Live", "gemini", read_client, read_server, block)
