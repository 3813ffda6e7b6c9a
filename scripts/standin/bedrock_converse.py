"""AWS Bedrock Converse / ConverseStream for the stand-in provider, with its event-stream framing.

Provenance markers ("modeled", "inferred", "invented") as explained in shared.py.
"""

from __future__ import annotations

import json
import re
import struct
import zlib
from urllib.parse import unquote

from standin.shared import Offered
from standin.shared import ProviderError
from standin.shared import StandinFormat
from standin.shared import ToolCall
from standin.shared import as_dict
from standin.shared import as_list
from standin.shared import pieces
from standin.shared import text_pieces

__all__ = [
    "BEDROCK_MAX",
    "BEDROCK_NAME",
    "BedrockConverse",
    "CONVERSE_PATH",
    "encode_event_message",
]

# providers.md §7: "Length Constraints: ... Maximum length of 64. Pattern: [a-zA-Z0-9_-]+".
BEDROCK_NAME = re.compile(r"[a-zA-Z0-9_-]+")
BEDROCK_MAX = 64
CONVERSE_PATH = re.compile(r"/model/[^/]+/converse(-stream)?$")


def encode_event_message(event_type: str, payload: dict) -> bytes:
    """One AWS event-stream message (application/vnd.amazon.eventstream).

    Layout: total length, headers length (big-endian uint32), prelude CRC32,
    headers (1-byte name length, name, type 7 = string, 2-byte value length,
    value), payload, message CRC32 over everything before it.
    """
    headers = b""
    for name, value in (
        (":event-type", event_type),
        (":content-type", "application/json"),
        (":message-type", "event"),
    ):
        raw_name, raw_value = name.encode(), value.encode()
        headers += (
            bytes([len(raw_name)])
            + raw_name
            + b"\x07"
            + struct.pack(">H", len(raw_value))
            + raw_value
        )
    body = json.dumps(payload, separators=(",", ":")).encode()
    prelude = struct.pack(">II", 12 + len(headers) + len(body) + 4, len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


class BedrockConverse(StandinFormat):
    """providers.md §7: POST /model/{modelId}/converse and /converse-stream."""

    def stream_content_type(self, query):
        return "application/vnd.amazon.eventstream"

    def error(self, message, **_):
        # Brief: status 400, x-amzn-ErrorType: ValidationException, body {"message": …}.
        return ProviderError(
            400, {"message": message}, [("x-amzn-ErrorType", "ValidationException")]
        )

    def not_json(self):
        # Real Bedrock would answer SerializationException; the brief fixes ValidationException.
        return self.error("[standin] request body is not valid JSON")

    def model(self, body, path):
        match = re.search(r"/model/([^/]+)/converse", path)
        return unquote(match.group(1)) if match else "standin-model"

    @staticmethod
    def _specs(body) -> list[tuple[int, dict]]:
        tools = as_list(as_dict(body.get("toolConfig")).get("tools"))
        return [
            (i, as_dict(t)["toolSpec"])
            for i, t in enumerate(tools)
            if isinstance(as_dict(t).get("toolSpec"), dict)
        ]

    def mode_for(self, path):
        match = CONVERSE_PATH.search(path)
        if match is None:
            return None
        return "stream" if match.group(1) else "json"

    def offered(self, body):
        out = {}
        for _, spec in self._specs(body):
            if isinstance(spec.get("name"), str):
                out.setdefault(
                    spec["name"], Offered(as_dict(as_dict(spec.get("inputSchema")).get("json")))
                )
        return out

    @staticmethod
    def _constraint_errors(prefix: str, name) -> list[str]:
        # providers.md §7: observed constraint texts (microsoft/mcp #842, remote-swe-agents PR #457).
        name = name if isinstance(name, str) else ""
        fail = f"{prefix} failed to satisfy constraint: Member must "
        errors = []
        if len(name) < 1:
            errors.append(fail + "have length greater than or equal to 1")
        if len(name) > BEDROCK_MAX:
            errors.append(fail + f"have length less than or equal to {BEDROCK_MAX}")
        if name and not BEDROCK_NAME.fullmatch(name):
            errors.append(fail + "satisfy regular expression pattern: [a-zA-Z0-9_-]+")
        return errors

    def validate(self, body, name_max_length=None):  # its documented limit only
        # AWS list paths are 1-based ("toolConfig.tools.1.member" is the first tool);
        # providers.md does not say, this follows AWS (Coral) validation messages.
        errors = []
        config = body.get("toolConfig")
        if config is not None and not as_list(as_dict(config).get("tools")):
            # providers.md §7: observed (Portkey-AI/gateway #1124).
            errors.append(
                "Value at 'toolConfig.tools' failed to satisfy constraint: "
                "Member must have length greater than or equal to 1"
            )
        for i, spec in self._specs(body):
            name = spec.get("name")
            errors += self._constraint_errors(
                f"Value '{name}' at 'toolConfig.tools.{i + 1}.member.toolSpec.name'", name
            )
        has_tool_blocks = False
        for i, msg in enumerate(as_list(body.get("messages"))):
            for j, block in enumerate(as_list(as_dict(msg).get("content"))):
                block = as_dict(block)
                has_tool_blocks |= "toolUse" in block or "toolResult" in block
                if "toolUse" in block:
                    # providers.md §7: observed history text (openclaw #12892): "Value at '…'" without the value.
                    where = (
                        f"Value at 'messages.{i + 1}.member.content.{j + 1}.member.toolUse.name'"
                    )
                    errors += self._constraint_errors(where, as_dict(block["toolUse"]).get("name"))
        choice = as_dict(config).get("toolChoice")
        if choice is not None:
            if (
                not isinstance(choice, dict)
                or len(choice) != 1
                or next(iter(choice)) not in ("auto", "any", "tool")
            ):
                # Modeled; providers.md §7 lists the union members but no error text for a bad one.
                raise self.error(
                    "[standin-modeled] toolConfig.toolChoice must set exactly one of auto, any, tool"
                )
            if "tool" in choice:
                name = as_dict(choice["tool"]).get("name")
                errors += self._constraint_errors(
                    f"Value '{name}' at 'toolConfig.toolChoice.tool.name'", name
                )
        if errors:
            plural = "s" if len(errors) > 1 else ""
            raise self.error(
                f"{len(errors)} validation error{plural} detected: " + "; ".join(errors)
            )
        if has_tool_blocks and config is None:
            # providers.md §7: observed (langgenius/dify #17545).
            raise self.error(
                "The toolConfig field must be defined when using toolUse and toolResult content blocks."
            )
        if "tool" in as_dict(choice) and choice["tool"]["name"] not in self.offered(body):
            # INVENTED: providers.md §7 says the text for a named choice absent from tools was "not found".
            raise self.error(
                f"[standin-invented] toolConfig.toolChoice.tool.name '{choice['tool']['name']}' "
                "does not match any tool in toolConfig.tools."
            )

    def forced(self, body):
        choice = as_dict(as_dict(body.get("toolConfig")).get("toolChoice"))
        if "any" in choice:
            return next(iter(self.offered(body)), None)
        return as_dict(choice.get("tool")).get("name")

    def ends_with_tool_result(self, body):
        messages = as_list(body.get("messages"))
        if not messages or as_dict(messages[-1]).get("role") != "user":
            return False
        return any("toolResult" in as_dict(b) for b in as_list(messages[-1].get("content")))

    def _usage(self, turn):
        return {
            "inputTokens": turn.input_tokens,
            "outputTokens": turn.output_tokens,
            "totalTokens": turn.input_tokens + turn.output_tokens,
        }

    @staticmethod
    def _tool_use_id(call: ToolCall) -> str:
        return "tooluse_" + call.call_id[5:]

    def render(self, turn, body):
        if turn.text is not None:
            content = [{"text": turn.text}]
        else:
            content = [
                {
                    "toolUse": {
                        "toolUseId": self._tool_use_id(c),
                        "name": c.name,
                        "input": c.arguments,
                    }
                }
                for c in turn.calls
            ]
        return {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": "tool_use" if turn.calls else "end_turn",
            "usage": self._usage(turn),
            "metrics": {"latencyMs": 0},
        }

    def events(self, turn, body, query):
        # providers.md §7.  On the wire the event type is the :event-type header and the
        # payload is the inner object (the vercel/ai fixture shows it wrapped after decoding).
        out = [("messageStart", {"role": "assistant"})]
        if turn.text is not None:
            # Real Bedrock sends no contentBlockStart for text blocks.
            out += [
                ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}})
                for p in text_pieces(turn.text)
            ]
            out.append(("contentBlockStop", {"contentBlockIndex": 0}))
        for i, call in enumerate(turn.calls):
            start = {"toolUse": {"toolUseId": self._tool_use_id(call), "name": call.name}}
            out.append(("contentBlockStart", {"contentBlockIndex": i, "start": start}))
            out += [
                ("contentBlockDelta", {"contentBlockIndex": i, "delta": {"toolUse": {"input": p}}})
                for p in pieces(call.arguments_json, 10)
            ]
            out.append(("contentBlockStop", {"contentBlockIndex": i}))
        out.append(("messageStop", {"stopReason": "tool_use" if turn.calls else "end_turn"}))
        out.append(("metadata", {"usage": self._usage(turn), "metrics": {"latencyMs": 0}}))
        return [encode_event_message(kind, payload) for kind, payload in out]
