"""The content view's MCP text (render/mcp.py)."""

import json

from tests.testkit import row_of
from toolnames_core import FlowRecord
from toolnames_core.mcp import McpExchange
from toolnames_core.mcp import McpState
from toolnames_core.mcp import is_mcp_request
from toolnames_core.render import render_mcp

LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
LISTING = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "search docs"}, {"name": "ok_1"}]}}
).encode()


def checked(request: bytes, answer: bytes | None = None, fix: bool = False) -> McpExchange:
    exchange = McpExchange(McpState(), "h", "", "openai")
    exchange.check_request(is_mcp_request(request), request, fix=fix)
    if answer is not None:
        exchange.check_answer(200, "application/json", answer, fix=fix)
    return exchange


def test_an_answer_shows_each_listed_name_with_the_rules_that_reject_it_and_its_alias():
    text = render_mcp(checked(LIST, LISTING), "answer", LISTING, "application/json")
    assert text.startswith("toolnames: MCP answer\nName rule: openai")
    row = row_of(text, "'search docs'")
    assert "bad chars ' '" in row and "anthropic" in row and "search_docs_" in row
    assert row_of(text, "ok_1").endswith("as it is")
    assert "mcp-name-invalid" in text and "checked now" in text


def test_a_request_shows_its_messages_and_calls():
    call = json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x.y"}}
    ).encode()
    text = render_mcp(checked(call), "request", call)
    assert "Messages: tools/call (id 2)" in text and "Calls: x.y" in text


def test_a_recorded_flow_shows_its_record_and_fixes():
    exchange = checked(LIST, LISTING, fix=True)
    recorded = FlowRecord.of_mcp(exchange, "fix")
    text = render_mcp(exchange, "answer", LISTING, "application/json", recorded)
    assert "Outcome: fixed in fix mode" in text
    assert "recorded by toolnames for this flow" in text and "Fixes: 1" in text
