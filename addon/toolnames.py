"""
Catch tool-name mistakes in LLM API traffic as it happens.

Checks every LLM API request's tools, tool choice and history against the name
rule of the provider that receives it; marks, comments and logs what is wrong;
can fix a mismatched named choice or block a doomed request; saves flagged flows
with credentials removed.

Usage:

    mitmdump --listen-host 127.0.0.1 -s addon/toolnames.py
    mitmdump --listen-host 127.0.0.1 -s addon/toolnames.py --set toolnames_mode=fix
    mitmdump --listen-host 127.0.0.1 -s addon/toolnames.py --set toolnames_mode=block --set toolnames_save=flagged.mitm
    mitmdump --listen-host 127.0.0.1 -s addon/toolnames.py --set toolnames_rule='openrouter.ai=anthropic'
    mitmdump -nr flagged.mitm -s addon/toolnames.py

Bind to loopback, as above: mitmproxy listens on every interface by default, and this
proxy carries API keys.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence

import mitmproxy.types
from mitmproxy import command
from mitmproxy import ctx
from mitmproxy import exceptions
from mitmproxy import flow
from mitmproxy import flowfilter
from mitmproxy import hooks
from mitmproxy import http

from toolnames_core import READERS
from toolnames_core import Exchange
from toolnames_core import FlowRecord
from toolnames_core import Reader
from toolnames_core import RuleOverride
from toolnames_core import StreamTap
from toolnames_core import choose_rule
from toolnames_core import detect_api
from toolnames_core import is_stream
from toolnames_core import nothing_to_check
from toolnames_core.sessions import PROTOCOLS
from toolnames_core.sessions import Session
from toolnames_core.sessions import detect_protocol
from toolnames_mitm import flows
from toolnames_mitm import options
from toolnames_mitm import report
from toolnames_mitm import save
from toolnames_mitm import sessions
from toolnames_mitm import view
from toolnames_mitm.deferral import Deferral
from toolnames_mitm.deferral import Pending

logger = logging.getLogger(__name__)

# toolnames.report without a path only logs.
NO_PATH = mitmproxy.types.Path("")
# Why a live answer's calls went unchecked: mitmproxy streamed it through (stream_large_bodies,
# or another addon's stream) without toolnames' tap, and keeps no streamed body by default.
STREAMED_UNREAD = (
    "the answer was streamed through without toolnames reading it "
    "(stream_large_bodies or another addon)"
)


def reader_line(reader: Reader) -> str:
    """The start-up line that says how bodies are read."""
    line = f"toolnames: reading bodies with {reader.description}"
    if len(READERS) == 1:
        line += (
            "; for a faster reader add msgspec to mitmproxy's environment (pipx inject mitmproxy "
            "msgspec, or uv tool install mitmproxy --with msgspec)"
        )
    return line


class ToolNames:
    def __init__(self) -> None:
        self.overrides: tuple[RuleOverride, ...] = ()
        self.filter: flowfilter.TFilter | None = None
        self.max_body: int = 0
        self.mode: str = "observe"
        self.reader: Reader = READERS[0]
        self.writer: save.FlaggedFlowWriter | None = None
        # Each LLM API flow's exchange until its answer is judged; None after that.
        self.exchanges: weakref.WeakKeyDictionary[http.HTTPFlow, Exchange | None] = (
            weakref.WeakKeyDictionary()
        )
        # Flows read back from a file with a toolnames record: shown as recorded, not checked.
        self.read_back: weakref.WeakKeyDictionary[http.HTTPFlow, FlowRecord | None] = (
            weakref.WeakKeyDictionary()
        )
        # Each live LLM API WebSocket's session, from websocket_start to websocket_end.
        self.sessions: weakref.WeakKeyDictionary[http.HTTPFlow, Session] = (
            weakref.WeakKeyDictionary()
        )
        self.deferral = Deferral(self._check_pending, self._redraw)
        # Bad option values found while loading, and whether one keeps the addon off.
        self.unparsable: list[str] = []
        self.loading = False
        self.off = False

    def load(self, loader):
        view.register()
        options.declare(loader)
        # A value mitmproxy cannot parse would unload this script without a word: see options.py.
        self.unparsable = options.withdraw_unparsable(loader.master.options)
        self.loading = True

    def configure(self, updated):
        # The configure that follows loading gets every option. A bad value there raised as an
        # OptionsError would come out as a traceback, with the addon loaded half configured:
        # it is told in one line instead, and the addon stays off until it is fixed (at
        # startup, mitmproxy exits on the error).
        first, self.loading = self.loading, False
        try:
            if first and self.unparsable:
                raise exceptions.OptionsError("\n".join(self.unparsable))
            names = options.NAMES if first or self.off else updated
            self._apply(options.read(ctx.options, names))
        except exceptions.OptionsError as e:
            if not first:
                raise  # a change while running: mitmproxy rolls it back and shows the line
            self.off = True
            for line in str(e).splitlines():
                logger.error(line)
            return
        self.off = False

    def _apply(self, parsed: dict) -> None:
        if options.MODE.name in parsed:
            self.mode = parsed[options.MODE.name]
        if options.RULE.name in parsed:
            self.overrides = parsed[options.RULE.name]
        if options.FILTER.name in parsed:
            self.filter = parsed[options.FILTER.name]
        if options.MAX_BODY.name in parsed:
            self.max_body = parsed[options.MAX_BODY.name]
        if options.READER.name in parsed:
            self.reader = parsed[options.READER.name]
            # Said once at start-up (and again if the option changes): which reader runs.
            logger.info(reader_line(self.reader))
        if options.SAVE.name in parsed:
            self._close_writer()
            path = parsed[options.SAVE.name]
            if path is not None:
                try:
                    self.writer = save.FlaggedFlowWriter(path)
                except OSError as e:
                    problem = options.Invalid(f"cannot be opened ({e.strerror})", str(path))
                    raise exceptions.OptionsError(
                        options.bad_value(options.SAVE, problem)
                    ) from None

    @command.command("toolnames.report")
    def report(self, flows: Sequence[flow.Flow], path: mitmproxy.types.Path = NO_PATH) -> None:
        """
        Summarize the toolnames findings of flows: counts by finding code and by host,
        logged as an alert. With a path, also write the summary there as JSON.
        """
        for f in flows:
            self.deferral.run_now(f.id)  # flows still in flight count as checked
        report.run(flows, path)

    def done(self):
        # Unloaded (mitmproxy reloads a script when it changes) with requests in flight:
        # check them now, or their findings are lost.
        self.deferral.run_all()
        self._close_writer()

    def _close_writer(self) -> None:
        if self.writer:
            self.writer.close()
            self.writer = None

    def _api(self, flow: http.HTTPFlow) -> str | None:
        if self.off:
            return None
        api = detect_api(flow.request.method, flow.request.path)
        if api is None or (self.filter and not self.filter(flow)):
            return None
        return api

    # -- the request -------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> None:
        api = self._api(flow)
        if api is None:
            return
        if not self._read_back(flow):
            self._start(flow, api)

    def _read_back(self, flow: http.HTTPFlow) -> bool:
        """A saved flow or session read back is shown as the live run recorded it (fixes and
        blocks included), never checked again; True if ``flow`` is one."""
        if flow.live or flows.META_KEY not in flow.metadata:
            return False
        recorded = self.read_back[flow] = flows.record(flow)
        if recorded is not None:
            self._log(flow, flows.show(flow, recorded))
        return True

    def _start(self, flow: http.HTTPFlow, api: str) -> Exchange:
        """The flow's exchange, its request checked now or, in observe mode, deferred."""
        host = flows.host(flow.request)
        exchange = self.exchanges[flow] = Exchange(
            api, choose_rule(api, host, self.overrides, flow.request.port), host, self.reader
        )
        content, problem = flows.request_content(flow.request, self.max_body)
        if not problem and nothing_to_check(content):
            exchange.request_without_tools()  # most requests: settled by a scan, never parsed
            return exchange
        # Only traffic that is still on its way can be changed.
        mutable = flow.live and flow.response is None and flow.error is None
        if self.mode == "observe" and mutable:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None  # outside mitmproxy (scripts, tests): check it now
            if loop is not None:
                # Observe mode holds nothing back: see toolnames_mitm/deferral.py.
                self.deferral.add(loop, flow, exchange, content, problem)
                return exchange
        self._check_request(flow, exchange, content, problem, self.mode, mutable)
        return exchange

    def _check_pending(self, pending: Pending) -> None:
        self._check_request(
            pending.flow, pending.exchange, pending.content, pending.problem, "observe", False
        )

    def _redraw(self, swept: list[http.HTTPFlow]) -> None:
        flagged = [f for f in swept if flows.META_KEY in f.metadata]
        if flagged:
            # The flows changed outside their own hooks: tell mitmweb and the console.
            ctx.master.addons.trigger(hooks.UpdateHook(flagged))

    def _check_request(
        self,
        flow: http.HTTPFlow,
        exchange: Exchange,
        content: bytes,
        problem: str | None,
        mode: str,
        mutable: bool,
    ) -> None:
        exchange.check_request(
            content, problem=problem, fix=mode == "fix" and mutable, scanned=True
        )
        if exchange.new_body is not None:
            flow.request.content = exchange.new_body
            # The answer's names go back to the app: it must come uncompressed (exchange.py).
            accept = exchange.answer_encoding(flow.request.headers.get("accept-encoding", ""))
            if accept is not None:
                flow.request.headers["accept-encoding"] = accept
        elif mode == "block" and mutable and exchange.errors:
            status, headers, body = exchange.block_response()
            flow.response = http.Response.make(status, body, headers)
        if exchange.request_findings or exchange.fixes:
            recorded = FlowRecord.of(exchange, mode, flows.client(flow.request))
            comment = flows.mark(flow, recorded)
            if not flow.live and flow.response is None and flow.error is None:
                # A recorded request without an answer never completes: log it now.
                self._log(flow, comment)

    # -- the answer --------------------------------------------------------------------

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        # Streaming is decided here, before mitmproxy starts buffering the body: a
        # streamed answer keeps streaming, and the tap reads copies of its chunks.
        response = flow.response
        if not flow.live or response is None or callable(response.stream):
            return
        if not is_stream(flows.header(response, b"content-type")):
            return  # a whole body is read once the flow completes
        exchange = self.exchanges.get(flow)
        encoding = flows.header(response, b"content-encoding")
        tap = exchange.stream_tap(encoding) if exchange is not None else None
        if tap is not None:
            response.stream = tap

    def response(self, flow: http.HTTPFlow) -> None:
        self._complete(flow, complete=True)

    def error(self, flow: http.HTTPFlow) -> None:
        # A stream that broke off: check what was seen, and claim nothing about the rest.
        self._complete(flow, complete=False)

    def _complete(self, flow: http.HTTPFlow, complete: bool) -> None:
        """The flow is done: check its answer, log it once, save it if flagged."""
        self.deferral.run_now(flow.id)
        if flow in self.read_back:
            # Its line was logged when its request was shown.
            self._save(flow, self.read_back.pop(flow))
            return
        if flow in self.exchanges:
            exchange = self.exchanges[flow]
            if exchange is None:
                return  # both hooks ran: the answer was judged by the first
        else:
            api = self._api(flow)
            if api is None:
                return
            # Its request went by before this addon was loaded: read it now.
            exchange = self._start(flow, api)
            self.deferral.run_now(flow.id)
        response = flow.response
        status = response.status_code if response is not None else None
        if response is not None and isinstance(response.stream, StreamTap):
            exchange.check_stream(status, response.stream, complete)
        elif response is not None and response.raw_content is not None:
            content = flows.content(response) or b""
            # Fix mode's aliases go back to the app's names before the client sees them.
            restored = exchange.restore(content) if flow.live else None
            if restored is not None:
                response.content = restored
            content_type = flows.header(response, b"content-type")
            exchange.check_response(status, content_type, content, complete)
        else:
            exchange.response_unread(status, STREAMED_UNREAD)
        recorded = None
        if exchange.findings or exchange.fixes:
            recorded = FlowRecord.of(exchange, self.mode, flows.client(flow.request))
            self._log(flow, flows.mark(flow, recorded))
        self._save(flow, recorded)
        # Judged, and its record is on the flow: what the exchange read goes now, not when
        # the garbage collector gets to the flow (mitmproxy's flows sit in reference cycles,
        # and a long conversation's view holds thousands of names).
        self.exchanges[flow] = None

    # -- WebSocket sessions (OpenAI Realtime, Gemini Live) --------------------------------

    def websocket_start(self, flow: http.HTTPFlow) -> None:
        protocol = None if self.off else detect_protocol(flow.request.path)
        if protocol is None or (self.filter and not self.filter(flow)):
            return
        if self._read_back(flow):
            return
        host = flows.host(flow.request)
        rule = choose_rule(PROTOCOLS[protocol].rule_api, host, self.overrides, flow.request.port)
        # Only a live connection can be changed: a session read from a file is observed.
        mode = self.mode if flow.live else "observe"
        self.sessions[flow] = Session(protocol, rule, host, mode)

    def websocket_message(self, flow: http.HTTPFlow) -> None:
        session = self.sessions.get(flow)
        if session is None or flow.websocket is None:
            return
        index = len(flow.websocket.messages) - 1
        message = flow.websocket.messages[index]
        if message.injected:
            return  # toolnames' own error event, or another addon's message
        outcome = session.receive(index, message.from_client, message.content)
        if outcome.block is not None:
            message.drop()
            sessions.answer(flow, outcome.block)
        elif outcome.content is not None:
            message.content = outcome.content
        changed = outcome.block is not None or outcome.content is not None
        if outcome.findings or changed:
            recorded = FlowRecord.of_session(session, self.mode, flows.client(flow.request))
            flows.mark(flow, recorded)
            side = "client" if message.from_client else "server"
            for finding in outcome.findings:
                self._log(
                    flow,
                    f"message {index} ({side}): toolnames {finding.severity}: {finding.code}: {finding.message}",
                )
            if session.fixes and session.fixes[-1].message_index == index:
                self._log(
                    flow, f"message {index} ({side}): toolnames fixed {recorded.fixes_text()}"
                )

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        if flow in self.read_back:
            self._save(flow, self.read_back.pop(flow))
            return
        session = self.sessions.pop(flow, None)
        if session is None:
            return
        recorded = None
        if session.findings or session.fixes:
            recorded = FlowRecord.of_session(session, self.mode, flows.client(flow.request))
            flows.mark(flow, recorded)
        self._save(flow, recorded)

    def _log(self, flow: http.HTTPFlow, comment: str | None) -> None:
        if comment:
            request = flow.request
            # The path without secrets: Gemini's API key travels in the query string.
            path = save.redacted_path(request.path)
            logger.warning("%s %s%s: %s", request.method, flows.host(request), path, comment)

    def _save(self, flow: http.HTTPFlow, recorded: FlowRecord | None) -> None:
        if self.writer is None or recorded is None or not recorded.flagged or recorded.saved:
            return
        saved = save.redacted_copy(flow) if ctx.options.toolnames_redact else flow
        self.writer.add(saved)
        recorded.saved = True
        flow.metadata[flows.META_KEY] = recorded.to_metadata()


addons = [ToolNames()]
