"""The response side, format by format: the same findings however a stream is split."""

import dataclasses
import json

import pytest

from tests.testkit import every_split
from tests.testkit import judge
from tests.testkit import sse
from toolnames_core import bodies
from toolnames_core.formats import FORMATS
from toolnames_core.streams import StreamTap


def chat_request(tool_choice=None, tools=("get_weather",)):
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    if tools:
        body["tools"] = [
            {"type": "function", "function": {"name": n, "parameters": {}}} for n in tools
        ]
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    return json.dumps(body).encode()


def chat_call_chunks(name, arguments='{"city":"Paris"}', index=0):
    # Shaped as in vercel/ai's openai-chat-language-model.test.ts (docs/providers.md §2):
    # the name comes once, arguments follow in fragments.
    first = {
        "index": index,
        "id": f"call_{index}",
        "type": "function",
        "function": {"name": name, "arguments": ""},
    }
    chunks = [
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": None, "tool_calls": [first]},
                    "finish_reason": None,
                }
            ],
        }
    ]
    for i in range(0, len(arguments), 7):
        fragment = {"index": index, "function": {"arguments": arguments[i : i + 7]}}
        chunks.append(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "choices": [
                    {"index": 0, "delta": {"tool_calls": [fragment]}, "finish_reason": None}
                ],
            }
        )
    return chunks


def finish(reason="tool_calls"):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": reason}],
    }


PARALLEL_ARGS = json.dumps(
    {
        "tool_uses": [
            {"recipient_name": "functions.get_weather", "parameters": {}},
            {"recipient_name": "functions.get_time", "parameters": {}},
        ]
    }
)

CHAT_STREAMS = [
    pytest.param(
        chat_request(), [*chat_call_chunks("get_weather"), finish()], [], id="offered-call"
    ),
    pytest.param(
        chat_request(),
        [*chat_call_chunks("search.web"), finish()],
        [("response-unknown-tool", "search.web")],
        id="unknown-call",
    ),
    pytest.param(
        chat_request(),
        [*chat_call_chunks("multi_tool_use.parallel", PARALLEL_ARGS), finish()],
        [
            ("response-unknown-tool", "multi_tool_use.parallel"),
            ("response-unknown-tool", "get_time"),
        ],
        id="parallel-wrapper-unwrapped",
    ),
    pytest.param(
        chat_request(
            {"type": "function", "function": {"name": "get_weather"}},
            tools=("get_weather", "get_time"),
        ),
        [*chat_call_chunks("get_time"), finish()],
        [("response-ignored-choice", "get_time")],
        id="forced-choice-ignored",
    ),
    pytest.param(
        chat_request("required"),
        [
            {
                "id": "x",
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {"content": "hi"}}],
            },
            finish("stop"),
        ],
        [("response-ignored-choice", "no tool")],
        id="required-but-no-call",
    ),
]


def findings_for(request: bytes, chunks: list[bytes], api="openai-chat", complete=True):
    tap = StreamTap(FORMATS[api])
    forwarded = b"".join(tap(chunk) for chunk in [*chunks, b""])
    found = judge(request, api, tap.calls(), complete and tap.ended)
    return forwarded, [(f.code, f.message) for f in found]


@pytest.mark.parametrize("request_body,events,expected", CHAT_STREAMS)
def test_chat_stream_findings_do_not_depend_on_how_the_stream_is_split(
    request_body, events, expected
):
    raw = sse(events)
    for chunks in every_split(raw):
        forwarded, found = findings_for(request_body, chunks)
        assert forwarded == raw
        assert [code for code, _ in found] == [code for code, _ in expected]
        for (_, message), (_, needle) in zip(found, expected, strict=True):
            assert needle in message


def test_chat_stream_cut_off_before_any_call_claims_nothing_about_the_forced_choice():
    request = chat_request({"type": "function", "function": {"name": "get_weather"}})
    raw = sse(
        [
            {
                "id": "x",
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {"role": "assistant"}}],
            }
        ],
        done=False,
    )
    tap = StreamTap(FORMATS["openai-chat"])
    tap(raw)  # the connection drops: mitmproxy never sends the final b""
    assert judge(request, "openai-chat", tap.calls(), complete=tap.ended) == []


def test_chat_non_streamed_response_calls_are_read_with_their_paths():
    body = {
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "{}"},
                        },
                        {"id": "c2", "type": "custom", "custom": {"name": "grammar", "input": "x"}},
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    calls, problem = bodies.read_response_calls(
        FORMATS["openai-chat"], "application/json", json.dumps(body).encode()
    )
    assert problem is None
    assert [(c.name, c.path, c.kind) for c in calls] == [
        ("get_weather", "choices[0].message.tool_calls[0].function.name", "function"),
        ("grammar", "choices[0].message.tool_calls[1].custom.name", "custom"),
    ]


