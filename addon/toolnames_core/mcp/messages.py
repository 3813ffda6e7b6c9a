"""MCP's messages as they travel over HTTP: JSON-RPC 2.0, one message or a batch, recognised
by what the body holds (an MCP method), never by the path, which each server picks.

The methods are the MCP specification's (https://modelcontextprotocol.io/specification/2025-11-25,
its schema's ``method`` constants); notifications are ``notifications/…``.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import NamedTuple

from toolnames_core.framings import line_ends
from toolnames_core.framings import lone_cr_at_end
from toolnames_core.model import JsonPath

__all__ = [
    "METHODS",
    "Message",
    "is_mcp_request",
    "SseEvent",
    "header_value",
    "is_mcp_method",
    "parse_header_name",
    "read_messages",
    "sse_events",
]

# The requests a client or server sends (schema.ts ``ClientRequest``, ``ServerRequest``).
METHODS = frozenset(
    {
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "logging/setLevel",
        "completion/complete",
        "sampling/createMessage",
        "elicitation/create",
        "roots/list",
        "tasks/get",
        "tasks/list",
        "tasks/result",
        "tasks/cancel",
        "server/discover",
        "subscriptions/listen",
    }
)
NOTIFICATION_PREFIX = "notifications/"
# A body is looked at only when it holds this: most POSTs a proxy sees are no JSON-RPC.
MARKER = b'"jsonrpc"'


class Message(NamedTuple):
    """One JSON-RPC message of a body, and where it sits (``()`` alone, ``(i,)`` in a batch)."""

    where: JsonPath
    value: dict

    @property
    def method(self) -> str | None:
        method = self.value.get("method")
        return method if isinstance(method, str) else None

    @property
    def id(self) -> object:
        """The request's or the response's id (None for a notification)."""
        return self.value.get("id")

    @property
    def is_request(self) -> bool:
        return self.method is not None and "id" in self.value

    @property
    def is_response(self) -> bool:
        return self.method is None and ("result" in self.value or "error" in self.value)


def is_mcp_method(method: object) -> bool:
    return isinstance(method, str) and (method in METHODS or method.startswith(NOTIFICATION_PREFIX))


def read_messages(content: bytes | str) -> list[Message] | None:
    """The JSON-RPC 2.0 messages of a body (one object or a batch array); None when it is
    not JSON-RPC 2.0 at all."""
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict):
        items: list[tuple[JsonPath, object]] = [((), value)]
    elif isinstance(value, list) and value:
        items = [((i,), item) for i, item in enumerate(value)]
    else:
        return None
    messages = [
        Message(where, item)
        for where, item in items
        if isinstance(item, dict) and item.get("jsonrpc") == "2.0"
    ]
    return messages or None


def is_mcp_request(content: bytes) -> list[Message] | None:
    """The messages of a request body that is MCP (JSON-RPC 2.0 with at least one MCP
    method); None for any other body, told apart by a byte search for most."""
    if content.find(MARKER) == -1:  # find, not in: docs/performance.md
        return None
    start = content.lstrip()[:1]
    if start not in (b"{", b"["):
        return None
    messages = read_messages(content)
    if messages is None or not any(is_mcp_method(m.method) for m in messages):
        return None
    return messages


# The 2026-07-28 revision's Mcp-Name carries a name that is no plain header value as
# "=?base64?<base64 of its UTF-8>?=" (basic/transports/streamable-http).
_B64_START = "=?base64?"
_B64_END = "?="


def parse_header_name(value: str) -> str:
    """The tool name an ``Mcp-Name`` header carries."""

    if value.startswith(_B64_START) and value.endswith(_B64_END):
        try:
            return base64.b64decode(value[len(_B64_START) : -len(_B64_END)], validate=True).decode(
                "utf-8"
            )
        except (binascii.Error, UnicodeDecodeError):
            return value
    return value


def header_value(name: str) -> str:
    """``name`` as an ``Mcp-Name`` header carries it: as it is when it is visible ASCII
    (spaces inside allowed), else in the base64 form."""

    plain = name.isascii() and name.isprintable() and name == name.strip() and name
    if plain:
        return name
    return _B64_START + base64.b64encode(name.encode("utf-8", "surrogatepass")).decode() + _B64_END


class SseEvent(NamedTuple):
    """One server-sent event as it came: its raw bytes, and its data lines' places."""

    raw: bytes
    # (start, end) of each data line's value inside ``raw``.
    data_spans: tuple[tuple[int, int], ...]

    @property
    def data(self) -> bytes:
        return b"\n".join(self.raw[s:e] for s, e in self.data_spans)


def sse_events(buffer: bytes, final: bool = False) -> tuple[list[SseEvent], int]:
    """The complete events at the start of ``buffer`` (WHATWG's line rules: CRLF, LF or CR
    end a line, a blank line ends an event), and how many bytes they take. ``final``: the
    stream ended, so what is left is an event too (a lone CR at the end is a line end)."""
    events: list[SseEvent] = []
    size = len(buffer)
    start = 0  # where the current event starts
    line = 0  # where the current line starts
    spans: list[tuple[int, int]] = []
    for at, end in line_ends(buffer):
        if not final and lone_cr_at_end(buffer, at, end):
            break
        if at == line:  # a blank line ends the event
            events.append(SseEvent(buffer[start:end], _shift(spans, start)))
            spans = []
            start = end
        else:
            _data_line(buffer, line, at, spans)
        line = end
    if final and start < size:
        if line < size:  # the last line, without its line end
            _data_line(buffer, line, size, spans)
        events.append(SseEvent(buffer[start:], _shift(spans, start)))
        return events, size
    return events, start


def _data_line(buffer: bytes, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    """Add the value's place if the line is a ``data`` field (``data``, ``data:``, ``data: x``)."""
    if not buffer.startswith(b"data", start):
        return
    colon = buffer.find(b":", start, end)
    if (end if colon == -1 else colon) - start != 4:
        return
    value = end if colon == -1 else colon + 1
    if value < end and buffer[value : value + 1] == b" ":
        value += 1
    spans.append((value, end))


def _shift(spans: list[tuple[int, int]], by: int) -> tuple[tuple[int, int], ...]:
    return tuple((s - by, e - by) for s, e in spans)
