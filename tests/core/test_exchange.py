"""The exchange: each body is parsed, or scanned, once per exchange, only a body that can hold
tool names or calls is parsed at all, and an answer is judged once, against its request."""

import json

import pytest

from tests.testkit import RESPONSES_DIR
from tests.testkit import exchange_for
from tests.testkit import judge
from toolnames_core import Exchange
from toolnames_core import bodies
from toolnames_core import inspect_exchange
from toolnames_core.formats import FORMATS

MASTRA_BODY = json.dumps(
    {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "search_web"}}],
        "tool_choice": {"type": "function", "function": {"name": "search.web"}},
    }
).encode()
TOOLS_BODY = json.dumps(
    {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "search_web"}}],
        "tool_choice": {"type": "function", "function": {"name": "search_web"}},
    }
).encode()
# Large enough for the verdict to be remembered rather than found again by a second scan.
PROSE_BODY = json.dumps({"messages": [{"role": "user", "content": "word " * 10_000}]}).encode()


def fresh(body: bytes) -> bytes:
    """Equal bytes in a new object (bytes(b) is b itself), so counts go by this body alone."""
    return bytes(bytearray(body))


CALL_ANSWER = json.dumps(
    {"choices": [{"message": {"tool_calls": [{"function": {"name": "search_web"}}]}}]}
).encode()
NO_CALLS_ANSWER = json.dumps({"choices": [{"message": {"content": "hi"}}]}).encode()


def test_a_body_with_tools_is_parsed_once_for_its_request_and_its_response(counted):
    body = fresh(TOOLS_BODY)
    exchange = Exchange("openai-chat", "openai")
    assert not bodies.nothing_to_check(body)
    exchange.check_request(body, scanned=True)
    findings = exchange.check_response(200, "application/json", NO_CALLS_ANSWER)
    assert [f.code for f in findings] == ["response-ignored-choice"]
    assert counted["loads"].count(body) == 1
    assert counted["scans"].count(body) == 1


def test_a_large_body_without_tools_is_scanned_once_and_never_parsed(counted):
    body = fresh(PROSE_BODY)
    exchange = Exchange("openai-chat", "openai")
    exchange.check_request(body)
    assert exchange.check_response(200, "application/json", NO_CALLS_ANSWER) == []
    assert counted["scans"].count(body) == 1
    assert counted["loads"].count(body) == 0


def test_a_body_fix_mode_rewrote_is_never_read_again(counted):
    body = fresh(MASTRA_BODY)
    exchange = Exchange("openai-chat", "openai")
    exchange.check_request(body, fix=True)
    assert exchange.new_body is not None
    # Judged against the request as the provider was sent it: the fixed choice is obeyed.
    assert exchange.check_response(200, "application/json", CALL_ANSWER) == []
    assert counted["loads"].count(body) == 1
    assert counted["loads"].count(exchange.new_body) == 0


def test_an_answer_is_judged_once():
    exchange = exchange_for(TOOLS_BODY, "openai-chat", "openai")
    assert exchange.check_response(200, "application/json", NO_CALLS_ANSWER)
    assert exchange.check_response(200, "application/json", NO_CALLS_ANSWER) == []
    assert [f.code for f in exchange.findings] == ["response-ignored-choice"]


@pytest.mark.parametrize("status", [None, 400, 429, 500])
def test_an_answer_that_is_not_a_success_is_not_judged(status):
    exchange = exchange_for(TOOLS_BODY, "openai-chat", "openai")
    assert exchange.check_response(status, "application/json", NO_CALLS_ANSWER) == []


def test_the_answer_to_a_blocked_request_is_toolnames_own_and_not_judged():
    body = TOOLS_BODY.replace(
        b'"function": {"name": "search_web"}}}', b'"function": {"name": "x"}}}'
    )
    exchange = exchange_for(body, "openai-chat", "openai")
    status, headers, answer = exchange.block_response()
    assert status == 400 and exchange.blocked
    assert exchange.check_response(status, headers["content-type"], answer) == []


TOOL_KEYS = [
    "tools", "tool_choice", "functions", "function_call", "tool_calls", "custom_tool_call",
    "additional_tools", "toolConfig", "tool_config", "functionCall", "functionResponse",
    "function_response", "toolUse", "toolResult", "tool_use", "tool_result",
    "function_call_output",
]  # fmt: skip


