import base64
import dataclasses
import gzip
import json
import zlib

import brotli
import pytest

from tests.testkit import aws_event
from tests.testkit import every_split
from tests.testkit import sse
from tests.testkit import zstd_compress
from toolnames_core import read_signature
from toolnames_core.aliases import Restorer
from toolnames_core.exchange import Exchange
from toolnames_core.formats import FORMATS
from toolnames_core.framings import AWS_EVENT_STREAM
from toolnames_core.framings import SSE
from toolnames_core.framings import LineRewriter
from toolnames_core.rules import RULES
from toolnames_core.streams import EventDecoder
from toolnames_core.streams import StreamTap


def test_decoder_turns_aws_messages_into_event_type_keyed_dicts_and_skips_exceptions():
    raw = aws_event("contentBlockStart", {"start": {"toolUse": {"name": "x"}}}) + aws_event(
        "throttlingException", {"message": "slow down"}, message_type="exception"
    )
    decoder = EventDecoder(AWS_EVENT_STREAM)
    assert list(decoder.feed(raw)) == [{"contentBlockStart": {"start": {"toolUse": {"name": "x"}}}}]


def test_decoder_skips_sse_payloads_that_are_not_json_objects():
    decoder = EventDecoder(SSE)
    assert list(decoder.feed(b'data: [DONE]\n\ndata: [1]\n\ndata: {"ok": 1}\n\n')) == [{"ok": 1}]


# -- content-encoded streams: read through a decoder, forwarded as they came -----------------


COMPRESS = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstd_compress,
}


CALL_STREAM = sse(
    [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c",
                                "type": "function",
                                "function": {"name": "rm_rf"},
                            }
                        ]
                    },
                }
            ]
        }
    ]
)


@pytest.mark.parametrize(
    "coding,encoded",
    [
        ("gzip", gzip.compress(CALL_STREAM)),
        ("deflate", zlib.compress(CALL_STREAM)),
        ("br", brotli.compress(CALL_STREAM)),
        ("zstd", zstd_compress(CALL_STREAM)),
    ],
)
def test_a_compressed_stream_is_read_and_every_byte_forwarded_as_it_came(coding, encoded):
    for chunks in every_split(encoded):
        tap = StreamTap(FORMATS["openai-chat"], coding=coding)
        assert b"".join(tap(c) for c in [*chunks, b""]) == encoded
        assert [c.name for c in tap.calls()] == ["rm_rf"]
        assert tap.problem() is None


@pytest.mark.parametrize("coding", ["compress", "gzip, br", "br, zstd"])
def test_a_stream_in_an_encoding_without_a_decoder_is_reported_unread(coding):
    tap = StreamTap(FORMATS["openai-chat"], coding=coding)
    assert tap(b"\x8b\x00 compressed") == b"\x8b\x00 compressed"
    tap(b"")
    assert tap.calls() == []
    problem = tap.problem()
    assert (problem.code, problem.severity) == ("response-unreadable", "warning")
    assert f"the stream is compressed with {coding}; toolnames cannot read it" in problem.message


def test_a_stream_whose_gzip_is_corrupt_says_where_reading_stopped():
    tap = StreamTap(FORMATS["openai-chat"], coding="gzip")
    tap(b"not gzip")
    tap(b"")
    assert "its gzip encoding could not be decoded" in tap.problem().message


def test_an_unread_stream_with_a_forced_choice_is_not_said_to_have_ignored_it():
    body = {
        "tools": [{"type": "function", "function": {"name": "a"}}],
        "tool_choice": "required",
    }
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(json.dumps(body).encode())
    tap = exchange.stream_tap("compress")
    tap(b"\x00")
    tap(b"")
    found = exchange.check_stream(200, tap, complete=True)
    assert [f.code for f in found] == ["response-unreadable"]


@pytest.mark.parametrize("coding", ["gzip", "x-gzip", "deflate", "br", "zstd"])
@pytest.mark.parametrize("size", [1, 5, 64, 100000])
def test_fix_mode_gives_names_back_inside_a_compressed_stream_sent_on_decoded(coding, size):
    body = {"tools": [{"type": "function", "function": {"name": "github.create_issue"}}]}
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(json.dumps(body).encode(), fix=True)
    (alias,) = exchange.restorer.aliases
    tap = exchange.stream_tap(coding)
    plain = CALL_STREAM.replace(b"rm_rf", alias.encode())
    stream = COMPRESS[coding](plain)
    assert tap.decodes
    out = b"".join(tap(stream[i : i + size]) for i in range(0, len(stream), size)) + tap(b"")
    assert out == plain.replace(alias.encode(), b"github.create_issue")
    assert exchange.answer_decoded == coding and not exchange.fix_skipped
    found = exchange.check_stream(200, tap, complete=True)
    assert "response-unknown-tool" not in [f.code for f in found]


def test_fix_mode_declines_to_restore_names_in_a_stream_it_cannot_decode_and_records_why():
    body = {"tools": [{"type": "function", "function": {"name": "github.create_issue"}}]}
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(json.dumps(body).encode(), fix=True)
    (alias,) = exchange.restorer.aliases
    tap = exchange.stream_tap("gzip, br")
    stream = gzip.compress(CALL_STREAM.replace(b"rm_rf", alias.encode()))
    assert tap(stream) + tap(b"") == stream  # never re-encoded, never corrupt
    assert not tap.decodes
    (skipped,) = exchange.fix_skipped
    assert skipped.name == "github.create_issue"
    assert skipped.reason == (
        "was not given back in the answer, which came compressed with gzip, br although the "
        f"request asked for an uncompressed one: the app got calls to '{alias}'"
    )
    found = exchange.check_stream(200, tap, complete=True)
    assert [f.code for f in found] == ["response-unreadable"]


