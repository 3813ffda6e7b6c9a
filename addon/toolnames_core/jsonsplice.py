"""Replace values inside JSON text without re-serialising the rest.

Fix mode changes one name; every other byte the client sent stays as it was, so
signatures over the body, key order, whitespace and number formatting survive.
"""

from __future__ import annotations

import json
import json.scanner
import re
from json.decoder import scanstring

from toolnames_core.model import JsonPath

_WS = re.compile(r"[ \t\n\r]*")
_WS_CHARS = frozenset(" \t\n\r")
# json.loads also takes NaN, Infinity and -Infinity, so the splice must read past them too.
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")


def _ws(text: str, pos: int) -> int:
    # Most clients send compact JSON: no whitespace to skip, and no regex run to find so.
    if text[pos : pos + 1] not in _WS_CHARS:
        return pos
    return _WS.match(text, pos).end()


# json's own scanner (its C accelerator where built) reads a value at C speed; it returns where
# the value ends, which is all a skip needs. Fix mode only meets bodies json.loads has read.
_scan_once = json.scanner.make_scanner(json.JSONDecoder())
# Paths a recursive walk may follow; deeper ones (never a tool name's) are followed one by one.
_WALK_DEPTH = 64


def _skip_value(text: str, pos: int) -> int:
    """End of the JSON value starting at ``pos``."""
    try:
        return _scan_once(text, pos)[1]
    except (RecursionError, ValueError, StopIteration):
        # Nesting deeper than the C scanner recurses, or a number it will not convert
        # (over int's digit limit): skip it token by token instead.
        return _skip_tokens(text, pos)


def _skip_tokens(text: str, pos: int) -> int:
    """End of the JSON value starting at ``pos``; iterative, so depth cannot overflow the stack."""
    depth = 0
    while True:
        ch = text[pos]
        if ch == '"':
            pos = scanstring(text, pos + 1)[1]
        elif ch in "{[":
            depth += 1
            pos += 1
        elif ch in "}]":
            depth -= 1
            pos += 1
        elif ch in ",: \t\n\r":
            pos += 1
        else:
            m = _SCALAR.match(text, pos)
            if not m:
                raise ValueError(f"unexpected character at {pos}")
            pos = m.end()
        if depth == 0:
            return pos


def _child_span(text: str, pos: int, key: str | int) -> tuple[int, int]:
    """Span of member ``key`` of the object or array starting at ``pos``.

    For a repeated object key the last one wins, as it does for json.loads.
    """
    opener = text[pos]
    pos = _ws(text, pos + 1)
    found = None
    index = 0
    if text[pos] in "}]":
        raise KeyError(key)
    while True:
        if opener == "{":
            member, pos = scanstring(text, pos + 1)
            pos = _ws(text, _ws(text, pos) + 1)  # the colon
            match = member == key
        else:
            match = index == key
        end = _skip_value(text, pos)
        if match:
            found = (pos, end)
        pos = _ws(text, end)
        if text[pos] in "}]":
            break
        pos = _ws(text, pos + 1)  # the comma
        index += 1
    if found is None:
        raise KeyError(key)
    return found


def _start(text: str) -> int:
    # json.loads(bytes) reads a UTF-8 byte order mark as utf-8-sig: keep it, and start after it.
    return _ws(text, 1 if text.startswith("\ufeff") else 0)


def value_span(text: str, where: JsonPath) -> tuple[int, int]:
    start = _start(text)
    span = (start, _skip_value(text, start))
    for key in where:
        span = _child_span(text, span[0], key)
    return span


class _Target:
    """A node of the paths being looked for: the path that ends here, and the deeper ones."""

    __slots__ = ("children", "path", "under")

    def __init__(self) -> None:
        self.children: dict[str | int, _Target] = {}
        self.path: JsonPath | None = None
        self.under: list[JsonPath] = []  # every path through this node, for repeated keys


def _targets(paths: list[JsonPath]) -> _Target:
    root = _Target()
    for where in paths:
        node = root
        node.under.append(where)
        for key in where:
            node = node.children.setdefault(key, _Target())
            node.under.append(where)
        node.path = where
    return root


def _walk(text: str, pos: int, node: _Target, spans: dict) -> int:
    """Record the span of each path in ``node`` within the value at ``pos``; its end."""
    if text[pos] not in "{[" or not node.children:
        return _skip_value(text, pos)
    opener = text[pos]
    pos = _ws(text, pos + 1)
    if text[pos] in "}]":
        return pos + 1
    index = 0
    while True:
        if opener == "{":
            key, pos = scanstring(text, pos + 1)
            pos = _ws(text, _ws(text, pos) + 1)  # the colon
        else:
            key = index
        child = node.children.get(key)
        if child is None:
            end = _skip_value(text, pos)
        else:
            # A repeated key: the last one wins, as for json.loads, even where it lacks a path.
            for where in child.under:
                spans.pop(where, None)
            end = _walk(text, pos, child, spans)
            if child.path is not None:
                spans[child.path] = (pos, end)
        pos = _ws(text, end)
        if text[pos] in "}]":
            return pos + 1
        pos = _ws(text, pos + 1)  # the comma
        index += 1


def value_spans(text: str, paths: list[JsonPath]) -> dict[JsonPath, tuple[int, int]]:
    """The span of the value at each path, read in one pass over the text (fix mode renames
    every tool of a request: one pass per name would read a large body once per tool)."""
    short = [where for where in paths if len(where) <= _WALK_DEPTH]
    spans: dict[JsonPath, tuple[int, int]] = {}
    if short:
        _walk(text, _start(text), _targets(short), spans)
    for where in paths:
        if len(where) > _WALK_DEPTH:
            spans[where] = value_span(text, where)
        elif where not in spans:
            raise KeyError(where)
    return spans


def replace_values(text: str, replacements: dict[JsonPath, object]) -> str:
    """``text`` with the value at each path replaced by the JSON encoding of its new value."""
    spans = value_spans(text, list(replacements))
    pieces = []
    done = 0
    for where, (start, end) in sorted(spans.items(), key=lambda item: item[1]):
        if start < done:
            raise ValueError(f"the value at {where} lies inside another value being replaced")
        pieces += [text[done:start], json.dumps(replacements[where])]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)
