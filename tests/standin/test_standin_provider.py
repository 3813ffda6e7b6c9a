"""Tests for scripts/standin_provider.py over real HTTP on loopback.

Expected error texts are copied from /work/shared/reference/providers.md (the
section is named beside each case) so a drift in the stand-in shows up here.
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.request
import zlib
from pathlib import Path

import pytest

from standin_provider import StandinProvider
from tests.testkit import exchange_for

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "standin_provider.py"

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
EMPTY = {"type": "object", "properties": {}}
TOOLS = {"get_weather": WEATHER, "lookup": EMPTY}

CHAT = "/v1/chat/completions"
RESPONSES = "/v1/responses"
ANTHROPIC = "/v1/messages"
GEMINI = "/v1beta/models/gemini-2.5-flash:generateContent"
GEMINI_STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
BEDROCK = "/model/us.anthropic.claude-sonnet-4-v1%3A0/converse"
BEDROCK_STREAM = "/model/us.anthropic.claude-sonnet-4-v1%3A0/converse-stream"


# ---------------------------------------------------------------------------
# fixtures and HTTP helpers


@pytest.fixture(scope="module")
def server():
    with StandinProvider() as provider:
        yield provider


@pytest.fixture
def provider(server):
    server.reset()
    return server


def post(provider, path, body=None, headers=None, raw=None):
    """POST JSON (or raw bytes); return (status, lower-cased headers, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=10)
    data = raw if raw is not None else json.dumps(body).encode()
    conn.request(
        "POST", path, body=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    response = conn.getresponse()
    content = response.read()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, content


def post_json(provider, path, body, headers=None):
    status, _, content = post(provider, path, body, headers)
    return status, json.loads(content)


def sse(data: bytes) -> list[tuple[str | None, str]]:
    """Parse an SSE body into (event, data) pairs; accepts LF and CRLF line ends."""
    out = []
    for block in data.decode().replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        event, lines = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                lines.append(line[5:].lstrip())
        out.append((event, "\n".join(lines)))
    return out


def decode_event_stream(data: bytes) -> list[tuple[dict, dict]]:
    """Decode AWS event-stream messages, checking both CRC32s; return (headers, payload) pairs."""
    messages, pos = [], 0
    while pos < len(data):
        total, headers_len = struct.unpack(">II", data[pos : pos + 8])
        assert struct.unpack(">I", data[pos + 8 : pos + 12])[0] == zlib.crc32(data[pos : pos + 8])
        message = data[pos : pos + total]
        assert len(message) == total
        assert struct.unpack(">I", message[-4:])[0] == zlib.crc32(message[:-4])
        raw_headers, headers, i = message[12 : 12 + headers_len], {}, 0
        while i < len(raw_headers):
            name_len = raw_headers[i]
            name = raw_headers[i + 1 : i + 1 + name_len].decode()
            i += 1 + name_len
            assert raw_headers[i] == 7, "header value type must be 7 (string)"
            (value_len,) = struct.unpack(">H", raw_headers[i + 1 : i + 3])
            headers[name] = raw_headers[i + 3 : i + 3 + value_len].decode()
            i += 3 + value_len
        messages.append((headers, json.loads(message[12 + headers_len : -4])))
        pos += total
    return messages


# ---------------------------------------------------------------------------
# request builders and answer extractors, one per wire format
#   choice: None, "named" (force "lookup") or "required" (force any tool)


def chat_request(choice=None, tool_result=False, tools=TOOLS):
    messages = [{"role": "user", "content": "weather in Paris?"}]
    if tool_result:
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": "{}"},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ]
    body = {
        "model": "gpt-test",
        "messages": messages,
        "tools": [
            {"type": "function", "function": {"name": n, "parameters": s}} for n, s in tools.items()
        ],
    }
    if choice:
        body["tool_choice"] = {
            "named": {"type": "function", "function": {"name": "lookup"}},
            "required": "required",
        }[choice]
    return body


def chat_answer(body):
    message = body["choices"][0]["message"]
    if message.get("tool_calls"):
        assert body["choices"][0]["finish_reason"] == "tool_calls"
        return [
            (c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in message["tool_calls"]
        ]
    return message["content"]


def responses_request(choice=None, tool_result=False, tools=TOOLS):
    items = [{"role": "user", "content": "weather in Paris?"}]
    if tool_result:
        items += [
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "get_weather",
                "arguments": "{}",
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        ]
    body = {
        "model": "gpt-test",
        "input": items,
        "tools": [{"type": "function", "name": n, "parameters": s} for n, s in tools.items()],
    }
    if choice:
        body["tool_choice"] = {
            "named": {"type": "function", "name": "lookup"},
            "required": "required",
        }[choice]
    return body


def responses_answer(body):
    calls = [
        (o["name"], json.loads(o["arguments"]))
        for o in body["output"]
        if o["type"] == "function_call"
    ]
    if calls:
        return calls
    return "".join(
        c["text"] for o in body["output"] if o["type"] == "message" for c in o["content"]
    )


def anthropic_request(choice=None, tool_result=False, tools=TOOLS):
    messages = [{"role": "user", "content": "weather in Paris?"}]
    if tool_result:
        messages += [
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}],
            },
        ]
    body = {
        "model": "claude-test",
        "max_tokens": 100,
        "messages": messages,
        "tools": [{"name": n, "input_schema": s} for n, s in tools.items()],
    }
    if choice:
        body["tool_choice"] = {
            "named": {"type": "tool", "name": "lookup"},
            "required": {"type": "any"},
        }[choice]
    return body


