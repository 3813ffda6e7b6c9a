"""Streamed responses through a real mitmdump: they stay streams, byte for byte, and get checked."""

import http.client
import json
import re
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.testkit import wait_for_flows
from toolnames_core.formats import FORMATS

BASELINE_SCRIPT = Path(__file__).parent / "stream_everything.py"
CLIENT_TIMEOUT = 20  # only a failure guard: a buffered stream would leave the client waiting

TOOLS_CHAT = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
]

# One streamed request per format, as the stand-in provider serves them (docs/providers.md §2-§7).
STREAMS = {
    "openai-chat": (
        "/v1/chat/completions",
        {
            "model": "gpt-4o-mini",
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": TOOLS_CHAT,
        },
    ),
    "openai-responses": (
        "/v1/responses",
        {
            "model": "gpt-4.1",
            "stream": True,
            "input": "hi",
            "tools": [
                {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}
            ],
        },
    ),
    "anthropic-messages": (
        "/v1/messages",
        {
            "model": "claude-sonnet-4-6",
            "max_tokens": 64,
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
        },
    ),
    "gemini": (
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        {
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": "get_weather"}]}],
        },
    ),
    "bedrock-converse": (
        "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
        {
            "messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "toolConfig": {
                "tools": [
                    {
                        "toolSpec": {
                            "name": "get_weather",
                            "inputSchema": {"json": {"type": "object"}},
                        }
                    }
                ]
            },
        },
    ),
}


def open_stream(proxy_url: str, path: str, body: dict, headers: dict) -> http.client.HTTPResponse:
    target = urlsplit(proxy_url)
    conn = http.client.HTTPConnection(target.hostname, target.port, timeout=CLIENT_TIMEOUT)
    # What the SDKs accept (httpx, with brotli and zstandard installed): the stand-in compresses
    # only what the client accepts.
    headers = {"accept-encoding": "gzip, deflate, br, zstd", **headers}
    conn.request(
        "POST", path, json.dumps(body).encode(), {"content-type": "application/json", **headers}
    )
    response = conn.getresponse()
    assert response.status == 200, response.read()
    return response


def read_all(response: http.client.HTTPResponse) -> bytes:
    data = b""
    while chunk := response.read1(65536):
        data += chunk
    return data


@pytest.mark.parametrize("script", ["addon", "baseline"])
@pytest.mark.parametrize("api", sorted(STREAMS))
def test_first_chunk_reaches_the_client_before_the_provider_finishes(
    mitmdump, mitmdump_binary, standin, api, script
):
    proxy = mitmdump(
        binary=mitmdump_binary, **({} if script == "addon" else {"script": BASELINE_SCRIPT})
    )
    path, body = STREAMS[api]
    token = uuid.uuid4().hex
    response = open_stream(proxy.url, path, body, {"x-standin-hold": token})
    # The provider holds everything after its first event until released: if any proxy
    # buffered the stream, this read would wait for the provider and fail on the timeout.
    first = response.read1(65536)
    assert first
    standin.release(token)
    received = first + read_all(response)
    assert received == standin.requests[-1]["response_body"]


# A provider may compress its stream (Content-Encoding), each event flushed as it goes. The
# client must get the provider's bytes; gzip and deflate are read (br: see below).
@pytest.mark.parametrize(
    "api,encoding",
    [(api, None) for api in sorted(STREAMS)]
    + [(api, "gzip") for api in sorted(STREAMS)]
    + [("openai-chat", "deflate"), ("bedrock-converse", "deflate")],
)
def test_streamed_call_to_a_tool_never_offered_is_flagged_on_the_saved_flow(
    mitmdump, mitmdump_binary, standin, tmp_path, api, encoding
):
    saved = tmp_path / "flagged.mitm"
    proxy = mitmdump("--set", f"toolnames_save={saved}", binary=mitmdump_binary)
    path, body = STREAMS[api]
    headers = {"x-standin-call": "delete_everything", "x-standin-delay-ms": "5"}
    if encoding:
        headers["x-standin-encoding"] = encoding
    response = open_stream(proxy.url, path, body, headers)
    assert response.getheader("content-encoding") == encoding
    received = read_all(response)
    assert received == standin.requests[-1]["response_body"]

    (flow,) = wait_for_flows(saved, 1)
    findings = flow.metadata["toolnames"]["findings"]
    assert [f["code"] for f in findings] == ["response-unknown-tool"]
    assert "'delete_everything'" in findings[0]["message"]
    assert findings[0]["path"].startswith("events[")
    assert flow.marked == ":warning:"
    assert "Traceback" not in proxy.log_text()


