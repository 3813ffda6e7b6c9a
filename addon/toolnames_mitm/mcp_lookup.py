"""toolnames' own ``tools/list`` to an MCP server, sent when a client calls an alias that
toolnames has no listing to send back for (the core's ``lookup.py`` says when, what to send
and what the answer says).

It goes the way the call would: a copy of the call's flow, its body a ``tools/list`` and
its headers the call's (the session, the credentials: in memory only, as the call's are),
through mitmproxy's own client replay (``ReplayHandler``), so the upstream mode, TLS and
HTTP version are mitmproxy's. The flow shows in mitmweb with a comment saying why; toolnames
neither checks, logs nor saves it. Every page is asked within ``LOOKUP_TIMEOUT`` seconds in all,
after which the call goes on as it came and its record says so.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from dataclasses import field

from mitmproxy import ctx
from mitmproxy import http

try:
    # Client replay's handler: not a documented API, but the same (flow, options) in
    # mitmproxy 11.0 and 12, and it sends the way mitmproxy does (upstream mode, TLS,
    # HTTP version). A mitmproxy without it makes every lookup say why, not the addon fail.
    from mitmproxy.addons.clientplayback import ReplayHandler
except ImportError:  # pragma: no cover (a future mitmproxy)
    ReplayHandler = None

from toolnames_core import LOOKUP_MAX_PAGES
from toolnames_core import LOOKUP_TIMEOUT
from toolnames_core import ListingPage
from toolnames_core import is_stream
from toolnames_core import lookup_request
from toolnames_core import quote_name
from toolnames_core import read_lookup_answer
from toolnames_mitm import flows

__all__ = ["LOOKUP_META", "Lookups", "is_lookup"]

# The flow metadata key that marks toolnames' own tools/list flows.
LOOKUP_META = "toolnames_mcp_lookup"
# Headers of the call that describe its own body, or its own tool: not the lookup's.
_BODY_HEADERS = ("content-length", "content-encoding", "transfer-encoding", "expect", "mcp-name")


def is_lookup(flow: http.HTTPFlow) -> bool:
    """Whether ``flow`` is toolnames' own tools/list."""
    return LOOKUP_META in flow.metadata


@dataclass
class _Waiting:
    """One page asked: its answer as it arrives."""

    page: int
    answer: asyncio.Future
    status: int | None = None
    content_type: str = ""
    body: bytearray = field(default_factory=bytearray)
    limit: int = 0

    def settle(self, result: ListingPage | str) -> None:
        if not self.answer.done():
            self.answer.set_result(result)

    def read(self, chunk: bytes) -> bytes:
        """The answer's stream tap: the answer is read as it comes, so a server that keeps
        its event stream open after answering does not hold the call."""
        if self.answer.done():
            return b""
        if chunk:
            self.body += chunk
            if self.limit and len(self.body) > self.limit:
                self.settle(f"the server's answer is over {self.limit} bytes")
                return b""
            if "text/event-stream" not in self.content_type.lower():
                return b""
        found = read_lookup_answer(self.page, self.status, self.content_type, bytes(self.body))
        if found is not None:
            self.settle(found)
        elif not chunk:
            self.settle("the server's answer holds no answer to toolnames' tools/list")
        return b""


