"""Claude on AWS Bedrock through InvokeModel / InvokeModelWithResponseStream for the stand-in
provider: Anthropic's Messages body and validator, Bedrock's paths, errors and framing.

Provenance markers ("modeled", "inferred", "invented") as explained in shared.py.
"""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import unquote

from standin.anthropic_messages import AnthropicMessages
from standin.bedrock_converse import encode_event_message
from standin.shared import ProviderError

__all__ = ["COUNT_PATH", "INVOKE_PATH", "BedrockCountTokens", "BedrockInvoke", "chunk_message"]

# Decoded first: the anthropic SDKs keep ':' in the model id, boto3 escapes it, and an
# inference-profile ARN holds a '/' (escaped or not), so the id is matched greedily.
INVOKE_PATH = re.compile(r"/model/(.+)/invoke(-with-response-stream)?$")
COUNT_PATH = re.compile(r"/model/(.+)/count-tokens$")
# Bedrock pads each chunk's payload with a "p" of varying length (the anthropic Java SDK's
# BedrockBackend.kt shows {"bytes": "eyJ0eXBlIjoi...ZXJlIn19", "p": "abcdefghijkl"}).
_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def chunk_message(event: dict, n: int = 0) -> bytes:
    """One ``chunk`` message of InvokeModelWithResponseStream: the event's JSON in base64."""
    raw = json.dumps(event, separators=(",", ":")).encode()
    payload = {"bytes": base64.b64encode(raw).decode("ascii"), "p": _PADDING[: 4 + n % 40]}
    return encode_event_message("chunk", payload)


class BedrockInvoke(AnthropicMessages):
    """POST /model/{modelId}/invoke and /invoke-with-response-stream with an Anthropic body
    (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html):
    Anthropic's name validator (``^[a-zA-Z0-9_-]{1,128}$``, as on api.anthropic.com), its text
    in Bedrock's error envelope."""

    def mode_for(self, path):
        match = INVOKE_PATH.search(unquote(path))
        if match is None or "anthropic." not in match.group(1) and "arn:" not in match.group(1):
            return None
        return "stream" if match.group(2) else "json"

    def stream_content_type(self, query):
        return "application/vnd.amazon.eventstream"

    def error(self, message, **_):
        # Bedrock's error answer: status 400, x-amzn-ErrorType, {"message": ...}; the Anthropic
        # validator's text travels in the message (anthropics/claude-code #5835: "API Error: 400
        # tools.15.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'").
        return ProviderError(
            400,
            {"message": message},
            [("x-amzn-ErrorType", "ValidationException")],
        )

    def not_json(self):
        return self.error(
            "[standin-modeled] Malformed input request, please reformat your input and try again."
        )

    def model(self, body, path):
        match = INVOKE_PATH.search(unquote(path))
        return match.group(1) if match else "standin-model"

    def validate(self, body, name_max_length=None):
        # The model is in the path and streaming is the endpoint; the version is required
        # (AWS's Claude Messages parameters page: "anthropic_version – (Required)").
        if "anthropic_version" not in body:
            raise self.error(
                "[standin-modeled] Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again."
            )
        for key in ("model", "stream"):
            if key in body:
                raise self.error(
                    f"[standin-modeled] Malformed input request: #: extraneous key [{key}] is not permitted, please reformat your input and try again."
                )
        super().validate(body, name_max_length)

    def events(self, turn, body, query):
        # Bedrock sends no ping ("An upstream that sends no pings at all, such as Amazon
        # Bedrock's binary event stream", code.claude.com/docs/en/llm-gateway-protocol), and
        # its message_stop carries the invocation metrics.
        out = self.event_objects(turn, body, ping=False)
        out[-1] = {
            **out[-1],
            "amazon-bedrock-invocationMetrics": {
                "inputTokenCount": turn.input_tokens,
                "outputTokenCount": turn.output_tokens,
                "invocationLatency": 1,
                "firstByteLatency": 1,
            },
        }
        return [chunk_message(event, n) for n, event in enumerate(out)]


class BedrockCountTokens(BedrockInvoke):
    """POST /model/{modelId}/count-tokens
    (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokensInput.html):
    ``input`` is a union of ``invokeModel`` (``body``, "Base64-encoded binary data", the
    InvokeModel body, which is validated as InvokeModel validates it) and ``converse``;
    answered ``{"inputTokens": n}``."""

    def mode_for(self, path):
        match = COUNT_PATH.search(unquote(path))
        if match is None or "anthropic." not in match.group(1) and "arn:" not in match.group(1):
            return None
        return "json"

    def model(self, body, path):
        match = COUNT_PATH.search(unquote(path))
        return match.group(1) if match else "standin-model"

    def carried(self, body) -> dict:
        """The InvokeModel body the request counts, decoded; a ValidationException as
        Bedrock's for what is not one."""
        given = body.get("input")
        if not isinstance(given, dict) or len(given) != 1:
            # CountTokensInput "is a UNION, so only one of the following members can be
            # specified" (AWS's API reference); the wording is modeled on AWS's others.
            raise self.error(
                "[standin-modeled] 1 validation error detected: Value at 'input' failed to "
                "satisfy constraint: Member must have exactly one member set"
            )
        if "converse" in given:
            raise self.error("[standin-invented] the stand-in counts only the invokeModel form")
        carried = given.get("invokeModel")
        text = carried.get("body") if isinstance(carried, dict) else None
        if not isinstance(text, str):
            raise self.error(
                "[standin-modeled] 1 validation error detected: Value null at "
                "'input.invokeModel.body' failed to satisfy constraint: Member must not be null"
            )
        try:
            decoded = json.loads(base64.b64decode(text, validate=True))
        except ValueError:  # binascii.Error, JSONDecodeError and UnicodeDecodeError alike
            raise self.not_json() from None
        if not isinstance(decoded, dict):
            raise self.not_json()
        return decoded

    def validate(self, body, name_max_length=None):
        super().validate(self.carried(body), name_max_length)

    def decide(self, body, path, raw, call_header):
        return super().decide(self.carried(body), path, raw, "")  # counting calls no tool

    def render(self, turn, body, done: bool = True):
        return {"inputTokens": turn.input_tokens}
