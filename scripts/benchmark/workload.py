"""What the benchmark sends: chat completions bodies with 1 to 1,000 tools, large
conversations, bodies without tools; and the headers the openai SDK sends with them."""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "ASKED",
    "CHAT_PATH",
    "PROVIDER_RESPONSE_HEADERS",
    "QUICK_RPS_CASES",
    "SDK_LOAD_HEADERS",
    "SDK_REQUEST_HEADERS",
    "Case",
    "asked_again",
    "cases",
    "chat_answer",
    "chat_body",
    "chat_tool",
    "earlier_requests",
    "encode",
    "invoke_body",
    "ollama_body",
    "mcp_name",
    "mcp_named",
    "renaming_requests",
    "small_body",
    "stream_chunks",
    "tool_name",
]

CHAT_PATH = "/v1/chat/completions"

_WORD_TEXT = (
    "the a to of and in is it you that for on with as this be are can not or by what your from "
    "at an if will have do we use when which one all but more so also how there these then each "
    "value request model answer customer order invoice report data table list file code line "
    "error result test change version server client user account payment date time number name "
    "field query page item text message summary update option method return call variable class "
    "function tool loop string array object key index build deploy config check run send read"
)
_WORDS = _WORD_TEXT.split()
_VERBS = ("get", "search", "create", "update", "delete", "list", "send", "fetch", "run", "check")
_NOUNS = (
    "weather",
    "invoice",
    "customer",
    "ticket",
    "calendar_event",
    "document",
    "repository",
    "order",
    "message",
    "report",
)


def _prose(rng: random.Random, words: int) -> str:
    out = []
    for i in range(words):
        word = rng.choice(_WORDS)
        out.append(word.capitalize() if i == 0 or out[-1].endswith(".") else word)
        if rng.random() < 0.08:
            out[-1] += "."
    return " ".join(out) + "."


def tool_name(i: int) -> str:
    base = f"{_VERBS[i % 10]}_{_NOUNS[(i // 10) % 10]}"
    return base if i < 100 else f"{base}_{i // 100}"


def chat_tool(i: int) -> dict:
    """A function tool shaped like the ones agent SDKs send: a sentence or two and a
    JSON schema with a few described properties (about 800 bytes of JSON)."""
    noun = _NOUNS[(i // 10) % 10].replace("_", " ")
    return {
        "type": "function",
        "function": {
            "name": tool_name(i),
            "description": (
                f"{_VERBS[i % 10].capitalize()} a {noun} by its id or by a free-text query. "
                f"Returns a JSON object with the {noun} fields that were asked for, or an "
                "error message when nothing matches."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": f"The {noun} id, e.g. abc_12345."},
                    "query": {
                        "type": "string",
                        "description": "Free text to match when no id is known.",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 100,
                        "description": "How many results to return at most.",
                    },
                    "fields": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Which fields to include; all of them when empty.",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            "strict": False,
        },
    }


def _turn(rng: random.Random, n: int, tools: int) -> list[dict]:
    """One round of a conversation; with tools, the assistant calls one and reads its result."""
    messages: list[dict] = [{"role": "user", "content": _prose(rng, 60)}]
    if tools:
        call_id = f"call_{n:06d}"
        name = tool_name(n % tools)
        arguments = json.dumps({"query": _prose(rng, 6), "limit": 5})
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": call_id,
                "content": json.dumps({"results": [_prose(rng, 12) for _ in range(3)]}),
            },
        ]
    messages.append({"role": "assistant", "content": _prose(rng, 80)})
    return messages


def chat_body(tools: int, size: int = 0, seed: int = 0) -> dict:
    """A chat completions request: a system prompt, conversation rounds until the body is
    about ``size`` bytes (one round at least), a last user message, and ``tools`` tools."""
    rng = random.Random(seed)
    messages = [{"role": "system", "content": _prose(rng, 120)}]
    approx = 0
    n = 0
    while n == 0 or approx < size:
        turn = _turn(rng, n, tools)
        approx += len(json.dumps(turn))
        messages += turn
        n += 1
    messages.append({"role": "user", "content": _prose(rng, 30)})
    body: dict = {"model": "gpt-4.1", "messages": messages}
    if tools:
        body["tools"] = [chat_tool(i) for i in range(tools)]
        body["tool_choice"] = "auto"
    return body


def invoke_body(tools: int, mcp: bool = False, seed: int = 0) -> dict:
    """A Bedrock InvokeModel request with an Anthropic body, as AnthropicBedrock sends it (no
    model, no stream: both are in the path): a system prompt, one user message and ``tools``
    tools, chat_tool's in Anthropic's shape; their names as an MCP client gives them if
    ``mcp``."""
    rng = random.Random(seed)
    offered = []
    for i in range(tools):
        function = chat_tool(i)["function"]
        name = mcp_name(function["name"]) if mcp else function["name"]
        offered.append(
            {
                "name": name,
                "description": function["description"],
                "input_schema": function["parameters"],
            }
        )
    body: dict = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 1024,
        "system": _prose(rng, 120),
        "messages": [{"role": "user", "content": _prose(rng, 30)}],
    }
    if offered:
        body["tools"] = offered
    return body