def test_stream_that_breaks_off_is_saved_with_what_was_seen_and_no_exception(
    mitmdump, mitmdump_binary, standin, tmp_path
):
    saved = tmp_path / "flagged.mitm"
    proxy = mitmdump("--set", f"toolnames_save={saved}", binary=mitmdump_binary)
    path, body = STREAMS["openai-chat"]
    body = {**body, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}
    # Events: role, the call's name, argument fragments...; the provider drops the connection after 2.
    response = open_stream(
        proxy.url, path, body, {"x-standin-call": "rm_rf", "x-standin-break-after": "2"}
    )
    with pytest.raises(http.client.IncompleteRead):
        read_all(response)

    (flow,) = wait_for_flows(saved, 1)
    assert flow.error is not None
    codes = [f["code"] for f in flow.metadata["toolnames"]["findings"]]
    assert "response-unknown-tool" in codes
    assert "Traceback" not in proxy.log_text()


def _sdk_stream_events(kind: str, base_url: str) -> list:
    """Consume one streamed call with a real SDK, as an app would, and keep every event."""
    if kind == "openai-chat":
        import openai

        client = openai.OpenAI(
            base_url=base_url + "/v1", api_key="sk-test-not-a-key", max_retries=0
        )
        stream = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "hi"}],
            tools=TOOLS_CHAT,
            tool_choice={"type": "function", "function": {"name": "get_weather"}},
            stream=True,
        )
    elif kind == "openai-responses":
        import openai

        client = openai.OpenAI(
            base_url=base_url + "/v1", api_key="sk-test-not-a-key", max_retries=0
        )
        stream = client.responses.create(
            model="gpt-4.1",
            input="hi",
            tools=[
                {
                    "type": "function",
                    "name": "get_weather",
                    "parameters": {"type": "object"},
                    "strict": False,
                }
            ],
            tool_choice={"type": "function", "name": "get_weather"},
            stream=True,
        )
    else:
        import anthropic

        client = anthropic.Anthropic(base_url=base_url, api_key="test-not-a-key", max_retries=0)
        stream = client.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=64,
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"name": "get_weather", "input_schema": {"type": "object"}}],
            tool_choice={"type": "tool", "name": "get_weather"},
            stream=True,
        )
    return [event.model_dump() for event in stream]


@pytest.mark.needs_sdk
@pytest.mark.parametrize("kind", ["openai-chat", "openai-responses", "anthropic-messages"])
def test_sdk_consuming_a_stream_sees_no_difference_with_the_addon(mitmdump, mitmdump_binary, kind):
    with_addon = mitmdump(binary=mitmdump_binary)
    without = mitmdump(binary=mitmdump_binary, script=None)
    events = _sdk_stream_events(kind, with_addon.url)
    assert events == _sdk_stream_events(kind, without.url)
    assert any("get_weather" in json.dumps(e) for e in events)
    assert not re.search(r"toolnames (error|warning|fixed|blocked)", with_addon.log_text())


@pytest.mark.parametrize("coding", ["br", "gzip"])
def test_a_compressed_stream_is_read_and_forwarded_unchanged(
    mitmdump, mitmdump_binary, standin, tmp_path, coding
):
    saved = tmp_path / "flagged.mitm"
    proxy = mitmdump("--set", f"toolnames_save={saved}", binary=mitmdump_binary)
    path, body = STREAMS["openai-chat"]
    headers = {"x-standin-call": "delete_everything", "x-standin-encoding": coding}
    response = open_stream(proxy.url, path, body, headers)
    assert response.getheader("content-encoding") == coding
    received = read_all(response)
    assert received == standin.requests[-1]["response_body"]

    (flow,) = wait_for_flows(saved, 1)
    (finding,) = flow.metadata["toolnames"]["findings"]
    # Read through its coding: the call to a tool the request never offered.
    assert finding["code"] == "response-unknown-tool"
    assert "delete_everything" in finding["message"]
    proxy.wait_for_log("response-unknown-tool")
    assert "Traceback" not in proxy.log_text()


def test_fix_mode_asks_for_an_uncompressed_stream_and_gives_every_name_back(
    mitmdump, mitmdump_binary, standin, tmp_path
):
    # The client accepts gzip, and the provider would compress its stream: fix mode, which
    # must give the names back, asks for identity instead (exchange.answer_encoding).
    from toolnames_core.aliases import alias_for
    from toolnames_core.rules import RULES

    saved = tmp_path / "flagged.mitm"
    proxy = mitmdump(
        "--set", "toolnames_mode=fix", "--set", f"toolnames_save={saved}", binary=mitmdump_binary
    )
    path, body = STREAMS["openai-chat"]
    tool = {"type": "function", "function": {"name": "github.create_issue", "parameters": {}}}
    body = {**body, "tools": [tool]}
    alias = alias_for("github.create_issue", RULES["openai"])
    # The model calls the tool by the name the provider was sent: the alias.
    headers = {"x-standin-call": alias, "x-standin-encoding": "gzip"}
    response = open_stream(proxy.url, path, body, headers)
    assert response.getheader("content-encoding") is None
    received = read_all(response)
    sent = {name.lower(): value for name, value in standin.requests[-1]["headers"]}
    assert sent["accept-encoding"] == "identity"
    assert b"github.create_issue" in received and alias.encode() not in received

    (flow,) = wait_for_flows(saved, 1)
    meta = flow.metadata["toolnames"]
    assert meta["accept_encoding"] == {"from": "gzip, deflate, br, zstd", "to": "identity"}
    assert meta["restored"] == 1 and "fix_skipped" not in meta
    line = proxy.wait_for_log("restored 1 name(s) in the answer; asked for an uncompressed answer")
    assert "Traceback" not in line


