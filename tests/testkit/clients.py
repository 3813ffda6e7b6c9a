"""SDK clients as an app builds them, pointed at a URL (a mitmdump in reverse mode in front of
the stand-in): test credentials given directly, so no key, token or cloud credential of the
machine is looked up, and no retries where the SDK has them, so a refusal is seen at once. The
SigV4-signed AWS clients are in sigv4.py. The SDKs are imported when a client is built: the
mitmproxy 11 venv has none (tests that build one are marked needs_sdk)."""

from __future__ import annotations

import pytest

__all__ = [
    "CITY",
    "PROMPT",
    "WHOLE_AND_STREAMED",
    "anthropic_client",
    "cohere_client",
    "vertex_client",
]

# A tool's parameters: one required city.
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
# The user's turn, as Anthropic's and Cohere's messages both write it.
PROMPT = [{"role": "user", "content": "Open an issue about the weather in Paris."}]
WHOLE_AND_STREAMED = pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])


def anthropic_client(url: str):
    import anthropic

    return anthropic.Anthropic(base_url=url, api_key="test-not-a-key", max_retries=0)


def vertex_client(url: str):
    """Claude on Vertex AI (``AnthropicVertex``); an access token given directly: no Google
    credentials are looked up."""
    import anthropic

    return anthropic.AnthropicVertex(
        base_url=url + "/v1",
        region="us-east5",
        project_id="test-project",
        access_token="ya29.test-not-a-token",
        max_retries=0,
    )


def cohere_client(url: str):
    """Cohere's chat v2 (``ClientV2``)."""
    import cohere

    return cohere.ClientV2(api_key="test-not-a-key", base_url=url)
