"""The Session: every finding, in every mode, against the tools in force at each message."""

import json

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.core.sessions import shapes
from tests.testkit import keyed_bodies
from tests.testkit.arbitrary import places
from tests.testkit.arbitrary import replaced
from toolnames_core import codes
from toolnames_core import readers
from toolnames_core.aliases import alias_for
from toolnames_core.readers import Reader
from toolnames_core.rules import RULES
from toolnames_core.sessions import Session
from toolnames_core.sessions import inspect_session

MCP_NAME = "github.create_issue"
REALTIME_PATH = "/v1/realtime?model=gpt-realtime"
ALIAS = alias_for(MCP_NAME, RULES["openai"])


def feed(session: Session, *messages: tuple[bool, dict]):
    """Each (from_client, event) in turn, indexed as the flow's messages are; the outcomes."""
    start = session.messages
    return [
        session.receive(start + i, from_client, shapes.dumps(event))
        for i, (from_client, event) in enumerate(messages)
    ]


def codes_of(session: Session) -> list[tuple[int, str, str]]:
    return [(f.message_index, f.code, f.path) for f in session.findings]


def realtime(mode: str = "observe") -> Session:
    return Session("openai-realtime", "openai", "api.openai.com", mode)


def live(mode: str = "observe") -> Session:
    return Session("gemini-live", "gemini", "generativelanguage.googleapis.com", mode)


def test_unknown_protocol_rule_or_mode_is_refused():
    with pytest.raises(ValueError, match="unknown protocol"):
        Session("nope", "openai")
    with pytest.raises(ValueError, match="unknown rule"):
        Session("gemini-live", "nope")
    with pytest.raises(ValueError, match="unknown mode"):
        Session("gemini-live", "gemini", mode="nope")


# -- observe: the same findings as HTTP, each with its message's index ----------------------


def test_a_declaration_the_rule_rejects_is_found_with_its_message_index():
    session = realtime()
    out = feed(
        session,
        (True, shapes.audio_append()),
        (True, shapes.session_update([shapes.function_tool("ok"), shapes.function_tool(MCP_NAME)])),
    )
    assert out[0].findings == [] and out[1].content is None and out[1].block is None
    assert codes_of(session) == [(1, codes.NAME_INVALID_CHARS, "session.tools[1].name")]
    assert session.findings[0].to_dict()["message_index"] == 1
    assert [t.name for t in session.tools] == ["ok", MCP_NAME]  # the app declared them


@pytest.mark.parametrize(
    "name,code",
    [("", codes.NAME_EMPTY), ("x" * 65, codes.NAME_TOO_LONG), ("a b", codes.NAME_INVALID_CHARS)],
)
def test_every_name_rule_finding(name, code):
    session = realtime()
    feed(session, (True, shapes.session_update([shapes.function_tool(name)])))
    assert [c for _, c, _ in codes_of(session)] == [code]


def test_a_gemini_name_starting_with_a_digit_and_duplicates():
    session = live()
    feed(session, (True, shapes.setup(["1password", "a", "a"])))
    assert sorted(c for _, c, _ in codes_of(session)) == [
        codes.NAME_DUPLICATE,
        codes.NAME_INVALID_START,
    ]


def test_choices_are_checked_against_the_tools_in_force():
    session = realtime()
    feed(
        session,
        (
            True,
            shapes.session_update([shapes.function_tool("a")], {"type": "function", "name": "b"}),
        ),
        (True, shapes.response_create(tool_choice={"type": "function", "name": "a"})),
        (True, shapes.response_create(tool_choice={"type": "function", "name": "c"})),
        (True, shapes.session_update([], "required")),
        (True, shapes.session_update(tool_choice={"type": "x"})),
    )
    assert codes_of(session) == [
        (0, codes.CHOICE_NOT_IN_TOOLS, "session.tool_choice.name"),
        (2, codes.CHOICE_NOT_IN_TOOLS, "response.tool_choice.name"),
        (3, codes.CHOICE_WITHOUT_TOOLS, "session.tool_choice"),
        (4, codes.CHOICE_MALFORMED, "session.tool_choice"),
    ]


