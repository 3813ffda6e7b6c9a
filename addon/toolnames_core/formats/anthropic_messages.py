"""Anthropic Messages, ``POST /v1/messages`` and its token counting,
``POST /v1/messages/count_tokens`` (docs/providers.md §5).

How this adapter maps the format onto the shared model:

- Every ``tools[]`` entry with a ``name`` is offered under that name, kind "function":
  user tools (no ``type``, or ``"custom"``) and Anthropic's server and client tools
  (``{"type": "web_search_20250305", "name": "web_search"}``, ``bash_20250124``, ...) alike.
  ``tool_choice {"type": "tool", "name": "web_search"}`` picks a server tool by that name,
  tool names must be unique across both ("tools: Tool names must be unique."), and the
  fixed server-tool names all satisfy the name rule, so treating them as ordinary names
  is what the API does. Entries with a type and no name (the 2026 ``*_toolset_*`` entries)
  are offered as builtins by type; the names such a toolset serves are not known here.
- ``tool_choice``: ``auto`` -> "auto", ``any`` -> "required", ``none`` -> "none",
  ``tool`` -> "named" with ``where`` at ``tool_choice.name`` (so fix mode can rewrite it).
  There is no allow-list form. ``disable_parallel_tool_use`` is not read.
- History: ``tool_use`` blocks in assistant ``content[]``. ``server_tool_use`` and
  ``mcp_tool_use`` blocks are not read: their names come from Anthropic (a fixed list) or
  from an MCP server, not from the client's tools.
- Paths are our JSON paths (``tools[0].name``), not Anthropic's ``tools.0.custom.name``.

Response side: ``tool_use`` blocks of ``content[]``; in a stream, ``content_block_start``
events whose ``content_block`` is a ``tool_use``, one call per block ``index``. A stream
call's ``where`` starts ``("events", n)``, n counting the events given to the collector
from 0, as the other collectors do: ``events[1].content_block.name``.
"""

from __future__ import annotations

import json
import re
from typing import Any
from typing import TypedDict

from toolnames_core import codes
from toolnames_core.findings import bad_choice
from toolnames_core.findings import malformed
from toolnames_core.findings import shown
from toolnames_core.findings import type_name
from toolnames_core.formats.base import BlockResponse
from toolnames_core.formats.base import Shapes
from toolnames_core.formats.base import WireFormat
from toolnames_core.formats.base import read_once
from toolnames_core.framings import SSE
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView

API = "anthropic-messages"
_CHOICE_MODES = {"auto": "auto", "any": "required", "none": "none"}


def _read_tools(tools: object, view: RequestView) -> None:
    view.tools_given = True
    if not isinstance(tools, list):
        view.problems.append(malformed(("tools",), "an array", tools))
        return
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            view.problems.append(malformed(("tools", i), "an object", tool))
            continue
        kind = tool.get("type")
        name = tool.get("name")
        if isinstance(name, str):
            view.tools.append(NameRef(name, ("tools", i, "name"), "function"))
        elif kind == "function" and isinstance(tool.get("function"), dict):
            view.problems.append(
                Finding(
                    codes.TOOL_MALFORMED,
                    "error",
                    f"tools[{i}]",
                    f'tools[{i}] has the OpenAI shape {{"type": "function", "function": {{...}}}}; '
                    'Anthropic tools are {"name", "description", "input_schema"}',
                )
            )
        elif kind in (None, "custom") or "name" in tool:
            view.problems.append(malformed(("tools", i, "name"), "a string", name))
        elif isinstance(kind, str) and kind:
            view.tools.append(NameRef(kind, ("tools", i, "type"), "builtin"))
        else:
            view.problems.append(malformed(("tools", i, "type"), "a tool type string", kind))


def _read_tool_choice(value: object, view: RequestView) -> None:
    where = ("tool_choice",)
    if isinstance(value, str):
        suggested = "any" if value == "required" else value
        why = f'Anthropic takes an object here, e.g. {{"type": "{suggested}"}}'
        view.problems.append(bad_choice(where, value, why))
        return
    if not isinstance(value, dict):
        view.problems.append(bad_choice(where, value, f"is {type_name(value)}, expected an object"))
        return
    kind = value.get("type")
    if isinstance(kind, str) and kind in _CHOICE_MODES:
        view.choices.append(Choice(_CHOICE_MODES[kind], where, sent=shown(value)))
    elif kind == "tool":
        name = value.get("name")
        if isinstance(name, str):
            view.choices.append(
                Choice("named", where, (NameRef(name, (*where, "name"), "function"),))
            )
        elif "toolName" in value:
            why = "the AI SDK's internal tool choice leaked through; the API does not accept it"
            view.problems.append(bad_choice(where, value, why))
        else:
            why = 'a "tool" choice needs {"type": "tool", "name": "<tool name>"}'
            view.problems.append(bad_choice(where, value, why))
    elif kind == "function":
        why = 'this is the OpenAI shape; Anthropic wants {"type": "tool", "name": ...}'
        view.problems.append(bad_choice(where, value, why))
    else:
        view.problems.append(
            bad_choice(where, value, 'expected type "auto", "any", "none" or "tool"')
        )