def anthropic_answer(body):
    if body["stop_reason"] == "tool_use":
        return [(b["name"], b["input"]) for b in body["content"] if b["type"] == "tool_use"]
    return "".join(b["text"] for b in body["content"] if b["type"] == "text")


def gemini_request(choice=None, tool_result=False, tools=TOOLS):
    contents = [{"role": "user", "parts": [{"text": "weather in Paris?"}]}]
    if tool_result:
        contents += [
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {}}}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "get_weather", "response": {}}}],
            },
        ]
    body = {
        "contents": contents,
        "tools": [
            {"functionDeclarations": [{"name": n, "parameters": s} for n, s in tools.items()]}
        ],
    }
    if choice:
        config = {
            "named": {"mode": "ANY", "allowedFunctionNames": ["lookup"]},
            "required": {"mode": "ANY"},
        }[choice]
        body["toolConfig"] = {"functionCallingConfig": config}
    return body


def gemini_answer(body):
    parts = body["candidates"][0]["content"]["parts"]
    calls = [
        (p["functionCall"]["name"], p["functionCall"]["args"]) for p in parts if "functionCall" in p
    ]
    return calls or "".join(p.get("text", "") for p in parts)


def bedrock_request(choice=None, tool_result=False, tools=TOOLS):
    messages = [{"role": "user", "content": [{"text": "weather in Paris?"}]}]
    if tool_result:
        messages += [
            {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": {}}}],
            },
            {
                "role": "user",
                "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "sunny"}]}}],
            },
        ]
    config = {
        "tools": [{"toolSpec": {"name": n, "inputSchema": {"json": s}}} for n, s in tools.items()]
    }
    if choice:
        config["toolChoice"] = {"named": {"tool": {"name": "lookup"}}, "required": {"any": {}}}[
            choice
        ]
    return {"messages": messages, "toolConfig": config}


def bedrock_answer(body):
    content = body["output"]["message"]["content"]
    if body["stopReason"] == "tool_use":
        return [(b["toolUse"]["name"], b["toolUse"]["input"]) for b in content]
    return "".join(b["text"] for b in content)


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


def test_responses_text_stream_sends_output_text_deltas(provider):
    _, _, content = post(provider, RESPONSES, {**responses_request(), "stream": True})
    payloads = [json.loads(data) for _, data in sse(content)]
    deltas = [p["delta"] for p in payloads if p["type"] == "response.output_text.delta"]
    assert "".join(deltas) == "hello" and len(deltas) == 2
    assert payloads[-1]["response"]["output"][0]["content"][0]["text"] == "hello"


