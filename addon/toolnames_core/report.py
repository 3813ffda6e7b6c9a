"""What ``toolnames.report`` says about a set of flows: counts by finding code and by host, and
the hosts whose answers disagree with toolnames' rule for them; pure."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from toolnames_core import codes as codes_
from toolnames_core.model import count_text
from toolnames_core.record import FlowRecord


@dataclass(frozen=True, slots=True)
class FlowEntry:
    """One selected flow, as the report needs it; ``meta`` is its toolnames metadata, if any."""

    id: str
    host: str
    method: str
    path: str
    meta: object = None


def _sorted_counts(counter: Counter) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def summarize(entries: list[FlowEntry], selected: int | None = None) -> dict:
    """A JSON-ready summary of the findings toolnames recorded on ``entries``.

    ``selected`` counts every flow the user picked, including those that are not HTTP.
    Metadata this version cannot read is counted as unreadable, not guessed at.
    """
    by_code: Counter[str] = Counter()
    by_severity: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    hosts: dict[str, dict] = {}
    # rule-disagrees by host, then rule: where toolnames' rule for a host is out of date.
    disagreements: dict[str, Counter[str]] = {}
    flows = []
    inspected = unreadable = 0
    for entry in entries:
        if entry.meta is None:
            continue
        recorded = FlowRecord.from_metadata(entry.meta)
        if recorded is None:
            unreadable += 1
            continue
        inspected += 1
        findings = recorded.findings
        outcome = recorded.outcome
        codes = Counter(f.code for f in findings)
        by_code.update(codes)
        for f in findings:
            if f.code == codes_.RULE_DISAGREES:
                disagreements.setdefault(entry.host, Counter())[f.rule or recorded.rule] += 1
        by_severity.update(f.severity for f in findings)
        host = hosts.setdefault(entry.host, {"flows": 0, "flagged": 0, "by_code": Counter()})
        host["flows"] += 1
        host["by_code"].update(codes)
        if outcome:
            outcomes[outcome] += 1
            host["flagged"] += 1
        if findings or outcome:
            flows.append(
                {
                    "id": entry.id,
                    "host": entry.host,
                    "method": entry.method,
                    "path": entry.path,
                    "api": recorded.api,
                    "rule": recorded.rule,
                    "outcome": outcome or "observed",
                    "codes": _sorted_counts(codes),
                }
            )
    by_host = {
        name: {
            "flows": h["flows"],
            "flagged": h["flagged"],
            "findings": sum(h["by_code"].values()),
            "by_code": _sorted_counts(h["by_code"]),
        }
        for name, h in sorted(
            hosts.items(), key=lambda item: (-sum(item[1]["by_code"].values()), item[0])
        )
    }
    return {
        "selected": len(entries) if selected is None else selected,
        "inspected": inspected,
        "unreadable_metadata": unreadable,
        "outcomes": {k: outcomes[k] for k in ("flagged", "fixed", "blocked")},
        "findings": sum(by_code.values()),
        "by_severity": {k: by_severity[k] for k in ("error", "warning", "info") if by_severity[k]},
        "by_code": _sorted_counts(by_code),
        "by_host": by_host,
        "disagreements": {
            host: _sorted_counts(rules) for host, rules in sorted(disagreements.items())
        },
        "flows": flows,
    }


def format_summary(summary: dict) -> str:
    """The summary as a few lines for the event log."""
    outcomes = summary["outcomes"]
    severities = [s for s, n in summary["by_severity"].items() for _ in range(n)]
    lines = [
        f"toolnames report: {summary['selected']} flow(s) selected, {summary['inspected']} "
        f"inspected by toolnames; {outcomes['flagged']} flagged, {outcomes['fixed']} fixed, "
        f"{outcomes['blocked']} blocked; findings: {count_text(severities)}"
    ]
    if summary["unreadable_metadata"]:
        lines.append(
            f"  {summary['unreadable_metadata']} flow(s) carry toolnames metadata this version cannot read"
        )
    if summary["by_code"]:
        lines.append("  by code: " + ", ".join(f"{c} {n}" for c, n in summary["by_code"].items()))
    for host, h in summary["by_host"].items():
        codes = ", ".join(f"{c} {n}" for c, n in h["by_code"].items()) or "no findings"
        lines.append(f"  {host}: {h['flows']} flow(s), {h['flagged']} flagged: {codes}")
    if summary["disagreements"]:
        shown = [
            f"{host} ({', '.join(f'rule {r} {n}' for r, n in rules.items())})"
            for host, rules in summary["disagreements"].items()
        ]
        lines.append(
            "  the provider disagreed with toolnames' rule at: "
            + "; ".join(shown)
            + ". Set toolnames_rule for these hosts, or report it."
        )
    return "\n".join(lines)
