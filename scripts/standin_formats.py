"""Wire formats of the stand-in provider: validation, the fake model, response bodies.

Every validation rule and error text here comes from
/work/shared/reference/providers.md (cited as "providers.md §N").  Texts that the
reference does not contain are marked "modeled" (shaped like the provider's
other errors), "inferred" (by analogy with an observed text) or "invented"
(no real text known; the message itself starts with "[standin-invented]").

Each format class turns a parsed JSON request into either a ProviderError
(status, body, headers) or a Turn (what the "model" answers), and renders a
Turn as a non-streaming body or as a list of stream events (bytes each).
The HTTP side lives in standin_provider.py.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import zlib
from dataclasses import dataclass
from dataclasses import field
from urllib.parse import parse_qs
from urllib.parse import unquote

# Fixed so responses are byte-for-byte reproducible (the brief asks for no randomness).
CREATED = 1767225600  # 2026-01-01T00:00:00Z

# providers.md §2/§3: OpenAI's observed pattern; §2: max length 64.
OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]+")
OPENAI_MAX = 64
# providers.md §3: "The 64 vs 128 length limit for top-level Responses function
# names is unconfirmed".  We use 64 (the stricter, Chat Completions value) so a
# proxy that keeps names <= 64 is safe; nested namespace tools use the spec's 128.
RESPONSES_MAX = 64
RESPONSES_NAMESPACED_MAX = 128
# providers.md §5: "^[a-zA-Z0-9_-]{1,128}$".
ANTHROPIC_PATTERN = "^[a-zA-Z0-9_-]{1,128}$"
ANTHROPIC_MAX = 128
# providers.md §18: "Treat 64 and ^[a-zA-Z_][a-zA-Z0-9_.:-]*$ as the live rule".
GEMINI_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]*")
GEMINI_MAX = 64
# providers.md §7: "Length Constraints: ... Maximum length of 64. Pattern: [a-zA-Z0-9_-]+".
BEDROCK_NAME = re.compile(r"[a-zA-Z0-9_-]+")
BEDROCK_MAX = 64

# providers.md §1.3: the wrapper names OpenAI/Azure models hallucinate.
PARALLEL_WRAPPERS = ("multi_tool_use.parallel", "parallel")


class ProviderError(Exception):
    """A provider's error response: HTTP status, JSON body and extra headers."""

    def __init__(self, status: int, body: dict, headers: tuple = ()):
        super().__init__(json.dumps(body))
        self.status, self.body, self.headers = status, body, list(headers)


@dataclass
class ToolCall:
    name: str
    arguments: dict
    call_id: str
    custom: bool = False  # OpenAI "custom" tools take free-text input, not JSON

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, separators=(",", ":"))


@dataclass
class Turn:
    """The fake model's answer: text or tool calls, plus ids and token counts."""

    model: str
    uid: str
    text: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    input_tokens: int = 1

    @property
    def output_tokens(self) -> int:
        return 1 + 8 * len(self.calls) if self.calls else 2


def _d(value) -> dict:
    return value if isinstance(value, dict) else {}


def _l(value) -> list:
    return value if isinstance(value, list) else []


