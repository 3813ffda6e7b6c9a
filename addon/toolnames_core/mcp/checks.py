"""What a listed MCP tool name is worth: MCP's own rule, the providers' rules, and what fix
mode sends in its place.

A server's names are valid MCP when they keep MCP's rule (``rules.MCP_RULE``); a client
then hands them to a model whose provider checks its own rule, which is where they fail
(``github.create_issue``: every provider but Gemini rejects the dot). So each name is
weighed against both, and the finding names the providers whose rule rejects it; its
severity is the rule chosen for MCP's (``toolnames_mcp_rule``): a warning when that rule
rejects it, else information.
"""

from __future__ import annotations

from toolnames_core import codes
from toolnames_core.model import Finding
from toolnames_core.names import quote_name
from toolnames_core.rules import MCP_RULE
from toolnames_core.rules import PROVIDER_RULES
from toolnames_core.rules import NameRule
from toolnames_core.rules import name_violations
from toolnames_core.rules import valid_name_pattern

__all__ = ["listed_findings", "rejecting_rules"]


def rejecting_rules(name: str) -> list[tuple[NameRule, str]]:
    """Each provider rule that rejects ``name``, with its first reason."""
    out = []
    for rule in PROVIDER_RULES:
        if not valid_name_pattern(rule).fullmatch(name):
            out.append((rule, name_violations(name, rule)[0][1]))
    return out


def listed_findings(name: str, path: str, rule: NameRule) -> list[Finding]:
    """The findings on one name a ``tools/list`` answer lists; ``rule``: toolnames_mcp_rule's."""
    found = []
    shown = quote_name(name)
    for _, reason in name_violations(name, MCP_RULE):
        found.append(
            Finding(
                codes.MCP_NAME_INVALID,
                "warning",
                path,
                f"MCP tool name {shown} {reason} (MCP's tool-name rule)",
                MCP_RULE.id,
            )
        )
    rejecting = rejecting_rules(name)
    if rejecting:
        ids = [r.id for r, _ in rejecting]
        ours = next((why for r, why in rejecting if r.id == rule.id), None)
        severity = "warning" if ours is not None else "info"
        why = ours if ours is not None else rejecting[0][1]
        found.append(
            Finding(
                codes.MCP_NAME_REJECTED,
                severity,
                path,
                f"MCP tool name {shown} is rejected by the rules of {', '.join(ids)}: it {why}",
                rule.id,
            )
        )
    return found