def test_a_format_that_wraps_names_in_an_event_gives_them_back_through_its_restore_event():
    # As Bedrock InvokeModel does: each event's JSON travels base64-encoded inside another.
    def wrapped(rewrite):
        def event(data: bytes) -> bytes:
            if not data.startswith(b"data: "):
                return data
            outer = json.loads(data[6:])
            inner = rewrite(base64.b64decode(outer["bytes"]))
            return b"data: " + json.dumps({"bytes": base64.b64encode(inner).decode()}).encode()

        return lambda text: b"\n".join(event(line) for line in text.split(b"\n"))

    def event(name: str) -> bytes:
        inner = json.dumps({"type": "tool_use", "name": name}).encode()
        return b"data: " + json.dumps({"bytes": base64.b64encode(inner).decode()}).encode()

    fmt = dataclasses.replace(FORMATS["openai-chat"], restore_event=wrapped)
    restorer = Restorer({"github_create_issue": "github.create_issue"})
    tap = StreamTap(fmt, restorer)
    out = tap(event("github_create_issue") + b"\n\n") + tap(b"")
    assert out == event("github.create_issue") + b"\n\n"
    # Without it, the restorer finds no name in the base64 and the app would get the alias.
    plain = StreamTap(FORMATS["openai-chat"], restorer)
    sent = event("github_create_issue") + b"\n\n"
    assert plain(sent) + plain(b"") == sent


def test_a_signed_accept_encoding_is_never_answered_with_advice_to_use_anticomp():
    # anticomp rewrites Accept-Encoding, which the signature covers: the provider would 403.
    body = {"tools": [{"type": "function", "function": {"name": "get_weather"}}]}
    for signed, advice in [
        (None, "anticomp=true"),
        (read_signature([SIGNED_ACCEPT_ENCODING], ""), "covered by its AWS SigV4 signature"),
    ]:
        exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
        exchange.signed = signed
        exchange.check_request(json.dumps(body).encode())
        tap = exchange.stream_tap("compress")
        tap(b"\x00")
        tap(b"")
        (finding,) = exchange.check_stream(200, tap, complete=True)
        assert advice in finding.message
        assert ("anticomp=true" in finding.message) == (signed is None)


SIGNED_ACCEPT_ENCODING = (
    "AWS4-HMAC-SHA256 Credential=AKIDTESTNOTAKEY/20261202/us-east-1/bedrock/aws4_request, "
    "SignedHeaders=accept-encoding;host;x-amz-date, Signature=00"
)


def test_the_tap_never_hands_mitmproxy_an_empty_piece_mid_stream():
    # An empty piece ends an HTTP/1.1 chunked body: a line not yet whole sends nothing at all.
    from toolnames_core import Exchange
    from toolnames_core.formats import FORMATS
    from toolnames_core.rules import RULES

    body = {"messages": [], "tools": [{"type": "function", "function": {"name": "github.x"}}]}
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(json.dumps(body).encode(), fix=True)
    tap = exchange.stream_tap()
    assert tap.pieces(b'data: {"choices": [') == []
    assert tap.pieces(b"]}\n\n") == [b'data: {"choices": []}\n\n']
    assert tap.pieces(b"") == []


class _CountingRestore:
    """A restore that says what it was handed; ``needle``: as a Restorer declares it."""

    def __init__(self, needle: bytes | None) -> None:
        if needle is not None:
            self.needle = needle
        self.under_way: set = set()
        self.handed: list[bytes] = []

    def __call__(self, data: bytes) -> bytes:
        self.handed.append(data)
        return data.replace(b"alias_x", b"app.x")


def test_a_restore_with_a_needle_is_handed_only_what_may_need_it_and_the_client_gets_the_same():
    # The tap's quick pass (issue 25): whole lines without the needle go on without a call,
    # unless a line is held or the restore waits on something.
    chunks = [
        b'data: {"a":1}\n\n',
        b'data: {"name":"alias_x"}\n\n',
        b'data: {"b"',  # not yet a whole line: held by the line rewriter
        b":2}\n\n",  # ends the held line: through the restore with it
        b'data: {"c":3}\n\n',
        b'data: {"d":4}\n\n',  # while the restore waits on something
    ]
    outs = {}
    for needle in (b"name", None):
        restore = _CountingRestore(needle)
        tap = StreamTap(FORMATS["openai-chat"], restore)
        out = b""
        for i, chunk in enumerate(chunks):
            if i == 5:
                restore.under_way.add("call_0")
            out += tap(chunk)
        out += tap(b"")
        outs[needle] = out, restore.handed
    assert outs[b"name"][0] == outs[None][0] == b"".join(chunks).replace(b"alias_x", b"app.x")
    assert outs[b"name"][1] == [chunks[1], chunks[2] + chunks[3], chunks[5]]
    assert outs[None][1] == [chunks[0], chunks[1], chunks[2] + chunks[3], chunks[4], chunks[5]]


@pytest.mark.parametrize(
    "api", [api for api, fmt in sorted(FORMATS.items()) if fmt.framing and fmt.stream_collector]
)
def test_fix_mode_restores_of_every_line_framed_stream_take_the_quick_pass(api):
    fmt = FORMATS[api]
    tap = StreamTap(fmt, Restorer({"alias_x": "app.x"}))
    line_framed = isinstance(tap.rewriter, LineRewriter)
    assert (tap.needle == b"name") == line_framed, api
