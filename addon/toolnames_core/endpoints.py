"""Whose name rule applies to a request: the user's overrides, the hosts whose rule differs
from their format's, then the format's own (which format a request speaks is
``formats.format_for``)."""

from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass
from typing import Protocol

from toolnames_core.rules import RULES
from toolnames_core.rules import NameRule
from toolnames_core.rules import rule_named

__all__ = ["RULES", "RuleOverride", "RuleSource", "choose_rule", "parse_rule_override"]


class RuleSource(Protocol):
    """What a rule is chosen for: a wire format (formats.WireFormat) or a WebSocket protocol
    (sessions.SessionProtocol)."""

    # The id of the rule a host not in the host table gets.
    rule: str
    # Whether the host table's rule for a known host wins over ``rule``.
    host_decides: bool


# Hosts whose rule differs from what their wire format implies (docs/providers.md §0).
_HOST_RULES: tuple[tuple[str, str], ...] = (
    ("*.openai.azure.com", "azure"),
    ("*.cognitiveservices.azure.com", "azure"),
    ("*.services.ai.azure.com", "azure"),
    ("api.cohere.com", "cohere"),
    ("api.cohere.ai", "cohere"),
    ("api.mistral.ai", "mistral"),
    ("api.groq.com", "groq"),
    ("api.deepseek.com", "deepseek"),
    ("generativelanguage.googleapis.com", "gemini"),
    ("*aiplatform.googleapis.com", "gemini"),
    ("aiplatform.*.rep.googleapis.com", "gemini"),
    ("api.anthropic.com", "anthropic"),
    ("bedrock-runtime.*.amazonaws.com", "bedrock"),
    # Ollama's default port (docs/providers.md §11): whatever API it is asked in, Ollama
    # limits no names and ignores tool_choice. A pattern with a port is matched against
    # host:port; Ollama on another port is named with toolnames_rule='HOST:PORT=ollama'.
    ("*:11434", "ollama"),
)


@dataclass(frozen=True, slots=True)
class RuleOverride:
    host_pattern: str
    rule: str


def parse_rule_override(spec: str) -> RuleOverride:
    """Parse ``HOST_PATTERN=RULE``, e.g. ``openrouter.ai=anthropic`` or ``*=portable``."""
    pattern, sep, rule = spec.partition("=")
    pattern, rule = pattern.strip().lower(), rule.strip().lower()
    if not sep or not pattern or not rule:
        raise ValueError(f"expected HOST_PATTERN=RULE, got {spec!r}")
    rule_named(rule)  # a clear error for a rule that does not exist
    return RuleOverride(pattern, rule)


def choose_rule(
    source: RuleSource,
    host: str,
    overrides: tuple[RuleOverride, ...] = (),
    port: int | None = None,
) -> NameRule:
    """The rule for a request of ``source`` (a format, or a WebSocket protocol) to ``host``:
    the user's first matching override, then the host's own rule if the host table knows it
    and the format lets the host decide, then the format's. The rule depends on the API as
    well as the host: one host can serve formats under different rules.

    An override pattern may name a port (``localhost:4000=anthropic`` for a local gateway):
    it is matched against ``host:port`` as well as the bare host.
    """
    rule = _choose_rule(source.rule, source.host_decides, host.lower(), tuple(overrides), port)
    return RULES[rule]


# Every request asks; a dozen fnmatch calls per request add up, and hosts repeat.
@functools.lru_cache(maxsize=1024)
def _choose_rule(
    default: str,
    host_decides: bool,
    host: str,
    overrides: tuple[RuleOverride, ...],
    port: int | None,
) -> str:
    with_port = f"{host}:{port}" if port else None
    for override in overrides:
        if fnmatch.fnmatchcase(host, override.host_pattern) or (
            with_port and fnmatch.fnmatchcase(with_port, override.host_pattern)
        ):
            return override.rule
    if host_decides:
        for pattern, rule in _HOST_RULES:
            if fnmatch.fnmatchcase((with_port or "") if ":" in pattern else host, pattern):
                return rule
    return default
