"""From request bytes to findings, fixes and a block answer: the whole request side, pure."""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from dataclasses import field

from toolnames_core import calls as calls_
from toolnames_core import checks
from toolnames_core import endpoints
from toolnames_core import fixes as fixes_
from toolnames_core.formats import FORMATS
from toolnames_core.formats import BlockResponse
from toolnames_core.formats import type_name
from toolnames_core.model import Finding
from toolnames_core.model import Fix
from toolnames_core.model import RequestView
from toolnames_core.rules import RULES

# A body that is a JSON object and holds none of these keys has nothing to check,
# so it is never parsed: requests without tools, and answers without calls, cost a
# substring search. Keys are matched as clients write them; one whose letters are
# \u-escaped (which no JSON encoder does unasked) is not seen.
_TOOL_KEYS = re.compile(
    rb'"(?:tools|tool_choice|functions|function_call|tool_calls|custom_tool_call|additional_tools'
    rb"|toolConfig|tool_config|functionCall|functionResponse|function_response|toolUse|toolResult"
    rb"|tool_use|tool_result|function_call_output)\""
)
# What every tool key starts with: found a third faster than the keys themselves in a
# long conversation, then confirmed where it matched.
_TOOL_KEY_START = re.compile(rb'"(?:tool|function|custom_tool_call"|additional_tools")')
_OBJECT_START = re.compile(rb"\s*\{")
_JSON_CONTAINER_START = re.compile(rb"\s*[\[{]")


@dataclass(slots=True)
class RequestAnalysis:
    api: str
    rule: str
    findings: list[Finding] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)
    fix_skipped: list[dict] = field(default_factory=list)
    view: RequestView | None = None
    new_body: bytes | None = None
    # False when the body could not be read: what it offered is unknown.
    readable: bool = True

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]


def unreadable(message: str) -> Finding:
    return Finding(
        "request-unreadable", "warning", "", f"toolnames could not read this request: {message}"
    )


def parse_object(content: bytes) -> tuple[dict | None, Finding | None]:
    try:
        body = json.loads(content)
    except RecursionError:
        return None, unreadable("the JSON is nested too deeply to read")
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError alike
        return None, unreadable(f"the body is not JSON ({e})")
    if not isinstance(body, dict):
        return None, unreadable(f"the body is {type_name(body)}, not a JSON object")
    return body, None


def nothing_to_check(content: bytes) -> bool:
    """A JSON object without any tool key: no finding is possible, so it is never parsed."""
    return _OBJECT_START.match(content) is not None and not _has_tool_key(content)


def has_tool_keys(content: bytes) -> bool:
    """A JSON object that holds a tool key somewhere: found by a scan, never a parse."""
    return _OBJECT_START.match(content) is not None and _has_tool_key(content)


def _has_tool_key(content: bytes) -> bool:
    start = _TOOL_KEY_START.search(content)
    while start is not None:
        if _TOOL_KEYS.match(content, start.start()):
            return True
        start = _TOOL_KEY_START.search(content, start.end())
    return False


# Below this size a body is scanned again sooner than its verdict is stored and found.
_REMEMBER_SKIPPED = 16 * 1024


def skip_request(content: bytes, api: str) -> bool:
    """``nothing_to_check``, remembered for the response side of a large body."""
    if not nothing_to_check(content):
        return False
    if len(content) >= _REMEMBER_SKIPPED:
        _handoff.put(content, api, None, readable=True)
    return True


def read_request(
    content: bytes, api: str, *, scanned: bool = False
) -> tuple[RequestView | None, Finding | None]:
    """``scanned``: the caller knows the body holds a tool key (``skip_request`` said no)."""
    if not scanned and nothing_to_check(content):
        return None, None
    body, problem = parse_object(content)
    if body is None:
        return None, problem
    try:
        return FORMATS[api].read_request(body), None
    except RecursionError:
        # json.loads took it, but on Python 3.11 json.dumps of a nested value (for a
        # message), called a few frames deeper, can still hit the recursion limit.
        return None, unreadable("the JSON is nested too deeply to read")


class _Handoff:
    """What the request side read, kept for the response side of the same exchange.

    mitmproxy gives the response hook the very bytes object the request hook read (the
    scanner does the same), so the response side finds the view by identity and the body
    is parsed, or scanned, once per flow. A body replaced in between (fix mode, another
    addon) is another object and is read again. The entries hold their bodies, so that an
    id is never reused while it is a key; bounded in entries and bytes, a flow whose
    response is never checked (an error status, a block) holds a slot until pushed out.
    """

    MAX_ENTRIES = 64
    MAX_BYTES = 32 * 1024 * 1024

    def __init__(self) -> None:
        self.entries: OrderedDict[int, tuple[bytes, str, RequestView | None, bool]] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def put(self, content: bytes, api: str, view: RequestView | None, readable: bool) -> None:
        if len(content) > self.MAX_BYTES // 4:
            return
        with self.lock:
            old = self.entries.pop(id(content), None)
            if old is not None:
                self.size -= len(old[0])
            self.entries[id(content)] = (content, api, view, readable)
            self.size += len(content)
            while len(self.entries) > self.MAX_ENTRIES or self.size > self.MAX_BYTES:
                self.size -= len(self.entries.popitem(last=False)[1][0])

    def take(self, content: bytes, api: str) -> tuple[bool, RequestView | None, bool]:
        """(found, view, readable) of what the request side read from ``content``."""
        with self.lock:
            entry = self.entries.get(id(content))
            if entry is None or entry[0] is not content or entry[1] != api:
                return False, None, False
            del self.entries[id(content)]
            self.size -= len(content)
        return True, entry[2], entry[3]


