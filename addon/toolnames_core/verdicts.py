"""The provider's verdict against toolnames' prediction, as findings.

``provider-rejected``: the provider refused a tool name or the tool choice; the finding
quotes it, names the place and the name, and says whether toolnames had predicted it.
``rule-disagrees``: where the provider saw the client's own bytes, its verdict on a name
and toolnames' rule differ, either way: a name rejection toolnames did not predict, or a
name toolnames' rule rejects in a request the provider accepted. The rule for that host
is then out of date, and the user can set ``toolnames_rule`` or report it.
"""

from __future__ import annotations

from toolnames_core import codes
from toolnames_core.aliases import ALIAS_REWRITE
from toolnames_core.model import Finding
from toolnames_core.names import describe_name
from toolnames_core.names import escape_text
from toolnames_core.names import quote_name
from toolnames_core.rejections import Rejection
from toolnames_core.rules import ADVISED_RULES
from toolnames_core.rules import name_violations
from toolnames_core.rules import rule_named

__all__ = ["RULE_CODES", "accepted_findings", "confirmations", "rejected_findings", "same_place"]

# The request findings that are a rule's verdict on a name (the others, such as a choice
# naming no offered tool, hold whatever the provider's rule).
RULE_CODES = frozenset(
    {
        codes.NAME_EMPTY,
        codes.NAME_TOO_LONG,
        codes.NAME_INVALID_CHARS,
        codes.NAME_INVALID_START,
        codes.NAME_DUPLICATE,
        codes.HISTORY_NAME_INVALID,
    }
)
RULES_SHOWN = 4


def same_place(a: str, b: str) -> bool:
    """One path is the other, or holds it (``tool_choice`` and ``tool_choice.function.name``)."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return bool(short) and long.startswith(short) and long[len(short)] in ".["


def confirmations(findings: list[Finding]) -> list[Finding]:
    """The ``provider-rejected`` findings that only confirm an error toolnames had predicted
    at the same place: a line that shows that error says "the provider rejected it too"
    instead of counting them as more problems."""
    predicted = [f for f in findings if f.severity == "error" and f.code != codes.PROVIDER_REJECTED]
    return [
        f
        for f in findings
        if f.code == codes.PROVIDER_REJECTED
        and f.path
        and any(same_place(f.path, p.path) for p in predicted)
    ]


def _prediction(rejection: Rejection, request_findings: list[Finding]) -> Finding | None:
    """toolnames' own finding at the place the provider rejected: an error, else a warning."""
    here = [f for f in request_findings if same_place(f.path, rejection.path)]
    return next((f for f in here if f.severity == "error"), here[0] if here else None)


def _host(host: str) -> str:
    return host or "this host"


def _rules_text(rules: list[str]) -> str:
    shown = ", ".join(rules[:RULES_SHOWN])
    return shown + (f" and {len(rules) - RULES_SHOWN} more" if len(rules) > RULES_SHOWN else "")


def _advice(host: str, rules: list[str], verb: str) -> str:
    if not rules:
        return f"no rule toolnames knows {verb}s it: report it"
    first = rules[0]
    return (
        f"rules that {verb} it: {_rules_text(rules)}; set toolnames_rule='{host or 'HOST'}={first}' "
        "(or another of them) if this host keeps answering so, or report it"
    )


def rejected_findings(
    rejections: list[Rejection],
    status: int,
    request_findings: list[Finding],
    rule: str,
    host: str,
    judge_rule: bool,
    readable: bool = True,
    rewritten: dict[str, tuple[str, str]] | None = None,
) -> list[Finding]:
    """``provider-rejected`` for each rejection, and, when ``judge_rule`` (the provider saw the
    client's own bytes), ``rule-disagrees`` for each rejected name toolnames' rule accepts.
    ``readable``: toolnames read the request (else it predicted nothing, and says so);
    ``rewritten``: where fix mode sent its own name, the client's name there and the rewrite
    (``alias``, or the client rewrite a choice was fixed by)."""
    rewritten = rewritten or {}
    found = []
    errors = [f for f in request_findings if f.severity == "error"]
    for r in rejections:
        # The provider's words may quote a name raw: escaped as toolnames shows names.
        quoted = f'"{escape_text(r.provider_text)}"'
        if not r.tied:
            where = f" ({r.path})" if r.path else ""
            if not readable:
                # Not "no error predicted": nothing was, the request was never read.
                said = (
                    f"toolnames did not read this request ({codes.REQUEST_UNREADABLE}), "
                    "so it predicted nothing"
                )
            elif errors:
                said = (
                    f"toolnames had predicted {len(errors)} error(s) in this request: "
                    + ", ".join(sorted({f.code for f in errors}))
                )
            else:
                said = "toolnames had predicted no error in this request"
            found.append(
                Finding(
                    codes.PROVIDER_REJECTED,
                    "error",
                    r.path,
                    f"the provider rejected a tool name or the tool choice (HTTP {status}) at a "
                    f"place toolnames cannot tie to a name in the request{where}: {quoted}; {said}",
                )
            )
            continue
        fixed = rewritten.get(r.path)
        if fixed is not None and r.name is not None:
            found += _fix_rejected(r, fixed, quoted, status, rule, host)
            continue
        predicted = _prediction(r, request_findings)
        if predicted is None:
            said = "toolnames had not predicted it"
        elif predicted.severity == "error":
            said = f"toolnames had predicted it ({predicted.code})"
        else:
            said = f"toolnames had only warned ({predicted.code})"
        what = f"{r.path} {describe_name(r.name)}" if r.name is not None else r.path
        found.append(
            Finding(
                codes.PROVIDER_REJECTED,
                "error",
                r.path,
                f"the provider rejected {what} (HTTP {status}): {quoted}; {said}",
            )
        )
        missed = predicted is None or predicted.severity != "error"
        if judge_rule and missed and r.place in ("tool", "history") and r.name is not None:
            rejecting = [rid for rid, nr in ADVISED_RULES.items() if name_violations(r.name, nr)]
            found.append(
                Finding(
                    codes.RULE_DISAGREES,
                    "warning",
                    r.path,
                    f"rule {rule} disagrees with {_host(host)}: the provider rejected {what}, "
                    f"which rule {rule} accepts; {_advice(host, rejecting, 'reject')}",
                    rule,
                )
            )
    return found


