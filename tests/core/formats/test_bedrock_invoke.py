"""Claude on Bedrock through InvokeModel (formats/bedrock_invoke.py): its paths, its rule
(Anthropic's, not Converse's), the Anthropic body read, Bedrock's error envelope, and the
base64 chunks of its stream read and given back.

Bodies come from tests/fixtures/sdk/bedrock-invoke-*.json, captured from anthropic 2.14.0's
AnthropicBedrock client; streams are built with the test kit's own framing (aws_chunk).
"""

from __future__ import annotations

import json
import re

import pytest

from tests.testkit import aws_chunk
from tests.testkit import aws_event
from tests.testkit import every_split
from tests.testkit import exchange_for
from tests.testkit import sdk_fixture
from toolnames_core import codes
from toolnames_core import rejections
from toolnames_core import streams
from toolnames_core.endpoints import choose_rule
from toolnames_core.formats import FORMATS
from toolnames_core.formats import anthropic_messages
from toolnames_core.formats import bedrock_converse
from toolnames_core.formats import bedrock_invoke
from toolnames_core.formats import format_for
from toolnames_core.framings import AWS_EVENT_STREAM_BASE64
from toolnames_core.framings import AwsEventStreamFramer
from toolnames_core.readers import DEFAULT

API = "bedrock-invoke"
HOST = "bedrock-runtime.us-east-1.amazonaws.com"
CULPRIT = "mcp__github__create.issue"


def body(*names: str, **extra) -> dict:
    return {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": n, "input_schema": {"type": "object"}} for n in names],
        **extra,
    }


def analyse(value: dict, fix: bool = False):
    return exchange_for(json.dumps(value).encode(), API, "anthropic", fix=fix)


def test_registered_with_the_anthropic_reading_and_the_base64_event_stream():
    fmt = FORMATS[API]
    assert fmt is bedrock_invoke.FORMAT
    assert fmt.read_calls is anthropic_messages.read_calls
    assert fmt.stream_collector is anthropic_messages.StreamCollector
    assert fmt.framing is AWS_EVENT_STREAM_BASE64
    assert fmt.block_response is bedrock_converse.block_response


@pytest.mark.parametrize(
    "path",
    [
        # anthropic SDK: quote(model, safe=":;"); boto3: ':' -> %3A; ARNs with '/' raw or %2F.
        "/model/anthropic.claude-3-5-haiku-20241022-v1:0/invoke",
        "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke-with-response-stream",
        "/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3a0/invoke",
        "/model/arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-v1:0/invoke",
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Aapplication-inference-profile%2Fabc/invoke",
        "/gateway/bedrock/model/global.anthropic.claude-opus-4-6-v1/invoke-with-response-stream?x=1",
    ],
)
def test_every_spelling_of_a_claude_model_id_reaches_invoke(path):
    assert format_for("POST", path) is bedrock_invoke.FORMAT


def test_a_converse_arn_with_a_raw_slash_is_converse_still():
    # Formats match the decoded path now: Converse's id is matched greedily too.
    path = (
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.anthropic.x/converse"
    )
    assert format_for("POST", path) is bedrock_converse.FORMAT
    assert format_for("POST", path.replace("%2F", "/")) is bedrock_converse.FORMAT


def test_the_rule_is_anthropics_on_bedrocks_host_while_converse_keeps_bedrocks():
    assert choose_rule(bedrock_invoke.FORMAT, HOST).id == "anthropic"
    assert choose_rule(bedrock_converse.FORMAT, HOST).id == "bedrock"
    assert choose_rule(bedrock_invoke.FORMAT, "localhost").id == "anthropic"


@pytest.mark.parametrize(
    "name",
    [
        "bedrock-invoke-tools",
        "bedrock-invoke-tool-choice-tool",
        "bedrock-invoke-history",
        "bedrock-invoke-stream",
    ],
)
def test_sdk_bodies_read_cleanly(name):
    case = sdk_fixture(name)
    assert format_for("POST", case["path"]) is bedrock_invoke.FORMAT
    result = exchange_for(case["body_text"].encode(), API, "anthropic")
    assert result.findings == []
    assert [(t.name, t.path) for t in result.view.tools] == [
        ("get_weather", "tools[0].name"),
        ("search_knowledge_base", "tools[1].name"),
    ]
    assert result.view.api == API


def test_a_name_of_100_characters_passes_where_converse_would_refuse_it_and_129_does_not():
    assert analyse(body("a" * 100)).findings == []
    found = analyse(body("a" * 129)).findings
    assert [(f.code, f.path) for f in found] == [(codes.NAME_TOO_LONG, "tools[0].name")]


