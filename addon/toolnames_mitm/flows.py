"""The glue between mitmproxy flows and the pure core: a flow is read once (``incoming``),
its exchange or session made by one factory each (``exchange_for``, ``session_for``), and
what the check decided written once (``apply``); what toolnames holds for a flow meanwhile
is one ``Tracked`` in the addon's one store."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from mitmproxy import http

from toolnames_core import CLIENT_HEADERS
from toolnames_core import COMMENT_PREFIX
from toolnames_core import MARKERS
from toolnames_core import PROTOCOLS
from toolnames_core import Exchange
from toolnames_core import FlowRecord
from toolnames_core import McpExchange
from toolnames_core import Reader
from toolnames_core import RuleOverride
from toolnames_core import Session
from toolnames_core import Signed
from toolnames_core import WireFormat
from toolnames_core import choose_rule
from toolnames_core import client_label
from toolnames_core import detect_protocol
from toolnames_core import format_for
from toolnames_core import offered_keys
from toolnames_core import unchecked_text
from toolnames_mitm import signing

__all__ = [
    "META_KEY",
    "Incoming",
    "Pending",
    "Tracked",
    "UNCHECKED_KEY",
    "UNCHECKED_MARKER",
    "apply",
    "client",
    "content",
    "decoded",
    "exchange_for",
    "header",
    "host",
    "incoming",
    "mark",
    "mutable",
    "record",
    "recorded",
    "request_content",
    "set_body",
    "set_header",
    "session_for",
    "unclaimed",
    "show",
    "unsized",
]

META_KEY = "toolnames"


# Header lookups below walk headers.fields (documented raw access) once, comparing lowered
# names: Headers.get calls three Python functions per field, and a request from an SDK
# carries some 16 fields. Four lookups a flow cost more than checking a small body's tools.


def header(message: http.Message, name: bytes) -> str:
    """``message.headers.get(name, "")`` for a lower-case ``name``, folded alike."""
    size = len(name)
    return _folded([v for k, v in message.headers.fields if len(k) == size and k.lower() == name])


def _folded(values: list[bytes]) -> str:
    """A field's values as one, as Headers.get folds repeated fields."""
    if not values:
        return ""
    return b", ".join(values).decode("utf-8", "surrogateescape")


class _FieldNames(NamedTuple):
    """Header names looked up together in one walk of a message's fields, lower-case, and
    their lengths: a field of another length is never lowered (most fields are not wanted)."""

    names: frozenset[bytes]
    sizes: frozenset[int]

    @classmethod
    def of(cls, names: Iterable[bytes]) -> _FieldNames:
        wanted = frozenset(names)
        return cls(wanted, frozenset(map(len, wanted)))


def _field_values(message: http.Message, wanted: _FieldNames) -> dict[bytes, list[bytes]]:
    """The values of each wanted field the message carries, in order, in one walk."""
    found: dict[bytes, list[bytes]] = {}
    sizes, names = wanted.sizes, wanted.names  # once, not once a field: a third of the walk
    for name, value in message.headers.fields:
        if len(name) in sizes and (low := name.lower()) in names:
            found.setdefault(low, []).append(value)
    return found


# What incoming() reads of every request, in one walk: a walk for each cost as much again as
# settling a small request without tools (issue 25).
_INCOMING_FIELDS = _FieldNames.of((b"host", b"content-encoding", b"authorization"))


def client(request: http.Request) -> str | None:
    """The client that sent the request, as its headers tell; None if they don't. Read in
    one walk of the fields, and named once for each set of values: an app sends the same
    client headers with every request, and naming it took a walk per header it asked for."""
    values = _field_values(request, _CLIENT_WANTED)
    key = tuple(b", ".join(values.get(name, ())) for name in _CLIENT_FIELDS)
    if key in _clients:
        return _clients[key]
    if len(_clients) >= _MAX_CLIENTS:
        _clients.clear()  # a client sending ever new headers: start over
    seen = {name.decode(): _folded(found) for name, found in values.items()}
    label = _clients[key] = client_label(lambda name: seen.get(name, ""))
    return label


# The headers client_label reads, as header fields spell them lowered; their values -> the label.
_CLIENT_FIELDS = tuple(name.encode() for name in CLIENT_HEADERS)
_CLIENT_WANTED = _FieldNames.of(_CLIENT_FIELDS)
_clients: dict[tuple[bytes, ...], str | None] = {}
_MAX_CLIENTS = 1024


def content(
    message: http.Message, strict: bool = False, encoding: str | None = None
) -> bytes | None:
    """``message.get_content(strict)``, which reads no further without a content-encoding
    (``encoding``: the message's Content-Encoding, if the caller has read it already)."""
    if header(message, b"content-encoding") if encoding is None else encoding:
        return message.get_content(strict=strict)
    return message.raw_content


