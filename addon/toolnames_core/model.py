"""Plain data shared by the adapters, the checks and the fixes."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from operator import is_
from typing import Literal
from typing import NamedTuple

from toolnames_core.names import quote_name

Severity = Literal["error", "warning", "info"]
JsonPath = tuple[str | int, ...]

SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


def count_text(severities: Iterable[str]) -> str:
    """``2 errors, 1 warning``; ``none`` when there are none."""
    counts = Counter(severities)
    parts = [
        f"{counts[s]} {s}{'s' if counts[s] > 1 else ''}"
        for s in ("error", "warning", "info")
        if counts[s]
    ]
    return ", ".join(parts) or "none"


def format_path(where: JsonPath) -> str:
    """Render a key path the way providers print it: ``tools[3].function.name``."""
    # Every finding, fix and record shows paths, and a request's paths come again with the
    # next request: each is rendered once. Paths hold member names and array indices, never
    # booleans (which, as dict keys, would be taken for the indices 0 and 1).
    shown = _shown_paths.get(where)
    if shown is None:
        if len(_shown_paths) >= _MAX_SHOWN_PATHS:
            _shown_paths.clear()  # bounded: a client sending ever new paths starts it over
        shown = _shown_paths[where] = _format_path(where)
    return shown


_shown_paths: dict[JsonPath, str] = {}
_MAX_SHOWN_PATHS = 8192


def _format_path(where: JsonPath) -> str:
    out = ""
    for key in where:
        if isinstance(key, int):
            out += f"[{key}]"
        else:
            out += f".{key}" if out else key
    return out


@dataclass(slots=True)
class NameRef:
    """A tool name found in a body, and where it sits."""

    name: str
    where: JsonPath
    # "function" and "custom" tools share one namespace; built-in tools
    # (web_search_preview, ...) are offered and chosen by their type.
    kind: str = "function"
    # The Responses API's namespace of a call or a tool inside a ``namespace`` tool.
    namespace: str | None = None

    @property
    def path(self) -> str:
        return format_path(self.where)


class ToolSet:
    """A request's tools as what they are, name, place, kind and namespace of each, and
    what the checks and fix mode made of them alone (``derived``, by the caller's key). An
    agent sends the same tools with every request: fix mode's findings and aliases for its
    tools are made once, where they cost a Python step per tool every time."""

    __slots__ = ("names", "wheres", "kinds", "namespaces", "derived")

    def __init__(self, names: tuple, wheres: tuple, kinds: tuple, namespaces: tuple) -> None:
        self.names = names
        self.wheres = wheres
        self.kinds = kinds
        self.namespaces = namespaces
        # Values no caller changes (tuples, frozen records, dicts only read or copied): every
        # request with these tools shares them. Keyed by what made them and the rule's id,
        # holding the rule itself (a frozen rule hashes every field; another of the same id
        # replaces it).
        self.derived: dict[tuple, tuple] = {}

    def remembered(self, key: tuple, rule: object) -> object | None:
        """What ``derived`` holds under ``key`` for this very ``rule`` object, or None."""
        entry = self.derived.get(key)
        return entry[1] if entry is not None and entry[0] is rule else None

    def remember(self, key: tuple, rule: object, value: object) -> None:
        if len(self.derived) >= _MAX_DERIVED:
            self.derived.clear()  # bounded: more rules than any deployment uses
        self.derived[key] = (rule, value)


def _moved(ref: NameRef, prefix: JsonPath) -> NameRef:
    return dataclasses.replace(ref, where=(*prefix, *ref.where))


def tool_set(tools: list[NameRef]) -> ToolSet:
    """The ``ToolSet`` of ``tools``, the one remembered when the same names sit at the same
    places with the same kinds and namespaces."""
    if len(tools) < _LAST_TOOL_SET_FROM:
        return _tool_set_of(tools)  # a few tools: their tuples cost less than the check
    global _last_tool_set
    last = _last_tool_set
    # The very refs of the last call (an adapter shares them between the views of requests
    # that sent the same tools, formats/base.py read_once, and no ref is changed once read):
    # told in C, where the tuples below cost a Python step per tool.
    if last is not None and len(tools) == len(last.refs) and all(map(is_, tools, last.refs)):
        return last.tools
    known = _tool_set_of(tools)
    _last_tool_set = _LastToolSet(list(tools), known)
    return known


class _LastToolSet(NamedTuple):
    refs: list[NameRef]
    tools: ToolSet


_last_tool_set: _LastToolSet | None = None
_LAST_TOOL_SET_FROM = 8


def _tool_set_of(tools: list[NameRef]) -> ToolSet:
    # List comprehensions, not map(attrgetter(...)): the interpreter's specialised slot
    # reads make them twice as fast (measured on Python 3.13, 1,000 tools).
    names = tuple([t.name for t in tools])
    wheres = tuple([t.where for t in tools])
    kinds = tuple([t.kind for t in tools])
    namespaces = tuple([t.namespace for t in tools])
    global _tools_held
    known = _tool_sets.get(names)
    if known is not None:
        if known.wheres == wheres and known.kinds == kinds and known.namespaces == namespaces:
            return known
        # The same names elsewhere: what was made of the old places is dropped, not reused.
        del _tool_sets[names]
        _tools_held -= len(names)
    # Bounded by tools held (what each holds grows with its tools): a client sending ever
    # new tools pushes the oldest out.
    while _tool_sets and (
        len(_tool_sets) >= _MAX_TOOL_SETS or _tools_held + len(names) > _MAX_TOOLS_HELD
    ):
        _tools_held -= len(_tool_sets.pop(next(iter(_tool_sets))).names)
    known = _tool_sets[names] = ToolSet(names, wheres, kinds, namespaces)
    _tools_held += len(names)
    return known


_tool_sets: dict[tuple, ToolSet] = {}
_tools_held = 0
_MAX_TOOL_SETS = 64
_MAX_TOOLS_HELD = 8192
_MAX_DERIVED = 32


@dataclass(frozen=True, slots=True)
class Choice:
    """A tool choice: what it forces or allows, by name."""

    mode: str  # none | auto | required | named | allowed
    where: JsonPath
    names: tuple[NameRef, ...] = ()
    # The choice as the client sent it, short JSON (``"required"``, ``{"type": "any"}``):
    # messages name what was sent, not the mode it maps to. Shown, never compared.
    sent: str = field(default="", compare=False)

    @property
    def path(self) -> str:
        return format_path(self.where)


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    path: str
    message: str
    rule: str | None = None
    # For a WebSocket session: the index of the message it concerns in the flow's messages.
    message_index: int | None = None

    def moved_under(self, prefix: JsonPath) -> Finding:
        """The finding of a body that sits at ``prefix`` in the body sent, pathed from the
        top: its path and, where its message names that path, the message too."""
        top = format_path(prefix)
        path = f"{top}.{self.path}" if self.path else top
        message = self.message.replace(self.path, path, 1) if self.path else self.message
        return dataclasses.replace(self, path=path, message=message)

    def to_dict(self) -> dict:
        d = {
            "code": self.code,
            "severity": self.severity,
            "path": self.path,
            "message": self.message,
        }
        if self.rule:
            d["rule"] = self.rule
        if self.message_index is not None:
            d["message_index"] = self.message_index
        return d


@dataclass(frozen=True, slots=True)
class Fix:
    """One rewritten name: the client's value, what it became, and why."""

    where: JsonPath
    old: str
    new: str
    rewrite: str

    @property
    def path(self) -> str:
        return format_path(self.where)

    def to_dict(self) -> dict:
        return {"path": self.path, "from": self.old, "to": self.new, "rewrite": self.rewrite}


class SkippedFix(NamedTuple):
    """A mismatched name fix mode left as sent, and why: shown so the user can fix the client."""

    path: str
    name: str
    reason: str

    def to_dict(self) -> dict:
        return {"path": self.path, "name": self.name, "reason": self.reason}

    @property
    def text(self) -> str:
        """``'Search.Web' could be 'Search_Web' (mastra) or 'search_web' (openai-agents)``:
        the reason reads on from the name."""
        return f"{quote_name(self.name)} {self.reason}"


@dataclass(slots=True)
class RequestView:
    """What a request offers, forces and remembers, whatever its wire format."""

    api: str
    tools: list[NameRef] = field(default_factory=list)
    tools_given: bool = False
    choices: list[Choice] = field(default_factory=list)
    history: list[NameRef] = field(default_factory=list)
    # Shapes the adapter could not read: reported, never guessed around.
    problems: list[Finding] = field(default_factory=list)
    streaming: bool = False
    # (namespace, name) of every tool offered inside a namespace (Responses API): a call
    # that names a namespace must name one of these. ``tools`` keys by bare name only.
    namespaced: set[tuple[str, str]] = field(default_factory=set)
    # Requests a batch carries, each checked alone (tools, choices and history are every
    # part's too, pathed inside the batch, so that fix mode renames them all).
    parts: list[RequestView] = field(default_factory=list)

    def move_under(self, prefix: JsonPath) -> None:
        """Path what the view holds from ``prefix``: the view of a body that sits there in the
        body sent (a batch's params, a carried body). A view with parts is not moved: its
        parts share their names with it. Its refs are made anew, moved: an adapter may share
        a ref between the views of requests that sent the same tools."""
        self.tools = [_moved(ref, prefix) for ref in self.tools]
        self.history = [_moved(ref, prefix) for ref in self.history]
        choices = []
        for choice in self.choices:
            choices.append(
                dataclasses.replace(
                    choice,
                    where=(*prefix, *choice.where),
                    names=tuple(_moved(ref, prefix) for ref in choice.names),
                )
            )
        self.choices = choices
        self.problems = [problem.moved_under(prefix) for problem in self.problems]

    @property
    def offered_names(self) -> set[str]:
        return {t.name for t in self.tools if t.kind != "builtin"}

    @property
    def offered_builtins(self) -> set[str]:
        return {t.name for t in self.tools if t.kind == "builtin"}