def test_an_mcp_server_is_chosen_by_its_label():
    session = realtime()
    feed(
        session,
        (
            True,
            shapes.session_update(
                [shapes.mcp_tool("deepwiki")], {"type": "mcp", "server_label": "deepwiki"}
            ),
        ),
        (True, shapes.response_create(tool_choice={"type": "mcp", "server_label": "other"})),
    )
    assert codes_of(session) == [
        (1, codes.CHOICE_NOT_IN_TOOLS, "response.tool_choice.server_label")
    ]


def test_history_names_the_rule_rejects():
    session = realtime()
    feed(session, (True, shapes.item_create(shapes.function_call_item("$READFILE"))))
    assert codes_of(session) == [(0, codes.HISTORY_NAME_INVALID, "item.name")]
    gemini = live()
    feed(gemini, (True, shapes.setup([])), (True, shapes.client_content_with_call("fs/read")))
    assert codes_of(gemini) == [
        (1, codes.HISTORY_NAME_INVALID, "clientContent.turns[0].parts[0].functionCall.name")
    ]


def test_an_undeclared_call_is_found_once_though_four_events_name_it():
    session = realtime()
    out = feed(
        session,
        (True, shapes.session_update([shapes.function_tool("a")])),
        (False, shapes.output_item("added", "ghost", "c1")),
        (False, shapes.arguments_done("ghost", "c1")),
        (False, shapes.output_item("done", "ghost", "c1")),
        (False, shapes.response_done([("ghost", "c1"), ("a", "c2")])),
    )
    assert codes_of(session) == [(1, codes.RESPONSE_UNKNOWN_TOOL, "item.name")]
    assert "'ghost'" in out[1].findings[0].message and "offered: 'a'" in out[1].findings[0].message


def test_tools_can_change_mid_session():
    session = realtime()
    feed(
        session,
        (True, shapes.session_update([shapes.function_tool("a")])),
        (False, shapes.output_item("added", "a", "c1")),
        (True, shapes.session_update([shapes.function_tool("b")])),
        (False, shapes.output_item("added", "a", "c2")),
        (False, shapes.output_item("added", "b", "c3")),
    )
    assert codes_of(session) == [(3, codes.RESPONSE_UNKNOWN_TOOL, "item.name")]


def test_gemini_tools_change_with_a_context_update():
    session = live()
    feed(
        session,
        (True, shapes.setup(["a"])),
        (True, shapes.context_update(["b"])),
        (False, shapes.tool_call([("c1", "a"), ("c2", "b")])),
    )
    assert codes_of(session) == [(2, codes.RESPONSE_UNKNOWN_TOOL, "toolCall.functionCalls[0].name")]


def test_an_update_the_provider_rejected_never_came_into_force():
    session = realtime()
    feed(
        session,
        (True, shapes.session_update([shapes.function_tool("a")], event_id="evt_a")),
        (True, shapes.session_update([shapes.function_tool("b.c")], event_id="evt_b")),
        (
            False,
            {
                **shapes.error_event("Invalid 'session.tools[0].name'"),
                "error": {"type": "invalid_request_error", "message": "m", "event_id": "evt_b"},
            },
        ),
        (False, shapes.output_item("added", "a", "c1")),
    )
    assert [t.name for t in session.tools] == ["a"]
    assert [c for _, c, _ in codes_of(session)] == [codes.NAME_INVALID_CHARS]


def test_response_create_tools_hold_for_that_response_only():
    session = realtime()
    feed(
        session,
        (True, shapes.session_update([shapes.function_tool("a")])),
        (True, shapes.response_create([shapes.function_tool("x")])),
        (False, shapes.output_item("added", "x", "c1")),
        (False, shapes.response_done([("x", "c1")])),
        (False, shapes.output_item("added", "x", "c2")),
    )
    assert codes_of(session) == [(4, codes.RESPONSE_UNKNOWN_TOOL, "item.name")]


def test_a_forced_choice_the_model_ignored_is_found_when_the_response_is_done():
    session = realtime()
    feed(
        session,
        (True, shapes.session_update([shapes.function_tool("a"), shapes.function_tool("b")])),
        (True, shapes.response_create(tool_choice={"type": "function", "name": "a"})),
        (False, shapes.output_item("added", "b", "c1")),
        (False, shapes.response_done([("b", "c1")])),
        (True, shapes.response_create(tool_choice="required")),
        (False, shapes.response_done([])),
    )
    assert codes_of(session) == [
        (3, codes.RESPONSE_IGNORED_CHOICE, "response.tool_choice"),
        (5, codes.RESPONSE_IGNORED_CHOICE, "response.tool_choice"),
    ]


