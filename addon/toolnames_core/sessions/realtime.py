"""OpenAI Realtime (``/v1/realtime``, Azure's ``/openai/realtime``) over a WebSocket.

Shapes from the openai SDK's ``openai/types/realtime/``: tools are flat
(``realtime_function_tool_param.py``: ``{"type": "function", "name", "parameters"}``),
MCP tools are named by ``server_label`` (``realtime_tools_config_union_param.py``); the
choice is ``"auto" | "none" | "required"``, ``{"type": "function", "name"}`` or
``{"type": "mcp", "server_label", "name"?}`` (``realtime_tool_choice_config_param.py``).
``session.update`` declares for the session, ``response.create`` for one response
(``realtime_response_create_params_param.py``, whose ``input`` items are history, as are
``conversation.item.create``'s). The server's calls are ``function_call`` items in
``response.output_item.added`` / ``.done`` and ``response.done``'s ``response.output``,
and ``response.function_call_arguments.done`` names its call too. An error is a server
event, ``{"type": "error", "error": {"type", "code", "message", "param", "event_id"}}``
(``realtime_error_event.py``), after which the session goes on.
"""

from __future__ import annotations

import json
import uuid

from toolnames_core.findings import bad_choice
from toolnames_core.findings import malformed
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import JsonPath
from toolnames_core.model import NameRef
from toolnames_core.sessions.base import Block
from toolnames_core.sessions.base import ClientMessage
from toolnames_core.sessions.base import ServerMessage
from toolnames_core.sessions.base import SessionProtocol

__all__ = ["PROTOCOL"]

NAME = "openai-realtime"


def _read_tools(tools: object, where: JsonPath, message: ClientMessage) -> None:
    for at, tool in message.declare_tools(tools, where):
        kind = tool.get("type", "function")
        if kind == "mcp":
            # An MCP server is offered, and chosen, by its label; its tools' names are
            # the server's own, never the function-name rule's.
            message.declare(tool.get("server_label"), (*at, "server_label"), "builtin")
        elif kind == "function":
            message.declare(tool.get("name"), (*at, "name"))
        else:
            message.problems.append(malformed((*at, "type"), '"function" or "mcp"', kind))


def _read_choice(value: object, where: JsonPath, message: ClientMessage) -> None:
    message.choice_given = True
    if value in ("auto", "none"):
        return  # forces nothing
    if value == "required":
        message.choice = Choice("required", where)
        return
    if isinstance(value, dict):
        kind = value.get("type")
        key, ref_kind = (
            ("name", "function")
            if kind == "function"
            else ("server_label", "builtin")
            if kind == "mcp"
            else (None, None)
        )
        name = value.get(key) if key else None
        if isinstance(name, str):
            message.choice = Choice("named", where, (NameRef(name, (*where, key), ref_kind),))
            return
    message.problems.append(
        bad_choice(
            where,
            value,
            'expected "auto", "none", "required", {"type": "function", "name": …} '
            'or {"type": "mcp", "server_label": …}',
        )
    )


def _read_item(item: object, where: JsonPath, message: ClientMessage) -> None:
    if isinstance(item, dict) and item.get("type") == "function_call":
        name = item.get("name")
        if isinstance(name, str):
            message.history.append(NameRef(name, (*where, "name")))
        else:
            message.problems.append(malformed((*where, "name"), "a string", name))


def read_client(event: dict) -> ClientMessage:
    message = ClientMessage()
    event_id = event.get("event_id")
    message.event_id = event_id if isinstance(event_id, str) else None
    kind = event.get("type")
    if kind in ("session.update", "response.create"):
        key = "session" if kind == "session.update" else "response"
        message.scope = key
        body = event.get(key)
        if isinstance(body, dict):
            if "tools" in body:
                _read_tools(body["tools"], (key, "tools"), message)
            if "tool_choice" in body:
                _read_choice(body["tool_choice"], (key, "tool_choice"), message)
            items = body.get("input")
            if isinstance(items, list):
                for i, item in enumerate(items):
                    _read_item(item, (key, "input", i), message)
    elif kind == "conversation.item.create":
        _read_item(event.get("item"), ("item",), message)
    return message


def _call(item: object, where: JsonPath) -> tuple[str, NameRef] | None:
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    key = item.get("call_id") or item.get("id")
    if kind == "function_call" and isinstance(item.get("name"), str):
        return f"call:{key}", NameRef(item["name"], (*where, "name"))
    if kind == "mcp_call" and isinstance(item.get("server_label"), str):
        return f"mcp:{key}", NameRef(item["server_label"], (*where, "server_label"), "builtin")
    return None


def read_server(event: dict) -> ServerMessage:
    message = ServerMessage()
    kind = event.get("type")
    if kind in ("response.output_item.added", "response.output_item.done"):
        call = _call(event.get("item"), ("item",))
        if call:
            message.calls.append(call)
    elif kind == "response.function_call_arguments.done":
        if isinstance(event.get("name"), str):
            key = event.get("call_id") or event.get("item_id")
            message.calls.append((f"call:{key}", NameRef(event["name"], ("name",))))
    elif kind == "response.done":
        message.response_done = True
        response = event.get("response")
        output = response.get("output") if isinstance(response, dict) else None
        for i, item in enumerate(output if isinstance(output, list) else ()):
            call = _call(item, ("response", "output", i))
            if call:
                message.calls.append(call)
    elif kind == "error":
        error = event.get("error")
        rejected = error.get("event_id") if isinstance(error, dict) else None
        message.rejected_event = rejected if isinstance(rejected, str) else None
    elif kind in ("session.created", "session.updated"):
        session = event.get("session")
        if isinstance(session, dict) and isinstance(session.get("tools"), list):
            read = ClientMessage()
            _read_tools(session["tools"], ("session", "tools"), read)
            message.tools = read.tools
    return message


def block(text: str, first: Finding, blocked: ClientMessage) -> Block:
    """Realtime's own error event, as the provider sends one for a bad client event: the
    SDK raises or reports it as any other, and the session stays open."""
    event = {
        "type": "error",
        "event_id": f"event_toolnames_{uuid.uuid4().hex[:16]}",
        "error": {
            "type": "invalid_request_error",
            "code": first.code,
            "message": text,
            "param": first.path,
            "event_id": blocked.event_id,
        },
    }
    return Block(event=json.dumps(event).encode())


# OpenAI's rule, as its Chat Completions names get (docs/providers.md §2).
PROTOCOL = SessionProtocol(NAME, "OpenAI Realtime", "openai", read_client, read_server, block)
