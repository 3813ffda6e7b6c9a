"""Which live protocol a WebSocket speaks, from its path."""

import pytest

from toolnames_core.sessions import detect_protocol


@pytest.mark.parametrize(
    "path,protocol",
    [
        ("/v1/realtime?model=gpt-realtime", "openai-realtime"),
        (
            "/openai/realtime?api-version=2025-04-01-preview&deployment=gpt-4o-realtime",
            "openai-realtime",
        ),
        ("/openai/v1/realtime?model=gpt-realtime", "openai-realtime"),
        ("/gateway/v1/realtime/", "openai-realtime"),
        (
            "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k",
            "gemini-live",
        ),
        (
            "/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained",
            "gemini-live",
        ),
        ("/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent", "gemini-live"),
        ("/v1/realtime/sessions", None),
        ("/v1/chat/completions", None),
        ("/socket.io/?EIO=4", None),
    ],
)
def test_detect_protocol(path, protocol):
    assert detect_protocol(path) == protocol
