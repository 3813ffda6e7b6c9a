"""What the OpenAI adapters share: the reader of function objects, and the parallel-call
wrapper (docs/providers.md §1.3).

A function object is ``{"type": kind, kind: {"name": ...}}``: Chat Completions' tools and
history calls, and Cohere's v2 chat, which writes them the same way (cohere_chat.py). The
formats differ only in which types carry a name, what a missing type means and what another
type is (``FunctionObjects``); ``read_function_tools`` and ``read_function_calls`` read them.

The wrapper: OpenAI's models dispatch parallel calls internally through a wrapper, which sometimes comes
back as a call of its own: ``multi_tool_use.parallel`` (vercel/ai PR #19098 saw it named
plain ``parallel``), its arguments a JSON text whose ``tool_uses`` name the calls inside as
``recipient_name: "functions.<name>"``. The Chat Completions and Responses adapters read
those inner calls; the response checks and the view say a wrapper is not a tool.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Iterator
from typing import NamedTuple

from toolnames_core import jsonsplice
from toolnames_core.aliases import FragmentRestorer
from toolnames_core.aliases import Restorer
from toolnames_core.findings import malformed
from toolnames_core.formats.base import read_once
from toolnames_core.model import Finding
from toolnames_core.model import JsonPath
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView

__all__ = [
    "PARALLEL_WRAPPERS",
    "FunctionObjects",
    "function_name",
    "read_function_calls",
    "read_function_tools",
    "is_parallel_wrapper",
    "unwrap_parallel",
    "with_unwrapped",
    "wrapper_restore",
]

PARALLEL_WRAPPERS = ("multi_tool_use.parallel", "parallel")


class FunctionObjects(NamedTuple):
    """How a format reads its function objects, ``{"type": kind, kind: {"name": ...}}``."""

    kinds: tuple[str, ...]  # the types whose object holds a name, at obj[kind]["name"]
    default: str | None  # the type of an object that says none (None: it must say one)
    # The finding for another type, given the path of "type" and its value; None: the object
    # is read as of type `default` (which then must be one of `kinds`).
    other: Callable[[JsonPath, object], Finding] | None
    empty: Finding | None = None  # the finding for ``tools: []``; None: the format takes it


def function_name(
    obj: object, where: JsonPath, view: RequestView, objects: FunctionObjects
) -> NameRef | None:
    """The name of the function object at ``where`` (``tools[0]``), or a finding saying why
    there is none."""
    if not isinstance(obj, dict):
        view.problems.append(malformed(where, "an object", obj))
        return None
    kind = obj.get("type", objects.default)
    if kind not in objects.kinds:
        if objects.other is not None:
            view.problems.append(objects.other((*where, "type"), kind))
            return None
        kind = objects.default
    inner = obj.get(kind)
    if not isinstance(inner, dict):
        view.problems.append(malformed((*where, kind), "an object", inner))
        return None
    name = inner.get("name")
    if not isinstance(name, str):
        view.problems.append(malformed((*where, kind, "name"), "a string", name))
        return None
    return NameRef(name, (*where, kind, "name"), kind)


def read_function_tools(tools: object, view: RequestView, objects: FunctionObjects) -> None:
    """A body's ``tools``, not None: each tool's name, or why it has none (read once for the
    same decoded list, ``base.read_once``)."""
    read_once(_read_tools, tools, view, objects)


def _read_tools(tools: object, view: RequestView, objects: FunctionObjects) -> None:
    view.tools_given = True
    if not isinstance(tools, list):
        view.problems.append(malformed(("tools",), "an array", tools))
    elif not tools and objects.empty is not None:
        view.problems.append(objects.empty)
    else:
        _read_each(tools, ("tools",), view.tools.append, view, objects)


def read_function_calls(
    calls: object, where: JsonPath, view: RequestView, objects: FunctionObjects
) -> None:
    """A history message's ``tool_calls`` at ``where``: each call's name, or why it has none."""
    if isinstance(calls, list):
        _read_each(calls, where, view.history.append, view, objects)
    elif calls is not None:
        view.problems.append(malformed(where, "an array", calls))


def _read_each(
    objs: list,
    where: JsonPath,
    append: Callable[[NameRef], None],
    view: RequestView,
    objects: FunctionObjects,
) -> None:
    kinds, default = objects.kinds, objects.default
    for i, obj in enumerate(objs):
        # The well-formed object, settled without a helper call: agents send hundreds.
        kind = obj.get("type", default) if type(obj) is dict else None
        inner = obj.get(kind) if kind in kinds else None
        name = inner.get("name") if type(inner) is dict else None
        if type(name) is str:
            append(NameRef(name, where + (i, kind, "name"), kind))
            continue
        ref = function_name(obj, (*where, i), view, objects)
        if ref:
            append(ref)


def unwrap_parallel(call: NameRef, arguments: object) -> list[NameRef]:
    """The calls inside a parallel wrapper; ``arguments`` is its JSON text (or parsed value)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return []
    uses = arguments.get("tool_uses") if isinstance(arguments, dict) else None
    if not isinstance(uses, list):
        return []
    base = (*call.where[:-1], "arguments", "tool_uses")
    inner = []
    for i, use in enumerate(uses):
        recipient = use.get("recipient_name") if isinstance(use, dict) else None
        if isinstance(recipient, str):
            name = recipient.removeprefix("functions.")
            inner.append(NameRef(name, (*base, i, "recipient_name"), "function"))
    return inner


