"""Ollama's native chat API (``POST /api/chat``) for the stand-in provider.

What Ollama documents and does (docs/providers.md §11): tools in OpenAI's function shape and
no ``tool_choice``; no check on any tool name (``api/types.go`` takes any string); streaming by
default, as NDJSON (``application/x-ndjson``), one answer object a line with a call whole in
one line, then a ``"done": true`` line; errors as ``{"error": "..."}``, before the stream with
their status, once it has begun as a line of its own (docs/api/errors.mdx). What it refuses
is what Go's JSON decoding refuses: a value of the wrong type; a missing or null one is the
zero value.

Provenance markers ("modeled", "inferred", "invented") as explained in shared.py.
"""

from __future__ import annotations

import json

from standin.shared import Offered
from standin.shared import ProviderError
from standin.shared import StandinFormat
from standin.shared import as_dict
from standin.shared import as_list
from standin.shared import text_pieces

__all__ = ["Ollama"]

# Fixed, so that answers are byte-for-byte reproducible.
CREATED_AT = "2026-01-01T00:00:00Z"


def _go_type(value: object, expected: type, field: str, go_type: str) -> None:
    """Go's json decoder refuses a value of another type than the field's; null is its zero
    value. Text modeled on encoding/json's UnmarshalTypeError ("json: cannot unmarshal
    string into Go struct field ChatRequest.tools of type api.Tools")."""
    if value is None or isinstance(value, expected) and not isinstance(value, bool):
        return
    kind = {str: "string", bool: "bool", int: "number", float: "number", list: "array"}.get(
        type(value), "object"
    )
    raise ProviderError(
        400,
        {"error": f"json: cannot unmarshal {kind} into Go struct field {field} of type {go_type}"},
    )


class Ollama(StandinFormat):
    def mode_for(self, path):
        # Streamed unless the body says "stream": false (Ollama's default is true).
        return "body-streams" if path.endswith("/api/chat") else None

    def stream_content_type(self, query):
        return "application/x-ndjson"

    def error(self, message, status: int = 400, **_):
        return ProviderError(status, {"error": message})

    def not_json(self):
        # Modeled on gin's ShouldBindJSON answer to a body that is not JSON.
        return self.error("invalid character looking for beginning of value")

    def stream_error(self, message: str) -> bytes:
        return json.dumps({"error": message}).encode() + b"\n"

    def validate(self, body, name_max_length=None):
        # No name is checked: name_max_length (a drifted provider's limit) has no meaning here.
        if not isinstance(body.get("model"), str) or not body["model"]:
            # server/routes.go ChatHandler: 400 {"error": "model is required"}.
            raise self.error("model is required")
        _go_type(body.get("tools"), list, "ChatRequest.tools", "api.Tools")
        for tool in as_list(body.get("tools")):
            _go_type(tool, dict, "ChatRequest.tools", "api.Tool")
            function = as_dict(tool).get("function")
            _go_type(function, dict, "Tool.function", "api.ToolFunction")
            _go_type(as_dict(function).get("name"), str, "ToolFunction.name", "string")
        _go_type(body.get("messages"), list, "ChatRequest.messages", "[]api.Message")
        for message in as_list(body.get("messages")):
            _go_type(message, dict, "ChatRequest.messages", "api.Message")
            message = as_dict(message)
            _go_type(message.get("tool_name"), str, "Message.tool_name", "string")
            _go_type(message.get("tool_calls"), list, "Message.tool_calls", "[]api.ToolCall")
            for call in as_list(message.get("tool_calls")):
                _go_type(call, dict, "Message.tool_calls", "api.ToolCall")
                function = as_dict(call).get("function")
                _go_type(function, dict, "ToolCall.function", "api.ToolCallFunction")
                _go_type(as_dict(function).get("name"), str, "ToolCallFunction.name", "string")

    def offered(self, body):
        offered = {}
        for tool in as_list(body.get("tools")):
            function = as_dict(as_dict(tool).get("function"))
            name = function.get("name")
            if isinstance(name, str):
                offered.setdefault(name, Offered(as_dict(function.get("parameters"))))
        return offered

    def ends_with_tool_result(self, body):
        messages = as_list(body.get("messages"))
        return bool(messages) and as_dict(messages[-1]).get("role") == "tool"

    def _message(self, turn, content: str) -> dict:
        message = {"role": "assistant", "content": content}
        if turn.calls:
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "function": {"index": i, "name": call.name, "arguments": call.arguments},
                }
                for i, call in enumerate(turn.calls)
            ]
        return message

    def _done(self, turn) -> dict:
        return {
            "done": True,
            "done_reason": "stop",
            "total_duration": 1000000,
            "prompt_eval_count": turn.input_tokens,
            "eval_count": turn.output_tokens,
        }

    def render(self, turn, body):
        head = {"model": turn.model, "created_at": CREATED_AT}
        return {**head, "message": self._message(turn, turn.text or ""), **self._done(turn)}

    def events(self, turn, body, query):
        head = {"model": turn.model, "created_at": CREATED_AT}
        lines = []
        if turn.text:
            for piece in text_pieces(turn.text):
                message = {"role": "assistant", "content": piece}
                lines.append({**head, "message": message, "done": False})
        if turn.calls:
            # docs/api.md "Streaming with tools": the calls come whole in one line.
            lines.append({**head, "message": self._message(turn, ""), "done": False})
        message = {"role": "assistant", "content": ""}
        lines.append({**head, "message": message, **self._done(turn)})
        # Go's encoder: compact, raw UTF-8, one object a line.
        return [
            json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
            for line in lines
        ]