def test_anticomp_lets_observe_mode_read_a_stream_the_provider_would_compress_with_br(
    mitmdump, mitmdump_binary, standin
):
    # What the finding for a coding toolnames cannot read advises: mitmproxy's anticomp asks
    # the provider for identity, and the calls in the stream are read (here a call to a tool
    # never offered).
    proxy = mitmdump("--set", "anticomp=true", binary=mitmdump_binary)
    path, body = STREAMS["openai-chat"]
    headers = {"x-standin-call": "delete_everything", "x-standin-encoding": "br"}
    response = open_stream(proxy.url, path, body, headers)
    assert response.getheader("content-encoding") is None
    read_all(response)
    line = proxy.wait_for_log("response-unknown-tool")
    assert "response-unreadable" not in proxy.log_text() and "Traceback" not in line


# A stream sent with a Content-Length (valid HTTP: buffering gateways, replay and mock servers
# send one). Fix mode's restored names change the body's length, so the length must go.
@pytest.mark.parametrize("api", sorted(STREAMS))
def test_fix_mode_sends_a_sized_stream_on_chunked_once_names_are_given_back(
    mitmdump, mitmdump_binary, standin, tmp_path, api
):
    from toolnames_core import choose_rule
    from toolnames_core.aliases import alias_for

    saved = tmp_path / "flagged.mitm"
    proxy = mitmdump(
        "--set", "toolnames_mode=fix", "--set", f"toolnames_save={saved}", binary=mitmdump_binary
    )
    path, body = STREAMS[api]
    body = json.loads(json.dumps(body).replace("get_weather", "get weather"))
    alias = alias_for("get weather", choose_rule(FORMATS[api], "127.0.0.1", ()))
    headers = {"x-standin-call": alias, "x-standin-framing": "length"}
    response = open_stream(proxy.url, path, body, headers)
    assert response.getheader("content-length") is None
    assert response.getheader("transfer-encoding") == "chunked"
    received = read_all(response)  # with the provider's length kept, this waits and times out
    # Taken once the whole answer is read: a record copied earlier holds only what the
    # stand-in had sent by then (CI once caught 679 of 3,375 bytes).
    sent = standin.requests[-1]
    assert alias.encode() in sent["response_body"] and alias.encode() not in received
    assert len(received) != len(sent["response_body"])

    (flow,) = wait_for_flows(saved, 1)
    meta = flow.metadata["toolnames"]
    assert meta["content_length_dropped"] == str(len(sent["response_body"]))
    assert meta["restored"] >= 1
    line = proxy.wait_for_log("sent the streamed answer without its Content-Length")
    assert "Traceback" not in line


def test_observe_mode_keeps_a_sized_stream_byte_for_byte_headers_included(
    mitmdump, mitmdump_binary, standin
):
    proxy = mitmdump(binary=mitmdump_binary)
    path, body = STREAMS["anthropic-messages"]
    headers = {"x-standin-call": "get_weather", "x-standin-framing": "length"}
    response = open_stream(proxy.url, path, body, headers)
    received = read_all(response)
    sent = standin.requests[-1]["response_body"]
    assert received == sent
    assert response.getheader("content-length") == str(len(sent))
    assert response.getheader("transfer-encoding") is None


@pytest.mark.needs_sdk
def test_anthropic_sdk_stream_with_a_content_length_ends_in_fix_mode(
    mitmdump, mitmdump_binary, standin
):
    # The user's report: 531 bytes promised, 522 sent, and the SDK's stream hung until its
    # read timeout. The timeout here only bounds a failure.
    import anthropic

    from toolnames_core.aliases import alias_for
    from toolnames_core.rules import RULES

    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)
    alias = alias_for("github.create_issue", RULES["anthropic"])
    client = anthropic.Anthropic(
        base_url=proxy.url,
        api_key="test-not-a-key",
        max_retries=0,
        timeout=CLIENT_TIMEOUT,
        default_headers={"x-standin-call": alias, "x-standin-framing": "length"},
    )
    stream = client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=64,
        messages=[{"role": "user", "content": "hi"}],
        tools=[{"name": "github.create_issue", "input_schema": {"type": "object"}}],
        stream=True,
    )
    events = [event.model_dump() for event in stream]
    names = [e["content_block"]["name"] for e in events if e["type"] == "content_block_start"]
    assert names == ["github.create_issue"]
    assert events[-1]["type"] == "message_stop"
    assert "Traceback" not in proxy.log_text()
