"""The content view's text for one WebSocket message: what it declares or calls, against
the tools in force at that point of the session, and its findings.

Pure: a ``Session`` that has just read the message in, text out
(``toolnames_mitm/view.py`` replays the flow's messages up to the one shown).
"""

from __future__ import annotations

from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.render.exchange import ERROR
from toolnames_core.render.exchange import name_verdict
from toolnames_core.render.exchange import shown_name
from toolnames_core.render.exchange import table
from toolnames_core.rules import RULES
from toolnames_core.sessions.base import ClientMessage
from toolnames_core.sessions.session import Session

__all__ = ["render_message"]


def _names(title: str, refs: list[NameRef], verdict) -> list[str]:
    rows = [(shown_name(r.name), len(r.name), verdict(r), r.path) for r in refs]
    return [f"{title}: {len(refs)}", *table(("name", "len", "verdict", "at"), rows)]


def render_message(
    session: Session,
    index: int,
    from_client: bool,
    recorded: list[Finding] | None = None,
    fixed: str | None = None,
) -> str:
    """``recorded``: the findings the live run recorded for this message, shown instead
    of the fresh ones (fix mode's messages hold the names as sent, not as the app wrote);
    ``fixed``: what fix mode changed in it, if it did (``FlowRecord.fixed_message``)."""
    rule = RULES[session.rule]
    side = "client → provider" if from_client else "provider → client"
    lines = [
        f"toolnames: {session.protocol.title} message {index} ({side}) · rule {rule.describe()}",
        "",
    ]
    declared = {t.name for t in session.tools}
    message = session.last
    if isinstance(message, ClientMessage):
        if message.tools is not None:
            lines += _names(
                f"Tools declared ({message.scope})",
                message.tools,
                lambda r: (
                    "built-in, not checked" if r.kind == "builtin" else name_verdict(r.name, rule)
                ),
            )
        if message.choice is not None:
            names = ", ".join(f"'{r.name}'" for r in message.choice.names)
            lines.append(f"Choice: {message.choice.mode} {names} at {message.choice.path}".rstrip())
        lines += (
            _names("Calls in history", message.history, lambda r: name_verdict(r.name, rule))
            if message.history
            else []
        )
        if message.results:
            lines += _names(
                "Tool results",
                message.results,
                lambda r: "declared" if r.name in declared else f"{ERROR} never declared",
            )
    elif message is not None and message.calls:
        offered = {t.name for t in (session.response_offer or (session.tools,))[0]}
        lines += _names(
            "Calls",
            [call for _, call in message.calls],
            lambda r: "declared" if r.name in offered else f"{ERROR} never declared",
        )
    if len(lines) == 2:
        lines.append("This message declares, forces and calls no tools.")
    shown = sorted(declared)
    lines += ["", f"Tools in force: {len(shown)}" + (": " + ", ".join(shown[:12]) if shown else "")]
    findings = (
        recorded
        if recorded is not None
        else [f for f in session.findings if f.message_index == index]
    )
    if fixed:
        lines += ["", f"Outcome: fixed in fix mode: {fixed}"]
    lines += ["", f"Findings: {len(findings)}" if findings else "Findings: none"]
    lines += [f"  {f.severity}: {f.code} at {f.path or '-'}: {f.message}" for f in findings]
    return "\n".join(lines) + "\n"
