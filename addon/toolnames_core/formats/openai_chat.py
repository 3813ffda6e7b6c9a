"""OpenAI Chat Completions, and every host that speaks it (docs/providers.md §2, §4, §8-§13)."""

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
from toolnames_core.formats.openai_common import PARALLEL_WRAPPERS
from toolnames_core.formats.openai_common import FunctionObjects
from toolnames_core.formats.openai_common import function_name
from toolnames_core.formats.openai_common import read_function_tools
from toolnames_core.formats.openai_common import with_unwrapped
from toolnames_core.formats.openai_common import wrapper_restore
from toolnames_core.framings import SSE
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import JsonPath
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import format_path

API = "openai-chat"
_TOOL_KINDS = ("function", "custom")


def _name_at(
    obj: object, where: tuple, view: RequestView, kind: str = "function"
) -> NameRef | None:
    """The string at ``where[-1]`` of ``obj``, or a finding saying why there is none."""
    key = where[-1]
    if not isinstance(obj, dict):
        view.problems.append(malformed(where[:-1], "an object", obj))
        return None
    name = obj.get(key)
    if not isinstance(name, str):
        view.problems.append(malformed(where, "a string", name))
        return None
    return NameRef(name, where, kind)


def _other_tool_type(where: JsonPath, kind: object) -> Finding:
    path = format_path(where)
    return Finding(
        codes.TOOL_MALFORMED,
        "error",
        path,
        f'{path} is {json.dumps(kind)}, expected "function" or "custom"',
    )


# Tools must say their type; a call in the history that says another is read as a function's.
_TOOLS = FunctionObjects(
    _TOOL_KINDS,
    default=None,
    other=_other_tool_type,
    # docs/providers.md §2: OpenAI answers `tools: []` with 400 empty_array.
    empty=Finding(
        codes.TOOLS_EMPTY,
        "error",
        "tools",
        "tools is an empty array; OpenAI rejects it (empty_array): "
        "send at least one tool or leave tools out",
    ),
)
_CALLS = FunctionObjects(_TOOL_KINDS, default="function", other=None)


def _read_tools(body: dict, view: RequestView) -> None:
    if body.get("tools") is not None:
        read_function_tools(body["tools"], view, _TOOLS)
    # Legacy `functions` (docs/providers.md §2) offer tools too.
    if body.get("functions") is not None:
        view.tools_given = True
        functions = body["functions"]
        if not isinstance(functions, list):
            view.problems.append(malformed(("functions",), "an array", functions))
        else:
            for i, fn in enumerate(functions):
                ref = _name_at(fn, ("functions", i, "name"), view)
                if ref:
                    view.tools.append(ref)


# Most requests send "auto" or no choice. A Choice is frozen, so each string choice at each
# place is built once (its JSON rendering costs as much as reading a small body's tools).
_string_choices: dict[tuple[str, tuple], Choice] = {}


def _string_choice(value: str, where: tuple) -> Choice:
    choice = _string_choices.get((value, where))
    if choice is None:
        choice = _string_choices[(value, where)] = Choice(value, where, sent=shown(value))
    return choice


def read_string_choice(value: str, where: tuple, view: RequestView) -> None:
    """A string ``tool_choice``: Chat Completions and Responses take the same three
    (docs/providers.md §2, §3)."""
    if value in ("none", "auto", "required"):
        view.choices.append(_string_choice(value, where))
    else:
        view.problems.append(
            bad_choice(where, value, 'expected "none", "auto", "required" or an object')
        )


def _read_named(obj: dict, where: tuple, kind: str, view: RequestView) -> NameRef | None:
    inner = obj.get(kind)
    if not isinstance(inner, dict) or not isinstance(inner.get("name"), str):
        view.problems.append(
            bad_choice(
                where, obj, f'a "{kind}" choice needs {{"{kind}": {{"name": "<tool name>"}}}}'
            )
        )
        return None
    return NameRef(inner["name"], (*where, kind, "name"), kind)


def _read_tool_choice(value: object, view: RequestView) -> None:
    where = ("tool_choice",)
    if isinstance(value, str):
        read_string_choice(value, where, view)
        return
    if not isinstance(value, dict):
        view.problems.append(
            bad_choice(where, value, f"is {type_name(value)}, expected a string or an object")
        )
        return
    kind = value.get("type")
    if kind in _TOOL_KINDS:
        if kind == "function" and "function" not in value and isinstance(value.get("name"), str):
            why = 'this is the Responses API shape; Chat Completions wants {"type": "function", "function": {"name": ...}}'
            view.problems.append(bad_choice(where, value, why))
            return
        ref = _read_named(value, where, kind, view)
        if ref:
            view.choices.append(Choice("named", where, (ref,)))
    elif kind == "allowed_tools":
        _read_allowed(value, view)
    elif kind == "tool" and "toolName" in value:
        why = "the AI SDK's internal tool choice leaked through; the API does not accept it"
        view.problems.append(bad_choice(where, value, why))
    else:
        view.problems.append(
            bad_choice(where, value, 'expected type "function", "custom" or "allowed_tools"')
        )


