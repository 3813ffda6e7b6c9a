"""What a WebSocket protocol adapter is made of, and what it reads out of one message.

An adapter reads one parsed message at a time and says what it declares, forces,
remembers or calls; the ``Session`` keeps what is in force and judges it. Paths in a
message's records are JSON paths inside that message (``session.tools[1].name``), as the
providers print them in their error events.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import NamedTuple

from toolnames_core.findings import malformed
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import JsonPath
from toolnames_core.model import NameRef

__all__ = ["Block", "ClientMessage", "ServerMessage", "SessionProtocol"]


@dataclass(slots=True)
class ClientMessage:
    """What one client message declares, forces, remembers and answers."""

    # The tools the message declares; None when it leaves the tools in force as they are
    # (an empty list clears them).
    tools: list[NameRef] | None = None
    # Its choice, or None when it sets none; a choice of "auto" or "none" forces nothing.
    choice: Choice | None = None
    choice_given: bool = False
    # "session": the declaration stays in force until the next one; "response": it holds
    # for the one response the message asks for (OpenAI Realtime's response.create).
    scope: str = "session"
    # Names of calls the client puts into the conversation.
    history: list[NameRef] = field(default_factory=list)
    # Names of functions whose results the client sends (Gemini Live's toolResponse).
    results: list[NameRef] = field(default_factory=list)
    # The client's own id of this message, for an error event that answers it.
    event_id: str | None = None
    problems: list[Finding] = field(default_factory=list)

    def declare_tools(self, tools: object, where: JsonPath) -> Iterator[tuple[JsonPath, dict]]:
        """The message declares the tools of the array ``tools`` at ``where``: iterated, it
        starts with none and yields each entry that is an object, with its path, for the
        adapter to read; an array that is not one, or an entry that is not an object, is a
        problem, reported in its turn among the adapter's own."""
        self.tools = []
        if not isinstance(tools, list):
            self.problems.append(malformed(where, "an array", tools))
            return
        for i, tool in enumerate(tools):
            if isinstance(tool, dict):
                yield (*where, i), tool
            else:
                self.problems.append(malformed((*where, i), "an object", tool))

    def declare(self, name: object, where: JsonPath, kind: str = "function") -> None:
        """One tool named ``name``, whose path is ``where``, or a problem if it is no string."""
        if isinstance(name, str):
            self.tools.append(NameRef(name, where, kind))
        else:
            self.problems.append(malformed(where, "a string", name))

    @property
    def names_anything(self) -> bool:
        return bool(
            self.tools is not None
            or self.choice_given
            or self.history
            or self.results
            or self.problems
        )


@dataclass(slots=True)
class ServerMessage:
    """What one server message calls or reports."""

    # (the call's identity within the session, where its name sits): one call shows up in
    # several events (added, arguments done, item done, response done), judged once.
    calls: list[tuple[str, NameRef]] = field(default_factory=list)
    # The tools the server says are in force (a session.created that an ephemeral
    # token's configuration set up), or None.
    tools: list[NameRef] | None = None
    # The response is complete: every call it made is in ``calls``.
    response_done: bool = False
    # The client event the provider rejected (Realtime's error event names its event_id):
    # what it declared never came into force.
    rejected_event: str | None = None


class Block(NamedTuple):
    """How a blocked client message is answered: an error event to inject towards the
    client (``event``), or a close of the connection with a code and a reason."""

    event: bytes | None = None
    close_code: int = 0
    close_reason: str = ""


@dataclass(frozen=True, slots=True)
class SessionProtocol:
    name: str
    title: str
    # The id of the rule a session's names get on a host the host table does not know: the
    # rule of the HTTP API of the same provider (endpoints.choose_rule).
    rule: str
    read_client: Callable[[dict], ClientMessage]
    read_server: Callable[[dict], ServerMessage]
    # (toolnames' message, the first error, the blocked message) -> the client's answer.
    block: Callable[[str, Finding, ClientMessage], Block]
    # Whether the host table's rule for a known host wins over ``rule``.
    host_decides: bool = True