def test_answers_are_deterministic_for_identical_requests(provider):
    first = post(provider, RESPONSES, responses_request(choice="required"))[2]
    assert post(provider, RESPONSES, responses_request(choice="required"))[2] == first


# ---------------------------------------------------------------------------
# validation: status, error shape and exact text

PATTERN_TEXT = (
    "string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
)


def openai_error(message, param, code):
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


def anthropic_error(message):
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def gemini_error(message):
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}


GEMINI_RULE = (
    "Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), "
    "underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64."
)
BEDROCK_PATTERN = (
    "failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
)
BEDROCK_LENGTH = "failed to satisfy constraint: Member must have length less than or equal to 64"
HISTORY_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "multi_tool_use.parallel", "arguments": "{}"},
}

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
    # §3 observed texts
    "responses-tool-name-pattern": (
        RESPONSES,
        responses_request(tools={"get weather": EMPTY}),
        openai_error(f"Invalid 'tools[0].name': {PATTERN_TEXT}", "tools[0].name", "invalid_value"),
    ),
    "responses-named-choice-not-in-tools": (
        RESPONSES,
        {**responses_request(), "tool_choice": {"type": "function", "name": "my.tool"}},
        openai_error("Tool choice 'my.tool' not found in 'tools' parameter.", "tool_choice", None),
    ),
    "responses-hosted-choice-not-in-tools": (
        RESPONSES,
        {**responses_request(), "tool_choice": {"type": "image_generation"}},
        openai_error(
            "Tool choice 'image_generation' not found in 'tools' parameter.", "tool_choice", None
        ),
    ),
    "responses-required-without-tools": (
        RESPONSES,
        {"model": "m", "input": "hi", "tool_choice": "required"},
        openai_error(
            "Tool choice 'required' must be specified with 'tools' parameter.", "tool_choice", None
        ),
    ),
    "responses-named-choice-without-tools": (
        RESPONSES,
        {"model": "m", "input": "hi", "tool_choice": {"type": "function", "name": "lookup"}},
        openai_error("Tool choice 'function' not found in 'tools' parameter.", "tool_choice", None),
    ),
    "responses-history-name": (
        RESPONSES,
        {
            **responses_request(),
            "input": [
                {"type": "function_call", "call_id": "c", "name": "$READFILE", "arguments": "{}"}
            ],
        },
        openai_error(f"Invalid 'input[0].name': {PATTERN_TEXT}", "input[0].name", "invalid_value"),
    ),
    # §5 observed texts
    "anthropic-tool-name-pattern": (
        ANTHROPIC,
        anthropic_request(tools={"get_weather": WEATHER, "mcp:search": EMPTY}),
        anthropic_error(
            "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
        ),
    ),
    "anthropic-tool-name-too-long": (
        ANTHROPIC,
        anthropic_request(tools={"y" * 129: EMPTY}),
        anthropic_error("tools.0.custom.name: String should have at most 128 characters"),
    ),
    "anthropic-duplicate-names": (
        ANTHROPIC,
        {**anthropic_request(), "tools": [{"name": "a", "input_schema": EMPTY}] * 2},
        anthropic_error("tools: Tool names must be unique."),
    ),
    "anthropic-named-choice-not-in-tools": (
        ANTHROPIC,
        {**anthropic_request(), "tool_choice": {"type": "tool", "name": "web_search"}},
        anthropic_error("Tool 'web_search' not found in provided tools"),
    ),
    "anthropic-tool-blocks-without-tools": (
        ANTHROPIC,
        {**anthropic_request(tool_result=True), "tools": []},
        anthropic_error("Requests which include tool_use or tool_result blocks must define tools."),
    ),
    "anthropic-history-name": (
        ANTHROPIC,
        {
            **anthropic_request(),
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "a.b", "input": {}}],
                },
            ],
        },
        anthropic_error(
            "messages.1.content.0.tool_use.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
        ),
    ),
    # §6 observed texts (plus one invented, clearly marked)
    "gemini-name-leading-digit": (
        GEMINI,
        gemini_request(tools={"get_weather": WEATHER, "1st_tool": EMPTY}),
        gemini_error(
            f"* GenerateContentRequest.tools[0].function_declarations[1].name: {GEMINI_RULE}\n"
        ),
    ),
    "gemini-every-bad-name-is-listed": (
        GEMINI,
        gemini_request(tools={"a b": EMPTY, "ok": EMPTY, "z" * 65: EMPTY}),
        gemini_error(
            f"* GenerateContentRequest.tools[0].function_declarations[0].name: {GEMINI_RULE}\n"
            f"* GenerateContentRequest.tools[0].function_declarations[2].name: {GEMINI_RULE}\n"
        ),
    ),
    "gemini-duplicate-declaration": (
        GEMINI,
        {
            "contents": [],
            "tools": [{"functionDeclarations": [{"name": "get_current_weather"}]}] * 2,
        },
        gemini_error("Duplicate function declaration found: get_current_weather"),
    ),
    "gemini-allowed-name-not-declared": (
        GEMINI,
        {
            **gemini_request(),
            "toolConfig": {
                "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["my.tool"]}
            },
        },
        gemini_error(
            "[standin-invented] * GenerateContentRequest.tool_config.function_calling_config."
            "allowed_function_names[0]: 'my.tool' does not match any function declaration.\n"
        ),
    ),
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
    path, body, expected = VALIDATION_CASES[case]
    status, headers, content = post(provider, path, body)
    assert status == 400
    assert json.loads(content) == expected
    if path.startswith("/model/"):
        assert headers["x-amzn-errortype"] == "ValidationException"


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


