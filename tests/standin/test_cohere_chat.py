"""Cohere's chat v2 in the stand-in (standin.cohere_chat, docs/providers.md §10): the path it
serves, Cohere's name rule and error shape, REQUIRED/NONE only, its answers and SSE events,
and the cohere SDK's ClientV2 against it.
"""

from __future__ import annotations

import json

import pytest

from tests.standin.wire import EMPTY
from tests.standin.wire import WEATHER
from tests.standin.wire import post
from tests.standin.wire import sse

PATH = "/v2/chat"
RULE_TEXT = (
    "invalid request: tool names can only contain certain characters (A-Za-z0-9_) and "
    "can't begin with a digit (provided name: '{}')."
)


def tool(name, schema=EMPTY):
    return {"type": "function", "function": {"name": name, "parameters": schema}}


def body(*names, **extra):
    return {
        "model": "command-a-03-2025",
        "messages": [{"role": "user", "content": "weather in Paris?"}],
        "tools": [tool(n) for n in names or ("get_weather",)],
        **extra,
    }


@pytest.mark.parametrize("bad", ["github.create_issue", "create-issue", "9lives", "a b"])
def test_a_name_outside_coheres_rule_gets_coheres_text(provider, bad):
    status, _, content = post(provider, PATH, body("get_weather", bad))
    error = json.loads(content)
    assert status == 400 and set(error) == {"id", "message"}
    assert error["message"] == RULE_TEXT.format(bad)


@pytest.mark.parametrize("good", ["get_weather", "_x", "A" * 300])
def test_names_inside_the_rule_are_accepted_at_any_length(provider, good):
    status, _, _ = post(provider, PATH, body(good))
    assert status == 200


def test_a_bad_name_in_the_history_is_refused_too(provider):
    call = {"id": "c1", "type": "function", "function": {"name": "a.b", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    status, _, content = post(provider, PATH, body(messages=messages))
    assert status == 400 and json.loads(content)["message"] == RULE_TEXT.format("a.b")


@pytest.mark.parametrize("choice", ["required", "AUTO", {"type": "function"}])
def test_a_choice_other_than_required_or_none_is_refused(provider, choice):
    status, _, content = post(provider, PATH, body(tool_choice=choice))
    assert status == 400 and "tool_choice" in json.loads(content)["message"]


def test_required_without_tools_is_refused(provider):
    status, _, _ = post(provider, PATH, {**body(), "tools": [], "tool_choice": "REQUIRED"})
    assert status == 400


def test_required_calls_the_first_tool_with_its_arguments(provider):
    request = body("get_weather", tool_choice="REQUIRED")
    request["tools"][0]["function"]["parameters"] = WEATHER
    status, _, content = post(provider, PATH, request)
    answer = json.loads(content)
    assert status == 200 and answer["finish_reason"] == "TOOL_CALL"
    (call,) = answer["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}


def test_a_tool_result_last_finishes_the_turn(provider):
    messages = [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    status, _, content = post(provider, PATH, body(messages=messages, tool_choice="REQUIRED"))
    answer = json.loads(content)
    assert status == 200 and answer["finish_reason"] == "COMPLETE"
    assert answer["message"]["content"] == [{"type": "text", "text": "done"}]


def test_the_stream_names_a_call_in_tool_call_start_and_ends_with_done(provider):
    status, headers, content = post(
        provider, PATH, body(stream=True), {"x-standin-call": "get_weather"}
    )
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    events = sse(content)
    assert events[-1] == (None, "[DONE]")
    kinds = [kind for kind, _ in events[:-1]]
    assert kinds[0] == "message-start" and kinds[-1] == "message-end"
    assert kinds[1:4] == ["tool-plan-delta", "tool-call-start", "tool-call-delta"]
    start = json.loads(events[2][1])
    assert start["delta"]["message"]["tool_calls"]["function"] == {
        "name": "get_weather",
        "arguments": "",
    }
    assert all(json.loads(data)["type"] == kind for kind, data in events[:-1])


@pytest.mark.needs_sdk
def test_the_sdks_client_v2_runs_against_it_streamed_and_not(provider):
    import cohere

    client = cohere.ClientV2(api_key="test-key", base_url=provider.url)
    tools = [tool("get_weather", WEATHER)]
    messages = [{"role": "user", "content": "weather in Paris?"}]
    answer = client.chat(
        model="command-a-03-2025", messages=messages, tools=tools, tool_choice="REQUIRED"
    )
    (call,) = answer.message.tool_calls
    assert call.function.name == "get_weather"
    starts = [
        e
        for e in client.chat_stream(
            model="command-a-03-2025", messages=messages, tools=tools, tool_choice="REQUIRED"
        )
        if e.type == "tool-call-start"
    ]
    assert [e.delta.message.tool_calls.function.name for e in starts] == ["get_weather"]
    with pytest.raises(cohere.BadRequestError) as raised:
        client.chat(model="command-a-03-2025", messages=messages, tools=[tool("a.b")])
    assert raised.value.body["message"] == RULE_TEXT.format("a.b")
