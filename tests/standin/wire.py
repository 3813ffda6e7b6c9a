"""Requests and answers of each format the stand-in speaks, over real HTTP on loopback; and the
provider's error bodies, built as the provider writes them (docs/providers.md)."""

from __future__ import annotations

import http.client
import json
import socket
import struct
import zlib

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


def raw_request(port: int, path: str, body: dict, headers: dict) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    data = json.dumps(body).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sock.sendall(
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n{head}\r\n".encode()
        + data
    )
    return sock


OPENAI_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]


RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]


ANTHROPIC_TOOLS = [{"name": "get_weather", "input_schema": WEATHER}]


HI = [{"role": "user", "content": "weather in Paris?"}]


def assert_rejected_like_the_provider(provider, path: str, body: dict, expected: dict) -> None:
    """A 400 with exactly the provider's error body (and Bedrock's error-type header)."""
    status, headers, content = post(provider, path, body)
    assert status == 400
    assert json.loads(content) == expected
    if path.startswith("/model/"):
        assert headers["x-amzn-errortype"] == "ValidationException"
