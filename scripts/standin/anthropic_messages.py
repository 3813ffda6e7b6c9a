"""Anthropic Messages for the stand-in provider.

Provenance markers ("modeled", "inferred", "invented") as explained in shared.py.
"""

from __future__ import annotations

import json
import re

from standin.shared import Offered
from standin.shared import ProviderError
from standin.shared import StandinFormat
from standin.shared import as_dict
from standin.shared import as_list
from standin.shared import pieces
from standin.shared import sse_event
from standin.shared import text_pieces

__all__ = [
    "ANTHROPIC_MAX",
    "ANTHROPIC_PATTERN",
    "AnthropicMessages",
]

# providers.md §5: "^[a-zA-Z0-9_-]{1,128}$".
ANTHROPIC_PATTERN = "^[a-zA-Z0-9_-]{1,128}$"
ANTHROPIC_MAX = 128


class AnthropicMessages(StandinFormat):
    """providers.md §5: POST /v1/messages."""

    def error(self, message, **_):
        # providers.md §5: {"type":"error","error":{"type":"invalid_request_error","message":…}}.
        return ProviderError(
            400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        )

    def not_json(self):
        return self.error("Request body is not valid JSON.")  # modeled; not in providers.md

    @staticmethod
    def _user_tools(body) -> list[tuple[int, dict]]:
        # User tools have no type (or "custom"); server tools carry e.g. web_search_20250305.
        return [
            (i, as_dict(t))
            for i, t in enumerate(as_list(body.get("tools")))
            if as_dict(t).get("type") in (None, "custom")
        ]

    def mode_for(self, path):
        return "body" if path.endswith("/v1/messages") else None

    def offered(self, body):
        out = {}
        for _, tool in self._user_tools(body):
            if isinstance(tool.get("name"), str):
                out.setdefault(tool["name"], Offered(as_dict(tool.get("input_schema"))))
        return out

    def check_name(self, name, where: str) -> None:
        if not isinstance(name, str):
            raise self.error(f"{where}: Field required")  # modeled (pydantic wording)
        if len(name) > ANTHROPIC_MAX:
            # providers.md §5: observed "tools.18.custom.name: String should have at most 128 characters".
            raise self.error(f"{where}: String should have at most {ANTHROPIC_MAX} characters")
        if not re.fullmatch(ANTHROPIC_PATTERN[1:-1], name):
            # providers.md §5: observed (home-assistant/core #147760).
            raise self.error(f"{where}: String should match pattern '{ANTHROPIC_PATTERN}'")

    def validate(self, body, name_max_length=None):  # its documented limit only
        tools = as_list(body.get("tools"))
        for i, tool in self._user_tools(body):
            self.check_name(tool.get("name"), f"tools.{i}.custom.name")
        has_tool_blocks = False
        for i, msg in enumerate(as_list(body.get("messages"))):
            for j, block in enumerate(as_list(as_dict(msg).get("content"))):
                kind = as_dict(block).get("type")
                has_tool_blocks |= kind in ("tool_use", "tool_result")
                if kind == "tool_use":
                    # Inferred from the observed history-id error "messages.5.content.0.tool_use.id: …"
                    # (providers.md §5); no observed text for a bad tool_use *name* in history.
                    self.check_name(block.get("name"), f"messages.{i}.content.{j}.tool_use.name")
        choice = body.get("tool_choice")
        if choice is not None:
            if not isinstance(choice, dict):
                raise self.error(
                    "tool_choice: Input should be a valid dictionary or object to extract fields from"
                )
            if choice.get("type") not in ("auto", "any", "tool", "none"):
                # Modeled on Anthropic's pydantic union errors; not in providers.md.
                raise self.error(
                    f"tool_choice: Input tag '{choice.get('type')}' found using 'type' does not match any of "
                    "the expected tags: 'auto', 'any', 'tool', 'none'"
                )
            if choice["type"] == "tool" and not isinstance(choice.get("name"), str):
                raise self.error("tool_choice.tool.name: Field required")  # modeled
        if as_dict(choice).get("type") in ("auto", "any", "tool") and not tools:
            # Modeled, no observed text: a choice of a tool (any, tool, or auto) needs tools
            # to choose from; toolnames flags it as choice-without-tools. {"type": "none"} is
            # the documented way to send no tool call, with or without tools.
            raise self.error("tool_choice: tools must be provided to use this tool_choice type")
        if has_tool_blocks and not tools:
            # providers.md §5: observed (anthropic-sdk-python #494).
            raise self.error(
                "Requests which include tool_use or tool_result blocks must define tools."
            )
        names = [as_dict(t).get("name") for t in tools]
        if len(names) != len(set(map(str, names))):
            # providers.md §5: observed (claude-code #10687).
            raise self.error("tools: Tool names must be unique.")
        if as_dict(choice).get("type") == "tool" and choice["name"] not in names:
            # providers.md §5: 3rd-party capture of the upstream body.
            raise self.error(f"Tool '{choice['name']}' not found in provided tools")

    def forced(self, body):
        choice = as_dict(body.get("tool_choice"))
        if choice.get("type") == "any":
            return next(iter(self.offered(body)), None)
        return choice.get("name") if choice.get("type") == "tool" else None

    def ends_with_tool_result(self, body):
        messages = as_list(body.get("messages"))
        if not messages or as_dict(messages[-1]).get("role") != "user":
            return False
        return any(
            as_dict(b).get("type") == "tool_result" for b in as_list(messages[-1].get("content"))
        )

    def _usage(self, turn, output_tokens):
        return {
            "input_tokens": turn.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }

    def _content(self, turn):
        if turn.text is not None:
            return [{"type": "text", "text": turn.text}]
        return [
            {
                "type": "tool_use",
                "id": f"toolu_{c.call_id[5:]}",
                "name": c.name,
                "input": c.arguments,
            }
            for c in turn.calls
        ]

    def render(self, turn, body, done: bool = True):
        return {
            "id": f"msg_{turn.uid}",
            "type": "message",
            "role": "assistant",
            "model": turn.model,
            "content": self._content(turn) if done else [],
            "stop_reason": ("tool_use" if turn.calls else "end_turn") if done else None,
            "stop_sequence": None,
            "usage": self._usage(turn, turn.output_tokens if done else 1),
        }

    def events(self, turn, body, query):
        return [sse_event(o, o["type"]) for o in self.event_objects(turn, body)]

    def event_objects(self, turn, body, ping: bool = True) -> list[dict]:
        """The stream's events as JSON objects, in order (Bedrock sends the same ones, in its
        own framing, without the ping)."""
        # providers.md §5: message_start, content_block_start/delta/stop, message_delta, message_stop.
        out = [{"type": "message_start", "message": self.render(turn, body, done=False)}]
        if ping:
            out.append({"type": "ping"})
        for index, block in enumerate(self._content(turn)):
            if block["type"] == "text":
                out.append(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {**block, "text": ""},
                    }
                )
                deltas = [{"type": "text_delta", "text": p} for p in text_pieces(block["text"])]
            else:
                out.append(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {**block, "input": {}},
                    }
                )
                args = json.dumps(block["input"], separators=(",", ":"))
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(args, 10)]
            out += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
            out.append({"type": "content_block_stop", "index": index})
        stop = {"stop_reason": "tool_use" if turn.calls else "end_turn", "stop_sequence": None}
        out.append(
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": turn.output_tokens}}
        )
        out.append({"type": "message_stop"})
        return out
