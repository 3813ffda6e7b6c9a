"""The provider's own verdict: which tool name or tool choice an error answer rejected.

A provider that rejects a request names what it rejected in its own way: OpenAI in a
``param`` and an ``Invalid 'tools[0].function.name'`` text, Anthropic as a pydantic location
(``tools.0.custom.name: String should …``), Gemini as ``* tools[0].function_declarations[3].name:``
lines, Bedrock as ``Value '…' at 'toolConfig.tools.1.member.toolSpec.name' failed to satisfy
constraint``, and OpenAI-compatible servers in texts of their own. ``read_rejections`` finds
those places in an error body and ties each to the name the request sent there, from the
request's view; what it cannot tie is kept with the provider's text, and never guessed.
Every text read here is quoted, with its source, in docs/providers.md §20.

Pure: bytes and the request's view in, ``Rejection`` records out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING
from typing import NamedTuple

from toolnames_core.model import JsonPath
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView

if TYPE_CHECKING:  # for the annotation only
    from toolnames_core.formats import WireFormat

__all__ = ["REJECTING_STATUSES", "Rejection", "read_rejections"]

# A provider rejects a malformed request with 400 (422 for pydantic servers such as
# Mistral's). 401, 403, 404, 413, 429 and 5xx are about keys, models, size, quota or the
# server, never a tool name (docs/providers.md §20).
REJECTING_STATUSES = frozenset({400, 422})
# The provider's text is quoted in findings and logs: one line, this long at most.
TEXT_LIMIT = 300
# What is read of an error body: provider errors are short, a body this long is not one.
BODY_LIMIT = 256 * 1024


class Rejection(NamedTuple):
    """One thing the provider rejected. ``path`` is where in the request, as toolnames
    prints paths when ``tied``, else as the provider printed it ("" when it named none);
    ``name`` is the name sent there (None when there is none or it is unknown)."""

    path: str
    name: str | None
    provider_text: str
    tied: bool
    # "tool", "history" or "choice" when tied: rule findings are about the first two.
    place: str = ""


# -- the provider's messages --------------------------------------------------------------------


class _Message(NamedTuple):
    text: str
    param: str | None = None


def _messages(value: object, depth: int = 0) -> Iterator[_Message]:
    """Every error message in an error body, in the shapes providers use (§20)."""
    if depth > 6:
        return
    if isinstance(value, list):
        for item in value[:50]:
            yield from _messages(item, depth + 1)
        return
    if not isinstance(value, dict):
        return
    error = value.get("error")
    if isinstance(error, str):
        yield from _text_or_json(error, depth)  # LM Studio, Ollama: {"error": "..."}
    elif isinstance(error, dict):
        yield from _messages(error, depth + 1)
    for key in ("message", "Message"):
        text = value.get(key)
        if isinstance(text, str):
            param = value.get("param")
            yield from _text_or_json(text, depth, param if isinstance(param, str) else None)
        elif isinstance(text, list):
            yield from _details(text)  # Mistral repeats its pydantic details under "message"
    detail = value.get("detail")
    if isinstance(detail, str):
        yield _Message(detail)
    elif isinstance(detail, list):
        yield from _details(detail)
    for key in ("errors", "details"):
        if isinstance(value.get(key), list):
            yield from _messages(value[key], depth + 1)
    violations = value.get("fieldViolations") if depth else None  # Gemini's BadRequest details
    for violation in violations if isinstance(violations, list) else ():
        if isinstance(violation, dict) and isinstance(violation.get("description"), str):
            field = violation.get("field")
            yield _Message(violation["description"], field if isinstance(field, str) else None)
    if isinstance(value.get("description"), str) and depth:
        yield _Message(value["description"])
    metadata = value.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("raw"), str):
        yield from _text_or_json(metadata["raw"], depth)  # OpenRouter: the upstream's body


def _text_or_json(text: str, depth: int, param: str | None = None) -> Iterator[_Message]:
    # A gateway may carry the upstream's whole error body as the text of its own.
    if text.lstrip()[:1] in ("{", "["):
        try:
            yield from _messages(json.loads(text), depth + 1)
            return
        except (ValueError, RecursionError):
            pass
    yield _Message(text, param)


def _details(items: list) -> Iterator[_Message]:
    """pydantic / FastAPI ``detail`` entries: ``{"loc": [...], "msg": ...}``."""
    for item in items[:50]:
        if isinstance(item, dict) and isinstance(item.get("msg"), str):
            loc = item.get("loc")
            keys = [k for k in loc if isinstance(k, str | int)] if isinstance(loc, list) else []
            yield _Message(item["msg"], ".".join(str(k) for k in keys) or None)


def provider_messages(content: bytes) -> list[_Message]:
    """The error messages in a body, JSON or not, each once."""
    raw = content[:BODY_LIMIT]
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        text = raw.decode("utf-8", "replace").strip()
        found = [_Message(text)] if text else []
    else:
        found = list(_messages(parsed))
    unique: dict[tuple, _Message] = {}
    for message in found:
        unique.setdefault((message.text, message.param), message)
    # Already quoted by a message with a param: one message, once.
    texts_with_param = {m.text for m in unique.values() if m.param}
    return [m for m in unique.values() if m.param or m.text not in texts_with_param]


# -- where a message points ---------------------------------------------------------------------

_PATH = r"[A-Za-z_$][\w$]*(?:\.[\w$]+|\[\d+\])+"
# Paths providers print inside their texts (docs/providers.md §20).
_PATH_TEXTS = [
    # OpenAI: Invalid 'tools[0].function.name': string does not match pattern. …
    re.compile(rf"Invalid '(?P<path>{_PATH})': (?P<why>[^\n]*)"),
    # OpenAI's older validator, Azure: 'x.y' does not match '^…$' - 'messages.4.tool_calls.0.function.name'
    re.compile(rf"'(?P<value>[^'\n]*)' (?P<why>does not match '[^'\n]*') - '(?P<path>{_PATH})'"),
    # Bedrock: Value 'x' at 'toolConfig.tools.1.member.toolSpec.name' failed to satisfy constraint: …
    re.compile(
        rf"Value (?:'(?P<value>[^'\n]*)' )?at '(?P<path>{_PATH})' failed to satisfy constraint: (?P<why>[^;\n]*)"
    ),
    # Gemini: * GenerateContentRequest.tools[0].function_declarations[37].name: Invalid function name. …
    # Anthropic: tools.0.custom.name: String should match pattern '…'
    re.compile(rf"(?:^|\n)\s*(?:\* )?(?P<path>{_PATH}): (?P<why>[^\n]*)"),
]
# Keys that name a tool, where they end a path.
_NAME_KEYS = {"name", "toolname", "functionname", "allowedfunctionnames"}
# Keys that put a path among the tools, the choice or the calls (normalised, see _key).
_TOOL_KEYS = {
    "tools",
    "functions",
    "functiondeclarations",
    "toolcalls",
    "functioncall",
    "functionresponse",
    "tooluse",
    "toolreference",
    "toolconfig",
    "toolchoice",
    "toolspec",
}
_CHOICE_KEYS = {"toolchoice", "functioncall", "functioncallingconfig"}
# Segments a provider prints that are not keys of the request: pydantic's union tags
# (Anthropic's tools.0.custom.name, messages.5.content.0.tool_use.name), AWS's list
# ``member``, Gemini's message name, a pydantic server's ``body``.
_TAGS = {"custom", "tooluse", "member", "generatecontentrequest", "body"}

# Texts that name a tool, or the choice, without a path (docs/providers.md §20).
_NAME_TEXTS = [
    # Mistral: Function name was X but must be a-z, A-Z, 0-9, or contain underscores and dashes, …
    ("tool", re.compile(r"Function name was (?P<name>.*?) but must be ")),
    # Cohere: … can't begin with a digit (provided name: 'X').
    ("tool", re.compile(r"tool names can only contain .*?\(provided name: '(?P<name>[^'\n]*)'\)")),
    # Gemini: Duplicate function declaration found: X
    ("duplicate", re.compile(r"Duplicate function declaration found: (?P<name>\S+)")),
    # Anthropic, DeepSeek: tools: Tool names must be unique.
    ("duplicate", re.compile(r"Tool names must be unique")),
    # OpenAI Responses: Tool choice 'X' not found in 'tools' parameter.
    ("choice", re.compile(r"Tool choice '(?P<name>[^'\n]*)' not found in 'tools' parameter")),
    # Anthropic (reported): Tool 'X' not found in provided tools
    ("choice", re.compile(r"Tool '(?P<name>[^'\n]*)' not found in provided tools")),
    # vLLM: Invalid value for `function`: `X` in `tool_choice`!
    ("choice", re.compile(r"Invalid value for `function`: `(?P<name>[^`\n]*)` in `tool_choice`")),
    # vLLM: The tool specified in `tool_choice` does not match any of the specified `tools`
    ("choice", re.compile(r"The tool specified in `tool_choice` does not match any")),
    # OpenAI: 'tool_choice' is only allowed when 'tools' are specified. vLLM: When using
    # `tool_choice`, `tools` must be set. llama.cpp: Invalid tool_choice: X. LM Studio:
    # Invalid tool_choice type: 'object'.
    ("choice", re.compile(r"'tool_choice' is only allowed when 'tools' are specified")),
    ("choice", re.compile(r"When using `tool_choice`, `tools` must be set")),
    ("choice", re.compile(r"Invalid tool_choice(?: type)?: ")),
    # Groq checks the model's calls: … attempted to call tool 'X' which was not in request.tools;
    # requested tool does not exist. About the answer, not a name the request sent.
    ("call", re.compile(r"attempted to call tool '[^'\n]*' which was not in request\.tools")),
    ("call", re.compile(r"requested tool does not exist")),
]


def _key(segment: str | int) -> str | int:
    """A path segment as compared: ints as they are, keys without case or underscores, so
    that Gemini's printed ``function_declarations`` is the request's ``functionDeclarations``."""
    if isinstance(segment, int):
        return segment
    return re.sub(r"[^a-z0-9]", "", segment.lower())


def _split(path: str) -> tuple:
    """``tools[0].function.name`` or ``tools.0.custom.name`` as segments, ints for indexes."""
    parts: list[str | int] = []
    for token in re.findall(r"\[(\d+)\]|([^.\[\]]+)", path):
        index, key = token
        if index:
            parts.append(int(index))
        elif key.isdigit():
            parts.append(int(key))
        elif key not in ("$",):
            parts.append(key)
    return tuple(parts)


def _matches(provider: tuple, where: JsonPath) -> bool:
    """Whether the provider's path is ``where``, once its tags are dropped."""
    i = j = 0
    keys = [_key(k) for k in where]
    while i < len(provider):
        if j < len(keys) and provider[i] == keys[j]:
            j += 1
        elif provider[i] not in _TAGS:
            return False
        i += 1
    return j == len(keys)


