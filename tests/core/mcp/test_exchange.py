"""One MCP request and its answer (mcp/exchange.py): listings judged page by page, calls
judged against the session's listing, headers against the body; fix mode's aliases listed
and called back under the server's names, every other byte kept."""

import itertools
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.testkit.strategies import keyed_bodies
from toolnames_core import codes
from toolnames_core.aliases import alias_for
from toolnames_core.jsonsplice import replace_values
from toolnames_core.mcp import McpExchange
from toolnames_core.mcp import McpState
from toolnames_core.mcp import is_mcp_request
from toolnames_core.rules import RULES

SERVER = "127.0.0.1:8000"
DOTTED = "github.create_issue"
SPACED = "search docs"
LONG = "x" * 141
PLAIN = "get_weather"
NAMES = [DOTTED, SPACED, LONG, PLAIN]


def alias(name: str) -> str:
    return alias_for(name, RULES["openai"])


def rpc(method, id_=1, **params):
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params:
        message["params"] = params
    return json.dumps(message).encode()


def listing(names, id_=1, cursor=None) -> bytes:
    result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
    if cursor:
        result["nextCursor"] = cursor
    # Spaced and ordered as a server might: the splice must keep every other byte.
    return json.dumps({"result": result, "jsonrpc": "2.0", "id": id_}, indent=1).encode()


def sse(*bodies: bytes) -> bytes:
    """Each body an event, a data line for each of its lines."""
    return b"".join(
        b"event: message\r\n"
        + b"".join(b"data: " + line + b"\r\n" for line in body.split(b"\n"))
        + b"\r\n"
        for body in bodies
    )


def send(state, content, *, fix=False, session="s1", server=SERVER, **headers):
    exchange = McpExchange(state, server, session, "openai", **headers)
    exchange.check_request(is_mcp_request(content), content, fix=fix)
    return exchange


def listed(state, names, *, fix=False, session="s1", cursor=None, content_type="application/json"):
    request = rpc("tools/list", cursor=cursor) if cursor else rpc("tools/list")
    exchange = send(state, request, fix=fix, session=session)
    answer = listing(names)
    if content_type == "text/event-stream":
        answer = sse(answer)
    return exchange, exchange.check_answer(200, content_type, answer, fix=fix), answer


def codes_of(exchange):
    return [f.code for f in exchange.findings]


@pytest.mark.parametrize("content_type", ["application/json", "text/event-stream"])
def test_observe_flags_every_bad_listed_name_never_the_plain_one(content_type):
    exchange, new, _ = listed(McpState(), NAMES, content_type=content_type)
    assert new is None and exchange.fixes == []
    paths = {f.path for f in exchange.findings if f.severity == "warning"}
    prefix = "event[0]." if content_type == "text/event-stream" else ""
    assert paths == {f"{prefix}result.tools[{i}].name" for i in range(3)}
    assert codes_of(exchange).count(codes.MCP_NAME_REJECTED) == 3
    assert codes_of(exchange).count(codes.MCP_NAME_INVALID) == 2


def test_a_call_of_a_name_the_session_never_listed_is_flagged():
    state = McpState()
    listed(state, NAMES)
    assert send(state, rpc("tools/call", 2, name=PLAIN)).findings == []
    (finding,) = send(state, rpc("tools/call", 3, name="delete_repo")).findings
    assert finding.code == codes.MCP_CALL_UNLISTED and finding.severity == "warning"
    assert finding.path == "params.name" and "'get_weather'" in finding.message
    # Another session listed nothing toolnames saw: said once, as information.
    other = send(state, rpc("tools/call", 4, name="delete_repo"), session="s2")
    assert [(f.code, f.severity) for f in other.findings] == [(codes.MCP_CALL_UNLISTED, "info")]
    assert send(state, rpc("tools/call", 5, name="delete_repo"), session="s2").findings == []


def test_a_session_that_ends_forgets_its_names():
    state = McpState()
    listed(state, [PLAIN])
    McpExchange(state, SERVER, "s1", "openai").end_session()
    (finding,) = send(state, rpc("tools/call", 2, name=PLAIN)).findings
    assert finding.severity == "info"  # no listing known any more


