"""Fix mode: point a mismatched named choice at the tool the client meant, never a guess."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from toolnames_core import jsonsplice
from toolnames_core.model import Fix
from toolnames_core.model import RequestView
from toolnames_core.model import SkippedFix
from toolnames_core.names import quote_name
from toolnames_core.rewrites import REWRITES
from toolnames_core.rewrites import Rewrite


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


def apply_fixes(text: str, fixes: list[Fix]) -> str:
    return jsonsplice.replace_values(text, {fix.where: fix.new for fix in fixes})