def test_the_server_tells_the_tools_of_a_session_configured_elsewhere():
    session = realtime()
    feed(
        session,
        (False, shapes.session_created([shapes.function_tool("a")])),
        (False, shapes.output_item("added", "a", "c1")),
    )
    assert session.findings == []


def test_gemini_calls_and_results_must_name_declared_functions():
    session = live()
    feed(
        session,
        (True, shapes.setup(["get_weather"])),
        (False, shapes.setup_complete()),
        (False, shapes.tool_call([("c1", "get_weather"), ("c2", "get_time")])),
        (True, shapes.tool_response([("c1", "get_weather"), ("c2", "get_time")])),
    )
    assert codes_of(session) == [
        (2, codes.RESPONSE_UNKNOWN_TOOL, "toolCall.functionCalls[1].name"),
        (3, codes.RESULT_UNKNOWN_TOOL, "toolResponse.functionResponses[1].name"),
    ]
    assert "declared: 'get_weather'" in session.findings[1].message


def test_a_message_that_is_not_json_passes_with_a_warning():
    session = realtime()
    out = session.receive(0, True, b"{not json")
    out2 = session.receive(1, False, b"\xff")
    assert [(f.code, f.severity, f.message_index) for f in out.findings + out2.findings] == [
        (codes.REQUEST_UNREADABLE, "warning", 0),
        (codes.RESPONSE_UNREADABLE, "warning", 1),
    ]
    assert session.receive(2, True, b"[1, 2]").findings == []  # JSON, and names nothing


def spy_reader(read: list) -> Reader:
    """The standard reader, noting each body it reads."""

    def body(content, shape=None, resent=()):
        read.append(content)
        return readers.STANDARD.body(content, shape, resent)

    return Reader("spy", "a reader that notes what it reads", body, readers.STANDARD.event)


def test_messages_are_read_through_the_sessions_reader_as_an_exchanges_bodies_are():
    assert realtime().reader is readers.DEFAULT
    read = []
    message = shapes.dumps(shapes.session_update([shapes.function_tool(MCP_NAME)]))
    session = Session("openai-realtime", "openai", reader=spy_reader(read))
    session.receive(0, True, message)
    assert read == [message] and codes_of(session) == [
        (0, codes.NAME_INVALID_CHARS, "session.tools[0].name")
    ]
    read.clear()
    recorded = inspect_session(
        "api.openai.com", REALTIME_PATH, [(0, True, message)], (), None, spy_reader(read)
    )
    assert read == [message] and recorded.reader.name == "spy"


def test_fix_mode_leaves_a_message_that_is_not_utf8_as_sent_and_says_why():
    # json reads UTF-16 JSON, so the name is found; the splice works on UTF-8 only.
    session = realtime("fix")
    message = json.dumps(shapes.session_update([shapes.function_tool(MCP_NAME)]))
    out = session.receive(0, True, message.encode("utf-16"))
    assert (out.content, session.fixes, session.aliases) == (None, [], {})
    assert [s.to_dict() for s in session.fix_skipped] == [
        {"path": "session.tools[0].name", "name": MCP_NAME, "reason": "not UTF-8; left as sent"}
    ]


def test_a_message_with_an_integer_too_long_for_int_is_json_as_on_http():
    # json.loads refuses past 4300 digits; every reader takes it (readers.loads), so a
    # session calls it JSON just as an HTTP body.
    message = b'{"type": "session.update", "n": ' + b"9" * 5000 + b', "session": {"tools": []}}'
    for reader in readers.READERS:
        session = Session("openai-realtime", "openai", reader=reader)
        assert session.receive(0, True, message).findings == []


def test_inspect_session_replays_a_recorded_session_under_the_hosts_rule():
    messages = [
        (0, True, shapes.dumps(shapes.session_update([shapes.function_tool("x" * 65)]))),
        (2, False, shapes.dumps(shapes.output_item("added", "ghost"))),
    ]
    session = inspect_session("myres.openai.azure.com", "/openai/realtime?deployment=d", messages)
    assert session.rule == "azure" and session.api == "openai-realtime"
    assert codes_of(session) == [
        (0, codes.NAME_TOO_LONG, "session.tools[0].name"),
        (2, codes.RESPONSE_UNKNOWN_TOOL, "item.name"),
    ]
    assert inspect_session("example.com", "/socket", messages) is None


