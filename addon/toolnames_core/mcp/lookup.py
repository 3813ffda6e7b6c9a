"""Restoring an alias with nothing remembered: a ``tools/call`` of a name in the form of an
alias fix mode lists, when toolnames has no listing of that server (mitmdump restarted, the
client kept its listing, or listed through another proxy), is held while toolnames asks
the server for its ``tools/list`` (every page) and maps the alias back by the same pure
function the listing used (``McpExchange.learn_listing``).

This module is the pure part: which names are worth asking about, the request to send, and
what its answer says. The glue (``toolnames_mitm/mcp.py``) sends it through mitmproxy, with
the call's own headers (its session, its credentials: held in memory only, never logged or
saved), and gives up after ``LOOKUP_TIMEOUT`` seconds, saying so.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from toolnames_core.mcp.messages import read_messages
from toolnames_core.mcp.messages import sse_events
from toolnames_core.rules import NameRule
from toolnames_core.rules import valid_name_pattern

__all__ = [
    "CONTEXT_META",
    "LOOKUP_ID",
    "LOOKUP_MAX_PAGES",
    "LOOKUP_TIMEOUT",
    "ListingPage",
    "looks_like_alias",
    "lookup_request",
    "read_lookup_answer",
]

# The JSON-RPC id of toolnames' own tools/list: a string no client is likely to pick, and
# the page's number after it, so each page's answer is told apart.
LOOKUP_ID = "toolnames-lookup-"
# A server listing more pages than this is not followed further (nor one whose cursor repeats).
LOOKUP_MAX_PAGES = 64
# Seconds the call is held at most, every page included; then it goes on as it came.
LOOKUP_TIMEOUT = 10.0
# The 2026-07-28 revision has no session: each request carries the client's context in
# ``params._meta``, and a server may refuse a request without it. Only these keys are the
# client's context; the call's others (a progress token) are the call's own.
CONTEXT_META = (
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/clientCapabilities",
)

# aliases.alias_for: the name made valid, "_", then 8 (or, on a clash, 16) hex digits of
# the name's SHA-256.
_ALIAS_TAIL = re.compile(r"_(?:[0-9a-f]{8}|[0-9a-f]{16})\Z")


def looks_like_alias(name: str, rule: NameRule) -> bool:
    """Whether ``name`` has the form of an alias fix mode lists under ``rule``: only then is a
    server asked (a name of that form may still be the server's own: the listing tells)."""
    return (
        _ALIAS_TAIL.search(name) is not None
        and valid_name_pattern(rule).fullmatch(name) is not None
    )


def lookup_request(page: int, cursor: str | None, call_params: object) -> bytes:
    """The body of toolnames' ``tools/list`` for ``page`` (from 0), ``cursor`` the previous
    page's ``nextCursor``; the client's context copied from the call (``CONTEXT_META``)."""
    params: dict = {}
    if cursor is not None:
        params["cursor"] = cursor
    meta = call_params.get("_meta") if isinstance(call_params, dict) else None
    if isinstance(meta, dict):
        context = {key: meta[key] for key in CONTEXT_META if key in meta}
        if context:
            params["_meta"] = context
    message = {"jsonrpc": "2.0", "id": f"{LOOKUP_ID}{page}", "method": "tools/list"}
    if params:
        message["params"] = params
    return json.dumps(message).encode()


class ListingPage(NamedTuple):
    """One page of the server's listing: its names, and the cursor of the next (None: the last)."""

    names: list[str]
    cursor: str | None


def read_lookup_answer(
    page: int, status: int | None, content_type: str, content: bytes
) -> ListingPage | str | None:
    """What the server answered to toolnames' ``tools/list`` of ``page``: the page, or why it
    tells nothing (said in the call's record as the reason the alias was not restored), or
    None when ``content`` (an event stream so far) holds no answer to it yet."""
    if status is None:
        return "the server gave no answer"
    if status == 202:
        return "the server answers on its event stream (the HTTP+SSE transport), not here"
    if not 200 <= status < 300:
        return f"the server answered HTTP {status}"
    wanted = f"{LOOKUP_ID}{page}"
    if "text/event-stream" in content_type.lower():
        events, _ = sse_events(content, final=True)
        datas = [event.data for event in events if event.data_spans]
    else:
        datas = [content]
    for data in datas:
        for message in read_messages(data) or ():
            if message.id != wanted or not message.is_response:
                continue
            if "error" in message.value:
                error = message.value["error"]
                text = error.get("message") if isinstance(error, dict) else None
                return (
                    f"the server answered an error: {text!r}"
                    if text
                    else "the server answered an error"
                )
            result = message.value.get("result")
            tools = result.get("tools") if isinstance(result, dict) else None
            if not isinstance(tools, list):
                return "the server's answer lists no tools"
            names = [
                t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)
            ]
            cursor = result.get("nextCursor")
            return ListingPage(names, cursor if isinstance(cursor, str) and cursor else None)
    return None
