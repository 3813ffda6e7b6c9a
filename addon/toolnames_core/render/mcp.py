"""The content view's text for MCP traffic: a request's messages and calls, an answer's
listed tools with what MCP's rule, the providers' rules and fix mode make of each name, and
the findings, as recorded when the flow has a record (a call is judged against its
session's listing, which only the live addon saw)."""

from __future__ import annotations

import textwrap

from toolnames_core.aliases import alias_for
from toolnames_core.mcp import McpExchange
from toolnames_core.mcp import read_messages
from toolnames_core.mcp import rejecting_rules
from toolnames_core.mcp import sse_events
from toolnames_core.model import SEVERITY_RANK
from toolnames_core.model import Finding
from toolnames_core.model import count_text
from toolnames_core.record import FlowRecord
from toolnames_core.render.exchange import MESSAGE_WIDTH
from toolnames_core.render.exchange import name_verdict
from toolnames_core.render.exchange import shown_name
from toolnames_core.render.exchange import table
from toolnames_core.rules import MCP_RULE
from toolnames_core.rules import RULES
from toolnames_core.rules import valid_name_pattern

__all__ = ["render_mcp"]


def _messages(side: str, data: bytes, content_type: str) -> list[dict]:
    if "text/event-stream" in content_type.lower():
        events, _ = sse_events(data, final=True)
        found = [read_messages(e.data) for e in events if e.data_spans]
        return [m.value for messages in found if messages for m in messages]
    messages = read_messages(data)
    return [m.value for m in messages or []]


def _listed(values: list[dict]) -> list[str]:
    names = []
    for value in values:
        result = value.get("result")
        tools = result.get("tools") if isinstance(result, dict) else None
        if isinstance(tools, list):
            names += [
                t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
            ]
    return names


def render_mcp(
    exchange: McpExchange,
    side: str,
    data: bytes,
    content_type: str = "",
    recorded: FlowRecord | None = None,
) -> str:
    """``side``: "request" or "answer"; ``data``: that message's body."""
    rule = RULES[exchange.rule]
    lines = [
        f"toolnames: MCP {side}",
        f"Name rule: {rule.describe()} (toolnames_mcp_rule); MCP's own: {MCP_RULE.describe()}",
    ]
    if recorded is not None and recorded.outcome:
        lines.append(f"Outcome: {recorded.outcome} in {recorded.mode} mode")
    values = _messages(side, data, content_type)
    methods = [
        f"{v['method']} (id {v['id']})" if "id" in v else str(v["method"])
        for v in values
        if isinstance(v.get("method"), str)
    ]
    if methods:
        lines += ["", "Messages: " + ", ".join(methods)]
    calls = [
        v["params"]["name"]
        for v in values
        if v.get("method") == "tools/call"
        and isinstance(v.get("params"), dict)
        and isinstance(v["params"].get("name"), str)
    ]
    if calls:
        lines += ["", f"Calls: {', '.join(shown_name(c) for c in calls)}"]
    names = _listed(values) if side == "answer" else []
    if names:
        valid = valid_name_pattern(rule).fullmatch
        rows = [
            (
                shown_name(name),
                len(name),
                name_verdict(name, MCP_RULE),
                ", ".join(r.id for r in rejecting_rules(name)) or "none",
                "as it is" if valid(name) else shown_name(alias_for(name, rule)),
            )
            for name in names
        ]
        lines += [
            "",
            f"Tools listed: {len(names)}",
            *table(("name", "len", "under mcp", "rejected by", "fix mode lists"), rows),
        ]
    if recorded is not None:
        lines += ["", *_findings(recorded.findings, "recorded by toolnames for this flow")]
        if recorded.fixes:
            rows = [
                (shown_name(f.old), shown_name(f.new), f.rewrite, f.path) for f in recorded.fixes
            ]
            lines += ["", f"Fixes: {len(recorded.fixes)}"]
            lines += table(("client or server sent", "sent on", "rewrite", "at"), rows)
    else:
        found = exchange.request_findings if side == "request" else exchange.response_findings
        lines += ["", *_findings(found, "checked now, without the session's earlier listings")]
    return "\n".join(lines) + "\n"


def _findings(findings: list[Finding], source: str) -> list[str]:
    if not findings:
        return [f"Findings: none ({source})"]
    lines = [f"Findings: {count_text(f.severity for f in findings)} ({source})"]
    for f in sorted(findings, key=lambda f: -SEVERITY_RANK[f.severity]):
        where = f"  at {f.path}" if f.path else ""
        lines.append(f"  {f.severity:<7}  {f.code}{where}")
        lines += textwrap.wrap(
            " ".join(f.message.split()),
            MESSAGE_WIDTH,
            initial_indent="      ",
            subsequent_indent="      ",
        )
    return lines
