"""Cohere's chat v2 for the stand-in provider (providers.md §10): POST …/v2/chat.

Provenance markers ("modeled", "inferred", "invented") as explained in shared.py.
"""

from __future__ import annotations

import hashlib
import re
import uuid

from standin.shared import Offered
from standin.shared import ProviderError
from standin.shared import StandinFormat
from standin.shared import as_dict
from standin.shared import as_list
from standin.shared import pieces
from standin.shared import sse_event
from standin.shared import text_pieces

__all__ = ["CohereChat"]

# providers.md §10 (observed): A-Za-z0-9_, not starting with a digit; no length limit known.
COHERE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# providers.md §10 (Doc): the only values of tool_choice.
CHOICES = ("REQUIRED", "NONE")


class CohereChat(StandinFormat):
    """providers.md §10: a v2 chat body, Cohere's {"id", "message"} errors, its answer with
    ``message.tool_calls`` and its SSE events (the call's name in ``tool-call-start``)."""

    def mode_for(self, path):
        return "body" if path.endswith("/v2/chat") else None

    def error(self, message, status=400, **_) -> ProviderError:
        # providers.md §10: Cohere's error body is {"id": "<uuid>", "message": "..."}.
        digest = hashlib.sha256(message.encode()).digest()[:16]
        return ProviderError(status, {"id": str(uuid.UUID(bytes=digest)), "message": message})

    def not_json(self):
        return self.error("[standin-invented] invalid request: the body is not valid JSON.")

    def _name(self, obj, where: str) -> str:
        function = as_dict(as_dict(obj).get("function"))
        name = function.get("name")
        if not isinstance(name, str):
            # Modeled on Cohere's "invalid request: …" texts; no observed one.
            raise self.error(f"invalid request: {where}.function.name is required.")
        return name

    def check_name(self, name: str) -> None:
        if not COHERE_NAME.fullmatch(name):
            # providers.md §10: observed text (langflow-ai/langflow #5465).
            raise self.error(
                "invalid request: tool names can only contain certain characters (A-Za-z0-9_) "
                f"and can't begin with a digit (provided name: '{name}')."
            )

    def validate(self, body, name_max_length=None):
        tools = as_list(body.get("tools"))
        for i, tool in enumerate(tools):
            kind = as_dict(tool).get("type", "function")
            if kind != "function":
                # Invented: v2's only tool type is "function" (the SDK's ToolV2); no text known.
                raise self.error(f"[standin-invented] invalid request: tools[{i}].type {kind!r}")
            self.check_name(self._name(tool, f"tools[{i}]"))
        # Inferred: the names of calls in the history are held to the same rule, as OpenAI's
        # and Anthropic's are (providers.md §1.2); no Cohere text says so either way.
        for i, message in enumerate(as_list(body.get("messages"))):
            if as_dict(message).get("role") != "assistant":
                continue
            for j, call in enumerate(as_list(as_dict(message).get("tool_calls"))):
                self.check_name(self._name(call, f"messages[{i}].tool_calls[{j}]"))
        choice = body.get("tool_choice")
        if choice is not None and choice not in CHOICES:
            # Invented: providers.md §10 documents the two values, not the text for another.
            raise self.error(
                f"[standin-invented] invalid request: tool_choice must be one of {CHOICES}, "
                f"got {choice!r}."
            )
        if choice == "REQUIRED" and not tools:
            # providers.md §10 (Doc): "the tools parameter must be passed in the request";
            # the text is invented.
            raise self.error(
                "[standin-invented] invalid request: tool_choice REQUIRED needs tools."
            )

    def offered(self, body):
        out = {}
        for tool in as_list(body.get("tools")):
            function = as_dict(as_dict(tool).get("function"))
            if isinstance(function.get("name"), str):
                out.setdefault(function["name"], Offered(as_dict(function.get("parameters"))))
        return out

    def forced(self, body):
        if body.get("tool_choice") == "REQUIRED":
            return next(iter(self.offered(body)), None)
        return None

    def ends_with_tool_result(self, body):
        messages = as_list(body.get("messages"))
        return bool(messages) and as_dict(messages[-1]).get("role") == "tool"

    @staticmethod
    def _call(call, arguments: str) -> dict:
        # providers.md §10: {id, type: "function", function: {name, arguments}}.
        return {
            "id": call.call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": arguments},
        }

    @staticmethod
    def _usage(turn) -> dict:
        # Shaped like the SDK's Usage (billed_units, tokens).
        counts = {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens}
        return {"billed_units": counts, "tokens": counts}

    @staticmethod
    def _finish(turn) -> str:
        return "TOOL_CALL" if turn.calls else "COMPLETE"

    def render(self, turn, body):
        message: dict = {"role": "assistant"}
        if turn.calls:
            message["tool_plan"] = "I will call the tool."
            message["tool_calls"] = [self._call(c, c.arguments_json) for c in turn.calls]
        else:
            message["content"] = [{"type": "text", "text": turn.text}]
        return {
            "id": turn.uid,
            "finish_reason": self._finish(turn),
            "message": message,
            "usage": self._usage(turn),
        }

    def events(self, turn, body, query):
        # providers.md §10 and the API reference's stream events: each event's type is in
        # its data (and, modeled, in an ``event:`` line); "[DONE]" ends the stream, the
        # OpenAPI's terminator.
        start = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": []}
        out = [{"type": "message-start", "id": turn.uid, "delta": {"message": start}}]
        if turn.calls:
            out.append({"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will"}}})
        for i, call in enumerate(turn.calls):
            first = self._call(call, "")
            out.append(
                {"type": "tool-call-start", "index": i, "delta": {"message": {"tool_calls": first}}}
            )
            for frag in pieces(call.arguments_json, 10):
                calls = {"function": {"arguments": frag}}
                out.append(
                    {
                        "type": "tool-call-delta",
                        "index": i,
                        "delta": {"message": {"tool_calls": calls}},
                    }
                )
            out.append({"type": "tool-call-end", "index": i})
        if turn.text is not None:
            content = {"type": "text", "text": ""}
            out.append(
                {"type": "content-start", "index": 0, "delta": {"message": {"content": content}}}
            )
            for piece in text_pieces(turn.text):
                delta = {"message": {"content": {"text": piece}}}
                out.append({"type": "content-delta", "index": 0, "delta": delta})
            out.append({"type": "content-end", "index": 0})
        end = {"finish_reason": self._finish(turn), "usage": self._usage(turn)}
        out.append({"type": "message-end", "delta": end})
        return [sse_event(e, e["type"]) for e in out] + [sse_event("[DONE]")]
