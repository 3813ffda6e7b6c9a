"""Turn a request view into findings, under the name rule of the provider that receives it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING

from toolnames_core import codes
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import tool_set
from toolnames_core.names import describe_name
from toolnames_core.names import quote_name
from toolnames_core.rules import NameRule
from toolnames_core.rules import name_violations
from toolnames_core.rules import valid_name_pattern

if TYPE_CHECKING:  # for the annotation only: the formats need not be loaded to check
    from toolnames_core.formats import WireFormat

OFFERED_SHOWN = 12


def offered_text(view: RequestView, tools: list[NameRef] | None = None) -> str:
    """``offered: 'a', 'b'``; ``tools``: only these of the view's tools."""
    names = sorted({t.name for t in (view.tools if tools is None else tools)})
    if not names:
        return "no tools are offered"
    shown = ", ".join(map(quote_name, names[:OFFERED_SHOWN]))
    more = f" and {len(names) - OFFERED_SHOWN} more" if len(names) > OFFERED_SHOWN else ""
    return f"offered: {shown}{more}"


# Per rule, the findings about the name at a place (a tool's, a call's in the history), made
# once: an agent sends the same tools and history with every request, and the requests fix
# mode renames hold a finding at every place (messages, then frozen records, cost more to
# make than reading the body did). Findings are immutable, so each request can share them.
# Keyed by the rule's id, holding the rule itself (a frozen dataclass hashes every field);
# bounded, so that a client sending ever new names or paths cannot grow it without limit.
_said: dict[str, tuple[NameRule, dict[tuple, tuple[Finding, ...]]]] = {}
_MAX_SAID = 8192


def _remembered(rule: NameRule) -> dict[tuple, tuple[Finding, ...]]:
    entry = _said.get(rule.id)
    if entry is None or entry[0] is not rule:
        entry = _said[rule.id] = (rule, {})
    if len(entry[1]) >= _MAX_SAID:
        entry[1].clear()
    return entry[1]


def check_tools(view: RequestView, rule: NameRule) -> list[Finding]:
    # The findings depend on the tools and the rule alone, and an agent sends the same
    # tools with every request: made once, none included (findings are immutable; the list
    # is new). The tool set is found by the very refs the adapter hands again for the same
    # tools (formats/base.py read_once), told in C, or else by their names: at any number of
    # tools cheaper than matching each name, which was a quarter of checking a request of
    # 100 tools (issue 25).
    tools = tool_set(view.tools)
    key = ("check_tools", rule.id)
    found = tools.remembered(key, rule)
    if found is None:
        found = () if _valid_and_distinct(view, rule) else tuple(_check_tools(view, rule))
        tools.remember(key, rule, found)
    return list(found)


def _valid_and_distinct(view: RequestView, rule: NameRule) -> bool:
    """Whether every tool's name is valid and none repeats, the common case: settled without
    a Python step per tool."""
    names = [tool.name for tool in view.tools if tool.kind != "builtin"]
    return all(map(valid_name_pattern(rule).fullmatch, names)) and len(set(names)) == len(names)


def _check_tools(view: RequestView, rule: NameRule) -> list[Finding]:
    findings = []
    seen: dict[str, list[str]] = defaultdict(list)
    valid = valid_name_pattern(rule).fullmatch
    said = _remembered(rule)
    # A rule its provider does not enforce (Ollama's) still warns: the provider takes the
    # name, the model cannot use it.
    severity = "error" if rule.enforced else "warning"
    for tool in view.tools:
        if tool.kind == "builtin":
            continue
        path = tool.path
        seen[tool.name].append(path)
        if valid(tool.name):
            continue
        key = ("tool", tool.where, tool.name)
        found = said.get(key)
        if found is None:
            described = describe_name(tool.name)
            found = said[key] = tuple(
                Finding(code, severity, path, f"{path} {described} {reason}", rule.id)
                for code, reason in name_violations(tool.name, rule)
            )
        findings += found
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


def _choice_text(choice: Choice) -> str:
    """What the choice is, as sent: ``is "required"``, ``names 'x'``, ``allows 'a', 'b'``."""
    if choice.sent:
        return f"is {choice.sent}"
    verb = "names" if choice.mode == "named" else "allows"
    return f"{verb} {', '.join(quote_name(ref.name) for ref in choice.names)}"


