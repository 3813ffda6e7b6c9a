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

from toolnames_mitm import LiveSessions
from toolnames_mitm import McpTraffic
from toolnames_mitm import ToolNames

__all__ = ["LiveSessions", "McpTraffic", "ToolNames", "addons"]

# The HTTP hooks, options and report command; the WebSocket and MCP hooks, which share them.
tool_names = ToolNames()
addons = [tool_names, LiveSessions(tool_names), McpTraffic(tool_names)]
