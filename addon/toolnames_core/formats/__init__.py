"""One adapter per wire format, and the table that finds the adapter for an API.

Each adapter module maps its format onto the provider-neutral model (``model.py``) and
defines one ``FORMAT``; the table below lists them, in the order docs/findings.md names them.
"""

from __future__ import annotations

from toolnames_core.formats import anthropic_messages
from toolnames_core.formats import bedrock_converse
from toolnames_core.formats import gemini
from toolnames_core.formats import openai_chat
from toolnames_core.formats import openai_responses
from toolnames_core.formats.base import BlockResponse
from toolnames_core.formats.base import WireFormat

__all__ = ["FORMATS", "BlockResponse", "WireFormat"]

_formats = [
    openai_chat.FORMAT,
    openai_responses.FORMAT,
    anthropic_messages.FORMAT,
    gemini.FORMAT,
    bedrock_converse.FORMAT,
]

FORMATS: dict[str, WireFormat] = {fmt.api: fmt for fmt in _formats}
