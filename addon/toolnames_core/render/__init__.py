"""The content view's text: an exchange's request and answer (``exchange.py``) and a
WebSocket session's messages (``session.py``), MCP traffic (``mcp.py``), as tables of names, verdicts and findings.
Renderers stand above the state they show: nothing below imports them."""

from __future__ import annotations

from toolnames_core.render.exchange import render_request
from toolnames_core.render.exchange import render_response
from toolnames_core.render.mcp import render_mcp
from toolnames_core.render.session import render_message

__all__ = ["render_mcp", "render_message", "render_request", "render_response"]
