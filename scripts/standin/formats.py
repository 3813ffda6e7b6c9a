"""The stand-in's wire formats, in one explicit list, and which of them serves a path.

One module per format, named like the addon's adapters (toolnames_core/formats/):
openai_chat, openai_responses, anthropic_messages, anthropic_vertex (with token counting),
anthropic_batches, gemini, bedrock_converse, bedrock_invoke (with token counting), cohere_chat,
ollama; what they share is in shared.py. The HTTP side is server.py.
"""

from __future__ import annotations

from typing import NamedTuple

from standin.anthropic_batches import AnthropicBatches
from standin.anthropic_messages import AnthropicMessages
from standin.anthropic_vertex import AnthropicCountTokens
from standin.anthropic_vertex import AnthropicVertex
from standin.anthropic_vertex import VertexCountTokens
from standin.bedrock_converse import BedrockConverse
from standin.bedrock_invoke import BedrockCountTokens
from standin.bedrock_invoke import BedrockInvoke
from standin.cohere_chat import CohereChat
from standin.gemini import Gemini
from standin.ollama import Ollama
from standin.openai_chat import ChatCompletions
from standin.openai_responses import Responses
from standin.shared import StandinFormat

__all__ = ["FORMATS", "Route", "route"]

FORMATS: tuple[StandinFormat, ...] = (
    ChatCompletions(),
    Responses(),
    AnthropicMessages(),
    AnthropicCountTokens(),
    AnthropicBatches(),
    AnthropicVertex(),
    VertexCountTokens(),
    Gemini(),
    BedrockConverse(),
    BedrockInvoke(),
    CohereChat(),
    BedrockCountTokens(),
    Ollama(),
)


class Route(NamedTuple):
    format: StandinFormat
    mode: str  # "json", "stream", "body" or "body-streams" (see StandinFormat.mode_for)


def route(path: str) -> Route | None:
    """The format that serves a request path (no query), and how it answers; None if none does."""
    for fmt in FORMATS:
        mode = fmt.mode_for(path)
        if mode is not None:
            return Route(fmt, mode)
    return None
