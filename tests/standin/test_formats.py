"""Every format the stand-in serves (standin.formats), over real HTTP on loopback: the same fake
model behind each, names at each provider's limit accepted, bodies that are not JSON refused
in each provider's shape.
"""

from __future__ import annotations

import json

import pytest

from standin import formats
from tests.standin.wire import ANTHROPIC
from tests.standin.wire import BEDROCK
from tests.standin.wire import CHAT
from tests.standin.wire import EMPTY
from tests.standin.wire import GEMINI
from tests.standin.wire import RESPONSES
from tests.standin.wire import WEATHER
from tests.standin.wire import anthropic_answer
from tests.standin.wire import anthropic_request
from tests.standin.wire import bedrock_answer
from tests.standin.wire import bedrock_request
from tests.standin.wire import chat_answer
from tests.standin.wire import chat_request
from tests.standin.wire import gemini_answer
from tests.standin.wire import gemini_request
from tests.standin.wire import post
from tests.standin.wire import post_json
from tests.standin.wire import responses_answer
from tests.standin.wire import responses_request
from tests.testkit import exchange_for

FORMATS = {
    "chat": (CHAT, chat_request, chat_answer),
    "azure-chat": (
        "/openai/deployments/gpt4/chat/completions?api-version=2024-10-21",
        chat_request,
        chat_answer,
    ),
    "responses": (RESPONSES, responses_request, responses_answer),
    "anthropic": (ANTHROPIC, anthropic_request, anthropic_answer),
    "gemini": (GEMINI, gemini_request, gemini_answer),
    "vertex": (
        "/v1beta1/projects/p/locations/us/publishers/google/models/gemini-2.5-pro:generateContent",
        gemini_request,
        gemini_answer,
    ),
    "bedrock": (BEDROCK, bedrock_request, bedrock_answer),
}


