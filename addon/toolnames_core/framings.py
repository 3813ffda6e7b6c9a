"""How a streamed answer is framed: one table of framings (``FRAMINGS``: SSE, the AWS event
stream, NDJSON), as h11 keys its body readers in one table. Each framing is an incremental framer (bytes in, whatever their
split, frames out), the step that turns one frame into the event a format's collector takes,
and a rewriter that passes the stream through fix mode's restoring a frame at a time.

Framers and rewriters keep at most one unfinished frame in memory and give up (``broken``)
rather than buffer without bound, so a stream of any length or shape is read in bounded
memory and never delays a byte: the framers only ever look at copies.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import zlib
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass

from toolnames_core.readers import DEFAULT
from toolnames_core.readers import Reader

__all__ = [
    "AWS_EVENT_STREAM",
    "AWS_EVENT_STREAM_BASE64",
    "FRAMINGS",
    "MAX_EVENT_BYTES",
    "NDJSON",
    "SSE",
    "AwsEventStreamFramer",
    "EventStreamRewriter",
    "Framing",
    "LineRewriter",
    "NdjsonFramer",
    "SseFramer",
    "framing_for",
    "json_or_none",
    "line_ends",
    "ndjson_error",
    "rewriter_for",
    "stream_exception",
]

MAX_EVENT_BYTES = 8 * 1024 * 1024
_CR = ord("\r")


def line_ends(buffer: bytes | bytearray, start: int = 0) -> Iterator[tuple[int, int]]:
    """(start, end) of each line end in ``buffer`` from ``start``, in order, CRLF, CR or LF:
    what ``re.finditer(rb"\\r\\n|\\r|\\n", buffer, start)`` finds, by ``find`` from one line end
    to the next, where the regular expression looks at every byte in Python's regex engine
    (1.6 ms for an MCP tools/list event of 286 kB on one data line: docs/performance.md, (e))."""
    find = buffer.find
    cr = find(b"\r", start)
    lf = find(b"\n", start)
    while cr != -1 or lf != -1:
        if cr != -1 and (lf == -1 or cr < lf):
            if lf == cr + 1:  # CRLF
                yield cr, lf + 1
                lf = find(b"\n", lf + 1)
            else:
                yield cr, cr + 1
            cr = find(b"\r", cr + 1)
        else:
            yield lf, lf + 1
            lf = find(b"\n", lf + 1)


def lone_cr_at_end(buffer: bytes | bytearray, at: int, end: int) -> bool:
    """Whether the line end at ``at``..``end`` is a CR that ends ``buffer``: maybe the first
    half of a CRLF, so the line waits for the next byte."""
    return end == len(buffer) and end - at == 1 and buffer[at] == _CR


class SseFramer:
    """Server-sent events (text/event-stream), per the WHATWG parsing rules."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.scanned = 0  # bytes of buffer known to hold no line end, so long lines cost O(n)
        self.data: list[bytes] = []
        self.broken = False

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        """The ``data`` of each event completed by ``chunk``."""
        if self.broken:
            return
        if not self.buffer and chunk.find(b"\r") == -1:  # find, not in: docs/performance.md
            # The usual chunk: whole lines ending in LF, nothing left from the last one.
            *lines, rest = chunk.split(b"\n")
            for line in lines:
                if (event := self._line(line)) is not None:
                    yield event
            self.buffer += rest
            self.scanned = len(rest)
            self._limit()
            return
        self.buffer += chunk
        pos = 0
        for at, end in line_ends(self.buffer, self.scanned):
            if lone_cr_at_end(self.buffer, at, end):
                break
            if (event := self._line(bytes(self.buffer[pos:at]))) is not None:
                yield event
            pos = end
        del self.buffer[:pos]
        self.scanned = max(0, len(self.buffer) - 1)
        self._limit()

    def _limit(self) -> None:
        if len(self.buffer) > MAX_EVENT_BYTES or sum(map(len, self.data)) > MAX_EVENT_BYTES:
            self.broken = True
            self.buffer, self.data = bytearray(), []

    def close(self) -> Iterator[bytes]:
        """An event the stream ends without its blank line still counts: the provider sent it,
        even though a browser's EventSource would drop it."""
        if self.broken:
            return
        if self.buffer:
            if (event := self._line(bytes(self.buffer).rstrip(b"\r"))) is not None:
                yield event
            self.buffer = bytearray()
        self.scanned = 0
        if (event := self._line(b"")) is not None:
            yield event

    def _line(self, line: bytes) -> bytes | None:
        """The data of the event this line completes, if it does."""
        if not line:
            if self.data:
                event = b"\n".join(self.data)
                self.data = []
                return event
        elif line.startswith(b"data"):
            field, _, value = line.partition(b":")
            if field == b"data":
                self.data.append(value[1:] if value.startswith(b" ") else value)
        return None


