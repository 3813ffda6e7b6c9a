"""Fix mode: point a mismatched named choice at the tool the client meant, never a guess;
and the one rewrite step an exchange's body and a session's message go through."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import NamedTuple

from toolnames_core import jsonsplice
from toolnames_core.aliases import plan_aliases
from toolnames_core.formats.base import Carried
from toolnames_core.model import Fix
from toolnames_core.model import JsonPath
from toolnames_core.model import RequestView
from toolnames_core.model import SkippedFix
from toolnames_core.names import quote_name
from toolnames_core.rewrites import REWRITES
from toolnames_core.rewrites import Rewrite
from toolnames_core.rules import NameRule


@dataclass(slots=True)
class FixPlan:
    fixes: list[Fix] = field(default_factory=list)
    # Mismatched names left alone, with the reason: shown to the user, who can fix the client.
    skipped: list[SkippedFix] = field(default_factory=list)


def plan_fixes(view: RequestView, rewrites: tuple[Rewrite, ...] = REWRITES) -> FixPlan:
    plan = FixPlan()
    offered = view.offered_names
    for choice in view.choices:
        for ref in choice.names:
            if ref.kind == "builtin" or ref.name in offered:
                continue
            matches: dict[str, list[str]] = {}
            for rewrite in rewrites:
                candidate = rewrite.apply(ref.name)
                if candidate is not None and candidate in offered:
                    matches.setdefault(candidate, []).append(rewrite.id)
            if len(matches) == 1:
                ((new, by),) = matches.items()
                plan.fixes.append(Fix(ref.where, ref.name, new, "+".join(by)))
            else:
                if matches:
                    could = [
                        f"{quote_name(n)} ({'+'.join(by)})" for n, by in sorted(matches.items())
                    ]
                    reason = f"could be {', '.join(could[:-1])} or {could[-1]}"
                else:
                    known = ", ".join(r.id for r in rewrites)
                    reason = f"matches no offered tool under a known client rewrite ({known})"
                plan.skipped.append(SkippedFix(ref.path, ref.name, reason))
    return plan


def apply_fixes(content: bytes, fixes: list[Fix], carried: Carried | None = None) -> bytes:
    """``content`` (JSON in UTF-8) with each fix's new value at its place; ``carried``: the
    places are inside the body the content carries encoded in a string (formats/base.py),
    which is decoded, changed and encoded again, and the string replaced, every other byte
    kept. UnicodeDecodeError when the content, or the body it carries, is not UTF-8."""
    if carried is None:
        # Each fix's old value is the string its plan read at its place (jsonsplice.py).
        return jsonsplice.replace_strings(content, {f.where: (f.old, f.new) for f in fixes})
    text = content.decode("utf-8")
    n = len(carried.where)
    start, end = jsonsplice.value_span(text, carried.where)
    inner = carried.decode(json.loads(text[start:end]))
    inner = jsonsplice.replace_strings(inner, {f.where[n:]: (f.old, f.new) for f in fixes})
    new = carried.encode(inner)
    return (text[:start] + json.dumps(new) + text[end:]).encode("utf-8")


class Rewritten(NamedTuple):
    """What fix mode did to one body or message."""

    fixes: list[Fix]  # what it changed; empty when it left the content as sent
    content: bytes | None  # the new bytes; None when nothing changed
    skipped: list[SkippedFix]  # what it left, and why
    aliases: dict[str, str]  # alias -> the app's name, for the answer; empty when unchanged


def rewrite(
    view: RequestView,
    rule: NameRule,
    content: bytes,
    not_utf8: str,
    choices: FixPlan | None = None,
    splices: Callable[[JsonPath], bool] | None = None,
    carried: Carried | None = None,
) -> Rewritten:
    """The planned fixes of ``content`` (``choices``, then an alias for every name ``rule``
    rejects elsewhere), spliced into its text. ``splices``: whether a planned place is in
    this content (a session plans with tools declared earlier, and splices none of them;
    None: every place is);
    ``not_utf8``: why every fix was left, when the content is not UTF-8; ``carried``: the
    places are inside the body ``content`` carries encoded (``apply_fixes``)."""
    choices = choices or FixPlan()
    renames = plan_aliases(view, rule, {f.where for f in choices.fixes})
    skipped = choices.skipped + renames.skipped
    planned = choices.fixes + renames.fixes
    if splices is not None:
        planned = [f for f in planned if splices(f.where)]
    if not planned:
        return Rewritten([], None, skipped, {})
    try:
        new = apply_fixes(content, planned, carried)
    except UnicodeDecodeError:  # the body, or the body it carries
        skipped += [SkippedFix(f.path, f.old, not_utf8) for f in planned]
        return Rewritten([], None, skipped, {})
    return Rewritten(planned, new, skipped, renames.aliases)
