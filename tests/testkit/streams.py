"""Raw streamed bodies (SSE, AWS event streams, NDJSON), built independently of the code that
reads them."""

from __future__ import annotations

import base64
import json
import struct
import zlib

__all__ = [
    "aws_chunk",
    "aws_event",
    "aws_stream",
    "every_split",
    "ndjson",
    "sent_on",
    "sse",
    "zstd_compress",
]


def sse(events: list, newline: bytes = b"\n", done: bool = True) -> bytes:
    out = b""
    for event in events:
        data = event if isinstance(event, bytes) else json.dumps(event).encode()
        out += b"data: " + data + newline + newline
    if done:
        out += b"data: [DONE]" + newline + newline
    return out


def ndjson(events: list, newline: bytes = b"\n") -> bytes:
    """One JSON object a line, as Ollama streams (compact, raw UTF-8, as Go's encoder writes)."""
    out = b""
    for event in events:
        data = event if isinstance(event, bytes) else json.dumps(event, ensure_ascii=False).encode()
        out += data + newline
    return out


def _header(name: str, value: str) -> bytes:
    # surrogatepass: property tests draw event types that hold lone surrogates.
    raw_name, raw_value = name.encode(), value.encode("utf-8", "surrogatepass")
    return (
        bytes([len(raw_name)]) + raw_name + b"\x07" + struct.pack(">H", len(raw_value)) + raw_value
    )


def aws_event(event_type: str, payload: dict, message_type: str = "event") -> bytes:
    # An exception message names its kind in :exception-type, an event in :event-type.
    kind = ":exception-type" if message_type == "exception" else ":event-type"
    headers = (
        _header(kind, event_type)
        + _header(":content-type", "application/json")
        + _header(":message-type", message_type)
    )
    body = json.dumps(payload).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def aws_chunk(event: object, padding: str = "abcdefgh") -> bytes:
    """One chunk message of Bedrock's InvokeModelWithResponseStream: ``event``'s JSON in
    base64 in the payload's ``bytes``, with Bedrock's ``p`` padding."""
    raw = json.dumps(event).encode("utf-8", "surrogatepass")
    return aws_event("chunk", {"bytes": base64.b64encode(raw).decode(), "p": padding})


def aws_stream(events: list[tuple[str, dict]]) -> bytes:
    return b"".join(aws_event(kind, payload) for kind, payload in events)


def every_split(raw: bytes):
    """Two-chunk splits at every byte offset, then the whole body byte by byte."""
    for k in range(len(raw) + 1):
        yield [raw[:k], raw[k:]]
    yield [raw[i : i + 1] for i in range(len(raw))]


def zstd_compress(data: bytes) -> bytes:
    """zstd as mitmproxy brings it: backports.zstd (mitmproxy 12) or zstandard (mitmproxy 11)."""
    try:
        from backports import zstd
    except ImportError:
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    return zstd.compress(data)


def sent_on(stream, chunk: bytes) -> bytes:
    """What mitmproxy sends on for ``chunk`` through a flow's ``response.stream``, which may
    return bytes or a list of pieces (toolnames' tap returns a list, never an empty piece)."""
    out = stream(chunk)
    return out if isinstance(out, bytes) else b"".join(out)
