"""The ``toolnames`` content view: an LLM API flow's tool names as tables, in mitmweb and the console.

It uses the content view API of mitmproxy 12. mitmproxy 11 has only the old one, so there the
addon runs without the view and says so once in the log. The text comes from ``tables.py``.
"""

from __future__ import annotations

import logging

from mitmproxy import contentviews
from mitmproxy import ctx
from mitmproxy import http
from mitmproxy import version

from toolnames_core import analysis
from toolnames_core import endpoints
from toolnames_core import mitm_flows
from toolnames_core import tables
from toolnames_core.mitm_flows import META_KEY
from toolnames_core.rules import RULES

logger = logging.getLogger(__name__)

VIEW_NAME = "toolnames"
# Above the JSON view (1), so a request that names tools opens in this view.
PREFERRED = 2.0

NOT_LLM = (
    "toolnames reads the requests and responses of the LLM APIs it knows "
    "(POST .../chat/completions, .../responses, .../v1/messages, ...:generateContent, "
    ".../model/<id>/converse); this message is not one of them.\n"
)

# mitmproxy 11 has no Contentview; the class is still defined there, but never registered.
_Base = getattr(contentviews, "Contentview", object)
_said_unavailable = False


def _overrides() -> tuple[endpoints.RuleOverride, ...]:
    # The view is called outside any hook: read the option directly, and forgive a bad
    # value (the addon's configure has already reported it).
    try:
        specs = ctx.options.toolnames_rule
    except (AttributeError, KeyError):
        return ()
    try:
        return tuple(endpoints.parse_rule_override(s) for s in specs)
    except ValueError:
        return ()


class _Exchange:
    """The LLM API flow a message belongs to, or None for anything else."""

    def __init__(self, flow: http.HTTPFlow, api: str, is_request: bool) -> None:
        self.flow = flow
        self.api = api
        self.is_request = is_request

    @classmethod
    def of(cls, metadata) -> _Exchange | None:
        flow = getattr(metadata, "flow", None)
        message = getattr(metadata, "http_message", None)
        if not isinstance(flow, http.HTTPFlow) or message is None:
            return None
        api = endpoints.detect_api(flow.request.method, flow.request.path)
        if api is None or api not in analysis.FORMATS:
            return None
        return cls(flow, api, message is flow.request)

    @property
    def meta(self) -> dict | None:
        meta = self.flow.metadata.get(META_KEY)
        return meta if isinstance(meta, dict) else None

    @property
    def rule(self) -> str:
        # The rule the addon applied when the flow went through, if it recorded one.
        recorded = (self.meta or {}).get("rule")
        if isinstance(recorded, str) and recorded in RULES:
            return recorded
        return endpoints.choose_rule(
            self.api, mitm_flows.host(self.flow.request), _overrides(), self.flow.request.port
        )


class ToolnamesView(_Base):
    """Tables of the tools offered, the tool choice, the calls in history and in the
    response, and the findings and fixes, for every wire format toolnames reads."""

    name = VIEW_NAME

    def prettify(self, data: bytes, metadata) -> str:
        exchange = _Exchange.of(metadata)
        if exchange is None:
            return NOT_LLM
        flow = exchange.flow
        if exchange.is_request:
            return tables.render_request(data, exchange.api, exchange.rule, exchange.meta)
        return tables.render_response(
            data,
            getattr(metadata, "content_type", None) or "",
            exchange.api,
            exchange.rule,
            request_content=flow.request.get_content(strict=False),
            meta=exchange.meta,
            status=flow.response.status_code if flow.response else None,
        )

    def render_priority(self, data: bytes, metadata) -> float:
        # Called for every message mitmweb or the console shows: cheap for anything that
        # is not an LLM API call, and never raising.
        try:
            exchange = _Exchange.of(metadata)
            if exchange is None:
                return -1
            if exchange.is_request:
                # A scan, not a parse: this runs each time a message is shown, and an
                # agent's request can be megabytes of history.
                return PREFERRED if analysis.has_tool_keys(data) else 0
            findings = (exchange.meta or {}).get("findings")
            flagged = isinstance(findings, list) and any(
                isinstance(f, dict) and str(f.get("code", "")).startswith("response-")
                for f in findings
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
