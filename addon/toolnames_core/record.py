"""The record toolnames keeps of a flow: what it found, fixed or blocked, as typed data.

A live flow's record is made from its ``Exchange``; a saved flow's is read back from its
metadata (``from_metadata``), validated there once, since a file may come from another
toolnames version or a hand edit. Everything that shows a flow (marker, comment, log line,
content view, report, scanner) reads this record, never the metadata dict.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import NamedTuple

from toolnames_core import codes
from toolnames_core.exchange import Exchange
from toolnames_core.model import SEVERITY_RANK
from toolnames_core.model import Finding
from toolnames_core.model import SkippedFix

__all__ = ["COMMENT_PREFIX", "MARKERS", "FlowRecord", "RecordedFix", "storable"]

# Markers that tell the three outcomes apart at a glance in mitmweb's flow list.
MARKERS = {"blocked": ":no_entry:", "fixed": ":hammer_and_wrench:", "flagged": ":warning:"}
COMMENT_PREFIX = "toolnames"
ACTIONS = ("observed", "fixed", "blocked")


class RecordedFix(NamedTuple):
    """One rewritten name as recorded: where, the client's value, what was sent, and why."""

    path: str
    old: str
    new: str
    rewrite: str

    def to_dict(self) -> dict:
        return {"path": self.path, "from": self.old, "to": self.new, "rewrite": self.rewrite}


@dataclass(slots=True)
class FlowRecord:
    api: str
    rule: str
    mode: str
    action: str  # one of ACTIONS
    findings: list[Finding] = field(default_factory=list)
    fixes: list[RecordedFix] = field(default_factory=list)
    fix_skipped: list[SkippedFix] = field(default_factory=list)
    saved: bool = False

    @classmethod
    def of(cls, exchange: Exchange, mode: str) -> FlowRecord:
        action = "blocked" if exchange.blocked else "fixed" if exchange.fixes else "observed"
        return cls(
            exchange.api,
            exchange.rule,
            mode,
            action,
            exchange.findings,
            [RecordedFix(f.path, f.old, f.new, f.rewrite) for f in exchange.fixes],
            list(exchange.fix_skipped),
        )

    # -- as flow metadata ----------------------------------------------------------------

    def to_metadata(self) -> dict:
        meta: dict = {
            "api": self.api,
            "rule": self.rule,
            "mode": self.mode,
            "action": self.action,
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.fixes:
            meta["fixes"] = [f.to_dict() for f in self.fixes]
        if self.fix_skipped:
            meta["fix_skipped"] = [s.to_dict() for s in self.fix_skipped]
        if self.saved:
            meta["saved"] = True
        return storable(meta)

    @classmethod
    def from_metadata(cls, meta: object) -> FlowRecord | None:
        """The record in a flow's metadata; None if there is none, or none this version reads."""
        if not isinstance(meta, dict):
            return None
        head = [meta.get(k) for k in ("api", "rule", "mode", "action")]
        findings = _entries(meta.get("findings", []), ("code", "severity", "path", "message"))
        fixes = _entries(meta.get("fixes", []), ("path", "from", "to", "rewrite"))
        skipped = _entries(meta.get("fix_skipped", []), ("path", "name", "reason"))
        if not all(isinstance(v, str) for v in head) or None in (findings, fixes, skipped):
            return None
        if head[3] not in ACTIONS or (head[3] == "fixed" and not fixes):
            return None
        return cls(
            *head,
            findings=[
                Finding(f["code"], f["severity"], f["path"], f["message"], f.get("rule"))
                for f in findings
                if f["severity"] in SEVERITY_RANK
            ],
            fixes=[RecordedFix(f["path"], f["from"], f["to"], f["rewrite"]) for f in fixes],
            fix_skipped=[SkippedFix(s["path"], s["name"], s["reason"]) for s in skipped],
            saved=meta.get("saved") is True,
        )

    # -- what it shows -------------------------------------------------------------------

    @property
    def worst(self) -> str | None:
        return max((f.severity for f in self.findings), key=SEVERITY_RANK.__getitem__, default=None)

    @property
    def flagged(self) -> bool:
        return self.worst in ("warning", "error") or bool(self.fixes)

    @property
    def outcome(self) -> str | None:
        """``blocked``, ``fixed``, ``flagged``, or None for a flow with nothing to show."""
        if self.action in ("blocked", "fixed"):
            return self.action
        return "flagged" if self.flagged else None

    def comment(self) -> str:
        """One line: the outcome and the worst finding, as the flow list shows it."""
        if self.outcome == "fixed":
            fixed = "; ".join(f"{f.path} '{f.old}' → '{f.new}' ({f.rewrite})" for f in self.fixes)
            text = f"{COMMENT_PREFIX} fixed {fixed}"
            others = [f for f in self.findings if f.code != codes.CHOICE_NOT_IN_TOOLS]
        else:
            lead = sorted(self.findings, key=lambda f: -SEVERITY_RANK[f.severity])
            head = lead[0] if lead else None
            verb = "blocked" if self.outcome == "blocked" else head.severity if head else ""
            text = (
                f"{COMMENT_PREFIX} {verb}: {head.code}: {head.message}" if head else COMMENT_PREFIX
            )
            others = lead[1:]
        if others:
            text += f" (+{len(others)} more)"
        return storable(" ".join(text.split()))  # one line, whatever the names held


def _entries(items: object, keys: tuple[str, ...]) -> list[dict] | None:
    """``items`` if it is a list of objects each with a string under every key, else None."""
    if isinstance(items, list) and all(
        isinstance(item, dict) and all(isinstance(item.get(k), str) for k in keys) for item in items
    ):
        return items
    return None


def storable(value):
    """``value`` with every string encodable as UTF-8.

    JSON lets a name hold a lone surrogate ("\\ud800"); mitmproxy writes metadata and
    comments as UTF-8, so one raw surrogate would make the flow impossible to save.
    """
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {k: storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [storable(v) for v in value]
    return value