class NdjsonFramer:
    """Newline-delimited JSON (application/x-ndjson): one JSON value a line, as Ollama streams
    its answers (https://github.com/ollama/ollama/blob/main/docs/api.md, "Streaming
    responses"). A line may be split anywhere across chunks, a multi-byte character too:
    only whole lines are framed, and a last line without its newline counts at the end."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.broken = False

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        """Each non-blank line completed by ``chunk``, without its line end."""
        if self.broken:
            return
        end = chunk.rfind(b"\n")
        if end < 0:
            # Only the new bytes are searched: a long line in small chunks costs O(n).
            self.buffer += chunk
            if len(self.buffer) > MAX_EVENT_BYTES:
                self.broken = True
                self.buffer = bytearray()
            return
        if self.buffer:
            lines = (bytes(self.buffer) + chunk[:end]).split(b"\n")
        else:
            lines = chunk[:end].split(b"\n")  # the usual chunk: whole lines, nothing held
        self.buffer = bytearray(chunk[end + 1 :])
        if len(self.buffer) > MAX_EVENT_BYTES:
            self.broken = True
            self.buffer = bytearray()
        for line in lines:
            line = line.rstrip(b"\r")
            if line.strip():
                yield line

    def close(self) -> Iterator[bytes]:
        """A last line the stream ends without its newline: the provider sent it."""
        if self.broken:
            return
        line, self.buffer = bytes(self.buffer).rstrip(b"\r"), bytearray()
        if line.strip():
            yield line


_PRELUDE = struct.Struct(">III")
_FIXED_HEADER_SIZES = {2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}


def _headers(raw: bytes) -> dict[str, object]:
    headers: dict[str, object] = {}
    pos = 0
    while pos < len(raw):
        name_len = raw[pos]
        name = raw[pos + 1 : pos + 1 + name_len].decode("utf-8", "replace")
        pos += 1 + name_len
        kind = raw[pos]
        pos += 1
        if kind in (0, 1):
            headers[name] = kind == 0
        elif kind in (6, 7):
            (size,) = struct.unpack_from(">H", raw, pos)
            value = raw[pos + 2 : pos + 2 + size]
            headers[name] = value.decode("utf-8", "replace") if kind == 7 else value
            pos += 2 + size
        elif kind in _FIXED_HEADER_SIZES:
            pos += _FIXED_HEADER_SIZES[kind]
        else:
            raise ValueError(f"unknown header type {kind}")
    return headers


def _crcs_hold(message: bytes) -> bool:
    """Whether a whole message's prelude CRC and message CRC are right."""
    (prelude_crc,) = struct.unpack_from(">I", message, 8)
    (message_crc,) = struct.unpack_from(">I", message, len(message) - 4)
    return zlib.crc32(message[:8]) == prelude_crc and zlib.crc32(message[:-4]) == message_crc


