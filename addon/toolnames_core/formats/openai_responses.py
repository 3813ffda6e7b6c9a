"""OpenAI Responses API, ``POST /v1/responses`` (docs/providers.md §3).

How this adapter maps the format onto the shared model:

- ``function`` and ``custom`` tools are offered by their top-level ``name`` (kinds "function"
  and "custom"). Tools in ``input[]`` items of type ``additional_tools`` are offered too,
  merged with the top-level ones, so a name declared in both is a duplicate.
- A ``namespace`` tool offers its inner tools by their own names: a call to one carries
  ``name`` and ``namespace`` as separate fields (vercel/ai PR #14789; Codex routes on both),
  and ``ToolChoiceFunction`` has only ``name``, so a named choice or allow-list entry matches
  an inner tool by its bare name. The same bare name inside two different namespaces (or
  in one namespace and at the top level) names two different tools, so only the first
  occurrence goes into the view: the shared duplicate check keys by name alone. Repeats in
  the same scope are kept and reported as duplicates.
- The namespace's own name follows the spec's fixed rule for it (``^[a-zA-Z0-9_-]+$``,
  at most 64), whatever rule the request is checked under: it never reaches another
  provider as a name. Findings for it use the usual name-* codes.
- Built-in tools are offered by type (kind "builtin", name = the type, ``where`` at the
  ``type`` value): ``{"type": "web_search_preview"}`` needs a tool of that type. Dated
  variants also offer their family name (see ``_BUILTIN_FAMILIES``). MCP tools are told
  apart by server: an ``mcp`` tool is the builtin ``mcp:<server_label>`` (``where`` at the
  label), and so is a ``{"type": "mcp", "server_label": ...}`` choice. A namespace is also
  the builtin ``namespace:<name>``, for allow-list entries that name one.
- History is ``input[]`` items of type ``function_call`` and ``custom_tool_call`` (their
  ``name``, and ``namespace`` under the namespace rule). ``function_call_output.name`` and
  ``tool_search_output`` items are not read (the first repeats a call's name; the second
  re-lists tools already declared with ``defer_loading``).

Response side: ``function_call`` / ``custom_tool_call`` items of ``output[]``; a call that
names a ``namespace`` must name a tool offered inside that namespace (``view.namespaced``),
one without is matched by its bare name. Streams are read from
``response.output_item.added`` / ``.done``, ``response.function_call_arguments.done`` and the
final ``response.completed`` (or ``.incomplete`` / ``.failed``) ``response.output``; one call
per ``output_index``. A stream call's ``where`` starts ``("events", n)``, n counting the
events given to the collector from 0, as the chat collector does: ``events[2].item.name``.
"""

from __future__ import annotations

import re
from collections import Counter
from operator import itemgetter
from typing import Any
from typing import NamedTuple
from typing import TypedDict

from toolnames_core import codes
from toolnames_core.findings import bad_choice
from toolnames_core.findings import malformed
from toolnames_core.findings import shown
from toolnames_core.findings import type_name
from toolnames_core.formats.base import Shapes
from toolnames_core.formats.base import WireFormat
from toolnames_core.formats.base import read_once
from toolnames_core.formats.openai_chat import block_response
from toolnames_core.formats.openai_chat import read_string_choice
from toolnames_core.formats.openai_common import PARALLEL_WRAPPERS
from toolnames_core.formats.openai_common import with_unwrapped
from toolnames_core.formats.openai_common import wrapper_restore
from toolnames_core.framings import SSE
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import format_path
from toolnames_core.names import describe_name
from toolnames_core.rules import NameRule
from toolnames_core.rules import name_violations

API = "openai-responses"
_TOOL_KINDS = ("function", "custom")
_CALL_KINDS = {"function_call": "function", "custom_tool_call": "custom"}

# docs/providers.md §3: NamespaceToolParam.name / FunctionCallOutputItemParam.namespace are
# "maxLength 64, pattern ^[a-zA-Z0-9_-]+$" in the spec.
NAMESPACE_RULE = NameRule("openai-namespace", "a-zA-Z0-9_-", 64, source="docs/providers.md §3")

# Hosted tool types a choice may name by another member of the family: ToolChoiceTypes lists
# the dated and undated web_search_preview and three computer spellings, while a tool of each
# family is declared with one of them (openai types/responses/tool_choice_types_param.py).
# Which spelling the server pairs with which is not documented, so any member matches any
# other: a missed finding costs less than blocking a request the API would take.
_BUILTIN_FAMILIES = (
    ("web_search_preview", "web_search_preview_2025_03_11"),
    ("web_search", "web_search_2025_08_26"),
    ("computer", "computer_use_preview", "computer_use"),
)
_FAMILY = {member: family for family in _BUILTIN_FAMILIES for member in family}