def _read_history(messages: object, view: RequestView) -> None:
    if not isinstance(messages, list):
        return
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue  # a plain string holds no tool use
        for j, block in enumerate(content):
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            name = block.get("name")
            where = ("messages", i, "content", j, "name")
            if isinstance(name, str):
                view.history.append(NameRef(name, where, "function"))
            else:
                view.problems.append(malformed(where, "a string", name))


def read_request(body: dict) -> RequestView:
    view = RequestView(API, streaming=body.get("stream") is True)
    if body.get("tools") is not None:
        read_once(_read_tools, body["tools"], view)
    if body.get("tool_choice") is not None:
        _read_tool_choice(body["tool_choice"], view)
    _read_history(body.get("messages"), view)
    return view


def block_response(message: str, finding: Finding) -> BlockResponse:
    # The shape the anthropic SDKs turn into BadRequestError (docs/providers.md §5). Anthropic's
    # own errors carry only type and message; the path is already in the message.
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return BlockResponse(400, {"content-type": "application/json"}, json.dumps(body).encode())


# --- response side ---


def read_calls(body: dict) -> list[NameRef]:
    content = body.get("content")
    calls = []
    for j, block in enumerate(content if isinstance(content, list) else []):
        if (
            isinstance(block, dict)
            and block.get("type") == "tool_use"
            and isinstance(block.get("name"), str)
        ):
            calls.append(NameRef(block["name"], ("content", j, "name"), "function"))
    return calls


class StreamCollector:
    """Anthropic stream events: a tool_use block's name comes once, in its
    ``content_block_start``; the input follows as ``input_json_delta`` fragments."""

    def __init__(self) -> None:
        self.count = 0
        self.found: dict[object, NameRef] = {}

    def event(self, data: dict) -> None:
        n = self.count
        self.count += 1
        if not isinstance(data, dict) or data.get("type") != "content_block_start":
            return
        block = data.get("content_block")
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            return
        name = block.get("name")
        index = data.get("index")
        key = index if isinstance(index, int) and not isinstance(index, bool) else ("event", n)
        if isinstance(name, str) and key not in self.found:
            self.found[key] = NameRef(name, ("events", n, "content_block", "name"), "function")

    def calls(self) -> list[NameRef]:
        return list(self.found.values())


# What the functions above read, for the fast reader (formats/base.py Shapes): tools'
# names and types, the choice, tool_use blocks; schemas and message text are skipped.


class _Tool(TypedDict, total=False):
    type: Any
    name: Any
    function: Any


class _Block(TypedDict, total=False):
    type: Any
    name: Any


class _Message(TypedDict, total=False):
    role: Any
    content: list[_Block] | str | None


class _Request(TypedDict, total=False):
    stream: Any
    tools: list[_Tool] | None
    tool_choice: Any
    messages: list[_Message] | None


class _Answer(TypedDict, total=False):
    content: list[_Block] | None


class _Event(TypedDict, total=False):
    type: Any
    index: Any
    content_block: _Block | None


SHAPES = Shapes(_Request, _Answer | list[_Answer], _Event)

FORMAT = WireFormat(
    api=API,
    title="Anthropic Messages",
    # Token counting takes a Messages body and validates its tools as Messages does.
    path=re.compile(r"/v1/messages(?:/count_tokens)?\Z"),
    example_paths=(
        "/v1/messages",
        "/v1/messages?beta=true",
        "/v1/messages/count_tokens",
        "/v1/messages/count_tokens?beta=true",
    ),
    path_text=".../v1/messages",
    rule="anthropic",
    read_request=read_request,
    offer_keys=("tools",),
    read_calls=read_calls,
    stream_collector=StreamCollector,
    framing=SSE,
    shapes=SHAPES,
    block_response=block_response,
)
