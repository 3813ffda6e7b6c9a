"""The response side: what the model called, checked against what the request offered."""

from __future__ import annotations

import json

from toolnames_core import codes
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.names import describe_name
from toolnames_core.names import quote_name
from toolnames_core.request_checks import offered_text

# OpenAI's internal dispatch wrapper, which models sometimes return as a call
# (docs/providers.md §1.3; vercel/ai PR #19098 saw it named plain "parallel").
PARALLEL_WRAPPERS = ("multi_tool_use.parallel", "parallel")


def unwrap_parallel(call: NameRef, arguments: object) -> list[NameRef]:
    """The calls inside a parallel wrapper; ``arguments`` is its JSON text (or parsed value)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return []
    uses = arguments.get("tool_uses") if isinstance(arguments, dict) else None
    if not isinstance(uses, list):
        return []
    base = (*call.where[:-1], "arguments", "tool_uses")
    inner = []
    for i, use in enumerate(uses):
        recipient = use.get("recipient_name") if isinstance(use, dict) else None
        if isinstance(recipient, str):
            name = recipient.removeprefix("functions.")
            inner.append(NameRef(name, (*base, i, "recipient_name"), "function"))
    return inner


def is_parallel_wrapper(name: str, offered_names: set[str]) -> bool:
    """OpenAI's wrapper, unless a tool of that name was offered (then it is that tool)."""
    return name in PARALLEL_WRAPPERS and name not in offered_names


def check_calls(calls: list[NameRef], view: RequestView, complete: bool = True) -> list[Finding]:
    """``complete`` is False for a stream that broke off: absent calls then prove nothing."""
    if not calls:
        return _check_choice(calls, view, complete)  # most answers: no name sets to build
    findings = []
    offered, builtins = view.offered_names, view.offered_builtins
    for call in calls:
        called = describe_name(call.name)
        if call.namespace is not None:
            if (call.namespace, call.name) in view.namespaced:
                continue
            declared = any(ns == call.namespace for ns, _ in view.namespaced)
            where = "which has no such tool" if declared else "which was never offered"
            what = f"{called} in namespace {describe_name(call.namespace)}, {where}; "
        else:
            known = builtins if call.kind == "builtin" else offered
            if call.name in known:
                continue
            if is_parallel_wrapper(call.name, offered):
                what = f"{called}, which is OpenAI's internal parallel-call wrapper, not an offered tool; "
            else:
                what = f"{called}, which was never offered; "
        findings.append(
            Finding(
                codes.RESPONSE_UNKNOWN_TOOL,
                "error",
                call.path,
                f"the model called {what}{offered_text(view)}. "
                "Kept in the history, this name can make every later request fail",
            )
        )
    real = [c for c in calls if not is_parallel_wrapper(c.name, offered)]
    findings += _check_choice(real, view, complete)
    return findings


def _check_choice(real: list[NameRef], view: RequestView, complete: bool) -> list[Finding]:
    """``real`` are the calls that are not a parallel wrapper."""
    for choice in view.choices:
        if choice.mode == "named" and choice.names:
            forced = choice.names[0].name
            others = sorted({c.name for c in real if c.name != forced})
            if others:
                return [
                    _ignored(
                        choice.path,
                        f"forced {quote_name(forced)}, but the model called {_names(others)}",
                    )
                ]
            if complete and not real:
                return [
                    _ignored(
                        choice.path, f"forced {quote_name(forced)}, but the model called no tool"
                    )
                ]
        elif choice.mode == "allowed" and choice.names:
            allowed = {ref.name for ref in choice.names}
            outside = sorted({c.name for c in real if c.name not in allowed})
            if outside:
                return [
                    _ignored(
                        choice.path,
                        f"allows only {_names(sorted(allowed))}, but the model called {_names(outside)}",
                    )
                ]
        elif choice.mode == "required" and complete and not real:
            # Named as sent: Anthropic's {"type": "any"}, Bedrock's {"any": {}}, "required".
            what = f"{choice.sent} requires" if choice.sent else "requires"
            return [_ignored(choice.path, f"{what} a tool call, but the model called no tool")]
    return []


def _names(names: list[str]) -> str:
    return ", ".join(map(quote_name, names))


def _ignored(path: str, message: str) -> Finding:
    return Finding(codes.RESPONSE_IGNORED_CHOICE, "warning", path, f"{path} {message}")
