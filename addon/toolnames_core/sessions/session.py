"""One WebSocket session of a live LLM API, from its messages' bytes to findings and fixes.

A ``Session`` is to a WebSocket connection what an ``Exchange`` is to one HTTP request:
everything toolnames knows about it, in one object that lives as long as the connection.
It keeps the tools in force (declared by one message, changed by a later one, or for one
response only), the calls already judged, fix mode's aliases, and every finding with the
index of the message it concerns. Bytes in, outcomes out; nothing here touches a socket.

    session = Session("openai-realtime", "openai", mode="block")
    outcome = session.receive(0, True, b'{"type": "session.update", ...}')
    outcome.block        # the error event or close to answer with, in block mode
    outcome.content      # the message as fix mode rewrote it, to send instead
    session.findings     # each with .message_index

Names are judged as on HTTP, with the same checks and codes (``request_checks``,
``response_checks``); a call is judged against the tools in force when it arrives.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import NamedTuple

from toolnames_core import codes
from toolnames_core import endpoints
from toolnames_core import fixes as fixes_
from toolnames_core import request_checks
from toolnames_core import response_checks
from toolnames_core.aliases import Restorer
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import Fix
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import SkippedFix
from toolnames_core.names import describe_name
from toolnames_core.readers import DEFAULT
from toolnames_core.readers import Reader
from toolnames_core.rules import RULES
from toolnames_core.sessions import gemini_live
from toolnames_core.sessions import realtime
from toolnames_core.sessions.base import Block
from toolnames_core.sessions.base import ClientMessage
from toolnames_core.sessions.base import ServerMessage
from toolnames_core.sessions.base import SessionProtocol
from toolnames_core.sessions.detect import detect_protocol

__all__ = ["MODES", "PROTOCOLS", "Outcome", "Session", "SessionFix", "inspect_session"]

# The protocols, in the order docs/usage.md names them.
_protocols = [realtime.PROTOCOL, gemini_live.PROTOCOL]
PROTOCOLS: dict[str, SessionProtocol] = {p.name: p for p in _protocols}
MODES = ("observe", "fix", "block")

# Client events remembered for undoing, should the provider reject one.
MAX_UNDO = 32
# Places held for the tools in force, when a message names tools it does not declare:
# fix mode plans aliases with them, and never splices there.
_IN_FORCE = "\0in-force"


class Outcome(NamedTuple):
    """What became of one message: what was found, and what to send instead of it."""

    findings: list[Finding]
    # The message as fix mode rewrote it (the app's names aliased, or given back).
    content: bytes | None = None
    # Block mode: do not forward the message; answer with this.
    block: Block | None = None


class SessionFix(NamedTuple):
    message_index: int
    fix: Fix


class Session:
    """One WebSocket connection to a live LLM API, message by message."""

    __slots__ = (
        "protocol",
        "rule",
        "host",
        "mode",
        "tools",
        "choice",
        "response_offer",
        "response_calls",
        "seen_calls",
        "findings",
        "fixes",
        "fix_skipped",
        "aliases",
        "restorer",
        "blocked",
        "messages",
        "last",
        "undo",
        "reader",
    )

    def __init__(
        self,
        protocol: str,
        rule: str,
        host: str = "",
        mode: str = "observe",
        reader: Reader = DEFAULT,
    ) -> None:
        if protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}; known rules: {', '.join(RULES)}")
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")
        self.protocol = PROTOCOLS[protocol]
        self.rule = rule
        self.host = host
        self.mode = mode
        # The session's tools and choice in force, under the app's own names.
        self.tools: list[NameRef] = []
        self.choice: Choice | None = None
        # A response.create's own tools and choice, for the response it asks for.
        self.response_offer: tuple[list[NameRef], Choice | None] | None = None
        self.response_calls: list[NameRef] = []
        # Calls already judged: one call shows up in several server events.
        self.seen_calls: set[str] = set()
        self.findings: list[Finding] = []  # each with its message_index
        self.fixes: list[SessionFix] = []
        self.fix_skipped: list[SkippedFix] = []
        self.aliases: dict[str, str] = {}  # alias -> the app's name, over the session
        self.restorer: Restorer | None = None
        self.blocked: list[int] = []  # indices of client messages never forwarded
        self.messages = 0  # messages read
        # What was in force before each recent client event that changed the session, by
        # its event_id: undone if the provider rejects that event.
        self.undo: dict[str, tuple[list[NameRef], Choice | None]] = {}
        # What the last message read declared or called (the content view shows it).
        self.last: ClientMessage | ServerMessage | None = None
        # How its messages are decoded (readers.py), as an Exchange's bodies are. The
        # protocols declare no shape, so the fast reader hands each message to json.
        self.reader = reader

    @property
    def api(self) -> str:
        return self.protocol.name

    @property
    def restored(self) -> int:
        return self.restorer.restored if self.restorer else 0

    def receive(self, index: int, from_client: bool, content: bytes) -> Outcome:
        """Read message ``index`` of the connection (its position in the flow's messages)."""
        self.messages += 1
        self.last = None
        if from_client:
            return self._client(index, content)
        sent = None
        # find, not in: docs/performance.md
        if self.restorer is not None and content.find(b"name") != -1:
            before = self.restorer.restored
            restored = self.restorer(content)
            if self.restorer.restored > before:
                sent = content = restored  # judged, and forwarded, with the app's names
        return self._server(index, content)._replace(content=sent)

    # -- reading -------------------------------------------------------------------------

    def _parse(self, index: int, content: bytes, from_client: bool) -> tuple[dict | None, list]:
        """The message as a JSON object; or None, with a finding if it is not JSON."""
        try:
            event = self.reader.body(content, None)
        except (ValueError, RecursionError) as e:
            code = codes.REQUEST_UNREADABLE if from_client else codes.RESPONSE_UNREADABLE
            side = "client" if from_client else "server"
            problem = Finding(
                code,
                "warning",
                "",
                f"toolnames could not read this {side} message as JSON ({type(e).__name__}); "
                "it was passed through unchecked",
            )
            return None, self._found(index, [problem])
        # Any other JSON value carries no tools, in either protocol.
        return (event if isinstance(event, dict) else None), []

    def _found(self, index: int, findings: list[Finding]) -> list[Finding]:
        found = [dataclasses.replace(f, message_index=index) for f in findings]
        self.findings += found
        return found

    # -- the client's messages -----------------------------------------------------------

    def _client(self, index: int, content: bytes) -> Outcome:
        event, problems = self._parse(index, content, True)
        if event is None:
            return Outcome(problems)
        message = self.last = self.protocol.read_client(event)
        if not message.names_anything:
            return Outcome([])
        tools = message.tools if message.tools is not None else self.tools
        choice = message.choice if message.choice_given else self.choice
        view = RequestView(self.api, tools=list(tools), tools_given=True, history=message.history)
        if choice is not None and (message.choice_given or message.tools is not None):
            view.choices.append(choice)
        rule = RULES[self.rule]
        found = list(message.problems)
        if message.tools is not None:
            found += request_checks.check_tools(view, rule)
        found += request_checks.check_choices(view)
        found += request_checks.check_history(view, rule)
        found += self._check_results(message)
        found = self._found(index, found)
        if self.mode == "block" and any(f.severity == "error" for f in found):
            # Never forwarded: the provider never sees it, and nothing of it is in force.
            self.blocked.append(index)
            errors = [f for f in found if f.severity == "error"]
            return Outcome(found, block=self.protocol.block(block_text(errors), errors[0], message))
        new = None
        if self.mode == "fix" and (found or self._names_aliased(message)):
            new = self._fix(index, content, message, view)
        self._take(message)
        return Outcome(found, content=new)

    def _names_aliased(self, message: ClientMessage) -> bool:
        """The message names, under the app's name, a tool that goes out under an alias
        (a choice of a tool declared earlier, a tool result): it is renamed alike."""
        if not self.aliases:
            return False
        named = {ref.name for ref in (*message.history, *message.results)}
        if message.choice is not None:
            named.update(ref.name for ref in message.choice.names)
        return not named.isdisjoint(self.aliases.values())

    def _check_results(self, message: ClientMessage) -> list[Finding]:
        declared = {t.name for t in self.tools}
        found = []
        for ref in message.results:
            if ref.name not in declared:
                offered = ", ".join(f"'{n}'" for n in sorted(declared)) or "none"
                found.append(
                    Finding(
                        codes.RESULT_UNKNOWN_TOOL,
                        "error",
                        ref.path,
                        f"{ref.path} {describe_name(ref.name)} answers a function the session never "
                        f"declared; declared: {offered}",
                    )
                )
        return found

    def _take(self, message: ClientMessage) -> None:
        """What a forwarded message declares is in force from now on."""
        if message.scope == "response":
            if message.tools is not None or message.choice_given:
                tools = message.tools if message.tools is not None else self.tools
                choice = message.choice if message.choice_given else self.choice
                self.response_offer = (tools, choice)
            return
        if message.event_id is not None and (message.tools is not None or message.choice_given):
            if len(self.undo) >= MAX_UNDO:
                del self.undo[next(iter(self.undo))]
            self.undo[message.event_id] = (self.tools, self.choice)
        if message.tools is not None:
            self.tools = message.tools
        if message.choice_given:
            self.choice = message.choice

    def _fix(
        self, index: int, content: bytes, message: ClientMessage, view: RequestView
    ) -> bytes | None:
        """Fix mode: every name the rule rejects goes out under its alias, here and in
        every later message; the server's events give the app its names back."""
        tools = view.tools
        if message.tools is None:
            # A choice may name a tool declared earlier: plan with those, splice only here.
            tools = [NameRef(t.name, (_IN_FORCE, i), t.kind) for i, t in enumerate(self.tools)]
        plan_view = RequestView(
            self.api,
            tools=tools,
            tools_given=True,
            choices=[message.choice] if message.choice else [],
            history=[*message.history, *message.results],
        )
        done = fixes_.rewrite(
            plan_view,
            RULES[self.rule],
            content,
            "not UTF-8; left as sent",
            splices=lambda where: where[:1] != (_IN_FORCE,),
        )
        self.fix_skipped += done.skipped
        if done.content is None:
            return None
        self.fixes += [SessionFix(index, f) for f in done.fixes]
        if any(alias not in self.aliases for alias in done.aliases):
            self.aliases.update(done.aliases)
            counted = self.restored
            self.restorer = Restorer(self.aliases)
            self.restorer.restored = counted
        return done.content

    # -- the server's messages -----------------------------------------------------------

    def _server(self, index: int, content: bytes) -> Outcome:
        event, problems = self._parse(index, content, False)
        if event is None:
            return Outcome(problems)
        message = self.last = self.protocol.read_server(event)
        if message.rejected_event in self.undo:
            self.tools, self.choice = self.undo.pop(message.rejected_event)
        if message.tools is not None:
            self.tools = message.tools
        tools, choice = self.response_offer or (self.tools, self.choice)
        found = []
        offer = RequestView(self.api, tools=list(tools), tools_given=True)
        for key, call in message.calls:
            if key is not None and key in self.seen_calls:
                continue
            if key is not None:
                self.seen_calls.add(key)
            self.response_calls.append(call)
            found += response_checks.check_calls([call], offer, RULES[self.rule])
        if message.response_done:
            if choice is not None:
                offer.choices.append(choice)
                found += [
                    f
                    for f in response_checks.check_calls(
                        self.response_calls, offer, RULES[self.rule]
                    )
                    if f.code == codes.RESPONSE_IGNORED_CHOICE
                ]
            self.response_offer = None
            self.response_calls = []
        return Outcome(self._found(index, found))


def block_text(errors: list[Finding]) -> str:
    first = errors[0]
    text = f"toolnames: {first.message}"
    if len(errors) > 1:
        rest = ", ".join(f"{f.code} at {f.path}" for f in errors[1:6])
        text += f". {len(errors) - 1} more error(s): {rest}"
    return text + ". The message was blocked by toolnames and never reached the provider."


def inspect_session(
    host: str,
    path: str,
    messages: Iterable[tuple[int, bool, bytes]],
    overrides: tuple = (),
    port: int | None = None,
    reader: Reader = DEFAULT,
) -> Session | None:
    """Everything the live addon checks, for one recorded WebSocket session: its messages
    as (index in the flow's messages, from_client, content), in order, without the ones
    toolnames or another addon injected. None when it is not a session toolnames reads.
    Used by the scanner over flow files."""
    protocol = detect_protocol(path)
    if protocol is None:
        return None
    rule = endpoints.choose_rule(PROTOCOLS[protocol], host, overrides, port).id
    session = Session(protocol, rule, host, reader=reader)
    for index, from_client, content in messages:
        session.receive(index, from_client, content)
    return session