class AwsEventStreamFramer:
    """The AWS event stream (application/vnd.amazon.eventstream) of Bedrock's converse-stream."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.broken = False

    def feed(self, chunk: bytes) -> Iterator[tuple[dict[str, object], bytes]]:
        """(headers, payload) of each message completed by ``chunk``."""
        if self.broken:
            return
        self.buffer += chunk
        while len(self.buffer) >= _PRELUDE.size:
            total, headers_len, _ = _PRELUDE.unpack_from(self.buffer)
            if total > MAX_EVENT_BYTES or headers_len > total - 16:
                self.broken = True
                self.buffer = bytearray()
                return
            if len(self.buffer) < total:
                return
            message = bytes(self.buffer[:total])
            del self.buffer[:total]
            if not _crcs_hold(message):
                # A message its CRCs do not vouch for: the client will refuse it too.
                self.broken = True
                self.buffer = bytearray()
                return
            try:
                headers = _headers(message[12 : 12 + headers_len])
            except (ValueError, IndexError, struct.error):
                self.broken = True
                self.buffer = bytearray()
                return
            yield headers, message[12 + headers_len : total - 4]

    def close(self) -> Iterator[tuple[dict[str, object], bytes]]:
        return iter(())


class _Rewriter:
    """What both rewriters share: a rewrite that fails is dropped, never the stream."""

    def __init__(self, rewrite: Callable[[bytes], bytes]) -> None:
        self.rewrite = rewrite
        self.held = b""
        self.failure: str | None = None

    def _rewritten(self, data: bytes) -> bytes:
        try:
            return self.rewrite(data)
        except Exception as e:  # noqa: BLE001
            # A stream is never broken off because of a name: it goes on as it was sent.
            self.failure = f"{type(e).__name__}: {e}"
            self.rewrite = bytes
            return data


class LineRewriter(_Rewriter):
    """Passes a text stream (SSE) through ``rewrite`` a whole line at a time: every complete
    line goes on at once, and only an unfinished line is held back (bounded: a line longer
    than MAX_EVENT_BYTES goes on as it is)."""

    def __call__(self, chunk: bytes) -> bytes:
        if not chunk:
            # The end of the message, or an HTTP/2 peer's empty frame: what is held goes on.
            held, self.held = self.held, b""
            return self._rewritten(held) if held else b""
        if not self.held and chunk.endswith(b"\n"):
            # The usual chunk: whole lines, nothing held from the last one (no copy, no search).
            # In fix mode one without the restore's needle never gets here (streams.StreamTap).
            return self._rewritten(chunk)
        data = self.held + chunk
        end = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
        if end == 0 and len(data) <= MAX_EVENT_BYTES:
            self.held = data
            return b""
        if end == 0:
            self.held = b""
            return data
        self.held = data[end:]
        return self._rewritten(data[:end])


class EventStreamRewriter(_Rewriter):
    """Passes an AWS event stream through ``rewrite`` one message payload at a time,
    recomputing the lengths and both CRCs of a message whose payload changed. A complete
    message goes on at once; a stream it cannot frame, or a message whose CRCs are wrong,
    goes on unchanged from there."""

    broken = False

    def __call__(self, chunk: bytes) -> bytes:
        if self.broken or not chunk:
            held, self.held = self.held, b""
            return held + chunk
        data = self.held + chunk
        out = []
        pos = 0
        while len(data) - pos >= _PRELUDE.size:
            total, headers_len, _ = _PRELUDE.unpack_from(data, pos)
            if total > MAX_EVENT_BYTES or headers_len > total - 16:
                self.broken = True
                break
            if len(data) - pos < total:
                break
            if not _crcs_hold(data[pos : pos + total]):
                # Recomputing the CRCs would pass off a corrupt message as sound.
                self.broken = True
                break
            out.append(self._message(data[pos : pos + total], headers_len))
            pos += total
        if self.broken:
            self.held = b""
            return b"".join(out) + data[pos:]
        self.held = data[pos:]
        return b"".join(out)

    def _message(self, message: bytes, headers_len: int) -> bytes:
        head = message[12 : 12 + headers_len]
        payload = message[12 + headers_len : -4]
        new = self._rewritten(payload)
        if new == payload:
            return message
        prelude = struct.pack(">II", 16 + headers_len + len(new), headers_len)
        prelude += struct.pack(">I", zlib.crc32(prelude))
        body = prelude + head + new
        return body + struct.pack(">I", zlib.crc32(body))


def json_or_none(data: bytes, reader: Reader = DEFAULT, shape: object = None) -> dict | None:
    """The JSON object ``data`` holds; None if it holds anything else, or no JSON."""
    if data[:1] == b"[":
        # No object: an array, or OpenAI's "[DONE]", which ends every chat completions
        # stream and which both readers refused with an exception each (that 14-byte chunk
        # took 9 to 11 us through a tap, more than one that names a tool; 3 to 4 us now). In
        # UTF-16 and UTF-32, which json.loads also detects, "[" is the first character too.
        return None
    try:
        value = reader.event(data, shape)
    except (ValueError, RecursionError):  # UnicodeDecodeError included
        return None
    return value if isinstance(value, dict) else None


def _sse_event(frame: bytes, reader: Reader, shape: object) -> dict | None:
    return json_or_none(frame, reader, shape)


def _aws_event(
    frame: tuple[dict[str, object], bytes], reader: Reader, shape: object
) -> dict | None:
    # Exceptions arrive as messages of their own type; only events carry calls.
    headers, payload = frame
    if headers.get(":message-type") != "event":
        return None
    body = json_or_none(payload, reader, shape)
    return None if body is None else {str(headers.get(":event-type")): body}


# Bedrock's InvokeModelWithResponseStream wraps each event of the model's own stream in a
# ``chunk`` message whose payload is {"bytes": "<base64 of the event's JSON>", "p": "<padding>"}
# (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModelWithResponseStream.html,
# PayloadPart: "Base-64-encoded bytes of payload data").


def _chunk_bytes(payload: bytes) -> tuple[dict, bytes] | None:
    """The payload's JSON and the event inside its ``bytes``; None when the payload holds no
    ``bytes`` string. A ``bytes`` that is not base64 raises ValueError: a chunk toolnames
    cannot open may hold a call, so it is never passed off as one without."""
    try:
        wrapper = json.loads(payload)
    except (ValueError, RecursionError):
        raise ValueError("a chunk's payload is not JSON") from None
    if not isinstance(wrapper, dict) or not isinstance(wrapper.get("bytes"), str):
        return None
    try:
        inner = base64.b64decode(wrapper["bytes"], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("a chunk's bytes are not base64") from None
    return wrapper, inner


def _aws_chunk_event(
    frame: tuple[dict[str, object], bytes], reader: Reader, shape: object
) -> dict | None:
    """The model's own event inside a ``chunk`` message; exceptions carry none."""
    headers, payload = frame
    if headers.get(":message-type") != "event" or headers.get(":event-type") != "chunk":
        return None
    opened = _chunk_bytes(payload)
    if opened is None:
        raise ValueError("a chunk's payload holds no bytes")
    return json_or_none(opened[1], reader, shape)


