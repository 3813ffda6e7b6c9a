"""A request that carries tools to a path no wire format claims: toolnames cannot check it,
and says so (the project's rule: never silent about what it cannot check).

Most requests through the proxy are no LLM API call at all, so this costs a substring search
for most bodies: only a body holding one of the keys under which a format offers tools
(``WireFormat.offer_keys``: ``tools``, ``functions``, ``toolConfig``, ...) is parsed, and it
counts only when that key is a top-level key of a JSON object, with a value that is not empty.
"""

from __future__ import annotations

import re
from typing import Any
from typing import TypedDict

from toolnames_core.formats import FORMATS
from toolnames_core.formats.base import bare_path
from toolnames_core.readers import DEFAULT
from toolnames_core.readers import Reader

__all__ = ["OFFER_KEYS", "offered_keys", "unchecked_text"]

# Every format's offer keys, in the order the formats are listed.
OFFER_KEYS: tuple[str, ...] = tuple(
    dict.fromkeys(key for fmt in FORMATS.values() for key in fmt.offer_keys)
)
_OFFER_KEY = re.compile(b'"(?:' + b"|".join(re.escape(k.encode()) for k in OFFER_KEYS) + b')"')
_OBJECT_START = re.compile(rb"\s*\{")
# What the fast reader decodes of such a body: the offer keys only, never the conversation.
_Offers = TypedDict("_Offers", dict.fromkeys(OFFER_KEYS, Any), total=False)  # noqa: UP013


def offered_keys(content: bytes, reader: Reader = DEFAULT) -> tuple[str, ...]:
    """The offer keys with which the JSON object ``content`` offers tools, at its top level;
    () for a body that offers none (or is no JSON object)."""
    if not _OBJECT_START.match(content) or _OFFER_KEY.search(content) is None:
        return ()
    try:
        body = reader.body(content, _Offers)
    except (ValueError, RecursionError):
        return ()
    if not isinstance(body, dict):
        return ()
    return tuple(key for key in OFFER_KEYS if body.get(key))


def unchecked_text(method: str, path: str, keys: tuple[str, ...]) -> str:
    """Why a request that carries tools was not checked: the comment and the log line."""
    carried = ", ".join(f'"{key}"' for key in keys)
    known = ", ".join(fmt.path_text for fmt in FORMATS.values())
    return (
        f"toolnames did not check this request: it carries tools ({carried}), but no wire "
        f"format toolnames reads is at {method.upper()} {bare_path(path) or '/'} (it reads "
        f"POST {known}), so its tool names and the calls in its answer are not checked"
    )
