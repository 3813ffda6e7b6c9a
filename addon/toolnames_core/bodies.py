"""Reading bodies: the tool-key scan that spares most bodies a parse, and the parse itself."""

from __future__ import annotations

import gc
import re

from toolnames_core import codes
from toolnames_core.findings import type_name
from toolnames_core.formats import WireFormat
from toolnames_core.formats.base import Carried
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import format_path
from toolnames_core.readers import DEFAULT
from toolnames_core.readers import Reader
from toolnames_core.streams import StreamTap
from toolnames_core.streams import is_stream

__all__ = [
    "TOOL_KEY_START",
    "carried_body",
    "has_tool_keys",
    "nothing_to_check",
    "parse_object",
    "read_request",
    "read_response_calls",
    "unchecked_calls",
    "unreadable",
]

# A body that is a JSON object and holds none of these keys has nothing to check,
# so it is never parsed: requests without tools, and answers without calls, cost a
# substring search. Keys are matched as clients write them; one whose letters are
# \u-escaped (which no JSON encoder does unasked) is not seen.
TOOL_KEYS = re.compile(
    rb'"(?:tools|tool_choice|functions|function_call|tool_calls|custom_tool_call|additional_tools'
    rb"|toolConfig|tool_config|functionCall|functionResponse|function_response|toolUse|toolResult"
    rb"|tool_use|tool_result|function_call_output)\""
)
# What every tool key starts with: found a third faster than the keys themselves in a
# long conversation, then confirmed where it matched.
TOOL_KEY_START = re.compile(rb'"(?:tool|function|custom_tool_call"|additional_tools")')
OBJECT_START = re.compile(rb"\s*\{")
JSON_CONTAINER_START = re.compile(rb"\s*[\[{]")


def unreadable(message: str) -> Finding:
    return Finding(
        codes.REQUEST_UNREADABLE, "warning", "", f"toolnames could not read this request: {message}"
    )


def unchecked_calls(why: str) -> Finding:
    """The answer came, but its calls could not be read: said, never passed off as none."""
    return Finding(
        codes.RESPONSE_UNREADABLE,
        "warning",
        "",
        f"the tool calls in the answer were not checked: {why}",
    )


def parse_object(
    content: bytes,
    reader: Reader = DEFAULT,
    shape: object = None,
    what: str = "the body",
    resent: tuple[str, ...] = (),
) -> tuple[dict | None, Finding | None]:
    """The body as the object its adapter reads (``shape``: what the fast reader decodes;
    ``resent``: its members a client sends alike every request), or the finding that says
    why it cannot be read (``what``: the body, as it says it)."""
    try:
        body = reader.body(content, shape, resent)
    except RecursionError:
        return None, unreadable("the JSON is nested too deeply to read")
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError alike
        return None, unreadable(f"{what} is not JSON ({e})")
    if not isinstance(body, dict):
        return None, unreadable(f"{what} is {type_name(body)}, not a JSON object")
    return body, None


_ABSENT = object()


def _member(body: dict, where: tuple) -> object:
    value: object = body
    for key in where:
        if not isinstance(value, dict):
            return _ABSENT
        value = value.get(key, _ABSENT)
    return value


def carried_body(
    content: bytes, carried: Carried, reader: Reader = DEFAULT
) -> tuple[bytes | None, Finding | None]:
    """The bytes of the body ``content`` carries (formats/base.py ``Carried``); (None, None)
    when it carries none, and (None, the finding that says why) when it cannot be read: a
    string that is not in its encoding, or tools under a member toolnames does not read."""
    body, problem = parse_object(content, reader, carried.shape)
    if body is None:
        return None, problem
    value = _member(body, carried.where)
    path = format_path(carried.where)
    if value is _ABSENT or value is None:
        for where, why in carried.unread.items():
            if _member(body, where) not in (_ABSENT, None, {}, []):
                return None, unreadable(f"{format_path(where)} {why}")
        return None, None
    if not isinstance(value, str):
        return None, unreadable(f"{path} is {type_name(value)}, not a {carried.encoding} string")
    try:
        return carried.decode(value), None
    except ValueError as e:  # binascii.Error is one
        return None, unreadable(f"{path} is not {carried.encoding} ({e}), so its tools are unknown")


def nothing_to_check(content: bytes, fmt: WireFormat | None = None) -> bool:
    """A JSON object without any tool key: no finding is possible, so it is never parsed.
    A body of a format whose body is carried encoded (``fmt.carried``) hides its keys from
    the scan: it is always read."""
    if fmt is not None and fmt.carried is not None:
        return False
    return OBJECT_START.match(content) is not None and not _has_tool_key(content)


