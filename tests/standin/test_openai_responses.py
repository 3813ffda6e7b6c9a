"""OpenAI Responses in the stand-in (standin.openai_responses): the provider's error texts, the
real event sequence, the SDK.
"""

from __future__ import annotations

import json

import pytest

from tests.standin.wire import EMPTY
from tests.standin.wire import PATTERN_TEXT
from tests.standin.wire import RESPONSES
from tests.standin.wire import RESPONSES_TOOLS
from tests.standin.wire import assert_rejected_like_the_provider
from tests.standin.wire import openai_error
from tests.standin.wire import post
from tests.standin.wire import responses_request
from tests.standin.wire import sse

VALIDATION_CASES = {
    # §3 observed texts
    "responses-tool-name-pattern": (
        RESPONSES,
        responses_request(tools={"get weather": EMPTY}),
        openai_error(f"Invalid 'tools[0].name': {PATTERN_TEXT}", "tools[0].name", "invalid_value"),
    ),
    "responses-named-choice-not-in-tools": (
        RESPONSES,
        {**responses_request(), "tool_choice": {"type": "function", "name": "my.tool"}},
        openai_error("Tool choice 'my.tool' not found in 'tools' parameter.", "tool_choice", None),
    ),
    "responses-hosted-choice-not-in-tools": (
        RESPONSES,
        {**responses_request(), "tool_choice": {"type": "image_generation"}},
        openai_error(
            "Tool choice 'image_generation' not found in 'tools' parameter.", "tool_choice", None
        ),
    ),
    "responses-required-without-tools": (
        RESPONSES,
        {"model": "m", "input": "hi", "tool_choice": "required"},
        openai_error(
            "Tool choice 'required' must be specified with 'tools' parameter.", "tool_choice", None
        ),
    ),
    "responses-named-choice-without-tools": (
        RESPONSES,
        {"model": "m", "input": "hi", "tool_choice": {"type": "function", "name": "lookup"}},
        openai_error("Tool choice 'function' not found in 'tools' parameter.", "tool_choice", None),
    ),
    "responses-history-name": (
        RESPONSES,
        {
            **responses_request(),
            "input": [
                {"type": "function_call", "call_id": "c", "name": "$READFILE", "arguments": "{}"}
            ],
        },
        openai_error(f"Invalid 'input[0].name': {PATTERN_TEXT}", "input[0].name", "invalid_value"),
    ),
}


@pytest.mark.parametrize("case", VALIDATION_CASES)
def test_invalid_request_gets_the_providers_error(provider, case):
    assert_rejected_like_the_provider(provider, *VALIDATION_CASES[case])


def test_responses_text_stream_sends_output_text_deltas(provider):
    _, _, content = post(provider, RESPONSES, {**responses_request(), "stream": True})
    payloads = [json.loads(data) for _, data in sse(content)]
    deltas = [p["delta"] for p in payloads if p["type"] == "response.output_text.delta"]
    assert "".join(deltas) == "hello" and len(deltas) == 2
    assert payloads[-1]["response"]["output"][0]["content"][0]["text"] == "hello"


def test_responses_stream_emits_the_real_event_sequence(provider):
    _, _, content = post(
        provider, RESPONSES, {**responses_request(choice="required"), "stream": True}
    )
    events = sse(content)
    names = [event for event, _ in events]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    payloads = [json.loads(data) for _, data in events]
    assert [p["type"] for p in payloads] == names
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    added = payloads[2]["item"]
    assert (added["type"], added["name"], added["arguments"]) == (
        "function_call",
        "get_weather",
        "",
    )
    deltas = "".join(p["delta"] for p in payloads if p["type"].endswith("arguments.delta"))
    assert json.loads(deltas) == {"city": "Paris"}
    assert payloads[5]["name"] == "get_weather" and payloads[5]["arguments"] == deltas
    assert payloads[-1]["response"]["status"] == "completed"
    assert payloads[-1]["response"]["output"][0]["call_id"] == added["call_id"]


@pytest.mark.needs_sdk
def test_openai_sdk_responses_create_and_stream(openai_client):
    response = openai_client.responses.create(
        model="gpt-test",
        input="hi",
        tools=RESPONSES_TOOLS,
        tool_choice={"type": "function", "name": "get_weather"},
    )
    assert response.output[0].type == "function_call" and response.output[0].name == "get_weather"
    assert openai_client.responses.create(model="gpt-test", input="hi").output_text == "hello"
    events = list(
        openai_client.responses.create(
            model="gpt-test", input="hi", tools=RESPONSES_TOOLS, tool_choice="required", stream=True
        )
    )
    assert events[-1].type == "response.completed"
    with openai_client.responses.stream(
        model="gpt-test", input="hi", tools=RESPONSES_TOOLS, tool_choice="required"
    ) as stream:
        final = stream.get_final_response()
    assert final.output[0].arguments == '{"city":"Paris"}'
