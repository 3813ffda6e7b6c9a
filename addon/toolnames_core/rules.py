"""Each provider's tool-name rule, with the source it comes from.

Sources are sections of the project's docs/providers.md, which quotes the provider docs
and the error texts users pasted into public issues, each with its public URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolnames_core import codes
from toolnames_core.names import quote_name


@dataclass(frozen=True, slots=True)
class NameRule:
    id: str
    chars: str  # the allowed characters, as a regex character-class body
    max_len: int | None
    first: str | None = None  # allowed first characters, same notation
    rejects_duplicates: bool = False
    source: str = ""
    # Whether the provider rejects a request whose names break the rule. A provider that
    # validates no names (Ollama) has a rule that limits none: what toolnames still says
    # under it (an empty or duplicate name) is a warning, and fix mode renames nothing.
    enforced: bool = True
    # Whether the provider honours a forced tool choice; Ollama ignores tool_choice.
    honours_choice: bool = True

    def replayed(self) -> str:
        """What a call to a tool never offered does once the app sends it back in the history:
        the one place response-unknown-tool's text says it (docs/providers.md §1.2)."""
        if not self.enforced:
            # The provider checks no names: the history is never refused for one.
            return (
                f"Under rule {self.id} (the provider checks no names) it fails no later "
                "request, but the app has no such tool to run"
            )
        return "Kept in the history, this name can make every later request fail"

    def describe(self) -> str:
        if not self.enforced:
            return f"{self.id} (any name: the provider checks none)"
        parts = [self.chars]
        if self.first:
            parts.append(f"first {self.first}")
        if self.max_len:
            parts.append(f"max {self.max_len}")
        return f"{self.id} ({', '.join(parts)})"


_OPENAI_CHARS = "a-zA-Z0-9_-"
# Every character: the rule of a provider that limits none.
ANY_CHARS = r"\s\S"

RULES: dict[str, NameRule] = {
    r.id: r
    for r in [
        # docs/providers.md §2: FunctionObject.name "Must be a-z, A-Z, 0-9, or contain underscores
        # and dashes, with a maximum length of 64"; errors quote '^[a-zA-Z0-9_-]+$'. No
        # verbatim duplicate-name error was found for OpenAI, so duplicates only warn.
        NameRule("openai", _OPENAI_CHARS, 64, source="docs/providers.md §2"),
        # docs/providers.md §4: Azure errors quote '^[a-zA-Z0-9_-]{1,64}$'.
        NameRule("azure", _OPENAI_CHARS, 64, source="docs/providers.md §4"),
        # docs/providers.md §5: docs give ^[a-zA-Z0-9_-]{1,128}$; "tools: Tool names must be unique."
        NameRule(
            "anthropic", _OPENAI_CHARS, 128, rejects_duplicates=True, source="docs/providers.md §5"
        ),
        # docs/providers.md §6: "Must start with a letter or an underscore ... underscores (_), dots (.),
        # colons (:), or dashes (-), with a maximum length of 64"; "Duplicate function declaration".
        NameRule(
            "gemini",
            "a-zA-Z0-9_.:-",
            64,
            first="a-zA-Z_",
            rejects_duplicates=True,
            source="docs/providers.md §6",
        ),
        # docs/providers.md §7: ToolSpecification.name, length 1 to 64, pattern [a-zA-Z0-9_-]+.
        NameRule("bedrock", _OPENAI_CHARS, 64, source="docs/providers.md §7"),
        # docs/providers.md §8: "must be a-z, A-Z, 0-9, or contain underscores and dashes, with a
        # maximum length of 64".
        NameRule("mistral", _OPENAI_CHARS, 64, source="docs/providers.md §8"),
        # docs/providers.md §9: OpenAI-compatible; the 64 limit is reported, not documented.
        NameRule("groq", _OPENAI_CHARS, 64, source="docs/providers.md §9"),
        # docs/providers.md §2: DeepSeek repeats OpenAI's texts and rejects "Tool names must be unique."
        NameRule(
            "deepseek", _OPENAI_CHARS, 64, rejects_duplicates=True, source="docs/providers.md §2"
        ),
        # docs/providers.md §10: "(A-Za-z0-9_) and can't begin with a digit"; no length limit found.
        NameRule("cohere", "A-Za-z0-9_", None, first="A-Za-z_", source="docs/providers.md §10"),
        # docs/providers.md §11: Ollama validates no names (its api/types.go takes any string),
        # and ignores tool_choice on its OpenAI- and Anthropic-compatible endpoints.
        NameRule(
            "ollama",
            ANY_CHARS,
            None,
            enforced=False,
            honours_choice=False,
            source="docs/providers.md §11",
        ),
        # docs/providers.md §1.1: the one rule every provider above accepts.
        NameRule(
            "portable",
            "a-zA-Z0-9_",
            64,
            first="a-zA-Z_",
            rejects_duplicates=True,
            source="docs/providers.md §1",
        ),
    ]
}


