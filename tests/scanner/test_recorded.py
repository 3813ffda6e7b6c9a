"""The recorded exchange the readers make (scanner.recorded): its endpoint, its bodies."""

import gzip
import json

from samples import recordings as samples
from scanner import recorded
from tests.testkit import scan_json


def test_endpoint_never_shows_the_query_where_gemini_keys_travel(capsys, tmp_path):
    flow = samples.chat_flow(
        "gemini",
        {"contents": [], "tools": [{"functionDeclarations": [{"name": "1bad"}]}]},
        host="generativelanguage.googleapis.com",
        path="/v1beta/models/gemini-2.0-flash:generateContent?key=AIza-not-a-key",
    )
    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "g.mitm", [flow]))

    assert [r["code"] for r in rows] == ["name-invalid-start"]
    assert rows[0]["endpoint"] == (
        "POST generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"
    )
    assert "AIza" not in json.dumps(rows)


def test_a_request_body_whose_content_encoding_does_not_decode_is_reported_as_unreadable(
    capsys, tmp_path
):
    flow = samples.chat_flow("bad-gzip", samples.bad_names_body())
    flow.request.headers["content-encoding"] = "gzip"
    flow.request.raw_content = b"\x1f\x8b\x08not really gzip"

    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "g.mitm", [flow]))

    assert [r["code"] for r in rows] == ["request-unreadable"]
    assert "its content-encoding could not be decoded" in rows[0]["message"]


def test_headers_from_har_lists_and_cassette_mappings_are_read_alike():
    har = [{"name": "Content-Encoding", "value": "gzip"}, ["X-Other", "1"]]
    cassette = {"Content-Encoding": ["gzip", "br"], "X-Other": 1}

    assert recorded.header_map(har) == {"content-encoding": "gzip", "x-other": "1"}
    assert recorded.header_map(cassette) == {"content-encoding": "gzip", "x-other": "1"}


def test_a_url_splits_into_host_and_path_with_its_query():
    assert recorded.split_url("https://api.openai.com/v1/chat/completions?a=1") == (
        "api.openai.com",
        "/v1/chat/completions?a=1",
        443,
    )
    assert recorded.split_url("https://example.com") == ("example.com", "/", 443)
    # The port a rule may depend on (Ollama's), as the live addon sees the request's.
    assert recorded.split_url("http://localhost:11434/api/chat").port == 11434


def test_a_body_is_decoded_as_the_addon_reads_it():
    raw = gzip.compress(b'{"tools": []}')

    assert recorded.decode_body(raw, "gzip") == (b'{"tools": []}', None)
    # Already decoded text under its content-encoding header, as HAR files store it.
    assert recorded.decode_body(b'{"tools": []}', "gzip") == (b'{"tools": []}', None)
    body, problem = recorded.decode_body(b"\x00\x01 not gzip", "gzip")
    assert body is None and "content-encoding could not be decoded" in problem
    # An answer that does not decode is kept as it came, with why it cannot be read.
    body, problem = recorded.response_body(b"\x00\x01 not gzip", "gzip")
    assert body == b"\x00\x01 not gzip" and "content-encoding could not be decoded" in problem
    assert recorded.response_body(raw, "gzip") == (b'{"tools": []}', None)