def _problem(code: str, where: tuple, message: str, rule: str | None = None) -> Finding:
    return Finding(code, "error", format_path(where), message, rule)


def _fixed_rule_problems(
    name: str, where: tuple, view: RequestView, code: str | None = None
) -> None:
    """Check a namespace name under NAMESPACE_RULE; ``code`` replaces the name-* codes (history)."""
    path = format_path(where)
    tail = "; providers reject the whole request for it" if code else ""
    for violation, reason in name_violations(name, NAMESPACE_RULE):
        message = f"{path} namespace {describe_name(name)} {reason}{tail}"
        view.problems.append(_problem(code or violation, where, message, NAMESPACE_RULE.id))


class _Offers:
    """The tools a request offers, gathered from ``tools`` and ``additional_tools`` items."""

    def __init__(self, view: RequestView) -> None:
        self.view = view
        self.named: list[tuple[NameRef, str | None]] = []  # (tool, namespace or None)
        self.builtins: list[NameRef] = []
        self.namespaces: dict[str, list[str]] = {}

    def take(self, offered: _Offered) -> None:
        """Add what a list of tools was read to offer, into lists of this request's own."""
        self.named += offered.named
        self.builtins += offered.builtins
        for name, paths in offered.namespaces.items():
            self.namespaces.setdefault(name, []).extend(paths)

    def read_list(self, tools: object, where: tuple) -> None:
        if not isinstance(tools, list):
            self.view.problems.append(malformed(where, "an array", tools))
            return
        for k, tool in enumerate(tools):
            self.read_tool(tool, (*where, k))

    def read_tool(self, tool: object, where: tuple) -> None:
        view = self.view
        if not isinstance(tool, dict):
            view.problems.append(malformed(where, "an object", tool))
            return
        kind = tool.get("type")
        if kind in _TOOL_KINDS:
            ref = _tool_name(tool, where, kind, view)
            if ref:
                self.named.append((ref, None))
        elif kind == "namespace":
            self.read_namespace(tool, where)
        elif kind == "mcp":
            label = tool.get("server_label")
            if isinstance(label, str):
                self.builtins.append(NameRef(f"mcp:{label}", (*where, "server_label"), "builtin"))
            else:
                view.problems.append(malformed((*where, "server_label"), "a string", label))
        elif isinstance(kind, str) and kind:
            self.builtins.append(NameRef(kind, (*where, "type"), "builtin"))
            for alias in _FAMILY.get(kind, ()):
                if alias != kind:
                    self.builtins.append(NameRef(alias, (*where, "type"), "builtin"))
        else:
            path = format_path((*where, "type"))
            view.problems.append(
                _problem(
                    codes.TOOL_MALFORMED,
                    (*where, "type"),
                    f'{path} is {shown(kind)}, expected a tool type such as "function"',
                )
            )

    def read_namespace(self, tool: dict, where: tuple) -> None:
        view = self.view
        name = tool.get("name")
        scope = name
        if isinstance(name, str):
            _fixed_rule_problems(name, (*where, "name"), view)
            self.namespaces.setdefault(name, []).append(format_path((*where, "name")))
            self.builtins.append(NameRef(f"namespace:{name}", (*where, "name"), "builtin"))
        else:
            view.problems.append(malformed((*where, "name"), "a string", name))
            scope = format_path(where)  # a scope of its own: its tools clash with nobody's
        inner = tool.get("tools")
        if not isinstance(inner, list):
            view.problems.append(malformed((*where, "tools"), "an array", inner))
            return
        for j, member in enumerate(inner):
            at = (*where, "tools", j)
            kind = member.get("type") if isinstance(member, dict) else None
            if not isinstance(member, dict):
                view.problems.append(malformed(at, "an object", member))
            elif kind not in _TOOL_KINDS:
                path = format_path((*at, "type"))
                view.problems.append(
                    _problem(
                        codes.TOOL_MALFORMED,
                        (*at, "type"),
                        f'{path} is {shown(kind)}, expected "function" or "custom" inside a namespace',
                    )
                )
            else:
                ref = _tool_name(member, at, kind, view)
                if ref:
                    ref.namespace = name if isinstance(name, str) else None
                    self.named.append((ref, scope))

    def finish(self) -> None:
        """Fill the view: one entry per (namespace, name), plus true duplicates."""
        if not self.namespaces and set(map(itemgetter(1), self.named)) <= {None}:
            # No namespace, as in most requests: every tool is in the one scope, and kept.
            self.view.tools += map(itemgetter(0), self.named)
            self.view.tools += self.builtins
            return
        self.view.namespaced = {
            (ref.namespace, ref.name) for ref, _ in self.named if ref.namespace is not None
        }
        count = Counter((scope, ref.name) for ref, scope in self.named)
        first_scope: dict[str, str | None] = {}
        for ref, scope in self.named:
            first_scope.setdefault(ref.name, scope)
        for ref, scope in self.named:
            if scope == first_scope[ref.name] or count[(scope, ref.name)] > 1:
                self.view.tools.append(ref)
        self.view.tools += self.builtins
        for name, paths in self.namespaces.items():
            if len(paths) > 1:
                self.view.problems.append(
                    Finding(
                        codes.NAME_DUPLICATE,
                        "warning",
                        paths[1],
                        f"namespace {describe_name(name)} is declared {len(paths)} times ({', '.join(paths)})",
                    )
                )


