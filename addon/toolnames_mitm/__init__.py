"""Everything of toolnames that touches mitmproxy: the HTTP addon (``addon``), the WebSocket
and MCP ones (``websockets``, ``mcp``), flows in and out of the pure core (``flows``),
observe mode's deferred checks (``deferral``), the options (``options``), saving (``save``,
``flowfile``), re-signing (``signing``), the content view (``view``) and the report
command's flows (``report``).

The names below are its front door: the script (addon/toolnames.py), the harness and the
scanner import these, never a module here (pyproject.toml's banned-api holds them to it;
the modules here import one another, addon/toolnames_mitm/ruff.toml)."""

from __future__ import annotations

from toolnames_mitm.addon import ToolNames
from toolnames_mitm.flowfile import next_record
from toolnames_mitm.mcp import McpTraffic
from toolnames_mitm.websockets import LiveSessions

__all__ = ["LiveSessions", "McpTraffic", "ToolNames", "next_record"]
