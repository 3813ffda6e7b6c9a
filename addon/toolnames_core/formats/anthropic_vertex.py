"""Anthropic models on Vertex AI: ``POST …/publishers/anthropic/models/{model}:rawPredict``
and ``:streamRawPredict`` (docs/providers.md §5a).

The body is an Anthropic Messages body (the model sits in the path, ``anthropic_version``
in the body, ``stream`` kept in the body), the answers are Anthropic's, whole or as
Anthropic's SSE, and the model service validates tool names as Anthropic's own API does,
so this format reads them with the Messages adapter's functions. Token counting,
``…/publishers/anthropic/models/count-tokens:rawPredict``, has the model in its body and an
answer without calls (``{"input_tokens": n}``); the same record reads it.

Only paths under ``publishers/anthropic/`` are this format's: other publishers' models
(``publishers/mistralai/…:rawPredict``) take their own bodies, which toolnames does not read,
and Google's models (``publishers/google/…:generateContent``) are the Gemini format's.
"""

from __future__ import annotations

import dataclasses
import re

from toolnames_core.formats import anthropic_messages
from toolnames_core.model import RequestView

__all__ = ["API", "FORMAT", "read_request"]

API = "anthropic-vertex"


def read_request(body: dict) -> RequestView:
    """The Messages adapter's view of the body, under this format's id."""
    view = anthropic_messages.read_request(body)
    view.api = API
    return view


# Messages' record but for where it is and what decides its rule: its reading, answers, SSE
# and errors are Anthropic's, so a change to how Messages is read reaches this door too.
FORMAT = dataclasses.replace(
    anthropic_messages.FORMAT,
    api=API,
    title="Anthropic on Vertex AI rawPredict",
    path=re.compile(r"/publishers/anthropic/models/[^/]+:(?:rawPredict|streamRawPredict)\Z"),
    # As the anthropic SDKs' AnthropicVertex clients send them (docs/providers.md §5a).
    example_paths=(
        "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict",
        "/v1/projects/my-project/locations/global/publishers/anthropic/models/claude-opus-4-6:streamRawPredict",
        "/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict",
    ),
    path_text=".../publishers/anthropic/models/...:rawPredict",
    # The host is Google's (*aiplatform.googleapis.com, the Gemini rule in the host table),
    # the model service Anthropic's: the format decides.
    host_decides=False,
    read_request=read_request,
    # The block answer stays Messages': the Messages validator's own error reaches the client
    # (a 400 in Anthropic's shape, docs/providers.md §5a); AnthropicVertex raises
    # BadRequestError for it, as it does for Google's platform envelope.
)
