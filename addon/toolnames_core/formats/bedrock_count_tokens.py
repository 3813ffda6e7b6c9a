"""Token counting for Claude on AWS Bedrock: ``POST /model/{modelId}/count-tokens``
(docs/providers.md §7a).

The body is ``{"input": {"invokeModel": {"body": "<base64>"}}}``: the InvokeModel body, an
Anthropic Messages body with ``anthropic_version``, encoded in base64 ("Base64-encoded binary
data", AWS's InvokeModelTokensRequest), as boto3's ``count_tokens`` sends it. This format
reads the decoded body as InvokeModel does (``bedrock_invoke``), under Anthropic's rule on
every host; findings and fixes are pathed from the top of the body sent
(``input.invokeModel.body.tools[1].name``), and fix mode renames inside the base64 and
encodes it again (``WireFormat.carried``). A string that is not base64 is said
(request-unreadable), never an exception.

The other form, ``{"input": {"converse": {…}}}``, is a Converse body: its tools are under
Bedrock's Converse rule, not InvokeModel's, and this format does not read it; a request
that carries tools in it is said to be unread. The answer, ``{"inputTokens": n}``, names no
tool; errors are Bedrock's ValidationException, as InvokeModel's.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from typing import Any
from typing import TypedDict

from toolnames_core.formats import bedrock_invoke
from toolnames_core.formats.base import Carried
from toolnames_core.model import RequestView

__all__ = ["API", "CARRIED", "FORMAT"]

API = "bedrock-count-tokens"


def _decode(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as e:
        raise ValueError(str(e)) from None


def _encode(content: bytes) -> str:
    return base64.b64encode(content).decode("ascii")


# What the fast reader decodes of the body sent: the string, and whether a Converse form is there.
class _InvokeModel(TypedDict, total=False):
    body: Any


class _Input(TypedDict, total=False):
    invokeModel: _InvokeModel | None
    converse: Any


class _Sent(TypedDict, total=False):
    input: _Input | None


CARRIED = Carried(
    where=("input", "invokeModel", "body"),
    encoding="base64",
    decode=_decode,
    encode=_encode,
    shape=_Sent,
    unread={
        ("input", "converse", "toolConfig"): (
            "is in count-tokens' Converse form, which toolnames does not read (its tools get "
            "Bedrock's Converse rule), so its tool names are not checked"
        ),
    },
)


def read_request(body: dict) -> RequestView:
    """The decoded InvokeModel body, read as InvokeModel reads it, under this format's id."""
    view = bedrock_invoke.read_request(body)
    view.api = API
    return view


# InvokeModel's record (its rule, reading, block answer) but for where it is, the body it
# reads being carried in base64, and an answer that names no tool and never streams.
FORMAT = dataclasses.replace(
    bedrock_invoke.FORMAT,
    api=API,
    title="Claude on AWS Bedrock (CountTokens)",
    path=re.compile(r"/model/(?:[^/]*anthropic\.|arn:).*/count-tokens\Z", re.IGNORECASE),
    # boto3 escapes the id's ':' (bedrock-runtime count_tokens); a gateway may keep it.
    example_paths=(
        "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens",
        "/model/anthropic.claude-haiku-4-5-20251001-v1:0/count-tokens",
    ),
    path_text=".../model/<id>/count-tokens",
    read_request=read_request,
    # Its tools sit inside the base64, under no key of the body sent.
    offer_keys=(),
    read_calls=lambda body: [],
    stream_collector=None,
    framing=None,
    carried=CARRIED,
)
