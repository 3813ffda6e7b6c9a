"""The glue between flows and the core (toolnames_core/mitm_flows.py)."""

import gzip

import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import strategies as st
from mitmproxy import http
from mitmproxy.net import encoding as encoding_module
from mitmproxy.test import tflow

from toolnames_core import client_label
from toolnames_mitm import flows as mitm_flows
from toolnames_mitm import signing


@pytest.mark.parametrize(
    "host_header",
    [
        "api.openai.com",
        "API.OpenAI.com:443",
        "127.0.0.1:8080",
        "[::1]:8080",
        "xn--bcher-kva.example",  # punycode, which pretty_host shows decoded
        "not a host!",
        "",
        None,
    ],
)
def test_host_is_what_pretty_host_says_every_time(host_header):
    f = tflow.tflow()
    if host_header is None:
        f.request.headers.pop("Host", None)
    else:
        f.request.headers["Host"] = host_header
    assert mitm_flows.host(f.request) == f.request.pretty_host
    assert mitm_flows.host(f.request) == f.request.pretty_host  # remembered, still the same


@pytest.mark.parametrize("version", ["HTTP/2.0", "HTTP/3"])
@pytest.mark.parametrize(
    "authority,host_header",
    [("generativelanguage.googleapis.com", None), ("", "api.openai.com"), ("", None)],
)
def test_host_of_an_http2_or_3_request_comes_from_its_authority_first(
    version, authority, host_header
):
    f = tflow.tflow()
    f.request.http_version = version
    f.request.authority = authority
    f.request.headers.pop("Host", None)
    if host_header:
        f.request.headers["Host"] = host_header
    assert mitm_flows.host(f.request) == f.request.pretty_host


def test_hosts_remembered_are_bounded(monkeypatch):
    monkeypatch.setattr(mitm_flows, "_hosts", {})
    f = tflow.tflow()
    for i in range(mitm_flows._MAX_HOSTS + 10):
        f.request.headers["Host"] = f"h{i}.example"
        assert mitm_flows.host(f.request) == f"h{i}.example"
    assert len(mitm_flows._hosts) <= mitm_flows._MAX_HOSTS


SIGV4 = (
    b"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/bedrock/aws4_request, "
    b"SignedHeaders=host;x-amz-date, Signature=" + b"0" * 64
)


@pytest.mark.parametrize(
    "fields",
    [
        [],
        [(b"Host", b"API.OpenAI.com:443"), (b"Authorization", b"Bearer sk-x")],
        [(b"HOST", b"a.example"), (b"host", b"b.example")],  # folded, as get folds
        [(b"content-encoding", b"gzip"), (b"Content-Encoding", b"identity")],
        [(b"Content-Encoding", b"br, gzip")],
        [(b"authorization", b"Bearer x"), (b"Authorization", SIGV4)],  # the second one signs
        [(b"Authorization", SIGV4), (b"authorization", b"Bearer x")],  # the first one does
        [(b"X-Host", b"c.example"), (b"Content-Encodings", b"gzip"), (b"Authorisation", SIGV4)],
        [(b"Host", "caf\u00e9.example".encode("latin-1"))],  # not UTF-8
    ],
)
def test_incoming_reads_in_one_walk_what_each_lookup_reads(fields):
    f = tflow.tflow()
    f.request.method, f.request.path = "POST", "/v1/chat/completions"
    body = b'{"model": "m", "messages": []}'
    encoding = http.Headers(fields).get("content-encoding", "")
    try:
        raw = encoding_module.encode(body, encoding) if encoding else body
    except ValueError:
        raw = body
    f.request.headers = http.Headers(fields)
    f.request.raw_content = raw
    seen = mitm_flows.incoming(f, 0)
    assert seen.host == mitm_flows.host(f.request) == f.request.pretty_host
    assert (seen.content, seen.problem) == mitm_flows.request_content(f.request, 0)
    assert seen.signed == signing.signed_by(f.request)
    signs = any(k.lower() == b"authorization" and v == SIGV4 for k, v in fields)
    assert (seen.signed is not None) == signs


@pytest.mark.parametrize(
    "fields",
    [
        [],
        [(b"Content-Type", b"application/json")],
        [(b"content-type", b"text/event-stream"), (b"X-Other", b"1")],
        [(b"CONTENT-TYPE", b"a"), (b"x", b"y"), (b"content-type", b"b")],  # folded, as get folds
        [(b"content-type", b"")],
        [(b"content-type", "caf\u00e9".encode("latin-1"))],  # not UTF-8
    ],
)
def test_header_reads_as_headers_get_does(fields):
    f = tflow.tflow(resp=True)
    f.response.headers = http.Headers(fields)
    assert mitm_flows.header(f.response, b"content-type") == f.response.headers.get(
        "content-type", ""
    )


@pytest.mark.parametrize("encoding", [None, "gzip", "identity", "", "br, nonsense"])
@pytest.mark.parametrize("strict", [True, False])
def test_content_is_what_get_content_gives(encoding, strict):
    f = tflow.tflow()
    f.request.content = b'{"tools": []}'
    if encoding is not None:
        f.request.headers["content-encoding"] = encoding
        if encoding == "gzip":
            f.request.raw_content = gzip.compress(b'{"tools": []}')
    try:
        expected = f.request.get_content(strict=strict)
    except ValueError:
        with pytest.raises(ValueError):
            mitm_flows.content(f.request, strict=strict)
    else:
        assert mitm_flows.content(f.request, strict=strict) == expected