class Lookups:
    """toolnames' tools/list flows under way, by flow id."""

    def __init__(self) -> None:
        self.waiting: dict[str, _Waiting] = {}
        # One lookup at a time per MCP session: calls arriving meanwhile wait for it.
        self.running: dict[tuple[str, str], asyncio.Task] = {}

    async def listing(
        self, call: http.HTTPFlow, key: tuple[str, str], params: object, names: list[str]
    ) -> list[str] | str:
        """The server's whole listing, asked as the call was sent; or why not."""
        task = self.running.get(key)
        if task is None:
            task = asyncio.ensure_future(self._listing(call, params, names))
            self.running[key] = task
            task.add_done_callback(lambda _: self.running.pop(key, None))
        return await asyncio.shield(task)

    async def _listing(
        self, call: http.HTTPFlow, params: object, names: list[str]
    ) -> list[str] | str:
        deadline = time.monotonic() + LOOKUP_TIMEOUT
        listed: list[str] = []
        cursors: set[str] = set()
        cursor = None
        for page in range(LOOKUP_MAX_PAGES):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            found = await self._page(call, page, cursor, params, names, left)
            if isinstance(found, str):
                return found
            listed += found.names
            if found.cursor is None:
                return listed
            if found.cursor in cursors:
                return f"the server's listing repeats its cursor {found.cursor!r}"
            cursors.add(found.cursor)
            cursor = found.cursor
        else:
            return f"the server's listing goes on past {LOOKUP_MAX_PAGES} pages"
        return f"the server did not list its tools within {LOOKUP_TIMEOUT:g} s"

    async def _page(
        self,
        call: http.HTTPFlow,
        page: int,
        cursor: str | None,
        params: object,
        names: list[str],
        timeout: float,
    ) -> ListingPage | str:
        if ReplayHandler is None:  # pragma: no cover (a future mitmproxy)
            return "this mitmproxy has no client replay for toolnames to ask the server with"
        flow = _lookup_flow(call, lookup_request(page, cursor, params), names)
        waiting = _Waiting(page, asyncio.get_running_loop().create_future())
        self.waiting[flow.id] = waiting
        handler = ReplayHandler(flow, ctx.options)
        replay = asyncio.ensure_future(handler.replay())
        try:
            await asyncio.wait(
                {replay, waiting.answer}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            self.waiting.pop(flow.id, None)
            if not replay.done():
                # An answer that keeps streaming, or none in time: its connection goes.
                for transport in getattr(handler, "transports", {}).values():
                    if getattr(transport, "handler", None) is not None:
                        transport.handler.cancel()
                replay.cancel()
        if waiting.answer.done():
            return waiting.answer.result()
        if flow.error is not None:
            return f"the server could not be reached: {flow.error.msg}"
        if replay.done():
            if flow.response is not None and flow.response.raw_content is not None:
                waiting.status = flow.response.status_code
                waiting.content_type = flows.header(flow.response, b"content-type")
                found = read_lookup_answer(
                    page, waiting.status, waiting.content_type, flows.content(flow.response) or b""
                )
                if found is not None:
                    return found
            return "the server gave no answer to toolnames' tools/list"
        return f"the server did not list its tools within {LOOKUP_TIMEOUT:g} s"

    # -- the hooks, for toolnames' own flows ---------------------------------------------

    def responseheaders(self, flow: http.HTTPFlow, limit: int) -> None:
        waiting = self.waiting.get(flow.id)
        response = flow.response
        if waiting is None or response is None:
            return
        waiting.status = response.status_code
        waiting.content_type = flows.header(response, b"content-type")
        waiting.limit = limit
        if not 200 <= response.status_code < 300 or response.status_code == 202:
            waiting.settle(read_lookup_answer(waiting.page, waiting.status, "", b"") or "")
        elif is_stream(waiting.content_type):
            response.stream = waiting.read

    def response(self, flow: http.HTTPFlow) -> None:
        waiting = self.waiting.get(flow.id)
        if waiting is None or flow.response is None:
            return
        if callable(flow.response.stream):
            waiting.read(b"")
            return
        waiting.status = flow.response.status_code
        waiting.content_type = flows.header(flow.response, b"content-type")
        content = flows.content(flow.response)
        if content is None:
            waiting.settle("the server's answer could not be decoded")
            return
        found = read_lookup_answer(waiting.page, waiting.status, waiting.content_type, content)
        waiting.settle(found or "the server's answer holds no answer to toolnames' tools/list")

    def error(self, flow: http.HTTPFlow) -> None:
        waiting = self.waiting.get(flow.id)
        if waiting is not None:
            why = flow.error.msg if flow.error is not None else "the connection failed"
            waiting.settle(f"the server could not be reached: {why}")


def _lookup_flow(call: http.HTTPFlow, body: bytes, names: list[str]) -> http.HTTPFlow:
    """A copy of the call's flow that asks for the server's tools instead."""
    flow = call.copy()
    flow.metadata = {LOOKUP_META: True}
    flow.comment = (
        "toolnames: asked the MCP server for its tools, to send "
        f"{', '.join(quote_name(n) for n in names)} back under the server's own name"
    )
    flow.marked = ""
    flow.response = None
    flow.error = None
    flow.is_replay = "request"
    request = flow.request
    for name in _BODY_HEADERS:
        request.headers.pop(name, None)
    if "mcp-method" in request.headers:
        request.headers["mcp-method"] = "tools/list"
    request.headers["content-type"] = "application/json"
    request.headers.setdefault("accept", "application/json, text/event-stream")
    request.headers["accept-encoding"] = "identity"
    request.content = body
    return flow
