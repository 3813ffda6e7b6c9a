"""OpenAI Chat Completions in the stand-in (standin.openai_chat): the provider's error texts
(docs/providers.md, the section beside each case), the answer's fields, the stream, the SDK.
"""

from __future__ import annotations

import json

import pytest

from standin import StandinProvider
from tests.standin.wire import CHAT
from tests.standin.wire import EMPTY
from tests.standin.wire import HI
from tests.standin.wire import HISTORY_CALL
from tests.standin.wire import OPENAI_TOOLS
from tests.standin.wire import PATTERN_TEXT
from tests.standin.wire import RESPONSES
from tests.standin.wire import WEATHER
from tests.standin.wire import assert_rejected_like_the_provider
from tests.standin.wire import chat_answer
from tests.standin.wire import chat_request
from tests.standin.wire import openai_error
from tests.standin.wire import post
from tests.standin.wire import post_json
from tests.standin.wire import responses_request
from tests.standin.wire import sse

VALIDATION_CASES = {
    # §2 observed texts
    "chat-tool-name-pattern": (
        CHAT,
        chat_request(tools={"get_weather": WEATHER, "get.time": EMPTY}),
        openai_error(
            f"Invalid 'tools[1].function.name': {PATTERN_TEXT}",
            "tools[1].function.name",
            "invalid_value",
        ),
    ),
    "chat-tool-name-too-long": (
        CHAT,
        chat_request(tools={"x" * 67: EMPTY}),
        openai_error(
            "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length 64, "
            "but got a string with length 67 instead.",
            "tools[0].function.name",
            "string_above_max_length",
        ),
    ),
    "chat-history-name": (
        CHAT,
        {
            **chat_request(),
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [HISTORY_CALL]},
            ],
        },
        openai_error(
            f"Invalid 'messages[1].tool_calls[0].function.name': {PATTERN_TEXT}",
            "messages[1].tool_calls[0].function.name",
            "invalid_value",
        ),
    ),
    "chat-tool-choice-without-tools": (
        CHAT,
        {"model": "m", "messages": [], "tool_choice": "auto"},
        openai_error(
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
            "tool_choice",
            None,
        ),
    ),
    "chat-named-choice-not-in-tools": (  # §2 has no Chat text; the stand-in reuses §3's Responses text
        CHAT,
        {**chat_request(), "tool_choice": {"type": "function", "function": {"name": "my.tool"}}},
        openai_error("Tool choice 'my.tool' not found in 'tools' parameter.", "tool_choice", None),
    ),
    "chat-allowed-tools-entry-not-in-tools": (
        CHAT,
        {
            **chat_request(),
            "tool_choice": {
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": "required",
                    "tools": [{"type": "function", "function": {"name": "nope"}}],
                },
            },
        },
        openai_error("Tool choice 'nope' not found in 'tools' parameter.", "tool_choice", None),
    ),
    "chat-malformed-ai-sdk-tool-choice": (
        CHAT,
        {**chat_request(), "tool_choice": {"type": "tool", "toolName": "lookup"}},
        openai_error(
            "Invalid value: 'tool'. Supported values are: 'function', 'allowed_tools', and 'custom'.",
            "tool_choice.type",
            "invalid_value",
        ),
    ),
}


@pytest.mark.parametrize("case", VALIDATION_CASES)
def test_invalid_request_gets_the_providers_error(provider, case):
    assert_rejected_like_the_provider(provider, *VALIDATION_CASES[case])


def test_chat_parallel_wrapper_header_produces_the_openai_wrapper_call(provider):
    status, body = post_json(
        provider, CHAT, chat_request(), {"x-standin-call": "multi_tool_use.parallel"}
    )
    assert status == 200
    assert chat_answer(body) == [
        (
            "multi_tool_use.parallel",
            {"tool_uses": [{"recipient_name": "functions.get_weather", "parameters": {}}]},
        )
    ]


def test_chat_response_has_the_fields_sdks_expect(provider):
    status, body = post_json(provider, CHAT, chat_request(choice="required"))
    assert status == 200
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
    assert isinstance(body["created"], int) and body["model"] == "gpt-test"
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    call = body["choices"][0]["message"]["tool_calls"][0]
    assert call["type"] == "function" and call["id"].startswith("call_")