def test_a_404_ends_the_session():
    state = McpState()
    listed(state, [PLAIN])
    send(state, rpc("ping", 9)).check_answer(404, "application/json", b"{}")
    assert not state.session((SERVER, "s1")).listed


def test_pages_make_one_listing_and_a_name_on_two_pages_is_a_duplicate():
    state = McpState()
    first = send(state, rpc("tools/list"))
    first.check_answer(200, "application/json", listing(["a", "b"], cursor="p2"))
    second = send(state, rpc("tools/list", 2, cursor="p2"))
    second.check_answer(200, "application/json", listing(["c", "a"], id_=2))
    assert codes_of(second) == [codes.MCP_NAME_DUPLICATE]
    assert second.findings[0].path == "result.tools[1].name"
    assert send(state, rpc("tools/call", 3, name="b")).findings == []  # from page one
    # A listing from the start again: no duplicate of the earlier one.
    again = send(state, rpc("tools/list", 4))
    again.check_answer(200, "application/json", listing(["a"], id_=4))
    assert again.findings == []


def test_a_batch_is_matched_by_id():
    state = McpState()
    batch = json.dumps(
        [
            {"jsonrpc": "2.0", "id": "p", "method": "ping"},
            {"jsonrpc": "2.0", "id": "t", "method": "tools/list"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ]
    ).encode()
    exchange = send(state, batch, fix=True)
    answer = json.dumps(
        [
            {"jsonrpc": "2.0", "id": "p", "result": {"tools": [{"name": "not.a.listing"}]}},
            {"jsonrpc": "2.0", "id": "t", "result": {"tools": [{"name": DOTTED}]}},
        ]
    ).encode()
    new = exchange.check_answer(200, "application/json", answer, fix=True)
    assert [f.path for f in exchange.findings] == ["[1].result.tools[0].name"]
    assert new == answer.replace(DOTTED.encode(), alias(DOTTED).encode())


def test_an_error_answer_and_a_malformed_listing():
    state = McpState()
    exchange = send(state, rpc("tools/list"))
    error = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no tools"}}'
    assert exchange.check_answer(200, "application/json", error) is None
    assert exchange.findings == []
    exchange = send(state, rpc("tools/list"))
    bad = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[3,{"name":7},{"name":"ok"}]}}'
    exchange.check_answer(200, "application/json", bad)
    assert [f.code for f in exchange.findings] == [codes.TOOL_MALFORMED] * 2
    exchange = send(state, rpc("tools/list"))
    exchange.check_answer(200, "application/json", b"not json")
    assert codes_of(exchange) == [codes.RESPONSE_UNREADABLE]


def test_headers_that_disagree_with_the_body():
    state = McpState()
    call = rpc("tools/call", 2, name=PLAIN)
    agree = send(state, call, method_header="tools/call", name_header=PLAIN)
    assert [f for f in agree.findings if f.code == codes.MCP_HEADER_MISMATCH] == []
    wrong = send(state, call, method_header="tools/list", name_header="other")
    mismatches = [f for f in wrong.findings if f.code == codes.MCP_HEADER_MISMATCH]
    assert [f.path for f in mismatches] == ["Mcp-Method", "Mcp-Name"]
    assert all(f.severity == "error" for f in mismatches)
    encoded = send(state, call, name_header="=?base64?Z2V0X3dlYXRoZXI=?=")
    assert [f for f in encoded.findings if f.code == codes.MCP_HEADER_MISMATCH] == []


@pytest.mark.parametrize("content_type", ["application/json", "text/event-stream"])
def test_fix_lists_aliases_and_keeps_every_other_byte(content_type):
    state = McpState()
    exchange, new, answer = listed(state, NAMES, fix=True, content_type=content_type)
    expected = answer
    for name in NAMES[:3]:
        expected = expected.replace(json.dumps(name).encode(), json.dumps(alias(name)).encode())
    assert new == expected
    assert [(f.old, f.new) for f in exchange.fixes] == [(n, alias(n)) for n in NAMES[:3]]
    assert all(len(alias(n)) <= 64 for n in NAMES)