def set_body(message: http.Message, body: bytes) -> None:
    """``message.content = body``, byte for byte with the headers it sets, in one walk of
    the fields where mitmproxy's set_content takes three (each Headers lookup calls three
    Python functions a field): fix mode sets a request's body and an answer's, and asks
    for the answer uncompressed. With a Content-Encoding, mitmproxy's own setter encodes."""
    fields = message.headers.fields
    lowered = [k.lower() for k, _ in fields]
    if b"content-encoding" in lowered:
        message.content = body
        return
    message.raw_content = body
    if b"transfer-encoding" in lowered:
        return  # set_content leaves the length to the framing then (RFC 9112 6.2)
    message.headers.fields = _with_field(
        fields, lowered, b"content-length", str(len(body)).encode()
    )


def set_header(message: http.Message, name: bytes, value: bytes) -> None:
    """``message.headers[name] = value`` for a lower-case ``name``, in one walk of the fields."""
    fields = message.headers.fields
    message.headers.fields = _with_field(fields, [k.lower() for k, _ in fields], name, value)


def _with_field(
    fields: tuple[tuple[bytes, bytes], ...], lowered: list[bytes], name: bytes, value: bytes
) -> tuple[tuple[bytes, bytes], ...]:
    """What ``Headers[name] = value`` makes of ``fields`` (MultiDict.set_all): the first field
    of that name takes the value under its own spelling, later ones go, and one is added
    last if there was none."""
    # The common cases in C (count, index, slices), not a Python step per field: a request
    # carries some 16 fields and an answer 20, and fix mode sets three a flow.
    count = lowered.count(name)
    if count == 0:
        return (*fields, (name, value))
    if count == 1:
        at = lowered.index(name)
        return (*fields[:at], (fields[at][0], value), *fields[at + 1 :])
    out = []
    put = False
    for field, low in zip(fields, lowered, strict=True):
        if low != name:
            out.append(field)
        elif not put:
            out.append((field[0], value))
            put = True
    if not put:
        out.append((name, value))
    return tuple(out)


def request_content(
    message: http.Message, max_body: int, encoding: str | None = None
) -> tuple[bytes, str | None]:
    """The decoded body, or why it cannot be read without changing the flow."""
    if message.raw_content is None:
        return b"", "the body was streamed through the proxy, so it was never held to read"
    if max_body and len(message.raw_content) > max_body:
        return b"", f"the body is {len(message.raw_content)} bytes, over toolnames_max_body"
    return decoded(message, encoding)


def decoded(message: http.Message, encoding: str | None = None) -> tuple[bytes, str | None]:
    """The body without its content-encoding, or why it cannot be decoded: a body mitmproxy
    cannot decode (a corrupt gzip, an unknown coding) is never read as it came."""
    try:
        return content(message, True, encoding) or b"", None
    except ValueError as e:
        return b"", f"its content-encoding could not be decoded ({e})"


# Host header -> the host in it. mitmproxy's pretty_host validates the name through the
# IDNA codec on every call (about 20 us under load, more than parsing a small body); an
# app sends the same few Host headers over and over.
_hosts: dict[str, str] = {}
_MAX_HOSTS = 1024


def host(request: http.Request, host_field: str | None = None) -> str:
    """``request.pretty_host``, remembered for each Host header (``host_field``: its value,
    if the caller has read it already)."""
    # request.host_header, through the quicker lookup above: an HTTP/2 or 3 request's
    # :authority first, its Host field only without one (never walked for when not needed).
    authority = request.authority if request.is_http2 or request.is_http3 else ""
    if not authority:
        authority = header(request, b"host") if host_field is None else host_field
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


# -- a flow read once, written once ---------------------------------------------------------


class Incoming(NamedTuple):
    """An LLM API request as toolnames reads it, once, in its request hook. The client
    (``client``) is read only for a flow that gets a record: its header walks cost more
    than settling a small body, and most flows get none."""

    format: WireFormat
    host: str
    port: int
    content: bytes  # decoded; b"" when it cannot be read
    problem: str | None  # why the body cannot be read without changing the flow
    mutable: bool  # still on its way, so it can be changed
    signed: Signed | None = None  # its AWS SigV4 signature, if it carries one


def unsized(flow: http.HTTPFlow) -> None:
    """The response goes on without its Content-Length, framed as HTTP allows: chunked to an
    HTTP/1.1 client, ended by closing the connection to an HTTP/1.0 one (mitmproxy closes
    it when a body has neither), by the stream's end in HTTP/2 and 3. Only the client side
    changes: mitmproxy framed the provider's body from its headers before this hook ran."""
    response = flow.response
    del response.headers["content-length"]
    if flow.request.http_version == "HTTP/1.1":
        response.headers["transfer-encoding"] = "chunked"


def mutable(flow: http.HTTPFlow) -> bool:
    """Only traffic that is still on its way can be changed."""
    return flow.live and flow.response is None and flow.error is None


def incoming(flow: http.HTTPFlow, max_body: int) -> Incoming | None:
    """The request of ``flow`` read once; None if it is no LLM API call."""
    request = flow.request
    fmt = format_for(request.method, request.path)
    if fmt is None:
        return None
    fields = _field_values(request, _INCOMING_FIELDS)
    content, problem = request_content(
        request, max_body, _folded(fields.get(b"content-encoding", []))
    )
    signed = signing.signed_by(request, fields.get(b"authorization", []))
    at = host(request, _folded(fields.get(b"host", [])))
    return Incoming(fmt, at, request.port, content, problem, mutable(flow), signed)


