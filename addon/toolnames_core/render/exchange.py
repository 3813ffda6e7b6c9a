"""The toolnames content view as plain text: a request's or a response's tool names in tables.

Pure: an ``Exchange`` in, text out. ``toolnames_mitm/view.py`` makes the exchange from a flow;
the flow's record, when given, supplies the findings and fixes the addon recorded live (a fixed
request's body no longer shows what was wrong with it).
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter

from toolnames_core import codes
from toolnames_core.exchange import Exchange
from toolnames_core.formats.openai_common import is_parallel_wrapper
from toolnames_core.model import SEVERITY_RANK
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import count_text
from toolnames_core.names import char_label
from toolnames_core.names import escape_text
from toolnames_core.names import quote_name
from toolnames_core.names import unusual_chars
from toolnames_core.record import FlowRecord
from toolnames_core.record import RecordedRejection
from toolnames_core.rejections import REJECTING_STATUSES
from toolnames_core.rules import NameRule
from toolnames_core.rules import name_violations

NAME_WIDTH = 48
ERROR = "✗"
WARNING = "!"

# Finding messages are wrapped to fit mitmweb's detail pane beside the flow list.
MESSAGE_WIDTH = 88


def shown_name(name: str) -> str:
    """A name as one table cell: bare when it is printable ASCII without spaces, else quoted
    and escaped as in every message (``quote_name``); cut to NAME_WIDTH (the len column
    keeps the true length)."""
    text = name if _PLAIN.fullmatch(name) else quote_name(name)
    return text if len(text) <= NAME_WIDTH else text[: NAME_WIDTH - 1] + "…"


_PLAIN = re.compile("[!-~]+")


def _unusual_section(names: list[str]) -> list[str]:
    """Each character outside printable ASCII in the names shown, by code point and name."""
    unusual = list(dict.fromkeys(c for name in names for c in unusual_chars(name)))
    if not unusual:
        return []
    return ["", "Characters outside printable ASCII in these names:"] + [
        f"  {quote_name(c)}  {char_label(c)}" for c in unusual
    ]


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
        if code == codes.NAME_EMPTY:
            parts.append("empty")
        elif code == codes.NAME_TOO_LONG:
            parts.append(f"too long ({len(name)} > {rule.max_len})")
        elif code == codes.NAME_INVALID_CHARS:
            bad = sorted(set(re.findall(f"[^{rule.chars}]", name)))
            more = ", …" if len(bad) > 5 else ""
            parts.append("bad chars " + ", ".join(quote_name(c) for c in bad[:5]) + more)
        elif code == codes.NAME_INVALID_START:
            parts.append(f"starts with {quote_name(name[0])}")
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
            # As sent: Anthropic's {"type": "any"}, not the "required" it means.
            rows.append((choice.sent or choice.mode, "-", "", verdict, choice.path))
    return ["Tool choice", *table(("choice", "name", "len", "verdict", "at"), rows)]


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


def _call_verdict(call: NameRef, exchange: Exchange) -> str:
    if not exchange.readable:
        return "not judged"
    view = exchange.offered
    if is_parallel_wrapper(call.name, view.offered_names):
        return f"{ERROR} OpenAI's parallel wrapper, not a tool"
    known = view.offered_builtins if call.kind == "builtin" else view.offered_names
    return "offered" if call.name in known else f"{ERROR} never offered"


def _calls_section(exchange: Exchange) -> list[str]:
    found = exchange.response_calls
    if not found:
        return ["Calls in this response: none"]
    rows = [
        (shown_name(c.name), len(c.name), c.kind, _call_verdict(c, exchange), c.path) for c in found
    ]
    return [
        f"Calls in this response: {len(found)}",
        *table(("name", "len", "kind", "verdict", "at"), rows),
    ]


def _findings_section(findings: list[Finding], source: str) -> list[str]:
    if not findings:
        return [f"Findings: none ({source})"]
    ranked = sorted(findings, key=lambda f: -SEVERITY_RANK[f.severity])
    lines = [f"Findings: {count_text(f.severity for f in findings)} ({source})"]
    width = max(len(f.code) for f in findings)
    for f in ranked:
        mark = {"error": ERROR, "warning": WARNING}.get(f.severity, " ")
        where = f"  at {f.path}" if f.path else ""
        lines.append(f"  {mark} {f.severity:<7}  {f.code:<{width}}{where}".rstrip())
        message = " ".join(f.message.split())
        lines += textwrap.wrap(
            message, MESSAGE_WIDTH, initial_indent="      ", subsequent_indent="      "
        )
    return lines


def _verdict_section(rejections: list[RecordedRejection], status: int | None) -> list[str]:
    """What the provider's error answer rejected, each with its own words."""
    if not rejections:
        return []
    lines = ["", f"The provider's verdict: HTTP {status}, {len(rejections)} rejection(s)"]
    for r in rejections:
        if not r.tied:
            where = f" ({r.path})" if r.path else ""
            head = f"not tied to a name in the request{where}"
        elif r.name is None:
            head = r.path
        else:
            head = f"{r.path}  {shown_name(r.name)} ({len(r.name)} chars)"
        lines.append(f"  {ERROR} {head}")
        lines += textwrap.wrap(
            f'"{escape_text(r.text)}"',
            MESSAGE_WIDTH,
            initial_indent="      ",
            subsequent_indent="      ",
        )
    return lines