def _pieces(text: str, size: int) -> list[str]:
    """Split text so streams carry several deltas (like real token streams)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _text_pieces(text: str) -> list[str]:
    return _pieces(text, max(1, (len(text) + 1) // 2))


def _sse(data: dict | str, event: str | None = None, end: str = "\n\n") -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}{end}".encode()


def arguments_for(name: str, offered: dict[str, tuple[dict, bool]]) -> dict:
    """Deterministic arguments: {"city":"Paris"} if the schema requires a string "city"."""
    if name in offered:
        schema = offered[name][0]
        prop = _d(_d(schema.get("properties")).get("city"))
        if "city" in _l(schema.get("required")) and str(prop.get("type", "")).lower() == "string":
            return {"city": "Paris"}
        return {}
    if name in PARALLEL_WRAPPERS:
        # providers.md §1.3: {"tool_uses":[{"recipient_name":"functions.<tool>","parameters":{…}}]}
        first = next(iter(offered), None)
        uses = [{"recipient_name": f"functions.{first}", "parameters": {}}] if first else []
        return {"tool_uses": uses}
    return {}


class WireFormat:
    """Base class; subclasses implement one provider's wire format."""

    def stream_content_type(self, query: str) -> str:
        return "text/event-stream"

    def error(self, message: str, **extra) -> ProviderError:
        raise NotImplementedError

    def not_json(self) -> ProviderError:
        raise NotImplementedError

    def validate(self, body: dict) -> None:
        """Raise ProviderError like the real provider would; return None if valid."""

    def offered(self, body: dict) -> dict[str, tuple[dict, bool]]:
        """Callable tools in order: name -> (JSON schema, is_custom)."""
        return {}

    def forced(self, body: dict) -> str | None:
        return None

    def ends_with_tool_result(self, body: dict) -> bool:
        return False

    def model(self, body: dict, path: str) -> str:
        return str(body.get("model") or "standin-model")

    def decide(self, body: dict, path: str, raw: bytes, call_header: str) -> Turn:
        """The fake model.  Order: tool result -> "done"; x-standin-call; forced tool; "hello"."""
        uid = hashlib.sha256(path.encode() + b"\0" + raw).hexdigest()[:24]
        turn = Turn(model=self.model(body, path), uid=uid, input_tokens=max(1, len(raw) // 4))
        if self.ends_with_tool_result(body):
            # Lets agent loops (e.g. Mastra's) finish after one tool round trip.
            turn.text = "done"
            return turn
        offered = self.offered(body)
        names = [n.strip() for n in call_header.split(",") if n.strip()]
        if not names and (forced := self.forced(body)):
            names = [forced]
        for i, name in enumerate(names):
            custom = offered.get(name, ({}, False))[1]
            turn.calls.append(
                ToolCall(name, arguments_for(name, offered), f"call_{uid}_{i}", custom)
            )
        if not turn.calls:
            turn.text = "hello"
        return turn

    def render(self, turn: Turn, body: dict) -> dict:
        raise NotImplementedError

    def events(self, turn: Turn, body: dict, query: str) -> list[bytes]:
        raise NotImplementedError


# ---------------------------------------------------------------------------
# OpenAI (shared by Chat Completions and Responses)


class _OpenAIErrors(WireFormat):
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
        return [_sse(o, o["type"] if named else None) for o in objects]


class ChatCompletions(_OpenAIErrors):
    """providers.md §2: POST …/chat/completions."""

    @staticmethod
    def _tool_name(tool: dict) -> tuple[str, object, bool]:
        kind = tool.get("type", "function")
        if kind == "custom":
            return "custom", _d(tool.get("custom")).get("name"), True
        return "function", _d(tool.get("function")).get("name"), False

    def offered(self, body):
        out = {}
        for tool in _l(body.get("tools")):
            kind, name, custom = self._tool_name(_d(tool))
            if isinstance(name, str):
                params = _d(_d(_d(tool).get("function")).get("parameters"))
                out.setdefault(name, (params, custom))
        return out

    def validate(self, body):
        tools = _l(body.get("tools"))
        for i, tool in enumerate(tools):
            kind, name, _ = self._tool_name(_d(tool))
            self.check_name(name, f"tools[{i}].{kind}.name")
        for i, fn in enumerate(_l(body.get("functions"))):  # legacy, providers.md §2
            self.check_name(_d(fn).get("name"), f"functions[{i}].name")
        # providers.md §1.2/§2: names in history are validated too (mcp-use PR #94).
        for i, msg in enumerate(_l(body.get("messages"))):
            for j, call in enumerate(_l(_d(msg).get("tool_calls"))):
                kind, name, _ = self._tool_name(_d(call))
                self.check_name(name, f"messages[{i}].tool_calls[{j}].{kind}.name")
            if "function_call" in _d(msg):
                self.check_name(
                    _d(msg["function_call"]).get("name"), f"messages[{i}].function_call.name"
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
            kind, name, _ = self._tool_name(_d(tool))
            declared[kind].add(name)
        kind = choice.get("type")
        if kind in ("function", "custom"):
            # providers.md §2: {"type":"function","function":{"name":"X"}} / custom form.
            name = _d(choice.get(kind)).get("name")
            if not isinstance(name, str):
                raise self.missing(f"tool_choice.{kind}.name")
            if name not in declared[kind]:
                raise self.not_found(name)
        elif kind == "allowed_tools":
            # providers.md §2: {"type":"allowed_tools","allowed_tools":{"mode":…,"tools":[…]}}.
            allowed = _d(choice.get("allowed_tools"))
            if allowed.get("mode") not in ("auto", "required"):
                raise self.bad_enum(
                    "tool_choice.allowed_tools.mode", allowed.get("mode"), ("auto", "required")
                )
            for entry in _l(allowed.get("tools")):
                entry_kind, name, _ = self._tool_name(_d(entry))
                if name not in declared[entry_kind]:
                    raise self.not_found(str(name))
        else:
            # e.g. {"type":"tool","toolName":…} (an AI SDK shape leaking through).
            raise self.bad_enum("tool_choice.type", kind, ("function", "allowed_tools", "custom"))

    def forced(self, body):
        choice, offered = body.get("tool_choice"), self.offered(body)
        if choice == "required":
            return next(iter(offered), None)
        choice = _d(choice)
        if choice.get("type") in ("function", "custom"):
            return _d(choice.get(choice["type"])).get("name")
        allowed = _d(choice.get("allowed_tools"))
        if choice.get("type") == "allowed_tools" and allowed.get("mode") == "required":
            entries = _l(allowed.get("tools"))
            return self._tool_name(_d(entries[0]))[1] if entries else None
        return None

    def ends_with_tool_result(self, body):
        messages = _l(body.get("messages"))
        return bool(messages) and _d(messages[-1]).get("role") in ("tool", "function")

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
        for piece in _text_pieces(turn.text or ""):
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
            for frag in _pieces(call.arguments_json, 10):
                out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]}))
        out.append(chunk({}, "tool_calls" if turn.calls else "stop"))
        if _d(body.get("stream_options")).get("include_usage"):
            out.append({**base, "choices": [], "usage": self._usage(turn)})
        return self.sse_events(out, named=False) + [b"data: [DONE]\n\n"]


