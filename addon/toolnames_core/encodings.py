"""A streamed answer's content-encoding, decoded as it goes by.

mitmproxy decodes a whole body for addons (``get_content``), but a streamed one reaches the
tap as the provider sent it, compressed or not. gzip and deflate (the standard library's
``zlib.decompressobj``), br (the Brotli module mitmproxy requires) and zstd (backports.zstd,
which mitmproxy 12 requires, or zstandard, which mitmproxy 11 requires) are read here the
way mitmproxy reads whole bodies; a coding without a decoder at hand (several codings in a
row, an unknown one) is reported as unreadable, never passed off as a stream without calls.
The client's bytes are never touched by reading: only copies are decoded, in steps.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from collections.abc import Iterator

__all__ = ["ASK_UNCOMPRESSED", "READABLE", "STEP", "StreamDecoder", "stream_coding"]


def _brotli():
    try:
        import brotli
    except ImportError:  # mitmproxy requires it; a bare Python may lack it
        return None
    return brotli


def _zstd() -> Callable[[], object] | None:
    """A maker of one-frame zstd decoders with zlib's decompressobj shape, if one imports:
    compression.zstd (Python 3.14) or backports.zstd (mitmproxy 12), else zstandard
    (mitmproxy 11)."""
    try:
        from compression import zstd  # type: ignore[import-not-found]
    except ImportError:
        try:
            from backports import zstd  # type: ignore[import-not-found]
        except ImportError:
            zstd = None
    if zstd is not None:
        return zstd.ZstdDecompressor
    try:
        import zstandard
    except ImportError:
        return None
    return lambda: zstandard.ZstdDecompressor().decompressobj()


_BROTLI = _brotli()
_ZSTD = _zstd()
# x-gzip is gzip's old name (RFC 9110 §8.4.1.3), which mitmproxy decodes as gzip too.
READABLE = (
    "gzip",
    "x-gzip",
    "deflate",
    *(("br",) if _BROTLI is not None else ()),
    *(("zstd",) if _ZSTD is not None else ()),
)
# What a user can do about a compressed stream: mitmproxy's anticomp option sets every
# request's Accept-Encoding to identity, so that providers answer uncompressed.
ASK_UNCOMPRESSED = "mitmproxy's --set anticomp=true asks providers for uncompressed answers"
# Decoded bytes per step: a small body that expands a thousandfold is read a step at a time.
STEP = 64 * 1024
_GZIP_WBITS = 16 + zlib.MAX_WBITS


def stream_coding(content_encoding: str) -> str | None:
    """The encoding a stream must be decoded from: None for none (or identity), else the
    header's value, lowered (several codings, "gzip, br", are one value nothing here reads)."""
    coding = content_encoding.strip().lower()
    return None if coding in ("", "identity") else coding


class StreamDecoder:
    """Decodes a gzip, deflate, br or zstd stream fed in chunks of any size."""

    def __init__(self, coding: str) -> None:
        if coding not in READABLE:
            raise ValueError(f"no incremental decoder for {coding!r}")
        self.coding = coding
        self.failure: str | None = None
        self.head = b""  # deflate: the first two bytes tell zlib's wrapper from raw deflate
        self.obj = zlib.decompressobj(_GZIP_WBITS) if coding in ("gzip", "x-gzip") else None
        self.other = (
            _BROTLI.Decompressor() if coding == "br" else _ZSTD() if coding == "zstd" else None
        )

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        """The decoded bytes ``chunk`` completes, in pieces of at most STEP bytes."""
        if self.failure is not None or not chunk:
            return
        if self.other is not None:
            yield from self._other(chunk)
            return
        try:
            if self.obj is None:
                self.head += chunk
                if len(self.head) < 2:
                    return
                chunk, self.head = self.head, b""
                self.obj = zlib.decompressobj(
                    zlib.MAX_WBITS if _zlib_wrapped(chunk) else -zlib.MAX_WBITS
                )
            yield from self._decode(chunk)
        except zlib.error as e:
            self.failure = f"its {self.coding} encoding could not be decoded ({e})"

    def _decode(self, data: bytes) -> Iterator[bytes]:
        while True:
            if self.obj.eof:
                data = self.obj.unused_data + data
                if not data:
                    return
                # gzip allows members one after another (gzip.decompress reads them all).
                self.obj = zlib.decompressobj(
                    _GZIP_WBITS if self.coding != "deflate" else -zlib.MAX_WBITS
                )
            out = self.obj.decompress(data, STEP)
            if out:
                yield out
            data = self.obj.unconsumed_tail
            if not out and not data and not self.obj.eof:
                return

    def _other(self, chunk: bytes) -> Iterator[bytes]:
        # br and zstd decode a chunk whole (their decoders take no output bound in every
        # version mitmproxy pins), handed on in STEP pieces; zstd frames may follow each other.
        try:
            if self.coding == "br":
                out = self.other.process(chunk)
            else:
                out = b""
                while chunk:
                    if self.other.eof:
                        self.other = _ZSTD()
                    out += self.other.decompress(chunk)
                    chunk = self.other.unused_data if self.other.eof else b""
        except Exception as e:  # noqa: BLE001 - brotli.error, zstd.ZstdError, zstandard's
            self.failure = f"its {self.coding} encoding could not be decoded ({e})"
            return
        for i in range(0, len(out), STEP):
            yield out[i : i + STEP]


def _zlib_wrapped(head: bytes) -> bool:
    """HTTP's deflate is meant to be zlib-wrapped (RFC 9110 §8.4.1.2), but servers send raw
    deflate too; mitmproxy tries the wrapper, then raw. A zlib header is method 8 in the low
    bits of the first byte, and the first two bytes a multiple of 31 (RFC 1950 §2.2)."""
    return head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0
