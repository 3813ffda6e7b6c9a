"""MCP traffic between clients and remote MCP servers (Streamable HTTP): another kind of
exchange beside the LLM APIs' (``exchange.py``), recognised by its JSON-RPC content.

Where names are born: a server lists ``github.create_issue``, valid MCP, and the client
hands it to a model whose provider rejects the dot. toolnames weighs each listed name
against MCP's rule and the providers', remembers each session's names to judge its calls,
and in fix mode lists aliases and calls the server's tools by their own names.
"""

from __future__ import annotations

from toolnames_core.mcp.checks import listed_findings
from toolnames_core.mcp.checks import rejecting_rules
from toolnames_core.mcp.exchange import API
from toolnames_core.mcp.exchange import UNALIAS_REWRITE
from toolnames_core.mcp.exchange import McpExchange
from toolnames_core.mcp.exchange import McpStream
from toolnames_core.mcp.exchange import endpoint_server
from toolnames_core.mcp.exchange import endpoint_session
from toolnames_core.mcp.exchange import inspect_mcp
from toolnames_core.mcp.exchange import mcp_server
from toolnames_core.mcp.lookup import LOOKUP_ID
from toolnames_core.mcp.lookup import LOOKUP_MAX_PAGES
from toolnames_core.mcp.lookup import LOOKUP_TIMEOUT
from toolnames_core.mcp.lookup import ListingPage
from toolnames_core.mcp.lookup import looks_like_alias
from toolnames_core.mcp.lookup import lookup_request
from toolnames_core.mcp.lookup import read_lookup_answer
from toolnames_core.mcp.messages import Message
from toolnames_core.mcp.messages import header_value
from toolnames_core.mcp.messages import is_mcp_request
from toolnames_core.mcp.messages import parse_header_name
from toolnames_core.mcp.messages import read_messages
from toolnames_core.mcp.messages import sse_events
from toolnames_core.mcp.state import McpSession
from toolnames_core.mcp.state import McpState

__all__ = [
    "API",
    "LOOKUP_ID",
    "LOOKUP_MAX_PAGES",
    "LOOKUP_TIMEOUT",
    "ListingPage",
    "UNALIAS_REWRITE",
    "McpExchange",
    "McpSession",
    "McpState",
    "McpStream",
    "Message",
    "endpoint_server",
    "endpoint_session",
    "header_value",
    "inspect_mcp",
    "mcp_server",
    "is_mcp_request",
    "listed_findings",
    "looks_like_alias",
    "lookup_request",
    "parse_header_name",
    "read_lookup_answer",
    "read_messages",
    "rejecting_rules",
    "sse_events",
]