class Responses(_OpenAIErrors):
    """providers.md §3: POST …/responses."""

    HOSTED = (
        "file_search",
        "web_search",
        "web_search_preview",
        "web_search_preview_2025_03_11",
        "computer",
        "computer_use",
        "computer_use_preview",
        "image_generation",
        "code_interpreter",
        "apply_patch",
        "shell",
        "programmatic_tool_calling",
    )

    @staticmethod
    def _all_tools(body) -> list[tuple[str, dict]]:
        """Top-level tools plus `additional_tools` items in input (providers.md §3)."""
        found = [(f"tools[{i}]", _d(t)) for i, t in enumerate(_l(body.get("tools")))]
        for k, item in enumerate(_l(body.get("input"))):
            if _d(item).get("type") == "additional_tools":
                found += [
                    (f"input[{k}].tools[{m}]", _d(t)) for m, t in enumerate(_l(item.get("tools")))
                ]
        return found

    def offered(self, body):
        out = {}
        for _, tool in self._all_tools(body):
            if tool.get("type") in ("function", "custom") and isinstance(tool.get("name"), str):
                out.setdefault(tool["name"], (_d(tool.get("parameters")), tool["type"] == "custom"))
        return out

    def validate(self, body):
        tools = self._all_tools(body)
        for where, tool in tools:
            kind = tool.get("type")
            if kind in ("function", "custom"):
                # providers.md §3: server enforces ^[a-zA-Z0-9_-]+$ (codegraff #930).
                self.check_name(tool.get("name"), f"{where}.name", RESPONSES_MAX)
            elif kind == "namespace":
                # providers.md §3: namespace maxLength 64; nested FunctionToolParam maxLength 128.
                self.check_name(tool.get("name"), f"{where}.name", RESPONSES_MAX)
                for m, inner in enumerate(_l(tool.get("tools"))):
                    self.check_name(
                        _d(inner).get("name"), f"{where}.tools[{m}].name", RESPONSES_NAMESPACED_MAX
                    )
        for k, item in enumerate(_l(body.get("input"))):
            if _d(item).get("type") in ("function_call", "custom_tool_call"):
                # Inferred by analogy with Chat Completions history checks (providers.md §1.2);
                # no observed Responses text for a bad name in input[].
                self.check_name(item.get("name"), f"input[{k}].name", RESPONSES_MAX)
        self._check_choice(body.get("tool_choice"), [t for _, t in tools])

    def _check_choice(self, choice, tools):
        if choice is None or choice in ("none", "auto"):
            return
        if choice == "required":
            if not tools:
                # providers.md §3: vLLM PR #40399, verified against the real API.
                raise self.error(
                    "Tool choice 'required' must be specified with 'tools' parameter.",
                    "tool_choice",
                )
            return
        if isinstance(choice, str):
            raise self.bad_enum("tool_choice", choice, ("none", "auto", "required"))
        if not isinstance(choice, dict):
            raise self.error(
                "Invalid type for 'tool_choice': expected one of a string or an object.",
                "tool_choice",
                "invalid_type",
            )
        kind = choice.get("type")
        if kind == "allowed_tools":
            # providers.md §3: the "not found" error also covers allowed_tools entries.
            if choice.get("mode") not in ("auto", "required"):
                raise self.bad_enum("tool_choice.mode", choice.get("mode"), ("auto", "required"))
            for entry in _l(choice.get("tools")):
                self._find(_d(entry), tools, entry_in_allowed=True)
            return
        if kind in ("function", "custom", "mcp") or kind in self.HOSTED:
            self._find(choice, tools, entry_in_allowed=False)
            return
        raise self.bad_enum(
            "tool_choice.type", kind, ("function", "custom", "mcp", "allowed_tools", *self.HOSTED)
        )

    def _find(self, ref: dict, tools: list[dict], entry_in_allowed: bool) -> None:
        kind = ref.get("type")
        if kind in ("function", "custom"):
            name = ref.get("name")
            if not isinstance(name, str):
                raise self.missing(
                    "tool_choice.tools[].name" if entry_in_allowed else "tool_choice.name"
                )
            if not tools:
                # providers.md §3: with no tools the observed text quotes the *type*
                # ("Tool choice 'function' not found in 'tools' parameter.").
                raise self.not_found(kind)
            if not any(t.get("type") == kind and t.get("name") == name for t in tools):
                raise self.not_found(name)  # providers.md §3: observed text
        elif kind == "mcp":
            # Approximation: match on server_label; the quoted token is not documented.
            label = ref.get("server_label")
            if not any(t.get("type") == "mcp" and t.get("server_label") == label for t in tools):
                raise self.not_found(str(label))
        elif not any(str(t.get("type", "")).startswith(str(kind)) for t in tools):
            # providers.md §3: "Tool choice 'image_generation' not found in 'tools' parameter."
            raise self.not_found(str(kind))

    def forced(self, body):
        choice, offered = body.get("tool_choice"), self.offered(body)
        if choice == "required":
            return next(iter(offered), None)
        choice = _d(choice)
        if choice.get("type") in ("function", "custom"):
            return choice.get("name")
        if choice.get("type") == "allowed_tools" and choice.get("mode") == "required":
            names = [
                e.get("name") for e in map(_d, _l(choice.get("tools"))) if e.get("name") in offered
            ]
            return names[0] if names else None
        return None

    def ends_with_tool_result(self, body):
        items = _l(body.get("input"))
        return bool(items) and _d(items[-1]).get("type") in (
            "function_call_output",
            "custom_tool_call_output",
        )

    @staticmethod
    def _items(turn: Turn, done: bool = True) -> list[dict]:
        status = "completed" if done else "in_progress"
        items = []
        if turn.text is not None:
            content = [
                {"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []}
            ]
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{turn.uid}",
                    "status": status,
                    "role": "assistant",
                    "content": content if done else [],
                }
            )
        for i, call in enumerate(turn.calls):
            # providers.md §3: function_call / custom_tool_call output items.
            if call.custom:
                items.append(
                    {
                        "type": "custom_tool_call",
                        "id": f"ctc_{turn.uid}_{i}",
                        "call_id": call.call_id,
                        "name": call.name,
                        "input": "",
                        "status": status,
                    }
                )
            else:
                items.append(
                    {
                        "type": "function_call",
                        "id": f"fc_{turn.uid}_{i}",
                        "call_id": call.call_id,
                        "name": call.name,
                        "arguments": call.arguments_json if done else "",
                        "status": status,
                    }
                )
        return items

    def render(self, turn, body, done: bool = True):
        usage = {
            "input_tokens": turn.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": turn.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": turn.input_tokens + turn.output_tokens,
        }
        return {
            "id": f"resp_{turn.uid}",
            "object": "response",
            "created_at": CREATED,
            "status": "completed" if done else "in_progress",
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": turn.model,
            "output": self._items(turn) if done else [],
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None},
            "store": body.get("store", True),
            "temperature": 1.0,
            "text": {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": _l(body.get("tools")),
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage if done else None,
            "user": None,
            "metadata": _d(body.get("metadata")),
        }

    def events(self, turn, body, query):
        # providers.md §3: real event sequence (vercel/ai parallel-tool-call-wrapper fixture).
        out = [
            {"type": "response.created", "response": self.render(turn, body, done=False)},
            {"type": "response.in_progress", "response": self.render(turn, body, done=False)},
        ]
        for index, (start, final) in enumerate(
            zip(self._items(turn, done=False), self._items(turn), strict=True)
        ):
            ids = {"item_id": final["id"], "output_index": index}
            out.append({"type": "response.output_item.added", "output_index": index, "item": start})
            if final["type"] == "message":
                part = final["content"][0]
                text_ids = {**ids, "content_index": 0}
                out.append(
                    {
                        "type": "response.content_part.added",
                        **text_ids,
                        "part": {**part, "text": ""},
                    }
                )
                for piece in _text_pieces(part["text"]):
                    out.append(
                        {
                            "type": "response.output_text.delta",
                            **text_ids,
                            "delta": piece,
                            "logprobs": [],
                        }
                    )
                out.append(
                    {
                        "type": "response.output_text.done",
                        **text_ids,
                        "text": part["text"],
                        "logprobs": [],
                    }
                )
                out.append({"type": "response.content_part.done", **text_ids, "part": part})
            elif final["type"] == "function_call":
                for piece in _pieces(final["arguments"], 10):
                    out.append(
                        {"type": "response.function_call_arguments.delta", **ids, "delta": piece}
                    )
                out.append(
                    {
                        "type": "response.function_call_arguments.done",
                        **ids,
                        "name": final["name"],
                        "arguments": final["arguments"],
                    }
                )
            else:
                out.append({"type": "response.custom_tool_call_input.done", **ids, "input": ""})
            out.append({"type": "response.output_item.done", "output_index": index, "item": final})
        out.append({"type": "response.completed", "response": self.render(turn, body)})
        for seq, event in enumerate(out):
            event["sequence_number"] = seq
        return self.sse_events(out, named=True)


