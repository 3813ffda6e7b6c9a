"""Anthropic Messages in the stand-in (standin.anthropic_messages): the provider's error texts,
the real event sequence, the SDK.
"""

from __future__ import annotations

import json

import pytest

from tests.standin.wire import ANTHROPIC
from tests.standin.wire import ANTHROPIC_TOOLS
from tests.standin.wire import EMPTY
from tests.standin.wire import HI
from tests.standin.wire import WEATHER
from tests.standin.wire import anthropic_error
from tests.standin.wire import anthropic_request
from tests.standin.wire import assert_rejected_like_the_provider
from tests.standin.wire import post
from tests.standin.wire import sse

VALIDATION_CASES = {
    # §5 observed texts
    "anthropic-tool-name-pattern": (
        ANTHROPIC,
        anthropic_request(tools={"get_weather": WEATHER, "mcp:search": EMPTY}),
        anthropic_error(
            "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
        ),
    ),
    "anthropic-tool-name-too-long": (
        ANTHROPIC,
        anthropic_request(tools={"y" * 129: EMPTY}),
        anthropic_error("tools.0.custom.name: String should have at most 128 characters"),
    ),
    "anthropic-duplicate-names": (
        ANTHROPIC,
        {**anthropic_request(), "tools": [{"name": "a", "input_schema": EMPTY}] * 2},
        anthropic_error("tools: Tool names must be unique."),
    ),
    "anthropic-named-choice-not-in-tools": (
        ANTHROPIC,
        {**anthropic_request(), "tool_choice": {"type": "tool", "name": "web_search"}},
        anthropic_error("Tool 'web_search' not found in provided tools"),
    ),
    "anthropic-tool-blocks-without-tools": (
        ANTHROPIC,
        {**anthropic_request(tool_result=True), "tools": []},
        anthropic_error("Requests which include tool_use or tool_result blocks must define tools."),
    ),
    "anthropic-history-name": (
        ANTHROPIC,
        {
            **anthropic_request(),
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "a.b", "input": {}}],
                },
            ],
        },
        anthropic_error(
            "messages.1.content.0.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
        ),
    ),
}


@pytest.mark.parametrize("case", VALIDATION_CASES)
def test_invalid_request_gets_the_providers_error(provider, case):
    assert_rejected_like_the_provider(provider, *VALIDATION_CASES[case])


def test_anthropic_stream_emits_the_real_event_sequence(provider):
    _, _, content = post(
        provider, ANTHROPIC, {**anthropic_request(choice="required"), "stream": True}
    )
    events = [(event, json.loads(data)) for event, data in sse(content)]
    assert [e for e, _ in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(payload["type"] == event for event, payload in events)
    start = events[2][1]["content_block"]
    assert (start["type"], start["name"], start["input"]) == ("tool_use", "get_weather", {})
    partial = "".join(p["delta"]["partial_json"] for e, p in events if e == "content_block_delta")
    assert json.loads(partial) == {"city": "Paris"}
    assert events[6][1]["delta"]["stop_reason"] == "tool_use"


def test_anthropic_stream_text_uses_text_deltas(provider):
    _, _, content = post(provider, ANTHROPIC, {**anthropic_request(), "stream": True})
    payloads = [json.loads(d) for _, d in sse(content)]
    deltas = [p["delta"] for p in payloads if p["type"] == "content_block_delta"]
    assert {d["type"] for d in deltas} == {"text_delta"}
    assert "".join(d["text"] for d in deltas) == "hello"


@pytest.mark.needs_sdk
def test_anthropic_sdk_messages_create_and_stream(anthropic_client):
    message = anthropic_client.messages.create(
        model="claude-test",
        max_tokens=50,
        messages=HI,
        tools=ANTHROPIC_TOOLS,
        tool_choice={"type": "any"},
    )
    assert message.stop_reason == "tool_use"
    assert (message.content[0].name, message.content[0].input) == ("get_weather", {"city": "Paris"})
    events = list(
        anthropic_client.messages.create(
            model="claude-test", max_tokens=50, messages=HI, tools=ANTHROPIC_TOOLS, stream=True
        )
    )
    assert [e.type for e in events][0] == "message_start" and events[-1].type == "message_stop"
    with anthropic_client.messages.stream(
        model="claude-test",
        max_tokens=50,
        messages=HI,
        tools=ANTHROPIC_TOOLS,
        tool_choice={"type": "tool", "name": "get_weather"},
    ) as stream:
        final = stream.get_final_message()
    assert final.content[0].input == {"city": "Paris"} and final.stop_reason == "tool_use"


@pytest.mark.needs_sdk
def test_anthropic_sdk_raises_bad_request_with_the_observed_text(anthropic_client):
    import anthropic

    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(
            model="claude-test", max_tokens=50, messages=HI, tools=ANTHROPIC_TOOLS * 2
        )
    assert caught.value.body["error"]["message"] == "tools: Tool names must be unique."
