"""The response side: what the model called, checked against what the request offered."""

from __future__ import annotations

from toolnames_core import codes
from toolnames_core.formats.openai_common import is_parallel_wrapper
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.names import describe_name
from toolnames_core.names import quote_name
from toolnames_core.request_checks import offered_text
from toolnames_core.rules import NameRule


def check_calls(
    calls: list[NameRef], view: RequestView, rule: NameRule, complete: bool = True
) -> list[Finding]:
    """``complete`` is False for a stream that broke off: absent calls then prove nothing.
    ``rule`` says what a call to a tool never offered does later (NameRule.replayed)."""
    if not calls:
        return _check_choice(calls, view, complete)  # most answers: no name sets to build
    findings = []
    offered, builtins = view.offered_names, view.offered_builtins
    for call in calls:
        if call.namespace is not None:
            if (call.namespace, call.name) in view.namespaced:
                continue
            called = describe_name(call.name)  # only for a finding: most calls are offered
            declared = any(ns == call.namespace for ns, _ in view.namespaced)
            where = "which has no such tool" if declared else "which was never offered"
            what = f"{called} in namespace {describe_name(call.namespace)}, {where}; "
        else:
            known = builtins if call.kind == "builtin" else offered
            if call.name in known:
                continue
            called = describe_name(call.name)
            if is_parallel_wrapper(call.name, offered):
                what = f"{called}, which is OpenAI's internal parallel-call wrapper, not an offered tool; "
            else:
                what = f"{called}, which was never offered; "
        findings.append(
            Finding(
                codes.RESPONSE_UNKNOWN_TOOL,
                "error",
                call.path,
                f"the model called {what}{offered_text(view)}. {rule.replayed()}",
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