@pytest.mark.parametrize(
    "fields",
    [
        [],
        [(b"Content-Type", b"application/json"), (b"Content-Length", b"2")],
        [(b"content-length", b"13"), (b"X-Other", b"1")],  # the length it already has
        [(b"Content-Length", b"1"), (b"x", b"y"), (b"CONTENT-LENGTH", b"2")],  # two: one stays
        [(b"transfer-encoding", b"chunked"), (b"content-length", b"5")],  # the framing decides
        [(b"Content-Encoding", b"gzip"), (b"content-length", b"3")],  # encoded by mitmproxy
        [(b"content-encoding", b"identity")],
        [(b"content-encoding", b"")],
        [(b"content-encoding", b"nonsense"), (b"content-length", b"3")],  # dropped, as mitmproxy
    ],
)
@pytest.mark.parametrize("body", [b'{"tools": [1]}', b""])
def test_set_body_sets_what_setting_content_sets(fields, body):
    ours, theirs = tflow.tflow(resp=True), tflow.tflow(resp=True)
    for f in (ours, theirs):
        f.request.headers = http.Headers(fields)
        f.request.raw_content = b"old body"
    mitm_flows.set_body(ours.request, body)
    theirs.request.content = body
    assert ours.request.headers.fields == theirs.request.headers.fields
    assert ours.request.raw_content == theirs.request.raw_content


# Fields named like the one set (in any case, any number of times, anywhere), and others.
_SOME_FIELDS = st.lists(
    st.tuples(
        st.sampled_from(
            [b"accept-encoding", b"Accept-Encoding", b"ACCEPT-ENCODING", b"x", b"Host"]
        ),
        st.binary(max_size=3),
    ),
    max_size=6,
)


@given(fields=_SOME_FIELDS)
@example(fields=[])
@example(fields=[(b"Accept-Encoding", b"gzip, br"), (b"x", b"y")])
@example(fields=[(b"accept-encoding", b"gzip"), (b"x", b"y"), (b"ACCEPT-ENCODING", b"br")])
@example(fields=[(b"Host", b"a"), (b"Accept-Encoding-X", b"z")])  # a longer name: another
def test_set_header_sets_what_mitmproxys_setter_sets(fields):
    theirs = http.Headers(fields)
    message = tflow.tflow().request
    message.headers = http.Headers(fields)
    mitm_flows.set_header(message, b"accept-encoding", b"identity")
    theirs["accept-encoding"] = "identity"
    assert message.headers.fields == theirs.fields


CLIENTS = [
    [(b"User-Agent", b"OpenAI/Python 3.57.0"), (b"X-Stainless-Runtime", b"CPython")],
    [(b"user-agent", b"OpenAI/Python 3.57.0"), (b"x-stainless-runtime", b"PyPy")],
    [(b"x-goog-api-client", b"google-genai-sdk/3.6.1 gl-python/3.13.0")],
    [(b"x-stainless-lang", b"js"), (b"x-stainless-package-version", b"6.1.0")],
    [(b"User-Agent", b"curl/8.0"), (b"user-agent", b"\xe2\x80\xae evil")],  # joined, escaped
    [(b"Host", b"api.openai.com")],
]


def test_the_client_is_named_as_its_headers_tell_once_read_in_one_walk():
    # Named from a memo of the header values after the first time: each set of values keeps
    # its own label, however often and in whatever order they come.
    for fields in [*CLIENTS, *reversed(CLIENTS), *CLIENTS]:
        request = tflow.tflow().request
        request.headers = http.Headers(fields)
        expected = client_label(lambda name, r=request: r.headers.get(name, ""))
        assert mitm_flows.client(request) == expected
    assert mitm_flows.client(request) is None


@pytest.mark.parametrize(
    "version,chunked", [("HTTP/1.1", True), ("HTTP/1.0", False), ("HTTP/2.0", False)]
)
def test_an_unsized_response_is_framed_as_its_client_allows(version, chunked):
    f = tflow.tflow(resp=True)
    f.request.http_version = version
    f.response.headers["Content-Length"] = "531"
    mitm_flows.unsized(f)
    assert "content-length" not in f.response.headers
    assert f.response.headers.get("transfer-encoding") == ("chunked" if chunked else None)


def test_a_copied_flow_shares_no_metadata_entry_with_the_live_one():
    # The record's entries are shared between live flows' metadata (record.py, _EachOnce),
    # never to be changed in place: mitmproxy copies metadata deeply when it copies a flow
    # (and so when toolnames_save redacts one), so no copy can change them.
    f = tflow.tflow()
    f.metadata["toolnames"] = {"findings": [{"code": "name-invalid-chars"}]}
    copied = f.copy()
    assert copied.metadata == f.metadata
    assert copied.metadata["toolnames"]["findings"][0] is not f.metadata["toolnames"]["findings"][0]