SCENARIOS = {
    # name: (request kwargs, headers, expected answer)
    "no-choice-answers-hello": ({}, {}, "hello"),
    "named-choice-calls-that-tool": ({"choice": "named"}, {}, [("lookup", {})]),
    "required-choice-calls-first-tool-with-city": (
        {"choice": "required"},
        {},
        [("get_weather", {"city": "Paris"})],
    ),
    "header-calls-unoffered-name": (
        {},
        {"x-standin-call": "functions.search"},
        [("functions.search", {})],
    ),
    "header-calls-several-names": (
        {},
        {"x-standin-call": "lookup, get_weather"},
        [("lookup", {}), ("get_weather", {"city": "Paris"})],
    ),
    "tool-result-last-answers-done": (
        {"tool_result": True, "choice": "required"},
        {"x-standin-call": "lookup"},
        "done",
    ),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_valid_request_gets_the_deterministic_answer(provider, fmt, scenario):
    path, build, answer = FORMATS[fmt]
    kwargs, headers, expected = SCENARIOS[scenario]
    status, body = post_json(provider, path, build(**kwargs), headers)
    assert status == 200, body
    assert answer(body) == expected


@pytest.mark.parametrize(
    "path, body",
    [
        (CHAT, chat_request(tools={"a" * 64: EMPTY, "A-z_09": EMPTY})),
        (RESPONSES, responses_request(tools={"a" * 64: EMPTY})),
        (ANTHROPIC, anthropic_request(tools={"a" * 128: EMPTY})),
        (GEMINI, gemini_request(tools={"_ns:tool.v1-x": EMPTY, "b" * 64: EMPTY})),
        (BEDROCK, bedrock_request(tools={"a" * 64: EMPTY, "1-dash_ok": EMPTY})),
    ],
    ids=[
        "chat-64",
        "responses-64",
        "anthropic-128",
        "gemini-dots-colons-64",
        "bedrock-64-leading-digit",
    ],
)
def test_names_at_each_providers_limit_are_accepted(provider, path, body):
    status, content = post_json(provider, path, body)
    assert status == 200, content


def test_answers_are_deterministic_for_identical_requests(provider):
    first = post(provider, RESPONSES, responses_request(choice="required"))[2]
    assert post(provider, RESPONSES, responses_request(choice="required"))[2] == first


@pytest.mark.parametrize(
    "path, shape",
    [
        (CHAT, "openai"),
        (RESPONSES, "openai"),
        (ANTHROPIC, "anthropic"),
        (GEMINI, "gemini"),
        (BEDROCK, "bedrock"),
    ],
)
def test_non_json_body_is_rejected_with_400_in_the_providers_shape(provider, path, shape):
    status, _, content = post(provider, path, raw=b"{not json")
    body = json.loads(content)
    assert status == 400
    if shape == "openai":
        assert body["error"]["type"] == "invalid_request_error"
    elif shape == "anthropic":
        assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    elif shape == "gemini":
        assert body["error"]["status"] == "INVALID_ARGUMENT" and body["error"]["code"] == 400
    else:
        assert set(body) == {"message"}


@pytest.mark.parametrize(
    "path, name, mode",
    [
        ("/v1/chat/completions", "ChatCompletions", "body"),
        ("/openai/deployments/gpt4/chat/completions", "ChatCompletions", "body"),
        ("/v1/responses", "Responses", "body"),
        ("/v1/messages", "AnthropicMessages", "body"),
        ("/v1/messages/count_tokens", "AnthropicCountTokens", "json"),
        ("/v1/messages/batches", "AnthropicBatches", "json"),
        (
            "/v1/projects/p/locations/l/publishers/anthropic/models/m:rawPredict",
            "AnthropicVertex",
            "body",
        ),
        (
            "/v1/projects/p/locations/l/publishers/anthropic/models/m:streamRawPredict",
            "AnthropicVertex",
            "body",
        ),
        (
            "/v1/projects/p/locations/l/publishers/anthropic/models/count-tokens:rawPredict",
            "VertexCountTokens",
            "json",
        ),
        ("/v1beta/models/gemini-2.5-flash:generateContent", "Gemini", "json"),
        ("/v1beta/models/gemini-2.5-flash:streamGenerateContent", "Gemini", "stream"),
        ("/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse", "BedrockConverse", "json"),
        ("/model/x/converse-stream", "BedrockConverse", "stream"),
        ("/model/anthropic.claude-3-5-haiku-20241022-v1:0/invoke", "BedrockInvoke", "json"),
        (
            "/model/us.anthropic.claude-v1%3A0/invoke-with-response-stream",
            "BedrockInvoke",
            "stream",
        ),
        ("/v2/chat", "CohereChat", "body"),
        ("/model/anthropic.claude-v1%3A0/count-tokens", "BedrockCountTokens", "json"),
        ("/api/chat", "Ollama", "body-streams"),
    ],
)
def test_each_path_is_routed_to_its_format_and_mode(path, name, mode):
    found = formats.route(path)

    assert found is not None
    assert (type(found.format).__name__, found.mode) == (name, mode)


def test_a_path_no_format_serves_is_not_routed():
    assert formats.route("/v1/embeddings") is None
    assert formats.route("/model/x/invoke") is None  # not a Claude model: not Anthropic's body
    assert formats.route("/model/meta.llama3-70b-instruct-v1:0/invoke") is None
    assert formats.route("/model/amazon.nova-pro-v1:0/count-tokens") is None


def test_the_formats_are_one_explicit_list_of_one_instance_each():
    kinds = [type(f).__name__ for f in formats.FORMATS]

    assert sorted(kinds) == [
        "AnthropicBatches",
        "AnthropicCountTokens",
        "AnthropicMessages",
        "AnthropicVertex",
        "BedrockConverse",
        "BedrockCountTokens",
        "BedrockInvoke",
        "ChatCompletions",
        "CohereChat",
        "Gemini",
        "Ollama",
        "Responses",
        "VertexCountTokens",
    ]


# The stand-in and toolnames agree on what a provider rejects (issue 13): toolnames reports an
# error exactly for the requests the stand-in answers with a 400.
AGREEMENT_CASES = {
    "chat: an empty tools array": (CHAT, {"model": "m", "messages": [], "tools": []}),
    "chat: tool_choice none without tools": (
        CHAT,
        {"model": "m", "messages": [], "tool_choice": "none"},
    ),
    "chat: a named choice of a legacy function": (
        CHAT,
        {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "functions": [{"name": "get_weather", "parameters": WEATHER}],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        },
    ),
    "chat: function_call of a legacy function": (
        CHAT,
        {
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "functions": [{"name": "get_weather", "parameters": WEATHER}],
            "function_call": {"name": "get_weather"},
        },
    ),
    "anthropic: any with tools []": (
        ANTHROPIC,
        {**anthropic_request(), "tools": [], "tool_choice": {"type": "any"}},
    ),
    "anthropic: any without tools": (
        ANTHROPIC,
        {
            k: v
            for k, v in {**anthropic_request(), "tool_choice": {"type": "any"}}.items()
            if k != "tools"
        },
    ),
    "anthropic: none without tools": (
        ANTHROPIC,
        {
            k: v
            for k, v in {**anthropic_request(), "tool_choice": {"type": "none"}}.items()
            if k != "tools"
        },
    ),
    "anthropic: any with tools": (
        ANTHROPIC,
        {**anthropic_request(), "tool_choice": {"type": "any"}},
    ),
}


@pytest.mark.parametrize("case", AGREEMENT_CASES)
def test_the_standin_rejects_exactly_what_toolnames_reports_as_an_error(provider, case):
    path, body = AGREEMENT_CASES[case]
    status, _, content = post(provider, path, body)
    api = "openai-chat" if path == CHAT else "anthropic-messages"
    rule = "openai" if path == CHAT else "anthropic"
    errors = [f.code for f in exchange_for(json.dumps(body).encode(), api, rule).errors]
    assert (status == 400) == bool(errors), (status, content, errors)
