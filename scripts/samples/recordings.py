"""
Write the sample recordings in flows/: small, deterministic, fake keys only.

    .venv/bin/python -m samples [OUTPUT_DIR]     # default: flows/

Each file holds the bad cases the addon and `scripts/scan` report (see flows/README.md).
The builders here are also what the scanner's tests write their recordings with.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from mitmproxy import http
from mitmproxy import io as mitm_io
from mitmproxy.addons.savehar import SaveHar
from mitmproxy.test import tflow
from mitmproxy.test import tutils
from ruamel.yaml import YAML

from standin.openai_chat import ChatCompletions
from standin.shared import ProviderError

__all__ = [
    "CHAT_PATH",
    "FAKE_AUTHORIZATION",
    "LONG_NAME",
    "SAMPLES",
    "Sample",
    "WEATHER_PARAMETERS",
    "all_case_flows",
    "bad_names_body",
    "bad_names_flows",
    "cassette_flows",
    "cassette_interaction",
    "cassette_text",
    "chat_flow",
    "clean_flows",
    "completion",
    "flow_bytes",
    "function_tool",
    "hallucinated_call_response",
    "hallucinated_flows",
    "har_document",
    "main",
    "mastra_choice_mismatch_body",
    "mastra_flows",
    "parallel_wrapper_response",
    "provider_rejection",
    "rejected",
    "streamed_call_response",
    "weather_request_body",
    "write_cassette",
    "write_flows",
    "write_har",
]

FAKE_AUTHORIZATION = "Bearer sk-test-not-a-key"
CHAT_PATH = "/v1/chat/completions"
# Flow ids come from the flow's name, so the files are byte-for-byte reproducible.
_ID_NAMESPACE = uuid.UUID("6f1c3a52-8d3e-4c55-9a67-0a7e1f0c2b11")

WEATHER_PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


def function_tool(name: str, description: str = "A sample tool") -> dict:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": WEATHER_PARAMETERS},
    }


def mastra_choice_mismatch_body() -> dict:
    """What Mastra sends for tools {"search.web": tool} forced with toolChoice "search.web":
    the key is rewritten in `tools` but not in `tool_choice` (docs/providers.md §16)."""
    return {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Always call the search.web tool."},
            {"role": "user", "content": "hi"},
        ],
        "tools": [function_tool("search_web", "Search the web")],
        "tool_choice": {"type": "function", "function": {"name": "search.web"}},
    }


# 70 characters: over every provider's 64.
LONG_NAME = "mcp__github_enterprise__create_or_update_file_contents_in_repository_x"
assert len(LONG_NAME) == 70


def bad_names_body() -> dict:
    """MCP-style names: one too long, one with a dot, one with a colon."""
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "open an issue about the failing build"}],
        "tools": [
            function_tool("github.create_issue", "Create an issue"),
            function_tool(LONG_NAME, "Write a file"),
            function_tool("filesystem:read_file", "Read a file"),
        ],
        "tool_choice": "auto",
    }


def weather_request_body(stream: bool = False) -> dict:
    body = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "tools": [function_tool("get_weather", "Get the weather for a city")],
        "tool_choice": "auto",
    }
    if stream:
        body["stream"] = True
    return body


def completion(*calls: tuple[str, str]) -> dict:
    """A chat completion whose message calls (name, arguments) tools."""
    return {
        "id": "chatcmpl-sample",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": f"call_{i}",
                            "type": "function",
                            "function": {"name": name, "arguments": args},
                        }
                        for i, (name, args) in enumerate(calls)
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }


def hallucinated_call_response() -> dict:
    return completion(("search_web", '{"query": "weather Paris"}'))


def parallel_wrapper_response() -> dict:
    # The wrapper call as models return it (providers.md §1.3; observed by genaiscript).
    args = {
        "tool_uses": [
            {"recipient_name": "functions.get_weather", "parameters": {"city": "Paris"}},
            {"recipient_name": "functions.get_weather", "parameters": {"city": "Lyon"}},
        ]
    }
    return completion(("multi_tool_use.parallel", json.dumps(args)))


def streamed_call_response(name: str = "lookup_city") -> str:
    """Chat completion chunks (SSE) for one call: the name comes in the first delta only."""
    base = {
        "id": "chatcmpl-sample",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "gpt-4o-mini",
    }
    deltas = [
        {"role": "assistant", "content": None},
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }
            ]
        },
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]},
    ]
    events = [
        {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas
    ]
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"


def provider_rejection(request_body: dict) -> dict:
    """What OpenAI answers this request with: the stand-in provider's 400 body, whose texts
    are the provider's own where one is known (docs/providers.md §2, §20)."""
    try:
        ChatCompletions().validate(request_body)
    except ProviderError as e:
        assert e.status == 400, e.status
        return e.body
    raise ValueError("the stand-in accepts this request: it is no rejection sample")


