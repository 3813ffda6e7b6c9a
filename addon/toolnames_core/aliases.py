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
from collections import Counter
from dataclasses import dataclass
from dataclasses import field

from toolnames_core.model import Fix
from toolnames_core.model import JsonPath
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import SkippedFix
from toolnames_core.model import tool_set
from toolnames_core.names import quote_name
from toolnames_core.rules import NameRule
from toolnames_core.rules import valid_name_pattern

__all__ = [
    "ALIAS_REWRITE",
    "AliasPlan",
    "FragmentRestorer",
    "Restorer",
    "alias_for",
    "plan_aliases",
]

ALIAS_REWRITE = "alias"
DIGEST_LEN = 8
# A rule without a length limit still gets aliases of a length every provider accepts.
DEFAULT_MAX_LEN = 64


def alias_for(name: str, rule: NameRule, digest_len: int = DIGEST_LEN) -> str:
    """The alias ``name`` is sent under when ``rule`` rejects it."""
    key = (name, rule.chars, rule.first, rule.max_len, digest_len)
    alias = _aliases.get(key)
    if alias is None:
        if len(_aliases) >= _MAX_REMEMBERED:
            _aliases.clear()
        alias = _aliases[key] = _alias(name, rule, digest_len)
    return alias


# An agent sends the same tools with every request, so fix mode aliases the same names over
# and over: each alias is made once (it depends on the name and the rule's letter alone).
# Bounded: a client inventing names cannot grow it without limit.
_aliases: dict[tuple, str] = {}
_MAX_REMEMBERED = 8192
# The same for the fix at each place (immutable, so requests share it): a frozen record costs
# more to make than to look up, and a renamed request holds one per place.
_fixes: dict[tuple, Fix] = {}


def _alias(name: str, rule: NameRule, digest_len: int) -> str:
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


def plan_aliases(view: RequestView, rule: NameRule, keep: set = frozenset()) -> AliasPlan:
    """An alias for every name ``rule`` rejects, at every place the request holds it.
    ``keep``: places another fix already rewrites. A rule the provider does not enforce
    rejects nothing it would: nothing is renamed under it."""
    if not rule.enforced:
        return AliasPlan()
    if not view.parts:
        plan = _plan_with_tools(view, rule, keep)
        if plan is not None:
            return plan
    return _plan(view, rule, keep)


def _renamed(ref: NameRef, keep: set) -> bool:
    """Whether fix mode may rename the name at ``ref``. Built-in tools are named by their
    type, and names inside a Responses namespace follow the namespace's own rule: neither is
    the provider's function-name rule, so neither is renamed (tested inline: fix mode plans a
    place per tool and call); ``keep``: places another fix already rewrites."""
    return ref.kind != "builtin" and ref.namespace is None and (not keep or ref.where not in keep)


def _plan(view: RequestView, rule: NameRule, keep: set) -> AliasPlan:
    offered = [t.name for t in view.tools if t.kind != "builtin" and t.namespace is None]
    offers = set(offered)
    # A choice is renamed with the tool it names; one that names no offered tool stays as
    # sent (an alias would not make it name one: that is choice-not-in-tools).
    chosen_refs = [r for c in view.choices for r in c.names if r.name in offers]
    places = [ref for ref in (*view.tools, *chosen_refs, *view.history) if _renamed(ref, keep)]
    plan = AliasPlan()
    invalid = set()
    taken = set()
    valid = valid_name_pattern(rule).fullmatch
    for ref in places:
        (taken if valid(ref.name) else invalid).add(ref.name)
    if not invalid:
        return plan
    times = Counter(offered)
    if view.parts:
        # A batch's requests each offer their own tools: a name is offered twice only if
        # one request offers it twice (the same alias serves it in every request).
        times = Counter()
        for part in view.parts:
            own = Counter(t.name for t in part.tools if t.kind != "builtin" and t.namespace is None)
            times |= own
    aliased, plan.skipped = _aliased(invalid, taken, times, rule)
    plan.fixes = [
        _fix_at(ref.where, ref.name, aliased[ref.name]) for ref in places if ref.name in aliased
    ]
    plan.aliases = {alias: name for name, alias in aliased.items()}
    return plan


