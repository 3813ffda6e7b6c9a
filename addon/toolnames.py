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

from toolnames_core import analysis
from toolnames_core import annotate
from toolnames_core import calls
from toolnames_core import endpoints
from toolnames_core import mitm_flows
from toolnames_core import mitm_report
from toolnames_core import mitm_save
from toolnames_core import mitm_view
from toolnames_core.model import RequestView

logger = logging.getLogger(__name__)

META_KEY = mitm_flows.META_KEY
MODES = ("observe", "fix", "block")
# At the latest this long after an observed request is forwarded, it is checked, so that
# a flow whose answer is slow in coming is marked while the user waits for it.
DEFER_SECONDS = 1.0
# toolnames.report without a path only logs.
NO_PATH = mitmproxy.types.Path("")
# An observed request whose check waits: (due, flow, api, body, why the body is unread).
Pending = tuple[float, http.HTTPFlow, str, bytes, Optional[str]]


class ToolNames:
    def __init__(self) -> None:
        self.overrides: tuple[endpoints.RuleOverride, ...] = ()
        self.filter: flowfilter.TFilter | None = None
        self.max_body: int = 0
        self.mode: str = "observe"
        self.writer: mitm_save.FlaggedFlowWriter | None = None
        # Flows read back from a file whose toolnames metadata was shown as recorded.
        self.read_back: weakref.WeakSet[http.HTTPFlow] = weakref.WeakSet()
        # Observe mode: flow id -> its pending check, in the order the requests came, so
        # the earliest due is always first.
        self.deferred: dict[str, Pending] = {}
        # One timer for all deferred checks, armed while any is pending: a timer per flow
        # cost more than the rest of the request hook.
        self.sweep: asyncio.TimerHandle | None = None

    def load(self, loader):
        mitm_view.register()
        loader.add_option(
            "toolnames_mode",
            str,
            "observe",
            "What to do with a request whose tool names are wrong. observe: annotate and log, never change "
            "a byte. fix: also rewrite a named tool choice that matches exactly one offered tool under a "
            "known client rewrite (Mastra, OpenAI Agents SDK). block: answer a request with an error finding "
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
            "Rules: " + ", ".join(endpoints.RULES) + ".",
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

    def configure(self, updated):
        # mitmproxy shows an option's choices but does not enforce them.
        if "toolnames_mode" in updated:
            if ctx.options.toolnames_mode not in MODES:
                raise exceptions.OptionsError(
                    f"toolnames_mode must be one of {', '.join(MODES)}, not {ctx.options.toolnames_mode!r}"
                )
            # Kept here: every option read through ctx.options is a deep copy.
            self.mode = ctx.options.toolnames_mode
        if "toolnames_rule" in updated:
            try:
                self.overrides = tuple(
                    endpoints.parse_rule_override(s) for s in ctx.options.toolnames_rule
                )
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
                    self.writer = mitm_save.FlaggedFlowWriter(ctx.options.toolnames_save)
                except OSError as e:
                    raise exceptions.OptionsError(f"Cannot open toolnames_save file: {e}") from e

    @command.command("toolnames.report")
    def report(self, flows: Sequence[flow.Flow], path: mitmproxy.types.Path = NO_PATH) -> None:
        """
        Summarize the toolnames findings of flows: counts by finding code and by host,
        logged as an alert. With a path, also write the summary there as JSON.
        """
        for f in flows:
            self._run_deferred_check(f.id)  # flows still in flight count as checked
        mitm_report.run(flows, path)

    def done(self):
        if self.sweep is not None:
            self.sweep.cancel()
            self.sweep = None
        # Unloaded (mitmproxy reloads a script when it changes) with requests in flight:
        # check them now, or their findings are lost.
        for flow_id in list(self.deferred):
            self._run_deferred_check(flow_id)
        self._close_writer()

    def _close_writer(self) -> None:
        if self.writer:
            self.writer.close()
            self.writer = None

    def _api(self, flow: http.HTTPFlow) -> str | None:
        api = endpoints.detect_api(flow.request.method, flow.request.path)
        if api is None or api not in analysis.FORMATS:
            return None
        if self.filter and not self.filter(flow):
            return None
        return api

    def _rule(self, flow: http.HTTPFlow, api: str) -> str:
        return endpoints.choose_rule(
            api, mitm_flows.host(flow.request), self.overrides, flow.request.port
        )

    def request(self, flow: http.HTTPFlow) -> None:
        api = self._api(flow)
        if api is None:
            return
        if not flow.live and META_KEY in flow.metadata:
            # A saved flow read back: show what the live run decided, fixes and blocks included.
            self.read_back.add(flow)
            self._log(flow, mitm_flows.show(flow))
            return
        content, problem = mitm_flows.request_content(flow.request, self.max_body)
        if not problem and analysis.skip_request(content, api):
            return  # most requests carry no tools: decide that before any other work
        mode = self.mode
        # Only traffic that is still on its way can be changed.
        mutable = flow.live and flow.response is None and flow.error is None
        loop = asyncio._get_running_loop()  # None outside mitmproxy (scripts, tests)
        if mode == "observe" and mutable and loop is not None:
            # Observe mode holds nothing back: the check runs when the flow completes, or
            # DEFER_SECONDS after the request, whichever comes first. Run any sooner, it
            # would compete with the provider's first token for the CPU (scripts/bench (c)).
            due = loop.time() + DEFER_SECONDS
            self.deferred[flow.id] = (due, flow, api, content, problem)
            if self.sweep is None:
                self.sweep = loop.call_at(due, self._sweep_deferred)
            return
        self._check_request(flow, api, content, problem, mode, mutable)

    def _run_deferred_check(self, flow_id: str) -> http.HTTPFlow | None:
        """Run a flow's pending check, if any; the flow, if that flagged it."""
        pending = self.deferred.pop(flow_id, None)
        if pending is None:
            return None
        flow = pending[1]
        self._check_pending(pending, remember=True)  # its response is checked later
        return flow if META_KEY in flow.metadata else None

    def _check_pending(self, pending: Pending, remember: bool) -> analysis.RequestAnalysis:
        _, flow, api, content, problem = pending
        return self._check_request(
            flow, api, content, problem, "observe", mutable=False, remember=remember
        )

    def _sweep_deferred(self) -> None:
        """Check the requests whose answers are slow in coming, and show what was found."""
        self.sweep = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        due_ids = []
        for flow_id, (due, *_) in self.deferred.items():
            if due > now:
                self.sweep = loop.call_at(due, self._sweep_deferred)
                break
            due_ids.append(flow_id)
        flagged = [f for f in map(self._run_deferred_check, due_ids) if f is not None]
        if flagged:
            # The flow changed outside its own hooks: tell mitmweb and the console to redraw it.
            ctx.master.addons.trigger(hooks.UpdateHook(flagged))

    def _check_request(
        self,
        flow: http.HTTPFlow,
        api: str,
        content: bytes,
        problem: str | None,
        mode: str,
        mutable: bool,
        remember: bool = True,
    ) -> analysis.RequestAnalysis:
        rule = self._rule(flow, api)
        if problem:
            result = analysis.RequestAnalysis(
                api, rule, findings=[analysis.unreadable(problem)], readable=False
            )
        else:
            result = analysis.analyse_request(
                content, api, rule, fix=mode == "fix" and mutable, scanned=True, remember=remember
            )
        action = "observed"
        if result.new_body is not None:
            flow.request.content = result.new_body
            action = "fixed"
        elif mode == "block" and mutable and result.errors:
            status, headers, body = analysis.block_response(result)
            flow.response = http.Response.make(status, body, headers)
            action = "blocked"
        if result.findings or result.fixes:
            flow.metadata[META_KEY] = annotate.metadata(
                api, rule, mode, action, result.findings, result.fixes, result.fix_skipped
            )
            comment = mitm_flows.show(flow)
            if not flow.live and flow.response is None and flow.error is None:
                # A recorded request without an answer never completes: log it now.
                self._log(flow, comment)
        return result

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        # Streaming is decided here, before mitmproxy starts buffering the body: a
        # streamed answer keeps streaming, and the tap reads copies of its chunks.
        response = flow.response
        if not flow.live or response is None or callable(response.stream):
            return
        if not calls.is_stream(mitm_flows.header(response, b"content-type")):
            return  # a whole body is read once the flow completes
        api = self._api(flow)
        if api is not None and analysis.FORMATS[api].stream_collector:
            response.stream = calls.StreamTap(analysis.FORMATS[api])

    def response(self, flow: http.HTTPFlow) -> None:
        self._complete(flow, complete=True)

    def error(self, flow: http.HTTPFlow) -> None:
        # A stream that broke off: check what was seen, and claim nothing about the rest.
        self._complete(flow, complete=False)

    def _complete(self, flow: http.HTTPFlow, complete: bool) -> None:
        """The flow is done: check its response, log it once, save it if flagged."""
        pending = self.deferred.pop(flow.id, None)
        api = pending[2] if pending else self._api(flow)
        if api is None:
            return
        offered: bytes | RequestView | None = None
        if pending:
            # The response is checked against the view this check makes.
            checked = self._check_pending(pending, remember=False)
            offered = (checked.view or RequestView(api)) if checked.readable else None
        if flow in self.read_back:
            self.read_back.discard(flow)  # its line was logged when its request was shown
        else:
            meta = flow.metadata.get(META_KEY)
            if meta is None or annotate.well_formed(meta) and meta.get("action") != "blocked":
                if not pending:
                    # Checked earlier or skipped: the body, for the response side to find
                    # what the request side read from it, or to read it again.
                    body, problem = mitm_flows.request_content(flow.request, self.max_body)
                    offered = None if problem else body
                self._add_response_findings(flow, api, complete, offered)
            self._log(flow, mitm_flows.show(flow))
        self._save(flow)

    def _add_response_findings(
        self,
        flow: http.HTTPFlow,
        api: str,
        complete: bool,
        offered: bytes | RequestView | None,
    ) -> None:
        """``offered``: what the request offered, or its body, or None if it was not read."""
        findings = mitm_flows.response_findings(flow, api, complete, offered)
        if not findings:
            return
        if META_KEY in flow.metadata:
            flow.metadata[META_KEY]["findings"] += annotate.storable(
                [f.to_dict() for f in findings]
            )
        else:
            flow.metadata[META_KEY] = annotate.metadata(
                api, self._rule(flow, api), self.mode, "observed", findings
            )

    def _log(self, flow: http.HTTPFlow, comment: str | None) -> None:
        if comment:
            request = flow.request
            # The path without secrets: Gemini's API key travels in the query string.
            path = mitm_save.redacted_path(request.path)
            logger.warning("%s %s%s: %s", request.method, mitm_flows.host(request), path, comment)

    def _save(self, flow: http.HTTPFlow) -> None:
        meta = flow.metadata.get(META_KEY)
        if self.writer is None or not annotate.is_flagged(meta) or meta.get("saved"):
            return
        saved = mitm_save.redacted_copy(flow) if ctx.options.toolnames_redact else flow
        self.writer.add(saved)
        meta["saved"] = True


addons = [ToolNames()]