def _one_based(provider: tuple) -> tuple:
    """AWS validation paths count list members from 1 (``toolConfig.tools.1.member``)."""
    return tuple(k - 1 if isinstance(k, int) else k for k in provider)


class _Place(NamedTuple):
    ref: NameRef
    place: str


def _places(view: RequestView | None) -> list[_Place]:
    if view is None:
        return []
    places = [_Place(t, "tool") for t in view.tools if t.kind != "builtin"]
    places += [_Place(h, "history") for h in view.history]
    places += [_Place(ref, "choice") for c in view.choices for ref in c.names]
    return places


class _Reader:
    """Ties a provider's paths and names to the request it answered."""

    def __init__(
        self,
        aws: bool,
        view: RequestView | None,
        sent: dict[JsonPath, str],
        inside: JsonPath = (),
    ) -> None:
        # AWS validation errors: one-based paths, no value quoted (WireFormat.aws_verdicts).
        self.aws = aws
        self.view = view
        self.places = _places(view)
        self.sent = sent
        # Where the body the provider validated sits in the body sent (a carried body,
        # formats/base.py): the provider's paths start there.
        self.inside = inside

    def local(self, where: JsonPath) -> JsonPath:
        """``where`` as the provider counts it: from the body it validated."""
        n = len(self.inside)
        return where[n:] if n and where[:n] == self.inside else where

    def name(self, ref: NameRef) -> str:
        # Fix mode sent an alias in place of the app's name: the provider judged the alias.
        return self.sent.get(ref.where, ref.name)

    def at_path(self, path: str, value: str | None, text: str, why: str = "") -> Rejection | None:
        """The place at the provider's ``path``; ``value``: the value it quoted there;
        ``why``: its reason, which for AWS must fit the name when no value is quoted."""
        segments = tuple(_key(k) for k in _split(path))
        text = _one_line(text)
        candidates = [segments]
        if self.aws and "member" in segments:
            candidates = [_one_based(segments), segments]
        for candidate in candidates:
            for place in self.places:
                if _matches(candidate, self.local(place.ref.where)):
                    name = self.name(place.ref)
                    if value is not None and value != name:
                        continue  # the provider quoted another value: not this place
                    if value is None and self.aws and not _breaks(name, why):
                        continue  # AWS names no value: the constraint must fit the name
                    return Rejection(place.ref.path, name, text, True, place.place)
        for choice in self.view.choices if self.view else ():
            if _matches(segments, self.local(choice.where)):
                return Rejection(choice.path, None, text, True, "choice")
        if _about_names(segments):
            return Rejection(path, None, text, False)  # a name toolnames did not read
        return None

    def by_text(self, kind: str, name: str | None, text: str) -> Rejection:
        text = _one_line(text)
        if kind == "duplicate":
            return self._duplicate(name, text)
        if kind == "call":
            return Rejection("", None, text, False)
        wanted = ("choice",) if kind == "choice" else ("tool", "history")
        found = [p for p in self.places if p.place in wanted]
        if name is not None:
            found = [p for p in found if self.name(p.ref) == name]
            if found:
                place = found[0]
                return Rejection(place.ref.path, self.name(place.ref), text, True, place.place)
        if kind == "choice" and self.view is not None and len(self.view.choices) == 1:
            # A text about "the" tool choice, or quoting its type: the request's one choice.
            choice = self.view.choices[0]
            return Rejection(choice.path, None, text, True, "choice")
        return Rejection("", None, text, False)

    def _duplicate(self, name: str | None, text: str) -> Rejection:
        seen: dict[str, list[NameRef]] = {}
        for place in self.places:
            if place.place == "tool":
                seen.setdefault(self.name(place.ref), []).append(place.ref)
        twice = {n: refs for n, refs in seen.items() if len(refs) > 1}
        if name is None and len(twice) == 1:
            name = next(iter(twice))  # the one name the request offers twice
        refs = twice.get(name, []) if name is not None else []
        if not refs:
            return Rejection("", None, text, False)
        # The second offer, where toolnames' name-duplicate finding points.
        return Rejection(refs[1].path, name, text, True, "tool")