def _aliased(
    invalid: set[str], taken: set[str], times: Counter, rule: NameRule
) -> tuple[dict[str, str], list[SkippedFix]]:
    """The alias of each ``invalid`` name (name -> alias), and the names left as sent: an
    alias must differ from every name ``taken`` (sent as it is) and every other alias."""
    aliased: dict[str, str] = {}
    skipped = []
    used: set[str] = set()  # aliased.values(), to look up
    for name in sorted(invalid):
        if times[name] > 1:
            skipped.append(
                SkippedFix(
                    "",
                    name,
                    f"is offered {times[name]} times; no alias can tell them apart",
                )
            )
            continue
        alias = alias_for(name, rule)
        if alias in taken or alias in used:
            alias = alias_for(name, rule, digest_len=2 * DIGEST_LEN)
        if alias in taken or alias in used:
            skipped.append(
                SkippedFix("", name, f"would be sent as {quote_name(alias)}, a name already taken")
            )
            continue
        aliased[name] = alias
        used.add(alias)
    return aliased, skipped


def _fix_at(where: JsonPath, name: str, alias: str) -> Fix:
    key = (where, name, alias)
    fix = _fixes.get(key)
    if fix is None:
        if len(_fixes) >= _MAX_REMEMBERED:
            _fixes.clear()
        fix = _fixes[key] = Fix(where, name, alias, ALIAS_REWRITE)
    return fix


@dataclass(frozen=True, slots=True)
class _ToolsPlan:
    """The plan of a request whose every other renamed place names an offered tool: its
    tools alone decide every alias then (``_plan`` of the tools alone)."""

    # Shared by every request with these tools: alias_of is only read, aliases copied.
    alias_of: dict[str, str | None]  # every offered name -> its alias; None: sent as it is
    fixes: tuple[Fix, ...]  # the tools' own places
    skipped: tuple[SkippedFix, ...]
    aliases: dict[str, str]  # alias -> the app's name


def _plan_with_tools(view: RequestView, rule: NameRule, keep: set) -> AliasPlan | None:
    """The plan ``_plan`` makes, from what the tools alone decide (made once for the same
    tools, ``model.tool_set``), and the other places' fixes; None when another place names
    a tool not offered (its name takes part in every alias: ``_plan`` plans it whole) or
    another fix rewrites a tool's place."""
    tools = tool_set(view.tools)
    if keep and not keep.isdisjoint(tools.wheres):
        return None
    made = tools.remembered(("plan_aliases", rule.id), rule)
    if made is None:
        alone = _plan(RequestView(view.api, tools=view.tools), rule, frozenset())
        offered = [t.name for t in view.tools if t.kind != "builtin" and t.namespace is None]
        aliased = {name: alias for alias, name in alone.aliases.items()}
        made = _ToolsPlan(
            {name: aliased.get(name) for name in offered},
            tuple(alone.fixes),
            tuple(alone.skipped),
            alone.aliases,
        )
        tools.remember(("plan_aliases", rule.id), rule, made)
    alias_of = made.alias_of
    fixes = list(made.fixes)
    chosen = [r for c in view.choices for r in c.names if r.name in alias_of]
    # A long conversation holds thousands of calls: _renamed and _fix_at inline, each call
    # a step or two (its fix is remembered at its place, as _fix_at remembers it).
    known = _fixes
    append = fixes.append
    for refs in (chosen, view.history):
        for ref in refs:
            if ref.kind == "builtin" or ref.namespace is not None:
                continue
            where = ref.where
            if keep and where in keep:
                continue
            name = ref.name
            alias = alias_of.get(name, _UNOFFERED)
            if alias is None:
                continue
            if alias is _UNOFFERED:
                return None
            fix = known.get((where, name, alias))
            append(fix if fix is not None else _fix_at(where, name, alias))
    return AliasPlan(fixes, dict(made.aliases), list(made.skipped))


