"""Anthropic models on Vertex AI for the stand-in provider, and token counting, Anthropic's
and Vertex's.

Provenance markers ("modeled", "inferred", "invented") as explained in shared.py.
"""

from __future__ import annotations

from standin.anthropic_messages import AnthropicMessages

__all__ = ["AnthropicCountTokens", "AnthropicVertex", "VertexCountTokens"]

_PUBLISHER = "/publishers/anthropic/models/"


def _check_version(fmt: AnthropicMessages, body: dict) -> None:
    if not isinstance(body.get("anthropic_version"), str):
        # providers.md §5.1: Google's docs require the field (vertex-2023-10-16 in their
        # examples; the anthropic SDK sends its own API version); no observed error text.
        raise fmt.error("[standin-invented] anthropic_version: Field required")


class AnthropicVertex(AnthropicMessages):
    """providers.md §5.1: POST …/publishers/anthropic/models/{model}:rawPredict and
    :streamRawPredict, an Anthropic Messages body without ``model``, ``stream`` in the body,
    Anthropic's answers and SSE, Anthropic's validator and error shape."""

    def mode_for(self, path):
        if _PUBLISHER not in path or "/count-tokens:" in path:
            return None
        return "body" if path.endswith((":rawPredict", ":streamRawPredict")) else None

    def model(self, body, path):
        return path.rsplit("/", 1)[1].split(":", 1)[0]

    def validate(self, body, name_max_length=None):
        _check_version(self, body)
        super().validate(body, name_max_length)


class AnthropicCountTokens(AnthropicMessages):
    """providers.md §5: POST /v1/messages/count_tokens, a Messages body validated as Messages
    validates it (tools included), answered ``{"input_tokens": n}``."""

    def mode_for(self, path):
        return "json" if path.endswith("/v1/messages/count_tokens") else None

    def validate(self, body, name_max_length=None):
        if not isinstance(body.get("model"), str):
            raise self.error("model: Field required")  # modeled (pydantic wording)
        super().validate(body, name_max_length)

    def decide(self, body, path, raw, call_header):
        return super().decide(body, path, raw, "")  # counting calls no tool

    def render(self, turn, body, done: bool = True):
        return {"input_tokens": turn.input_tokens}


class VertexCountTokens(AnthropicCountTokens):
    """providers.md §5.1: POST …/publishers/anthropic/models/count-tokens:rawPredict, the
    model in the body, as Anthropic's count_tokens."""

    def mode_for(self, path):
        return "json" if path.endswith(_PUBLISHER + "count-tokens:rawPredict") else None

    def validate(self, body, name_max_length=None):
        _check_version(self, body)
        super().validate(body, name_max_length)
