"""Bedrock Converse in the stand-in (standin.bedrock_converse): the provider's error texts, the
AWS event stream with valid CRCs.
"""

from __future__ import annotations

import json

import pytest

from tests.standin.wire import BEDROCK
from tests.standin.wire import BEDROCK_LENGTH
from tests.standin.wire import BEDROCK_PATTERN
from tests.standin.wire import BEDROCK_STREAM
from tests.standin.wire import EMPTY
from tests.standin.wire import assert_rejected_like_the_provider
from tests.standin.wire import bedrock_request
from tests.standin.wire import decode_event_stream
from tests.standin.wire import post

VALIDATION_CASES = {
    # §7 observed texts; AWS paths are 1-based
    "bedrock-tool-name-pattern": (
        BEDROCK,
        bedrock_request(tools={"lookup": EMPTY, "Complete Session": EMPTY}),
        {
            "message": f"1 validation error detected: Value 'Complete Session' at 'toolConfig.tools.2.member.toolSpec.name' "
            f"{BEDROCK_PATTERN}"
        },
    ),
    "bedrock-tool-name-too-long-and-pattern": (
        BEDROCK,
        bedrock_request(tools={"x." * 33: EMPTY}),
        {
            "message": f"2 validation errors detected: Value '{'x.' * 33}' at 'toolConfig.tools.1.member.toolSpec.name' "
            f"{BEDROCK_LENGTH}; Value '{'x.' * 33}' at 'toolConfig.tools.1.member.toolSpec.name' "
            f"{BEDROCK_PATTERN}"
        },
    ),
    "bedrock-history-name": (
        BEDROCK,
        {
            **bedrock_request(),
            "messages": [
                {"role": "user", "content": [{"text": "hi"}]},
                {
                    "role": "assistant",
                    "content": [
                        {"text": "x"},
                        {"toolUse": {"toolUseId": "t", "name": "a.b", "input": {}}},
                    ],
                },
            ],
        },
        {
            "message": f"1 validation error detected: Value at 'messages.2.member.content.2.member.toolUse.name' "
            f"{BEDROCK_PATTERN}"
        },
    ),
    "bedrock-tool-blocks-without-tool-config": (
        BEDROCK,
        {"messages": bedrock_request(tool_result=True)["messages"]},
        {
            "message": "The toolConfig field must be defined when using toolUse and toolResult content blocks."
        },
    ),
    "bedrock-empty-tools": (
        BEDROCK,
        {"messages": [], "toolConfig": {"tools": []}},
        {
            "message": "1 validation error detected: Value at 'toolConfig.tools' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1"
        },
    ),
    "bedrock-named-choice-not-in-tools": (
        BEDROCK,
        {
            "messages": [],
            "toolConfig": {
                **bedrock_request()["toolConfig"],
                "toolChoice": {"tool": {"name": "nope"}},
            },
        },
        {
            "message": "[standin-invented] toolConfig.toolChoice.tool.name 'nope' does not match any tool in toolConfig.tools."
        },
    ),
}


@pytest.mark.parametrize("case", VALIDATION_CASES)
def test_invalid_request_gets_the_providers_error(provider, case):
    assert_rejected_like_the_provider(provider, *VALIDATION_CASES[case])


@pytest.mark.parametrize("header, expected", [("get_weather", "tool_use"), (None, "end_turn")])
def test_bedrock_stream_is_aws_event_stream_with_valid_crcs(provider, header, expected):
    headers = {"x-standin-call": header} if header else {}
    status, response_headers, content = post(provider, BEDROCK_STREAM, bedrock_request(), headers)
    assert (
        status == 200 and response_headers["content-type"] == "application/vnd.amazon.eventstream"
    )
    messages = decode_event_stream(content)
    for message_headers, _ in messages:
        assert message_headers[":content-type"] == "application/json"
        assert message_headers[":message-type"] == "event"
    kinds = [h[":event-type"] for h, _ in messages]
    payloads = [p for _, p in messages]
    if expected == "tool_use":
        assert kinds == [
            "messageStart",
            "contentBlockStart",
            "contentBlockDelta",
            "contentBlockDelta",
            "contentBlockStop",
            "messageStop",
            "metadata",
        ]
        assert payloads[1] == {
            "contentBlockIndex": 0,
            "start": {
                "toolUse": {
                    "toolUseId": payloads[1]["start"]["toolUse"]["toolUseId"],
                    "name": "get_weather",
                }
            },
        }
        partial = "".join(p["delta"]["toolUse"]["input"] for p in payloads[2:4])
        assert json.loads(partial) == {"city": "Paris"}
    else:
        assert kinds == [
            "messageStart",
            "contentBlockDelta",
            "contentBlockDelta",
            "contentBlockStop",
            "messageStop",
            "metadata",
        ]
        assert "".join(p["delta"]["text"] for p in payloads[1:3]) == "hello"
    assert payloads[0] == {"role": "assistant"}
    assert payloads[-2] == {"stopReason": expected}
    assert payloads[-1]["usage"]["totalTokens"] > 0