_UNOFFERED = ""  # no alias is empty


# What a Restorer looks for: a string value under a ``name`` or ``recipient_name`` key, and
# inside a JSON string (OpenAI's parallel wrapper names its calls inside its arguments) under
# an escaped ``recipient_name``; which alias it is (after ``functions.``, or whole), if any,
# a dict says. One pattern for every set of aliases: a pattern of the aliases themselves was
# looked up for each flow's Restorer by the frozenset of its aliases (17 us a flow at 1,000
# aliases; 0.1 us now), and made for each new set (issue 25). The pattern starts with the
# literal ``name`` and looks behind it for the key's opening quote: re then finds each
# candidate with a fast literal search, where a pattern opening on a choice tries every quote
# of the event.
_NAME_VALUE = re.compile(
    rb'name(?:(?:(?<="name)|(?<="recipient_name))("\s*:\s*")([^"\\]+)(")'
    rb'|(?<=\\"recipient_name)(\\"\s*:\s*\\")([^"\\]+)(\\"))'
)
# The one name of an event as compact JSON writes it, with the quote before its key: what
# nearly every streamed event that names a tool holds.
_COMPACT_NAME = b'"name":"'
_FUNCTIONS = b"functions."


def _json_text(name: str, escaped: bool) -> bytes:
    """``name`` as a JSON string's content, ASCII-escaped so that any framing stays valid;
    ``escaped``: inside another JSON string (a wrapper's arguments), escaped once more."""
    if name.isascii() and name.isprintable() and '"' not in name and "\\" not in name:
        return name.encode()  # what json.dumps writes of it, either way, without its steps
    text = json.dumps(name)[1:-1]
    if escaped:
        text = json.dumps(text)[1:-1]
    return text.encode()


class Restorer:
    """Puts the app's names back into an answer, or any part of one (an event)."""

    # What a stream's tap may pass a chunk by for (streams.StreamTap): data without
    # ``needle`` comes back as it went in (every name it restores sits after ``name``), and
    # a Restorer waits on nothing from one call to the next.
    needle = b"name"
    under_way = ()

    def __init__(self, aliases: dict[str, str]) -> None:
        if not aliases:
            raise ValueError("a Restorer needs at least one alias")
        self.aliases = aliases
        self.restored = 0  # names put back so far

    def _value(self, value: bytes, escaped: bool) -> bytes | None:
        """What goes in place of a name's ``value`` (its bytes between the quotes): the app's
        name (after ``functions.`` if the value begins so and the rest is an alias), written
        as JSON writes it; None if the value is no alias of this exchange's (a name the app
        sent valid, or a name no request of this exchange sent)."""
        aliases = self.aliases
        # Aliases are valid names, ASCII: bytes that are no UTF-8 are none of them.
        if value.startswith(_FUNCTIONS) and len(value) > len(_FUNCTIONS):
            app = aliases.get(value[len(_FUNCTIONS) :].decode("utf-8", "surrogateescape"))
            if app is not None:
                return _FUNCTIONS + _json_text(app, escaped)
        app = aliases.get(value.decode("utf-8", "surrogateescape"))
        return None if app is None else _json_text(app, escaped)

    def _original(self, match: re.Match) -> bytes | None:
        """What goes where ``match`` is, or None if its value is no alias."""
        escaped = match[1] is None
        colon, value, after = match.group(4, 5, 6) if escaped else match.group(1, 2, 3)
        new = self._value(value, escaped)
        if new is None:
            return None
        self.restored += 1
        # The match starts at the key's ``name``: its quote (and ``recipient_``) stay put.
        return b"name" + colon + new + after

    def __call__(self, data: bytes) -> bytes:
        # Every match holds ``name`` (``"name"`` or ``recipient_name``), and nearly no event of
        # a stream does (an arguments fragment, text, a finish): one C search tells.
        at = data.find(b"name")  # find, not in: docs/performance.md
        if at == -1:
            return data
        return self.restore_from(data, at)

    def restore_from(self, data: bytes, at: int) -> bytes:
        """``data`` restored, ``at`` where ``name`` first occurs in it (``data.find(b"name")``,
        not -1): for a caller that has searched already, as a stream's restore has."""
        if at and data.find(b"name", at + 4) == -1 and data.startswith(_COMPACT_NAME, at - 1):
            # The event's one name, as compact JSON writes it (a streamed call's start): the
            # pattern could match only here, and does where a quote ends a value without a
            # backslash. Read by slices, where the pattern's search and match object cost
            # more than the rest of giving the name back (a call's event: 3.0 -> 2.2 us).
            start = at - 1 + len(_COMPACT_NAME)
            end = data.find(b'"', start)
            value = data[start:end]
            if end <= start or value.find(b"\\") != -1:
                return data
            new = self._value(value, False)
            if new is None:
                return data
            self.restored += 1
            return b"".join((data[:start], new, data[end:]))  # one copy fewer than a + b + c
        search = _NAME_VALUE.search
        match = search(data, at)
        pieces: list[bytes] = []
        done = 0
        while match is not None:
            start = match.start()
            original = self._original(match)
            if original is None:
                # No alias here: the search goes on from the next byte, as a pattern of the
                # aliases themselves would have, which never matched here.
                match = search(data, start + 1)
                continue
            pieces += [data[done:start], original]
            done = match.end()
            match = search(data, done)
        if not pieces:
            return data
        pieces.append(data[done:])
        return b"".join(pieces)

    def name(self, called: str) -> str:
        """The app's name for a called name, if it is an alias of this exchange."""
        return self.aliases.get(called, called)


