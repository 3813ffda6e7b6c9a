"""Anthropic Messages for the stand-in provider.

Provenance markers ("modeled", "inferred", "invented") as explained in standin_common.py.
"""

from __future__ import annotations

import json
import re

from standin_common import ProviderError
from standin_common import WireFormat
from standin_common import _d
from standin_common import _l
from standin_common import _pieces
from standin_common import _sse
from standin_common import _text_pieces

# providers.md §5: "^[a-zA-Z0-9_-]{1,128}$".
ANTHROPIC_PATTERN = "^[a-zA-Z0-9_-]{1,128}$"
ANTHROPIC_MAX = 128


class AnthropicMessages(WireFormat):
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
            (i, _d(t))
            for i, t in enumerate(_l(body.get("tools")))
            if _d(t).get("type") in (None, "custom")
        ]

    def offered(self, body):
        out = {}
        for _, tool in self._user_tools(body):
            if isinstance(tool.get("name"), str):
                out.setdefault(tool["name"], (_d(tool.get("input_schema")), False))
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

    def validate(self, body):
        tools = _l(body.get("tools"))
        for i, tool in self._user_tools(body):
            self.check_name(tool.get("name"), f"tools.{i}.custom.name")
        has_tool_blocks = False
        for i, msg in enumerate(_l(body.get("messages"))):
            for j, block in enumerate(_l(_d(msg).get("content"))):
                kind = _d(block).get("type")
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
        if _d(choice).get("type") in ("auto", "any", "tool") and not tools:
            # Modeled, no observed text: a choice of a tool (any, tool, or auto) needs tools
            # to choose from; toolnames flags it as choice-without-tools. {"type": "none"} is
            # the documented way to send no tool call, with or without tools.
            raise self.error("tool_choice: tools must be provided to use this tool_choice type")
        if has_tool_blocks and not tools:
            # providers.md §5: observed (anthropic-sdk-python #494).
            raise self.error(
                "Requests which include tool_use or tool_result blocks must define tools."
            )
        names = [_d(t).get("name") for t in tools]
        if len(names) != len(set(map(str, names))):
            # providers.md §5: observed (claude-code #10687).
            raise self.error("tools: Tool names must be unique.")
        if _d(choice).get("type") == "tool" and choice["name"] not in names:
            # providers.md §5: 3rd-party capture of the upstream body.
            raise self.error(f"Tool '{choice['name']}' not found in provided tools")

    def forced(self, body):
        choice = _d(body.get("tool_choice"))
        if choice.get("type") == "any":
            return next(iter(self.offered(body)), None)
        return choice.get("name") if choice.get("type") == "tool" else None

    def ends_with_tool_result(self, body):
        messages = _l(body.get("messages"))
        if not messages or _d(messages[-1]).get("role") != "user":
            return False
        return any(_d(b).get("type") == "tool_result" for b in _l(messages[-1].get("content")))

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
        # providers.md §5: message_start, content_block_start/delta/stop, message_delta, message_stop.
        out = [
            {"type": "message_start", "message": self.render(turn, body, done=False)},
            {"type": "ping"},
        ]
        for index, block in enumerate(self._content(turn)):
            if block["type"] == "text":
                out.append(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {**block, "text": ""},
                    }
                )
                deltas = [{"type": "text_delta", "text": p} for p in _text_pieces(block["text"])]
            else:
                out.append(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {**block, "input": {}},
                    }
                )
                args = json.dumps(block["input"], separators=(",", ":"))
                deltas = [
                    {"type": "input_json_delta", "partial_json": p} for p in _pieces(args, 10)
                ]
            out += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
            out.append({"type": "content_block_stop", "index": index})
        stop = {"stop_reason": "tool_use" if turn.calls else "end_turn", "stop_sequence": None}
        out.append(
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": turn.output_tokens}}
        )
        out.append({"type": "message_stop"})
        return [_sse(o, o["type"]) for o in out]
