"""Streamed responses: incremental framers (bytes in, whatever their split, events out) and the
tap that reads a stream as it goes by.

Both keep at most one unfinished event in memory and give up (``broken``) rather
than buffer without bound, so a stream of any length or shape is read in
bounded memory and never delays a byte: they only ever look at copies.
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Callable
from collections.abc import Iterator

from toolnames_core import codes
from toolnames_core.encodings import ASK_UNCOMPRESSED
from toolnames_core.encodings import READABLE
from toolnames_core.encodings import StreamDecoder
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.readers import DEFAULT
from toolnames_core.readers import Reader

MAX_EVENT_BYTES = 8 * 1024 * 1024
_LINE_END = re.compile(rb"\r\n|\r|\n")


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
        if not self.buffer and b"\r" not in chunk:
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
        for m in _LINE_END.finditer(self.buffer, self.scanned):
            # A CR at the very end may be the first half of a CRLF: wait for the next byte.
            if m.group() == b"\r" and m.end() == len(self.buffer):
                break
            if (event := self._line(bytes(self.buffer[pos : m.start()]))) is not None:
                yield event
            pos = m.end()
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
    message goes on at once; a stream it cannot frame goes on unchanged from there."""

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


def rewriter_for(framing: str, rewrite: Callable[[bytes], bytes]):
    """The rewriter of a stream of ``framing``, as EventDecoder names it."""
    if framing == "aws-eventstream":
        return EventStreamRewriter(rewrite)
    return LineRewriter(rewrite)


def json_or_none(data: bytes, reader: Reader = DEFAULT, shape: object = None) -> dict | None:
    try:
        value = reader.event(data, shape)
    except (ValueError, RecursionError):  # UnicodeDecodeError included
        return None
    return value if isinstance(value, dict) else None


class EventDecoder:
    """Frames a stream and decodes each event to the dict a CallCollector takes; ``shape``:
    what the fast reader decodes of an event."""

    def __init__(self, framing: str, reader: Reader = DEFAULT, shape: object = None) -> None:
        self.reader = reader
        self.shape = shape
        self.framing = framing
        self.framer = AwsEventStreamFramer() if framing == "aws-eventstream" else SseFramer()

    @property
    def broken(self) -> bool:
        return self.framer.broken

    def feed(self, chunk: bytes) -> Iterator[dict]:
        return self._decode(self.framer.feed(chunk))

    def close(self) -> Iterator[dict]:
        return self._decode(self.framer.close())

    def _decode(self, frames) -> Iterator[dict]:
        for frame in frames:
            if self.framing == "aws-eventstream":
                headers, payload = frame
                if headers.get(":message-type") != "event":
                    continue
                body = json_or_none(payload, self.reader, self.shape)
                if body is not None:
                    yield {str(headers.get(":event-type")): body}
            else:
                body = json_or_none(frame, self.reader, self.shape)
                if body is not None:
                    yield body


def is_stream(content_type: str) -> bool:
    content_type = content_type.lower()
    return content_type.startswith("text/event-stream") or content_type.startswith(
        "application/vnd.amazon.eventstream"
    )


class StreamTap:
    """Watches a streamed response go by: every chunk is returned at once, unchanged, or,
    given ``rewrite`` (fix mode's restoring of names), rewritten a line or a message at a
    time (``rewriter_for``); the calls are read from the stream as the provider sent it.

    mitmproxy calls it with each chunk and with b"" at the end of the message. An HTTP/2
    peer may also send an empty DATA frame mid-stream, which arrives as b"" too, so a b""
    is the end only if nothing follows it: the last event is flushed when the calls are
    read, not when the b"" comes.
    """

    def __init__(
        self,
        fmt,
        rewrite: Callable[[bytes], bytes] | None = None,
        coding: str | None = None,
        reader: Reader = DEFAULT,
    ) -> None:
        # ``coding``: the stream's content-encoding (``encodings.stream_coding``). gzip and
        # deflate are read through a decoder; another is not read at all, and said so.
        self.coding = coding
        self.content = StreamDecoder(coding) if coding in READABLE else None
        if coding is not None and rewrite is not None:
            raise ValueError("names are restored in streams that are not content-encoded only")
        shape = fmt.shapes.event if fmt.shapes else None
        self.decoder = EventDecoder(fmt.stream_framing, reader, shape)
        self.collector = fmt.stream_collector()
        self.rewriter = rewriter_for(fmt.stream_framing, rewrite) if rewrite else None
        self.ended = False
        self.closed = False
        self.failure: str | None = None
        # Events read so far: a streamed answer with one has been accepted by the provider.
        self.events = 0

    def __call__(self, chunk: bytes) -> bytes:
        if chunk and self.content is not None:
            for piece in self.content.feed(chunk):
                self._read(lambda piece=piece: self.decoder.feed(piece))
        elif chunk and self.coding is None:
            self._read(lambda: self.decoder.feed(chunk))
        self.ended = not chunk
        if self.rewriter is None:
            return chunk
        out = self.rewriter(chunk)
        if self.rewriter.failure and not self.failure:
            self.failure = self.rewriter.failure
        return out

    def _read(self, events) -> None:
        if self.failure is None:
            try:
                for event in events():
                    self.events += 1
                    self.collector.event(event)
            except Exception as e:  # noqa: BLE001
                # A bug in a collector must never cost the client its stream: stop
                # reading, keep forwarding, and say so on the flow.
                self.failure = f"{type(e).__name__}: {e}"

    def _close(self) -> None:
        if self.ended and not self.closed:
            self.closed = True
            self._read(self.decoder.close)

    def feed_all(self, content: bytes) -> StreamTap:
        self(content)
        self(b"")
        return self

    def calls(self) -> list[NameRef]:
        self._close()
        return self.collector.calls()

    @property
    def unreadable(self) -> str | None:
        """Why the stream could not be read at all, or from some point on; None if it was."""
        if self.coding is not None and self.content is None:
            return (
                f"the stream is compressed with {self.coding}; toolnames cannot read it "
                f"({ASK_UNCOMPRESSED})"
            )
        if self.content is not None and self.content.failure:
            return f"toolnames stopped reading the stream: {self.content.failure}"
        return None

    def problem(self) -> Finding | None:
        self._close()
        if self.unreadable:
            return Finding(
                codes.RESPONSE_UNREADABLE,
                "warning",
                "",
                f"{self.unreadable}; the client got it unchanged, and its calls are not judged",
            )
        if self.failure:
            return Finding(
                codes.RESPONSE_UNREADABLE,
                "warning",
                "",
                f"toolnames stopped reading the stream: {self.failure}",
            )
        if self.decoder.broken:
            return Finding(
                codes.RESPONSE_UNREADABLE,
                "warning",
                "",
                "toolnames stopped reading the stream: an event was malformed or too large",
            )
        return None