# Listed tools whose bytes a search for "name" could misread: each is listed as the walk
# (replace_values) would splice it, byte for byte.
AWKWARD_TOOLS = {
    "a schema property called name, and the name quoted in a description and an enum": (
        '{"name": "github.create_issue", "description": "call \\"name\\": '
        '\\"github.create_issue\\"", "inputSchema": {"type": "object", "properties": {"name": '
        '{"type": "string", "enum": ["github.create_issue"]}}, "required": ["name"]}}'
    ),
    "the key spelled with an escape": '{"n\\u0061me": "docs/search", "inputSchema": {}}',
    "the name spelled with an escape": '{"name": "docs\\/search\\u002ev2", "inputSchema": {}}',
    "the same name at a member no path leads to": (
        '{"name": "a.b", "annotations": {"name": "a.b"}, "inputSchema": {}}'
    ),
    "a repeated member, read as its last": '{"name": "x.y", "name": "p.q", "inputSchema": {}}',
    "compact, beyond ASCII": '{"name":"météo.prévision","inputSchema":{}}',
}


@pytest.mark.parametrize("content_type", ["application/json", "text/event-stream"])
@pytest.mark.parametrize(
    "tools",
    [*AWKWARD_TOOLS.values(), ", ".join(AWKWARD_TOOLS.values())],
    ids=[*AWKWARD_TOOLS, "all of them in one listing"],
)
def test_fix_lists_awkward_listings_as_the_walk_splices_them(tools, content_type):
    answer = f'{{"jsonrpc": "2.0", "id": 1, "result": {{"tools": [{tools}]}}}}'.encode()
    exchange = send(McpState(), rpc("tools/list"), fix=True)
    body = sse(answer) if content_type == "text/event-stream" else answer
    new = exchange.check_answer(200, content_type, body, fix=True)
    listed_names = [tool["name"] for tool in json.loads(answer)["result"]["tools"]]
    walked = replace_values(
        answer.decode(),
        {
            ("result", "tools", i, "name"): alias(n)
            for i, n in enumerate(listed_names)
            if n != PLAIN
        },
    ).encode()
    assert new == (sse(walked) if content_type == "text/event-stream" else walked)
    assert [(f.old, f.new) for f in exchange.fixes] == [(n, alias(n)) for n in listed_names]


def test_fix_calls_back_an_alias_its_arguments_also_hold_as_the_walk_splices_it():
    state = McpState()
    listed(state, NAMES, fix=True)
    sent = alias(DOTTED)
    call = (
        (
            '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "SENT", '
            '"arguments": {"name": "SENT", "note": "\\"name\\": \\"SENT\\""}}}'
        )
        .replace("SENT", sent)
        .encode()
    )
    exchange = send(state, call, fix=True)
    assert exchange.new_body == replace_values(call.decode(), {("params", "name"): DOTTED}).encode()
    assert json.loads(exchange.new_body)["params"]["arguments"]["name"] == sent


def test_fix_calls_an_alias_under_the_servers_name_in_the_body_and_the_header():
    state = McpState()
    listed(state, NAMES, fix=True)
    call = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "%s", "arguments": {"t": 1}}}'
    content = call % alias(DOTTED).encode()
    exchange = send(state, content, fix=True, name_header=alias(DOTTED), method_header="tools/call")
    assert exchange.findings == []  # the session listed the alias
    assert exchange.new_body == call % DOTTED.encode()
    assert exchange.new_name_header == DOTTED
    assert [f.rewrite for f in exchange.fixes] == ["unalias", "unalias"]
    # A name with a space goes in Mcp-Name as it is; a plain call is left alone.
    spaced = send(state, call % alias(SPACED).encode(), fix=True, name_header=alias(SPACED))
    assert spaced.new_name_header == SPACED
    plain = send(state, call % PLAIN.encode(), fix=True, name_header=PLAIN)
    assert plain.new_body is None and plain.new_name_header is None and plain.fixes == []


def test_aliases_are_the_same_in_every_session_and_known_across_them():
    state = McpState()
    _, first, _ = listed(state, NAMES, fix=True, session="a")
    _, second, _ = listed(state, list(reversed(NAMES)), fix=True, session="b")
    assert sorted(json.loads(first)["result"]["tools"], key=str) == sorted(
        json.loads(second)["result"]["tools"], key=str
    )
    # A session that never listed calls an alias another listed: still the server's tool.
    exchange = send(state, rpc("tools/call", 3, name=alias(DOTTED)), fix=True, session="c")
    assert json.loads(exchange.new_body)["params"]["name"] == DOTTED