def rejected(message: str, param: str | None) -> dict:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    }


def chat_flow(
    name: str,
    request_body: dict | str | bytes,
    response_body: dict | str | bytes | None = None,
    *,
    status: int = 200,
    content_type: str = "application/json",
    response_encoding: str | None = None,
    host: str = "api.openai.com",
    path: str = CHAT_PATH,
    method: str = "POST",
) -> http.HTTPFlow:
    """A complete, reproducible flow to an OpenAI-compatible host."""
    request = tutils.treq(
        host=host,
        port=443,
        scheme=b"https",
        method=method.encode(),
        authority=b"",
        path=path.encode(),
        headers=http.Headers(
            host=host,
            authorization=FAKE_AUTHORIZATION,
            content_type="application/json",
            user_agent="toolnames-samples",
        ),
        content=b"",
    )
    request.content = _body_bytes(request_body)
    response = None
    if response_body is not None:
        headers = http.Headers(content_type=content_type)
        if response_encoding:
            headers["content-encoding"] = response_encoding
        response = tutils.tresp(
            status_code=status,
            reason=b"OK" if status == 200 else b"Bad Request",
            headers=headers,
            content=b"",
        )
        response.content = _body_bytes(response_body)  # encoded as content-encoding says
        response.headers["content-length"] = str(len(response.raw_content))
    request.headers["content-length"] = str(len(request.raw_content))
    flow = tflow.tflow(req=request, resp=response or False, live=False)
    flow.id = str(uuid.uuid5(_ID_NAMESPACE, name))
    flow.client_conn.id = str(uuid.uuid5(_ID_NAMESPACE, name + "/client"))
    flow.server_conn.id = str(uuid.uuid5(_ID_NAMESPACE, name + "/server"))
    flow.server_conn.address = (host, 443)
    flow.comment = name
    return flow


def _body_bytes(body: dict | str | bytes) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()


def flow_bytes(flows: list[http.HTTPFlow]) -> bytes:
    out = io.BytesIO()
    writer = mitm_io.FlowWriter(out)
    for flow in flows:
        writer.add(flow)
    return out.getvalue()


def write_flows(path: Path, flows: list[http.HTTPFlow]) -> Path:
    path.write_bytes(flow_bytes(flows))
    return path


def har_document(flows: list[http.HTTPFlow]) -> dict:
    """The HAR mitmproxy itself exports (mitmweb's "Export HAR", `save.har`)."""
    return SaveHar().make_har(flows)


def write_har(path: Path, flows: list[http.HTTPFlow]) -> Path:
    path.write_text(json.dumps(har_document(flows), indent=2) + "\n")
    return path


def cassette_interaction(flow: http.HTTPFlow) -> dict:
    """One vcrpy interaction (the shape vcrpy and pytest-recording write). Bodies that are
    not UTF-8 text, such as gzip-encoded ones, become !!binary, as vcrpy stores them."""

    def headers(message: http.Message) -> dict:
        return {k: [v] for k, v in message.headers.items()}

    def body(raw: bytes | None) -> str | bytes | None:
        if raw is None:
            return None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw

    interaction = {
        "request": {
            "body": body(flow.request.raw_content),
            "headers": headers(flow.request),
            "method": flow.request.method,
            "uri": flow.request.pretty_url,
        }
    }
    if flow.response is not None:
        interaction["response"] = {
            "body": {"string": body(flow.response.raw_content)},
            "headers": headers(flow.response),
            "status": {"code": flow.response.status_code, "message": flow.response.reason},
        }
    return interaction


def cassette_text(flows: list[http.HTTPFlow]) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    out = io.StringIO()
    yaml.dump({"interactions": [cassette_interaction(f) for f in flows], "version": 1}, out)
    return out.getvalue()


def write_cassette(path: Path, flows: list[http.HTTPFlow]) -> Path:
    path.write_text(cassette_text(flows))
    return path


