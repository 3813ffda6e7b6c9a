"""Reading bodies (bodies.py): the tool-key scan that spares most bodies a parse, and what
every format's answer is read for."""

import gc
import json

import pytest

from tests.testkit import RESPONSES_DIR
from tests.testkit import response_api
from toolnames_core import bodies
from toolnames_core import readers
from toolnames_core.formats import FORMATS


@pytest.mark.parametrize(
    "content,why",
    [
        (b"not json", "the body is not JSON"),
        (b"[1, 2]", "the body is an array, not a JSON object"),
        (b'"text"', "the body is a string, not a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_a_body_that_is_not_a_json_object_is_unreadable_and_says_why(content, why):
    view, problem = bodies.read_request(content, FORMATS["openai-chat"])
    assert view is None
    assert problem.code == "request-unreadable" and why in problem.message


def test_a_body_without_tools_is_neither_a_view_nor_a_problem():
    assert bodies.read_request(b'{"messages": []}', FORMATS["openai-chat"]) == (None, None)


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
    answer = bytes(bytearray(TEXT_ANSWER))  # its own object, so the count is of this body
    assert bodies.read_response_calls(FORMATS["openai-chat"], "application/json", answer) == (
        [],
        None,
    )
    assert counted["loads"].count(answer) == 0


@pytest.mark.parametrize("name", sorted(p.name for p in RESPONSES_DIR.glob("*.json")))
def test_every_format_reads_all_the_calls_of_an_answer_that_is_not_streamed(name):
    # The scan in front of the parse must know every key a format's calls sit under.
    content = (RESPONSES_DIR / name).read_bytes()
    api = response_api(name)
    calls, problem = bodies.read_response_calls(FORMATS[api], "application/json", content)
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
    calls, _ = bodies.read_response_calls(
        FORMATS[api], "application/json", json.dumps(answer).encode()
    )
    assert [c.name for c in calls] == ["x"]


def _conversation(turns: int) -> bytes:
    call = {"type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    messages = [
        message
        for i in range(turns)
        for message in (
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", **call}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "answer"},
        )
    ]
    tools = [{"type": "function", "function": {"name": "lookup"}}]
    return json.dumps({"model": "m", "messages": messages, "tools": tools}).encode()


@pytest.mark.parametrize("reader", readers.READERS, ids=lambda r: r.name)
def test_the_collector_waits_while_a_request_is_read(reader):
    # Thousands of containers that die when the read returns: collecting them midway costs
    # more than the parse (bodies.read_request says why), so the collector waits.
    body = _conversation(3000)
    runs = []

    def count(phase, info):
        if phase == "start":
            runs.append(info["generation"])

    gc.callbacks.append(count)
    try:
        view, problem = bodies.read_request(body, FORMATS["openai-chat"], reader=reader)
    finally:
        gc.callbacks.remove(count)
    assert problem is None and len(view.history) == 3000
    # Reading it unpaused runs the collector a dozen times; paused, at most once, when the
    # first container is made after it is on again (Python 3.11 makes one before we return).
    assert len(runs) <= 1
    assert gc.isenabled()


@pytest.mark.parametrize(
    "content",
    [_conversation(2), b'{"tools": [', b'{"tools": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"],
    ids=["read", "not JSON", "too deep"],
)
def test_the_collector_is_on_again_after_any_read_and_left_off_if_it_was(content):
    bodies.read_request(content, FORMATS["openai-chat"])
    assert gc.isenabled()
    gc.disable()
    try:
        bodies.read_request(content, FORMATS["openai-chat"])
        assert not gc.isenabled()
    finally:
        gc.enable()