class _Offered(NamedTuple):
    """What the request's ``tools`` offer, as ``_Offers`` gathered them."""

    named: list[tuple[NameRef, str | None]]
    builtins: list[NameRef]
    namespaces: dict[str, list[str]]


def _read_offered(tools: object, view: RequestView) -> _Offered:
    """What ``tools`` offer, their problems added to ``view``: read once for the same decoded
    list (the fast reader hands it again for the same bytes, ``base.read_once``)."""
    offers = _Offers(view)
    offers.read_list(tools, ("tools",))
    return _Offered(offers.named, offers.builtins, offers.namespaces)


def _tool_name(tool: dict, where: tuple, kind: str, view: RequestView) -> NameRef | None:
    name = tool.get("name")
    if isinstance(name, str):
        return NameRef(name, (*where, "name"), kind)
    if name is None and isinstance(tool.get(kind), dict):
        path = format_path(where)
        view.problems.append(
            _problem(
                codes.TOOL_MALFORMED,
                (*where, "name"),
                f'{path} has the Chat Completions shape {{"type": "{kind}", "{kind}": {{"name": ...}}}}; '
                f"the Responses API wants the name at {path}.name",
            )
        )
    else:
        view.problems.append(malformed((*where, "name"), "a string", name))
    return None


def _entry(value: object, where: tuple, view: RequestView) -> NameRef | None:
    """The tool a named choice or an allow-list entry points at, or None with a problem."""
    if not isinstance(value, dict):
        view.problems.append(bad_choice(where, value, f"is {type_name(value)}, expected an object"))
        return None
    kind = value.get("type")
    if kind in _TOOL_KINDS:
        name = value.get("name")
        if isinstance(name, str):
            return NameRef(name, (*where, "name"), kind)
        if isinstance(value.get(kind), dict):
            why = f'this is the Chat Completions shape; the Responses API wants {{"type": "{kind}", "name": ...}}'
        else:
            why = f'a "{kind}" choice needs {{"type": "{kind}", "name": "<tool name>"}}'
        view.problems.append(bad_choice(where, value, why))
        return None
    if kind == "mcp":
        label = value.get("server_label")
        if isinstance(label, str):
            # The tool name inside the server, if any, is the server's business.
            return NameRef(f"mcp:{label}", (*where, "server_label"), "builtin")
        view.problems.append(
            bad_choice(where, value, 'an "mcp" choice needs {"server_label": "<label>"}')
        )
        return None
    if kind == "namespace" and isinstance(value.get("name"), str):
        return NameRef(f"namespace:{value['name']}", (*where, "name"), "builtin")
    if kind == "tool":
        if "toolName" in value:
            why = "the AI SDK's internal tool choice leaked through; the API does not accept it"
        else:
            why = 'this is the Anthropic shape; the Responses API wants {"type": "function", "name": ...}'
        view.problems.append(bad_choice(where, value, why))
        return None
    if isinstance(kind, str) and kind and kind not in ("allowed_tools", "namespace"):
        return NameRef(kind, (*where, "type"), "builtin")
    view.problems.append(
        bad_choice(
            where, value, 'expected type "function", "custom", "mcp" or a built-in tool type'
        )
    )
    return None


