"""Which wire format a request speaks, and whose name rule applies to it."""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass

from toolnames_core.rules import RULES

_BEDROCK_PATH = re.compile(r"/model/[^/]+/converse(?:-stream)?$")
_GEMINI_METHOD = re.compile(r":(?:stream)?[gG]enerateContent$")


def detect_api(method: str, path: str) -> str | None:
    if method.upper() != "POST":
        return None
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/v1/messages"):
        return "anthropic-messages"
    if _GEMINI_METHOD.search(path):
        return "gemini"
    if _BEDROCK_PATH.search(path):
        return "bedrock-converse"
    return None


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
)

_API_RULES = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic-messages": "anthropic",
    "gemini": "gemini",
    "bedrock-converse": "bedrock",
}


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
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; known rules: {', '.join(RULES)}")
    return RuleOverride(pattern, rule)


def choose_rule(
    api: str, host: str, overrides: tuple[RuleOverride, ...] = (), port: int | None = None
) -> str:
    """The id of the rule for ``host``: the user's first matching override, then what we know.

    An override pattern may name a port (``localhost:4000=anthropic`` for a local gateway):
    it is matched against ``host:port`` as well as the bare host.
    """
    return _choose_rule(api, host.lower(), tuple(overrides), port)


# Every request asks; a dozen fnmatch calls per request add up, and hosts repeat.
@functools.lru_cache(maxsize=1024)
def _choose_rule(api: str, host: str, overrides: tuple[RuleOverride, ...], port: int | None) -> str:
    with_port = f"{host}:{port}" if port else None
    for override in overrides:
        if fnmatch.fnmatchcase(host, override.host_pattern) or (
            with_port and fnmatch.fnmatchcase(with_port, override.host_pattern)
        ):
            return override.rule
    for pattern, rule in _HOST_RULES:
        if fnmatch.fnmatchcase(host, pattern):
            return rule
    return _API_RULES[api]