def with_unwrapped(found: list[tuple[NameRef, object]]) -> list[NameRef]:
    """Each (call, arguments) as its call, followed by the calls inside a parallel wrapper."""
    out = []
    for ref, args in found:
        out.append(ref)
        if ref.name in PARALLEL_WRAPPERS:
            out += unwrap_parallel(ref, args)
    return out


def is_parallel_wrapper(name: str, offered_names: set[str]) -> bool:
    """OpenAI's wrapper, unless a tool of that name was offered (then it is that tool)."""
    return name in PARALLEL_WRAPPERS and name not in offered_names


# (an event) -> (its call's key, whether the call is a parallel wrapper starting, the path of
# an arguments fragment in the event, the fragment or None), for each call the event concerns.
WrapperFragments = Callable[[dict], Iterator[tuple[object, bool, JsonPath, object]]]
_WRAPPER_NAMES = tuple(f'"{name}"'.encode() for name in PARALLEL_WRAPPERS)


def _common_tail(items: tuple[bytes, ...]) -> bytes:
    tail = items[0]
    for item in items:
        while not item.endswith(tail):
            tail = tail[1:]
    return tail


# What every quoted wrapper name ends in (b'parallel"'): one C search rules them all out for
# nearly every event, where looking for each costs a generator's steps an event (issue 25).
_WRAPPER_TAIL = _common_tail(_WRAPPER_NAMES)


def wrapper_restore(rewrite: Callable[[bytes], bytes], fragments_of: WrapperFragments):
    """The event restore of a streamed OpenAI answer (formats/base.py ``EventRestore``): the
    restorer's, and the recipient names inside a parallel wrapper's arguments, which stream
    as fragments an alias may be split across (one ``_WrapperRestore`` per stream)."""
    if not isinstance(rewrite, Restorer):
        return rewrite
    return _WrapperRestore(rewrite, fragments_of)


# Lines held back at most (a name split one character per event is some 100 lines) while a
# wrapper's fragment ends where a name may begin; then they go on as they came.
_MAX_QUEUE = 4096
_ENDS = (b"[DONE]", b"arguments.done", b"output_item.done", b'"finish_reason":"')


class _Held(NamedTuple):
    line: bytes
    head: int  # where the event's JSON starts in the line
    text: str  # the event's JSON
    end: int  # where it ends
    fragments: dict  # {path: fragment} of the waiting call's arguments in this event


