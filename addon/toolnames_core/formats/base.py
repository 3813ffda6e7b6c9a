"""What every wire-format adapter is made of: the WireFormat record (the finding makers adapters
and sessions share are in toolnames_core/findings.py)."""

from __future__ import annotations

__all__ = [
    "BlockResponse",
    "CallCollector",
    "Carried",
    "EventRestore",
    "Shapes",
    "WireFormat",
    "bare_path",
    "read_once",
]

import re
import urllib.parse
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from operator import is_
from typing import NamedTuple
from typing import Protocol

from toolnames_core.framings import Framing
from toolnames_core.model import Finding
from toolnames_core.model import JsonPath
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


# How fix mode gives the app's names back inside one event's bytes: (the restorer, which
# rewrites JSON text) -> a rewrite of the event's bytes. A rewrite that gives back unchanged
# any bytes without some needle, while it waits on nothing, may say so (``needle``, and
# ``under_way``: empty when it waits on nothing), as the Restorer does: a stream's tap then
# passes such chunks on without calling it (streams.StreamTap).
EventRestore = Callable[[Callable[[bytes], bytes]], Callable[[bytes], bytes]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Carried:
    """A request body that travels encoded in one string member of the body sent (Bedrock's
    count-tokens: the InvokeModel body, in base64, at ``input.invokeModel.body``). The format
    reads the decoded body; its findings and fixes are pathed from the top of the body sent
    (``input.invokeModel.body.tools[0].name``), and fix mode renames inside the string and
    encodes it again (``carried.py``)."""

    # Where the string sits, and what it is encoded in (``base64``), as messages say it.
    where: JsonPath
    encoding: str
    # The string -> the body's bytes; a ValueError when it is not so encoded.
    decode: Callable[[str], bytes]
    # The body's bytes -> the string.
    encode: Callable[[bytes], str]
    # What the fast reader decodes of the body sent: the members down to the string, and
    # those of ``unread``.
    shape: object
    # Other members under which such a body carries tools toolnames does not read, each with
    # why: such a body is said to be unread, never passed off as one without tools.
    unread: Mapping[JsonPath, str] = field(default_factory=dict)


# Compared by identity, as a registry entry is: one record per format.
@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class WireFormat:
    """Everything that makes a wire format a format: how a request is recognised, the rule
    its names get, how its answers are framed and read, how names go back into them, and
    how its errors look (the block answer, and how the provider's verdict is read)."""

    # The format's id: in the record (``api``), in fixtures' names, in the docs.
    api: str
    title: str
    # -- how a request is recognised (``matches``, ``formats.format_for``)
    # Searched in the request path without its query and any trailing slash, decoded
    # (``bare_path``).
    path: re.Pattern[str]
    methods: tuple[str, ...] = ("POST",)
    # Paths real clients send, as they send them (query included): the tests read them.
    example_paths: tuple[str, ...]
    # The paths as people read them, in the view's text for a message of another API.
    path_text: str
    # -- its names' rule (``endpoints.choose_rule``)
    # The id of the rule (rules.RULES) a host not in the host table gets.
    rule: str
    # Whether the host table's rule for a known host wins over ``rule``.
    host_decides: bool = True
    # -- the request
    read_request: Callable[[dict], RequestView]
    # The top-level keys under which its requests offer tools: the shapes a request to a
    # path no format claims is recognised by as carrying tools (``unclaimed.py``), and what
    # a client resends alike every turn, decoded once for the same bytes by the fast reader
    # (``readers.py``).
    offer_keys: tuple[str, ...]
    # Choice keys that name an entry of one tool list only: {choice key: list key}.
    choice_lists: Mapping[str, str] = field(default_factory=dict)
    # Choice keys whose "none" the provider rejects when no tools are offered.
    none_needs_tools: tuple[str, ...] = ()
    # -- the answer
    # A complete, non-streamed response body -> the tool calls it makes.
    read_calls: Callable[[dict], list[NameRef]] | None = None
    # A fresh collector for one streamed response.
    stream_collector: Callable[[], CallCollector] | None = None
    # How a streamed answer is framed: an entry of framings.FRAMINGS.
    framing: Framing | None = None
    # How names are given back inside one event's bytes; None: the event's bytes are the
    # JSON the restorer rewrites.
    restore_event: EventRestore | None = None
    # What the fast reader decodes; None: it reads this format as the standard reader does.
    # For a carried body, what it decodes of the body carried.
    shapes: Shapes | None = None
    # The body ``read_request`` reads travels encoded inside the body sent; None: it is the
    # body sent.
    carried: Carried | None = None
    # -- errors
    # (message, first error finding) -> the answer a blocked request gets.
    block_response: Callable[[str, Finding], BlockResponse]
    # The provider's errors are AWS validation errors: list members counted from 1
    # (``toolConfig.tools.1.member.toolSpec.name``) and no value quoted, so a constraint
    # must fit the name it is tied to (rejections.py).
    aws_verdicts: bool = False
    # The provider validates the bodies after it has answered (Anthropic's batches): a 2xx is
    # no verdict on the names, so it is not read as the provider accepting them.
    validates_later: bool = False

    def matches(self, method: str, path: str) -> bool:
        """Whether a request of ``method`` to ``path`` (query and all) speaks this format."""
        return method.upper() in self.methods and self.path.search(bare_path(path)) is not None


def bare_path(path: str) -> str:
    """The path as formats match it: without its query and any trailing slash, and decoded:
    clients percent-encode a path's segments each in their own way (Bedrock's model ids:
    boto3 escapes ':' and '/', the anthropic SDKs only '/'), so a format matches what they
    mean, not how they spelled it."""
    path = path.split("?", 1)[0]
    if "%" in path:
        path = urllib.parse.unquote(path)
    return path.rstrip("/")


def read_once(read: Callable[..., object], value: object, view: RequestView, *args: object):
    """``read(value, view, *args)``, for a reader of a request's tools that only adds to the
    view's tools and problems (and says tools were given) what ``value`` and ``args`` decide.
    The fast reader hands the same decoded tools again for the same bytes (readers.py): read
    once for them (issue 25: at 100 tools, a third of an observed flow), the refs and
    findings shared by the views that read them, which never change them
    (``RequestView.move_under`` makes new ones). ``read``'s own answer is kept too."""
    if type(value) is not list or len(value) < _READ_ONCE_FROM:
        # A few tools are read in less than what keeping them costs (a small body's tools
        # are never the same list again: only a large body's are, readers.py).
        return read(value, view, *args)
    for at, kept in enumerate(_read_lately):
        if (
            kept.value is value
            and kept.read is read
            and kept.api == view.api
            and len(kept.args) == len(args)
            and all(map(is_, kept.args, args))
        ):
            del _read_lately[at]  # the last one used, the last to go
            _read_lately.append(kept)
            break
    else:
        # Read into the view itself, what it added told by where its lists ended before (a
        # view of its own to read into cost a small body's request a tenth more).
        tools, problems, given = len(view.tools), len(view.problems), view.tools_given
        view.tools_given = False
        answer = read(value, view, *args)
        kept = _Read(
            value,
            read,
            view.api,
            args,
            view.tools[tools:],
            view.problems[problems:],
            answer,
            view.tools_given,
        )
        view.tools_given = given or kept.given
        if len(_read_lately) >= _MAX_READ_LATELY:
            del _read_lately[0]
        _read_lately.append(kept)
        return answer
    view.tools += kept.tools
    view.problems += kept.problems
    view.tools_given = view.tools_given or kept.given
    return kept.answer


class _Read(NamedTuple):
    """What ``read_once`` read of one value: the value and how, then what it added."""

    value: object
    read: Callable[..., object]
    api: str
    args: tuple
    tools: list[NameRef]
    problems: list[Finding]
    answer: object
    given: bool


# As many formats' or clients' tools at once.
_read_lately: list[_Read] = []
_MAX_READ_LATELY = 4
_READ_ONCE_FROM = 8