def test_an_mcp_style_name_with_a_dot_is_named_and_fix_mode_gives_it_an_alias():
    result = analyse(body("ok", CULPRIT))
    assert [(f.code, f.path) for f in result.findings] == [
        (codes.NAME_INVALID_CHARS, "tools[1].name")
    ]
    assert CULPRIT in result.findings[0].message
    fixed = analyse(body("ok", CULPRIT), fix=True)
    sent = json.loads(fixed.new_body)
    alias = sent["tools"][1]["name"]
    assert alias != CULPRIT and re.fullmatch(r"[a-zA-Z0-9_-]{1,128}", alias)
    assert sent["anthropic_version"] == "bedrock-2023-05-31"
    assert "model" not in sent and "stream" not in sent


def test_a_body_that_is_not_anthropics_is_not_read_as_it():
    # An ARN may name another model: no anthropic_version, another shape.
    view = bedrock_invoke.read_request(
        {"tools": [{"type": "function", "function": {"name": "a.b"}}]}
    )
    assert view.tools == [] and view.problems == [] and not view.tools_given


def test_the_block_answer_is_bedrocks_validation_error():
    result = analyse(body(CULPRIT))
    answer = result.block_response()
    assert answer.status == 400
    assert answer.headers["x-amzn-ErrorType"].split(":")[0] == "ValidationException"
    assert CULPRIT in json.loads(answer.body)["message"]


def test_bedrocks_error_with_anthropics_validator_text_is_read_as_the_verdict():
    view = bedrock_invoke.read_request(body("ok", CULPRIT))
    # anthropics/claude-code #5835 (api:bedrock): the Anthropic validator's text, 0-based.
    text = "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
    found = rejections.read_rejections(
        bedrock_invoke.FORMAT, 400, json.dumps({"message": text}).encode(), view, {}
    )
    assert [(r.path, r.name, r.tied) for r in found] == [("tools[1].name", CULPRIT, True)]


def stream(name: str) -> bytes:
    events = [
        {"type": "message_start", "message": {"id": "m", "content": []}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": name, "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{}"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 1}},
    ]
    return b"".join(aws_chunk(e, "p" * (3 + i)) for i, e in enumerate(events))


def test_calls_in_a_stream_are_read_however_its_frames_are_split():
    raw = stream("get_weather")
    for chunks in every_split(raw):
        tap = streams.StreamTap(bedrock_invoke.FORMAT)
        assert b"".join(tap(c) for c in chunks) + tap(b"") == raw
        assert [(c.name, c.path) for c in tap.calls()] == [
            ("get_weather", "events[1].content_block.name")
        ]
        assert tap.problem() is None


def test_fix_mode_gives_the_name_back_inside_the_base64_at_every_split():
    fixed = analyse(body("ok", CULPRIT), fix=True)
    alias = json.loads(fixed.new_body)["tools"][1]["name"]
    raw = stream(alias)
    outs = set()
    for chunks in every_split(raw):
        tap = fixed.stream_tap()
        outs.add(b"".join(tap(c) for c in chunks) + tap(b""))
    (out,) = outs
    framer = AwsEventStreamFramer()  # checks both CRCs
    events = [AWS_EVENT_STREAM_BASE64.event(f, DEFAULT, None) for f in framer.feed(out)]
    assert not framer.broken
    assert events[1]["content_block"]["name"] == CULPRIT


def test_a_chunk_that_is_not_base64_is_said_and_goes_on_as_it_came():
    raw = stream("get_weather")
    bad = aws_event("chunk", {"bytes": "%%%"})
    fixed = analyse(body("ok", CULPRIT), fix=True)
    tap = fixed.stream_tap()
    assert tap(bad + raw) + tap(b"") == bad + raw
    problem = tap.problem()
    assert problem is not None and problem.code == codes.RESPONSE_UNREADABLE
    assert "not base64" in problem.message


PATTERN_TEXT = "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"


@pytest.mark.parametrize("kind", ["validationException", "throttlingException"])
def test_an_exception_inside_the_200_stream_is_the_providers_verdict_if_it_is_a_validation(
    kind,
):
    exchange = analyse(body("ok", CULPRIT))
    first_event = {"type": "message_start", "message": {"id": "m", "content": []}}
    raw = aws_chunk(first_event) + aws_event(
        kind, {"message": PATTERN_TEXT}, message_type="exception"
    )
    tap = exchange.stream_tap()
    assert tap(raw) + tap(b"") == raw
    found = exchange.check_stream(200, tap, True)
    rejected = [(f.code, f.path) for f in found if f.code == codes.PROVIDER_REJECTED]
    if kind == "validationException":
        assert rejected == [(codes.PROVIDER_REJECTED, "tools[1].name")]
        assert [(r.path, r.name) for r in exchange.rejections] == [("tools[1].name", CULPRIT)]
        assert rejected[0] in [(f.code, f.path) for f in exchange.findings]
    else:
        # Throttling says nothing about a name.
        assert rejected == [] and exchange.rejections == []
