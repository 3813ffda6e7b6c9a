"""Replace values inside JSON text without re-serialising the rest.

Fix mode changes one name; every other byte the client sent stays as it was, so
signatures over the body, key order, whitespace and number formatting survive.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring

from toolnames_core.model import JsonPath

_WS = re.compile(r"[ \t\n\r]*")
# json.loads also takes NaN, Infinity and -Infinity, so the splice must read past them too.
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")


def _ws(text: str, pos: int) -> int:
    return _WS.match(text, pos).end()


def _skip_value(text: str, pos: int) -> int:
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


def value_span(text: str, where: JsonPath) -> tuple[int, int]:
    # json.loads(bytes) reads a UTF-8 byte order mark as utf-8-sig: keep it, and start after it.
    start = _ws(text, 1 if text.startswith("\ufeff") else 0)
    span = (start, _skip_value(text, start))
    for key in where:
        span = _child_span(text, span[0], key)
    return span


def replace_values(text: str, replacements: dict[JsonPath, object]) -> str:
    """``text`` with the value at each path replaced by the JSON encoding of its new value."""
    spans = sorted(
        ((value_span(text, where), new) for where, new in replacements.items()), reverse=True
    )
    for (start, end), new in spans:
        text = text[:start] + json.dumps(new) + text[end:]
    return text
