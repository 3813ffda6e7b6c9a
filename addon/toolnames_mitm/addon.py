"""The HTTP side of toolnames: its options, the request and answer hooks, and the report
command. The WebSocket hooks are their own addon (websockets.py), sharing this one's
options, store, log line and saving."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable
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
from toolnames_core import Signed
from toolnames_core import StreamTap
from toolnames_core import is_stream
from toolnames_core import nothing_to_check
from toolnames_mitm import flows
from toolnames_mitm import options
from toolnames_mitm import report
from toolnames_mitm import save
from toolnames_mitm import signing
from toolnames_mitm import view
from toolnames_mitm.deferral import Deferral
from toolnames_mitm.flows import Incoming
from toolnames_mitm.flows import Pending
from toolnames_mitm.flows import Tracked
from toolnames_mitm.mcp_lookup import is_lookup

__all__ = ["NO_PATH", "STREAMED_UNREAD", "ToolNames", "logger", "reader_line"]

# The log lines are toolnames', whichever module of it writes them.
logger = logging.getLogger("toolnames")

# toolnames.report without a path only logs.
NO_PATH = mitmproxy.types.Path("")
# Why a live answer's calls went unchecked: mitmproxy streamed it through (stream_large_bodies,
# or another addon's stream) without toolnames' tap, and keeps no streamed body by default.
STREAMED_UNREAD = (
    "the answer was streamed through without toolnames reading it "
    "(stream_large_bodies or another addon)"
)
# How many (host, path) pairs of unchecked requests are remembered as already said.
MAX_UNCLAIMED_SAID = 4096


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
        self.resign = False
        # The lines about signed requests already said (signing.breakers): each once.
        self.said: set[str] = set()
        # (host, path) of requests that carried tools to a path no format claims, said once
        # each; bounded, as paths may carry ids (an old one may then be said again).
        self.unclaimed_said: dict[tuple[str, str], None] = {}
        # The rule MCP servers' listed names are held to (toolnames_mcp_rule).
        self.mcp_rule: str = options.MCP_RULE.default
        self.reader: Reader = READERS[0]
        self.writer: save.FlaggedFlowWriter | None = None
        # What toolnames holds for each flow it watches, HTTP and WebSocket alike.
        self.tracked: weakref.WeakKeyDictionary[http.HTTPFlow, Tracked] = (
            weakref.WeakKeyDictionary()
        )
        self.deferral = Deferral(self._check_pending, self._redraw)
        # Bad option values found while loading, and whether one keeps the addon off.
        self.unparsable: list[str] = []
        self.restore_set: Callable[[], None] = lambda: None
        self.loading = False
        self.off = False

    def load(self, loader):
        view.register()
        options.declare(loader)
        # A value mitmproxy cannot parse would unload this script without a word: see options.py.
        self.unparsable = options.withdraw_unparsable(loader.master.options)
        # Once running, `set toolnames_moed fix` is refused with the same line.
        self.restore_set = options.refuse_unknown(loader.master.commands)
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
        if options.MCP_RULE.name in parsed:
            self.mcp_rule = parsed[options.MCP_RULE.name]
        if options.FILTER.name in parsed:
            self.filter = parsed[options.FILTER.name]
        if options.MAX_BODY.name in parsed:
            self.max_body = parsed[options.MAX_BODY.name]
        if options.RESIGN.name in parsed:
            self.resign = parsed[options.RESIGN.name]
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
                except save.UnusableFile as e:
                    problem = options.Invalid(e.reason, str(path))
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
            # Flows still in flight count as checked.
            self.deferral.run_now(self.tracked.get(f))
        report.run(flows, path)

    def done(self):
        # Unloaded (mitmproxy reloads a script when it changes) with requests in flight:
        # check them now, or their findings are lost.
        self.deferral.run_all()
        self._close_writer()
        self.restore_set()

    def _close_writer(self) -> None:
        if self.writer:
            self.writer.close()
            self.writer = None

    # -- shared with the WebSocket hooks (websockets.py) -------------------------------

    def watches(self, flow: http.HTTPFlow) -> bool:
        """Whether toolnames is on and its filter lets ``flow`` through."""
        if self.off or is_lookup(flow):
            return False  # toolnames' own tools/list (mcp_lookup.py) is no traffic to judge
        return self.filter is None or bool(self.filter(flow))

    def shown_as_read_back(self, flow: http.HTTPFlow) -> bool:
        """A saved flow or session read back is shown as the live run recorded it (fixes and
        blocks included), never checked again; True if ``flow`` is one."""
        if flow.live or flows.META_KEY not in flow.metadata:
            return False
        recorded = flows.record(flow)
        self.tracked[flow] = Tracked(read_back=True, record=recorded)
        if recorded is not None:
            self.log(flow, flows.show(flow, recorded))
        return True

    def log(self, flow: http.HTTPFlow, comment: str | None) -> None:
        if comment:
            request = flow.request
            # The path without secrets: Gemini's API key travels in the query string.
            path = save.redacted_path(request.path)
            logger.warning("%s %s%s: %s", request.method, flows.host(request), path, comment)

    def save(self, flow: http.HTTPFlow, recorded: FlowRecord | None) -> None:
        if self.writer is None or recorded is None or not recorded.flagged or recorded.saved:
            return
        saved = save.redacted_copy(flow) if ctx.options.toolnames_redact else flow
        if not self.writer.add(saved):
            return  # said once by the writer; the proxy goes on
        for part, why in save.bodies_left_out(saved).items():
            request = flow.request
            logger.warning(
                "%s %s%s: toolnames_save: saved without its %s body: %s",
                request.method,
                flows.host(request),
                save.redacted_path(request.path),
                part,
                why,
            )
        recorded.saved = True
        # The live flow says it was saved; the saved copy was written before it did.
        flow.metadata[flows.META_KEY] = recorded.to_metadata()

    # -- the request -------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> None:
        if self.off:
            return
        seen = flows.incoming(flow, self.max_body)
        if seen is None:
            if flow.websocket is None and self.watches(flow):
                # A signed request toolnames does not read is broken by the proxy all the same.
                self._say_broken_signature(flow, signing.signed_by(flow.request))
                self._unclaimed(flow)
            return
        if not self.watches(flow) or self.shown_as_read_back(flow):
            return
        self._say_broken_signature(flow, seen.signed)
        self._start(flow, seen)

    def _say_broken_signature(self, flow: http.HTTPFlow, signed: Signed | None) -> None:
        """What in mitmproxy's settings breaks a live request's signature, said once."""
        if signed is not None and flow.live:
            self._say_once(signing.breakers(flow, signed, *self._rewrites_signed()))

    def _unclaimed(self, flow: http.HTTPFlow) -> None:
        """Never silent: a request that carries tools to a path no format claims is noted on
        the flow, and logged once per host and path."""
        text = flows.unclaimed(flow, self.max_body, self.reader)
        if text is None:
            return
        request = flow.request
        where = (flows.host(request), request.path.split("?", 1)[0])
        if where in self.unclaimed_said:
            return
        if len(self.unclaimed_said) >= MAX_UNCLAIMED_SAID:
            del self.unclaimed_said[next(iter(self.unclaimed_said))]
        self.unclaimed_said[where] = None
        self.log(flow, text)

    @staticmethod
    def _rewrites_signed() -> tuple[bool, bool]:
        """mitmproxy's keep_host_header and anticomp options (declared by its proxyserver and
        anticomp addons, which a master may lack: then nothing rewrites the request)."""
        keep = getattr(ctx.options, "keep_host_header", True)
        return bool(keep), bool(getattr(ctx.options, "anticomp", False))

    def _say_once(self, lines: list[str]) -> None:
        for line in lines:
            if line not in self.said:
                self.said.add(line)
                logger.warning(line)

    def _start(self, flow: http.HTTPFlow, seen: Incoming) -> Tracked:
        """The flow's exchange, its request checked now or, in observe mode, deferred."""
        exchange = flows.exchange_for(seen, self.overrides, self.reader)
        tracked = self.tracked[flow] = Tracked(exchange=exchange)
        if not seen.problem and nothing_to_check(seen.content, seen.format):
            exchange.request_without_tools()  # most requests: settled by a scan, never parsed
            return tracked
        if self.mode == "observe" and seen.mutable:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                loop = None  # outside mitmproxy (scripts, tests): check it now
            if loop is not None:
                # Observe mode holds nothing back: see toolnames_mitm/deferral.py.
                self.deferral.add(loop, tracked, flow, exchange, seen.content, seen.problem)
                return tracked
        self._check_request(flow, exchange, seen.content, seen.problem, self.mode, seen.mutable)
        return tracked

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
        fix = mode == "fix" and mutable
        permission = None
        if fix and exchange.signed is not None:
            # Whether a change may be signed again, settled before any is planned.
            permission = signing.permission(flow.request, exchange.signed, self.resign)
            exchange.unsignable = permission.refusal
        exchange.check_request(content, problem=problem, fix=fix, scanned=True)
        comment = flows.apply(flow, exchange, mode, permission)
        if comment and not flow.live and flow.response is None and flow.error is None:
            # A recorded request without an answer never completes: log it now.
            self.log(flow, comment)

    # -- the answer --------------------------------------------------------------------

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        # Streaming is decided here, before mitmproxy starts buffering the body: a
        # streamed answer keeps streaming, and the tap reads copies of its chunks.
        response = flow.response
        if not flow.live or response is None or callable(response.stream):
            return
        if not is_stream(flows.header(response, b"content-type")):
            return  # a whole body is read once the flow completes
        tracked = self.tracked.get(flow)
        exchange = tracked.exchange if tracked is not None else None
        encoding = flows.header(response, b"content-encoding")
        tap = exchange.stream_tap(encoding) if exchange is not None else None
        if tap is not None:
            response.stream = tap.pieces
            if tap.decodes:
                # Names are given back in the decoded stream, which goes on uncompressed.
                del response.headers["content-encoding"]
            if exchange.drops_length(tap, flows.header(response, b"content-length") or None):
                flows.unsized(flow)

    def response(self, flow: http.HTTPFlow) -> None:
        self._complete(flow, complete=True)

    def error(self, flow: http.HTTPFlow) -> None:
        # A stream that broke off: check what was seen, and claim nothing about the rest.
        self._complete(flow, complete=False)

    def _complete(self, flow: http.HTTPFlow, complete: bool) -> None:
        """The flow is done: check its answer, log it once, save it if flagged."""
        tracked = self.tracked.get(flow)
        self.deferral.run_now(tracked)
        if tracked is not None and tracked.read_back:
            # Its line was logged when its request was shown.
            del self.tracked[flow]
            self.save(flow, tracked.record)
            return
        if tracked is None:
            seen = None if self.off else flows.incoming(flow, self.max_body)
            if seen is None or not self.watches(flow):
                return
            # Its request went by before this addon was loaded: read it now.
            tracked = self._start(flow, seen)
            self.deferral.run_now(tracked)
        exchange = tracked.exchange
        if exchange is None:
            return  # both hooks ran, or a WebSocket's: the answer was judged by the first
        response = flow.response
        status = response.status_code if response is not None else None
        tap = getattr(response.stream, "__self__", None) if response is not None else None
        if isinstance(tap, StreamTap):
            exchange.check_stream(status, tap, complete)
        elif response is not None and response.raw_content is not None:
            content, problem = flows.decoded(response)
            if problem is not None:
                # A body mitmproxy cannot decode (a corrupt gzip) goes on as it came: its
                # calls are not read, nor names given back, and the record says so.
                exchange.response_unread(status, problem)
            else:
                content_type = flows.header(response, b"content-type")
                exchange.check_response(status, content_type, content, complete)
                # Fix mode's aliases go back to the app's names before the client sees them
                # (unless the check found the answer unreadable: then it goes on as it came).
                restored = exchange.restore(content) if flow.live else None
                if restored is not None:
                    flows.set_body(response, restored)
        else:
            exchange.response_unread(status, STREAMED_UNREAD)
        recorded = None
        if exchange.findings or exchange.fixes:
            recorded = flows.recorded(flow, exchange, self.mode)
            self.log(flow, flows.mark(flow, recorded))
        self.save(flow, recorded)
        # Judged, and its record is on the flow: what the exchange read goes now, not when
        # the garbage collector gets to the flow (mitmproxy's flows sit in reference cycles,
        # and a long conversation's view holds thousands of names).
        tracked.exchange = None