def test_observe_never_rewrites_even_a_known_alias():
    state = McpState()
    listed(state, NAMES, fix=True)
    exchange = send(state, rpc("tools/call", 3, name=alias(DOTTED)), fix=False)
    assert exchange.new_body is None and exchange.fixes == []


def test_an_alias_that_a_listed_name_already_takes_gets_the_longer_digest():
    state = McpState()
    taken = alias(DOTTED)
    exchange, new, _ = listed(state, [DOTTED, taken], fix=True)
    (fix,) = exchange.fixes
    assert fix.new != taken and fix.new == alias_for(DOTTED, RULES["openai"], digest_len=16)


NOTIFY = b'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\r\n\r\n'


@given(st.lists(st.integers(0, 4000), max_size=10), st.booleans())
def test_an_sse_answer_split_anywhere_gives_what_the_whole_gives(cuts, fix):
    whole = b": ping\n\n" + NOTIFY + sse(listing(NAMES)) + b"data: tail"
    reference = McpExchange(McpState(), SERVER, "s", "openai")
    reference.check_request(is_mcp_request(rpc("tools/list")), rpc("tools/list"), fix=fix)
    expected = reference.check_answer(200, "text/event-stream", whole, fix=fix) or whole
    exchange = McpExchange(McpState(), SERVER, "s", "openai")
    exchange.check_request(is_mcp_request(rpc("tools/list")), rpc("tools/list"), fix=fix)
    stream = exchange.stream(fix)
    points = sorted({c % (len(whole) + 1) for c in cuts})
    chunks = [whole[a:b] for a, b in zip([0, *points], [*points, len(whole)], strict=True)]
    out = b"".join(stream(c) for c in chunks if c) + stream(b"")
    assert out == expected
    assert exchange.findings == reference.findings and exchange.fixes == reference.fixes
    assert (expected != whole) == fix


def test_an_event_over_the_limit_goes_on_as_it_came(monkeypatch):
    from toolnames_core.mcp import exchange as exchange_module

    monkeypatch.setattr(exchange_module, "MAX_EVENT_BYTES", 100)
    exchange = send(McpState(), rpc("tools/list"), fix=True)
    stream = exchange.stream(True)
    big = sse(listing(NAMES))
    out = b"".join(stream(big[i : i + 10]) for i in range(0, len(big), 10)) + stream(b"")
    assert out == big and exchange.fixes == []
    assert codes_of(exchange) == [codes.RESPONSE_UNREADABLE]


def test_an_event_whose_splice_fails_goes_on_as_it_came_and_says_so(monkeypatch):
    from toolnames_core.mcp import exchange as exchange_module

    def refuse(body, replacements):
        raise ValueError("the splice refused")

    monkeypatch.setattr(exchange_module, "replace_strings", refuse)
    exchange = send(McpState(), rpc("tools/list"), fix=True)
    event = sse(listing([DOTTED, PLAIN]))
    stream = exchange.stream(True)
    assert stream(event) + stream(b"") == event
    assert exchange.fixes == []
    (skipped,) = exchange.fix_skipped
    assert skipped.name == alias(DOTTED) and "the splice refused" in skipped.reason
    assert skipped.path.startswith("event[0]")


def test_a_multi_line_data_event_is_spliced_line_by_line():
    text = listing([DOTTED]).decode()
    lines = text.split("\n")
    event = b"".join(b"data:" + line.encode() + b"\n" for line in lines) + b"\n"
    exchange = send(McpState(), rpc("tools/list"), fix=True)
    new = exchange.check_answer(200, "text/event-stream", event, fix=True)
    assert new == event.replace(DOTTED.encode(), alias(DOTTED).encode())


def test_inspect_mcp_judges_recorded_exchanges_in_order_and_ignores_other_bodies():
    from toolnames_core.mcp import inspect_mcp

    state = McpState()
    first = inspect_mcp(state, "h", rpc("tools/list"), 200, "application/json", listing(NAMES))
    assert codes.MCP_NAME_REJECTED in codes_of(first)
    call = inspect_mcp(state, "h", rpc("tools/call", 2, name="nope"), session_id="")
    assert codes_of(call) == [codes.MCP_CALL_UNLISTED]
    assert inspect_mcp(state, "h", b'{"model": "x"}') is None
    assert inspect_mcp(state, "h", None) is None


