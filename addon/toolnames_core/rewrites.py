"""Known client rewrites: how a framework turns the name a user wrote into the name it sends.

Fix mode uses these to find the offered tool a mismatched choice meant. Each
rewrite mirrors its client's code exactly, quirks included, because a "close
enough" rewrite would make fix mode guess.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

_MASTRA_VALID = re.compile(r"[a-zA-Z0-9_\-]")
_MASTRA_START = re.compile(r"[a-zA-Z_]")


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def mastra(key: str) -> str | None:
    """Mastra's Agent.formatTools() (docs/providers.md §16), on JavaScript strings.

    JavaScript regexes without the `u` flag see UTF-16 code units, so a character
    outside the BMP (an emoji) becomes two underscores and counts twice towards 63.
    """
    if not key:
        return None  # Mastra itself throws a TypeError on an empty key.
    invalid = any(not _MASTRA_VALID.fullmatch(c) for c in key)
    if not (_utf16_len(key) > 63 or invalid or not _MASTRA_START.fullmatch(key[0])):
        return key
    new_key = "".join(
        c if _MASTRA_VALID.fullmatch(c) else "_" * (2 if ord(c) > 0xFFFF else 1) for c in key
    )
    if not _MASTRA_START.fullmatch(new_key[0]):
        new_key = "_" + new_key
    return new_key[:63]


_AGENTS_MAX = 64
_AGENTS_HASH_LENGTH = 8


def openai_agents(name: str) -> str | None:
    """The OpenAI Agents SDK's transform_string_function_style() (src/agents/util/_transforms.py).

    Names longer than 64 keep a stem and gain an 8-character sha1 suffix of the
    original name, as the SDK does for long tool names.
    """
    final = re.sub(r"[^a-zA-Z0-9_]", "_", re.sub(r"\s", "_", name)).lower()
    if len(final) > _AGENTS_MAX:
        try:
            digest = hashlib.sha1(name.encode("utf-8")).hexdigest()
        except UnicodeEncodeError:
            return None  # A lone surrogate: the SDK itself would fail here.
        suffix = f"_{digest[:_AGENTS_HASH_LENGTH]}"
        stem = final[: _AGENTS_MAX - len(suffix)].rstrip("_")
        final = f"{stem or 'tool'}{suffix}"
    return final or None


@dataclass(frozen=True, slots=True)
class Rewrite:
    id: str
    apply: Callable[[str], str | None]
    source: str


REWRITES: tuple[Rewrite, ...] = (
    Rewrite("mastra", mastra, "@mastra/core Agent.formatTools()"),
    Rewrite("openai-agents", openai_agents, "openai-agents transform_string_function_style()"),
)