def _read_tool_choice(value: object, view: RequestView) -> None:
    where = ("tool_choice",)
    if isinstance(value, str):
        read_string_choice(value, where, view)
        return
    if isinstance(value, dict) and value.get("type") == "allowed_tools":
        _read_allowed(value, view)
        return
    ref = _entry(value, where, view)
    if ref:
        view.choices.append(Choice("named", where, (ref,)))


def _read_allowed(value: dict, view: RequestView) -> None:
    # {"type": "allowed_tools", "mode": ..., "tools": [...]}: flat, unlike Chat Completions.
    where = ("tool_choice",)
    tools = value.get("tools")
    if not isinstance(tools, list) or value.get("mode") not in ("auto", "required"):
        why = 'expected {"type": "allowed_tools", "mode": "auto" | "required", "tools": [...]}'
        view.problems.append(bad_choice(where, value, why))
        return
    names = []
    for k, entry in enumerate(tools):
        ref = _entry(entry, (*where, "tools", k), view)
        if ref:
            names.append(ref)
    view.choices.append(Choice("allowed", where, tuple(names)))


def _read_input(items: object, offers: _Offers, view: RequestView) -> None:
    if isinstance(items, str) or items is None:
        return  # a plain prompt, or no input at all
    if not isinstance(items, list):
        return  # not ours to judge: the provider rejects it with a better message
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "additional_tools":
            view.tools_given = True
            offers.read_list(item.get("tools"), ("input", i, "tools"))
        elif isinstance(kind, str) and kind in _CALL_KINDS:
            name = item.get("name")
            if isinstance(name, str):
                view.history.append(NameRef(name, ("input", i, "name"), _CALL_KINDS[kind]))
            else:
                view.problems.append(malformed(("input", i, "name"), "a string", name))
            namespace = item.get("namespace")
            if isinstance(namespace, str):
                _fixed_rule_problems(
                    namespace, ("input", i, "namespace"), view, codes.HISTORY_NAME_INVALID
                )


def read_request(body: dict) -> RequestView:
    view = RequestView(API, streaming=body.get("stream") is True)
    offers = _Offers(view)
    if body.get("tools") is not None:
        view.tools_given = True
        offers.take(read_once(_read_offered, body["tools"], view))
    _read_input(body.get("input"), offers, view)
    offers.finish()
    if body.get("tool_choice") is not None:
        _read_tool_choice(body["tool_choice"], view)
    return view


# --- response side ---