def ollama_body(tools: int, mcp: bool = False, seed: int = 0) -> dict:
    """An Ollama /api/chat request as the ollama client sends it: a system prompt, one user
    message and ``tools`` tools, chat_tool's (Ollama takes OpenAI's function shape), streamed
    (Ollama's default, said as the client says it); their names as an MCP client gives them if
    ``mcp``."""
    rng = random.Random(seed)
    offered = [chat_tool(i) for i in range(tools)]
    for tool in offered if mcp else ():
        tool["function"]["name"] = mcp_name(tool["function"]["name"])
    body: dict = {
        "model": "qwen3:8b",
        "stream": True,
        "messages": [
            {"role": "system", "content": _prose(rng, 120)},
            {"role": "user", "content": _prose(rng, 30)},
        ],
    }
    if offered:
        body["tools"] = offered
    return body


def small_body() -> dict:
    rng = random.Random(1)
    return {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": _prose(rng, 25)},
        ],
    }


def mcp_named(raw: bytes) -> bytes:
    """The same body with every tool named as MCP clients name them (``github.create_issue``),
    a name OpenAI's rule rejects, and the calls in its history naming them alike: what fix
    mode's renaming has to alias, every tool and every call of it."""
    body = json.loads(raw)
    for tool in body.get("tools", []):
        function = tool["function"]
        function["name"] = mcp_name(function["name"])
    for message in body.get("messages", []):
        for call in message.get("tool_calls") or ():
            call["function"]["name"] = mcp_name(call["function"]["name"])
    return encode(body)


def earlier_requests(raw: bytes, rounds: int) -> list[bytes]:
    """The requests a chat client sent on its way to ``raw``, one a round, oldest first and
    ``raw`` last, ``rounds`` in all (fewer if the conversation holds fewer): a client resends
    the whole history every turn, a round longer each time. A round begins at a user
    message; each earlier request ends with ``raw``'s last message, as if the user asked it
    then, and holds everything else ``raw`` holds (its tools, its model)."""
    body = json.loads(raw)
    messages = body["messages"]
    starts = [i for i, m in enumerate(messages[:-1]) if m.get("role") == "user"]
    cuts = starts[max(0, len(starts) - (rounds - 1)) :]
    earlier = [encode({**body, "messages": [*messages[:i], messages[-1]]}) for i in cuts]
    return [*earlier, raw]


def asked_again(raw: bytes, count: int) -> list[bytes]:
    """``raw`` and ``count - 1`` more requests of its conversation, each asking its last
    question otherwise (the same tools, the same history): as a chat client's next request,
    each shares with the others all but its last message and what follows it, and none is
    another's bytes."""
    body = json.loads(raw)
    *history, last = body["messages"]
    again = [
        encode({**body, "messages": [*history, {**last, "content": f"{last['content']} ({n})"}]})
        for n in range(1, count)
    ]
    return [raw, *again]


# The requests fix mode's renaming is timed over, in turn, for each body: a proxy never gets
# one request's bytes twice, and fix mode keeps what it searched of a large body for the next
# one (its splice, addon/toolnames_core/jsonsplice.py), which the same bytes again would
# flatter. More than it keeps, so that each is searched past what it shares with another.
ASKED = 4


def renaming_requests(raw: bytes) -> list[bytes]:
    """What fix mode's renaming is timed over for the body ``raw``, in turn, in (a), (b) and
    their profiles: its every tool and call MCP-named (``mcp_named``), asked ASKED ways."""
    return asked_again(mcp_named(raw), ASKED)


def mcp_name(name: str) -> str:
    """``get_weather`` as an MCP client names it: ``get.weather``."""
    return name.replace("_", ".", 1)


