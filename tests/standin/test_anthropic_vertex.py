"""Claude on Vertex AI and token counting in the stand-in (standin.anthropic_vertex): the
paths it serves, Anthropic's validation and error texts there, the SDK's AnthropicVertex
client against it.
"""

from __future__ import annotations

import json

import pytest

from tests.standin.wire import EMPTY
from tests.standin.wire import anthropic_error
from tests.standin.wire import anthropic_request
from tests.standin.wire import assert_rejected_like_the_provider
from tests.standin.wire import post
from tests.standin.wire import sse

BASE = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
RAW = BASE + "claude-sonnet-4-5@20250929:rawPredict"
STREAM = BASE + "claude-sonnet-4-5@20250929:streamRawPredict"
VERTEX_COUNT = BASE + "count-tokens:rawPredict"
COUNT = "/v1/messages/count_tokens"
PATTERN = "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"


def vertex_body(**kwargs) -> dict:
    body = anthropic_request(**kwargs)
    body.pop("model")
    return {**body, "anthropic_version": "vertex-2023-10-16"}


@pytest.mark.parametrize("path", [RAW, STREAM])
def test_vertex_validates_tool_names_as_anthropic_does(provider, path):
    body = vertex_body(tools={"get_weather": EMPTY, "mcp:search": EMPTY})
    assert_rejected_like_the_provider(provider, path, body, anthropic_error(PATTERN))


def test_vertex_needs_the_anthropic_version_in_the_body(provider):
    body = {k: v for k, v in vertex_body().items() if k != "anthropic_version"}
    status, _, content = post(provider, RAW, body)
    assert status == 400
    assert "anthropic_version" in json.loads(content)["error"]["message"]


def test_vertex_answers_as_anthropic_with_the_model_of_the_path(provider):
    status, _, content = post(provider, RAW, vertex_body(), {"x-standin-call": "get_weather"})
    message = json.loads(content)
    assert status == 200
    assert message["model"] == "claude-sonnet-4-5@20250929"
    assert [b["name"] for b in message["content"]] == ["get_weather"]


def test_vertex_streams_anthropic_sse_when_the_body_asks(provider):
    body = {**vertex_body(), "stream": True}
    status, headers, content = post(provider, STREAM, body, {"x-standin-call": "get_weather"})
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    kinds = [event for event, _ in sse(content)]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"


def test_other_publishers_and_verbs_are_not_served(provider):
    for path in (
        "/v1/projects/p/locations/us-east5/publishers/mistralai/models/m:rawPredict",
        BASE + "claude-x:predict",
    ):
        status, _, _ = post(provider, path, vertex_body())
        assert status == 404


@pytest.mark.parametrize("path", [COUNT, VERTEX_COUNT])
def test_token_counting_validates_tools_as_messages_does(provider, path):
    body = anthropic_request(tools={"get_weather": EMPTY, "mcp:search": EMPTY})
    if path == VERTEX_COUNT:
        body["anthropic_version"] = "vertex-2023-10-16"
    assert_rejected_like_the_provider(provider, path, body, anthropic_error(PATTERN))


@pytest.mark.parametrize("path", [COUNT, VERTEX_COUNT])
def test_token_counting_answers_input_tokens_and_calls_nothing(provider, path):
    body = anthropic_request()
    if path == VERTEX_COUNT:
        body["anthropic_version"] = "vertex-2023-10-16"
    status, _, content = post(provider, path, body, {"x-standin-call": "get_weather"})
    answer = json.loads(content)
    assert status == 200 and list(answer) == ["input_tokens"] and answer["input_tokens"] > 0


def test_token_counting_needs_the_model(provider):
    body = {k: v for k, v in anthropic_request().items() if k != "model"}
    assert_rejected_like_the_provider(
        provider, COUNT, body, anthropic_error("model: Field required")
    )


@pytest.mark.needs_sdk
def test_the_sdks_vertex_client_runs_against_it(provider):
    import anthropic

    client = anthropic.AnthropicVertex(
        base_url=provider.url + "/v1",
        region="us-east5",
        project_id="p",
        access_token="ya29.test",
        max_retries=0,
    )
    tools = [{"name": "get_weather", "input_schema": EMPTY}]
    message = client.messages.create(
        model="claude-sonnet-4-5@20250929",
        max_tokens=16,
        messages=[{"role": "user", "content": "hi"}],
        tools=tools,
        tool_choice={"type": "tool", "name": "get_weather"},
    )
    assert [b.name for b in message.content] == ["get_weather"]
    counted = client.messages.count_tokens(
        model="claude-sonnet-4-5@20250929",
        messages=[{"role": "user", "content": "hi"}],
        tools=tools,
    )
    assert counted.input_tokens > 0
    assert provider.requests[-1]["path"].endswith("count-tokens:rawPredict")