def has_tool_keys(content: bytes, fmt: WireFormat | None = None) -> bool:
    """A JSON object that holds a tool key somewhere: found by a scan, never a parse. A body
    of a format whose body is carried encoded (``fmt.carried``) may: the scan cannot tell."""
    if OBJECT_START.match(content) is None:
        return False
    return (fmt is not None and fmt.carried is not None) or _has_tool_key(content)


_CLOSING = {ord("{"): ord("}"), ord("["): ord("]")}
_JSON_SPACE = frozenset(b" \t\r\n")


def _ends_as_json(content: bytes, opening: int) -> bool:
    """Whether the body's last byte, past trailing whitespace, closes what its first opened:
    a whole JSON object or array does; a cut one almost never (a parse would tell for sure,
    but most answers are never parsed)."""
    end = len(content) - 1
    while end > 0 and content[end] in _JSON_SPACE:
        end -= 1
    return content[end] == _CLOSING[opening]


def _has_tool_key(content: bytes) -> bool:
    start = TOOL_KEY_START.search(content)
    while start is not None:
        if TOOL_KEYS.match(content, start.start()):
            return True
        start = TOOL_KEY_START.search(content, start.end())
    return False


def read_request(
    content: bytes, fmt: WireFormat, *, scanned: bool = False, reader: Reader = DEFAULT
) -> tuple[RequestView | None, Finding | None]:
    """What a request body of format ``fmt`` offers; (None, None) for a body without tools.
    ``scanned``: the caller knows the body holds a tool key."""
    carried = fmt.carried
    what = "the body"
    if carried is not None:
        # The body the format reads is inside the body sent, whose own keys say nothing.
        content, problem = carried_body(content, carried, reader)
        if content is None:
            return None, problem
        what = f"the body carried at {format_path(carried.where)}, decoded from {carried.encoding},"
        scanned = False
    if not scanned and nothing_to_check(content):
        return None, None
    # The one place toolnames touches the garbage collector, measured (scripts/bench (b)):
    # the parsed body is thousands of young containers that all die, by reference count,
    # when this returns. Left on, the collector runs every 2,000 allocations in the middle
    # of the parse, traverses them, and promotes what it cannot free yet to older
    # generations, whose collections then cost more: a 2 MB conversation spent more time in
    # the collector than in the parse. Paused, what dies here is never traversed. A
    # collector someone else paused is left paused.
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        shapes = fmt.shapes
        body, problem = parse_object(
            content, reader, shapes and shapes.request, what, fmt.offer_keys
        )
        if body is None:
            return None, problem
        view = fmt.read_request(body)
        if carried is not None:
            view.move_under(carried.where)
        return view, None
    except RecursionError:
        # json.loads took it, but on Python 3.11 json.dumps of a nested value (for a
        # message), called a few frames deeper, can still hit the recursion limit.
        return None, unreadable("the JSON is nested too deeply to read")
    finally:
        if collecting:
            gc.enable()


def read_response_calls(
    fmt: WireFormat, content_type: str, content: bytes, reader: Reader = DEFAULT
) -> tuple[list[NameRef], Finding | None]:
    """The tool calls in a complete response body of format ``fmt``, streamed or not."""
    if is_stream(content_type):
        if fmt.stream_collector is None or fmt.framing is None:
            return [], None
        tap = StreamTap(fmt, reader=reader).feed_all(content)
        return tap.calls(), tap.problem()
    start = JSON_CONTAINER_START.match(content)
    if fmt.read_calls is None or start is None:
        return [], None  # an error page or other non-JSON answer carries no calls
    if not _ends_as_json(content, content[start.end() - 1]):
        # Cut short (mitmproxy 12 decodes a gzip body cut off as far as it goes): what is
        # missing may hold calls, so it is never passed off as an answer without any.
        return [], unchecked_calls("the body ends before its JSON does (it was cut short)")
    if not _has_tool_key(content):
        return [], None  # every format's calls sit under a tool key: most answers are text
    try:
        body = reader.body(content, fmt.shapes and fmt.shapes.response)
    except RecursionError:
        return [], unchecked_calls("the JSON is nested too deeply to read")
    except ValueError as e:
        # It starts as JSON and names a tool key, but breaks off or is malformed (a gzip
        # body cut short, which mitmproxy 12 decodes as far as it goes): never clean.
        return [], unchecked_calls(f"the body is not JSON ({e})")
    # Gemini's streamGenerateContent without alt=sse answers with a JSON array of chunks.
    bodies = body if isinstance(body, list) else [body]
    return [
        call for part in bodies if isinstance(part, dict) for call in fmt.read_calls(part)
    ], None
