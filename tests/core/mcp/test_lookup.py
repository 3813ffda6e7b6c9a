"""Restoring an alias with nothing remembered (mcp/lookup.py and McpExchange's to_restore,
learn_listing, not_restored): which calls are worth asking the server about, toolnames' own
tools/list, what the server's answer says, and that the aliases learned from it are the ones
a listing passing through fix mode gives."""

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.core.mcp.test_exchange import DOTTED
from tests.core.mcp.test_exchange import LONG
from tests.core.mcp.test_exchange import NAMES
from tests.core.mcp.test_exchange import PLAIN
from tests.core.mcp.test_exchange import SPACED
from tests.core.mcp.test_exchange import alias
from tests.core.mcp.test_exchange import listed
from tests.core.mcp.test_exchange import listing
from tests.core.mcp.test_exchange import rpc
from tests.core.mcp.test_exchange import sse
from toolnames_core import codes
from toolnames_core.mcp import LOOKUP_ID
from toolnames_core.mcp import ListingPage
from toolnames_core.mcp import McpExchange
from toolnames_core.mcp import McpState
from toolnames_core.mcp import is_mcp_request
from toolnames_core.mcp import looks_like_alias
from toolnames_core.mcp import lookup_request
from toolnames_core.mcp import read_lookup_answer
from toolnames_core.rules import RULES

OPENAI = RULES["openai"]


def call(name: str, **params) -> bytes:
    return rpc("tools/call", name=name, arguments={}, **params)


def exchange_of(state, content, session="s1"):
    exchange = McpExchange(state, "127.0.0.1:8000", session, "openai")
    return exchange, is_mcp_request(content)


def test_only_a_name_in_the_form_of_an_alias_is_worth_asking_about():
    for name in (DOTTED, SPACED, LONG):
        assert looks_like_alias(alias(name), OPENAI)
    assert not looks_like_alias(PLAIN, OPENAI)
    assert not looks_like_alias("github.create_issue_e877a647", OPENAI)  # outside the rule
    assert not looks_like_alias("tool_E877A647", OPENAI)  # alias_for's digits are lower case


def test_a_call_of_an_alias_no_listing_explains_is_asked_about_once_per_session():
    state = McpState()
    content = call(alias(DOTTED))
    exchange, messages = exchange_of(state, content)
    assert exchange.to_restore(messages) == [alias(DOTTED)]
    exchange.not_restored(alias(DOTTED), "the server answered HTTP 401")
    exchange.check_request(messages, content, fix=True)
    assert codes.MCP_ALIAS_UNRESTORED in [f.code for f in exchange.findings]
    assert "HTTP 401" in exchange.fix_skipped[0].reason and exchange.fixes == []
    again, messages = exchange_of(state, content)
    assert again.to_restore(messages) == []  # asked once: the reason is kept for the session
    again.check_request(messages, content, fix=True)
    assert codes.MCP_ALIAS_UNRESTORED in [f.code for f in again.findings]
    elsewhere, messages = exchange_of(state, content, session="s2")
    assert elsewhere.to_restore(messages) == [alias(DOTTED)]


def test_a_call_toolnames_can_send_back_or_of_a_plain_name_is_not_asked_about():
    state = McpState()
    listed(state, NAMES, fix=True)
    exchange, messages = exchange_of(state, call(alias(DOTTED)), session="other")
    assert exchange.to_restore(messages) == []
    exchange, messages = exchange_of(McpState(), call(PLAIN))
    assert exchange.to_restore(messages) == []


def test_learning_the_servers_listing_restores_the_call_as_a_listing_would():
    state = McpState()
    content = call(alias(LONG))
    exchange, messages = exchange_of(state, content)
    assert exchange.learn_listing(NAMES) == {alias(n): n for n in (DOTTED, SPACED, LONG)}
    exchange.check_request(messages, content, fix=True)
    assert json.loads(exchange.new_body)["params"]["name"] == LONG
    assert [f.code for f in exchange.findings] == []


@given(st.lists(st.text(min_size=1, max_size=70), min_size=1, max_size=8, unique=True))
def test_the_aliases_learned_are_the_ones_fix_mode_lists(names):
    state = McpState()
    exchange, new, answer = listed(state, names, fix=True)
    listed_names = [t["name"] for t in json.loads(new or answer)["result"]["tools"]]
    lookup, _ = exchange_of(McpState(), call("x"))
    learned = lookup.learn_listing(names)
    assert {a: n for a, n in zip(listed_names, names, strict=True) if a != n} == learned


def test_toolnames_tools_list_asks_each_page_and_carries_only_the_clients_context():
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "progressToken": 7,
    }
    first = json.loads(lookup_request(0, None, {"name": "t", "_meta": meta}))
    assert first == {
        "jsonrpc": "2.0",
        "id": f"{LOOKUP_ID}0",
        "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
    }
    second = json.loads(lookup_request(1, "c1", {"name": "t"}))
    assert second["params"] == {"cursor": "c1"} and second["id"] == f"{LOOKUP_ID}1"


def test_what_the_servers_answer_says():
    page = listing(NAMES, id_=f"{LOOKUP_ID}0", cursor="next")
    assert read_lookup_answer(0, 200, "application/json", page) == ListingPage(NAMES, "next")
    last = sse(listing([PLAIN], id_=f"{LOOKUP_ID}1"))
    assert read_lookup_answer(1, 200, "text/event-stream", last) == ListingPage([PLAIN], None)
    # An event stream not yet holding the answer: wait for more.
    assert read_lookup_answer(1, 200, "text/event-stream", last[:20]) is None
    # Another request's answer is not this page's.
    assert read_lookup_answer(0, 200, "application/json", listing(NAMES, id_=1)) is None
    error = json.dumps(
        {"jsonrpc": "2.0", "id": f"{LOOKUP_ID}0", "error": {"code": -32600, "message": "no"}}
    ).encode()
    assert "error: 'no'" in read_lookup_answer(0, 200, "application/json", error)
    assert "HTTP 401" in read_lookup_answer(0, 401, "application/json", b"")
    assert "event stream" in read_lookup_answer(0, 202, "", b"")
    assert "no answer" in read_lookup_answer(0, None, "", b"")