# ---------------------------------------------------------------------------
# Anthropic


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


# ---------------------------------------------------------------------------
# Google Gemini


class Gemini(WireFormat):
    """providers.md §6: …/models/{model}:generateContent and :streamGenerateContent."""

    NAME_RULE = (
        # providers.md §6: newer observed text (gemini-cli #9535), the "live rule" per §18.
        "Invalid function name. Must start with a letter or an underscore. Must be alphameric "
        "(a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64."
    )
    MODES = ("MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED")

    def error(self, message, **_):
        return ProviderError(
            400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
        )

    def not_json(self):
        return self.error(
            "Invalid JSON payload received. Unexpected token."
        )  # modeled on Google's JSON errors

    @staticmethod
    def _pick(obj: dict, camel: str, snake: str):
        return obj.get(camel, obj.get(snake))  # REST accepts both spellings

    def _declarations(self, body) -> list[tuple[int, int, dict]]:
        found = []
        for ti, tool in enumerate(_l(body.get("tools"))):
            for fi, decl in enumerate(
                _l(self._pick(_d(tool), "functionDeclarations", "function_declarations"))
            ):
                found.append((ti, fi, _d(decl)))
        return found

    def _calling_config(self, body) -> dict:
        config = _d(self._pick(body, "toolConfig", "tool_config"))
        return _d(self._pick(config, "functionCallingConfig", "function_calling_config"))

    def model(self, body, path):
        match = re.search(r"models/([^/:]+):", path)
        return match.group(1) if match else "gemini-standin"

    def offered(self, body):
        out = {}
        for _, _, decl in self._declarations(body):
            schema = _d(decl.get("parameters")) or _d(
                self._pick(decl, "parametersJsonSchema", "parameters_json_schema")
            )
            if isinstance(decl.get("name"), str):
                out.setdefault(decl["name"], (schema, False))
        return out

    @staticmethod
    def _bad(name) -> bool:
        return (
            not isinstance(name, str) or len(name) > GEMINI_MAX or not GEMINI_NAME.fullmatch(name)
        )

    def validate(self, body):
        # Google reports every bad field, one "* path: text\n" line each (providers.md §6).
        lines = [
            f"* GenerateContentRequest.tools[{ti}].function_declarations[{fi}].name: {self.NAME_RULE}\n"
            for ti, fi, decl in self._declarations(body)
            if self._bad(decl.get("name"))
        ]
        for ci, content in enumerate(_l(body.get("contents"))):
            for pi, part in enumerate(_l(_d(content).get("parts"))):
                call = self._pick(_d(part), "functionCall", "function_call")
                if isinstance(call, dict) and self._bad(call.get("name")):
                    # Inferred: same text applied to history; providers.md has no observed Gemini history text.
                    lines.append(
                        f"* GenerateContentRequest.contents[{ci}].parts[{pi}].function_call.name: "
                        f"{self.NAME_RULE}\n"
                    )
        if lines:
            raise self.error("".join(lines))
        seen = set()
        for _, _, decl in self._declarations(body):
            if decl["name"] in seen:
                # providers.md §6: observed (smarter-sh/smarter #537).
                raise self.error(f"Duplicate function declaration found: {decl['name']}")
            seen.add(decl["name"])
        config = self._calling_config(body)
        mode = config.get("mode", "AUTO")
        if mode not in self.MODES:
            # Modeled on Google's enum error text; not in providers.md.
            raise self.error(
                "Invalid value at 'tool_config.function_calling_config.mode' "
                f'(type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "{mode}"'
            )
        for k, name in enumerate(
            _l(self._pick(config, "allowedFunctionNames", "allowed_function_names"))
        ):
            if name not in seen:
                # INVENTED: providers.md §6 says the real error for an undeclared
                # allowedFunctionNames entry was "not found".
                raise self.error(
                    f"[standin-invented] * GenerateContentRequest.tool_config.function_calling_config."
                    f"allowed_function_names[{k}]: '{name}' does not match any function declaration.\n"
                )

    def forced(self, body):
        config = self._calling_config(body)
        if config.get("mode") != "ANY":
            return None
        allowed = _l(self._pick(config, "allowedFunctionNames", "allowed_function_names"))
        return allowed[0] if allowed else next(iter(self.offered(body)), None)

    def ends_with_tool_result(self, body):
        contents = _l(body.get("contents"))
        parts = _l(_d(contents[-1]).get("parts")) if contents else []
        return any(self._pick(_d(p), "functionResponse", "function_response") for p in parts)

    def _chunk(self, turn, parts, last: bool) -> dict:
        candidate = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if last:
            candidate["finishReason"] = "STOP"  # Gemini reports STOP for function calls too
        usage = {
            "promptTokenCount": turn.input_tokens,
            "candidatesTokenCount": turn.output_tokens,
            "totalTokenCount": turn.input_tokens + turn.output_tokens,
        }
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": turn.model,
            "responseId": turn.uid,
        }

    def render(self, turn, body):
        return self._chunk(turn, self._parts(turn), last=True)

    @staticmethod
    def _parts(turn):
        if turn.text is not None:
            return [{"text": turn.text}]
        return [{"functionCall": {"name": c.name, "args": c.arguments}} for c in turn.calls]

    def events(self, turn, body, query):
        if turn.text is not None:
            pieces = _text_pieces(turn.text)
            chunks = [
                self._chunk(turn, [{"text": p}], i == len(pieces) - 1) for i, p in enumerate(pieces)
            ]
        else:
            # providers.md §6: "A functionCall normally arrives whole in one chunk."
            chunks = [self._chunk(turn, self._parts(turn), last=True)]
        encoded = [json.dumps(c, separators=(",", ":")) for c in chunks]
        if parse_qs(query).get("alt") == ["sse"]:
            # providers.md §6: each SSE data: is a GenerateContentResponse.  Google
            # terminates SSE events with CRLF CRLF (not in providers.md).
            return [_sse(e, end="\r\n\r\n") for e in encoded]
        # Without alt=sse the stream is one JSON array, sent piece by piece.
        pieces = [("[" if i == 0 else ",\r\n") + e for i, e in enumerate(encoded)]
        pieces[-1] += "]"
        return [p.encode() for p in pieces]

    def stream_content_type(self, query):
        return "text/event-stream" if parse_qs(query).get("alt") == ["sse"] else "application/json"


