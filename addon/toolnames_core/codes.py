"""The catalogue of finding codes: every code a finding can carry, with what it means.

Modules build findings with these names, never with string literals, so that a code is
spelled once; docs/findings.md's table lists the same codes (a test holds them equal).
The codes themselves are a stable interface: users filter on them in flow metadata,
``scripts/scan --json`` and ``toolnames.report``.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "CATALOGUE",
    "CHOICE_IGNORED",
    "CHOICE_MALFORMED",
    "CHOICE_NOT_IN_TOOLS",
    "CHOICE_WITHOUT_TOOLS",
    "HISTORY_NAME_INVALID",
    "HISTORY_WITHOUT_TOOLS",
    "MCP_ALIAS_UNRESTORED",
    "MCP_CALL_UNLISTED",
    "MCP_HEADER_MISMATCH",
    "MCP_NAME_DUPLICATE",
    "MCP_NAME_INVALID",
    "MCP_NAME_REJECTED",
    "NAME_DUPLICATE",
    "NAME_EMPTY",
    "NAME_INVALID_CHARS",
    "NAME_INVALID_START",
    "NAME_TOO_LONG",
    "PROVIDER_REJECTED",
    "REQUEST_UNREADABLE",
    "RESPONSE_IGNORED_CHOICE",
    "RESPONSE_UNKNOWN_TOOL",
    "RESPONSE_UNREADABLE",
    "RESULT_UNKNOWN_TOOL",
    "RULE_DISAGREES",
    "TOOLS_EMPTY",
    "TOOL_MALFORMED",
    "CodeInfo",
]

NAME_EMPTY = "name-empty"
NAME_TOO_LONG = "name-too-long"
NAME_INVALID_CHARS = "name-invalid-chars"
NAME_INVALID_START = "name-invalid-start"
NAME_DUPLICATE = "name-duplicate"
TOOL_MALFORMED = "tool-malformed"
TOOLS_EMPTY = "tools-empty"
CHOICE_NOT_IN_TOOLS = "choice-not-in-tools"
CHOICE_WITHOUT_TOOLS = "choice-without-tools"
CHOICE_MALFORMED = "choice-malformed"
CHOICE_IGNORED = "choice-ignored"
HISTORY_NAME_INVALID = "history-name-invalid"
HISTORY_WITHOUT_TOOLS = "history-without-tools"
REQUEST_UNREADABLE = "request-unreadable"
RESPONSE_UNKNOWN_TOOL = "response-unknown-tool"
RESPONSE_IGNORED_CHOICE = "response-ignored-choice"
RESPONSE_UNREADABLE = "response-unreadable"
RESULT_UNKNOWN_TOOL = "result-unknown-tool"
PROVIDER_REJECTED = "provider-rejected"
RULE_DISAGREES = "rule-disagrees"
# MCP traffic (toolnames_core/mcp/): what a server lists and what a client calls.
MCP_NAME_INVALID = "mcp-name-invalid"
MCP_NAME_REJECTED = "mcp-name-rejected"
MCP_NAME_DUPLICATE = "mcp-name-duplicate"
MCP_CALL_UNLISTED = "mcp-call-unlisted"
MCP_HEADER_MISMATCH = "mcp-header-mismatch"
MCP_ALIAS_UNRESTORED = "mcp-alias-unrestored"


class CodeInfo(NamedTuple):
    side: str  # "request" or "response": which message the finding is about
    meaning: str


CATALOGUE: dict[str, CodeInfo] = {
    NAME_EMPTY: CodeInfo("request", "a tool name is empty"),
    NAME_TOO_LONG: CodeInfo("request", "a tool name is longer than the rule allows"),
    NAME_INVALID_CHARS: CodeInfo("request", "a tool name holds characters the rule rejects"),
    NAME_INVALID_START: CodeInfo("request", "a tool name starts with a character the rule rejects"),
    NAME_DUPLICATE: CodeInfo("request", "two tools share one name"),
    TOOL_MALFORMED: CodeInfo("request", "a tool or call is not shaped as the format requires"),
    TOOLS_EMPTY: CodeInfo("request", "the tool list is sent empty, which the API rejects"),
    CHOICE_NOT_IN_TOOLS: CodeInfo(
        "request", "a named or allowed tool choice names no offered tool"
    ),
    CHOICE_WITHOUT_TOOLS: CodeInfo("request", "a tool choice is set but no tools are offered"),
    CHOICE_MALFORMED: CodeInfo("request", "a tool choice is not shaped as the format requires"),
    CHOICE_IGNORED: CodeInfo(
        "request", "a tool choice is sent to a server that ignores it (Ollama): the model chooses"
    ),
    HISTORY_NAME_INVALID: CodeInfo("request", "a call in the history has a name the rule rejects"),
    HISTORY_WITHOUT_TOOLS: CodeInfo(
        "request", "the history holds tool use but no tools are offered"
    ),
    REQUEST_UNREADABLE: CodeInfo("request", "toolnames could not read the request"),
    RESPONSE_UNKNOWN_TOOL: CodeInfo("response", "the model called a tool that was never offered"),
    RESPONSE_IGNORED_CHOICE: CodeInfo("response", "the model ignored a forced tool choice"),
    RESPONSE_UNREADABLE: CodeInfo("response", "toolnames could not read the answer"),
    RESULT_UNKNOWN_TOOL: CodeInfo(
        "request", "a tool result names a function the session never declared"
    ),
    PROVIDER_REJECTED: CodeInfo(
        "response", "the provider rejected a tool name or the tool choice of the request"
    ),
    RULE_DISAGREES: CodeInfo(
        "response", "the provider's verdict on a name differs from toolnames' rule for the host"
    ),
    MCP_NAME_INVALID: CodeInfo(
        "response", "an MCP server lists a tool name outside MCP's own rule (1-128 of A-Za-z0-9_.-)"
    ),
    MCP_NAME_REJECTED: CodeInfo(
        "response", "an MCP server lists a tool name that LLM providers' rules reject"
    ),
    MCP_NAME_DUPLICATE: CodeInfo("response", "an MCP server lists one tool name twice"),
    MCP_CALL_UNLISTED: CodeInfo("request", "an MCP client calls a tool its session never listed"),
    MCP_HEADER_MISMATCH: CodeInfo(
        "request", "an Mcp-Name or Mcp-Method header disagrees with the JSON-RPC body"
    ),
    MCP_ALIAS_UNRESTORED: CodeInfo(
        "request", "fix mode could not send a call of an alias back under the server's name"
    ),
}
