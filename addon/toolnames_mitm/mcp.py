"""The MCP side of toolnames: the hooks that find MCP traffic by its content (a JSON-RPC 2.0
body with an MCP method) among the flows the LLM API hooks leave, and hand each request and
its answer to the core's ``McpExchange``. It shares ToolNames' options, store, log line and
saving; what it remembers between flows (each session's listed names) is the core's
``McpState``, one per proxy."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable

from mitmproxy import http

from toolnames_core import Finding
from toolnames_core import Fix
from toolnames_core import McpExchange
from toolnames_core import McpState
from toolnames_core import McpStream
from toolnames_core import endpoint_session
from toolnames_core import is_mcp_request
from toolnames_core import is_stream
from toolnames_core import mcp_server
from toolnames_core import quote_name
from toolnames_mitm import flows
from toolnames_mitm import signing
from toolnames_mitm.addon import ToolNames
from toolnames_mitm.flows import Tracked
from toolnames_mitm.mcp_lookup import Lookups
from toolnames_mitm.mcp_lookup import is_lookup

__all__ = ["McpTraffic", "server_of"]


def server_of(request: http.Request) -> str:
    """The MCP server a request goes to, as host:port and path (its sessions and names are
    its own: a gateway serves several MCP servers on one host)."""
    return mcp_server(f"{flows.host(request)}:{request.port}", request.path)


class McpTraffic:
    def __init__(self, tool_names: ToolNames) -> None:
        self.tool_names = tool_names
        self.state = McpState()
        # toolnames' own tools/list flows, sent to restore aliases (mcp_lookup.py).
        self.lookups = Lookups()

    def _may_fix(
        self, flow: http.HTTPFlow, exchange: McpExchange, live: bool
    ) -> tuple[bool, signing.Permission | None]:
        """Whether fix mode may change this flow (and its answer: aliases listed to a client
        whose calls are signed could not be sent back under the server's names). A request
        signed with AWS SigV4 only with the credentials to sign it again (signing.py); else
        the exchange is left as it came, and its record says why."""
        if self.tool_names.mode != "fix" or not live:
            return False, None
        signed = exchange.signed = signing.signed_by(flow.request)
        if signed is None:
            return True, None
        permission = signing.permission(flow.request, signed, self.tool_names.resign)
        exchange.signed_declined = permission.refusal
        return permission.refusal is None, permission

    def _exchange(self, request: http.Request) -> McpExchange:
        # Streamable HTTP names the session in a header; HTTP+SSE in the endpoint's query.
        session_id = flows.header(request, b"mcp-session-id") or endpoint_session(request.path)
        return McpExchange(
            self.state,
            server_of(request),
            session_id,
            self.tool_names.mcp_rule,
            method_header=flows.header(request, b"mcp-method"),
            name_header=flows.header(request, b"mcp-name"),
        )

    # -- the request ---------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        """Judge (and in fix mode change) an MCP request; an awaitable, which mitmproxy
        awaits, when a call of an alias waits for the server's listing (mcp_lookup.py)."""
        names = self.tool_names
        if names.off or flow in names.tracked or flow.websocket is not None or is_lookup(flow):
            return None
        request = flow.request
        if request.method == "DELETE":
            # The client ends its session: the names it listed go.
            session_id = flows.header(request, b"mcp-session-id")
            if session_id and flow.live:
                self.state.end((server_of(request), session_id))
            return None
        if request.method == "GET":
            # The Streamable HTTP GET stream: server messages, read as they come. (An
            # HTTP+SSE stream carries no session header: its first event tells, _sniff.)
            stream = flows.header(request, b"mcp-session-id") and names.watches(flow)
            if stream and not names.shown_as_read_back(flow):
                names.tracked[flow] = Tracked(mcp=self._exchange(request))
            return None
        if request.method != "POST" or request.raw_content is None:
            return None
        content, problem = flows.request_content(request, names.max_body)
        if problem is not None:
            return None  # no body at hand to tell MCP by: nothing is claimed about it
        messages = is_mcp_request(content)
        if messages is None or not names.watches(flow) or names.shown_as_read_back(flow):
            return None
        exchange = self._exchange(request)
        live = flows.mutable(flow)
        fix, permission = self._may_fix(flow, exchange, live)
        wanted = exchange.to_restore(messages) if fix else []
        if wanted:
            return self._restore(flow, exchange, messages, content, permission, wanted)
        self._check_request(flow, exchange, messages, content, fix, permission)
        return None

    async def _restore(
        self,
        flow: http.HTTPFlow,
        exchange: McpExchange,
        messages: list,
        content: bytes,
        permission: signing.Permission | None,
        wanted: list[str],
    ) -> None:
        """Calls of names in the form of an alias, with no listing of this server to send
        them back by: the server is asked for its tools first (the call waits, at most
        LOOKUP_TIMEOUT seconds), and what it lists is aliased as a listing would be."""
        request = flow.request
        if not flows.header(request, b"mcp-session-id") and endpoint_session(request.path):
            found: list[str] | str = (
                "on the HTTP+SSE transport the server answers on the client's own event "
                "stream, where toolnames' question would reach the client"
            )
        else:
            params = next(m.value.get("params") for m in messages if m.method == "tools/call")
            found = await self.lookups.listing(flow, exchange.key, params, wanted)
            if isinstance(found, str):
                found = f"toolnames asked the server for its tools/list, and {found}"
        if isinstance(found, str):
            for name in wanted:
                exchange.not_restored(name, found)
        else:
            exchange.learn_listing(found)
            for name in wanted:
                if self.state.original(exchange.server, name) is None and name not in found:
                    exchange.not_restored(
                        name, "no tool the server lists (toolnames asked it) has this alias"
                    )
        self._check_request(flow, exchange, messages, content, True, permission)

    def _check_request(
        self,
        flow: http.HTTPFlow,
        exchange: McpExchange,
        messages: list,
        content: bytes,
        fix: bool,
        permission: signing.Permission | None,
    ) -> None:
        names = self.tool_names
        request = flow.request
        exchange.check_request(messages, content, fix=fix)
        names.tracked[flow] = Tracked(mcp=exchange)
        changed = False
        if exchange.new_body is not None:
            request.content = exchange.new_body
            changed = True
        if exchange.new_name_header is not None:
            request.headers["mcp-name"] = exchange.new_name_header
            changed = True
        accept = exchange.answer_encoding(flows.header(request, b"accept-encoding"))
        if accept is not None:
            request.headers["accept-encoding"] = accept
            changed = True
        if changed and exchange.signed is not None:
            # _may_fix let a signed request be changed only with the client's credentials.
            signing.resign(request, exchange.signed, permission.credentials)
            exchange.resigned = True
        if exchange.request_findings or exchange.fixes:
            comment = flows.mark(flow, flows.recorded(flow, exchange, names.mode))
            if not flow.live and flow.response is None and flow.error is None:
                names.log(flow, comment)  # a recorded request without an answer

    # -- the answer ----------------------------------------------------------------------

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if is_lookup(flow):
            self.lookups.responseheaders(flow, self.tool_names.max_body)
            return
        response = flow.response
        tracked = self.tool_names.tracked.get(flow)
        exchange = tracked.mcp if tracked is not None else None
        if exchange is None and tracked is None:
            self._sniff(flow)
            return
        if exchange is None or not flow.live or response is None or callable(response.stream):
            return
        exchange.check_status(response.status_code)
        if not is_stream(flows.header(response, b"content-type")):
            return  # a whole body is read once the flow completes
        coding = flows.header(response, b"content-encoding")
        # Server messages and answers as they come: a GET stream never ends on its own,
        # so it is never held whole.
        tap = exchange.stream(exchange.fixing, content_encoding=coding)
        if tap is None:
            # No decoder for it (several codings, an unknown one): it goes on untouched.
            exchange.answer_unread(f"the SSE answer came compressed with {coding}")
            return
        response.stream = tap.pieces
        if flow.request.method == "GET":
            tap.on_event = self._passing(flow, exchange)
        if tap.decodes:
            # Names are spliced in the decoded stream, which goes on uncompressed.
            del response.headers["content-encoding"]
        length = flows.header(response, b"content-length")
        if exchange.fixing and length:
            exchange.length_dropped = length
            flows.unsized(flow)

    def _sniff(self, flow: http.HTTPFlow) -> None:
        """A GET answered with an event stream, which toolnames has not placed: the older
        HTTP+SSE transport's stream, where the answers to a session's POSTs arrive, starts so
        (its first event names the session), but so do other streams. It is streamed through
        a tap that reads its first event and keeps reading only an MCP stream; either way the
        stream goes on as it comes (mitmproxy would otherwise hold it until it ends)."""
        names = self.tool_names
        request, response = flow.request, flow.response
        if names.off or not flow.live or response is None or callable(response.stream):
            return
        if request.method != "GET" or flow.websocket is not None:
            return
        if not is_stream(flows.header(response, b"content-type")):
            return
        if not names.watches(flow):
            return
        exchange = self._exchange(request)
        exchange.fixing = self._may_fix(flow, exchange, flow.live)[0]
        coding = flows.header(response, b"content-encoding")
        tap = exchange.stream(exchange.fixing, sniff=True, content_encoding=coding)
        if tap is None:
            return  # a coding nothing here decodes: no stream toolnames can tell is MCP
        names.tracked[flow] = Tracked(mcp=exchange)
        tap.on_event = self._passing(flow, exchange)
        response.stream = tap.pieces

    def _passing(
        self, flow: http.HTTPFlow, exchange: McpExchange
    ) -> Callable[[int, list[Finding], list[Fix]], None]:
        """What a GET stream's event brought, said as it passes: the flow marked and
        commented with the record so far, a log line for each finding and one for the
        aliases listed (the stream lasts as long as its session; it is saved when it ends)."""
        names = self.tool_names

        def passed(index: int, findings: list[Finding], fixes: list[Fix]) -> None:
            flows.mark(flow, flows.recorded(flow, exchange, names.mode))
            for finding in findings:
                names.log(
                    flow,
                    f"event {index}: toolnames {finding.severity}: {finding.code}: "
                    f"{finding.message}",
                )
            if fixes:
                shown = ", ".join(f"{quote_name(f.old)} → {quote_name(f.new)}" for f in fixes[:3])
                more = f" and {len(fixes) - 3} more" if len(fixes) > 3 else ""
                names.log(flow, f"event {index}: toolnames fixed: listed {shown}{more}")

        return passed

    def response(self, flow: http.HTTPFlow) -> None:
        if is_lookup(flow):
            self.lookups.response(flow)
            return
        self._complete(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        if is_lookup(flow):
            self.lookups.error(flow)
            return
        self._complete(flow)

    def _complete(self, flow: http.HTTPFlow) -> None:
        names = self.tool_names
        tracked = names.tracked.get(flow)
        exchange = tracked.mcp if tracked is not None else None
        if exchange is None:
            return
        tracked.mcp = None
        response = flow.response
        tapped = response is not None and isinstance(
            getattr(response.stream, "__self__", None), McpStream
        )
        request = flow.request
        # An HTTP+SSE session lives as long as its stream: its names go with it. (A
        # Streamable HTTP GET stream, with its session header, may be opened again; DELETE
        # or a 404 ends that session.)
        sse_session = exchange.key[1] and not flows.header(request, b"mcp-session-id")
        if tapped and request.method == "GET" and sse_session and flow.live:
            self.state.end(exchange.key)
        if response is not None and not tapped and response.raw_content is not None:
            content = flows.content(response) or b""
            content_type = flows.header(response, b"content-type")
            fix = exchange.fixing and flow.live
            new = exchange.check_answer(response.status_code, content_type, content, fix)
            if new is not None:
                response.content = new
        recorded = None
        if exchange.findings or exchange.fixes or exchange.fix_skipped:
            recorded = flows.recorded(flow, exchange, names.mode)
            comment = flows.mark(flow, recorded)
            if not (tapped and response.stream.__self__.said):
                names.log(flow, comment)  # else said as it passed (_passing)
        names.save(flow, recorded)
