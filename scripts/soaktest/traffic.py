"""The soak's traffic: every kind of flow (clean, flagged; streamed or not) in every wire
format, each request numbered in a header so that a saved flow can be told apart."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import NamedTuple

from harness.load import LoadRequest

__all__ = [
    "BAD_NAME",
    "FORMATS",
    "ID_HEADER",
    "KINDS",
    "Kind",
    "SoakFlow",
    "UNOFFERED",
    "anthropic_request",
    "bedrock_invoke_request",
    "bedrock_request",
    "chat_request",
    "flow_for",
    "gemini_request",
    "ollama_request",
    "responses_request",
    "vertex_request",
]

ID_HEADER = "x-soak-id"
UNOFFERED = "drop_tables"
BAD_NAME = "get weather"  # a space: invalid under every provider's rule


def chat_request(name: str, stream: bool) -> tuple[str, dict]:
    tool = {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}], "tools": [tool]}
    return "/v1/chat/completions", {**body, "stream": stream}


def responses_request(name: str, stream: bool) -> tuple[str, dict]:
    tool = {"type": "function", "name": name, "parameters": {"type": "object"}}
    return "/v1/responses", {"model": "gpt-4.1", "input": "hi", "tools": [tool], "stream": stream}


def anthropic_request(name: str, stream: bool) -> tuple[str, dict]:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": name, "input_schema": {"type": "object"}}],
    }
    return "/v1/messages", {**body, "stream": stream}


def vertex_request(name: str, stream: bool) -> tuple[str, dict]:
    """Claude on Vertex AI: the Messages body without its model, which the path names."""
    _, body = anthropic_request(name, stream)
    del body["model"]
    verb = "streamRawPredict" if stream else "rawPredict"
    path = (
        f"/v1/projects/soak/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-6:{verb}"
    )
    return path, {**body, "anthropic_version": "vertex-2023-10-16"}


def gemini_request(name: str, stream: bool) -> tuple[str, dict]:
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": name, "parameters": {"type": "object"}}]}],
    }
    return f"/v1beta/models/gemini-2.5-flash:{method}", body


def bedrock_request(name: str, stream: bool) -> tuple[str, dict]:
    op = "converse-stream" if stream else "converse"
    body = {
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "toolConfig": {
            "tools": [{"toolSpec": {"name": name, "inputSchema": {"json": {"type": "object"}}}}]
        },
    }
    return f"/model/anthropic.claude-3-5-sonnet-20240620-v1:0/{op}", body


def bedrock_invoke_request(name: str, stream: bool) -> tuple[str, dict]:
    # Claude through InvokeModel: Anthropic's body, the model in the path, no stream key.
    op = "invoke-with-response-stream" if stream else "invoke"
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": name, "input_schema": {"type": "object"}}],
    }
    return f"/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/{op}", body


def cohere_request(name: str, stream: bool) -> tuple[str, dict]:
    tool = {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    body = {"model": "command-a-03-2025", "messages": [{"role": "user", "content": "hi"}]}
    return "/v2/chat", {**body, "tools": [tool], "stream": stream}


def ollama_request(name: str, stream: bool) -> tuple[str, dict]:
    # Ollama's native chat, which streams unless told not to. Ollama takes any name string
    # (rule ollama), so the invalid tool there is a name that is no string: Go's decoder
    # answers it 400, and toolnames reports it (tool-malformed).
    function = {"name": name if name != BAD_NAME else 7, "parameters": {"type": "object"}}
    body = {"model": "qwen3:8b", "messages": [{"role": "user", "content": "hi"}]}
    return "/api/chat", {
        **body,
        "tools": [{"type": "function", "function": function}],
        "stream": stream,
    }


FORMATS = (
    chat_request,
    responses_request,
    anthropic_request,
    vertex_request,
    gemini_request,
    bedrock_request,
    bedrock_invoke_request,
    cohere_request,
    ollama_request,
)


@dataclass(frozen=True)
class Kind:
    name: str
    stream: bool
    flagged: bool
    status: int
    tool: str = "get_weather"
    call: str = ""  # x-standin-call: the tool the stand-in's model calls


KINDS = (
    Kind("clean", False, False, 200),
    Kind("clean", False, False, 200),
    Kind("clean streamed", True, False, 200),
    Kind("clean streamed", True, False, 200),
    Kind("unoffered call", False, True, 200, call=UNOFFERED),
    Kind("unoffered call streamed", True, True, 200, call=UNOFFERED),
    Kind("invalid name", False, True, 400, tool=BAD_NAME),
)


class SoakFlow(NamedTuple):
    kind: Kind
    request: LoadRequest


def flow_for(i: int) -> SoakFlow:
    """Flow ``i``: its kind and its request; every kind meets every format."""
    kind = KINDS[i % len(KINDS)]
    fmt = FORMATS[(i // len(KINDS)) % len(FORMATS)]
    path, body = fmt(kind.tool, kind.stream)
    headers = {ID_HEADER: str(i)}
    if kind.call:
        headers["x-standin-call"] = kind.call
    return SoakFlow(kind, LoadRequest(path, json.dumps(body).encode(), headers))