def test_unknown_path_is_404_and_get_on_an_endpoint_is_405(provider):
    assert post(provider, "/v1/embeddings", {})[0] == 404
    conn = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=10)
    conn.request("GET", CHAT)
    assert conn.getresponse().status == 405


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


def test_responses_stream_emits_the_real_event_sequence(provider):
    _, _, content = post(
        provider, RESPONSES, {**responses_request(choice="required"), "stream": True}
    )
    events = sse(content)
    names = [event for event, _ in events]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    payloads = [json.loads(data) for _, data in events]
    assert [p["type"] for p in payloads] == names
    assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    added = payloads[2]["item"]
    assert (added["type"], added["name"], added["arguments"]) == (
        "function_call",
        "get_weather",
        "",
    )
    deltas = "".join(p["delta"] for p in payloads if p["type"].endswith("arguments.delta"))
    assert json.loads(deltas) == {"city": "Paris"}
    assert payloads[5]["name"] == "get_weather" and payloads[5]["arguments"] == deltas
    assert payloads[-1]["response"]["status"] == "completed"
    assert payloads[-1]["response"]["output"][0]["call_id"] == added["call_id"]


def test_anthropic_stream_emits_the_real_event_sequence(provider):
    _, _, content = post(
        provider, ANTHROPIC, {**anthropic_request(choice="required"), "stream": True}
    )
    events = [(event, json.loads(data)) for event, data in sse(content)]
    assert [e for e, _ in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(payload["type"] == event for event, payload in events)
    start = events[2][1]["content_block"]
    assert (start["type"], start["name"], start["input"]) == ("tool_use", "get_weather", {})
    partial = "".join(p["delta"]["partial_json"] for e, p in events if e == "content_block_delta")
    assert json.loads(partial) == {"city": "Paris"}
    assert events[6][1]["delta"]["stop_reason"] == "tool_use"


def test_anthropic_stream_text_uses_text_deltas(provider):
    _, _, content = post(provider, ANTHROPIC, {**anthropic_request(), "stream": True})
    payloads = [json.loads(d) for _, d in sse(content)]
    deltas = [p["delta"] for p in payloads if p["type"] == "content_block_delta"]
    assert {d["type"] for d in deltas} == {"text_delta"}
    assert "".join(d["text"] for d in deltas) == "hello"


def test_gemini_sse_stream_sends_one_chunk_per_event(provider):
    status, headers, content = post(
        provider, GEMINI_STREAM + "?alt=sse", gemini_request(choice="named")
    )
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert content.endswith(b"\r\n\r\n")
    chunks = [json.loads(d) for _, d in sse(content)]
    assert gemini_answer(chunks[-1]) == [("lookup", {})]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"


def test_gemini_stream_without_alt_sse_is_a_json_array(provider):
    status, headers, content = post(provider, GEMINI_STREAM, gemini_request())
    assert status == 200 and headers["content-type"] == "application/json"
    chunks = json.loads(content)
    assert "".join(gemini_answer(c) for c in chunks) == "hello"


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


def _raw_request(port: int, path: str, body: dict, headers: dict) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    data = json.dumps(body).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sock.sendall(
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n{head}\r\n".encode()
        + data
    )
    return sock


def test_delay_header_spaces_events_but_the_first_arrives_at_once(provider):
    body = {**chat_request(choice="required"), "stream": True}
    start = time.monotonic()
    sock = _raw_request(provider.port, CHAT, body, {"x-standin-delay-ms": "300"})
    received = b""
    while b"data:" not in received:
        received += sock.recv(65536)
    first = time.monotonic() - start
    while not received.endswith(b"0\r\n\r\n"):
        received += sock.recv(65536)
    total = time.monotonic() - start
    sock.close()
    events = received.count(b"data:")  # 6 events: role, name, 2 argument fragments, finish, [DONE]
    assert first < 0.25
    assert total >= 0.3 * (events - 1) - 0.05


@pytest.mark.parametrize(
    "path, body",
    [
        (CHAT, {**chat_request(choice="required"), "stream": True}),
        (ANTHROPIC, {**anthropic_request(choice="required"), "stream": True}),
    ],
)
def test_break_after_header_drops_the_connection_mid_stream(provider, path, body):
    conn = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=10)
    conn.request("POST", path, body=json.dumps(body), headers={"x-standin-break-after": "2"})
    response = conn.getresponse()
    assert response.status == 200
    with pytest.raises(http.client.IncompleteRead) as caught:
        response.read()
    assert len(sse(caught.value.partial)) == 2


