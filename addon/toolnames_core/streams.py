"""Streamed responses: the decoder that turns a framed stream into a format's events, and the
tap that reads a stream as it goes by. How a stream is framed is ``framings.py``'s table.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator

from toolnames_core import codes
from toolnames_core.encodings import ASK_UNCOMPRESSED
from toolnames_core.encodings import READABLE
from toolnames_core.encodings import StreamDecoder
from toolnames_core.framings import Framing
from toolnames_core.framings import LineRewriter
from toolnames_core.framings import framing_for
from toolnames_core.framings import rewriter_for
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.readers import DEFAULT
from toolnames_core.readers import Reader

__all__ = ["EventDecoder", "StreamTap", "is_stream"]


class EventDecoder:
    """Frames a stream and decodes each event to the dict a CallCollector takes; ``shape``:
    what the fast reader decodes of an event."""

    def __init__(self, framing: Framing, reader: Reader = DEFAULT, shape: object = None) -> None:
        self.reader = reader
        self.shape = shape
        self.framing = framing
        self.framer = framing.framer()
        # Why an event could not be opened (a Bedrock chunk that is not base64): reading
        # stops there, since what it held is unknown.
        self.failure: str | None = None
        # The first error the provider sent inside the stream: (its type, its payload).
        self.exception: tuple[str, bytes] | None = None

    @property
    def broken(self) -> bool:
        return self.framer.broken or self.failure is not None

    def feed(self, chunk: bytes) -> Iterator[dict]:
        return self._decode(self.framer.feed(chunk))

    def close(self) -> Iterator[dict]:
        return self._decode(self.framer.close())

    def _decode(self, frames) -> Iterator[dict]:
        event = self.framing.event
        for frame in frames:
            if self.failure is not None:
                return
            try:
                body = event(frame, self.reader, self.shape)
            except ValueError as e:
                self.failure = str(e)
                return
            if body is not None:
                yield body
            elif self.exception is None:
                self.exception = self.framing.exception(frame)


def is_stream(content_type: str) -> bool:
    """Whether an answer of ``content_type`` is a stream of a framing toolnames reads."""
    return framing_for(content_type) is not None


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
        ask_uncompressed: str = ASK_UNCOMPRESSED,
    ) -> None:
        # ``coding``: the stream's content-encoding (``encodings.stream_coding``). gzip and
        # deflate are read through a decoder; another is not read at all, and said so.
        self.coding = coding
        # What the user can do about a stream in a coding toolnames cannot read.
        self.ask_uncompressed = ask_uncompressed
        self.content = StreamDecoder(coding) if coding in READABLE else None
        if coding is not None and self.content is None and rewrite is not None:
            raise ValueError("names are restored in streams toolnames can decode only")
        shape = fmt.shapes.event if fmt.shapes else None
        self.decoder = EventDecoder(fmt.framing, reader, shape)
        self.collector = fmt.stream_collector()
        if rewrite is not None and fmt.restore_event is not None:
            rewrite = fmt.restore_event(rewrite)  # names sit deeper in an event's bytes
        self.rewriter = rewriter_for(fmt.framing, rewrite) if rewrite else None
        # Fix mode's quick pass: a restore that declares a ``needle`` gives back unchanged any
        # text without it while it waits on nothing (``under_way`` empty). A chunk of whole
        # lines without the needle, with no part of a line held, then goes on as it came
        # without a call: what the line rewriter and the restore would give it, and nearly
        # every chunk of a stream (their two calls were a quarter of restoring's cost a
        # chunk: issue 25, docs/performance.md). None: every chunk goes through the rewriter.
        self.restore = rewrite
        self.needle: bytes | None = (
            getattr(rewrite, "needle", None) if isinstance(self.rewriter, LineRewriter) else None
        )
        self.ended = False
        self.closed = False
        self.failure: str | None = None
        # Events read so far: a streamed answer with one has been accepted by the provider.
        self.events = 0

    @property
    def decodes(self) -> bool:
        """Whether the client gets the stream decoded: names are given back inside a
        content-encoded stream by decoding it, and it goes on uncompressed (re-compressing
        each piece on the fly would hold events back), so its Content-Encoding must go."""
        return self.content is not None and self.rewriter is not None

    def __call__(self, chunk: bytes) -> bytes:
        rewriter = self.rewriter
        if chunk and self.content is not None:
            pieces = list(self.content.feed(chunk))
            for piece in pieces:
                self._read(lambda piece=piece: self.decoder.feed(piece))
            self.ended = False
            if rewriter is None:
                return chunk
            out = b"".join(rewriter(piece) for piece in pieces)
        else:
            if chunk and self.coding is None:
                self._read(lambda: self.decoder.feed(chunk))
            self.ended = not chunk
            if rewriter is None:
                return chunk
            needle = self.needle
            if (
                needle is not None
                and chunk.endswith(b"\n")
                and chunk.find(needle) == -1  # find, not in: docs/performance.md
                and not rewriter.held
                and not self.restore.under_way
            ):
                return chunk
            out = rewriter(chunk)
        # A rewriter that failed gives up for good (framings._Rewriter): one look after the
        # chunk, where its pieces are all rewritten, says so as soon as a look per piece would.
        if rewriter.failure and not self.failure:
            self.failure = rewriter.failure
        return out

    def pieces(self, chunk: bytes) -> list[bytes]:
        """The tap as mitmproxy's ``response.stream``: what goes on for ``chunk``, as a list.
        A rewriter holds back a line or an event not yet whole, and an empty piece sent on
        would end an HTTP/1.1 chunked body (its last chunk is the empty one): none is sent."""
        out = self(chunk)
        return [out] if out else []

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
    def exception(self) -> tuple[str, bytes] | None:
        """The first error the provider sent inside the stream (its type, its payload)."""
        self._close()
        return self.decoder.exception

    @property
    def unreadable(self) -> str | None:
        """Why the stream could not be read at all, or from some point on; None if it was."""
        if self.coding is not None and self.content is None:
            return (
                f"the stream is compressed with {self.coding}; toolnames cannot read it "
                f"({self.ask_uncompressed})"
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
        if self.decoder.failure:
            return Finding(
                codes.RESPONSE_UNREADABLE,
                "warning",
                "",
                f"toolnames stopped reading the stream: {self.decoder.failure}",
            )
        if self.decoder.broken:
            return Finding(
                codes.RESPONSE_UNREADABLE,
                "warning",
                "",
                "toolnames stopped reading the stream: an event was malformed or too large",
            )
        return None