def _about_names(segments: tuple) -> bool:
    """A path to a tool's name, or to the tool choice: not a schema, an id or a message's name."""
    keys = [k for k in segments if isinstance(k, str)]
    if not keys or not any(k in _TOOL_KEYS for k in keys):
        return False
    last = next((k for k in reversed(segments) if isinstance(k, str)), "")
    if last in _NAME_KEYS:
        return True
    # The choice itself (OpenAI's param "tool_choice"), not a key below a tool's schema.
    return any(k in _CHOICE_KEYS for k in keys) and last in _CHOICE_KEYS | {"tool", "function"}


_AWS_PATTERN = re.compile(r"regular expression pattern: (\S+)")
_AWS_MAX = re.compile(r"length less than or equal to (\d+)")
_AWS_MIN = re.compile(r"length greater than or equal to (\d+)")


def _breaks(name: str, why: str) -> bool:
    """Whether ``name`` breaks the AWS constraint ``why`` (True when it cannot be told)."""
    if m := _AWS_PATTERN.search(why):
        try:
            return re.fullmatch(m.group(1), name) is None
        except re.error:
            return True
    if m := _AWS_MAX.search(why):
        return len(name) > int(m.group(1))
    if m := _AWS_MIN.search(why):
        return len(name) < int(m.group(1))
    return True


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