def _fix_rejected(
    r: Rejection, fixed: tuple[str, str], quoted: str, status: int, rule: str, host: str
) -> list[Finding]:
    """The provider rejected a name fix mode sent, not the client's: toolnames' prediction was
    about the client's name, so it confirms nothing. An alias was made to pass the rule, so
    its rejection is the provider's verdict on the rule."""
    client_name, rewrite = fixed
    what = f"{r.path} {describe_name(r.name)}"
    if rewrite == ALIAS_REWRITE:
        sent = f"toolnames' alias for {quote_name(client_name)}"
    else:
        sent = f"what toolnames sent for {quote_name(client_name)} ({rewrite})"
    found = [
        Finding(
            codes.PROVIDER_REJECTED,
            "error",
            r.path,
            f"the provider rejected {what}, {sent} (HTTP {status}): {quoted}; fix mode's "
            "name did not work, and the request failed",
        )
    ]
    broken = name_violations(r.name, rule_named(rule))
    if rewrite == ALIAS_REWRITE and r.place in ("tool", "history") and not broken:
        rejecting = [rid for rid, nr in ADVISED_RULES.items() if name_violations(r.name, nr)]
        found.append(
            Finding(
                codes.RULE_DISAGREES,
                "warning",
                r.path,
                f"rule {rule} disagrees with {_host(host)}: the provider rejected {what}, "
                f"toolnames' alias for {quote_name(client_name)}, which rule {rule} accepts; "
                f"{_advice(host, rejecting, 'reject')}",
                rule,
            )
        )
    return found


def accepted_findings(
    status: int,
    request_findings: list[Finding],
    names: dict[str, str],
    rule: str,
    host: str,
) -> list[Finding]:
    """``rule-disagrees`` for each name toolnames' rule rejected in a request the provider
    accepted as the client sent it; ``names``: the name at each path of the request."""
    by_path: dict[str, list[str]] = {}
    for f in request_findings:
        if f.code in RULE_CODES and f.severity == "error" and f.path in names:
            by_path.setdefault(f.path, []).append(f.code)
    found = []
    for path, broken in by_path.items():
        # Made once for the same name at the same place: a client resends its tools every
        # request, and weighing each name against every rule cost five times the rest of
        # an observed flow at 100 tools (issue 25). The same finding each time, as the
        # request's own findings are.
        key = (path, names[path], tuple(broken), rule, host, status)
        finding = _accepted_made.get(key)
        if finding is None:
            if len(_accepted_made) >= _MAX_ACCEPTED_MADE:
                _accepted_made.clear()
            finding = _accepted_made[key] = _accepted(*key)
        found.append(finding)
    return found


def _accepted(
    path: str, name: str, broken: tuple[str, ...], rule: str, host: str, status: int
) -> Finding:
    accepting = [
        rid
        for rid, nr in ADVISED_RULES.items()
        if rid != rule
        and not name_violations(name, nr)
        and (codes.NAME_DUPLICATE not in broken or not nr.rejects_duplicates)
    ]
    return Finding(
        codes.RULE_DISAGREES,
        "warning",
        path,
        f"rule {rule} disagrees with {_host(host)}: {path} {describe_name(name)} breaks "
        f"rule {rule} ({', '.join(broken)}), but the provider accepted the request "
        f"(HTTP {status}); {_advice(host, accepting, 'accept')}",
        rule,
    )


_accepted_made: dict[tuple, Finding] = {}
_MAX_ACCEPTED_MADE = 8192
