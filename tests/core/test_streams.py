import gzip
import json
import zlib

import pytest

from tests.testkit import aws_event
from tests.testkit import aws_stream
from tests.testkit import every_split
from tests.testkit import sse
from toolnames_core.exchange import Exchange
from toolnames_core.formats import FORMATS
from toolnames_core.streams import MAX_EVENT_BYTES
from toolnames_core.streams import AwsEventStreamFramer
from toolnames_core.streams import EventDecoder
from toolnames_core.streams import SseFramer
from toolnames_core.streams import StreamTap


def sse_events(chunks: list[bytes]) -> list[bytes]:
    framer = SseFramer()
    out = []
    for chunk in chunks:
        out += framer.feed(chunk)
    return out + list(framer.close())


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_sse_events_are_the_same_however_the_bytes_are_split(newline):
    raw = sse([{"a": 1}, {"b": "é"}], newline=newline)
    expected = [b'{"a": 1}', json.dumps({"b": "é"}).encode(), b"[DONE]"]
    for chunks in every_split(raw):
        assert sse_events(chunks) == expected


def test_sse_joins_multi_line_data_and_ignores_comments_and_other_fields():
    raw = b': keep-alive\nevent: message\nid: 7\ndata: {"a":\ndata:1}\nretry: 10\n\n'
    for chunks in every_split(raw):
        assert sse_events(chunks) == [b'{"a":\n1}']


def test_sse_event_without_final_blank_line_is_read_at_close():
    assert sse_events([b'data: {"x": 1}']) == [b'{"x": 1}']


def test_sse_many_events_in_one_chunk():
    raw = sse([{"i": i} for i in range(50)], done=False)
    assert sse_events([raw]) == [json.dumps({"i": i}).encode() for i in range(50)]


def test_sse_gives_up_on_an_endless_line_instead_of_buffering_it():
    framer = SseFramer()
    for _ in range(MAX_EVENT_BYTES // 65536 + 2):
        assert list(framer.feed(b"x" * 65536)) == []
    assert framer.broken
    assert len(framer.buffer) == 0
    assert list(framer.feed(b"\n\ndata: {}\n\n")) == []


def aws_messages(chunks: list[bytes]) -> list:
    framer = AwsEventStreamFramer()
    out = []
    for chunk in chunks:
        out += framer.feed(chunk)
    return out


def test_aws_event_stream_messages_are_the_same_however_the_bytes_are_split():
    raw = aws_stream(
        [("messageStart", {"role": "assistant"}), ("contentBlockStop", {"contentBlockIndex": 0})]
    )
    for chunks in every_split(raw):
        messages = aws_messages(chunks)
        assert [h[":event-type"] for h, _ in messages] == ["messageStart", "contentBlockStop"]
        assert json.loads(messages[0][1]) == {"role": "assistant"}


def test_aws_event_stream_with_an_impossible_length_stops_reading():
    framer = AwsEventStreamFramer()
    assert list(framer.feed(b"\xff\xff\xff\xff" + b"\x00" * 20)) == []
    assert framer.broken


def test_decoder_turns_aws_messages_into_event_type_keyed_dicts_and_skips_exceptions():
    raw = aws_event("contentBlockStart", {"start": {"toolUse": {"name": "x"}}}) + aws_event(
        "throttlingException", {"message": "slow down"}, message_type="exception"
    )
    decoder = EventDecoder("aws-eventstream")
    assert list(decoder.feed(raw)) == [{"contentBlockStart": {"start": {"toolUse": {"name": "x"}}}}]


def test_decoder_skips_sse_payloads_that_are_not_json_objects():
    decoder = EventDecoder("sse")
    assert list(decoder.feed(b'data: [DONE]\n\ndata: [1]\n\ndata: {"ok": 1}\n\n')) == [{"ok": 1}]


def test_sse_framer_reads_a_new_stream_correctly_after_close():
    framer = SseFramer()
    assert list(framer.feed(b'data: {"a": 1}\n\ndata: "a long unfinished event"')) == [b'{"a": 1}']
    assert list(framer.close()) == [b'"a long unfinished event"']
    # Shorter than what close() flushed: a stale scan offset would skip its line ends.
    assert list(framer.feed(b"data: 3\n\n")) == [b"3"]


# -- content-encoded streams: read through a decoder, forwarded as they came -----------------

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
    [("gzip", gzip.compress(CALL_STREAM)), ("deflate", zlib.compress(CALL_STREAM))],
)
def test_a_gzip_or_deflate_stream_is_read_and_every_byte_forwarded_as_it_came(coding, encoded):
    for chunks in every_split(encoded):
        tap = StreamTap(FORMATS["openai-chat"], coding=coding)
        assert b"".join(tap(c) for c in [*chunks, b""]) == encoded
        assert [c.name for c in tap.calls()] == ["rm_rf"]
        assert tap.problem() is None


@pytest.mark.parametrize("coding", ["br", "zstd", "gzip, br"])
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
    exchange = Exchange("openai-chat", "openai")
    exchange.check_request(json.dumps(body).encode())
    tap = exchange.stream_tap("br")
    tap(b"\x00")
    tap(b"")
    found = exchange.check_stream(200, tap, complete=True)
    assert [f.code for f in found] == ["response-unreadable"]


def test_fix_mode_declines_to_restore_names_in_a_compressed_stream_and_records_why():
    body = {"tools": [{"type": "function", "function": {"name": "github.create_issue"}}]}
    exchange = Exchange("openai-chat", "openai")
    exchange.check_request(json.dumps(body).encode(), fix=True)
    (alias,) = exchange.restorer.aliases
    tap = exchange.stream_tap("gzip")
    stream = gzip.compress(CALL_STREAM.replace(b"rm_rf", alias.encode()))
    assert tap(stream) + tap(b"") == stream  # never re-encoded, never corrupt
    (skipped,) = exchange.fix_skipped
    assert skipped.name == "github.create_issue"
    assert skipped.reason == (
        "was not given back in the answer, which came compressed with gzip although the "
        f"request asked for an uncompressed one: the app got calls to '{alias}'"
    )
    # Judged as the app got it: a call to a tool it never offered.
    found = exchange.check_stream(200, tap, complete=True)
    assert [f.code for f in found] == ["response-unknown-tool"]