# The answer toolnames' block mode gives: the scanner and the view read it from saved flows.
OWN_PREFIX = "toolnames:"


def read_rejections(
    fmt: WireFormat,
    status: int | None,
    content: bytes,
    view: RequestView | None,
    sent: dict[JsonPath, str] | None = None,
) -> list[Rejection]:
    """What the provider's error answer rejected among the request's tool names and choice.

    ``view``: what the request offered, forced and remembered; ``sent``: the names fix mode
    sent in place of the app's, by where they sit. Empty when the answer is no rejection,
    or one about something else (a key, a quota, a schema, the context length).
    """
    if status not in REJECTING_STATUSES or not content:
        return []
    inside = fmt.carried.where if fmt.carried is not None else ()
    reader = _Reader(fmt.aws_verdicts, view, sent or {}, inside)
    found: list[Rejection] = []
    for message in provider_messages(content):
        if message.text.startswith(OWN_PREFIX):
            continue  # toolnames' own block answer, saved with the flow
        found += _read_message(reader, message)
    unique: dict[tuple, Rejection] = {}
    for rejection in found:
        unique.setdefault((rejection.path, rejection.name, rejection.tied), rejection)
    return list(unique.values())


def _read_message(reader: _Reader, message: _Message) -> list[Rejection]:
    for pattern in _PATH_TEXTS:
        matches = list(pattern.finditer(message.text))
        found = []
        for m in matches:
            groups = m.groupdict()
            # One place: the provider's whole message; several: each its own line of it.
            text = message.text if len(matches) == 1 else m.group(0)
            rejection = reader.at_path(groups["path"], groups.get("value"), text, groups["why"])
            if rejection is not None:
                found.append(rejection)
        if found:
            return found
    by_param = reader.at_path(message.param, None, message.text) if message.param else None
    if by_param is not None and by_param.name is not None:
        return [by_param]
    for kind, pattern in _NAME_TEXTS:
        m = pattern.search(message.text)
        if m:
            by_text = reader.by_text(kind, m.groupdict().get("name"), message.text)
            # The text may name what a coarse param ("tool_choice") only points near.
            if by_param is None or by_text.name is not None:
                return [by_text]
            break
    return [by_param] if by_param is not None else []