def test_http_sse_answers_on_the_sessions_stream_are_matched_by_id():
    from toolnames_core.mcp import endpoint_session
    from toolnames_core.mcp import mcp_server

    state = McpState()
    stream_exchange = McpExchange(state, mcp_server(SERVER, "/sse"), "", "openai")
    stream = stream_exchange.stream(fix=True, sniff=True)
    endpoint = b"event: endpoint\r\ndata: /messages/?session_id=abc123\r\n\r\n"
    assert stream(endpoint) == endpoint
    # The session is the POSTs' server's: the endpoint's path, not the stream's.
    posts = mcp_server(SERVER, "/messages/?session_id=abc123")
    assert posts == SERVER + "/messages/"
    assert (
        stream_exchange.key == (posts, "abc123") == (posts, endpoint_session("/m?sessionId=abc123"))
    )
    post = send(state, rpc("tools/list", 5), fix=True, session="abc123", server=posts)
    assert post.check_answer(202, "text/plain", b"Accepted", fix=True) is None
    assert post.findings == []
    event = sse(listing([DOTTED], id_=5))
    out = stream(event) + stream(b"")
    assert out == event.replace(DOTTED.encode(), alias(DOTTED).encode())
    assert [f.code for f in stream_exchange.findings] == [codes.MCP_NAME_REJECTED]
    # The call of the alias, POSTed to the session's endpoint, reaches the server's tool.
    call = send(
        state, rpc("tools/call", 6, name=alias(DOTTED)), fix=True, session="abc123", server=posts
    )
    assert call.findings == [] and json.loads(call.new_body)["params"]["name"] == DOTTED


@pytest.mark.parametrize(
    ("stream", "url", "server"),
    [
        ("/sse", "/messages/?session_id=a", "/messages/"),
        ("/mcp/sse", "messages?sessionId=a", "/mcp/messages"),  # relative to the stream
        ("/sse", "http://127.0.0.1:8000/gw/messages?session_id=a", "/gw/messages"),
    ],
)
def test_an_endpoint_names_the_server_its_posts_go_to(stream, url, server):
    from toolnames_core.mcp import endpoint_server
    from toolnames_core.mcp import mcp_server

    assert endpoint_server(mcp_server(SERVER, stream), url) == SERVER + server


def test_servers_on_one_host_at_two_paths_have_their_own_sessions_and_names():
    """A gateway serving two stateless MCP servers: one's listing explains no call of the
    other's, and one's aliases are not the other's."""
    from toolnames_core.mcp import mcp_server

    state = McpState()
    github, jira = mcp_server(SERVER, "/github/mcp"), mcp_server(SERVER, "/jira/mcp?x=1")
    send(state, rpc("tools/list"), fix=True, session="", server=github).check_answer(
        200, "application/json", listing([DOTTED, PLAIN]), fix=True
    )
    send(state, rpc("tools/list"), fix=True, session="", server=jira).check_answer(
        200, "application/json", listing(["jira_search"]), fix=True
    )
    call = send(state, rpc("tools/call", 2, name=PLAIN), session="", server=jira)
    assert codes_of(call) == [codes.MCP_CALL_UNLISTED]
    aliased = send(
        state, rpc("tools/call", 3, name=alias(DOTTED)), fix=True, session="", server=jira
    )
    assert aliased.new_body is None
    assert codes_of(send(state, rpc("tools/call", 4, name=PLAIN), session="", server=github)) == []


def test_a_get_stream_that_is_no_mcp_goes_on_unread():
    exchange = McpExchange(McpState(), SERVER, "", "openai")
    stream = exchange.stream(fix=True, sniff=True)
    other = b'data: {"price": 3}\n\n' + sse(listing([DOTTED]))
    assert (
        b"".join(stream(other[i : i + 5]) for i in range(0, len(other), 5)) + stream(b"") == other
    )
    assert exchange.findings == []


