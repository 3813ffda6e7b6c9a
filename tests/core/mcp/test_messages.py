"""MCP's messages (mcp/messages.py): recognised by content, single or batch; SSE events
split anywhere; the Mcp-Name header's two forms."""

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolnames_core.mcp import header_value
from toolnames_core.mcp import is_mcp_request
from toolnames_core.mcp import parse_header_name
from toolnames_core.mcp import read_messages
from toolnames_core.mcp import sse_events


def body(value) -> bytes:
    return json.dumps(value).encode()


@pytest.mark.parametrize(
    "value",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "x"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ],
    ],
)
def test_a_json_rpc_body_with_an_mcp_method_is_mcp_at_any_path(value):
    messages = is_mcp_request(b"  \n" + body(value))
    assert messages is not None
    assert [m.where for m in messages] == (
        [(i,) for i in range(len(value))] if isinstance(value, list) else [()]
    )


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b'{"model": "gpt-4o", "messages": []}',
        body({"jsonrpc": "2.0", "id": 1, "method": "eth_getBalance"}),  # JSON-RPC, not MCP
        body({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}),
        body({"jsonrpc": "2.0", "id": 1, "result": {}}),  # an answer alone names no method
        b'"jsonrpc"',
        b'{"jsonrpc": "2.0", "method": "tools/list"',  # cut short
        b"[]",
        b'[1, 2, "jsonrpc"]',
    ],
)
def test_other_bodies_are_not_mcp(content):
    assert is_mcp_request(content) is None


def test_kinds_of_message():
    request, notification, answer, error = read_messages(
        body(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                {"jsonrpc": "2.0", "method": "notifications/cancelled"},
                {"jsonrpc": "2.0", "id": 1, "result": {}},
                {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "no"}},
            ]
        )
    )
    assert request.is_request and not request.is_response
    assert not notification.is_request and not notification.is_response
    assert answer.is_response and error.is_response and answer.id == 1


@pytest.mark.parametrize("name", ["get_weather", "search docs", "github.create_issue"])
def test_a_plain_name_travels_as_it_is_in_mcp_name(name):
    assert header_value(name) == name
    assert parse_header_name(name) == name


@pytest.mark.parametrize("name", ["météo", " lead", "tab\there", "日本"])
def test_other_names_travel_in_the_base64_form_and_come_back(name):
    value = header_value(name)
    assert value.startswith("=?base64?") and value.endswith("?=") and value.isascii()
    assert parse_header_name(value) == name


def test_a_broken_base64_form_is_taken_as_it_is():
    assert parse_header_name("=?base64?***?=") == "=?base64?***?="


STREAM = (
    b": keep-alive\r\n\r\n"
    b'event: message\r\nid: 1\r\ndata: {"a":\r\ndata:1}\r\n\r\n'
    b"data: two\n\n"
    b"data:three\rdata\r\r"
)


def all_events(chunks, final=True):
    buffer, events = b"", []
    for chunk in chunks:
        buffer += chunk
        done, used = sse_events(buffer)
        events += done
        buffer = buffer[used:]
    done, _ = sse_events(buffer, final=final)
    return events + done


def test_events_their_raw_bytes_and_data():
    events = all_events([STREAM])
    assert b"".join(e.raw for e in events) == STREAM
    assert [e.data for e in events] == [b"", b'{"a":\n1}', b"two", b"three\n"]


@given(st.lists(st.integers(0, len(STREAM)), max_size=12))
def test_events_are_the_same_however_the_stream_is_split(cuts):
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    events = all_events(chunks)
    assert b"".join(e.raw for e in events) == STREAM
    assert [e.data for e in events] == [b"", b'{"a":\n1}', b"two", b"three\n"]


LINE_END = re.compile(rb"\r\n|\r|\n")


def events_by_expression(buffer: bytes, final: bool) -> tuple[list, int]:
    """The events as WHATWG's line rules read them, each (raw, [data values]), and the bytes
    they take, with the line ends a regular expression finds: the oracle for sse_events."""
    events, start, line, data = [], 0, 0, []
    for m in LINE_END.finditer(buffer):
        if m.group() == b"\r" and m.end() == len(buffer) and not final:
            break
        if m.start() == line:
            events.append((buffer[start : m.end()], data))
            data, start = [], m.end()
        else:
            data += data_value(buffer[line : m.start()])
        line = m.end()
    if final and start < len(buffer):
        if line < len(buffer):
            data += data_value(buffer[line:])
        events.append((buffer[start:], data))
        start = len(buffer)
    return events, start


def data_value(line: bytes) -> list[bytes]:
    name, _, value = line.partition(b":")
    return [value[1:] if value.startswith(b" ") else value] if name == b"data" else []


SSE_PARTS = [b"\r", b"\n", b"\r\n", b"data", b":", b" ", b"x", b"event: endpoint", b"\xc3\xa9"]


@given(st.lists(st.sampled_from(SSE_PARTS), max_size=40).map(b"".join), st.booleans())
def test_events_are_read_by_the_line_rules_whatever_the_line_ends(buffer, final):
    events, used = sse_events(buffer, final=final)
    read = [(e.raw, [e.raw[a:b] for a, b in e.data_spans]) for e in events]
    assert (read, used) == events_by_expression(buffer, final)


def test_a_crlf_split_between_its_cr_and_lf_waits():
    events, used = sse_events(b"data: x\r\n\r")
    assert events == [] and used == 0
    events, used = sse_events(b"data: x\r\n\r\n")
    assert [e.data for e in events] == [b"x"] and used == 11


def test_an_event_the_stream_ends_without_its_blank_line_still_counts():
    assert [e.data for e in all_events([b"data: last"])] == [b"last"]
    assert [e.data for e in all_events([b"data: last"], final=False)] == []