@pytest.mark.parametrize("content", [b"<html>502</html>", b"", b"[1,2]", b'{"choices": "nope"}'])
def test_odd_response_bodies_yield_no_calls_and_no_exception(content):
    assert bodies.read_response_calls(FORMATS["openai-chat"], "application/json", content) == (
        [],
        None,
    )


WHOLE = b'{"choices": [{"message": {"tool_calls": [{"function": {"name": "f"}}]}}]}'


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"{" * 5000, "the body ends before its JSON does"),
        (WHOLE[:40], "the body ends before its JSON does"),  # a gzip body cut, decoded so far
        (WHOLE[:20] + b"  \r\n", "the body ends before its JSON does"),  # no tool key yet
        (WHOLE[:-3] + b"}}", "the body is not JSON"),  # ends right, but is broken inside
        (b'{"tool_calls": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "the JSON is nested"),
    ],
)
def test_an_answer_that_breaks_off_or_does_not_parse_is_unreadable_never_clean(content, why):
    calls, problem = bodies.read_response_calls(FORMATS["openai-chat"], "application/json", content)
    assert calls == []
    assert problem.code == "response-unreadable" and problem.severity == "warning"
    assert problem.message.startswith(f"the tool calls in the answer were not checked: {why}")


def test_a_failing_collector_never_breaks_the_stream():
    class Exploding:
        def event(self, data):
            raise RuntimeError("boom")

        def calls(self):
            return []

    fmt = FORMATS["openai-chat"]
    tap = StreamTap(dataclasses.replace(fmt, stream_collector=Exploding))
    raw = sse([{"a": 1}, {"b": 2}])
    assert tap(raw) == raw
    assert tap(b"") == b""
    assert tap.problem().code == "response-unreadable"
    assert "boom" in tap.problem().message


# Every streamed format, as the stand-in provider sends it: a call to a tool that was never
# offered must be found at every byte split, and every byte must pass through unchanged.
STREAMED_FORMATS = {
    "openai-chat": (
        "/v1/chat/completions",
        {
            "model": "m",
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "get_weather"}}],
        },
    ),
    "openai-responses": (
        "/v1/responses",
        {
            "model": "m",
            "stream": True,
            "input": "hi",
            "tools": [{"type": "function", "name": "get_weather"}],
        },
    ),
    "anthropic-messages": (
        "/v1/messages",
        {
            "model": "m",
            "max_tokens": 10,
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
        },
    ),
    "gemini": (
        "/v1beta/models/g:streamGenerateContent?alt=sse",
        {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": "get_weather"}]}],
        },
    ),
    "bedrock-converse": (
        "/model/m/converse-stream",
        {
            "messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "toolConfig": {
                "tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {}}}}]
            },
        },
    ),
}


@pytest.fixture(scope="module")
def provider_streams():
    import urllib.request

    from standin import StandinProvider

    streams = {}
    with StandinProvider() as provider:
        for api, (path, body) in STREAMED_FORMATS.items():
            request = urllib.request.Request(
                provider.url + path,
                json.dumps(body).encode(),
                {"content-type": "application/json", "x-standin-call": "get_weather,drop_tables"},
            )
            with urllib.request.urlopen(request) as response:
                streams[api] = (response.headers["content-type"], response.read())
    return streams


@pytest.mark.parametrize("api", sorted(STREAMED_FORMATS))
def test_every_format_finds_the_unoffered_call_at_every_byte_split(provider_streams, api):
    content_type, raw = provider_streams[api]
    request = json.dumps(STREAMED_FORMATS[api][1]).encode()
    assert bodies.read_response_calls(FORMATS[api], content_type, raw)[1] is None
    for chunks in every_split(raw):
        forwarded, found = findings_for(request, chunks, api)
        assert forwarded == raw
        assert [code for code, _ in found] == ["response-unknown-tool"], api
        assert "'drop_tables'" in found[0][1]


@pytest.mark.parametrize(
    "api, rule, says, never",
    [
        ("openai-chat", "openai", "can make every later request fail", "fails no later request"),
        # Ollama checks no names: sent back in the history, the call fails nothing.
        ("ollama", "ollama", "it fails no later request, but the app has no such tool", "every"),
        # Chat Completions to Ollama (its port, or toolnames_rule): the rule decides, not the API.
        ("openai-chat", "ollama", "it fails no later request", "every later request"),
    ],
)
def test_a_call_never_offered_says_what_it_does_later_as_the_rule_has_it(api, rule, says, never):
    request = chat_request()  # Ollama's /api/chat takes OpenAI's function tools too
    answer = {"message": {"role": "assistant", "tool_calls": [{"function": {"name": "drop_x"}}]}}
    if api == "openai-chat":
        answer = {"choices": [answer]}
    calls = FORMATS[api].read_calls(answer)

    (finding,) = judge(request, api, calls, rule=rule)

    assert finding.code == "response-unknown-tool" and "drop_x" in finding.message
    assert says in finding.message and never not in finding.message
