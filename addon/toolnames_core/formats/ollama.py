"""Ollama's native chat API, ``POST /api/chat`` (docs/providers.md §11).

Tools come in OpenAI's function shape (``tools[].function.name``); there is no ``tool_choice``
field at all. A call arrives whole in one message (``message.tool_calls[].function.name``),
streamed or not; a tool's result goes back as a ``{"role": "tool", "tool_name": ...}``
message. The stream is NDJSON, one answer object a line, ended by a ``"done": true`` line; an
error once it has begun is a line of its own, ``{"error": "..."}``, its HTTP status unchanged.

Ollama validates no names (``api/types.go`` takes any string), so its rule, ``ollama``, limits
none: toolnames never predicts a name error there, and warns only about what does go wrong
(an empty name, one offered twice, a call to a tool never offered).

Go's JSON decoding decides what Ollama refuses: a value of the wrong type (tools that are no
array, a tool or function that is no object, a name that is no string) is answered 400; a
missing or null value is the zero value, so a tool without a name is a tool named "".
"""

from __future__ import annotations

import json
import re
from typing import Any
from typing import TypedDict

from toolnames_core import codes
from toolnames_core.findings import malformed
from toolnames_core.findings import shown
from toolnames_core.formats.base import BlockResponse
from toolnames_core.formats.base import Shapes
from toolnames_core.formats.base import WireFormat
from toolnames_core.formats.base import read_once
from toolnames_core.framings import NDJSON
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import format_path

API = "ollama"


def _function_name(
    value: object, where: tuple, view: RequestView, offered: bool = True
) -> NameRef | None:
    """The name at ``where`` (…, "function", "name") inside ``value``, the object holding
    ``function``; None, with a finding, where there is none (``offered``: a tool's, which a
    model is to call; a call in the history without a name has nothing to check)."""
    if value is not None and not isinstance(value, dict):
        view.problems.append(malformed(where[:-2], "an object", value))
        return None
    function = value.get("function") if value is not None else None
    if function is not None and not isinstance(function, dict):
        view.problems.append(malformed(where[:-1], "an object", function))
        return None
    name = function.get("name") if function is not None else None
    if name is not None and not isinstance(name, str):
        view.problems.append(malformed(where, "a string", name))
        return None
    if name is None and not offered:
        return None
    if name is None:
        # Go decodes a missing or null part as its zero value: Ollama takes a tool named "".
        # Said here, not as a name at a place the body does not hold (fix mode splices there).
        path = format_path(where)
        view.problems.append(
            Finding(
                codes.NAME_EMPTY,
                "warning",
                path,
                f"{path} is missing; Ollama takes it as the empty name, which no model can call",
            )
        )
        return None
    return NameRef(name, where)


def _read_tools(tools: object, view: RequestView) -> None:
    if tools is None:
        return
    view.tools_given = True
    if not isinstance(tools, list):
        view.problems.append(malformed(("tools",), "an array", tools))
        return
    for i, tool in enumerate(tools):
        ref = _function_name(tool, ("tools", i, "function", "name"), view)
        if ref is not None:
            view.tools.append(ref)


def _read_history(messages: object, view: RequestView) -> None:
    if not isinstance(messages, list):
        return
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        name = message.get("tool_name")
        if isinstance(name, str) and name:
            # A tool's result names the tool it answers (Ollama's Message.ToolName).
            view.history.append(NameRef(name, ("messages", i, "tool_name")))
        calls = message.get("tool_calls")
        if calls is None:
            continue
        if not isinstance(calls, list):
            view.problems.append(malformed(("messages", i, "tool_calls"), "an array", calls))
            continue
        for j, call in enumerate(calls):
            where = ("messages", i, "tool_calls", j, "function", "name")
            ref = _function_name(call, where, view, offered=False)
            if ref is not None and ref.name:
                view.history.append(ref)


def read_request(body: dict) -> RequestView:
    # Streaming is Ollama's default: only "stream": false asks for one answer.
    view = RequestView(API, streaming=body.get("stream") is not False)
    read_once(_read_tools, body.get("tools"), view)
    if "tool_choice" in body:
        # Not a field of Ollama's ChatRequest: Go's decoder drops it without a word.
        view.problems.append(
            Finding(
                codes.CHOICE_IGNORED,
                "warning",
                "tool_choice",
                f"tool_choice {shown(body['tool_choice'])} is sent to Ollama's /api/chat, which "
                "has no tool_choice and drops it: the model chooses as with auto",
                "ollama",
            )
        )
    _read_history(body.get("messages"), view)
    return view


def block_response(message: str, finding: Finding) -> BlockResponse:
    # Ollama's error shape, {"error": "..."} (docs/api/errors.mdx): the ollama clients raise
    # ResponseError with its text and the status.
    body = json.dumps({"error": message}).encode()
    return BlockResponse(400, {"content-type": "application/json; charset=utf-8"}, body)


def _calls(message: object, base: tuple) -> list[NameRef]:
    if not isinstance(message, dict):
        return []
    calls = message.get("tool_calls")
    found = []
    for j, call in enumerate(calls if isinstance(calls, list) else []):
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str):
            found.append(NameRef(name, (*base, "tool_calls", j, "function", "name")))
    return found


def read_calls(body: dict) -> list[NameRef]:
    return _calls(body.get("message"), ("message",))


class StreamCollector:
    """NDJSON lines: each call comes whole in one line's message (docs/api.md, "Streaming
    with tools"), so a line's calls are all its own."""

    def __init__(self) -> None:
        self.count = 0
        self.found: list[NameRef] = []

    def event(self, data: dict) -> None:
        index = self.count
        self.count += 1
        self.found += _calls(data.get("message"), ("events", index, "message"))

    def calls(self) -> list[NameRef]:
        return list(self.found)


# What the functions above read, for the fast reader (formats/base.py Shapes): the top-level
# keys (the messages whole: a tool's result and a call sit in any of them).


class _Request(TypedDict, total=False):
    stream: Any
    tools: Any
    tool_choice: Any
    messages: list[Any] | None


class _Answer(TypedDict, total=False):
    message: Any
    error: Any


SHAPES = Shapes(_Request, _Answer, _Answer)

FORMAT = WireFormat(
    api=API,
    title="Ollama chat (native API)",
    path=re.compile(r"/api/chat\Z"),
    example_paths=(
        "/api/chat",  # the ollama Python and JavaScript clients
        "/api/chat/",
        "/ollama/api/chat",  # Open WebUI's Ollama proxy
    ),
    path_text="/api/chat",
    # Ollama's own API, whatever the host (a proxy in front of it, another port): its rule
    # is Ollama's unless the user names another (toolnames_rule).
    rule="ollama",
    host_decides=False,
    read_request=read_request,
    offer_keys=("tools",),
    read_calls=read_calls,
    stream_collector=StreamCollector,
    framing=NDJSON,
    shapes=SHAPES,
    block_response=block_response,
)