# ---------------------------------------------------------------------------
# transport: keep-alive, recording, introspection, CLI


def test_connection_is_reused_with_content_length_and_chunked_streams(provider):
    conn = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=10)
    sockets = []
    for stream in (False, True, False):
        conn.request("POST", CHAT, body=json.dumps({**chat_request(), "stream": stream}))
        response = conn.getresponse()
        response.read()
        assert response.status == 200
        assert (response.getheader("Content-Length") is None) == stream
        sockets.append(conn.sock)
    assert sockets[0] is sockets[1] is sockets[2] is not None
    conn.close()


def test_requests_are_recorded_exactly_as_received(provider):
    raw = b'{"model": "m",   "messages": []}'
    post(provider, CHAT + "?api-version=1", raw=raw, headers={"X-Trace": "abc"})
    (recorded,) = provider.requests
    assert recorded["method"] == "POST" and recorded["path"] == CHAT + "?api-version=1"
    assert recorded["body"] == raw
    assert ["X-Trace", "abc"] in recorded["headers"]
    provider.reset()
    assert provider.requests == []


def test_http_introspection_lists_and_resets_recorded_requests(provider):
    post(provider, ANTHROPIC, anthropic_request())
    with urllib.request.urlopen(provider.url + "/_standin/requests") as response:
        listed = json.load(response)
    assert [r["path"] for r in listed] == [ANTHROPIC]
    assert json.loads(base64.b64decode(listed[0]["body_b64"])) == anthropic_request()
    urllib.request.urlopen(
        urllib.request.Request(provider.url + "/_standin/reset", method="POST")
    ).read()
    assert provider.requests == []


@pytest.mark.e2e
def test_cli_prints_its_url_serves_and_exits_on_sigterm():
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--port", "0", "--quiet"], stdout=subprocess.PIPE, text=True
    )
    try:
        line = process.stdout.readline()
        match = re.fullmatch(r"standin provider listening on (http://127\.0\.0\.1:(\d+))\n", line)
        assert match, line
        request = urllib.request.Request(
            match.group(1) + CHAT, data=json.dumps(chat_request()).encode()
        )
        with urllib.request.urlopen(request) as response:
            assert chat_answer(json.load(response)) == "hello"
        with urllib.request.urlopen(match.group(1) + "/_standin/requests") as response:
            assert len(json.load(response)) == 1
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()
        process.wait()


