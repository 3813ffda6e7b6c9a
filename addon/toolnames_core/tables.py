"""The toolnames content view as plain text: a request's or a response's tool names in tables.

Pure: a body, its API and a rule id in, text out. ``mitm_view.py`` feeds it from a flow; the
flow's toolnames metadata, when given, supplies the findings and fixes the addon recorded live
(a fixed request's body no longer shows what was wrong with it).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections import Counter

from toolnames_core import analysis
from toolnames_core import annotate
from toolnames_core import calls as calls_
from toolnames_core import checks
from toolnames_core.formats import FORMATS
from toolnames_core.model import SEVERITY_RANK
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.rules import RULES
from toolnames_core.rules import NameRule
from toolnames_core.rules import name_violations

NAME_WIDTH = 48
ERROR = "✗"
WARNING = "!"

_OUTCOMES = {
    "flagged": "see the findings below",
    "fixed": "the tool choice was rewritten before the request went on",
    "blocked": "toolnames answered with an error; the provider never saw the request",
}
# Finding messages are wrapped to fit mitmweb's detail pane beside the flow list.
MESSAGE_WIDTH = 88


def shown_name(name: str) -> str:
    """A name as one table cell: quoted when it is empty or holds spaces or control
    characters, cut to NAME_WIDTH (the len column keeps the true length)."""
    text = name
    if not name or not name.isprintable() or name.strip() != name:
        text = json.dumps(name, ensure_ascii=False)
    return text if len(text) <= NAME_WIDTH else text[: NAME_WIDTH - 1] + "…"


def table(headers: tuple[str, ...], rows: list[tuple], indent: str = "  ") -> list[str]:
    """Left-aligned text columns, numbers right-aligned; the last column is never padded."""
    cells = [tuple(str(c) for c in row) for row in [headers, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], int) for row in rows) for i in range(len(headers))]
    lines = []
    for row in cells:
        padded = [
            cell.rjust(width) if is_number else cell.ljust(width)
            for cell, width, is_number in zip(row, widths, numeric, strict=True)
        ]
        lines.append((indent + "  ".join(padded)).rstrip())
    return lines


def name_verdict(name: str, rule: NameRule) -> str:
    """``ok``, or every way the name breaks the rule, shortly."""
    parts = []
    for code, _reason in name_violations(name, rule):
        if code == "name-empty":
            parts.append("empty")
        elif code == "name-too-long":
            parts.append(f"too long ({len(name)} > {rule.max_len})")
        elif code == "name-invalid-chars":
            bad = sorted(set(re.findall(f"[^{rule.chars}]", name)))
            more = ", …" if len(bad) > 5 else ""
            parts.append("bad chars " + ", ".join(repr(c) for c in bad[:5]) + more)
        elif code == "name-invalid-start":
            parts.append(f"starts with {name[0]!r}")
        else:
            parts.append(code)
    return f"{ERROR} " + "; ".join(parts) if parts else "ok"


def _tools_section(view: RequestView, rule: NameRule) -> list[str]:
    if not view.tools:
        return ["Tools offered: none" + (" (an empty list)" if view.tools_given else "")]
    counts = Counter(t.name for t in view.tools if t.kind != "builtin")
    rows = []
    for tool in view.tools:
        if tool.kind == "builtin":
            verdict = "built-in, not checked"
        else:
            verdict = name_verdict(tool.name, rule)
            if counts[tool.name] > 1:
                mark = ERROR if rule.rejects_duplicates else WARNING
                dup = f"duplicate ×{counts[tool.name]}"
                verdict = f"{mark} {dup}" if verdict == "ok" else f"{verdict}; {dup}"
        rows.append((shown_name(tool.name), len(tool.name), tool.kind, verdict, tool.path))
    return [
        f"Tools offered: {len(view.tools)}",
        *table(("name", "len", "kind", f"under {rule.id}", "at"), rows),
    ]


def _choice_verdict(ref: NameRef, view: RequestView) -> str:
    offered = view.offered_builtins if ref.kind == "builtin" else view.offered_names
    return "offered" if ref.name in offered else f"{ERROR} not offered"


def _choices_section(view: RequestView) -> list[str]:
    if not view.choices:
        return ["Tool choice: not set"]
    rows = []
    for choice in view.choices:
        if choice.mode in ("named", "allowed") and choice.names:
            for ref in choice.names:
                rows.append(
                    (
                        choice.mode,
                        shown_name(ref.name),
                        len(ref.name),
                        _choice_verdict(ref, view),
                        ref.path,
                    )
                )
        else:
            verdict = "ok"
            if choice.mode != "none" and not view.tools:
                verdict = f"{ERROR} no tools offered"
            rows.append((choice.mode, "-", "", verdict, choice.path))
    return ["Tool choice", *table(("mode", "name", "len", "verdict", "at"), rows)]


def _history_section(view: RequestView, rule: NameRule) -> list[str]:
    if not view.history:
        return ["Calls in history: none"]
    rows = [
        (shown_name(ref.name), len(ref.name), name_verdict(ref.name, rule), ref.path)
        for ref in view.history
    ]
    return [
        f"Calls in history: {len(view.history)}",
        *table(("name", "len", f"under {rule.id}", "at"), rows),
    ]


def _call_verdict(call: NameRef, view: RequestView) -> str:
    if calls_.is_parallel_wrapper(call.name, view.offered_names):
        return f"{ERROR} OpenAI's parallel wrapper, not a tool"
    known = view.offered_builtins if call.kind == "builtin" else view.offered_names
    return "offered" if call.name in known else f"{ERROR} never offered"


def _calls_section(found: list[NameRef], view: RequestView) -> list[str]:
    if not found:
        return ["Calls in this response: none"]
    rows = [
        (shown_name(c.name), len(c.name), c.kind, _call_verdict(c, view), c.path) for c in found
    ]
    return [
        f"Calls in this response: {len(found)}",
        *table(("name", "len", "kind", "verdict", "at"), rows),
    ]


def _findings_section(findings: list[dict], source: str) -> list[str]:
    if not findings:
        return [f"Findings: none ({source})"]
    ranked = sorted(findings, key=lambda f: -SEVERITY_RANK.get(f.get("severity", ""), 0))
    lines = [f"Findings: {count_text(findings)} ({source})"]
    width = max(len(f["code"]) for f in findings)
    for f in ranked:
        mark = {"error": ERROR, "warning": WARNING}.get(f["severity"], " ")
        where = f"  at {f['path']}" if f.get("path") else ""
        lines.append(f"  {mark} {f['severity']:<7}  {f['code']:<{width}}{where}".rstrip())
        message = " ".join(str(f["message"]).split())
        lines += textwrap.wrap(
            message, MESSAGE_WIDTH, initial_indent="      ", subsequent_indent="      "
        )
    return lines


def _fixes_section(meta: dict) -> list[str]:
    lines = []
    fixes = meta.get("fixes") or []
    if fixes:
        rows = [
            (shown_name(f["from"]), shown_name(f["to"]), f["rewrite"], f["path"]) for f in fixes
        ]
        lines += [
            "",
            f"Fixes: {len(fixes)}",
            *table(("client sent", "sent on", "rewrite", "at"), rows),
        ]
    skipped = [s for s in meta.get("fix_skipped") or [] if isinstance(s, dict)]
    if skipped:
        rows = [
            (shown_name(str(s.get("name", ""))), str(s.get("reason", "")), str(s.get("path", "")))
            for s in skipped
        ]
        lines += ["", f"Not fixed: {len(skipped)}", *table(("name", "why", "at"), rows)]
    return lines


def _recorded(meta: object) -> dict | None:
    return meta if isinstance(meta, dict) and annotate.well_formed(meta) else None


def count_text(findings: list[dict]) -> str:
    """``2 errors, 1 warning``; ``none`` when there are no findings."""
    counts = Counter(f.get("severity") for f in findings)
    parts = [
        f"{counts[s]} {s}{'s' if counts[s] > 1 else ''}"
        for s in ("error", "warning", "info")
        if counts[s]
    ]
    return ", ".join(parts) or "none"


def _header(api: str, side: str, rule: NameRule, meta: dict | None) -> list[str]:
    lines = [f"toolnames: {FORMATS[api].title} {side}", f"Name rule: {rule.describe()}"]
    if meta is not None:
        outcome = annotate.outcome(meta)
        mode = meta.get("mode", "?")
        if outcome:
            lines.append(f"Outcome: {outcome} in {mode} mode: {_OUTCOMES[outcome]}")
        else:
            lines.append(f"Outcome: nothing to flag ({mode} mode)")
    return lines


def _rule(rule: str) -> NameRule:
    try:
        return RULES[rule]
    except KeyError:
        raise ValueError(f"unknown rule {rule!r}; known rules: {', '.join(RULES)}") from None


def render_request(content: bytes, api: str, rule: str, meta: dict | None = None) -> str:
    """The request's tools, choice and history, each name judged under ``rule``.

    ``meta`` is the flow's toolnames metadata; its findings and fixes are shown instead of
    findings computed now, since a fixed body no longer holds what was wrong.
    """
    name_rule = _rule(rule)
    meta = _recorded(meta)
    lines = _header(api, "request", name_rule, meta)
    view, problem = analysis.read_request(content, api)
    fresh: list[dict] = [problem.to_dict()] if problem else []
    if view is None:
        if problem is None:
            lines += ["", "This request names no tools: no tools, tool choice or tool calls."]
    else:
        fresh += [f.to_dict() for f in checks.check_request(view, name_rule)]
        lines += ["", *_tools_section(view, name_rule)]
        lines += ["", *_choices_section(view)]
        lines += ["", *_history_section(view, name_rule)]
    lines += ["", *_findings_of(meta, fresh, f"checked now under {name_rule.id}")]
    return "\n".join(lines) + "\n"


def render_response(
    content: bytes,
    content_type: str,
    api: str,
    rule: str,
    request_content: bytes | None = None,
    meta: dict | None = None,
    status: int | None = None,
) -> str:
    """The tool calls a response makes, each checked against what the request offered."""
    name_rule = _rule(rule)
    meta = _recorded(meta)
    lines = _header(api, "response", name_rule, meta)
    if meta is not None and meta.get("action") == "blocked":
        lines += ["", "This answer is toolnames' own: the request was blocked."]
    # As the addon does: a request that offers nothing readable offers no tools.
    view = (analysis.read_request(request_content, api)[0] if request_content else None) or (
        RequestView(api)
    )
    found, problem = analysis.read_response_calls(api, content_type, content)
    lines += ["", *_calls_section(found, view)]
    if status is not None and not 200 <= status < 300:
        fresh: list[dict] = []
        source = f"HTTP {status}: calls are checked in successful responses only"
    else:
        checked = calls_.check_calls(found, view, complete=True)
        fresh = [f.to_dict() for f in checked] + ([problem.to_dict()] if problem else [])
        source = "checked now against the request"
    lines += ["", *_findings_of(meta, fresh, source)]
    return "\n".join(lines) + "\n"


def _findings_of(meta: dict | None, fresh: list[dict], source: str) -> list[str]:
    if meta is None:
        return _findings_section(fresh, source)
    return [
        *_findings_section(meta.get("findings", []), "recorded by toolnames for this flow"),
        *_fixes_section(meta),
    ]
