"""Wire formats of the stand-in provider: which format serves a path.

The formats themselves live one provider family per module (standin_openai.py,
standin_openai_responses.py, standin_anthropic.py, standin_gemini.py,
standin_bedrock.py; what they share in standin_common.py).  This module routes a
request path to its format and keeps the names callers used to import from here
(``from standin_formats import ProviderError``) working.
The HTTP side lives in standin_provider.py.
"""

from __future__ import annotations

import re

from standin_anthropic import ANTHROPIC_MAX
from standin_anthropic import ANTHROPIC_PATTERN
from standin_anthropic import AnthropicMessages
from standin_bedrock import BEDROCK_MAX
from standin_bedrock import BEDROCK_NAME
from standin_bedrock import BedrockConverse
from standin_bedrock import encode_event_message
from standin_common import CREATED
from standin_common import PARALLEL_WRAPPERS
from standin_common import ProviderError
from standin_common import ToolCall
from standin_common import Turn
from standin_common import WireFormat
from standin_common import arguments_for
from standin_gemini import GEMINI_MAX
from standin_gemini import GEMINI_NAME
from standin_gemini import Gemini
from standin_openai import OPENAI_MAX
from standin_openai import OPENAI_NAME
from standin_openai import ChatCompletions
from standin_openai_responses import RESPONSES_MAX
from standin_openai_responses import RESPONSES_NAMESPACED_MAX
from standin_openai_responses import Responses

# Everything this module defined before the formats moved out, so old imports still work.
__all__ = [
    "ANTHROPIC",
    "ANTHROPIC_MAX",
    "ANTHROPIC_PATTERN",
    "BEDROCK",
    "BEDROCK_MAX",
    "BEDROCK_NAME",
    "CHAT",
    "CREATED",
    "GEMINI",
    "GEMINI_MAX",
    "GEMINI_NAME",
    "OPENAI_MAX",
    "OPENAI_NAME",
    "PARALLEL_WRAPPERS",
    "RESPONSES",
    "RESPONSES_MAX",
    "RESPONSES_NAMESPACED_MAX",
    "AnthropicMessages",
    "BedrockConverse",
    "ChatCompletions",
    "Gemini",
    "ProviderError",
    "Responses",
    "ToolCall",
    "Turn",
    "WireFormat",
    "arguments_for",
    "encode_event_message",
    "route",
]


def route(path: str) -> tuple[WireFormat, str] | None:
    """Map a request path (no query) to (format, mode), or None for an unknown path.

    mode is "json", "stream", or "body" (chat/responses/anthropic stream when the
    body says "stream": true; Gemini and Bedrock stream by endpoint).
    """
    if path.endswith("/chat/completions"):
        return CHAT, "body"
    if path.endswith("/responses"):
        return RESPONSES, "body"
    if path.endswith("/v1/messages"):
        return ANTHROPIC, "body"
    if ":streamGenerateContent" in path:
        return GEMINI, "stream"
    if ":generateContent" in path:
        return GEMINI, "json"
    match = re.search(r"/model/[^/]+/converse(-stream)?$", path)
    if match:
        return BEDROCK, "stream" if match.group(1) else "json"
    return None


CHAT, RESPONSES, ANTHROPIC = ChatCompletions(), Responses(), AnthropicMessages()
GEMINI, BEDROCK = Gemini(), BedrockConverse()
