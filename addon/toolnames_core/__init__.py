"""The pure heart of toolnames: bodies in, provider-neutral views, findings and fixes out.

Nothing in this package imports mitmproxy (ruff's banned-API rule holds it to that, see
pyproject.toml), so the checks run the same in the live addon, the scanner and the content
view. The names below are its front door; ``toolnames_mitm`` and the scripts use these.
"""

from __future__ import annotations

from toolnames_core import codes
from toolnames_core.bodies import has_tool_keys
from toolnames_core.bodies import nothing_to_check
from toolnames_core.clients import CLIENT_HEADERS
from toolnames_core.clients import client_label
from toolnames_core.codes import CATALOGUE
from toolnames_core.endpoints import RULES
from toolnames_core.endpoints import RuleOverride
from toolnames_core.endpoints import choose_rule
from toolnames_core.endpoints import parse_rule_override
from toolnames_core.exchange import Exchange
from toolnames_core.exchange import inspect_exchange
from toolnames_core.formats import FORMATS
from toolnames_core.formats import WireFormat
from toolnames_core.formats import format_for
from toolnames_core.formats import format_named
from toolnames_core.jsonsplice import replace_values
from toolnames_core.mcp import LOOKUP_MAX_PAGES
from toolnames_core.mcp import LOOKUP_TIMEOUT
from toolnames_core.mcp import ListingPage
from toolnames_core.mcp import McpExchange
from toolnames_core.mcp import McpState
from toolnames_core.mcp import McpStream
from toolnames_core.mcp import endpoint_session
from toolnames_core.mcp import inspect_mcp
from toolnames_core.mcp import is_mcp_request
from toolnames_core.mcp import lookup_request
from toolnames_core.mcp import mcp_server
from toolnames_core.mcp import read_lookup_answer
from toolnames_core.model import SEVERITY_RANK
from toolnames_core.model import Finding
from toolnames_core.model import Fix
from toolnames_core.names import escape_text
from toolnames_core.names import quote_name
from toolnames_core.readers import READERS
from toolnames_core.readers import Reader
from toolnames_core.readers import reader_named
from toolnames_core.record import COMMENT_PREFIX
from toolnames_core.record import MARKERS
from toolnames_core.record import FlowRecord
from toolnames_core.render import render_mcp
from toolnames_core.render import render_message
from toolnames_core.render import render_request
from toolnames_core.render import render_response
from toolnames_core.report import FlowEntry
from toolnames_core.report import format_summary
from toolnames_core.report import summarize
from toolnames_core.rules import NameRule
from toolnames_core.rules import rule_named
from toolnames_core.sessions import PROTOCOLS
from toolnames_core.sessions import Block
from toolnames_core.sessions import Session
from toolnames_core.sessions import detect_protocol
from toolnames_core.sessions import inspect_session
from toolnames_core.sigv4 import Credentials
from toolnames_core.sigv4 import Signed
from toolnames_core.sigv4 import credentials_from_environ
from toolnames_core.sigv4 import credentials_from_file
from toolnames_core.sigv4 import read_signature
from toolnames_core.sigv4 import resign_headers
from toolnames_core.sigv4 import verifies
from toolnames_core.streams import StreamTap
from toolnames_core.streams import is_stream
from toolnames_core.unclaimed import offered_keys
from toolnames_core.unclaimed import unchecked_text

__all__ = [
    "CATALOGUE",
    "CLIENT_HEADERS",
    "COMMENT_PREFIX",
    "FORMATS",
    "LOOKUP_MAX_PAGES",
    "LOOKUP_TIMEOUT",
    "MARKERS",
    "PROTOCOLS",
    "READERS",
    "RULES",
    "SEVERITY_RANK",
    "Block",
    "Credentials",
    "Exchange",
    "Finding",
    "Fix",
    "FlowEntry",
    "FlowRecord",
    "ListingPage",
    "McpExchange",
    "McpState",
    "McpStream",
    "NameRule",
    "Reader",
    "RuleOverride",
    "Session",
    "Signed",
    "WireFormat",
    "StreamTap",
    "choose_rule",
    "client_label",
    "codes",
    "credentials_from_environ",
    "credentials_from_file",
    "detect_protocol",
    "endpoint_session",
    "escape_text",
    "format_for",
    "format_named",
    "format_summary",
    "has_tool_keys",
    "inspect_exchange",
    "inspect_mcp",
    "mcp_server",
    "inspect_session",
    "is_mcp_request",
    "is_stream",
    "lookup_request",
    "nothing_to_check",
    "offered_keys",
    "parse_rule_override",
    "quote_name",
    "read_lookup_answer",
    "read_signature",
    "reader_named",
    "render_mcp",
    "rule_named",
    "render_message",
    "render_request",
    "render_response",
    "replace_values",
    "resign_headers",
    "summarize",
    "unchecked_text",
    "verifies",
]
