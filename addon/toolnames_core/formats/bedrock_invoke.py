"""Claude on AWS Bedrock through InvokeModel: ``/model/{modelId}/invoke`` and
``/invoke-with-response-stream`` (docs/providers.md §7a), the API Claude Code and the
``anthropic`` SDK's ``AnthropicBedrock`` client use.

The body is Anthropic's Messages body (``anthropic_version`` in it, no ``model`` or ``stream``:
the model is in the path, streaming is the endpoint), so the Anthropic Messages adapter
reads it, its answers and its stream events; what differs is around them:

- Paths: the model id is percent-encoded differently by each SDK (boto3 escapes ``:`` and
  ``/``, the anthropic SDKs keep ``:``), and an inference-profile ARN holds a ``/``; formats
  match the decoded path (``base.bare_path``), and the id is matched greedily. Only ids of
  Anthropic models (``anthropic.``, with or without a region prefix) and ARNs are claimed:
  other models take other bodies through the same API. A body without
  ``anthropic_version`` (an ARN of another model) is not read as Anthropic's.
- The rule is Anthropic's, whatever the host (``host_decides`` False): Bedrock's Converse
  holds names to 64 characters, Claude through InvokeModel to Anthropic's 128.
- The stream is an AWS event stream whose ``chunk`` payloads carry each Anthropic event in
  base64 (``framings.AWS_EVENT_STREAM_BASE64``); errors are Bedrock's (``x-amzn-ErrorType``
  and ``{"message": ...}``), the Anthropic validator's text inside, paths counted from 0.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from toolnames_core.formats import anthropic_messages
from toolnames_core.formats import bedrock_converse
from toolnames_core.framings import AWS_EVENT_STREAM_BASE64
from toolnames_core.model import RequestView

API = "bedrock-invoke"


def read_request(body: dict) -> RequestView:
    if "anthropic_version" not in body:
        # Another model's body behind an ARN: its shape is not Anthropic's.
        return RequestView(API)
    view = anthropic_messages.read_request(body)
    view.api = API
    # Streaming is the endpoint, not a body field; the stream answer says which it was.
    view.streaming = False
    return view


class _Request(anthropic_messages.FORMAT.shapes.request, total=False):
    """What the Anthropic adapter reads, and the key that says the body is Anthropic's."""

    anthropic_version: Any


# For the fast reader (formats/base.py Shapes): Anthropic's, with anthropic_version.
SHAPES = anthropic_messages.FORMAT.shapes._replace(request=_Request)

# Messages' record but for where it is, what decides its rule, its framing and its errors: a
# change to how Messages is read reaches this door too.
FORMAT = dataclasses.replace(
    anthropic_messages.FORMAT,
    api=API,
    title="Claude on AWS Bedrock (InvokeModel)",
    path=re.compile(
        r"/model/(?:[^/]*anthropic\.|arn:).*/invoke(?:-with-response-stream)?\Z", re.IGNORECASE
    ),
    # docs/providers.md §7a: the anthropic SDKs keep ':' (quote(model, safe=":")), boto3 and
    # botocore escape it, and an ARN's '/' comes escaped or not.
    example_paths=(
        "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke",
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream",
        "/model/global.anthropic.claude-opus-4-6-v1%3A0/invoke",
        "/model/arn:aws:bedrock:us-east-1:123456789012:inference-profile%2F"
        "us.anthropic.claude-3-5-sonnet-20240620-v1:0/invoke-with-response-stream",
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile"
        "%2Fabc123/invoke",
        "/bedrock/model/anthropic.claude-3-5-haiku-20241022-v1:0/invoke",
    ),
    path_text=".../model/<id>/invoke",
    host_decides=False,
    read_request=read_request,
    framing=AWS_EVENT_STREAM_BASE64,
    shapes=SHAPES,
    block_response=bedrock_converse.block_response,
)