# -- properties over whatever MCP-ish JSON: never an exception, observe never changes a byte,
# fix changes only listed names ---------------------------------------------------------------

KEYS = ["jsonrpc", "id", "method", "params", "name", "result", "tools", "error", "cursor"]
STRINGS = ["2.0", "tools/list", "tools/call", "ping", DOTTED, SPACED, PLAIN, "notifications/x"]
messages_of = keyed_bodies(KEYS, STRINGS)
bodies = st.one_of(messages_of, st.lists(messages_of, min_size=1, max_size=4)).map(
    lambda v: json.dumps(v).encode()
)
listed_names = st.lists(st.sampled_from(NAMES) | st.text(max_size=70), max_size=6)


@given(bodies, bodies, st.booleans(), st.booleans())
def test_whatever_json_rpc_comes_nothing_raises_and_observe_changes_nothing(
    request, answer, fix, as_sse
):
    messages = is_mcp_request(request)
    if messages is None:
        return
    exchange = McpExchange(McpState(), SERVER, "s", "openai", name_header="x", method_header="y")
    exchange.check_request(messages, request, fix=fix)
    content_type = "text/event-stream" if as_sse else "application/json"
    body = sse(answer) if as_sse else answer
    new = exchange.check_answer(200, content_type, body, fix=fix)
    if not fix:
        assert new is None and exchange.new_body is None and exchange.fixes == []


@given(listed_names, st.booleans(), st.integers(1, 200))
def test_fix_changes_only_the_names_the_rule_rejects_whatever_they_are(names, as_sse, size):
    state = McpState()
    batch = json.dumps(
        [
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        ]
    ).encode()
    exchange = send(state, batch, fix=True)
    answer = listing(names)
    body = sse(answer) if as_sse else answer
    if as_sse:
        stream = exchange.stream(True)
        new = b"".join(stream(body[i : i + size]) for i in range(0, len(body), size)) + stream(b"")
        new = b"\n".join(line[6:] for line in new.split(b"\r\n") if line.startswith(b"data: "))
    else:
        new = exchange.check_answer(200, "application/json", body, fix=True) or body
    got = json.loads(new)["result"]["tools"]
    rule_ok = re.compile(r"[a-zA-Z0-9_-]{1,64}").fullmatch
    renamed = {f.old: f.new for f in exchange.fixes}
    for name, tool in zip(names, got, strict=True):
        assert tool["name"] == (name if rule_ok(name) else renamed.get(name, name))
        assert tool["inputSchema"] == {"type": "object"}
    assert all(rule_ok(alias) for alias in renamed.values())
    skipped = {s.name for s in exchange.fix_skipped}
    assert {n for n in names if not rule_ok(n)} == set(renamed) | skipped


# -- the renaming layers' known bugs, each a test here ----------------------------------------


def test_aliases_never_depend_on_the_order_of_the_listing():
    # docker/mcp-gateway#528: suffixes _2, _3 handed out in list order, so a reordered
    # listing renames tools differently and earlier calls reach the wrong tool.
    names = ["a.b", "a/b", "a b", "a_b"]
    _, first, _ = listed(McpState(), names, fix=True)
    _, second, _ = listed(McpState(), list(reversed(names)), fix=True)
    by_order = [t["name"] for t in json.loads(first)["result"]["tools"]]
    reversed_order = [t["name"] for t in json.loads(second)["result"]["tools"]]
    assert by_order == list(reversed(reversed_order))


def test_distinct_tools_never_share_a_name_after_renaming():
    # ayunis-core/ayunis-core#973: two tools sanitized to one name, one of them lost. Here
    # "a.b", "a/b" and "a b" all become "a_b" once made valid, and "a_b" is listed too.
    names = ["a.b", "a/b", "a b", "a_b"]
    exchange, new, _ = listed(McpState(), names, fix=True)
    got = [t["name"] for t in json.loads(new)["result"]["tools"]]
    assert len(set(got)) == 4 and got[3] == "a_b"


