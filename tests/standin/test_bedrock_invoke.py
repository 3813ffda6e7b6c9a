"""Claude on Bedrock through InvokeModel in the stand-in (standin.bedrock_invoke): Anthropic's
validator in Bedrock's error envelope, and the stream as base64 chunks in an AWS event stream
with valid CRCs, which the anthropic SDK's AnthropicBedrock client reads.
"""

from __future__ import annotations

import base64
import json

import pytest

from tests.standin.wire import EMPTY
from tests.standin.wire import assert_rejected_like_the_provider
from tests.standin.wire import decode_event_stream
from tests.standin.wire import post

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
INVOKE = f"/model/{MODEL}/invoke"
STREAM = f"/model/{MODEL}/invoke-with-response-stream"
COUNT = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens"


def invoke_request(names=("lookup",), **extra) -> dict:
    return {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": n, "input_schema": EMPTY} for n in names],
        **extra,
    }


@pytest.mark.parametrize(
    "body, message",
    [
        # Anthropic's rule through InvokeModel (anthropics/claude-code #5835, api:bedrock).
        (
            invoke_request(("lookup", "mcp__github__create.issue")),
            "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        ),
        (
            invoke_request(("x" * 129,)),
            "tools.0.custom.name: String should have at most 128 characters",
        ),
        (
            {k: v for k, v in invoke_request().items() if k != "anthropic_version"},
            "[standin-modeled] Malformed input request: #: required key [anthropic_version] not found, "
            "please reformat your input and try again.",
        ),
        (
            invoke_request(stream=True),
            "[standin-modeled] Malformed input request: #: extraneous key [stream] is not permitted, "
            "please reformat your input and try again.",
        ),
    ],
    ids=["pattern", "length", "no-version", "stream-key"],
)
def test_rejects_as_bedrock_does_with_anthropics_texts(provider, body, message):
    assert_rejected_like_the_provider(provider, INVOKE, body, {"message": message})


def test_a_name_of_100_characters_is_accepted_where_converse_allows_64(provider):
    status, _, _ = post(provider, INVOKE, invoke_request(("a" * 100,)))
    assert status == 200


@pytest.mark.parametrize(
    "path",
    [
        INVOKE.replace(":", "%3A"),
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.anthropic.x/invoke",
    ],
)
def test_the_model_id_is_decoded(provider, path):
    status, _, content = post(provider, path, invoke_request())
    assert status == 200 and json.loads(content)["type"] == "message"


def test_a_stream_is_base64_chunks_with_valid_crcs_and_no_ping(provider):
    status, headers, content = post(
        provider, STREAM, invoke_request(), {"x-standin-call": "lookup"}
    )
    assert status == 200
    assert headers["content-type"] == "application/vnd.amazon.eventstream"
    messages = decode_event_stream(content)  # checks both CRCs
    assert {h[":event-type"] for h, _ in messages} == {"chunk"}
    events = [json.loads(base64.b64decode(p["bytes"])) for _, p in messages]
    assert all("p" in p for _, p in messages)
    types = [e["type"] for e in events]
    assert "ping" not in types and types[0] == "message_start" and types[-1] == "message_stop"
    assert "amazon-bedrock-invocationMetrics" in events[-1]
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [(b["type"], b["name"]) for b in starts] == [("tool_use", "lookup")]


def counted(body: dict | bytes) -> dict:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return {"input": {"invokeModel": {"body": base64.b64encode(raw).decode()}}}


def test_count_tokens_validates_the_base64_body_as_invoke_does(provider):
    status, _, content = post(provider, COUNT, counted(invoke_request()))
    assert status == 200 and json.loads(content)["inputTokens"] > 0
    assert_rejected_like_the_provider(
        provider,
        COUNT,
        counted(invoke_request(("lookup", "mcp__github__create.issue"))),
        {"message": "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"},
    )


@pytest.mark.parametrize(
    "body",
    [
        {"input": {"invokeModel": {"body": "not base64!"}}},
        counted(b"[1]"),
        counted(b"not json"),
    ],
    ids=["not-base64", "not-an-object", "not-json"],
)
def test_count_tokens_rejects_a_body_that_is_no_invoke_body(provider, body):
    assert_rejected_like_the_provider(
        provider,
        COUNT,
        body,
        {
            "message": "[standin-modeled] Malformed input request, please reformat your input "
            "and try again."
        },
    )


def test_count_tokens_takes_exactly_one_input_form(provider):
    both = {"input": {**counted(invoke_request())["input"], "converse": {"messages": []}}}
    status, headers, content = post(provider, COUNT, both)
    assert status == 400 and headers["x-amzn-errortype"] == "ValidationException"
    assert "exactly one member" in json.loads(content)["message"]


def test_boto3s_count_tokens_reads_its_answer(provider):
    boto3 = pytest.importorskip("boto3")
    from tests.testkit.sigv4 import KEY
    from tests.testkit.sigv4 import SECRET

    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=provider.url,
        region_name="us-east-1",
        aws_access_key_id=KEY,
        aws_secret_access_key=SECRET,
    )
    answer = client.count_tokens(
        modelId="anthropic.claude-sonnet-4-5-20250929-v1:0",
        input={"invokeModel": {"body": json.dumps(invoke_request())}},
    )
    assert answer["inputTokens"] > 0


@pytest.mark.needs_sdk
def test_the_anthropic_bedrock_client_reads_its_answers(provider):
    import anthropic

    client = anthropic.AnthropicBedrock(
        api_key="test-bedrock-key", aws_region="us-east-1", base_url=provider.url, max_retries=0
    )
    tools = [{"name": "lookup", "input_schema": EMPTY}]
    ask = [{"role": "user", "content": "hi"}]
    message = client.messages.create(
        model=MODEL, max_tokens=100, messages=ask, tools=tools, tool_choice={"type": "any"}
    )
    assert [(b.type, b.name) for b in message.content] == [("tool_use", "lookup")]
    with client.messages.stream(
        model=MODEL, max_tokens=100, messages=ask, tools=tools, tool_choice={"type": "any"}
    ) as stream:
        final = stream.get_final_message()
    assert [(b.type, b.name) for b in final.content] == [("tool_use", "lookup")]
    with pytest.raises(anthropic.BadRequestError, match="should match pattern"):
        client.messages.create(
            model=MODEL,
            max_tokens=100,
            messages=ask,
            tools=[{"name": "a.b", "input_schema": EMPTY}],
        )
