"""The core as the tests drive it: exchanges checked, calls judged, views rendered, and
small chat bodies and answers to feed them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from toolnames_core import Exchange
from toolnames_core import FlowRecord
from toolnames_core import render_request
from toolnames_core import render_response
from toolnames_core.formats import FORMATS
from toolnames_core.formats import format_for
from toolnames_core.formats import format_named
from toolnames_core.model import NameRef
from toolnames_core.record import RecordedFix
from toolnames_core.rules import rule_named

__all__ = [
    "UNUSUAL_NAMES",
    "api_for",
    "cells",
    "chat_answer",
    "chat_body",
    "exchange_for",
    "found",
    "judge",
    "record_metadata",
    "refs",
    "render_request_text",
    "render_response_text",
    "row_of",
    "stream_calls",
]


def found(result: Exchange) -> list[tuple[str, str, str]]:
    return sorted((f.code, f.severity, f.path) for f in result.findings)


def refs(calls: Iterable[NameRef]) -> list[tuple[str, str, str]]:
    return [(c.name, c.kind, c.path) for c in calls]


def stream_calls(api: str, events: Iterable[object]) -> list[NameRef]:
    """The calls a fresh stream collector of ``api`` finds in ``events``, given in order."""
    collector = FORMATS[api].stream_collector()
    for event in events:
        collector.event(event)
    return collector.calls()


def api_for(method: str, path: str) -> str | None:
    """The id of the format a request of ``method`` to ``path`` speaks; None for none."""
    fmt = format_for(method, path)
    return fmt.api if fmt else None


def exchange_for(content: bytes | None, api: str, rule: str, fix: bool = False) -> Exchange:
    """An exchange whose request ``content`` has been checked (None: a request not read)."""
    exchange = Exchange(format_named(api), rule_named(rule))
    if content is None:
        exchange.request_unreadable("the body was not read")
    else:
        exchange.check_request(content, fix=fix)
    return exchange


def judge(
    request: bytes | None, api: str, calls: list, complete: bool = True, rule: str = "openai"
) -> list:
    """The findings about ``calls`` in an answer to ``request`` (None: a request not read)."""
    return exchange_for(request, api, rule).check_calls(calls, complete)


def render_request_text(content: bytes, api: str, rule: str, meta: object = None) -> str:
    exchange = exchange_for(content, api, rule)
    return render_request(exchange, FlowRecord.from_metadata(meta))


def render_response_text(
    content: bytes,
    content_type: str,
    api: str,
    rule: str,
    request_content: bytes | None = None,
    meta: object = None,
    status: int | None = 200,
) -> str:
    exchange = exchange_for(request_content, api, rule)
    exchange.check_response(status, content_type, content)
    return render_response(exchange, status, FlowRecord.from_metadata(meta))


def record_metadata(
    api: str, rule: str, mode: str, action: str, findings: list, fixes: list | None = None
) -> dict:
    """A flow's toolnames metadata as the addon writes it; ``fixes`` are ``Fix`` records."""
    recorded = [RecordedFix(f.path, f.old, f.new, f.rewrite) for f in fixes or []]
    return FlowRecord(api, rule, mode, action, list(findings), recorded).to_metadata()


def chat_body(tools=("get_weather",), tool_choice=None, history=()) -> bytes:
    messages: list[dict] = [{"role": "user", "content": "hi"}]
    for name in history:
        call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
        messages.append({"role": "assistant", "tool_calls": [call]})
    body: dict = {"model": "gpt-4.1", "messages": messages}
    if tools is not None:
        body["tools"] = [{"type": "function", "function": {"name": n}} for n in tools]
    if tool_choice is not None:
        body["tool_choice"] = {"type": "function", "function": {"name": tool_choice}}
    return json.dumps(body).encode()


def chat_answer(*names: str) -> bytes:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
        for i, n in enumerate(names)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return json.dumps({"choices": [{"index": 0, "message": message}]}).encode()


def row_of(text: str, name: str) -> str:
    """The table row that starts with ``name`` (rows are indented by two spaces)."""
    return next(line for line in text.splitlines() if line.startswith(f"  {name} "))


def cells(row: str) -> list[str]:
    """A row's cells: columns are at least two spaces apart."""
    return re.split(r" {2,}", row.strip())


# Names that hide, reorder or impersonate characters, with how toolnames shows them: quoted
# in one escaped form, each unusual character named (names.py). One table for the core's
# own tests and the addon's log line, comment and block message.
UNUSUAL_NAMES = [
    # A bidi override that makes the name read 'searchbew' on screen.
    ("search\u202eweb", r"'search\u202eweb'", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("search\u200bweb", r"'search\u200bweb'", "U+200B ZERO WIDTH SPACE"),
    ("get\nweather\t", r"'get\nweather\t'", "U+000A LINE FEED, U+0009 CHARACTER TABULATION"),
    ("e\u0301cho", r"'e\u0301cho'", "U+0301 COMBINING ACUTE ACCENT"),
    # A Cyrillic 'а' that looks like the Latin one.
    ("se\u0430rch", r"'se\u0430rch'", "U+0430 CYRILLIC SMALL LETTER A"),
    ("nb\u00a0sp", r"'nb\u00a0sp'", "U+00A0 NO-BREAK SPACE"),
    ("lone\ud800", r"'lone\ud800'", "U+D800 <lone surrogate>"),
    ("emoji\U0001f600", r"'emoji\U0001f600'", "U+1F600 GRINNING FACE"),
    ("c1\x85", r"'c1\u0085'", "U+0085 <control>"),
]
