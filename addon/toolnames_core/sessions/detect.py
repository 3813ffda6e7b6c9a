"""Which live protocol a WebSocket connection speaks, from its upgrade request's path."""

from __future__ import annotations

import re

__all__ = ["detect_protocol"]

# OpenAI: /v1/realtime; Azure: /openai/realtime (preview) and /openai/v1/realtime (GA);
# a gateway may put a prefix before either.
_REALTIME = re.compile(r"/realtime$")
# Gemini API: .../GenerativeService.BidiGenerateContent (and ...Constrained, for ephemeral
# tokens); Vertex AI: .../LlmBidiService/BidiGenerateContent (google-genai's live.py).
_LIVE = re.compile(r"[./]BidiGenerateContent(?:Constrained)?$")


def detect_protocol(path: str) -> str | None:
    """``openai-realtime``, ``gemini-live``, or None for a WebSocket toolnames does not read."""
    path = path.split("?", 1)[0].rstrip("/")
    if _REALTIME.search(path):
        return "openai-realtime"
    if _LIVE.search(path):
        return "gemini-live"
    return None