def _read_allowed(value: dict, view: RequestView) -> None:
    where = ("tool_choice", "allowed_tools")
    allowed = value.get("allowed_tools")
    tools = allowed.get("tools") if isinstance(allowed, dict) else None
    if not isinstance(tools, list) or allowed.get("mode") not in ("auto", "required"):
        why = 'expected {"mode": "auto" | "required", "tools": [...]}'
        view.problems.append(bad_choice(where, allowed, why))
        return
    names = []
    for i, entry in enumerate(tools):
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind not in _TOOL_KINDS:
            view.problems.append(
                bad_choice((*where, "tools", i), entry, 'expected a "function" or "custom" entry')
            )
            continue
        ref = _read_named(entry, (*where, "tools", i), kind, view)
        if ref:
            names.append(ref)
    view.choices.append(Choice("allowed", where, tuple(names)))


def _read_function_call(value: object, view: RequestView) -> None:
    where = ("function_call",)
    if value in ("none", "auto"):
        view.choices.append(_string_choice(value, where))
    elif isinstance(value, dict) and isinstance(value.get("name"), str):
        view.choices.append(
            Choice("named", where, (NameRef(value["name"], ("function_call", "name")),))
        )
    else:
        view.problems.append(
            bad_choice(where, value, 'expected "none", "auto" or {"name": "<function name>"}')
        )


_RESULT_ROLES = ("function", "tool")


def _read_history(messages: object, view: RequestView) -> None:
    if not isinstance(messages, list):
        return
    append = view.history.append
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        # One lookup settles the many user and system messages of a long conversation.
        role = message.get("role")
        if role != "assistant":
            if role in _RESULT_ROLES:
                # A function's or tool's result may carry the function's name; OpenAI holds
                # every message's `name` to ^[a-zA-Z0-9_-]{1,64}$ (docs/providers.md §2).
                name = message.get("name")
                if type(name) is str:
                    append(NameRef(name, ("messages", i, "name")))
            continue
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for j, call in enumerate(calls):
                # The well-formed call, settled here (read_function_calls would cost two calls
                # a message: long conversations hold thousands); the others as any is read.
                kind = call.get("type", "function") if type(call) is dict else None
                inner = call.get(kind) if kind in _TOOL_KINDS else None
                name = inner.get("name") if type(inner) is dict else None
                if type(name) is str:
                    append(NameRef(name, ("messages", i, "tool_calls", j, kind, "name"), kind))
                    continue
                ref = function_name(call, ("messages", i, "tool_calls", j), view, _CALLS)
                if ref:
                    append(ref)
        elif calls is not None:
            view.problems.append(malformed(("messages", i, "tool_calls"), "an array", calls))
        legacy = message.get("function_call")
        if legacy is not None:
            ref = _name_at(legacy, ("messages", i, "function_call", "name"), view)
            if ref:
                view.history.append(ref)


def read_request(body: dict) -> RequestView:
    view = RequestView(API, streaming=body.get("stream") is True)
    _read_tools(body, view)
    if body.get("tool_choice") is not None:
        _read_tool_choice(body["tool_choice"], view)
    if body.get("function_call") is not None:
        _read_function_call(body["function_call"], view)
    _read_history(body.get("messages"), view)
    return view


def block_response(message: str, finding: Finding) -> BlockResponse:
    # The shape OpenAI's SDKs turn into BadRequestError (docs/providers.md §2).
    error = {
        "message": message,
        "type": "invalid_request_error",
        "param": finding.path,
        "code": finding.code,
    }
    return BlockResponse(
        400, {"content-type": "application/json"}, json.dumps({"error": error}).encode()
    )


def _call_refs(calls: object, base: tuple) -> list[tuple[NameRef, object]]:
    """(name, arguments) of each tool call in a message or delta's ``tool_calls``."""
    out: list[tuple[NameRef, object]] = []
    if not isinstance(calls, list):
        return out
    for j, call in enumerate(calls):
        if not isinstance(call, dict):
            continue
        kind = "custom" if call.get("type") == "custom" else "function"
        inner = call.get(kind)
        if isinstance(inner, dict) and isinstance(inner.get("name"), str):
            args = inner.get("arguments", inner.get("input"))
            out.append((NameRef(inner["name"], (*base, j, kind, "name"), kind), args))
    return out


def read_calls(body: dict) -> list[NameRef]:
    found = []
    choices = body.get("choices")
    for i, choice in enumerate(choices if isinstance(choices, list) else []):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        found += _call_refs(message.get("tool_calls"), ("choices", i, "message", "tool_calls"))
        legacy = message.get("function_call")
        if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
            ref = NameRef(legacy["name"], ("choices", i, "message", "function_call", "name"))
            found.append((ref, legacy.get("arguments")))
    return with_unwrapped(found)


