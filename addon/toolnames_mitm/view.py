"""The ``toolnames`` content view: an LLM API flow's tool names as tables, in mitmweb and the console.

It uses the content view API of mitmproxy 12. mitmproxy 11 has only the old one, so there the
addon runs without the view and says so once in the log. The text comes from the core's ``render.py``.
"""

from __future__ import annotations

import logging

from mitmproxy import contentviews
from mitmproxy import ctx
from mitmproxy import http
from mitmproxy import version
from mitmproxy.utils import human

from toolnames_core import CATALOGUE
from toolnames_core import FORMATS
from toolnames_core import PROTOCOLS
from toolnames_core import READERS
from toolnames_core import RULES
from toolnames_core import Exchange
from toolnames_core import FlowRecord
from toolnames_core import McpExchange
from toolnames_core import McpState
from toolnames_core import RuleOverride
from toolnames_core import Session
from toolnames_core import choose_rule
from toolnames_core import detect_protocol
from toolnames_core import format_for
from toolnames_core import has_tool_keys
from toolnames_core import is_mcp_request
from toolnames_core import parse_rule_override
from toolnames_core import reader_named
from toolnames_core import render_mcp
from toolnames_core import render_message
from toolnames_core import render_request
from toolnames_core import render_response
from toolnames_core import rule_named
from toolnames_mitm import flows

__all__ = [
    "VIEW_NAME",
    "ToolnamesView",
    "available",
    "exchange_of",
    "mcp_view",
    "register",
    "session_view",
]

logger = logging.getLogger(__name__)

VIEW_NAME = "toolnames"
# Above the JSON view (1), so a request that names tools opens in this view.
PREFERRED = 2.0

NOT_LLM = (
    "toolnames reads the requests and responses of the LLM APIs it knows "
    f"(POST {', '.join(fmt.path_text for fmt in FORMATS.values())}) and the messages of "
    f"{' and '.join(p.title for p in PROTOCOLS.values())} WebSockets, and MCP's JSON-RPC "
    "(tools/list, tools/call); this message is not one of them.\n"
)

# mitmproxy 11 has no Contentview; the class is still defined there, but never registered.
_Base = getattr(contentviews, "Contentview", object)
_said_unavailable = False


def _option(name: str, parse, default):
    # The view is called outside any hook: read the option directly, and forgive a bad
    # value (the addon's configure has already reported it).
    try:
        return parse(getattr(ctx.options, name))
    except (AttributeError, KeyError, ValueError):
        return default


def _overrides(specs) -> tuple[RuleOverride, ...]:
    return tuple(parse_rule_override(s) for s in specs)


def exchange_of(flow: http.HTTPFlow) -> tuple[Exchange, FlowRecord | None] | None:
    """A fresh exchange for the flow, with the flow's record; None for a flow that is not
    an LLM API call toolnames knows. Its request is left for the caller to read."""
    request = flow.request
    fmt = format_for(request.method, request.path)
    if fmt is None:
        return None
    recorded = flows.record(flow)
    host = flows.host(request)
    # The reader the addon uses; any reader gives the same answer.
    reader = _option("toolnames_reader", reader_named, READERS[0])
    # The rule the addon applied when the flow went through, if it recorded one.
    if recorded is not None and recorded.rule in RULES:
        return Exchange(fmt, rule_named(recorded.rule), host, reader), recorded
    overrides = _option("toolnames_rule", _overrides, ())
    return Exchange(fmt, choose_rule(fmt, host, overrides, request.port), host, reader), recorded


# Words every WebSocket message that declares, forces or calls a tool holds somewhere.
_SESSION_KEYS = (b"tool", b"function", b"Tool", b"Function")


def session_view(flow: http.HTTPFlow, shown: object, data: bytes) -> str | None:
    """The text for one message of a live LLM API session; None for another WebSocket.
    The session is replayed up to the message: what is in force depends on what came before."""
    protocol = detect_protocol(flow.request.path) if flow.websocket else None
    if protocol is None:
        return None
    recorded = flows.record(flow)
    host = flows.host(flow.request)
    if recorded is not None and recorded.rule in RULES:
        rule = recorded.rule
    else:
        overrides = _option("toolnames_rule", _overrides, ())
        rule = choose_rule(PROTOCOLS[protocol], host, overrides, flow.request.port).id
    reader = _option("toolnames_reader", reader_named, READERS[0])
    session = Session(protocol, rule, host, reader=reader)
    messages = flow.websocket.messages
    index = next((i for i, m in enumerate(messages) if m is shown), len(messages))
    for i, message in enumerate(messages[:index]):
        if not message.injected and not message.dropped:
            session.receive(i, message.from_client, message.content)
    from_client = getattr(shown, "from_client", True)
    session.receive(index, from_client, data)
    findings = fixed = None
    if recorded is not None:
        findings = [f for f in recorded.findings if f.message_index == index]
        in_message = recorded.fixed_message(index)
        fixed = in_message.fixes_text() if in_message is not None else None
    return render_message(session, index, from_client, findings, fixed)


def _known_rule(value: str) -> str:
    if value not in RULES:
        raise ValueError(value)
    return value


