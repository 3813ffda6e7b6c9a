"""Google Gemini generateContent / streamGenerateContent for the stand-in provider.

Provenance markers ("modeled", "inferred", "invented") as explained in shared.py.
"""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs

from standin.shared import Offered
from standin.shared import ProviderError
from standin.shared import StandinFormat
from standin.shared import as_dict
from standin.shared import as_list
from standin.shared import sse_event
from standin.shared import text_pieces

__all__ = [
    "GEMINI_MAX",
    "GEMINI_NAME",
    "Gemini",
]

# providers.md §18: "Treat 64 and ^[a-zA-Z_][a-zA-Z0-9_.:-]*$ as the live rule".
GEMINI_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]*")
GEMINI_MAX = 64


class Gemini(StandinFormat):
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
        for ti, tool in enumerate(as_list(body.get("tools"))):
            for fi, decl in enumerate(
                as_list(self._pick(as_dict(tool), "functionDeclarations", "function_declarations"))
            ):
                found.append((ti, fi, as_dict(decl)))
        return found

    def _calling_config(self, body) -> dict:
        config = as_dict(self._pick(body, "toolConfig", "tool_config"))
        return as_dict(self._pick(config, "functionCallingConfig", "function_calling_config"))

    def model(self, body, path):
        match = re.search(r"models/([^/:]+):", path)
        return match.group(1) if match else "gemini-standin"

    def mode_for(self, path):
        if ":streamGenerateContent" in path:
            return "stream"
        return "json" if ":generateContent" in path else None

    def offered(self, body):
        out = {}
        for _, _, decl in self._declarations(body):
            schema = as_dict(decl.get("parameters")) or as_dict(
                self._pick(decl, "parametersJsonSchema", "parameters_json_schema")
            )
            if isinstance(decl.get("name"), str):
                out.setdefault(decl["name"], Offered(schema))
        return out

    @staticmethod
    def _bad(name) -> bool:
        return (
            not isinstance(name, str) or len(name) > GEMINI_MAX or not GEMINI_NAME.fullmatch(name)
        )

    def validate(self, body, name_max_length=None):  # its documented limit only
        # Google reports every bad field, one "* path: text\n" line each (providers.md §6).
        lines = [
            f"* GenerateContentRequest.tools[{ti}].function_declarations[{fi}].name: {self.NAME_RULE}\n"
            for ti, fi, decl in self._declarations(body)
            if self._bad(decl.get("name"))
        ]
        for ci, content in enumerate(as_list(body.get("contents"))):
            for pi, part in enumerate(as_list(as_dict(content).get("parts"))):
                call = self._pick(as_dict(part), "functionCall", "function_call")
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
            as_list(self._pick(config, "allowedFunctionNames", "allowed_function_names"))
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
        allowed = as_list(self._pick(config, "allowedFunctionNames", "allowed_function_names"))
        return allowed[0] if allowed else next(iter(self.offered(body)), None)

    def ends_with_tool_result(self, body):
        contents = as_list(body.get("contents"))
        parts = as_list(as_dict(contents[-1]).get("parts")) if contents else []
        return any(self._pick(as_dict(p), "functionResponse", "function_response") for p in parts)

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
            pieces = text_pieces(turn.text)
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
            return [sse_event(e, end="\r\n\r\n") for e in encoded]
        # Without alt=sse the stream is one JSON array, sent piece by piece.
        pieces = [("[" if i == 0 else ",\r\n") + e for i, e in enumerate(encoded)]
        pieces[-1] += "]"
        return [p.encode() for p in pieces]

    def stream_content_type(self, query):
        return "text/event-stream" if parse_qs(query).get("alt") == ["sse"] else "application/json"