class StreamCollector:
    """Chat completion chunks: a call's name comes once, in the first delta for its index;
    later deltas carry only argument fragments (docs/providers.md §2)."""

    MAX_ARGUMENTS = 1024 * 1024

    def __init__(self) -> None:
        self.count = 0
        self.found: dict[tuple, tuple[NameRef, list[str]]] = {}

    def event(self, data: dict) -> None:
        index = self.count
        self.count += 1
        choices = data.get("choices")
        for i, choice in enumerate(choices if isinstance(choices, list) else []):
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            calls = delta.get("tool_calls")
            for j, call in enumerate(calls if isinstance(calls, list) else []):
                if isinstance(call, dict):
                    self._delta(
                        data,
                        choice.get("index", i),
                        call,
                        ("events", index, "choices", i, "delta", "tool_calls", j),
                        j,
                    )

    def _delta(
        self, data: dict, choice_index: object, call: dict, where: tuple, position: int
    ) -> None:
        key = (repr(choice_index), repr(call.get("index", position)))
        kind = "custom" if call.get("type") == "custom" else "function"
        inner = call.get(kind)
        if not isinstance(inner, dict):
            return
        if key not in self.found and isinstance(inner.get("name"), str):
            self.found[key] = (NameRef(inner["name"], (*where, kind, "name"), kind), [])
        fragment = inner.get("arguments")
        if key in self.found and isinstance(fragment, str):
            ref, parts = self.found[key]
            # Only a parallel wrapper's arguments are ever read; keep nothing else.
            if ref.name in PARALLEL_WRAPPERS and sum(map(len, parts)) < self.MAX_ARGUMENTS:
                parts.append(fragment)

    def calls(self) -> list[NameRef]:
        return with_unwrapped([(ref, "".join(parts)) for ref, parts in self.found.values()])


def wrapper_fragments(event: dict):
    """(call, starts a parallel wrapper, path, arguments fragment) of each call delta: a
    call's name comes in its first delta, its arguments in fragments after it."""
    choices = event.get("choices")
    for i, choice in enumerate(choices if isinstance(choices, list) else []):
        delta = choice.get("delta") if isinstance(choice, dict) else None
        calls = delta.get("tool_calls") if isinstance(delta, dict) else None
        for j, call in enumerate(calls if isinstance(calls, list) else []):
            inner = call.get("function") if isinstance(call, dict) else None
            if isinstance(inner, dict):
                key = (repr(choice.get("index", i)), repr(call.get("index", j)))
                path = ("choices", i, "delta", "tool_calls", j, "function", "arguments")
                yield key, inner.get("name") in PARALLEL_WRAPPERS, path, inner.get("arguments")


# What the functions above read, for the fast reader (formats/base.py Shapes): names,
# kinds, choices and roles; descriptions, schemas, message text and arguments are skipped,
# except a call's arguments in an answer (a parallel wrapper's are unwrapped).


class _Named(TypedDict, total=False):
    name: Any


class _Call(TypedDict, total=False):
    type: Any
    function: _Named
    custom: _Named


class _Message(TypedDict, total=False):
    role: Any
    name: Any
    tool_calls: list[_Call] | None
    function_call: Any


class _Request(TypedDict, total=False):
    stream: Any
    tools: list[_Call] | None
    functions: list[_Named] | None
    tool_choice: Any
    function_call: Any
    messages: list[_Message] | None


class _AnswerCall(TypedDict, total=False):
    index: Any
    type: Any
    function: Any
    custom: Any


class _AnswerMessage(TypedDict, total=False):
    tool_calls: list[_AnswerCall] | None
    function_call: Any


class _Choice(TypedDict, total=False):
    index: Any
    message: _AnswerMessage | None
    delta: _AnswerMessage | None


class _Answer(TypedDict, total=False):
    choices: list[_Choice] | None


SHAPES = Shapes(_Request, _Answer | list[_Answer], _Answer)

FORMAT = WireFormat(
    api=API,
    title="OpenAI Chat Completions",
    path=re.compile(r"/chat/completions\Z"),
    example_paths=(
        "/v1/chat/completions",
        "/v1/chat/completions/",
        "/api/v1/chat/completions",  # OpenRouter
        "/openai/v1/chat/completions",  # Groq, and the Azure v1 API
        "/compatibility/v1/chat/completions",  # Cohere's compatibility API
        "/v1beta/openai/chat/completions",  # Gemini's OpenAI-compatible endpoint
        # Azure (docs/providers.md §4): deployment-based URLs with api-version, and the v1 API.
        "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
        "/openai/deployments/my-deploy/chat/completions?api-version=2025-04-01-preview&x=1",
        "/openai/v1/chat/completions?api-version=preview",
    ),
    path_text=".../chat/completions",
    rule="openai",
    read_request=read_request,
    offer_keys=("tools", "functions"),
    # Two tool lists: a tool_choice names an entry of `tools`, a legacy function_call one of
    # `functions` (docs/providers.md §2); a name in the other list does not count.
    choice_lists={"tool_choice": "tools", "function_call": "functions"},
    # docs/providers.md §2: any tool_choice, "none" included, without `tools` is answered
    # "'tool_choice' is only allowed when 'tools' are specified."
    none_needs_tools=("tool_choice",),
    read_calls=read_calls,
    stream_collector=StreamCollector,
    framing=SSE,
    restore_event=lambda rewrite: wrapper_restore(rewrite, wrapper_fragments),
    shapes=SHAPES,
    block_response=block_response,
)