def encode(body: dict) -> bytes:
    # What the openai SDK sends: compact separators, raw UTF-8.
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def chat_answer(call: str | None = None) -> bytes:
    """The answer (a) and (b) give: text, as the stand-in answers a request that asks for no
    call, or a call to the tool named ``call``."""
    if call is None:
        message: dict = {"role": "assistant", "content": "hello"}
    else:
        function = {"name": call, "arguments": "{}"}
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": function}],
        }
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}
    return encode(
        {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1", "choices": [choice]}
    )


def _sse(objects: list[dict]) -> list[bytes]:
    return [b"data: " + json.dumps(o, separators=(",", ":")).encode() + b"\n\n" for o in objects]


def stream_chunks(name: str) -> list[bytes]:
    """A chat completions stream calling ``name`` as the stand-in sends it, an event a chunk:
    the streamed answer of (a)'s stream rows and of benchmark.instructions."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {
            **base,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant", "content": None, "refusal": None})]
    first = {"index": 0, "id": "call_1", "type": "function"}
    out.append(chunk({"tool_calls": [{**first, "function": {"name": name, "arguments": ""}}]}))
    arguments = json.dumps({"city": "Paris", "unit": "celsius", "days": 3})
    for i in range(0, len(arguments), 10):
        fragment = {"index": 0, "function": {"arguments": arguments[i : i + 10]}}
        out.append(chunk({"tool_calls": [fragment]}))
    out.append(chunk({}, "tool_calls"))
    return [*_sse(out), b"data: [DONE]\n\n"]


@dataclass
class Case:
    label: str
    raw: bytes
    tools: int

    @property
    def size(self) -> str:
        n = len(self.raw)
        return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} kB"


# The bodies (b) sends in a --quick run, to keep it near 30 seconds.
QUICK_RPS_CASES = ("10 tools", "1000 tools", "no tools, small")


@functools.cache
def _all_cases() -> tuple[Case, ...]:
    two_mb = 2_000_000
    out = [Case(f"{n} tool{'s' if n > 1 else ''}", encode(chat_body(n)), n) for n in (1, 10, 100)]
    out.append(Case("1000 tools", encode(chat_body(1000)), 1000))
    out.append(Case("2 MB, 50 tools", encode(chat_body(50, two_mb, seed=2)), 50))
    out.append(Case("no tools, small", encode(small_body()), 0))
    out.append(Case("no tools, 2 MB", encode(chat_body(0, two_mb, seed=3)), 0))
    return tuple(out)


def cases(labels_with: Sequence[str] = (), only: Sequence[str] = ()) -> list[Case]:
    """The bodies whose label holds one of ``labels_with`` (all if empty), of those in ``only``
    (all if empty)."""
    out = list(_all_cases())
    if only:
        out = [c for c in out if c.label in only]
    if labels_with:
        out = [c for c in out if any(f in c.label for f in labels_with)]
    return out


# What the openai Python SDK sends (captured from openai 3.57 against a local socket), and what
# OpenAI answers with: header lookups walk every field, so their number shows in the hooks.
SDK_REQUEST_HEADERS = (
    ("Host", "api.openai.com"),
    ("Accept-Encoding", "gzip, deflate, br, zstd"),
    ("Connection", "keep-alive"),
    ("authorization", "Bearer sk-bench-not-a-key"),
    ("accept", "application/json"),
    ("content-type", "application/json"),
    ("user-agent", "OpenAI/Python 3.57.0"),
    ("x-stainless-lang", "python"),
    ("x-stainless-package-version", "3.57.0"),
    ("x-stainless-os", "Linux"),
    ("x-stainless-arch", "x64"),
    ("x-stainless-runtime", "CPython"),
    ("x-stainless-runtime-version", "3.13.0"),
    ("x-stainless-async", "false"),
    ("x-stainless-retry-count", "0"),
    ("x-stainless-read-timeout", "600"),
)
# The same for (b) and (c), over http.client, which sets Host and Accept-Encoding itself.
SDK_LOAD_HEADERS = {
    name: value
    for name, value in SDK_REQUEST_HEADERS
    if name.lower() not in ("host", "connection", "accept-encoding")
}
PROVIDER_RESPONSE_HEADERS = (
    ("date", "Sun, 29 Nov 2026 12:00:00 GMT"),
    ("content-type", "application/json"),
    ("connection", "keep-alive"),
    ("access-control-expose-headers", "X-Request-ID"),
    ("openai-organization", "org-bench"),
    ("openai-processing-ms", "412"),
    ("openai-version", "2020-10-01"),
    ("x-ratelimit-limit-requests", "10000"),
    ("x-ratelimit-limit-tokens", "30000000"),
    ("x-ratelimit-remaining-requests", "9999"),
    ("x-ratelimit-remaining-tokens", "29999000"),
    ("x-ratelimit-reset-requests", "6ms"),
    ("x-ratelimit-reset-tokens", "2ms"),
    ("x-request-id", "req_bench"),
    ("strict-transport-security", "max-age=31536000; includeSubDomains; preload"),
    ("cf-cache-status", "DYNAMIC"),
    ("x-content-type-options", "nosniff"),
    ("server", "cloudflare"),
    ("alt-svc", 'h3=":443"; ma=86400'),
)