def _item_call(item: object, where: tuple) -> tuple[NameRef, object] | None:
    """(call, arguments) of an output item that calls a function or custom tool."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    kind = item.get("type")
    kind = _CALL_KINDS.get(kind) if isinstance(kind, str) else None
    if kind is None:
        return None
    namespace = item.get("namespace")
    namespace = namespace if isinstance(namespace, str) else None
    return NameRef(item["name"], (*where, "name"), kind, namespace), item.get("arguments")


def read_calls(body: dict) -> list[NameRef]:
    output = body.get("output")
    found = []
    for i, item in enumerate(output if isinstance(output, list) else []):
        call = _item_call(item, ("output", i))
        if call:
            found.append(call)
    return with_unwrapped(found)


_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


class StreamCollector:
    """Responses stream events: each output item is announced by ``response.output_item.added``
    (name included), repeated whole by ``.done`` and again in the final response, so calls are
    keyed by ``output_index`` (by item id when an event has none) and counted once."""

    MAX_ARGUMENTS = 1024 * 1024

    def __init__(self) -> None:
        self.count = 0
        self.found: dict[object, NameRef] = {}
        self.ids: dict[str, object] = {}  # item id -> key
        self.arguments: dict[object, str] = {}  # wrapper calls only
        self.deltas: dict[object, list[str]] = {}

    def event(self, data: dict) -> None:
        n = self.count
        self.count += 1
        if not isinstance(data, dict):
            return
        kind = data.get("type")
        if kind in ("response.output_item.added", "response.output_item.done"):
            item = data.get("item")
            item_id = item.get("id") if isinstance(item, dict) else None
            self._item(self._key(data.get("output_index"), item_id), item, ("events", n, "item"))
        elif kind == "response.function_call_arguments.done":
            key = self._key(data.get("output_index"), data.get("item_id"))
            name = data.get("name")
            if key not in self.found and isinstance(name, str):
                self.found[key] = NameRef(name, ("events", n, "name"), "function")
            self._arguments(key, data.get("arguments"))
        elif kind == "response.function_call_arguments.delta":
            key = self._key(data.get("output_index"), data.get("item_id"))
            delta = data.get("delta")
            ref = self.found.get(key)
            # Only a parallel wrapper's arguments are ever read; keep nothing else.
            if ref and ref.name in PARALLEL_WRAPPERS and isinstance(delta, str):
                parts = self.deltas.setdefault(key, [])
                if sum(map(len, parts)) < self.MAX_ARGUMENTS:
                    parts.append(delta)
        elif kind in _FINAL_EVENTS:
            response = data.get("response")
            output = response.get("output") if isinstance(response, dict) else None
            for i, item in enumerate(output if isinstance(output, list) else []):
                item_id = item.get("id") if isinstance(item, dict) else None
                self._item(self._key(i, item_id), item, ("events", n, "response", "output", i))

    def _key(self, output_index: object, item_id: object) -> object:
        """The item's key: its id's first key if the id was seen, else its output_index."""
        has_id = isinstance(item_id, str)
        if has_id and item_id in self.ids:
            return self.ids[item_id]
        if isinstance(output_index, int) and not isinstance(output_index, bool):
            key: object = ("index", output_index)
        elif has_id:
            key = ("id", item_id)
        else:
            return ("event", self.count)  # nothing to match it by: a call of its own
        if has_id:
            self.ids[item_id] = key
        return key

    def _item(self, key: object, item: object, where: tuple) -> None:
        call = _item_call(item, where)
        if call is None:
            return
        ref, args = call
        known = self.found.get(key)
        # The first name wins; an empty one gives way to a real one announced later.
        if known is None or (known.name == "" and ref.name):
            self.found[key] = ref
        self._arguments(key, args)

    def _arguments(self, key: object, args: object) -> None:
        ref = self.found.get(key)
        if ref and ref.name in PARALLEL_WRAPPERS and isinstance(args, str) and args:
            self.arguments[key] = args[: self.MAX_ARGUMENTS]

    def calls(self) -> list[NameRef]:
        found = []
        for key, ref in self.found.items():
            args = self.arguments.get(key)
            if args is None:
                args = "".join(self.deltas.get(key, ()))
            found.append((ref, args))
        return with_unwrapped(found)


# What the functions above read, for the fast reader (formats/base.py Shapes): tools by
# type, name and server label (a namespace's tools too), call items in input and output,
# the choice; schemas, text and the input's other items are skipped. A call's arguments
# in an answer are read (a parallel wrapper's are unwrapped).


class _Tool(TypedDict, total=False):
    type: Any
    name: Any
    server_label: Any
    function: Any
    custom: Any
    tools: list[_Tool] | None


class _Item(TypedDict, total=False):
    type: Any
    name: Any
    namespace: Any
    tools: list[_Tool] | None


class _Request(TypedDict, total=False):
    stream: Any
    tools: list[_Tool] | None
    input: list[_Item] | str | None
    tool_choice: Any


class _OutputItem(TypedDict, total=False):
    id: Any
    type: Any
    name: Any
    namespace: Any
    arguments: Any


class _Answer(TypedDict, total=False):
    output: list[_OutputItem] | None


class _Event(TypedDict, total=False):
    type: Any
    item: _OutputItem | None
    output_index: Any
    item_id: Any
    name: Any
    arguments: Any
    delta: Any
    response: _Answer | None


SHAPES = Shapes(_Request, _Answer | list[_Answer], _Event)


def wrapper_fragments(event: dict):
    """A wrapper starts with its output item; its arguments stream in delta events."""
    kind = event.get("type")
    if kind == "response.output_item.added":
        item = event.get("item")
        if isinstance(item, dict) and item.get("type") == "function_call":
            yield item.get("id"), item.get("name") in PARALLEL_WRAPPERS, (), None
    elif kind == "response.function_call_arguments.delta":
        yield event.get("item_id"), False, ("delta",), event.get("delta")


FORMAT = WireFormat(
    api=API,
    title="OpenAI Responses",
    path=re.compile(r"/responses\Z"),
    example_paths=(
        "/v1/responses",
        "/openai/v1/responses",
        "/openai/deployments/gpt-4o/responses?api-version=2025-03-01-preview",
    ),
    path_text=".../responses",
    rule="openai",
    read_request=read_request,
    offer_keys=("tools",),
    read_calls=read_calls,
    stream_collector=StreamCollector,
    framing=SSE,
    restore_event=lambda rewrite: wrapper_restore(rewrite, wrapper_fragments),
    shapes=SHAPES,
    block_response=block_response,
)