def test_every_renamed_tool_is_still_callable_under_its_alias():
    # Cloudgeni-ai/opengeni PR #141: renaming in tools/list without the way back breaks
    # execution; valon-technologies/gestalt#1284: a catalog dropped for "/" and ".".
    state = McpState()
    names = ["docs/search", "github.create_issue", "x" * 141]
    _, new, _ = listed(state, names, fix=True)
    for alias_name, name in zip(
        [t["name"] for t in json.loads(new)["result"]["tools"]], names, strict=True
    ):
        call = send(state, rpc("tools/call", 9, name=alias_name), fix=True)
        assert call.findings == [] and json.loads(call.new_body)["params"]["name"] == name


# -- compressed SSE answers, read as they stream ----------------------------------------------


def compressed(coding: str, data: bytes) -> bytes:
    import gzip

    import brotli

    from tests.testkit import zstd_compress

    return {"gzip": gzip.compress, "br": brotli.compress, "zstd": zstd_compress}[coding](data)


def fed(stream, data: bytes, cuts) -> bytes:
    """``data`` through ``stream.pieces`` in the pieces ``cuts`` make, and the end."""
    bounds = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    # mitmproxy feeds no empty chunk before the end, which an empty one means.
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]
    out = [p for chunk in chunks for p in stream.pieces(chunk)]
    assert b"" not in out  # an empty piece would end an HTTP/1.1 chunked body
    return b"".join(out + stream.pieces(b""))


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
@given(cuts=st.lists(st.integers(min_value=0), max_size=4))
def test_a_compressed_sse_answer_is_read_as_it_streams(coding, cuts):
    events = sse(listing(NAMES))
    body = compressed(coding, events)
    watching = send(McpState(), rpc("tools/list"))
    assert fed(watching.stream(content_encoding=coding), body, cuts) == body  # as it came
    assert codes.MCP_NAME_REJECTED in codes_of(watching) and watching.fixes == []
    fixing = send(McpState(), rpc("tools/list"), fix=True)
    tap = fixing.stream(True, content_encoding=coding.upper())
    assert tap.decodes  # the client gets it decoded: the glue drops Content-Encoding
    out = fed(tap, body, cuts)
    expected = events
    for name in (DOTTED, SPACED, LONG):
        expected = expected.replace(json.dumps(name).encode(), json.dumps(alias(name)).encode())
    assert out == expected and len(fixing.fixes) == 3


def test_a_coding_nothing_decodes_gets_no_tap_and_a_broken_one_is_said():
    exchange = send(McpState(), rpc("tools/list"), fix=True)
    assert exchange.stream(True, content_encoding="gzip, br") is None
    assert exchange.stream(True, content_encoding="identity").content is None
    tap = exchange.stream(True, content_encoding="gzip")
    tap.pieces(b"\x1f\x8b\x08\x00 not gzip at all")
    tap.pieces(b"")
    assert [f.code for f in exchange.response_findings] == [codes.RESPONSE_UNREADABLE]
    assert "gzip" in exchange.response_findings[0].message


def test_a_compressed_stream_not_known_to_be_mcp_is_never_decoded_for_the_client():
    """HTTP+SSE's stream, told by its first event: fix mode's aliases go unlisted there,
    the stream goes on compressed as it came, and the record says why."""
    from toolnames_core.mcp import mcp_server

    state = McpState()
    stream_exchange = McpExchange(state, mcp_server(SERVER, "/sse"), "", "openai")
    body = compressed(
        "gzip",
        b"event: endpoint\r\ndata: /messages/?session_id=z1\r\n\r\n"
        + sse(listing([DOTTED], id_=5)),
    )
    tap = stream_exchange.stream(True, sniff=True, content_encoding="gzip")
    send(state, rpc("tools/list", 5), fix=True, session="z1", server=SERVER + "/messages/")
    assert not tap.decodes and fed(tap, body, [9]) == body
    assert stream_exchange.fixes == []
    assert "compressed with gzip" in stream_exchange.fix_skipped[0].reason
    assert codes.MCP_NAME_REJECTED in codes_of(stream_exchange)


def test_fix_mode_holds_an_unfinished_event_back_without_an_empty_piece():
    exchange = send(McpState(), rpc("tools/list"), fix=True)
    tap = exchange.stream(True)
    event = sse(listing(NAMES))
    assert tap.pieces(event[:10]) == []  # held: not b"", which would end a chunked body
    assert b"".join(tap.pieces(event[10:]) + tap.pieces(b"")).count(b"_") > 0
