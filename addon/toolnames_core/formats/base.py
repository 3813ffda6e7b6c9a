"""What every wire-format adapter is made of: the WireFormat record (the finding makers adapters
and sessions share are in toolnames_core/findings.py)."""

from __future__ import annotations

__all__ = [
    "BlockResponse",
    "CallCollector",
    "Shapes",
    "WireFormat",
]

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple
from typing import Protocol

from toolnames_core.framings import Framing
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView


class BlockResponse(NamedTuple):
    """The answer a blocked request gets instead of the provider's."""

    status: int
    headers: dict[str, str]
    body: bytes


class CallCollector(Protocol):
    """Collects the tool calls of one streamed response, one decoded event at a time."""

    def event(self, data: dict) -> None:
        """Take one event: an SSE ``data:`` payload parsed as JSON, or for AWS event
        streams ``{<:event-type header>: <payload parsed as JSON>}``."""

    def calls(self) -> list[NameRef]:
        """Every call seen so far; ``where`` locates the name inside its event."""


class Shapes(NamedTuple):
    """What an adapter reads of a request body, a whole answer and one stream event: types
    (TypedDicts of the keys it looks at) the fast reader decodes into, skipping the rest
    (``readers.py``). Every key the adapter reads must be declared, with a type that takes
    every value the adapter handles, or the two readers would disagree; values shown in a
    finding's message are declared ``Any``, so they arrive whole."""

    request: object
    response: object
    event: object


@dataclass(frozen=True, slots=True)
class WireFormat:
    api: str
    title: str
    read_request: Callable[[dict], RequestView]
    # (message, first error finding) -> the answer a blocked request gets.
    block_response: Callable[[str, Finding], BlockResponse]
    # A complete, non-streamed response body -> the tool calls it makes.
    read_calls: Callable[[dict], list[NameRef]] | None = None
    # A fresh collector for one streamed response.
    stream_collector: Callable[[], CallCollector] | None = None
    # How a streamed answer is framed: an entry of framings.FRAMINGS.
    framing: Framing | None = None
    # What the fast reader decodes; None: it reads this format as the standard reader does.
    shapes: Shapes | None = None