class _WrapperRestore:
    """A wrapper's fragment that ends where a recipient name may begin is held back, with
    every line after it, until the call's next fragment says whether an alias goes on there;
    then they go on, unchanged, or with the whole restored text in the first fragment and
    the others empty (the client joins them to the same text). Nothing else moves."""

    # As the Restorer's (streams.StreamTap): data without ``name`` comes back as it went in
    # while no wrapper is under way.
    needle = Restorer.needle

    def __init__(self, restorer: Restorer, fragments_of: WrapperFragments) -> None:
        self.restorer = restorer
        self.fragments_of = fragments_of
        self.names = FragmentRestorer(restorer)
        # The wrappers under way (their calls' keys), from the event that names one.
        self.under_way: set = set()
        self.queue: list[_Held] = []
        self.waiting: object = None

    def __call__(self, data: bytes) -> bytes:
        # The Restorer's own search, made once for both (find, not in, and the wrapper's
        # below: docs/performance.md); most events have no ``name`` and cost no call.
        at = data.find(b"name")
        if at != -1:
            data = self.restorer.restore_from(data, at)
        elif not self.under_way:
            # No wrapper under way, and none starts here: a wrapper starts in the event that
            # names it (``"name":"multi_tool_use.parallel"``), so data without ``name`` needs
            # no second search (a chunk's one search, where it had two: issue 25). A key
            # written with escapes (``"n\u0061me"``) is read as no wrapper, as a wrapper's
            # name so written always was.
            return data
        if not self.under_way and (
            data.find(_WRAPPER_TAIL) == -1 or not any(name in data for name in _WRAPPER_NAMES)
        ):
            return data  # no wrapper under way: nearly every event of nearly every stream
        return b"".join(self._line(line) for line in data.splitlines(True))

    def _line(self, line: bytes) -> bytes:
        held = self._read(line)
        if held is None:
            if not self.queue:
                return line
            held = _Held(line, 0, "", 0, {})
        self.queue.append(held)
        if held.fragments or not self.waiting_for():
            return self._resolve()
        if len(self.queue) > _MAX_QUEUE or any(end in line for end in _ENDS):
            return self._emit()
        return b""

    def waiting_for(self) -> bool:
        return self.waiting is not None

    def _read(self, line: bytes) -> _Held | None:
        if not line.startswith(b"data:"):
            return None
        head = 6 if line.startswith(b"data: ") else 5  # SSE takes one space after the colon
        body = line[head:].rstrip(b"\r\n")
        try:
            text = body.decode("utf-8")
            event = json.loads(text)
        except (ValueError, RecursionError):
            return None  # not one event's JSON: it goes on as it came
        if not isinstance(event, dict):
            return None
        fragments = {}
        for key, starts, path, fragment in self.fragments_of(event):
            if starts:
                self.under_way.add(key)
            wanted = self.waiting is None or key == self.waiting
            if key in self.under_way and isinstance(fragment, str) and wanted:
                self.waiting = key
                fragments[path] = fragment
        if not fragments:
            return None
        return _Held(line, head, text, head + len(body), fragments)

    def _resolve(self) -> bytes:
        text = "".join(f for held in self.queue for f in held.fragments.values())
        if self.names.ambiguous(text) and len(self.queue) <= _MAX_QUEUE:
            return b""  # the next fragment tells
        return self._emit()

    def _emit(self) -> bytes:
        queue, self.queue, self.waiting = self.queue, [], None
        text = "".join(f for held in queue for f in held.fragments.values())
        restored = self.names.restore(text)
        if restored == text:
            return b"".join(held.line for held in queue)
        out, first = [], True
        for held in queue:
            if not held.fragments:
                out.append(held.line)
                continue
            new = {}
            for path in held.fragments:
                new[path], first = (restored if first else ""), False
            spliced = jsonsplice.replace_values(held.text, new).encode()
            out.append(held.line[: held.head] + spliced + held.line[held.end :])
        return b"".join(out)