# ---------------------------------------------------------------------------
# AWS Bedrock Converse


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


class BedrockConverse(WireFormat):
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
        tools = _l(_d(body.get("toolConfig")).get("tools"))
        return [
            (i, _d(t)["toolSpec"])
            for i, t in enumerate(tools)
            if isinstance(_d(t).get("toolSpec"), dict)
        ]

    def offered(self, body):
        out = {}
        for _, spec in self._specs(body):
            if isinstance(spec.get("name"), str):
                out.setdefault(spec["name"], (_d(_d(spec.get("inputSchema")).get("json")), False))
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

    def validate(self, body):
        # AWS list paths are 1-based ("toolConfig.tools.1.member" is the first tool);
        # providers.md does not say, this follows AWS (Coral) validation messages.
        errors = []
        config = body.get("toolConfig")
        if config is not None and not _l(_d(config).get("tools")):
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
        for i, msg in enumerate(_l(body.get("messages"))):
            for j, block in enumerate(_l(_d(msg).get("content"))):
                block = _d(block)
                has_tool_blocks |= "toolUse" in block or "toolResult" in block
                if "toolUse" in block:
                    # providers.md §7: observed history text (openclaw #12892): "Value at '…'" without the value.
                    where = (
                        f"Value at 'messages.{i + 1}.member.content.{j + 1}.member.toolUse.name'"
                    )
                    errors += self._constraint_errors(where, _d(block["toolUse"]).get("name"))
        choice = _d(config).get("toolChoice")
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
                name = _d(choice["tool"]).get("name")
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
        if "tool" in _d(choice) and choice["tool"]["name"] not in self.offered(body):
            # INVENTED: providers.md §7 says the text for a named choice absent from tools was "not found".
            raise self.error(
                f"[standin-invented] toolConfig.toolChoice.tool.name '{choice['tool']['name']}' "
                "does not match any tool in toolConfig.tools."
            )

    def forced(self, body):
        choice = _d(_d(body.get("toolConfig")).get("toolChoice"))
        if "any" in choice:
            return next(iter(self.offered(body)), None)
        return _d(choice.get("tool")).get("name")

    def ends_with_tool_result(self, body):
        messages = _l(body.get("messages"))
        if not messages or _d(messages[-1]).get("role") != "user":
            return False
        return any("toolResult" in _d(b) for b in _l(messages[-1].get("content")))

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
                for p in _text_pieces(turn.text)
            ]
            out.append(("contentBlockStop", {"contentBlockIndex": 0}))
        for i, call in enumerate(turn.calls):
            start = {"toolUse": {"toolUseId": self._tool_use_id(call), "name": call.name}}
            out.append(("contentBlockStart", {"contentBlockIndex": i, "start": start}))
            out += [
                ("contentBlockDelta", {"contentBlockIndex": i, "delta": {"toolUse": {"input": p}}})
                for p in _pieces(call.arguments_json, 10)
            ]
            out.append(("contentBlockStop", {"contentBlockIndex": i}))
        out.append(("messageStop", {"stopReason": "tool_use" if turn.calls else "end_turn"}))
        out.append(("metadata", {"usage": self._usage(turn), "metrics": {"latencyMs": 0}}))
        return [encode_event_message(kind, payload) for kind, payload in out]


# ---------------------------------------------------------------------------
# Routing


def route(path: str) -> tuple[WireFormat, str] | None:
    """Map a request path (no query) to (format, mode), or None for an unknown path.

    mode is "json", "stream", or "body" (chat/responses/anthropic stream when the
    body says "stream": true; Gemini and Bedrock stream by endpoint).
    """
    if path.endswith("/chat/completions"):
        return CHAT, "body"
    if path.endswith("/responses"):
        return RESPONSES, "body"
    if path.endswith("/v1/messages"):
        return ANTHROPIC, "body"
    if ":streamGenerateContent" in path:
        return GEMINI, "stream"
    if ":generateContent" in path:
        return GEMINI, "json"
    match = re.search(r"/model/[^/]+/converse(-stream)?$", path)
    if match:
        return BEDROCK, "stream" if match.group(1) else "json"
    return None


CHAT, RESPONSES, ANTHROPIC = ChatCompletions(), Responses(), AnthropicMessages()
GEMINI, BEDROCK = Gemini(), BedrockConverse()
