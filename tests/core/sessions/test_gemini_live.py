"""Gemini Live's adapter: setup's declarations, the server's calls, the client's results."""

import pytest

from tests.core.sessions import shapes
from toolnames_core import codes
from toolnames_core.model import Finding
from toolnames_core.sessions.gemini_live import CLOSE_CODE
from toolnames_core.sessions.gemini_live import MAX_REASON_BYTES
from toolnames_core.sessions.gemini_live import PROTOCOL
from toolnames_core.sessions.gemini_live import close_reason

read_client, read_server = PROTOCOL.read_client, PROTOCOL.read_server


@pytest.mark.parametrize("snake", [False, True])
def test_setup_declares_functions_in_either_spelling(snake):
    key = "function_declarations" if snake else "functionDeclarations"
    message = read_client(shapes.setup(["get_weather", "fs.read"], snake=snake))
    assert [(t.name, t.path) for t in message.tools] == [
        ("get_weather", f"setup.tools[0].{key}[0].name"),
        ("fs.read", f"setup.tools[0].{key}[1].name"),
    ]


def test_a_setup_without_tools_declares_none_and_built_ins_have_no_names():
    assert read_client({"setup": {"model": "m"}}).tools == []
    assert read_client({"setup": {"model": "m", "tools": [{"googleSearch": {}}]}}).tools == []


def test_malformed_declarations_are_reported():
    message = read_client(
        {"setup": {"tools": [{"functionDeclarations": [{"description": "x"}]}, 3]}}
    )
    assert [(p.code, p.path) for p in message.problems] == [
        (codes.TOOL_MALFORMED, "setup.tools[0].functionDeclarations[0].name"),
        (codes.TOOL_MALFORMED, "setup.tools[1]"),
    ]


def test_tool_response_names_are_results_and_client_content_calls_are_history():
    message = read_client(shapes.tool_response([("1", "get_weather")]))
    assert [(r.name, r.path) for r in message.results] == [
        ("get_weather", "toolResponse.functionResponses[0].name")
    ]
    assert message.tools is None
    history = read_client(shapes.client_content_with_call("fs.read")).history
    assert [(r.name, r.path) for r in history] == [
        ("fs.read", "clientContent.turns[0].parts[0].functionCall.name")
    ]
    snake = read_client({"tool_response": {"function_responses": [{"name": "a"}]}})
    assert [r.path for r in snake.results] == ["tool_response.function_responses[0].name"]
    mixed = read_client(shapes.tool_response([("1", "a")], key="tool_response"))
    assert [r.path for r in mixed.results] == ["tool_response.functionResponses[0].name"]


def test_a_context_update_replaces_the_tools():
    message = read_client(shapes.context_update(["b.c"]))
    assert [(t.name, t.path) for t in message.tools] == [
        ("b.c", "contextUpdate.tools.tools[0].functionDeclarations[0].name")
    ]
    cleared = read_client({"contextUpdate": {"tools": {}}})
    assert cleared.tools == []
    assert read_client({"contextUpdate": {"systemInstruction": {"parts": []}}}).tools is None


def test_tool_call_names_each_call_by_its_id():
    message = read_server(shapes.tool_call([("c1", "a"), ("c2", "b")]))
    assert [(k, r.name, r.path) for k, r in message.calls] == [
        ("call:c1", "a", "toolCall.functionCalls[0].name"),
        ("call:c2", "b", "toolCall.functionCalls[1].name"),
    ]
    assert [k for k, _ in read_server({"toolCall": {"functionCalls": [{"name": "a"}]}}).calls] == [
        None
    ]
    assert read_server(shapes.setup_complete()).calls == []


def test_block_closes_with_1007_and_a_reason_that_fits_a_close_frame():
    first = Finding(
        codes.NAME_INVALID_START, "error", "setup.tools[0].functionDeclarations[0].name", "m"
    )
    block = PROTOCOL.block("toolnames: " + "é" * 200, first, read_client(shapes.setup(["1a"])))
    assert block.event is None and block.close_code == CLOSE_CODE == 1007
    assert block.close_reason.startswith("toolnames: ")
    assert len(block.close_reason.encode()) <= MAX_REASON_BYTES
    assert close_reason("toolnames: short") == "toolnames: short"


@pytest.mark.needs_sdk
def test_the_shapes_are_google_genais_types():
    from google.genai import types

    for message in [
        shapes.setup(["a"]),
        shapes.setup(["a"], snake=True),
        shapes.tool_response([("1", "a")]),
        shapes.tool_response([("1", "a")], key="tool_response"),
        shapes.client_content_with_call("a"),
        shapes.context_update(["a"]),
    ]:
        assert types.LiveClientMessage.model_validate(message).model_dump(exclude_none=True)
    for message in [shapes.tool_call([("1", "a")]), shapes.setup_complete()]:
        assert types.LiveServerMessage.model_validate(message).model_dump(exclude_none=True)
    # Unknown fields are refused, so the shapes above hold nothing the SDK would not send.
    with pytest.raises(ValueError):
        types.LiveClientMessage.model_validate({"setup": {"toolz": []}})
