"""OpenAI Chat Completions for the stand-in provider.

OpenAIErrors (OpenAI's error shape and name checks) is also the base of
openai_responses.Responses.

Provenance markers ("modeled", "inferred", "invented") as explained in shared.py.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from standin.shared import CREATED
from standin.shared import Offered
from standin.shared import ProviderError
from standin.shared import StandinFormat
from standin.shared import ToolCall
from standin.shared import as_dict
from standin.shared import as_list
from standin.shared import pieces
from standin.shared import sse_event
from standin.shared import text_pieces

__all__ = [
    "ChatCompletions",
    "OPENAI_MAX",
    "OPENAI_NAME",
    "ToolRef",
    "OpenAIErrors",
]

# providers.md §2/§3: OpenAI's observed pattern; §2: max length 64.
OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]+")
OPENAI_MAX = 64


class ToolRef(NamedTuple):
    """How a Chat Completions tool, choice or call names its tool."""

    kind: str  # "function" or "custom"
    name: object  # a str when the request is well formed
    custom: bool


class OpenAIErrors(StandinFormat):
    def error(self, message, param=None, code=None, **_) -> ProviderError:
        # Shape: providers.md §2 (dapr/dapr-agents #248) and §3.
        body = {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": code,
            }
        }
        return ProviderError(400, body)

    def not_json(self):
        # Not in providers.md: OpenAI's parse-failure text as commonly seen, shortened.
        return self.error(
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
            "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
            "sent was not valid JSON.)"
        )

    def missing(self, where: str) -> ProviderError:
        # Modeled on OpenAI's missing-parameter errors; not in providers.md.
        return self.error(
            f"Missing required parameter: '{where}'.", where, "missing_required_parameter"
        )

    def check_name(self, name, where: str, max_len: int = OPENAI_MAX) -> None:
        if not isinstance(name, str):
            raise self.missing(where)
        if len(name) > max_len:
            # providers.md §2: observed error text (mastra-ai/mastra #6302; code from mcphub.nvim PR #243).
            raise self.error(
                f"Invalid '{where}': string too long. Expected a string with maximum length {max_len}, "
                f"but got a string with length {len(name)} instead.",
                where,
                "string_above_max_length",
            )
        if not OPENAI_NAME.fullmatch(name):
            # providers.md §2: observed error text (brekkylab/ailoy PR #109), code "invalid_value".
            raise self.error(
                f"Invalid '{where}': string does not match pattern. Expected a string that matches "
                "the pattern '^[a-zA-Z0-9_-]+$'.",
                where,
                "invalid_value",
            )

    def bad_enum(self, where: str, value, allowed: tuple[str, ...]) -> ProviderError:
        # Modeled on OpenAI's enum errors; providers.md has no verbatim text for a
        # malformed tool_choice (§4 only has Azure's old "'$.tool_choice' is invalid").
        if value is None:
            return self.missing(where)
        names = ", ".join(f"'{a}'" for a in allowed[:-1]) + f", and '{allowed[-1]}'"
        return self.error(
            f"Invalid value: '{value}'. Supported values are: {names}.", where, "invalid_value"
        )

    def not_found(self, token: str) -> ProviderError:
        # providers.md §3: observed Responses text, param "tool_choice".  For Chat
        # Completions providers.md §2/§18 found NO verbatim OpenAI text, so Chat uses
        # this same Responses text on purpose.
        return self.error(f"Tool choice '{token}' not found in 'tools' parameter.", "tool_choice")

    @staticmethod
    def sse_events(objects: list[dict], named: bool) -> list[bytes]:
        return [sse_event(o, o["type"] if named else None) for o in objects]


class ChatCompletions(OpenAIErrors):
    """providers.md §2: POST …/chat/completions."""

    @staticmethod
    def _tool_name(tool: dict) -> ToolRef:
        kind = tool.get("type", "function")
        if kind == "custom":
            return ToolRef("custom", as_dict(tool.get("custom")).get("name"), True)
        return ToolRef("function", as_dict(tool.get("function")).get("name"), False)

    def mode_for(self, path):
        return "body" if path.endswith("/chat/completions") else None

    def offered(self, body):
        out = {}
        for tool in as_list(body.get("tools")):
            kind, name, custom = self._tool_name(as_dict(tool))
            if isinstance(name, str):
                params = as_dict(as_dict(as_dict(tool).get("function")).get("parameters"))
                out.setdefault(name, Offered(params, custom))
        return out

    def validate(self, body, name_max_length=None):
        longest = name_max_length or OPENAI_MAX
        tools = as_list(body.get("tools"))
        if body.get("tools") == []:
            # providers.md §2: OpenAI rejects an empty tools array with code empty_array; the
            # message is modeled on its other "Invalid 'x'" texts, not observed.
            raise self.error(
                "Invalid 'tools': empty array. Expected an array with minimum length 1, "
                "but got an empty array instead.",
                "tools",
                "empty_array",
            )
        for i, tool in enumerate(tools):
            kind, name, _ = self._tool_name(as_dict(tool))
            self.check_name(name, f"tools[{i}].{kind}.name", longest)
        for i, fn in enumerate(as_list(body.get("functions"))):  # legacy, providers.md §2
            self.check_name(as_dict(fn).get("name"), f"functions[{i}].name", longest)
        # providers.md §1.2/§2: names in history are validated too (mcp-use PR #94).
        for i, msg in enumerate(as_list(body.get("messages"))):
            for j, call in enumerate(as_list(as_dict(msg).get("tool_calls"))):
                kind, name, _ = self._tool_name(as_dict(call))
                self.check_name(name, f"messages[{i}].tool_calls[{j}].{kind}.name", longest)
            if "function_call" in as_dict(msg):
                self.check_name(
                    as_dict(msg["function_call"]).get("name"),
                    f"messages[{i}].function_call.name",
                    longest,
                )
        self._check_choice(body.get("tool_choice"), tools)

    def _check_choice(self, choice, tools):
        if choice is None:
            return
        if not tools:
            # providers.md §2: observed text (dapr/dapr-agents #248), for any tool_choice value.
            raise self.error(
                "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                "tool_choice",
            )
        if isinstance(choice, str):
            if choice not in ("none", "auto", "required"):
                raise self.bad_enum("tool_choice", choice, ("none", "auto", "required"))
            return
        if not isinstance(choice, dict):
            # Modeled on OpenAI's type errors; not in providers.md.
            raise self.error(
                "Invalid type for 'tool_choice': expected one of a string or an object.",
                "tool_choice",
                "invalid_type",
            )
        declared = {kind: set() for kind in ("function", "custom")}
        for tool in tools:
            kind, name, _ = self._tool_name(as_dict(tool))
            declared[kind].add(name)
        kind = choice.get("type")
        if kind in ("function", "custom"):
            # providers.md §2: {"type":"function","function":{"name":"X"}} / custom form.
            name = as_dict(choice.get(kind)).get("name")
            if not isinstance(name, str):
                raise self.missing(f"tool_choice.{kind}.name")
            if name not in declared[kind]:
                raise self.not_found(name)
        elif kind == "allowed_tools":
            # providers.md §2: {"type":"allowed_tools","allowed_tools":{"mode":…,"tools":[…]}}.
            allowed = as_dict(choice.get("allowed_tools"))
            if allowed.get("mode") not in ("auto", "required"):
                raise self.bad_enum(
                    "tool_choice.allowed_tools.mode", allowed.get("mode"), ("auto", "required")
                )
            for entry in as_list(allowed.get("tools")):
                entry_kind, name, _ = self._tool_name(as_dict(entry))
                if name not in declared[entry_kind]:
                    raise self.not_found(str(name))
        else:
            # e.g. {"type":"tool","toolName":…} (an AI SDK shape leaking through).
            raise self.bad_enum("tool_choice.type", kind, ("function", "allowed_tools", "custom"))

    def forced(self, body):
        choice, offered = body.get("tool_choice"), self.offered(body)
        if choice == "required":
            return next(iter(offered), None)
        choice = as_dict(choice)
        if choice.get("type") in ("function", "custom"):
            return as_dict(choice.get(choice["type"])).get("name")
        allowed = as_dict(choice.get("allowed_tools"))
        if choice.get("type") == "allowed_tools" and allowed.get("mode") == "required":
            entries = as_list(allowed.get("tools"))
            return self._tool_name(as_dict(entries[0])).name if entries else None
        return None

    def ends_with_tool_result(self, body):
        messages = as_list(body.get("messages"))
        return bool(messages) and as_dict(messages[-1]).get("role") in ("tool", "function")

    @staticmethod
    def _call(call: ToolCall) -> dict:
        # providers.md §2: {id, type:"function", function:{name, arguments}} / custom form.
        if call.custom:
            return {
                "id": call.call_id,
                "type": "custom",
                "custom": {"name": call.name, "input": ""},
            }
        return {
            "id": call.call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments_json},
        }

    def _usage(self, turn):
        return {
            "prompt_tokens": turn.input_tokens,
            "completion_tokens": turn.output_tokens,
            "total_tokens": turn.input_tokens + turn.output_tokens,
        }

    def render(self, turn, body):
        message = {"role": "assistant", "content": turn.text, "refusal": None, "annotations": []}
        if turn.calls:
            message["tool_calls"] = [self._call(c) for c in turn.calls]
        return {
            "id": f"chatcmpl-{turn.uid}",
            "object": "chat.completion",
            "created": CREATED,
            "model": turn.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if turn.calls else "stop",
                }
            ],
            "usage": self._usage(turn),
            "service_tier": "default",
            "system_fingerprint": "fp_standin",
        }

    def events(self, turn, body, query):
        base = {
            "id": f"chatcmpl-{turn.uid}",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": turn.model,
            "system_fingerprint": "fp_standin",
        }

        def chunk(delta, finish=None):
            return {
                **base,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }

        out = [chunk({"role": "assistant", "content": "" if turn.text else None, "refusal": None})]
        for piece in text_pieces(turn.text or ""):
            if piece:
                out.append(chunk({"content": piece}))
        for i, call in enumerate(turn.calls):
            # providers.md §2: the first chunk per index carries id/type/name with
            # arguments ""; later chunks carry only index + argument fragments.
            if call.custom:
                out.append(chunk({"tool_calls": [{"index": i, **self._call(call)}]}))
                continue
            first = {"index": i, "id": call.call_id, "type": "function"}
            out.append(
                chunk({"tool_calls": [{**first, "function": {"name": call.name, "arguments": ""}}]})
            )
            for frag in pieces(call.arguments_json, 10):
                out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]}))
        out.append(chunk({}, "tool_calls" if turn.calls else "stop"))
        if as_dict(body.get("stream_options")).get("include_usage"):
            out.append({**base, "choices": [], "usage": self._usage(turn)})
        return self.sse_events(out, named=False) + [b"data: [DONE]\n\n"]