def _in_base64(rewrite: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    """``rewrite`` applied to the event inside a chunk's base64, the payload built again
    around it (its other keys, the padding included, kept as they came)."""

    def payload_rewrite(payload: bytes) -> bytes:
        try:
            opened = _chunk_bytes(payload)
        except ValueError:
            return payload  # not understood, so not changed (the reader says so)
        if opened is None:
            return payload
        wrapper, inner = opened
        new = rewrite(inner)
        if new == inner:
            return payload
        old_text = json.dumps(wrapper["bytes"]).encode()
        new_text = json.dumps(base64.b64encode(new).decode("ascii")).encode()
        if payload.count(old_text) == 1:
            return payload.replace(old_text, new_text)
        wrapper["bytes"] = json.loads(new_text)
        return json.dumps(wrapper, separators=(",", ":")).encode()

    return payload_rewrite


def _chunk_rewriter(rewrite: Callable[[bytes], bytes]) -> EventStreamRewriter:
    return EventStreamRewriter(_in_base64(rewrite))


def stream_exception(frame: tuple[dict[str, object], bytes]) -> tuple[str, bytes] | None:
    """(its type, its payload) if ``frame`` is an AWS event-stream exception message: the
    provider's error, sent inside an HTTP 200 answer once the stream has begun."""
    headers, payload = frame
    if headers.get(":message-type") != "exception":
        return None
    return str(headers.get(":exception-type", "")), payload


def _ndjson_event(line: bytes, reader: Reader, shape: object) -> dict | None:
    """One line's object; None for the provider's ``{"error": ...}`` line, which carries no
    calls (``ndjson_error`` reads it). Every line of such a stream is a JSON object: one that
    is not cannot be read, and may have held a call, so reading stops there and says so."""
    try:
        value = reader.event(line, shape)
    except (ValueError, RecursionError):  # UnicodeDecodeError included
        raise ValueError("a line of the NDJSON stream is not JSON") from None
    if not isinstance(value, dict):
        raise ValueError("a line of the NDJSON stream is not a JSON object")
    return None if "error" in value else value


def ndjson_error(line: bytes) -> tuple[str, bytes] | None:
    """("error", the line) for the provider's error sent as a line of its stream: Ollama's
    ``{"error": "..."}`` once the answer has begun, its HTTP status unchanged
    (https://github.com/ollama/ollama/blob/main/docs/api/errors.mdx)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return ("error", line) if isinstance(value, dict) and "error" in value else None


@dataclass(frozen=True, slots=True)
class Framing:
    """One way a stream is framed: what a format's ``framing`` names."""

    name: str
    # The media types of a stream so framed, lowercase; matched as prefixes of Content-Type.
    content_types: tuple[str, ...]
    # A fresh incremental framer: feed(chunk) and close() give the frames completed.
    framer: Callable[[], SseFramer | AwsEventStreamFramer | NdjsonFramer]
    # (frame, reader, shape) -> the event a CallCollector takes, or None for a frame that
    # carries none (a payload that is not a JSON object, an AWS exception message); a
    # ValueError for one it cannot open (the decoder stops there and says why).
    event: Callable[[object, Reader, object], dict | None]
    # (rewrite) -> a rewriter that passes the stream through ``rewrite`` a frame at a time.
    rewriter: Callable[[Callable[[bytes], bytes]], LineRewriter | EventStreamRewriter]
    # frame -> (its type, its payload) if it is the provider's error sent inside the stream
    # (an AWS exception message in an HTTP 200 answer), else None.
    exception: Callable[[object], tuple[str, bytes] | None] = lambda frame: None
    # The exception types (lowercase) that are the provider's verdict on the request, read
    # as its 400 answer would be (``Exchange.check_stream``); others (throttling, a server
    # fault) say nothing about names.
    rejects: frozenset[str] = frozenset()

    def carries(self, content_type: str) -> bool:
        return content_type.lower().startswith(self.content_types)


# Server-sent events (WHATWG): OpenAI, Anthropic, Gemini with alt=sse.
SSE = Framing("sse", ("text/event-stream",), SseFramer, _sse_event, LineRewriter)
# The AWS event stream of Bedrock: binary messages with headers, lengths and CRCs.
AWS_EVENT_STREAM = Framing(
    "aws-eventstream",
    ("application/vnd.amazon.eventstream",),
    AwsEventStreamFramer,
    _aws_event,
    EventStreamRewriter,
    stream_exception,
    frozenset({"validationexception"}),
)

# Bedrock InvokeModel's stream: the same messages, each ``chunk`` payload holding one event
# of the model's own stream in base64 (Anthropic's SSE events, as JSON).
AWS_EVENT_STREAM_BASE64 = Framing(
    "aws-eventstream-base64",
    ("application/vnd.amazon.eventstream",),
    AwsEventStreamFramer,
    _aws_chunk_event,
    _chunk_rewriter,
    stream_exception,
    frozenset({"validationexception"}),
)

# Newline-delimited JSON: Ollama's native API. Names are restored a whole line at a time,
# as in SSE (a line is one event); an error line is Ollama's verdict once it has begun.
NDJSON = Framing(
    "ndjson",
    ("application/x-ndjson",),
    NdjsonFramer,
    _ndjson_event,
    LineRewriter,
    ndjson_error,
    frozenset({"error"}),
)

# framing_for takes the first entry a Content-Type names: both AWS framings read as streams.
FRAMINGS: dict[str, Framing] = {
    f.name: f for f in [SSE, AWS_EVENT_STREAM, AWS_EVENT_STREAM_BASE64, NDJSON]
}


# Every framing's Content-Types: one C test rules out the usual answer (JSON), where asking
# each framing in turn cost a generator's steps and four calls for every answer.
_STREAM_TYPES = tuple(t for f in FRAMINGS.values() for t in f.content_types)


def framing_for(content_type: str) -> Framing | None:
    """The framing a Content-Type names; None for an answer that is not a stream."""
    if not content_type.lower().startswith(_STREAM_TYPES):
        return None
    return next((f for f in FRAMINGS.values() if f.carries(content_type)), None)


def rewriter_for(framing: Framing, rewrite: Callable[[bytes], bytes]):
    """The rewriter of a stream of ``framing``."""
    return framing.rewriter(rewrite)