def test_forced_openai_custom_tool_gets_a_custom_tool_call(provider):
    custom = {"type": "custom", "custom": {"name": "apply_patch_text"}}
    chat = {**chat_request(), "tools": [custom], "tool_choice": custom}
    status, body = post_json(provider, CHAT, chat)
    assert status == 200
    call = body["choices"][0]["message"]["tool_calls"][0]
    assert (call["type"], call["custom"]["name"]) == ("custom", "apply_patch_text")

    tool = {"type": "custom", "name": "apply_patch_text"}
    responses = {**responses_request(), "tools": [tool], "tool_choice": tool}
    status, body = post_json(provider, RESPONSES, responses)
    assert status == 200
    assert [(o["type"], o["name"]) for o in body["output"]] == [
        ("custom_tool_call", "apply_patch_text")
    ]


# ---------------------------------------------------------------------------
# streaming


def test_chat_stream_sends_tool_call_deltas_then_done(provider):
    body = {**chat_request(), "stream": True, "stream_options": {"include_usage": True}}
    status, headers, content = post(provider, CHAT, body, {"x-standin-call": "get_weather,lookup"})
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert headers["transfer-encoding"] == "chunked"
    events = sse(content)
    assert events[-1] == (None, "[DONE]")
    chunks = [json.loads(data) for _, data in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    seen, arguments = set(), {0: "", 1: ""}
    for chunk in chunks:
        for delta in chunk["choices"][0]["delta"].get("tool_calls", []) if chunk["choices"] else []:
            index = delta["index"]
            if index not in seen:  # first chunk per index: id, type, name, arguments ""
                seen.add(index)
                assert delta["id"].startswith("call_") and delta["type"] == "function"
                assert delta["function"]["arguments"] == ""
                assert delta["function"]["name"] == ["get_weather", "lookup"][index]
            else:
                assert set(delta) == {"index", "function"} and set(delta["function"]) == {
                    "arguments"
                }
                arguments[index] += delta["function"]["arguments"]
    assert json.loads(arguments[0]) == {"city": "Paris"} and json.loads(arguments[1]) == {}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


def test_chat_stream_text_concatenates_to_hello(provider):
    _, _, content = post(provider, CHAT, {**chat_request(), "stream": True})
    chunks = [json.loads(d) for _, d in sse(content)[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks) == "hello"
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


@pytest.mark.needs_sdk
def test_openai_sdk_chat_completion_parses_a_tool_call(openai_client):
    completion = openai_client.chat.completions.create(
        model="gpt-test", messages=HI, tools=OPENAI_TOOLS, tool_choice="required"
    )
    call = completion.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {
        "city": "Paris"
    }
    assert completion.choices[0].finish_reason == "tool_calls"


@pytest.mark.needs_sdk
def test_openai_sdk_chat_stream_helper_accumulates_the_tool_call(openai_client):
    with openai_client.chat.completions.stream(
        model="gpt-test", messages=HI, tools=OPENAI_TOOLS, tool_choice="required"
    ) as stream:
        final = stream.get_final_completion()
    call = final.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather" and call.function.arguments == '{"city":"Paris"}'
    chunks = list(openai_client.chat.completions.create(model="gpt-test", messages=HI, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "hello"


@pytest.mark.needs_sdk
def test_openai_sdk_raises_bad_request_with_the_observed_text(openai_client):
    import openai

    bad = [{"type": "function", "function": {"name": "get.weather", "parameters": EMPTY}}]
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.chat.completions.create(model="gpt-test", messages=HI, tools=bad)
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == "tools[0].function.name"
    assert "string does not match pattern" in caught.value.message


@pytest.mark.parametrize(
    "longest, length, status",
    [(20, 31, 400), (20, 20, 200), (128, 100, 200), (128, 129, 400)],
)
def test_a_drifted_provider_takes_names_up_to_its_own_limit(longest, length, status):
    with StandinProvider(name_max_length=longest) as drifted:
        got, answer = post_json(drifted, CHAT, chat_request(tools={"n" * length: EMPTY}))

    assert got == status
    if status == 400:
        assert answer["error"]["message"] == (
            "Invalid 'tools[0].function.name': string too long. Expected a string with maximum "
            f"length {longest}, but got a string with length {length} instead."
        )
