"""What the stand-in provider's wire formats share: the error, the fake model's Turn, helpers.

Every validation rule and error text in the format modules comes from the project's
docs/providers.md (cited as "providers.md §N").  Texts that it does not contain are marked "modeled" (shaped like the provider's
other errors), "inferred" (by analogy with an observed text) or "invented"
(no real text known; the message itself starts with "[standin-invented]").

Each format class (a StandinFormat subclass, one module per provider family) turns a
parsed JSON request into either a ProviderError (status, body, headers) or a Turn
(what the "model" answers), and renders a Turn as a non-streaming body or as a list
of stream events (bytes each).  formats.py routes a path to its format; the HTTP side
lives in server.py.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from dataclasses import field
from typing import NamedTuple

__all__ = [
    "CREATED",
    "Offered",
    "PARALLEL_WRAPPERS",
    "ProviderError",
    "StandinFormat",
    "ToolCall",
    "Turn",
    "arguments_for",
    "as_dict",
    "as_list",
    "calls_asked",
    "pieces",
    "sse_event",
    "text_pieces",
]

# Fixed so responses are byte-for-byte reproducible (the brief asks for no randomness).
CREATED = 1767225600  # 2026-01-01T00:00:00Z


# providers.md §1.3: the wrapper names OpenAI/Azure models hallucinate.
PARALLEL_WRAPPERS = ("multi_tool_use.parallel", "parallel")


class Offered(NamedTuple):
    """A tool a request offers: its JSON schema, and whether it takes free text (OpenAI's
    "custom" tools) rather than JSON arguments."""

    schema: dict
    custom: bool = False


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


def as_dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def as_list(value) -> list:
    return value if isinstance(value, list) else []


def pieces(text: str, size: int) -> list[str]:
    """Split text so streams carry several deltas (like real token streams)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def text_pieces(text: str) -> list[str]:
    return pieces(text, max(1, (len(text) + 1) // 2))


def sse_event(data: dict | str, event: str | None = None, end: str = "\n\n") -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}{end}".encode()


def arguments_for(name: str, offered: dict[str, Offered]) -> dict:
    """Deterministic arguments: {"city":"Paris"} if the schema requires a string "city"."""
    if name in offered:
        schema = offered[name].schema
        prop = as_dict(as_dict(schema.get("properties")).get("city"))
        if (
            "city" in as_list(schema.get("required"))
            and str(prop.get("type", "")).lower() == "string"
        ):
            return {"city": "Paris"}
        return {}
    if name in PARALLEL_WRAPPERS:
        # providers.md §1.3: {"tool_uses":[{"recipient_name":"functions.<tool>","parameters":{…}}]}
        first = next(iter(offered), None)
        uses = [{"recipient_name": f"functions.{first}", "parameters": {}}] if first else []
        return {"tool_uses": uses}
    return {}


def calls_asked(call_header: str, offered: dict[str, Offered]) -> list[str]:
    """The names ``x-standin-call`` asks for: each comma-separated entry, where ``PREFIX*``
    stands for every offered tool whose name starts with PREFIX, in the order offered.
    A closed client (Claude Code) sends a fixed header with every request and cannot know
    the name its tool reaches the provider under (fix mode sends an alias), so the model is
    told which tools to call by a prefix both names share; a request offering none gets text."""
    names: list[str] = []
    for entry in (n.strip() for n in call_header.split(",")):
        if entry.endswith("*"):
            names += [name for name in offered if name.startswith(entry[:-1])]
        elif entry:
            names.append(entry)
    return names


class StandinFormat:
    """Base class; subclasses implement one provider's wire format."""

    def mode_for(self, path: str) -> str | None:
        """How a request to this path (no query) is answered, None if the path is not ours:
        "json", "stream", "body" (streamed when the body says "stream": true) or
        "body-streams" (streamed unless the body says "stream": false)."""
        raise NotImplementedError

    def stream_content_type(self, query: str) -> str:
        return "text/event-stream"

    def stream_error(self, message: str) -> bytes:
        """The provider's error sent inside a stream that has begun (x-standin-stream-error)."""
        raise ValueError(f"{type(self).__name__} sends no error inside a stream")

    def error(self, message: str, **extra) -> ProviderError:
        raise NotImplementedError

    def not_json(self) -> ProviderError:
        raise NotImplementedError

    def validate(self, body: dict, name_max_length: int | None = None) -> None:
        """Raise ProviderError like the real provider would; return None if valid.
        ``name_max_length``: a drifted provider's longest function name, where the format
        has a documented one (OpenAI's); None for the documented limit."""

    def offered(self, body: dict) -> dict[str, Offered]:
        """Callable tools in order, by name."""
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
        names = calls_asked(call_header, offered)
        if not names and (forced := self.forced(body)):
            names = [forced]
        for i, name in enumerate(names):
            custom = offered.get(name, Offered({})).custom
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
