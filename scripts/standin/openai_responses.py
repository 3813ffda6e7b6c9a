"""OpenAI Responses for the stand-in provider (errors shaped as in openai_chat.py).

Provenance markers ("modeled", "inferred", "invented") as explained in shared.py.
"""

from __future__ import annotations

from standin.openai_chat import OpenAIErrors
from standin.shared import CREATED
from standin.shared import Offered
from standin.shared import Turn
from standin.shared import as_dict
from standin.shared import as_list
from standin.shared import pieces
from standin.shared import text_pieces

__all__ = [
    "RESPONSES_MAX",
    "RESPONSES_NAMESPACED_MAX",
    "Responses",
]

# providers.md §3: "The 64 vs 128 length limit for top-level Responses function
# names is unconfirmed".  We use 64 (the stricter, Chat Completions value) so a
# proxy that keeps names <= 64 is safe; nested namespace tools use the spec's 128.
RESPONSES_MAX = 64
RESPONSES_NAMESPACED_MAX = 128


class Responses(OpenAIErrors):
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
        found = [(f"tools[{i}]", as_dict(t)) for i, t in enumerate(as_list(body.get("tools")))]
        for k, item in enumerate(as_list(body.get("input"))):
            if as_dict(item).get("type") == "additional_tools":
                found += [
                    (f"input[{k}].tools[{m}]", as_dict(t))
                    for m, t in enumerate(as_list(item.get("tools")))
                ]
        return found

    def mode_for(self, path):
        return "body" if path.endswith("/responses") else None

    def offered(self, body):
        out = {}
        for _, tool in self._all_tools(body):
            if tool.get("type") in ("function", "custom") and isinstance(tool.get("name"), str):
                out.setdefault(
                    tool["name"], Offered(as_dict(tool.get("parameters")), tool["type"] == "custom")
                )
        return out

    def validate(self, body, name_max_length=None):
        longest = name_max_length or RESPONSES_MAX
        tools = self._all_tools(body)
        for where, tool in tools:
            kind = tool.get("type")
            if kind in ("function", "custom"):
                # providers.md §3: server enforces ^[a-zA-Z0-9_-]+$ (codegraff #930).
                self.check_name(tool.get("name"), f"{where}.name", longest)
            elif kind == "namespace":
                # providers.md §3: namespace maxLength 64; nested FunctionToolParam maxLength 128.
                self.check_name(tool.get("name"), f"{where}.name", longest)
                for m, inner in enumerate(as_list(tool.get("tools"))):
                    self.check_name(
                        as_dict(inner).get("name"),
                        f"{where}.tools[{m}].name",
                        RESPONSES_NAMESPACED_MAX,
                    )
        for k, item in enumerate(as_list(body.get("input"))):
            if as_dict(item).get("type") in ("function_call", "custom_tool_call"):
                # Inferred by analogy with Chat Completions history checks (providers.md §1.2);
                # no observed Responses text for a bad name in input[].
                self.check_name(item.get("name"), f"input[{k}].name", longest)
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
            for entry in as_list(choice.get("tools")):
                self._find(as_dict(entry), tools, entry_in_allowed=True)
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
        choice = as_dict(choice)
        if choice.get("type") in ("function", "custom"):
            return choice.get("name")
        if choice.get("type") == "allowed_tools" and choice.get("mode") == "required":
            names = [
                e.get("name")
                for e in map(as_dict, as_list(choice.get("tools")))
                if e.get("name") in offered
            ]
            return names[0] if names else None
        return None

    def ends_with_tool_result(self, body):
        items = as_list(body.get("input"))
        return bool(items) and as_dict(items[-1]).get("type") in (
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
            "tools": as_list(body.get("tools")),
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": usage if done else None,
            "user": None,
            "metadata": as_dict(body.get("metadata")),
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
                for piece in text_pieces(part["text"]):
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
                for piece in pieces(final["arguments"], 10):
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