# -- block ----------------------------------------------------------------------------------


def test_block_answers_a_rejected_realtime_event_and_keeps_it_out_of_force():
    session = realtime("block")
    out = feed(
        session,
        (True, shapes.session_update([shapes.function_tool("a")])),
        (True, shapes.session_update([shapes.function_tool(MCP_NAME)], event_id="evt_7")),
        (False, shapes.output_item("added", MCP_NAME, "c1")),
    )
    assert out[0].block is None
    event = json.loads(out[1].block.event)
    assert event["type"] == "error"
    assert event["error"]["code"] == codes.NAME_INVALID_CHARS
    assert event["error"]["event_id"] == "evt_7"
    assert event["error"]["message"].startswith(
        "toolnames: session.tools[0].name 'github.create_issue'"
    )
    assert "never reached the provider" in event["error"]["message"]
    assert session.blocked == [1]
    assert [t.name for t in session.tools] == ["a"]  # the provider never saw the update
    assert codes_of(session)[-1] == (2, codes.RESPONSE_UNKNOWN_TOOL, "item.name")


def test_block_lets_warnings_and_server_messages_through():
    session = live("block")
    out = feed(
        session,
        (True, shapes.setup(["a", "b"])),
        (False, shapes.tool_call([("c1", "zzz")])),
    )
    assert out[1].findings and all(o.block is None for o in out)
    dup = realtime("block")  # OpenAI's rule only warns of duplicates
    assert (
        feed(dup, (True, shapes.session_update([shapes.function_tool("a")] * 2)))[0].block is None
    )


def test_block_closes_a_gemini_session_with_a_reason():
    session = live("block")
    out = feed(session, (True, shapes.setup(["fs/read"])))
    assert out[0].block.close_code == 1007
    assert out[0].block.close_reason.startswith(
        "toolnames: setup.tools[0].functionDeclarations[0].name 'fs/read'"
    )
    out = feed(
        live("block"), (True, shapes.setup(["a"])), (True, shapes.tool_response([("1", "b")]))
    )
    assert out[1].block.close_reason.startswith(
        "toolnames: toolResponse.functionResponses[0].name 'b'"
    )


# -- fix ------------------------------------------------------------------------------------


def test_fix_renames_declarations_choices_and_history_and_restores_server_events():
    session = realtime("fix")
    update = shapes.session_update(
        [shapes.function_tool("ok"), shapes.function_tool(MCP_NAME)],
        {"type": "function", "name": MCP_NAME},
    )
    out = feed(
        session,
        (True, update),
        (True, shapes.response_create(tool_choice={"type": "function", "name": MCP_NAME})),
        (True, shapes.item_create(shapes.function_call_item(MCP_NAME, "c0"))),
        (True, shapes.function_call_output("c0")),
    )
    sent = json.loads(out[0].content)
    assert sent["session"]["tools"][1]["name"] == ALIAS == "github_create_issue_" + ALIAS[-8:]
    assert sent["session"]["tool_choice"]["name"] == ALIAS
    # Every other byte as the app sent it.
    assert out[0].content == shapes.dumps(update).replace(
        f'"{MCP_NAME}"'.encode(), f'"{ALIAS}"'.encode()
    )
    assert json.loads(out[1].content)["response"]["tool_choice"]["name"] == ALIAS
    assert json.loads(out[2].content)["item"]["name"] == ALIAS
    assert out[3].content is None
    assert [(f.message_index, f.fix.path) for f in session.fixes] == [
        (0, "session.tools[1].name"),
        (0, "session.tool_choice.name"),
        (1, "response.tool_choice.name"),
        (2, "item.name"),
    ]
    back = feed(
        session,
        (False, shapes.output_item("added", ALIAS, "c1")),
        (False, shapes.arguments_done(ALIAS, "c1")),
        (False, shapes.response_done([(ALIAS, "c1")])),
        (False, shapes.audio_append()),
    )
    assert json.loads(back[0].content)["item"]["name"] == MCP_NAME
    assert json.loads(back[1].content)["name"] == MCP_NAME
    assert json.loads(back[2].content)["response"]["output"][0]["name"] == MCP_NAME
    assert back[3].content is None
    assert session.restored == 3
    # The calls are judged under the app's own names: nothing unknown, no choice ignored.
    assert [f.code for f in session.findings] == [
        codes.NAME_INVALID_CHARS,
        codes.HISTORY_NAME_INVALID,
    ]


