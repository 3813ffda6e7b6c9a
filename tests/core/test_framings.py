"""The table of framings: each framer reads the same frames however the bytes are split, and
each framing is found by its content type."""

import json

import pytest

from tests.testkit import aws_event
from tests.testkit import aws_stream
from tests.testkit import every_split
from tests.testkit import sse
from toolnames_core.framings import AWS_EVENT_STREAM
from toolnames_core.framings import FRAMINGS
from toolnames_core.framings import MAX_EVENT_BYTES
from toolnames_core.framings import SSE
from toolnames_core.framings import AwsEventStreamFramer
from toolnames_core.framings import EventStreamRewriter
from toolnames_core.framings import LineRewriter
from toolnames_core.framings import SseFramer
from toolnames_core.framings import framing_for
from toolnames_core.framings import rewriter_for
from toolnames_core.readers import DEFAULT

NO_SHAPE = (DEFAULT, None)


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


def test_sse_framer_reads_a_new_stream_correctly_after_close():
    framer = SseFramer()
    assert list(framer.feed(b'data: {"a": 1}\n\ndata: "a long unfinished event"')) == [b'{"a": 1}']
    assert list(framer.close()) == [b'"a long unfinished event"']
    # Shorter than what close() flushed: a stale scan offset would skip its line ends.
    assert list(framer.feed(b"data: 3\n\n")) == [b"3"]


@pytest.mark.parametrize("framing", FRAMINGS.values(), ids=list(FRAMINGS))
def test_each_framing_is_found_by_its_content_types_whatever_their_case_and_parameters(framing):
    assert FRAMINGS[framing.name] is framing
    for content_type in framing.content_types:
        assert framing_for(content_type) is framing
        assert framing_for(content_type.upper() + "; charset=utf-8") is framing


@pytest.mark.parametrize("content_type", ["application/json", "text/plain", "", "text/html"])
def test_an_answer_that_is_no_stream_has_no_framing(content_type):
    assert framing_for(content_type) is None


def test_each_framing_rewrites_with_its_own_rewriter():
    assert isinstance(rewriter_for(SSE, bytes), LineRewriter)
    assert isinstance(rewriter_for(AWS_EVENT_STREAM, bytes), EventStreamRewriter)


def test_an_aws_frame_becomes_an_event_keyed_by_its_type_and_an_exception_none():
    frames = list(AwsEventStreamFramer().feed(aws_event("messageStart", {"role": "assistant"})))
    assert AWS_EVENT_STREAM.event(frames[0], *NO_SHAPE) == {"messageStart": {"role": "assistant"}}
    exception = aws_event("throttlingException", {"message": "slow"}, message_type="exception")
    frames = list(AwsEventStreamFramer().feed(exception))
    assert AWS_EVENT_STREAM.event(frames[0], *NO_SHAPE) is None


def test_an_sse_frame_that_is_no_json_object_is_no_event():
    assert SSE.event(b"[DONE]", *NO_SHAPE) is None
    assert SSE.event(b'{"a": 1}', *NO_SHAPE) == {"a": 1}
