"""The glue between mitmproxy flows and the pure core: bodies out, annotations in."""

from __future__ import annotations

from mitmproxy import http

from toolnames_core import analysis
from toolnames_core import annotate
from toolnames_core import calls
from toolnames_core.model import Finding
from toolnames_core.model import RequestView

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


def response_findings(
    flow: http.HTTPFlow, api: str, complete: bool, request: bytes | RequestView | None
) -> list[Finding] | None:
    """Findings about the calls in a successful response; None when there was nothing to read.

    ``request`` is what its request offered: the view the request check made, or the body
    to read it from, or None when the body was left unread.
    """
    response = flow.response
    if response is None or not 200 <= response.status_code < 300:
        return None
    tap = response.stream if isinstance(response.stream, calls.StreamTap) else None
    if tap is not None:
        if tap.checked:
            return None
        tap.checked = True
        found, problem = tap.calls(), tap.problem()
        complete = complete and tap.ended
    elif response.raw_content is not None:
        found, problem = analysis.read_response_calls(
            api, header(response, b"content-type"), content(response) or b""
        )
    else:
        return None  # streamed by someone else and not stored: nothing to read
    if isinstance(request, RequestView):
        findings = calls.check_calls(found, request, complete)
    else:
        findings = analysis.analyse_response(request, api, found, complete)
    return [*findings, problem] if problem else findings


def show(flow: http.HTTPFlow) -> str | None:
    """Mark and comment a flagged flow; the comment, or None when the flow is not flagged."""
    meta = flow.metadata.get(META_KEY)
    outcome = annotate.outcome(meta)  # None too for metadata this version cannot read
    if outcome is None:
        return None
    # A user's own marker or comment is theirs: only ours are replaced.
    if not flow.marked or flow.marked in annotate.MARKERS.values():
        flow.marked = annotate.MARKERS[outcome]
    text = annotate.comment(meta)
    if not flow.comment or flow.comment.startswith(annotate.COMMENT_PREFIX):
        flow.comment = text
    return text
