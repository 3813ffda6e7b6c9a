"""What a flagged flow shows: marker, one-line comment, metadata and log line, as plain data."""

from __future__ import annotations

from toolnames_core.model import SEVERITY_RANK
from toolnames_core.model import Finding

# Markers that tell the three outcomes apart at a glance in mitmweb's flow list.
MARKERS = {"blocked": ":no_entry:", "fixed": ":hammer_and_wrench:", "flagged": ":warning:"}
COMMENT_PREFIX = "toolnames"


def worst(findings: list[dict]) -> str | None:
    ranked = [f["severity"] for f in findings if f["severity"] in SEVERITY_RANK]
    return max(ranked, key=SEVERITY_RANK.__getitem__, default=None)


_FINDING_KEYS = ("code", "severity", "path", "message")
_FIX_KEYS = ("path", "from", "to", "rewrite")


def _records(items: object, keys: tuple[str, ...]) -> bool:
    return isinstance(items, list) and all(
        isinstance(item, dict) and all(isinstance(item.get(k), str) for k in keys) for item in items
    )


def well_formed(meta: object) -> bool:
    """Metadata read back from a file may come from another toolnames version or a hand edit."""
    return (
        isinstance(meta, dict)
        and _records(meta.get("findings", []), _FINDING_KEYS)
        and _records(meta.get("fixes", []), _FIX_KEYS)
        and (meta.get("action") != "fixed" or bool(meta.get("fixes")))
    )


def recorded_findings(meta: dict) -> list[Finding]:
    """The findings of well-formed metadata, as the checks made them (of known severity)."""
    return [
        Finding(f["code"], f["severity"], f["path"], f["message"], f.get("rule"))
        for f in meta.get("findings", [])
        if f["severity"] in SEVERITY_RANK
    ]


def fixed_in_flight(meta: object) -> bool:
    """A flow whose request toolnames rewrote: its body no longer shows what was sent."""
    return (
        well_formed(meta)
        and meta.get("action") == "fixed"
        and isinstance(meta.get("api"), str)
        and isinstance(meta.get("rule"), str)
    )


def _flagged(meta: dict) -> bool:
    return worst(meta.get("findings", [])) in ("warning", "error") or bool(meta.get("fixes"))


def is_flagged(meta: dict) -> bool:
    return well_formed(meta) and _flagged(meta)


def outcome(meta: dict) -> str | None:
    """What the flow shows; None for nothing, or for metadata this version cannot read."""
    if not well_formed(meta):
        return None
    if meta.get("action") in ("blocked", "fixed"):
        return meta["action"]
    return "flagged" if _flagged(meta) else None


def comment(meta: dict) -> str:
    findings = meta.get("findings", [])
    action = outcome(meta)
    if action == "fixed":
        fixed = "; ".join(
            f"{f['path']} '{f['from']}' → '{f['to']}' ({f['rewrite']})" for f in meta["fixes"]
        )
        text = f"{COMMENT_PREFIX} fixed {fixed}"
        others = [f for f in findings if f["code"] != "choice-not-in-tools"]
    else:
        lead = sorted(findings, key=lambda f: -SEVERITY_RANK.get(f["severity"], 0))
        head = lead[0] if lead else None
        verb = "blocked" if action == "blocked" else head["severity"] if head else ""
        text = (
            f"{COMMENT_PREFIX} {verb}: {head['code']}: {head['message']}"
            if head
            else COMMENT_PREFIX
        )
        others = lead[1:]
    if others:
        text += f" (+{len(others)} more)"
    return " ".join(text.split())  # one line, whatever the names held


def metadata(
    api: str,
    rule: str,
    mode: str,
    action: str,
    findings: list[Finding],
    fixes: list | None = None,
    fix_skipped: list | None = None,
) -> dict:
    meta: dict = {
        "api": api,
        "rule": rule,
        "mode": mode,
        "action": action,
        "findings": [f.to_dict() for f in findings],
    }
    if fixes:
        meta["fixes"] = [f.to_dict() for f in fixes]
    if fix_skipped:
        meta["fix_skipped"] = fix_skipped
    return storable(meta)


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
