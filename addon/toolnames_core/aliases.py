"""Fix mode's renaming: a name the provider's rule rejects is sent as an alias the rule
accepts, everywhere it occurs in the request, and the answer gets the app's own name back.

An alias depends on the name and the rule alone: the name made valid (every character
the rule rejects becomes ``_``, a first character it rejects gets a ``_`` before it),
cut to leave room for ``_`` and the first 8 hex digits of the name's SHA-256. So the same
name gets the same alias in every request, whatever the order of the tools, and the
history of a conversation agrees with its tools without any state kept between requests;
two different names never share an alias (short of a hash collision, which is checked).
Names the rule accepts are never touched.

Restoring is exact: only a string that is a call's name (``"name"``, or OpenAI's parallel
wrapper's ``"recipient_name": "functions.…"``) and equals an alias of this exchange is
replaced; every other byte of the answer stays as the provider sent it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from dataclasses import field

from toolnames_core.model import Fix
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import SkippedFix
from toolnames_core.names import quote_name
from toolnames_core.rules import NameRule
from toolnames_core.rules import valid_name_pattern

__all__ = ["ALIAS_REWRITE", "AliasPlan", "Restorer", "alias_for", "plan_aliases"]

ALIAS_REWRITE = "alias"
DIGEST_LEN = 8
# A rule without a length limit still gets aliases of a length every provider accepts.
DEFAULT_MAX_LEN = 64


def alias_for(name: str, rule: NameRule, digest_len: int = DIGEST_LEN) -> str:
    """The alias ``name`` is sent under when ``rule`` rejects it."""
    stem = re.sub(f"[^{rule.chars}]", "_", name)
    if rule.first and not re.match(f"[{rule.first}]", stem):
        stem = "_" + stem
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:digest_len]
    limit = rule.max_len or DEFAULT_MAX_LEN
    return f"{stem[: limit - digest_len - 1]}_{digest}"


@dataclass(slots=True)
class AliasPlan:
    fixes: list[Fix] = field(default_factory=list)  # one per place a name is renamed
    aliases: dict[str, str] = field(default_factory=dict)  # alias -> the app's name
    skipped: list[SkippedFix] = field(default_factory=list)


def _renamable(ref: NameRef) -> bool:
    # Built-in tools are named by their type, and names inside a Responses namespace
    # follow the namespace's own rule: neither is the provider's function-name rule.
    return ref.kind != "builtin" and ref.namespace is None


def plan_aliases(view: RequestView, rule: NameRule, keep: set = frozenset()) -> AliasPlan:
    """An alias for every name ``rule`` rejects, at every place the request holds it.
    ``keep``: places another fix already rewrites."""
    valid = valid_name_pattern(rule).fullmatch
    offered = [t.name for t in view.tools if _renamable(t)]
    # A choice is renamed with the tool it names; one that names no offered tool stays as
    # sent (an alias would not make it name one: that is choice-not-in-tools).
    chosen_refs = [r for c in view.choices for r in c.names if r.name in offered]
    places = [
        ref
        for ref in (*view.tools, *chosen_refs, *view.history)
        if _renamable(ref) and ref.where not in keep
    ]
    plan = AliasPlan()
    invalid = {ref.name for ref in places if not valid(ref.name)}
    if not invalid:
        return plan
    taken = {ref.name for ref in places if valid(ref.name)}
    aliased: dict[str, str] = {}
    for name in sorted(invalid):
        if offered.count(name) > 1:
            plan.skipped.append(
                SkippedFix(
                    "",
                    name,
                    f"is offered {offered.count(name)} times; no alias can tell them apart",
                )
            )
            continue
        alias = alias_for(name, rule)
        if alias in taken or alias in aliased.values():
            alias = alias_for(name, rule, digest_len=2 * DIGEST_LEN)
        if alias in taken or alias in aliased.values():
            plan.skipped.append(
                SkippedFix("", name, f"would be sent as {quote_name(alias)}, a name already taken")
            )
            continue
        aliased[name] = alias
    for ref in places:
        alias = aliased.get(ref.name)
        if alias is not None:
            plan.fixes.append(Fix(ref.where, ref.name, alias, ALIAS_REWRITE))
    plan.aliases = {alias: name for name, alias in aliased.items()}
    return plan


class Restorer:
    """Puts the app's names back into an answer, or any part of one (an event)."""

    def __init__(self, aliases: dict[str, str]) -> None:
        if not aliases:
            raise ValueError("a Restorer needs at least one alias")
        self.aliases = aliases
        names = "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True))
        # Aliases are ASCII letters, digits, "_" and "-": JSON writes them as they are.
        # OpenAI's parallel wrapper names its calls inside its arguments, a JSON string, so
        # there the quotes are escaped.
        self.pattern = re.compile(
            rb'("(?:name|recipient_name)"\s*:\s*")(functions\.)?(' + names.encode() + rb')(")'
            rb'|(\\"recipient_name\\"\s*:\s*\\")(functions\.)?(' + names.encode() + rb')(\\")'
        )
        self.restored = 0  # names put back so far

    def _original(self, match: re.Match) -> bytes:
        self.restored += 1
        escaped = match[1] is None
        before, prefix, alias, after = match.groups()[4:] if escaped else match.groups()[:4]
        # The name as a JSON string's content, ASCII-escaped, so any framing stays valid;
        # inside the arguments string, escaped once more.
        original = json.dumps(self.aliases[alias.decode()])[1:-1]
        if escaped:
            original = json.dumps(original)[1:-1]
        return before + (prefix or b"") + original.encode() + after

    def __call__(self, data: bytes) -> bytes:
        return self.pattern.sub(self._original, data)

    def name(self, called: str) -> str:
        """The app's name for a called name, if it is an alias of this exchange."""
        return self.aliases.get(called, called)