# MCP's own rule for the names a server lists, which is no provider's (so not among RULES):
# docs/providers.md §21, "SHOULD be between 1 and 128 characters", A-Z, a-z, 0-9, _, -, .
MCP_RULE = NameRule("mcp", "A-Za-z0-9_.-", 128, source="docs/providers.md §21")
# The rules of providers, for "which of them reject this name" (portable is no provider; a
# rule the provider does not enforce rejects nothing it would).
PROVIDER_RULES = tuple(
    rule for rule_id, rule in RULES.items() if rule_id != "portable" and rule.enforced
)
# The rules toolnames advises a host to be checked under, when its verdict and the rule
# differ: a rule that limits no names is never advice (it would turn the checks off).
ADVISED_RULES = {rule_id: rule for rule_id, rule in RULES.items() if rule.enforced}


def rule_named(rule_id: str) -> NameRule:
    """The rule whose id is ``rule_id``, or a ValueError that lists the known ones."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise ValueError(f"unknown rule {rule_id!r}; known rules: {', '.join(RULES)}") from None


_compiled: dict[tuple[str, str | None], tuple[re.Pattern, re.Pattern | None]] = {}
_valid: dict[NameRule, re.Pattern] = {}


def valid_name_pattern(rule: NameRule) -> re.Pattern:
    """A pattern whose fullmatch accepts exactly the names with no ``name_violations``: one
    regex call settles the common case, a valid name, without building any message."""
    pattern = _valid.get(rule)
    if pattern is None:
        first = f"(?=[{rule.first}])" if rule.first else ""
        count = f"{{1,{rule.max_len}}}" if rule.max_len is not None else "+"
        pattern = _valid[rule] = re.compile(f"{first}[{rule.chars}]{count}")
    return pattern


def _patterns(rule: NameRule) -> tuple[re.Pattern, re.Pattern | None]:
    # Keyed by what the patterns are made of, not the rule's id: two rules may share an id
    # (a drifted provider's, a test's) and differ in their characters.
    key = (rule.chars, rule.first)
    if key not in _compiled:
        _compiled[key] = (
            re.compile(f"[^{rule.chars}]"),
            re.compile(f"[{rule.first}]") if rule.first else None,
        )
    return _compiled[key]


# Per rule, what each name it was asked about breaks: an agent sends the same tools, and
# history naming them, with every request, and fix mode's requests are the ones whose names
# break the rule. Bounded: a client inventing names cannot grow it without limit.
# Keyed by the rule's id, holding the rule itself: a frozen dataclass hashes every field.
_violations: dict[str, tuple[NameRule, dict[str, tuple[tuple[str, str], ...]]]] = {}
_MAX_REMEMBERED = 4096


def name_violations(name: str, rule: NameRule) -> list[tuple[str, str]]:
    """Every way ``name`` breaks ``rule``, as (code, reason) pairs; empty when it is valid."""
    entry = _violations.get(rule.id)
    if entry is None or entry[0] is not rule:
        entry = _violations[rule.id] = (rule, {})
    told = entry[1]
    found = told.get(name)
    if found is None:
        if len(told) >= _MAX_REMEMBERED:
            told.clear()
        found = told[name] = tuple(_violations_of(name, rule))
    return list(found)


def _violations_of(name: str, rule: NameRule) -> list[tuple[str, str]]:
    if name == "":
        if not rule.enforced:
            why = f"is empty; rule {rule.describe()} lets it pass, but no model can call it"
            return [(codes.NAME_EMPTY, why)]
        return [
            (codes.NAME_EMPTY, f"is empty; rule {rule.describe()} needs at least one character")
        ]
    out = []
    bad_chars, bad_first = _patterns(rule)
    if rule.max_len is not None and len(name) > rule.max_len:
        out.append(
            (
                codes.NAME_TOO_LONG,
                f"is over the {rule.max_len} characters allowed by rule {rule.describe()}",
            )
        )
    found = sorted(set(bad_chars.findall(name)))
    if found:
        shown = ", ".join(quote_name(c) for c in found[:8])
        out.append((codes.NAME_INVALID_CHARS, f"contains {shown}, outside rule {rule.describe()}"))
    # A first character that is already reported as invalid needs no second finding.
    if bad_first is not None and not bad_first.match(name) and name[0] not in found:
        out.append(
            (
                codes.NAME_INVALID_START,
                f"starts with {quote_name(name[0])}; rule {rule.describe()} needs a first character in {rule.first}",
            )
        )
    return out