_handoff = _Handoff()


def analyse_request(
    content: bytes,
    api: str,
    rule: str,
    *,
    fix: bool = False,
    scanned: bool = False,
    remember: bool = True,
) -> RequestAnalysis:
    """``remember``: keep the view for ``analyse_response`` of the same bytes (the caller
    that checks the response itself, with ``result.view``, says False)."""
    result = RequestAnalysis(api, rule)
    view, problem = read_request(content, api, scanned=scanned)
    if remember:
        _handoff.put(content, api, view, readable=problem is None)
    if problem:
        result.readable = False
        result.findings.append(problem)
    if view is None:
        return result
    result.view = view
    result.findings = checks.check_request(view, RULES[rule])
    if fix and any(f.code == "choice-not-in-tools" for f in result.findings):
        plan = fixes_.plan_fixes(view)
        result.fix_skipped = plan.skipped
        if plan.fixes:
            try:
                text = content.decode("utf-8")
            except UnicodeDecodeError:
                result.fix_skipped += [
                    {"path": f.path, "name": f.old, "reason": "the body is not UTF-8; left as sent"}
                    for f in plan.fixes
                ]
            else:
                result.fixes = plan.fixes
                result.new_body = fixes_.apply_fixes(text, plan.fixes).encode("utf-8")
    return result


def block_message(findings: list[Finding], view: RequestView | None) -> str:
    errors = [f for f in findings if f.severity == "error"]
    first = errors[0]
    message = f"toolnames: {first.message}"
    if first.code != "choice-not-in-tools" and view is not None:
        message += f"; {checks.offered_text(view)}"
    if len(errors) > 1:
        rest = ", ".join(f"{f.code} at {f.path}" for f in errors[1:6])
        more = f" and {len(errors) - 6} more" if len(errors) > 6 else ""
        message += f". {len(errors) - 1} more error(s): {rest}{more}"
    return message + ". The request was blocked by toolnames and never reached the provider."


def block_response(result: RequestAnalysis) -> BlockResponse:
    return FORMATS[result.api].block_response(
        block_message(result.findings, result.view), result.errors[0]
    )


def read_response_calls(api: str, content_type: str, content: bytes) -> tuple[list, Finding | None]:
    """The tool calls in a complete response body, streamed or not."""
    fmt = FORMATS[api]
    if calls_.is_stream(content_type):
        if fmt.stream_collector is None:
            return [], None
        tap = calls_.StreamTap(fmt).feed_all(content)
        return tap.calls(), tap.problem()
    if fmt.read_calls is None or not _JSON_CONTAINER_START.match(content):
        return [], None  # an error page or other non-JSON answer carries no calls
    if not _has_tool_key(content):
        return [], None  # every format's calls sit under a tool key: most answers are text
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):
        return [], None
    # Gemini's streamGenerateContent without alt=sse answers with a JSON array of chunks.
    bodies = body if isinstance(body, list) else [body]
    return [
        call for part in bodies if isinstance(part, dict) for call in fmt.read_calls(part)
    ], None


def analyse_response(
    request_content: bytes | None, api: str, calls: list, complete: bool
) -> list[Finding]:
    """The calls of an answer against what its request offered and forced; ``request_content``
    None when the request body was not read (too large, streamed, undecodable)."""
    if request_content is None:
        return []
    found, view, readable = _handoff.take(request_content, api)
    if not found:
        view, problem = read_request(request_content, api)
        readable = problem is None
    if not readable:
        return []  # what the request offered is unknown: no call can be judged by it
    return calls_.check_calls(calls, view or RequestView(api), complete)


@dataclass(slots=True)
class ExchangeReport:
    api: str
    rule: str
    findings: list[Finding]


def inspect_exchange(
    method: str,
    host: str,
    path: str,
    request_content: bytes | None,
    response_status: int | None = None,
    response_content_type: str = "",
    response_content: bytes | None = None,
    overrides: tuple = (),
    request_problem: str | None = None,
) -> ExchangeReport | None:
    """Everything the live addon checks, for one recorded request and its response.

    Used by the scanner over flow files, HAR files and cassettes; None when the
    request is not an LLM API call toolnames knows. ``request_problem`` says why
    a recorded body could not be read (an undecodable content-encoding), which is
    reported as the live addon reports it.
    """
    api = endpoints.detect_api(method, path)
    if api is None or api not in FORMATS:
        return None
    rule = endpoints.choose_rule(api, host, overrides)
    if request_problem is not None:
        findings = [unreadable(request_problem)]
    elif request_content is None:
        findings = [unreadable("the recording holds no request body")]
    else:
        findings = analyse_request(request_content, api, rule).findings
    if (
        response_content is not None
        and response_status is not None
        and 200 <= response_status < 300
    ):
        calls, problem = read_response_calls(api, response_content_type, response_content)
        request = None if request_problem else request_content
        findings += analyse_response(request, api, calls, complete=True)
        if problem:
            findings.append(problem)
    return ExchangeReport(api, rule, findings)
