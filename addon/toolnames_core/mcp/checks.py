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
from toolnames_core.rules import RULES
from toolnames_core.rules import NameRule
from toolnames_core.rules import name_violations
from toolnames_core.rules import valid_name_pattern

__all__ = ["accepted", "listed_findings", "rejecting_rules"]


# A name every provider and MCP accept (the portable rule's, docs/providers.md §1.1): one
# regex call settles the usual name of a listing of a thousand.
_ACCEPTED_BY_ALL = valid_name_pattern(RULES["portable"]).fullmatch
_PROVIDERS = tuple((rule, valid_name_pattern(rule).fullmatch) for rule in PROVIDER_RULES)
_MCP_VALID = valid_name_pattern(MCP_RULE).fullmatch


def accepted(name: str) -> bool:
    """Whether MCP and every provider accept ``name``: it has no finding."""
    return _ACCEPTED_BY_ALL(name) is not None


def rejecting_rules(name: str) -> list[NameRule]:
    """Each provider rule that rejects ``name``."""
    if _ACCEPTED_BY_ALL(name):
        return []
    return [rule for rule, valid in _PROVIDERS if not valid(name)]


def listed_findings(name: str, path: str, rule: NameRule) -> list[Finding]:
    """The findings on one name a ``tools/list`` answer lists; ``rule``: toolnames_mcp_rule's."""
    if _ACCEPTED_BY_ALL(name):
        return []
    found = []
    shown = quote_name(name)
    violations = [] if _MCP_VALID(name) else name_violations(name, MCP_RULE)
    for _, reason in violations:
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
        ids = [r.id for r in rejecting]
        ours = rule in rejecting
        severity = "warning" if ours else "info"
        # The reason under the chosen rule, else under the first that rejects it.
        why = name_violations(name, rule if ours else rejecting[0])[0][1]
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
