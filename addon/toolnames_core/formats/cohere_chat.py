"""Cohere's own chat API, v2: ``POST /v2/chat`` (docs/providers.md §10). Its OpenAI-compatible
API (``/compatibility/v1/chat/completions``) is Chat Completions, read by openai_chat.py.

How this adapter maps the format onto the shared model:

- ``tools[]`` are ``{"type": "function", "function": {"name", "description", "parameters"}}``;
  the name is at ``tools[i].function.name``. Function tools are the only kind v2 has. They
  and the history's calls are read as Chat Completions' are (formats/openai_common.py).
- ``tool_choice`` is a string, ``"REQUIRED"`` or ``"NONE"`` only (upper case): ``REQUIRED``
  -> "required" (the docs: the ``tools`` parameter must be passed), ``NONE`` -> "none".
  There is no named form: any other value, an object naming a tool included, is a
  ``choice-malformed`` finding saying so, never read as a choice of a tool.
- History: ``tool_calls[j].function.name`` of assistant messages. Tool results are
  ``{"role": "tool", "tool_call_id", "content"}``: they carry no name.

Response side: ``message.tool_calls[j].function.name`` of a whole answer; in a stream (SSE,
each event's ``type`` in its data, ``[DONE]`` at the end when the server sends it), the
``tool-call-start`` event carries one whole call object in ``delta.message.tool_calls``,
with its name; ``tool-call-delta`` events carry only argument pieces. A stream call's
``where`` starts ``("events", n)``: ``events[2].delta.message.tool_calls.function.name``.
Names go back into a stream as into any JSON (the event's bytes are the JSON the restorer
rewrites), so no ``restore_event`` is needed.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from typing import Any
from typing import TypedDict

from toolnames_core.findings import bad_choice
from toolnames_core.findings import malformed
from toolnames_core.findings import shown
from toolnames_core.formats.base import BlockResponse
from toolnames_core.formats.base import Shapes
from toolnames_core.formats.base import WireFormat
from toolnames_core.formats.openai_common import FunctionObjects
from toolnames_core.formats.openai_common import read_function_calls
from toolnames_core.formats.openai_common import read_function_tools
from toolnames_core.framings import SSE
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView

API = "cohere-chat"
# docs/providers.md §10: "REQUIRED" or "NONE", or no tool_choice at all.
_CHOICE_MODES = {"REQUIRED": "required", "NONE": "none"}
_CHOICE_HELP = (
    'Cohere takes only "REQUIRED" or "NONE" (upper case); it has no choice that names a '
    'tool: to force one tool, offer only that tool and send "REQUIRED"'
)


# Function tools are the only kind v2 has, in tools and in the history alike.
_TOOLS = FunctionObjects(
    ("function",),
    default="function",
    other=lambda where, kind: malformed(where, '"function" (a function tool)', kind),
)
_CALLS = _TOOLS._replace(
    other=lambda where, kind: malformed(where, '"function" (a function call)', kind)
)


def _read_tool_choice(value: object, view: RequestView) -> None:
    where = ("tool_choice",)
    mode = _CHOICE_MODES.get(value) if isinstance(value, str) else None
    if mode is not None:
        view.choices.append(Choice(mode, where, sent=shown(value)))
    else:
        view.problems.append(bad_choice(where, value, _CHOICE_HELP))


def _read_history(messages: object, view: RequestView) -> None:
    if not isinstance(messages, list):
        return
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls")
        if calls is not None:
            read_function_calls(calls, ("messages", i, "tool_calls"), view, _CALLS)


def read_request(body: dict) -> RequestView:
    view = RequestView(API, streaming=body.get("stream") is True)
    if body.get("tools") is not None:
        read_function_tools(body["tools"], view, _TOOLS)
    if body.get("tool_choice") is not None:
        _read_tool_choice(body["tool_choice"], view)
    _read_history(body.get("messages"), view)
    return view


def block_response(message: str, finding: Finding) -> BlockResponse:
    # Cohere's errors are {"id": "<uuid>", "message": "..."} with the HTTP status
    # (docs/providers.md §10); the cohere SDK raises BadRequestError for a 400 and keeps the
    # body. The id is made from the message, so the same request is blocked the same way.
    digest = hashlib.sha256(message.encode("utf-8", "surrogatepass")).digest()
    body = {"id": str(uuid.UUID(bytes=digest[:16], version=4)), "message": message}
    return BlockResponse(400, {"content-type": "application/json"}, json.dumps(body).encode())


# --- response side ---


def _call_name(call: object, where: tuple) -> NameRef | None:
    inner = call.get("function") if isinstance(call, dict) else None
    name = inner.get("name") if isinstance(inner, dict) else None
    return (
        NameRef(name, (*where, "function", "name"), "function") if isinstance(name, str) else None
    )


def read_calls(body: dict) -> list[NameRef]:
    message = body.get("message")
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    found = []
    for j, call in enumerate(calls if isinstance(calls, list) else []):
        ref = _call_name(call, ("message", "tool_calls", j))
        if ref:
            found.append(ref)
    return found


class StreamCollector:
    """Cohere's v2 stream: a call's name comes once, in its ``tool-call-start`` event, whose
    ``delta.message.tool_calls`` is one call object (the API reference's
    ChatToolCallStartEvent); its arguments follow in ``tool-call-delta`` events."""

    def __init__(self) -> None:
        self.count = 0
        self.found: dict[object, NameRef] = {}

    def event(self, data: dict) -> None:
        n = self.count
        self.count += 1
        if data.get("type") != "tool-call-start":
            return
        delta = data.get("delta")
        message = delta.get("message") if isinstance(delta, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        base = ("events", n, "delta", "message", "tool_calls")
        index = data.get("index")
        key = index if isinstance(index, int) and not isinstance(index, bool) else ("event", n)
        # One object, as documented; a list is read too, each entry its own call.
        entries = [(key, calls, base)]
        if isinstance(calls, list):
            entries = [((key, j), call, (*base, j)) for j, call in enumerate(calls)]
        for call_key, call, where in entries:
            ref = _call_name(call, where)
            if ref and call_key not in self.found:
                self.found[call_key] = ref

    def calls(self) -> list[NameRef]:
        return list(self.found.values())


# What the functions above read, for the fast reader (formats/base.py Shapes): tools' and
# calls' types and names, the choice, roles; schemas, message text and arguments are skipped.


class _Named(TypedDict, total=False):
    name: Any


class _Call(TypedDict, total=False):
    type: Any
    function: _Named


class _Message(TypedDict, total=False):
    role: Any
    tool_calls: list[_Call] | None


class _Request(TypedDict, total=False):
    stream: Any
    tools: list[_Call] | None
    tool_choice: Any
    messages: list[_Message] | None


class _AnswerMessage(TypedDict, total=False):
    tool_calls: list[_Call] | None


class _Answer(TypedDict, total=False):
    message: _AnswerMessage | None


class _Event(TypedDict, total=False):
    type: Any
    index: Any
    # Small in every event type; a tool-call-start's holds the call.
    delta: Any


SHAPES = Shapes(_Request, _Answer | list[_Answer], _Event)

FORMAT = WireFormat(
    api=API,
    title="Cohere Chat v2",
    # On any host, as the other formats' paths are: a gateway or a private deployment
    # serves the same API under its own host (LiteLLM's pass-through: /cohere/v2/chat).
    path=re.compile(r"/v2/chat\Z"),
    example_paths=("/v2/chat", "/v2/chat/", "/cohere/v2/chat"),
    path_text=".../v2/chat",
    rule="cohere",
    # The names are checked by Cohere's API whichever host relays the body, so no host
    # table entry (an OpenAI-compatible host's rule) overrides Cohere's; an override can.
    host_decides=False,
    read_request=read_request,
    offer_keys=("tools",),
    read_calls=read_calls,
    stream_collector=StreamCollector,
    framing=SSE,
    shapes=SHAPES,
    block_response=block_response,
)