def check_choices(
    view: RequestView,
    choice_lists: Mapping[str, str] | None = None,
    none_needs_tools: tuple[str, ...] = (),
) -> list[Finding]:
    """``choice_lists``: {choice key: the one tool list its names may name}; ``none_needs_tools``:
    choice keys whose "none" is rejected without tools (the format's, ``WireFormat``)."""
    findings = []
    for choice in view.choices:
        listed = choice_lists.get(choice.where[0]) if choice_lists else None
        tools = view.tools
        if listed is not None:
            if choice.names and choice.mode != "none":
                tools = [t for t in view.tools if t.where[0] == listed]
            elif any(t.where[0] == listed for t in view.tools):
                # "auto" and the like name no tool: whether the list offers one is all
                # they need, and it is the first tool nearly always (a list costs a step
                # per tool, in every mode).
                continue
            else:
                tools = []
        if not tools:
            if choice.mode == "none" and choice.where[0] not in none_needs_tools:
                continue
            where = f"no {listed}" if listed and view.tools else "no tools"
            findings.append(
                Finding(
                    codes.CHOICE_WITHOUT_TOOLS,
                    "error",
                    choice.path,
                    f"{choice.path} {_choice_text(choice)}, but the request offers {where}",
                )
            )
            continue
        if choice.mode == "none" or not choice.names:
            continue
        names = {t.name for t in tools if t.kind != "builtin"}
        builtins = {t.name for t in tools if t.kind == "builtin"}
        for ref in choice.names:
            offered = builtins if ref.kind == "builtin" else names
            if ref.name not in offered:
                findings.append(
                    Finding(
                        codes.CHOICE_NOT_IN_TOOLS,
                        "error",
                        ref.path,
                        f"{ref.path} {describe_name(ref.name)} names no offered tool; {offered_text(view, tools)}",
                    )
                )
    return findings


def check_history(view: RequestView, rule: NameRule) -> list[Finding]:
    if not rule.enforced:
        return []  # the provider rejects no name in the history; the calls were judged then
    findings = []
    valid = valid_name_pattern(rule).fullmatch
    said = _remembered(rule)
    # A conversation calls the same few tools over and over: each name is matched once.
    judged: dict[str, bool] = {}
    for ref in view.history:
        name = ref.name
        ok = judged.get(name)
        if ok is None:
            ok = judged[name] = valid(name) is not None
        if ok:
            continue
        key = ("history", ref.where, name)
        found = said.get(key)
        if found is None:
            found = said[key] = ()
            reasons = name_violations(ref.name, rule)
            if reasons:
                why = "; ".join(reason for _, reason in reasons)
                found = said[key] = (
                    Finding(
                        codes.HISTORY_NAME_INVALID,
                        "error",
                        ref.path,
                        f"{ref.path} {describe_name(ref.name)} {why}; providers reject the whole request for it",
                        rule.id,
                    ),
                )
        findings += found
    return findings


def check_request(view: RequestView, rule: NameRule, fmt: WireFormat) -> list[Finding]:
    """Every finding about the request ``view`` of format ``fmt`` (its choice quirks), under
    ``rule``. A batch's requests (``view.parts``) are checked each alone."""
    if view.parts:
        return [*view.problems, *(f for part in view.parts for f in check_request(part, rule, fmt))]
    if rule.honours_choice:
        choices = check_choices(view, fmt.choice_lists, fmt.none_needs_tools)
    else:
        choices = ignored_choices(view, rule)
    return [*view.problems, *check_tools(view, rule), *choices, *check_history(view, rule)]


def ignored_choices(view: RequestView, rule: NameRule) -> list[Finding]:
    """A tool choice other than auto, sent to a provider that ignores tool choices (Ollama,
    on its OpenAI- and Anthropic-compatible endpoints, docs/providers.md §11): the request
    goes through, and the model chooses as with auto, so a forced tool may never be called."""
    return [
        Finding(
            codes.CHOICE_IGNORED,
            "warning",
            choice.path,
            f"{choice.path} {_choice_text(choice)}, but this server (rule {rule.id}) ignores tool "
            "choices: the model chooses as with auto (it may call another tool, or none)",
            rule.id,
        )
        for choice in view.choices
        if choice.mode != "auto"
    ]
