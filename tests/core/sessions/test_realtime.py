"""OpenAI Realtime's adapter: what each client and server event declares, forces and calls."""

import json

import pytest

from tests.core.sessions import shapes
from toolnames_core import codes
from toolnames_core.model import Finding
from toolnames_core.sessions.realtime import PROTOCOL

read_client, read_server = PROTOCOL.read_client, PROTOCOL.read_server


def test_session_update_declares_flat_tools_mcp_servers_and_a_named_choice():
    event = shapes.session_update(
        [shapes.function_tool("search.web"), shapes.mcp_tool("deepwiki")],
        {"type": "function", "name": "search.web"},
    )
    message = read_client(event)
    assert message.scope == "session"
    assert message.event_id == "evt_client_1"
    assert [(t.name, t.path, t.kind) for t in message.tools] == [
        ("search.web", "session.tools[0].name", "function"),
        ("deepwiki", "session.tools[1].server_label", "builtin"),
    ]
    assert message.choice.mode == "named"
    assert [(r.name, r.path) for r in message.choice.names] == [
        ("search.web", "session.tool_choice.name")
    ]


@pytest.mark.parametrize(
    "choice,mode,names",
    [
        ("auto", None, []),
        ("none", None, []),
        ("required", "required", []),
        ({"type": "mcp", "server_label": "deepwiki"}, "named", ["deepwiki"]),
        ({"type": "mcp", "server_label": "deepwiki", "name": "ask"}, "named", ["deepwiki"]),
    ],
)
def test_choices(choice, mode, names):
    message = read_client(shapes.session_update(tool_choice=choice))
    assert message.choice_given
    assert message.tools is None  # tools not named: the ones in force stay
    assert (message.choice.mode if message.choice else None) == mode
    assert ([r.name for r in message.choice.names] if message.choice else []) == names


def test_a_malformed_choice_or_tool_is_reported_not_guessed():
    message = read_client(
        shapes.session_update([{"type": "function"}, "x", {"type": "shell"}], {"type": "function"})
    )
    assert [(p.code, p.path) for p in message.problems] == [
        (codes.TOOL_MALFORMED, "session.tools[0].name"),
        (codes.TOOL_MALFORMED, "session.tools[1]"),
        (codes.TOOL_MALFORMED, "session.tools[2].type"),
        (codes.CHOICE_MALFORMED, "session.tool_choice"),
    ]


def test_a_choice_type_of_any_json_value_is_malformed_not_an_exception():
    # Found by hand after the property test missed it: a list is no dict key.
    for kind in (["function"], {"a": 1}, None, 3):
        message = read_client(shapes.session_update(tool_choice={"type": kind, "name": "a"}))
        assert [p.code for p in message.problems] == [codes.CHOICE_MALFORMED]


def test_response_create_declares_for_one_response_and_its_input_is_history():
    message = read_client(
        shapes.response_create(
            [shapes.function_tool("a")], "required", [shapes.function_call_item("b.c")]
        )
    )
    assert message.scope == "response"
    assert [t.path for t in message.tools] == ["response.tools[0].name"]
    assert message.choice.mode == "required"
    assert [(r.name, r.path) for r in message.history] == [("b.c", "response.input[0].name")]


def test_conversation_item_create_function_call_is_history_and_its_output_has_no_name():
    message = read_client(shapes.item_create(shapes.function_call_item("fs.read")))
    assert [(r.name, r.path) for r in message.history] == [("fs.read", "item.name")]
    assert not read_client(shapes.function_call_output()).names_anything
    assert not read_client(shapes.audio_append()).names_anything


def test_server_calls_carry_the_call_id_as_their_identity():
    added = read_server(shapes.output_item("added", "search", "call_9"))
    done = read_server(shapes.output_item("done", "search", "call_9"))
    args = read_server(shapes.arguments_done("search", "call_9"))
    assert [(k, r.path) for k, r in added.calls] == [("call:call_9", "item.name")]
    assert [k for k, _ in done.calls] == ["call:call_9"]
    assert [(k, r.path) for k, r in args.calls] == [("call:call_9", "name")]


def test_response_done_lists_its_calls_and_ends_the_response():
    message = read_server(shapes.response_done([("a", "c1"), ("b", "c2")]))
    assert message.response_done
    assert [(k, r.name, r.path) for k, r in message.calls] == [
        ("call:c1", "a", "response.output[0].name"),
        ("call:c2", "b", "response.output[1].name"),
    ]


def test_session_created_tells_the_tools_in_force():
    message = read_server(shapes.session_created([shapes.function_tool("a")]))
    assert [t.name for t in message.tools] == ["a"]
    assert read_server(shapes.error_event("x")).tools is None


def test_block_answers_with_realtimes_own_error_event():
    blocked = read_client(shapes.session_update([shapes.function_tool("a.b")]))
    first = Finding(codes.NAME_INVALID_CHARS, "error", "session.tools[0].name", "bad")
    block = PROTOCOL.block("toolnames: bad", first, blocked)
    event = json.loads(block.event)
    assert event["type"] == "error" and event["event_id"].startswith("event_toolnames_")
    assert event["error"] == {
        "type": "invalid_request_error",
        "code": "name-invalid-chars",
        "message": "toolnames: bad",
        "param": "session.tools[0].name",
        "event_id": "evt_client_1",
    }
    assert block.close_code == 0


@pytest.mark.needs_sdk
def test_the_shapes_are_the_openai_sdks_types():
    from openai.types import realtime

    checks = [
        (
            realtime.SessionUpdateEvent,
            shapes.session_update(
                [shapes.function_tool("a"), shapes.mcp_tool("m")], {"type": "function", "name": "a"}
            ),
        ),
        (
            realtime.ResponseCreateEvent,
            shapes.response_create(
                [shapes.function_tool("a")], "required", [shapes.function_call_item("a")]
            ),
        ),
        (realtime.ConversationItemCreateEvent, shapes.item_create(shapes.function_call_item("a"))),
        (realtime.ConversationItemCreateEvent, shapes.function_call_output()),
        (realtime.InputAudioBufferAppendEvent, shapes.audio_append()),
        (realtime.ResponseOutputItemAddedEvent, shapes.output_item("added", "a")),
        (realtime.ResponseOutputItemDoneEvent, shapes.output_item("done", "a")),
        (realtime.ResponseFunctionCallArgumentsDoneEvent, shapes.arguments_done("a")),
        (realtime.ResponseDoneEvent, shapes.response_done([("a", "c1")])),
        (realtime.SessionCreatedEvent, shapes.session_created([shapes.function_tool("a")])),
        (realtime.RealtimeErrorEvent, shapes.error_event("x")),
    ]
    for model, event in checks:
        parsed = model.model_validate(event)
        assert not parsed.model_extra, (model.__name__, parsed.model_extra)
    # toolnames' own error event is one the SDK reads as any other.
    first = Finding(codes.NAME_EMPTY, "error", "session.tools[0].name", "m")
    block = PROTOCOL.block("toolnames: m", first, read_client(shapes.session_update([])))
    assert (
        realtime.RealtimeErrorEvent.model_validate_json(block.event).error.message == "toolnames: m"
    )