@pytest.mark.parametrize("key", TOOL_KEYS)
def test_a_body_with_any_tool_key_anywhere_is_read(key):
    # Behind strings that start like a tool key but are not one.
    prose = {"content": ["toolbox", "tool", "functional", "function", "custom_tool_calls"]}
    body = json.dumps({"messages": [prose, {"nested": {key: None}}]}).encode()
    assert not bodies.nothing_to_check(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"messages": [{"role": "user", "content": "tool"}]}',
        b'{"messages": [{"content": "toolbox functions"}], "toolsy": 1, "function": 2}',
        b'{"content": "\\"tools\\" in a string"}',
    ],
)
def test_a_body_without_tool_keys_has_nothing_to_check(body):
    assert bodies.nothing_to_check(body)


# --- the response side -----------------------------------------------------------------------

TEXT_ANSWER = json.dumps(
    {
        "object": "chat.completion",
        "choices": [{"message": {"role": "assistant", "content": "a tool, a function"}}],
    }
).encode()


def test_an_answer_without_tool_keys_is_never_parsed(counted):
    answer = fresh(TEXT_ANSWER)
    assert bodies.read_response_calls("openai-chat", "application/json", answer) == ([], None)
    assert counted["loads"].count(answer) == 0


def api_of(fixture: str) -> str:
    return max((api for api in FORMATS if fixture.startswith(api)), key=len)


@pytest.mark.parametrize("name", sorted(p.name for p in RESPONSES_DIR.glob("*.json")))
def test_every_format_reads_all_the_calls_of_an_answer_that_is_not_streamed(name):
    # The scan in front of the parse must know every key a format's calls sit under.
    content = (RESPONSES_DIR / name).read_bytes()
    api = api_of(name)
    calls, problem = bodies.read_response_calls(api, "application/json", content)
    parsed = FORMATS[api].read_calls(json.loads(content))
    assert problem is None
    assert calls
    assert [(c.name, c.path) for c in calls] == [(c.name, c.path) for c in parsed]


# The least each format's answer can be while still holding a call: no other tool key in it.
LEAST_CALLS = [
    ("openai-chat", {"choices": [{"message": {"tool_calls": [{"function": {"name": "x"}}]}}]}),
    ("openai-chat", {"choices": [{"message": {"function_call": {"name": "x"}}}]}),
    ("openai-responses", {"output": [{"type": "function_call", "name": "x"}]}),
    ("openai-responses", {"output": [{"type": "custom_tool_call", "name": "x"}]}),
    ("anthropic-messages", {"content": [{"type": "tool_use", "name": "x"}]}),
    ("gemini", {"candidates": [{"content": {"parts": [{"functionCall": {"name": "x"}}]}}]}),
    ("gemini", {"candidates": [{"content": {"parts": [{"function_call": {"name": "x"}}]}}]}),
    ("bedrock-converse", {"output": {"message": {"content": [{"toolUse": {"name": "x"}}]}}}),
]


@pytest.mark.parametrize("api,answer", LEAST_CALLS)
def test_the_scan_before_the_parse_knows_the_key_of_every_call(api, answer):
    calls, _ = bodies.read_response_calls(api, "application/json", json.dumps(answer).encode())
    assert [c.name for c in calls] == ["x"]


@pytest.mark.parametrize("request_content", [None, b"", b'{"tools": [ broken', b"[1, 2]"])
def test_calls_answering_a_request_that_could_not_be_read_are_not_judged(request_content):
    # What the request offered is unknown: no call can be said to be unoffered.
    calls, _ = bodies.read_response_calls("openai-chat", "application/json", CALL_ANSWER)
    assert judge(request_content, "openai-chat", calls, complete=True) == []


def test_calls_answering_a_request_without_tools_are_unoffered():
    calls, _ = bodies.read_response_calls("openai-chat", "application/json", CALL_ANSWER)
    request = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    findings = judge(request, "openai-chat", calls, complete=True)
    assert [f.code for f in findings] == ["response-unknown-tool"]


@pytest.mark.parametrize("problem", [None, "its content-encoding could not be decoded"])
def test_a_recording_whose_request_was_not_read_has_its_answer_left_unjudged(problem):
    report = inspect_exchange(
        "POST",
        "api.openai.com",
        "/v1/chat/completions",
        None if problem is None else b"\x1f\x8b not really gzip",
        200,
        "application/json",
        CALL_ANSWER,
        request_problem=problem,
    )
    assert [f.code for f in report.findings] == ["request-unreadable"]