# A request that carries tools to a path no format claims: why it was not checked (the flow's
# metadata under this key, its marker and comment).
UNCHECKED_KEY = "toolnames_unchecked"
UNCHECKED_MARKER = ":grey_question:"


def unclaimed(flow: http.HTTPFlow, max_body: int, reader: Reader) -> str | None:
    """For a request no format claims (``incoming`` gave None): if it is a POST whose JSON
    body carries tools, say on the flow that it was not checked and why, and give that text;
    None for any other request, which stays as quiet as before."""
    request = flow.request
    if request.method.upper() != "POST":
        return None
    content, problem = request_content(request, max_body)
    keys = () if problem else offered_keys(content, reader)
    if not keys:
        return None
    text = unchecked_text(request.method, request.path, keys)
    flow.metadata[UNCHECKED_KEY] = {"offer_keys": list(keys), "reason": text}
    # A user's own marker or comment is theirs.
    if not flow.marked or flow.marked in MARKERS.values():
        flow.marked = UNCHECKED_MARKER
    if not flow.comment or flow.comment.startswith(COMMENT_PREFIX):
        flow.comment = text
    return text


def exchange_for(seen: Incoming, overrides: tuple[RuleOverride, ...], reader: Reader) -> Exchange:
    """The exchange for a request: its format, and the rule its host gets."""
    rule = choose_rule(seen.format, seen.host, overrides, seen.port)
    exchange = Exchange(seen.format, rule, seen.host, reader)
    exchange.signed = seen.signed
    return exchange


def session_for(
    flow: http.HTTPFlow, overrides: tuple[RuleOverride, ...], mode: str, reader: Reader
) -> Session | None:
    """The session for a WebSocket's upgrade request; None if it is no LLM API session."""
    request = flow.request
    protocol = detect_protocol(request.path)
    if protocol is None:
        return None
    at = host(request)
    rule = choose_rule(PROTOCOLS[protocol], at, overrides, request.port).id
    # Only a live connection can be changed: a session read from a file is observed.
    return Session(protocol, rule, at, mode if flow.live else "observe", reader)


def recorded(
    flow: http.HTTPFlow, checked: Exchange | Session | McpExchange, mode: str
) -> FlowRecord:
    """The record of what toolnames found and did on ``flow``, made once per hook."""
    if isinstance(checked, McpExchange):
        return FlowRecord.of_mcp(checked, mode, client(flow.request))
    if isinstance(checked, Session):
        return FlowRecord.of_session(checked, mode, client(flow.request))
    # The flow's request was recorded already: its client is the one that sent it.
    earlier = checked.record
    return FlowRecord.of(checked, mode, client(flow.request) if earlier is None else earlier.client)


def apply(
    flow: http.HTTPFlow,
    exchange: Exchange,
    mode: str,
    permission: signing.Permission | None = None,
) -> str | None:
    """Write the checked request's outcome onto ``flow``, once: the fixed body (and the
    Accept-Encoding its answer needs), signed again if it was signed (``permission``: the
    credentials fix mode may sign with; a signed request is changed only with them), the
    block answer, the record, marker and comment. The comment, or None when the flow is
    not flagged."""
    if exchange.new_body is not None:
        set_body(flow.request, exchange.new_body)
        # The answer's names go back to the app: it must come uncompressed (exchange.py).
        accept = exchange.answer_encoding(header(flow.request, b"accept-encoding"))
        if accept is not None:
            set_header(flow.request, b"accept-encoding", accept.encode())
        if exchange.signed is not None:
            # The exchange changes a signed request only when permission.credentials is set.
            signing.resign(flow.request, exchange.signed, permission.credentials)
            exchange.resigned = True
    elif mode == "block" and mutable(flow) and exchange.errors:
        status, headers, body = exchange.block_response()
        flow.response = http.Response.make(status, body, headers)
    if not (exchange.request_findings or exchange.fixes):
        return None
    return mark(flow, recorded(flow, exchange, mode))


class Pending(NamedTuple):
    """An observed request whose check waits (deferral.py)."""

    due: float  # on the event loop's clock
    flow: http.HTTPFlow
    exchange: Exchange
    content: bytes
    problem: str | None  # why the body cannot be read, if it cannot


@dataclass(slots=True)  # one a flow: slots make it a third cheaper to make
class Tracked:
    """What toolnames holds for one flow it watches, from its first hook to its last."""

    # The request's exchange until its answer is judged (then None: what it read goes).
    exchange: Exchange | None = None
    # A live LLM API WebSocket's session, from websocket_start to websocket_end.
    session: Session | None = None
    # A flow read back from a file with a toolnames record: shown as recorded, never
    # checked again (its record None if this version cannot read it).
    read_back: bool = False
    record: FlowRecord | None = None
    # Observe mode's check of the request, while it waits (deferral.py).
    pending: Pending | None = None
    # An MCP request's exchange until its answer is judged (mcp.py).
    mcp: McpExchange | None = None
