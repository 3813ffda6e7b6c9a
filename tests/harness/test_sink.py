"""The upstream for load runs that answers without reading (harness.sink)."""

import http.client

import pytest

from harness.sink import http_answer
from harness.sink import start_sink

ANSWER = http_answer(200, (("content-type", "application/json"), ("x-request-id", "r1")), b"{}")


def test_an_answer_carries_its_own_length_and_reason():
    assert http_answer(200, (("content-length", "99"),), b"abc") == (
        b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc"
    )
    assert http_answer(429, (), b"").startswith(b"HTTP/1.1 429 Too Many Requests\r\n")


@pytest.mark.e2e  # the sink in a process of its own
def test_every_request_on_a_connection_gets_the_same_answer(tmp_path):
    proc = start_sink(tmp_path, ANSWER)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", proc.port, timeout=10)
        for body in (b'{"a": 1}', b"x" * 3_000_000, b""):
            conn.request("POST", "/v1/chat/completions", body)
            response = conn.getresponse()
            assert (response.status, response.read()) == (200, b"{}")
            assert response.getheader("x-request-id") == "r1"
        conn.close()
    finally:
        assert proc.stop() == 0  # it ends cleanly on SIGTERM


@pytest.mark.e2e
def test_a_chunked_request_is_refused_not_misread(tmp_path):
    proc = start_sink(tmp_path, ANSWER)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", proc.port, timeout=10)
        conn.request("POST", "/", iter([b"abc"]), {"transfer-encoding": "chunked"})
        response = conn.getresponse()
        assert response.status == 501
        conn.close()
    finally:
        proc.stop()
