"""A request that carries tools to a path no wire format claims: toolnames cannot check it,
and says so (the project's rule: never silent about what it cannot check).

Most requests through the proxy are no LLM API call at all, so this costs a substring search
for most bodies: only a body holding one of the keys under which a format offers tools
(``WireFormat.offer_keys``: ``tools``, ``functions``, ``toolConfig``, ...), or the member
under which a format carries an encoded body (``WireFormat.carried``: ``invokeModel``), is
parsed. It counts when that key is a top-level key of a JSON object with a value that is not
empty, or, below the top level (a ``params``/``body``/``request`` wrapper, a batch's
entries), holds a list of objects or an object; and inside a carried body where a format
carries one (``input.invokeModel.body``, decoded). The search below the top is bounded, in
depth and in the containers it opens, so a large body costs little more than its parse.
"""

from __future__ import annotations

import re
from typing import Any
from typing import TypedDict

from toolnames_core.formats import FORMATS
from toolnames_core.formats.base import bare_path
from toolnames_core.model import format_path
from toolnames_core.readers import DEFAULT
from toolnames_core.readers import Reader

__all__ = ["OFFER_KEYS", "offered_keys", "unchecked_text"]

# Every format's offer keys, in the order the formats are listed.
OFFER_KEYS: tuple[str, ...] = tuple(
    dict.fromkeys(key for fmt in FORMATS.values() for key in fmt.offer_keys)
)
# Where formats carry an encoded body (Bedrock's count-tokens: input.invokeModel.body), and
# how to decode it: a body of an unclaimed path with the same member is looked into too.
_CARRIED = {fmt.carried.where: fmt.carried for fmt in FORMATS.values() if fmt.carried}
# The member that holds each carried string: found by the substring search (the string's own
# key, "body", is too common to be worth a parse).
_CARRIED_KEYS = tuple(dict.fromkeys(where[-2] for where in _CARRIED if len(where) > 1))
_OFFER_KEY = re.compile(
    b'"(?:' + b"|".join(re.escape(k.encode()) for k in (*OFFER_KEYS, *_CARRIED_KEYS)) + b')"'
)
_OBJECT_START = re.compile(rb"\s*\{")
# What the fast reader decodes of such a body: the offer keys only, never the conversation.
_Offers = TypedDict("_Offers", dict.fromkeys(OFFER_KEYS, Any), total=False)  # noqa: UP013

# How far below the top level tools are looked for: containers deep, containers opened in
# all, items of each array, and the longest carried string decoded. A wrapper puts them one
# or two levels down; nothing is parsed again past these bounds.
MAX_DEPTH = 4
MAX_CONTAINERS = 256
MAX_ITEMS = 16
MAX_CARRIED = 4 * 1024 * 1024


def offered_keys(content: bytes, reader: Reader = DEFAULT) -> tuple[str, ...]:
    """Where the JSON object ``content`` offers tools: its top-level offer keys (``tools``),
    or else the paths below it (``params.tools``, ``input.invokeModel.body.tools``); () for
    a body that offers none (or is no JSON object)."""
    if not _OBJECT_START.match(content) or _OFFER_KEY.search(content) is None:
        return ()
    try:
        body = reader.body(content, _Offers)
    except (ValueError, RecursionError):
        return ()
    if not isinstance(body, dict):
        return ()
    found = tuple(key for key in OFFER_KEYS if body.get(key))
    if found:
        return found
    try:
        whole = reader.body(content)
    except (ValueError, RecursionError):
        return ()
    return tuple(format_path(where) for where in _Search(reader).nested(whole))


class _Search:
    """The bounded search below the top level, one budget of containers for the whole body
    (a carried body's included)."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.budget = MAX_CONTAINERS

    def nested(self, body: dict) -> list[tuple]:
        found: list[tuple] = []
        self._walk(body, (), found)
        return found

    def _walk(self, value: object, where: tuple, found: list[tuple]) -> None:
        if self.budget <= 0 or len(where) > MAX_DEPTH:
            return
        if isinstance(value, list):
            self.budget -= 1
            for i, item in enumerate(value[:MAX_ITEMS]):
                if isinstance(item, dict | list):
                    self._walk(item, (*where, i), found)
            return
        if not isinstance(value, dict):
            return
        self.budget -= 1
        for key, item in value.items():
            path = (*where, key)
            if where and key in OFFER_KEYS and _offers(item):
                found.append(path)
            elif isinstance(item, dict | list):
                self._walk(item, path, found)
            elif isinstance(item, str) and path in _CARRIED:
                self._carried(path, item, found)

    def _carried(self, where: tuple, text: str, found: list[tuple]) -> None:
        carried = _CARRIED[where]
        if len(text) > MAX_CARRIED:
            return
        try:
            inner = self.reader.body(carried.decode(text))
        except (ValueError, RecursionError):
            return  # not what such a format carries: nothing to say about it
        if not isinstance(inner, dict):
            return
        top = [key for key in OFFER_KEYS if inner.get(key)]
        found += [(*where, key) for key in top]
        if not top:
            inner_found: list[tuple] = []
            self._walk(inner, (), inner_found)
            found += [(*where, *path) for path in inner_found]


def _offers(value: object) -> bool:
    """A tool list (objects) or a tool configuration (an object), not a word of text."""
    if isinstance(value, list):
        return bool(value) and isinstance(value[0], dict)
    return isinstance(value, dict) and bool(value)


def unchecked_text(method: str, path: str, keys: tuple[str, ...]) -> str:
    """Why a request that carries tools was not checked: the comment and the log line."""
    carried = ", ".join(f'"{key}"' for key in keys)
    known = ", ".join(fmt.path_text for fmt in FORMATS.values())
    return (
        f"toolnames did not check this request: it carries tools ({carried}), but no wire "
        f"format toolnames reads is at {method.upper()} {bare_path(path) or '/'} (it reads "
        f"POST {known}), so its tool names and the calls in its answer are not checked"
    )
