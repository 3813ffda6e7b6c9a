"""The stand-in's HTTP side (standin.server): routing, stream pacing and breaks, keep-alive,
what it records, its introspection endpoints, its command line.
"""

from __future__ import annotations

import base64
import http.client
import json
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from standin import StandinProvider
from standin.server import accepts_coding
from tests.standin.wire import ANTHROPIC
from tests.standin.wire import CHAT
from tests.standin.wire import anthropic_request
from tests.standin.wire import chat_answer
from tests.standin.wire import chat_request
from tests.standin.wire import post
from tests.standin.wire import post_json
from tests.standin.wire import raw_request
from tests.standin.wire import sse


def test_unknown_path_is_404_and_get_on_an_endpoint_is_405(provider):
    assert post(provider, "/v1/embeddings", {})[0] == 404
    conn = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=10)
    conn.request("GET", CHAT)
    assert conn.getresponse().status == 405


def test_delay_header_spaces_events_but_the_first_arrives_at_once(provider):
    body = {**chat_request(choice="required"), "stream": True}
    start = time.monotonic()
    sock = raw_request(provider.port, CHAT, body, {"x-standin-delay-ms": "300"})
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
        [sys.executable, "-m", "standin", "--port", "0", "--quiet"],
        stdout=subprocess.PIPE,
        text=True,
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


def test_a_provider_that_records_nothing_still_answers_for_load_runs():
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with StandinProvider(record=False) as quiet:
        status, answer = post_json(quiet, "/v1/chat/completions", body)
        assert status == 200
        assert answer["choices"][0]["message"]["role"] == "assistant"
        assert quiet.requests == []


@pytest.mark.parametrize(
    "accept,coding,admitted",
    [
        ("gzip, deflate, br, zstd", "gzip", True),
        ("gzip, deflate, br, zstd", "br", True),
        ("identity", "gzip", False),
        ("", "gzip", False),
        ("GZIP;q=0.5", "gzip", True),
        ("gzip;q=0", "gzip", False),
        ("gzip;q=0.000", "gzip", False),
        ("*", "br", True),
        ("deflate", "gzip", False),
    ],
)
def test_a_stream_is_compressed_only_with_a_coding_the_client_accepts(accept, coding, admitted):
    assert accepts_coding(accept, coding) is admitted
