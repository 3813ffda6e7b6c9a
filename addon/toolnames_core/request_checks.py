"""Turn a request view into findings, under the name rule of the provider that receives it."""

from __future__ import annotations

from collections import defaultdict

from toolnames_core import codes
from toolnames_core.model import Finding
from toolnames_core.model import RequestView
from toolnames_core.rules import NameRule
from toolnames_core.rules import describe_name
from toolnames_core.rules import name_violations
from toolnames_core.rules import valid_name_pattern

OFFERED_SHOWN = 12


def offered_text(view: RequestView) -> str:
    names = sorted(view.offered_names | view.offered_builtins)
    if not names:
        return "no tools are offered"
    shown = ", ".join(f"'{n}'" for n in names[:OFFERED_SHOWN])
    more = f" and {len(names) - OFFERED_SHOWN} more" if len(names) > OFFERED_SHOWN else ""
    return f"offered: {shown}{more}"


def check_tools(view: RequestView, rule: NameRule) -> list[Finding]:
    # Valid, distinct names, the common case, are settled without a Python step per tool.
    names = [tool.name for tool in view.tools if tool.kind != "builtin"]
    if all(map(valid_name_pattern(rule).fullmatch, names)) and len(set(names)) == len(names):
        return []
    findings = []
    seen: dict[str, list[str]] = defaultdict(list)
    for tool in view.tools:
        if tool.kind == "builtin":
            continue
        seen[tool.name].append(tool.path)
        for code, reason in name_violations(tool.name, rule):
            findings.append(
                Finding(
                    code,
                    "error",
                    tool.path,
                    f"{tool.path} {describe_name(tool.name)} {reason}",
                    rule.id,
                )
            )
    for name, paths in seen.items():
        if len(paths) > 1:
            # Only providers documented to reject duplicates make this an error (rules.py).
            severity = "error" if rule.rejects_duplicates else "warning"
            findings.append(
                Finding(
                    codes.NAME_DUPLICATE,
                    severity,
                    paths[1],
                    f"{describe_name(name)} is offered {len(paths)} times ({', '.join(paths)}); "
                    f"rule {rule.id} {'rejects' if rule.rejects_duplicates else 'cannot tell them apart in'} duplicates",
                    rule.id,
                )
            )
    return findings


def check_choices(view: RequestView) -> list[Finding]:
    findings = []
    # Derived from the tool list: built once, and only for a choice that names tools.
    names = builtins = None
    for choice in view.choices:
        if choice.mode == "none":
            continue
        if not view.tools:
            findings.append(
                Finding(
                    codes.CHOICE_WITHOUT_TOOLS,
                    "error",
                    choice.path,
                    f"{choice.path} is {choice.mode!r} but the request offers no tools",
                )
            )
            continue
        if choice.names and names is None:
            names, builtins = view.offered_names, view.offered_builtins
        for ref in choice.names:
            offered = builtins if ref.kind == "builtin" else names
            if ref.name not in offered:
                findings.append(
                    Finding(
                        codes.CHOICE_NOT_IN_TOOLS,
                        "error",
                        ref.path,
                        f"{ref.path} {describe_name(ref.name)} names no offered tool; {offered_text(view)}",
                    )
                )
    return findings


def check_history(view: RequestView, rule: NameRule) -> list[Finding]:
    findings = []
    valid = valid_name_pattern(rule).fullmatch
    for ref in view.history:
        if valid(ref.name):
            continue
        reasons = name_violations(ref.name, rule)
        if reasons:
            why = "; ".join(reason for _, reason in reasons)
            findings.append(
                Finding(
                    codes.HISTORY_NAME_INVALID,
                    "error",
                    ref.path,
                    f"{ref.path} {describe_name(ref.name)} {why}; providers reject the whole request for it",
                    rule.id,
                )
            )
    return findings


def check_request(view: RequestView, rule: NameRule) -> list[Finding]:
    return [
        *view.problems,
        *check_tools(view, rule),
        *check_choices(view),
        *check_history(view, rule),
    ]