# -- The samples -----------------------------------------------------------------------------


def mastra_flows() -> list[http.HTTPFlow]:
    return [
        chat_flow(
            "mastra-choice-mismatch",
            mastra_choice_mismatch_body(),
            provider_rejection(mastra_choice_mismatch_body()),
            status=400,
        )
    ]


def bad_names_flows() -> list[http.HTTPFlow]:
    return [
        chat_flow(
            "bad-names",
            bad_names_body(),
            # OpenAI's text for the first bad name, as observed (docs/providers.md §2).
            provider_rejection(bad_names_body()),
            status=400,
        )
    ]


def hallucinated_flows() -> list[http.HTTPFlow]:
    return [
        chat_flow(
            "hallucinated-call",
            weather_request_body(),
            hallucinated_call_response(),
            response_encoding="gzip",
        ),
        chat_flow("parallel-wrapper", weather_request_body(), parallel_wrapper_response()),
        chat_flow(
            "streamed-hallucinated-call",
            weather_request_body(stream=True),
            streamed_call_response(),
            content_type="text/event-stream; charset=utf-8",
        ),
    ]


def clean_flows() -> list[http.HTTPFlow]:
    return [
        chat_flow(
            "clean-call", weather_request_body(), completion(("get_weather", '{"city": "Paris"}'))
        )
    ]


# An MCP server's names, as scripts/standin/mcp_server.py lists them.
MCP_NAMES = ["github.create_issue", "search docs", "search_" + "x" * 134, "get_weather"]


def mcp_flow(
    name: str, message: dict, answer: dict, *, mcp_name: str | None = None
) -> http.HTTPFlow:
    """A Streamable HTTP exchange with a remote MCP server, in one session."""
    flow = chat_flow(name, message, answer, host="mcp.example.com", path="/mcp")
    headers = flow.request.headers
    headers["accept"] = "application/json, text/event-stream"
    headers["mcp-session-id"] = "sample-session-1"
    headers["mcp-protocol-version"] = "2025-11-25"
    if mcp_name is not None:  # the 2026-07-28 revision's headers
        headers["mcp-method"] = message["method"]
        headers["mcp-name"] = mcp_name
    return flow


def mcp_call(id_: int, tool: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"text": "Paris"}},
    }


def mcp_result(id_: int, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": text}]}}


def mcp_flows() -> list[http.HTTPFlow]:
    tools = [
        {"name": n, "description": "A sample tool", "inputSchema": {"type": "object"}}
        for n in MCP_NAMES
    ]
    return [
        mcp_flow(
            "mcp-tools-list",
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}},
        ),
        mcp_flow("mcp-listed-call", mcp_call(2, "get_weather"), mcp_result(2, "Sunny")),
        mcp_flow(
            "mcp-unlisted-call",
            mcp_call(3, "delete_repo"),
            {"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Unknown tool"}},
        ),
        mcp_flow(
            "mcp-header-mismatch",
            mcp_call(4, "get_weather"),
            mcp_result(4, "Sunny"),
            mcp_name="get-weather",
        ),
    ]


def all_case_flows() -> list[http.HTTPFlow]:
    return mastra_flows() + bad_names_flows() + hallucinated_flows()


def cassette_flows() -> list[http.HTTPFlow]:
    return mastra_flows() + hallucinated_flows()


class Sample(NamedTuple):
    name: str  # the file under flows/
    write: Callable[[Path, list[http.HTTPFlow]], Path]
    flows: Callable[[], list[http.HTTPFlow]]


SAMPLES = [
    Sample("mastra-choice-mismatch.mitm", write_flows, mastra_flows),
    Sample("bad-names.mitm", write_flows, bad_names_flows),
    Sample("hallucinated-call.mitm", write_flows, hallucinated_flows),
    Sample("clean.mitm", write_flows, clean_flows),
    Sample("mcp-session.mitm", write_flows, mcp_flows),
    Sample("all-cases.har", write_har, all_case_flows),
    Sample("cassettes/test_agent.yaml", write_cassette, cassette_flows),
]


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2] / "flows"
    for sample in SAMPLES:
        path = out / sample.name
        path.parent.mkdir(parents=True, exist_ok=True)
        sample.write(path, sample.flows())
        print(f"wrote {path} ({path.stat().st_size} bytes)")
    return 0
