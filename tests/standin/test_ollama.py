"""Ollama's native chat API in the stand-in (standin.ollama): no name is checked, Go's type
errors are, streaming is the default (NDJSON, a call whole in one line, a done line), errors
are {"error": ...} before the stream and a line of it once begun; the real ollama client reads
all of it.
"""

from __future__ import annotations

import json

import pytest

from tests.standin.wire import EMPTY
from tests.standin.wire import post

CHAT = "/api/chat"


def chat_request(names=("lookup",), **extra) -> dict:
    return {
        "model": "qwen3:8b",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"type": "function", "function": {"name": n, "parameters": EMPTY}} for n in names
        ],
        **extra,
    }


def lines(content: bytes) -> list[dict]:
    assert content.endswith(b"\n")
    return [json.loads(line) for line in content.split(b"\n") if line]


@pytest.mark.parametrize(
    "names",
    [("github.create_issue",), ("x" * 300,), ("",), ("a", "a"), ("with space/and:colon",)],
    ids=["dotted", "long", "empty", "duplicate", "odd"],
)
def test_no_tool_name_is_checked(provider, names):
    status, _, content = post(provider, CHAT, chat_request(names, stream=False))
    assert status == 200, content
    assert json.loads(content)["done"] is True


@pytest.mark.parametrize(
    "body, error",
    [
        ({"messages": []}, "model is required"),
        (
            chat_request(tools="lookup"),
            "json: cannot unmarshal string into Go struct field ChatRequest.tools of type api.Tools",
        ),
        (
            chat_request(tools=[{"type": "function", "function": {"name": 7}}]),
            "json: cannot unmarshal number into Go struct field ToolFunction.name of type string",
        ),
        (
            {**chat_request(), "messages": [{"role": "assistant", "tool_calls": {}}]},
            "json: cannot unmarshal object into Go struct field Message.tool_calls of type []api.ToolCall",
        ),
    ],
    ids=["no-model", "tools-string", "name-number", "calls-object"],
)
def test_rejects_what_gos_decoder_rejects_in_ollamas_error_shape(provider, body, error):
    status, headers, content = post(provider, CHAT, body)
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert json.loads(content) == {"error": error}


def test_streams_by_default_as_ndjson_with_the_call_whole_in_one_line(provider):
    status, headers, content = post(
        provider, CHAT, chat_request(), headers={"x-standin-call": "lookup,drop_tables"}
    )
    assert status == 200
    assert headers["content-type"] == "application/x-ndjson"
    *calls, done = lines(content)
    (line,) = calls
    assert line["done"] is False
    assert [c["function"]["name"] for c in line["message"]["tool_calls"]] == [
        "lookup",
        "drop_tables",
    ]
    assert [c["function"]["index"] for c in line["message"]["tool_calls"]] == [0, 1]
    assert done["done"] is True and done["done_reason"] == "stop"


def test_a_tool_result_ends_the_turn_with_text(provider):
    body = chat_request(stream=False)
    body["messages"] += [
        {"role": "assistant", "tool_calls": [{"function": {"name": "lookup", "arguments": {}}}]},
        {"role": "tool", "tool_name": "lookup", "content": "42"},
    ]
    status, _, content = post(provider, CHAT, body)
    assert status == 200
    assert json.loads(content)["message"] == {"role": "assistant", "content": "done"}


def test_an_error_once_the_stream_has_begun_is_a_line_of_it(provider):
    status, _, content = post(
        provider, CHAT, chat_request(), headers={"x-standin-stream-error": "model runner stopped"}
    )
    assert status == 200
    first, error = lines(content)
    assert first["done"] is False
    assert error == {"error": "model runner stopped"}


@pytest.mark.needs_sdk
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_ollama_client_reads_its_answers_and_raises_a_stream_error(provider, stream):
    ollama = pytest.importorskip("ollama")
    tools = chat_request(("get.weather",))["tools"]
    messages = [{"role": "user", "content": "weather?"}]
    client_headers = {"x-standin-call": "get.weather"}
    client = ollama.Client(host=provider.url, headers=client_headers)
    answer = client.chat(model="qwen3:8b", messages=messages, tools=tools, stream=stream)
    parts = list(answer) if stream else [answer]
    called = [c.function.name for p in parts for c in p.message.tool_calls or ()]
    assert called == ["get.weather"]
    assert parts[-1].done

    failing = ollama.Client(host=provider.url, headers={"x-standin-stream-error": "it broke"})
    if stream:
        with pytest.raises(ollama.ResponseError, match="it broke"):
            list(failing.chat(model="qwen3:8b", messages=messages, tools=tools, stream=True))