def test_fix_renames_a_gemini_session_and_its_tool_responses():
    session = live("fix")
    name = "1password.lookup"  # Gemini needs a letter or "_" first
    alias = alias_for(name, RULES["gemini"])
    out = feed(
        session,
        (True, shapes.setup([name, "get_time"])),
        (False, shapes.tool_call([("c1", alias)])),
        (True, shapes.tool_response([("c1", name)])),
    )
    assert (
        json.loads(out[0].content)["setup"]["tools"][0]["functionDeclarations"][0]["name"] == alias
    )
    assert json.loads(out[1].content)["toolCall"]["functionCalls"][0]["name"] == name
    assert json.loads(out[2].content)["toolResponse"]["functionResponses"][0]["name"] == alias
    assert [f.code for f in session.findings] == [codes.NAME_INVALID_START]


def test_fix_leaves_a_session_whose_names_are_valid_untouched():
    session = realtime("fix")
    out = feed(
        session,
        (True, shapes.session_update([shapes.function_tool("a")])),
        (False, shapes.output_item("added", "a", "c1")),
    )
    assert [o.content for o in out] == [None, None] and session.restorer is None


# -- whatever the messages hold, a session never raises -------------------------------------

KEYS = [
    "type",
    "session",
    "response",
    "item",
    "tools",
    "tool_choice",
    "input",
    "name",
    "server_label",
    "call_id",
    "id",
    "output",
    "event_id",
    "setup",
    "functionDeclarations",
    "function_declarations",
    "toolCall",
    "functionCalls",
    "toolResponse",
    "tool_response",
    "functionResponses",
    "clientContent",
    "turns",
    "parts",
    "functionCall",
    "contextUpdate",
]
STRINGS = [
    "session.update",
    "response.create",
    "conversation.item.create",
    "response.done",
    "response.output_item.added",
    "response.function_call_arguments.done",
    "session.created",
    "function",
    "function_call",
    "mcp",
    "mcp_call",
    "required",
    "auto",
    "a.b",
    "a",
    "",
]


def shaped() -> st.SearchStrategy[dict]:
    """A real message with any JSON value put in at one of its places."""
    templates = [
        shapes.session_update(
            [shapes.function_tool("a"), shapes.mcp_tool("m")], {"type": "function", "name": "a"}
        ),
        shapes.response_create(
            [shapes.function_tool("a")], "required", [shapes.function_call_item("a")]
        ),
        shapes.item_create(shapes.function_call_item("a")),
        shapes.output_item("added", "a"),
        shapes.arguments_done("a"),
        shapes.response_done([("a", "c1")]),
        shapes.session_created([shapes.function_tool("a")]),
        shapes.setup(["a"]),
        shapes.tool_call([("1", "a")]),
        shapes.tool_response([("1", "a")]),
        shapes.client_content_with_call("a"),
        shapes.context_update(["a"]),
    ]

    any_json = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.just([]),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
        ),
        max_leaves=8,
    )
    return st.sampled_from(templates).flatmap(
        lambda t: st.tuples(st.sampled_from(list(places(t))), any_json).map(
            lambda pv: replaced(json.loads(json.dumps(t)), pv[0], pv[1])
        )
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["openai-realtime", "gemini-live"]),
    st.sampled_from(["observe", "fix", "block"]),
    st.lists(st.tuples(st.booleans(), keyed_bodies(KEYS, STRINGS)), max_size=6),
)
def test_any_messages_in_any_mode_give_findings_never_an_exception(protocol, mode, messages):
    session = Session(protocol, "openai", mode=mode)
    for i, (from_client, event) in enumerate(messages):
        out = session.receive(i, from_client, shapes.dumps(event))
        if out.content is not None:
            json.loads(out.content)  # a rewritten message is still JSON
        assert out.block is None or (from_client and mode == "block")


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shaped())
def test_a_real_message_with_any_value_anywhere_never_raises(event):
    for protocol in ("openai-realtime", "gemini-live"):
        for mode in ("observe", "fix", "block"):
            session = Session(protocol, "gemini", mode=mode)
            for from_client in (True, False):
                out = session.receive(0, from_client, shapes.dumps(event))
                if out.content is not None:
                    json.loads(out.content)
