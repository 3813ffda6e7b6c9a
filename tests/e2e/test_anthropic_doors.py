"""
Anthropic's other doors end to end: Claude on Vertex AI (``AnthropicVertex``: ``:rawPredict``,
``:streamRawPredict``, ``count-tokens:rawPredict``) and Anthropic's token counting
(``/v1/messages/count_tokens``), through a real mitmdump in reverse mode in front of the
stand-in provider, with the real ``anthropic`` SDK. Observe names the culprit and the provider
refuses it; block answers as the provider would, so the SDK raises its usual error; fix sends
only names the provider accepts. Two-turn fix runs with AnthropicVertex are in test_renaming.py.
"""

import json

import pytest

from tests.testkit import CITY
from tests.testkit import PROMPT
from tests.testkit import WHOLE_AND_STREAMED
from tests.testkit import annotations
from tests.testkit import anthropic_client
from tests.testkit import vertex_client

DOTTED = "github.create_issue"
PROVIDER_SAYS = "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"


def create(client, stream: bool):
    kwargs = {
        "model": "claude-sonnet-4-5@20250929",
        "max_tokens": 64,
        "messages": PROMPT,
        "tools": [{"name": DOTTED, "input_schema": CITY}],
        "tool_choice": {"type": "tool", "name": DOTTED},
    }
    if not stream:
        return client.messages.create(**kwargs)
    with client.messages.stream(**kwargs) as events:
        return events.get_final_message()


def count(client):
    return client.messages.count_tokens(
        model="claude-sonnet-4-5@20250929",
        messages=PROMPT,
        tools=[{"name": DOTTED, "input_schema": CITY}],
    )


@pytest.mark.needs_sdk
@WHOLE_AND_STREAMED
def test_vertex_observe_names_the_culprit_and_the_provider_refuses_it(
    mitmdump, mitmdump_binary, standin, stream
):
    import anthropic

    proxy = mitmdump(binary=mitmdump_binary)
    with pytest.raises(anthropic.BadRequestError) as excinfo:
        create(vertex_client(proxy.url), stream)

    assert excinfo.value.body["error"]["message"] == PROVIDER_SAYS
    (sent,) = standin.requests
    assert sent["path"].endswith(
        "/publishers/anthropic/models/claude-sonnet-4-5@20250929:"
        + ("streamRawPredict" if stream else "rawPredict")
    )
    proxy.wait_for_log("toolnames error")
    line = annotations(proxy.log_text())[0]
    assert line.startswith(
        "toolnames error: name-invalid-chars: tools[0].name 'github.create_issue'"
    )
    # The provider's verdict is read: it refused the name toolnames named.
    assert "tools[0].name" in line


@pytest.mark.needs_sdk
@WHOLE_AND_STREAMED
def test_vertex_block_answers_as_the_provider_and_the_sdk_raises_bad_request(
    mitmdump, mitmdump_binary, standin, stream
):
    import anthropic

    proxy = mitmdump("--set", "toolnames_mode=block", binary=mitmdump_binary)
    with pytest.raises(anthropic.BadRequestError) as excinfo:
        create(vertex_client(proxy.url), stream)

    assert standin.requests == []
    assert excinfo.value.status_code == 400
    assert excinfo.value.body["type"] == "error"
    assert excinfo.value.body["error"]["type"] == "invalid_request_error"
    assert excinfo.value.body["error"]["message"].startswith("toolnames: tools[0].name ")
    proxy.wait_for_log("toolnames blocked")


@pytest.mark.needs_sdk
@pytest.mark.parametrize("client", [vertex_client, anthropic_client], ids=["vertex", "anthropic"])
def test_token_counting_is_checked_like_messages(mitmdump, mitmdump_binary, standin, client):
    import anthropic

    proxy = mitmdump(binary=mitmdump_binary)
    with pytest.raises(anthropic.BadRequestError) as excinfo:
        count(client(proxy.url))
    assert excinfo.value.body["error"]["message"] == PROVIDER_SAYS
    proxy.wait_for_log("toolnames error")
    assert annotations(proxy.log_text())[0].startswith("toolnames error: name-invalid-chars: ")

    standin.reset()
    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)
    counted = count(client(proxy.url))
    assert counted.input_tokens > 0
    (sent,) = standin.requests
    assert DOTTED.encode() not in sent["body"]
    assert sent["path"].endswith(
        "count-tokens:rawPredict" if client is vertex_client else "/v1/messages/count_tokens"
    )
    proxy.wait_for_log("toolnames fixed")


def create_batch(client):
    params = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": PROMPT,
        "tools": [{"name": DOTTED, "input_schema": CITY}],
    }
    return client.messages.batches.create(
        requests=[
            {"custom_id": "first", "params": params},
            {
                "custom_id": "second",
                "params": {**params, "tool_choice": {"type": "tool", "name": DOTTED}},
            },
        ]
    )


@pytest.mark.needs_sdk
def test_a_batch_is_checked_request_by_request(mitmdump, mitmdump_binary, standin):
    import anthropic

    # Observe: Anthropic takes the batch (it validates each params later); toolnames names
    # the culprit, in the request that holds it, now.
    proxy = mitmdump(binary=mitmdump_binary)
    assert create_batch(anthropic_client(proxy.url)).processing_status == "in_progress"
    proxy.wait_for_log("toolnames error")
    line = annotations(proxy.log_text())[0]
    assert "requests[0].params.tools[0].name 'github.create_issue'" in line
    assert "rule-disagrees" not in proxy.log_text()

    # Fix: every params is sent with the alias, the choice included.
    standin.reset()
    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)
    create_batch(anthropic_client(proxy.url))
    (sent,) = standin.requests
    assert DOTTED.encode() not in sent["body"]
    requests = json.loads(sent["body"])["requests"]
    alias = requests[0]["params"]["tools"][0]["name"]
    assert requests[1]["params"]["tools"][0]["name"] == alias
    assert requests[1]["params"]["tool_choice"]["name"] == alias
    proxy.wait_for_log("toolnames fixed")

    # Block: the SDK raises its usual error and nothing is sent.
    standin.reset()
    proxy = mitmdump("--set", "toolnames_mode=block", binary=mitmdump_binary)
    with pytest.raises(anthropic.BadRequestError) as excinfo:
        create_batch(anthropic_client(proxy.url))
    assert standin.requests == []
    assert excinfo.value.body["error"]["message"].startswith(
        "toolnames: requests[0].params.tools[0].name"
    )
