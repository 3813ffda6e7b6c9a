"""The glue between mitmproxy flows and the pure core: bodies out, records in."""

from __future__ import annotations

from mitmproxy import http

from toolnames_core.clients import client_label
from toolnames_core.record import COMMENT_PREFIX
from toolnames_core.record import MARKERS
from toolnames_core.record import FlowRecord

__all__ = [
    "META_KEY",
    "client",
    "content",
    "header",
    "host",
    "mark",
    "record",
    "request_content",
    "show",
]

META_KEY = "toolnames"


# Header lookups below walk headers.fields (documented raw access) once, comparing lowered
# names: Headers.get calls three Python functions per field, and a request from an SDK
# carries some 16 fields. Four lookups a flow cost more than checking a small body's tools.


def header(message: http.Message, name: bytes) -> str:
    """``message.headers.get(name, "")`` for a lower-case ``name``, folded alike."""
    size = len(name)
    values = [v for k, v in message.headers.fields if len(k) == size and k.lower() == name]
    if not values:
        return ""
    return b", ".join(values).decode("utf-8", "surrogateescape")


def client(request: http.Request) -> str | None:
    """The client that sent the request, as its headers tell; None if they don't."""
    return client_label(lambda name: header(request, name.encode()))


def content(message: http.Message, strict: bool = False) -> bytes | None:
    """``message.get_content(strict)``, which reads no further without a content-encoding."""
    if header(message, b"content-encoding"):
        return message.get_content(strict=strict)
    return message.raw_content


def request_content(message: http.Message, max_body: int) -> tuple[bytes, str | None]:
    """The decoded body, or why it cannot be read without changing the flow."""
    if message.raw_content is None:
        return b"", "the body was streamed through the proxy, so it was never held to read"
    if max_body and len(message.raw_content) > max_body:
        return b"", f"the body is {len(message.raw_content)} bytes, over toolnames_max_body"
    try:
        return content(message, strict=True) or b"", None
    except ValueError as e:
        return b"", f"its content-encoding could not be decoded ({e})"


# Host header -> the host in it. mitmproxy's pretty_host validates the name through the
# IDNA codec on every call (about 20 us under load, more than parsing a small body); an
# app sends the same few Host headers over and over.
_hosts: dict[str, str] = {}
_MAX_HOSTS = 1024


def host(request: http.Request) -> str:
    """``request.pretty_host``, remembered for each Host header."""
    # request.host_header, through the quicker lookup above.
    if request.is_http2 or request.is_http3:
        authority = request.authority or header(request, b"host")
    else:
        authority = header(request, b"host")
    if not authority:
        return request.host
    found = _hosts.get(authority)
    if found is None:
        if len(_hosts) >= _MAX_HOSTS:
            _hosts.clear()  # a client sending ever new Host headers: start over
        found = _hosts[authority] = request.pretty_host
    return found


def record(flow: http.HTTPFlow) -> FlowRecord | None:
    """The toolnames record in a flow's metadata, if it holds one this version reads."""
    return FlowRecord.from_metadata(flow.metadata.get(META_KEY))


def mark(flow: http.HTTPFlow, flow_record: FlowRecord) -> str | None:
    """Store the record on the flow, and mark and comment it if it is flagged; the comment,
    or None when the flow is not flagged."""
    flow.metadata[META_KEY] = flow_record.to_metadata()
    return show(flow, flow_record)


def show(flow: http.HTTPFlow, flow_record: FlowRecord) -> str | None:
    """Mark and comment a flagged flow, as mitmproxy shows flows; the comment, or None."""
    outcome = flow_record.outcome
    if outcome is None:
        return None
    # A user's own marker or comment is theirs: only ours are replaced.
    if not flow.marked or flow.marked in MARKERS.values():
        flow.marked = MARKERS[outcome]
    text = flow_record.comment()
    if not flow.comment or flow.comment.startswith(COMMENT_PREFIX):
        flow.comment = text
    return text