def mcp_view(flow: http.HTTPFlow, is_request: bool, data: bytes, content_type: str) -> str | None:
    """The text for an MCP request or answer; None when the flow is no MCP. Read afresh,
    without the session's earlier listings: its record, if any, has what the addon found."""
    request = flow.request
    body = data if is_request else (flows.content(request) or b"")
    messages = is_mcp_request(body)
    if messages is None:
        return None
    recorded = flows.record(flow)
    if recorded is not None and recorded.api != "mcp":
        recorded = None
    if recorded is not None and recorded.rule in RULES:
        rule = recorded.rule
    else:
        rule = _option("toolnames_mcp_rule", _known_rule, "openai")
    exchange = McpExchange(
        McpState(),
        flows.host(request),
        flows.header(request, b"mcp-session-id"),
        rule,
        method_header=flows.header(request, b"mcp-method"),
        name_header=flows.header(request, b"mcp-name"),
    )
    exchange.check_request(messages, body)
    if not is_request:
        status = flow.response.status_code if flow.response else None
        exchange.check_answer(status, content_type, data)
    return render_mcp(exchange, "request" if is_request else "answer", data, content_type, recorded)


def _message_of(metadata) -> tuple[http.HTTPFlow, bool] | None:
    """The HTTP flow a message belongs to, and whether it is the request."""
    flow = getattr(metadata, "flow", None)
    message = getattr(metadata, "http_message", None)
    if not isinstance(flow, http.HTTPFlow) or message is None:
        return None
    return flow, message is flow.request


class ToolnamesView(_Base):
    """Tables of the tools offered, the tool choice, the calls in history and in the
    response, and the findings and fixes, for every wire format toolnames reads."""

    name = VIEW_NAME

    def prettify(self, data: bytes, metadata) -> str:
        shown = getattr(metadata, "websocket_message", None)
        if shown is not None and isinstance(getattr(metadata, "flow", None), http.HTTPFlow):
            return session_view(metadata.flow, shown, data) or NOT_LLM
        message = _message_of(metadata)
        found = exchange_of(message[0]) if message else None
        if found is None:
            content_type = getattr(metadata, "content_type", None) or ""
            text = mcp_view(message[0], message[1], data, content_type) if message else None
            return text or NOT_LLM
        (flow, is_request), (exchange, recorded) = message, found
        # As recorded (a saved flow's headers may be redacted), else as its headers tell.
        client = recorded.client if recorded and recorded.client else flows.client(flow.request)
        if is_request:
            exchange.check_request(data)
            return render_request(exchange, recorded, client)
        # The answer is judged against the request as the addon read it.
        max_body = _option("toolnames_max_body", human.parse_size, 0) or 0
        content, problem = flows.request_content(flow.request, max_body)
        exchange.check_request(content, problem=problem)
        status = flow.response.status_code if flow.response else None
        exchange.check_response(status, getattr(metadata, "content_type", None) or "", data)
        return render_response(exchange, status, recorded, client)

    def render_priority(self, data: bytes, metadata) -> float:
        # Called for every message mitmweb or the console shows: cheap for anything that
        # is not an LLM API call, and never raising.
        try:
            if getattr(metadata, "websocket_message", None) is not None:
                flow = getattr(metadata, "flow", None)
                if (
                    not isinstance(flow, http.HTTPFlow)
                    or detect_protocol(flow.request.path) is None
                ):
                    return -1
                return PREFERRED if any(key in data for key in _SESSION_KEYS) else 0
            message = _message_of(metadata)
            if message is None:
                return -1
            flow, is_request = message
            fmt = format_for(flow.request.method, flow.request.path)
            if fmt is None:
                # MCP, by content: a byte search settles nearly every other message.
                body = data if is_request else flow.request.raw_content or b""
                if b'"jsonrpc"' in body and is_mcp_request(flows.content(flow.request) or b""):
                    return PREFERRED
                return -1
            if is_request:
                # A scan, not a parse: this runs each time a message is shown, and an
                # agent's request can be megabytes of history.
                return PREFERRED if has_tool_keys(data, fmt) else 0
            recorded = flows.record(flow)
            flagged = recorded is not None and any(
                CATALOGUE.get(f.code, None) is not None and CATALOGUE[f.code].side == "response"
                for f in recorded.findings
            )
            return PREFERRED if flagged else 0
        except Exception:  # noqa: BLE001
            # A view that raises here is logged with a traceback on every message shown.
            logger.debug("toolnames view: render_priority failed", exc_info=True)
            return -1


def available() -> bool:
    return _Base is not object


def register() -> None:
    """Add the view to mitmproxy's content views (mitmproxy 12); on 11, say once that it is missing."""
    global _said_unavailable
    if not available():
        if not _said_unavailable:
            _said_unavailable = True
            logger.info(
                "toolnames: the toolnames content view needs mitmproxy 12 or later "
                "(this is mitmproxy %s); checks, markers and comments work without it.",
                version.VERSION,
            )
        return
    registry = getattr(contentviews, "registry", None)
    if registry is not None and isinstance(registry.get(VIEW_NAME), ToolnamesView):
        return  # loaded again (a second instance, or a script reload): already there
    contentviews.add(ToolnamesView)