def _fixes_section(recorded: FlowRecord) -> list[str]:
    lines = []
    if recorded.fixes:
        rows = [(shown_name(f.old), shown_name(f.new), f.rewrite, f.path) for f in recorded.fixes]
        lines += [
            "",
            f"Fixes: {len(recorded.fixes)}",
            *table(("client sent", "sent on", "rewrite", "at"), rows),
        ]
    if recorded.fix_skipped:
        rows = [(shown_name(s.name), s.reason, s.path) for s in recorded.fix_skipped]
        lines += [
            "",
            f"Not fixed: {len(recorded.fix_skipped)}",
            *table(("name", "why", "at"), rows),
        ]
    return lines


def _header(
    exchange: Exchange, side: str, recorded: FlowRecord | None, client: str | None
) -> list[str]:
    rule = exchange.rule
    lines = [f"toolnames: {exchange.format.title} {side}", f"Name rule: {rule.describe()}"]
    if client:
        lines.append(f"Client: {client}")
    if recorded is not None:
        outcome = recorded.outcome
        if outcome:
            lines.append(f"Outcome: {outcome} in {recorded.mode} mode: {recorded.outcome_text()}")
        else:
            lines.append(f"Outcome: nothing to flag ({recorded.mode} mode)")
        signature = recorded.signature_text()
        if signature:
            lines.append(f"Signed: {signature}")
    return lines


def render_request(
    exchange: Exchange, recorded: FlowRecord | None = None, client: str | None = None
) -> str:
    """The request's tools, choice and history, each name judged under the exchange's rule.

    ``exchange`` has read its request. ``recorded`` is the flow's toolnames record; its
    findings and fixes are shown instead of those found now, since a fixed body no longer
    holds what was wrong.
    """
    name_rule = exchange.rule
    lines = _header(exchange, "request", recorded, client)
    view = exchange.view
    if view is None:
        if exchange.readable:
            lines += ["", "This request names no tools: no tools, tool choice or tool calls."]
    else:
        lines += ["", *_tools_section(view, name_rule)]
        lines += ["", *_choices_section(view)]
        lines += ["", *_history_section(view, name_rule)]
        shown = [ref.name for ref in (*view.tools, *view.history)]
        lines += _unusual_section(shown + [r.name for c in view.choices for r in c.names])
    source = f"checked now under {name_rule.id}"
    lines += ["", *_findings_of(recorded, exchange.request_findings, source)]
    return "\n".join(lines) + "\n"


def render_response(
    exchange: Exchange,
    status: int | None,
    recorded: FlowRecord | None = None,
    client: str | None = None,
) -> str:
    """The tool calls an answer makes, each checked against what the request offered.

    ``exchange`` has read its request and checked the answer (``check_response``)."""
    lines = _header(exchange, "response", recorded, client)
    if recorded is not None and recorded.action == "blocked":
        lines += ["", "This answer is toolnames' own: the request was blocked."]
    lines += ["", *_calls_section(exchange)]
    lines += _unusual_section([c.name for c in exchange.response_calls])
    if recorded is not None:
        rejections = recorded.rejections
    else:
        rejections = [
            RecordedRejection(r.path, r.name, r.provider_text, r.tied) for r in exchange.rejections
        ]
    lines += _verdict_section(rejections, status)
    if status in REJECTING_STATUSES:
        source = f"HTTP {status}: read for the tool names and choice the provider rejected"
    elif status is not None and not 200 <= status < 300:
        source = f"HTTP {status}: calls are checked in successful responses only"
    elif not exchange.readable:
        source = "not checked: what the request offered could not be read"
    else:
        source = "checked now against the request"
    lines += ["", *_findings_of(recorded, exchange.response_findings, source)]
    return "\n".join(lines) + "\n"


def _findings_of(recorded: FlowRecord | None, fresh: list[Finding], source: str) -> list[str]:
    if recorded is None:
        return _findings_section(fresh, source)
    return [
        *_findings_section(recorded.findings, "recorded by toolnames for this flow"),
        *_fixes_section(recorded),
    ]
