"""What scripts/scan's readers share: the recorded exchange they produce, their failure, body
decoding."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import NamedTuple
from urllib.parse import urlsplit

from mitmproxy.net import encoding as mitm_encoding

from toolnames_core import FlowRecord

__all__ = [
    "MCP_HEADERS",
    "PROG",
    "ReadFailure",
    "RecordProblem",
    "RecordedExchange",
    "Url",
    "SNIFF_BYTES",
    "convert_record",
    "decode_body",
    "header_map",
    "mcp_headers",
    "response_body",
    "shorten",
    "split_url",
    "text_bytes",
]

PROG = "scan"
SNIFF_BYTES = 64 * 1024

# The request headers an MCP exchange is judged with (toolnames_core/mcp/): its session, and
# the 2026-07-28 revision's Mcp-Method and Mcp-Name, which must agree with the body. Flow
# files, HAR files and cassettes all keep request headers (unless a recorder filtered them).
MCP_HEADERS = ("mcp-session-id", "mcp-method", "mcp-name")


class ReadFailure(Exception):
    """An input stopped being readable; ``truncated`` when it ended in the middle of a record."""

    def __init__(self, reason: str, truncated: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.truncated = truncated


@dataclass(slots=True)
class RecordedExchange:
    """One recorded request and its response, as plain data for inspect_exchange."""

    index: int
    method: str
    host: str
    path: str
    request_content: bytes | None = None
    request_problem: str | None = None
    status: int | None = None
    content_type: str = ""
    response_content: bytes | None = None
    # Why the recorded answer's body cannot be read (an undecodable content-encoding).
    response_problem: str | None = None
    flow_id: str | None = None
    # The live addon's record of the flow, from its toolnames metadata (flow files only).
    recorded: FlowRecord | None = None
    # A WebSocket session's messages, as (index in the flow, from_client, content), without
    # the ones an addon injected; None for an HTTP exchange (flow files only).
    messages: list[tuple[int, bool, bytes]] | None = None
    # The MCP headers of the request (MCP_HEADERS), by lowercase name, as recorded.
    mcp_headers: dict[str, str] = field(default_factory=dict)
    # The port the request went to: a rule may be the port's (Ollama's 11434), as live.
    port: int | None = None

    @property
    def record_knows_more(self) -> bool:
        """The live addon saw what the file lacks: the client's own request (fix mode
        rewrote it, or it was saved without its body), why fix mode left a name as sent, or
        the answer's body (a stream, saved without it)."""
        if self.recorded is None:
            return False
        answer_missing = self.status is not None and self.response_content is None
        # toolnames_save leaves out a body it cannot redact; the live addon read it.
        request_missing = self.request_content is None
        declined = bool(self.recorded.fix_skipped)
        return self.recorded.action == "fixed" or declined or answer_missing or request_missing

    @property
    def endpoint(self) -> str:
        # Never the query: Gemini's API key travels there (key=...).
        return f"{self.method.upper()} {self.host}{self.path.split('?', 1)[0]}"


@dataclass(slots=True)
class RecordProblem:
    """A record that is not a usable exchange (a HAR entry without a request, ...)."""

    index: int
    reason: str


def convert_record(convert, item: object, index: int) -> RecordedExchange | RecordProblem:
    try:
        return convert(item, index)
    except ValueError as e:
        return RecordProblem(index, str(e))


def shorten(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------------
# Bodies


def decode_body(raw: bytes, content_encoding: str | None) -> tuple[bytes | None, str | None]:
    """The body without its content-encoding, as the addon's ``get_content(strict=True)`` reads it.

    HAR files and decoded cassettes keep the content-encoding header but store the decoded
    text: a body that does not decode but is already text is taken as it is.
    """
    if not content_encoding:
        return raw, None
    try:
        decoded = mitm_encoding.decode(raw, content_encoding)
        if isinstance(decoded, str):
            raise ValueError(f"Invalid Content-Encoding: {content_encoding}")
        return decoded, None
    except ValueError as e:
        if _is_text(raw):
            return raw, None
        return None, f"its content-encoding could not be decoded ({e})"


def _is_text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in raw


def response_body(raw: bytes, content_encoding: str | None) -> tuple[bytes, str | None]:
    """The answer's body as the addon reads it, and why it cannot be decoded, if it cannot
    (then the raw body, which is not read: its calls are unchecked, and that is said)."""
    decoded, problem = decode_body(raw, content_encoding)
    return (raw, problem) if decoded is None else (decoded, None)


def text_bytes(text: str) -> bytes:
    # JSON strings may hold lone surrogates; keep them rather than fail.
    return text.encode("utf-8", "surrogatepass")


def header_map(value: object) -> dict[str, str]:
    """Lower-cased name -> first value, from HAR lists ({name, value} or [name, value]) or
    cassette mappings (name -> value or [values])."""
    out: dict[str, str] = {}
    items: list = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        for h in value:
            if isinstance(h, dict):
                items.append((h.get("name"), h.get("value")))
            elif isinstance(h, (list, tuple)) and len(h) >= 2:
                items.append((h[0], h[1]))
    for name, v in items:
        if isinstance(v, list):
            v = v[0] if v else None
        if isinstance(v, bytes):
            v = v.decode("latin-1")
        if isinstance(name, str) and isinstance(v, (str, int)):
            out.setdefault(name.lower(), str(v))
    return out


def mcp_headers(headers: dict[str, str]) -> dict[str, str]:
    """The MCP headers among a request's (``header_map``'s lower-cased names)."""
    return {name: headers[name] for name in MCP_HEADERS if name in headers}


class Url(NamedTuple):
    host: str
    path: str  # with its query
    port: int | None  # the scheme's when the URL names none, as the live addon sees it


DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def split_url(url: str) -> Url:
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return Url("", url, None)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Url(host, path, port)