_RECIPIENT_TAG = '"recipient_name"'
_RECIPIENT_VALUE = re.compile(r'"recipient_name"\s*:\s*"[^"\\]*"')
# A recipient that has not ended within this many characters is no name: it goes on.
_MAX_HELD = 4096


class FragmentRestorer:
    """Finds the app's names inside a parallel wrapper's arguments when they stream as
    fragments of one JSON text (``"arguments": "{\\"tool_uses\\":[{\\"recipi"``): an alias may
    be split over any number of fragments, so a call's fragments are read as one text, and
    one that ends where a recipient name may begin waits for the next (``ambiguous``)."""

    def __init__(self, restorer: Restorer) -> None:
        self.restorer = restorer
        # Made when a wrapper's arguments are first restored: every streamed OpenAI answer in
        # fix mode makes a FragmentRestorer, nearly none meets a wrapper, and escaping and
        # joining 1,000 aliases cost some 10 ms a stream (issue 25).
        self._pattern: re.Pattern | None = None

    @property
    def pattern(self) -> re.Pattern:
        if self._pattern is None:
            aliases = sorted(self.restorer.aliases, key=len, reverse=True)
            names = "|".join(re.escape(a) for a in aliases)
            self._pattern = re.compile(
                r'("recipient_name"\s*:\s*")(functions\.)?(' + names + r')(")'
            )
        return self._pattern

    def _original(self, match: re.Match) -> str:
        self.restorer.restored += 1
        # The name as the content of a JSON string, within the arguments' JSON text.
        original = json.dumps(self.restorer.aliases[match[3]])[1:-1]
        return match[1] + (match[2] or "") + original + match[4]

    def restore(self, text: str) -> str:
        """``text`` (a wrapper's arguments so far) with every whole recipient alias given back."""
        return self.pattern.sub(self._original, text)

    @staticmethod
    def ambiguous(text: str) -> bool:
        """Whether ``text`` ends where a recipient name may begin or has not ended."""
        start = text.rfind(_RECIPIENT_TAG)
        if start >= 0 and not _RECIPIENT_VALUE.match(text, start):
            return len(text) - start <= _MAX_HELD  # its value is not whole yet
        tag = _RECIPIENT_TAG
        return any(text.endswith(tag[:size]) for size in range(1, min(len(tag), len(text) + 1)))
