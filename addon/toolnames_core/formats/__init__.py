"""One adapter per wire format, and the list that finds the format of a request.

Each adapter module maps its format onto the provider-neutral model (``model.py``) and
defines one ``FORMAT``, the ``WireFormat`` record that says everything else about it: how a
request is recognised, its rule, its framing, its errors. The list below names them once.
"""

from __future__ import annotations

from toolnames_core.formats import anthropic_batches
from toolnames_core.formats import anthropic_messages
from toolnames_core.formats import anthropic_vertex
from toolnames_core.formats import bedrock_converse
from toolnames_core.formats import bedrock_count_tokens
from toolnames_core.formats import bedrock_invoke
from toolnames_core.formats import cohere_chat
from toolnames_core.formats import gemini
from toolnames_core.formats import ollama
from toolnames_core.formats import openai_chat
from toolnames_core.formats import openai_responses
from toolnames_core.formats.base import BlockResponse
from toolnames_core.formats.base import WireFormat
from toolnames_core.formats.base import bare_path

__all__ = ["FORMATS", "BlockResponse", "WireFormat", "format_for", "format_named"]

# In the order docs/findings.md names them. The order decides which format claims a path
# two could match (none do today: tests/core/formats/test_base.py holds them to it).
_formats = [
    openai_chat.FORMAT,
    openai_responses.FORMAT,
    anthropic_messages.FORMAT,
    anthropic_vertex.FORMAT,
    anthropic_batches.FORMAT,
    gemini.FORMAT,
    bedrock_converse.FORMAT,
    bedrock_invoke.FORMAT,
    cohere_chat.FORMAT,
    bedrock_count_tokens.FORMAT,
    ollama.FORMAT,
]

FORMATS: dict[str, WireFormat] = {fmt.api: fmt for fmt in _formats}


def format_for(method: str, path: str) -> WireFormat | None:
    """The format a request of ``method`` to ``path`` speaks; None if toolnames reads none."""
    method = method.upper()
    if method not in _METHODS:
        return None  # a GET, most of what a proxy passes: no format reads one
    # Remembered by the path without its query (which may hold an API key: Gemini's): a
    # proxy asks for every request it passes, an app sends the same few paths over and over,
    # and a path no format claims went through every format's pattern each time.
    key = (method, path.partition("?")[0])
    found = _spoken.get(key, _UNSEEN)
    if found is not _UNSEEN:
        return found
    if len(_spoken) >= _MAX_SPOKEN:
        _spoken.clear()  # ever new paths (ids in them): start over
    found = _spoken[key] = _format_of(method, bare_path(key[1]))
    return found


def _format_of(method: str, path: str) -> WireFormat | None:
    for fmt in _formats:
        if method in fmt.methods and fmt.path.search(path) is not None:
            return fmt
    return None


_METHODS = frozenset(method for fmt in _formats for method in fmt.methods)
_spoken: dict[tuple[str, str], WireFormat | None] = {}
_MAX_SPOKEN = 1024
_UNSEEN = object()  # a path not asked about yet (None is an answer: no format)


def format_named(api: str) -> WireFormat:
    """The format whose id is ``api``, or a ValueError that lists the known ones."""
    try:
        return FORMATS[api]
    except KeyError:
        raise ValueError(f"unknown API {api!r}; known APIs: {', '.join(FORMATS)}") from None
