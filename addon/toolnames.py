"""
Catch tool-name mistakes in LLM API traffic as it happens.

Checks every LLM API request's tools, tool choice and history against the name
rule of the provider that receives it; marks, comments and logs what is wrong;
can fix a mismatched named choice or block a doomed request; saves flagged flows
with credentials removed.

Usage:

    mitmdump -s addon/toolnames.py
    mitmdump -s addon/toolnames.py --set toolnames_mode=fix
    mitmdump -s addon/toolnames.py --set toolnames_mode=block --set toolnames_save=flagged.mitm
    mitmdump -s addon/toolnames.py --set toolnames_rule='openrouter.ai=anthropic'
    mitmdump -nr flagged.mitm -s addon/toolnames.py
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence
from typing import Optional

import mitmproxy.types
from mitmproxy import command
from mitmproxy import ctx
from mitmproxy import exceptions
from mitmproxy import flow
from mitmproxy import flowfilter
from mitmproxy import hooks
from mitmproxy import http
from mitmproxy.utils import human

from toolnames_core import READERS
from toolnames_core import RULES
from toolnames_core import Exchange
from toolnames_core import FlowRecord
from toolnames_core import Reader
from toolnames_core import RuleOverride
from toolnames_core import StreamTap
from toolnames_core import choose_rule
from toolnames_core import detect_api
from toolnames_core import is_stream
from toolnames_core import nothing_to_check
from toolnames_core import parse_rule_override
from toolnames_core import reader_named
from toolnames_mitm import flows
from toolnames_mitm import report
from toolnames_mitm import save
from toolnames_mitm import view
from toolnames_mitm.deferral import Deferral
from toolnames_mitm.deferral import Pending

logger = logging.getLogger(__name__)

MODES = ("observe", "fix", "block")
READER_CHOICES = ("auto", "json", "msgspec")
# toolnames.report without a path only logs.
NO_PATH = mitmproxy.types.Path("")


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
        # Each LLM API flow's exchange, for as long as the flow lives.
        self.exchanges: weakref.WeakKeyDictionary[http.HTTPFlow, Exchange] = (
            weakref.WeakKeyDictionary()
        )
        # Flows read back from a file with a toolnames record: shown as recorded, not checked.
        self.read_back: weakref.WeakKeyDictionary[http.HTTPFlow, FlowRecord | None] = (
            weakref.WeakKeyDictionary()
        )
        self.deferral = Deferral(self._check_pending, self._redraw)

    def load(self, loader):
        view.register()
        loader.add_option(
            "toolnames_mode",
            str,
            "observe",
            "What to do with a request whose tool names are wrong. observe: annotate and log, never change "
            "a byte. fix: also rewrite a named tool choice that matches exactly one offered tool under a "
            "known client rewrite (Mastra, OpenAI Agents SDK), and send every tool name the provider's "
            "rule rejects under an alias it accepts, giving the app its own names back in the answer. block: answer a request with an error finding "
            "with HTTP 400 in the provider's own error shape, so it never reaches the provider.",
            choices=list(MODES),
        )
        loader.add_option(
            "toolnames_save",
            Optional[str],
            None,
            "Append every flagged flow, once complete, to this file in mitmproxy's flow format "
            "(read it with mitmproxy -r or mitmdump -nr). The file is created readable by its owner only.",
        )
        loader.add_option(
            "toolnames_redact",
            bool,
            True,
            "Remove credentials (authorization, api-key, x-api-key, x-goog-api-key, cookies, key= and "
            "similar query parameters) from flows saved by toolnames_save. The live flow is never touched.",
        )
        loader.add_option(
            "toolnames_rule",
            Sequence[str],
            [],
            "Check names of requests to some hosts against another provider's rule, as HOST_PATTERN=RULE "
            "(a shell-style host pattern), e.g. openrouter.ai=anthropic for a gateway that forwards to "
            "Anthropic, or *=portable for the strictest rule every provider accepts. The first match wins. "
            "Rules: " + ", ".join(RULES) + ".",
        )
        loader.add_option(
            "toolnames_filter",
            Optional[str],
            None,
            "Only inspect flows matching this mitmproxy filter expression (e.g. '~d api.openai.com'). "
            "By default every LLM API request is inspected.",
        )
        loader.add_option(
            "toolnames_max_body",
            str,
            "32m",
            "Leave request bodies larger than this unread and forward them unchanged (the flow is "
            "annotated as unread). Accepts sizes like 512k or 32m; 0 reads every body.",
        )
        loader.add_option(
            "toolnames_reader",
            str,
            "auto",
            "How request and response bodies are decoded. auto: msgspec when it can be imported "
            "(it decodes only the fields toolnames reads, several times faster than json on large "
            "bodies), else json. json: the standard library. msgspec: insist on it. Every reader "
            "gives the same findings; the one in use is logged at start-up.",
            choices=list(READER_CHOICES),
        )

    def configure(self, updated):
        # mitmproxy shows an option's choices but does not enforce them.
        if "toolnames_mode" in updated:
            if ctx.options.toolnames_mode not in MODES:
                raise exceptions.OptionsError(
                    f"toolnames_mode must be one of {', '.join(MODES)}, not {ctx.options.toolnames_mode!r}"
                )
            # Kept here: every option read through ctx.options is a deep copy.
            self.mode = ctx.options.toolnames_mode
        if "toolnames_reader" in updated:
            try:
                self.reader = reader_named(ctx.options.toolnames_reader)
            except ValueError as e:
                raise exceptions.OptionsError(f"Cannot use toolnames_reader: {e}") from e
            # Said once at start-up (and again if the option changes): which reader runs.
            logger.info(reader_line(self.reader))
        if "toolnames_rule" in updated:
            try:
                self.overrides = tuple(parse_rule_override(s) for s in ctx.options.toolnames_rule)
            except ValueError as e:
                raise exceptions.OptionsError(f"Cannot parse toolnames_rule: {e}") from e
        if "toolnames_filter" in updated:
            if ctx.options.toolnames_filter:
                try:
                    self.filter = flowfilter.parse(ctx.options.toolnames_filter)
                except ValueError as e:
                    raise exceptions.OptionsError(f"Cannot parse toolnames_filter: {e}") from e
            else:
                self.filter = None
        if "toolnames_max_body" in updated:
            try:
                self.max_body = human.parse_size(ctx.options.toolnames_max_body) or 0
                if self.max_body < 0:
                    raise ValueError("a size cannot be negative")
            except ValueError as e:
                raise exceptions.OptionsError(f"Cannot parse toolnames_max_body: {e}") from e
        if "toolnames_save" in updated:
            self._close_writer()
            if ctx.options.toolnames_save:
                try:
                    self.writer = save.FlaggedFlowWriter(ctx.options.toolnames_save)
                except OSError as e:
                    raise exceptions.OptionsError(f"Cannot open toolnames_save file: {e}") from e

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
        api = detect_api(flow.request.method, flow.request.path)
        if api is None or (self.filter and not self.filter(flow)):
            return None
        return api

    # -- the request -------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> None:
        api = self._api(flow)
        if api is None:
            return
        if not flow.live and flows.META_KEY in flow.metadata:
            # A saved flow read back: show what the live run decided, fixes and blocks included.
            recorded = self.read_back[flow] = flows.record(flow)
            if recorded is not None:
                self._log(flow, flows.show(flow, recorded))
            return
        self._start(flow, api)

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
        elif mode == "block" and mutable and exchange.errors:
            status, headers, body = exchange.block_response()
            flow.response = http.Response.make(status, body, headers)
        if exchange.request_findings or exchange.fixes:
            comment = flows.mark(flow, FlowRecord.of(exchange, mode))
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
        tap = exchange.stream_tap() if exchange is not None else None
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
        exchange = self.exchanges.get(flow)
        if exchange is None:
            api = self._api(flow)
            if api is None:
                return
            # Its request went by before this addon was loaded: read it now.
            exchange = self._start(flow, api)
            self.deferral.run_now(flow.id)
        if exchange.response_checked:
            return  # both hooks ran: the answer was judged by the first
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
            exchange.response_unread()
        recorded = None
        if exchange.findings or exchange.fixes:
            recorded = FlowRecord.of(exchange, self.mode)
            self._log(flow, flows.mark(flow, recorded))
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