# ---------------------------------------------------------------------------
# real SDK round trips


@pytest.fixture
def openai_client(provider):
    openai = pytest.importorskip("openai")
    return openai.OpenAI(base_url=provider.url + "/v1", api_key="sk-test", max_retries=0)


@pytest.fixture
def anthropic_client(provider):
    anthropic = pytest.importorskip("anthropic")
    return anthropic.Anthropic(base_url=provider.url, api_key="sk-ant-test", max_retries=0)


OPENAI_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
ANTHROPIC_TOOLS = [{"name": "get_weather", "input_schema": WEATHER}]
HI = [{"role": "user", "content": "weather in Paris?"}]


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
def test_openai_sdk_responses_create_and_stream(openai_client):
    response = openai_client.responses.create(
        model="gpt-test",
        input="hi",
        tools=RESPONSES_TOOLS,
        tool_choice={"type": "function", "name": "get_weather"},
    )
    assert response.output[0].type == "function_call" and response.output[0].name == "get_weather"
    assert openai_client.responses.create(model="gpt-test", input="hi").output_text == "hello"
    events = list(
        openai_client.responses.create(
            model="gpt-test", input="hi", tools=RESPONSES_TOOLS, tool_choice="required", stream=True
        )
    )
    assert events[-1].type == "response.completed"
    with openai_client.responses.stream(
        model="gpt-test", input="hi", tools=RESPONSES_TOOLS, tool_choice="required"
    ) as stream:
        final = stream.get_final_response()
    assert final.output[0].arguments == '{"city":"Paris"}'


@pytest.mark.needs_sdk
def test_openai_sdk_raises_bad_request_with_the_observed_text(openai_client):
    import openai

    bad = [{"type": "function", "function": {"name": "get.weather", "parameters": EMPTY}}]
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client.chat.completions.create(model="gpt-test", messages=HI, tools=bad)
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == "tools[0].function.name"
    assert "string does not match pattern" in caught.value.message


@pytest.mark.needs_sdk
def test_anthropic_sdk_messages_create_and_stream(anthropic_client):
    message = anthropic_client.messages.create(
        model="claude-test",
        max_tokens=50,
        messages=HI,
        tools=ANTHROPIC_TOOLS,
        tool_choice={"type": "any"},
    )
    assert message.stop_reason == "tool_use"
    assert (message.content[0].name, message.content[0].input) == ("get_weather", {"city": "Paris"})
    events = list(
        anthropic_client.messages.create(
            model="claude-test", max_tokens=50, messages=HI, tools=ANTHROPIC_TOOLS, stream=True
        )
    )
    assert [e.type for e in events][0] == "message_start" and events[-1].type == "message_stop"
    with anthropic_client.messages.stream(
        model="claude-test",
        max_tokens=50,
        messages=HI,
        tools=ANTHROPIC_TOOLS,
        tool_choice={"type": "tool", "name": "get_weather"},
    ) as stream:
        final = stream.get_final_message()
    assert final.content[0].input == {"city": "Paris"} and final.stop_reason == "tool_use"


@pytest.mark.needs_sdk
def test_anthropic_sdk_raises_bad_request_with_the_observed_text(anthropic_client):
    import anthropic

    with pytest.raises(anthropic.BadRequestError) as caught:
        anthropic_client.messages.create(
            model="claude-test", max_tokens=50, messages=HI, tools=ANTHROPIC_TOOLS * 2
        )
    assert caught.value.body["error"]["message"] == "tools: Tool names must be unique."


def test_a_provider_that_records_nothing_still_answers_for_load_runs():
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with StandinProvider(record=False) as quiet:
        status, answer = post_json(quiet, "/v1/chat/completions", body)
        assert status == 200
        assert answer["choices"][0]["message"]["role"] == "assistant"
        assert quiet.requests == []


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
