"""The table of framings: each framer reads the same frames however the bytes are split, and
each framing is found by its content type."""

import base64
import json
import re
import struct

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.testkit import aws_event
from tests.testkit import aws_stream
from tests.testkit import every_split
from tests.testkit import ndjson
from tests.testkit import sse
from toolnames_core.framings import AWS_EVENT_STREAM
from toolnames_core.framings import AWS_EVENT_STREAM_BASE64
from toolnames_core.framings import FRAMINGS
from toolnames_core.framings import MAX_EVENT_BYTES
from toolnames_core.framings import NDJSON
from toolnames_core.framings import SSE
from toolnames_core.framings import AwsEventStreamFramer
from toolnames_core.framings import EventStreamRewriter
from toolnames_core.framings import LineRewriter
from toolnames_core.framings import NdjsonFramer
from toolnames_core.framings import SseFramer
from toolnames_core.framings import framing_for
from toolnames_core.framings import json_or_none
from toolnames_core.framings import line_ends
from toolnames_core.framings import ndjson_error
from toolnames_core.framings import rewriter_for
from toolnames_core.framings import stream_exception
from toolnames_core.readers import DEFAULT
from toolnames_core.readers import READERS
from toolnames_core.streams import EventDecoder

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


@given(
    st.lists(st.sampled_from([b"\r", b"\n", b"\r\n", b"data: x", b"\xc3\xa9"]), max_size=30).map(
        b"".join
    ),
    st.integers(0, 40),
    st.booleans(),
)
def test_line_ends_are_what_the_expression_finds_from_any_start(text, start, mutable):
    buffer = bytearray(text) if mutable else text
    expected = [(m.start(), m.end()) for m in re.finditer(rb"\r\n|\r|\n", text[start:])]
    assert list(line_ends(buffer, start)) == [(a + start, b + start) for a, b in expected]


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
    # Framings that share a media type (the AWS event stream, with JSON or base64 payloads)
    # share their framer: the answer is a stream either way, and its format names which.
    first = next(f for f in FRAMINGS.values() if set(f.content_types) & set(framing.content_types))
    assert first.framer is framing.framer
    for content_type in framing.content_types:
        assert framing_for(content_type) is first
        assert framing_for(content_type.upper() + "; charset=utf-8") is first


@pytest.mark.parametrize("content_type", ["application/json", "text/plain", "", "text/html"])
def test_an_answer_that_is_no_stream_has_no_framing(content_type):
    assert framing_for(content_type) is None


_TYPES = [t for f in FRAMINGS.values() for t in f.content_types]
_TYPE_PARTS = _TYPES + [t.upper() for t in _TYPES] + ["; charset=utf-8", "x"]


@given(st.lists(st.sampled_from(_TYPE_PARTS) | st.text(max_size=4), max_size=4).map("".join))
def test_the_framing_of_a_content_type_is_the_first_that_carries_it(content_type):
    # framing_for rules most answers out by one test of every framing's types at once.
    first = next((f for f in FRAMINGS.values() if f.carries(content_type)), None)
    assert framing_for(content_type) is first


def test_each_framing_rewrites_with_its_own_rewriter():
    assert isinstance(rewriter_for(SSE, bytes), LineRewriter)
    assert isinstance(rewriter_for(AWS_EVENT_STREAM, bytes), EventStreamRewriter)
    assert isinstance(rewriter_for(NDJSON, bytes), LineRewriter)


def test_ndjson_is_found_by_ollamas_content_type():
    assert framing_for("application/x-ndjson") is NDJSON
    assert framing_for("Application/X-NDJSON; charset=utf-8") is NDJSON


def test_an_aws_frame_becomes_an_event_keyed_by_its_type_and_an_exception_none():
    frames = list(AwsEventStreamFramer().feed(aws_event("messageStart", {"role": "assistant"})))
    assert AWS_EVENT_STREAM.event(frames[0], *NO_SHAPE) == {"messageStart": {"role": "assistant"}}
    exception = aws_event("throttlingException", {"message": "slow"}, message_type="exception")
    frames = list(AwsEventStreamFramer().feed(exception))
    assert AWS_EVENT_STREAM.event(frames[0], *NO_SHAPE) is None


def test_an_sse_frame_that_is_no_json_object_is_no_event():
    assert SSE.event(b"[DONE]", *NO_SHAPE) is None
    assert SSE.event(b'{"a": 1}', *NO_SHAPE) == {"a": 1}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)


def read_or_none(data: bytes, reader) -> dict | None:
    """The oracle: the object the reader reads in ``data``, asked every time; else None."""
    try:
        value = reader.event(data, None)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


@settings(max_examples=300, deadline=None)
@given(
    json_values,
    st.sampled_from(["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"]),
    st.sampled_from(["", " ", "[DONE]", "[", "]"]),
)
def test_an_event_is_the_object_json_reads_whatever_its_text_and_encoding(value, codec, extra):
    # "[DONE]" and every array are told apart by their first byte, in every encoding
    # json.loads detects; what follows the text makes a garbled one too.
    for data in (json.dumps(value).encode(codec), (extra + json.dumps(value)).encode(codec)):
        for reader in READERS:
            assert json_or_none(data, reader) == read_or_none(data, reader)


# -- the AWS event stream's CRCs, and Bedrock InvokeModel's base64 chunks ------------------------


def corrupt(raw: bytes, at: int) -> bytes:
    return raw[:at] + bytes([raw[at] ^ 0x01]) + raw[at + 1 :]


@pytest.mark.parametrize("where", ["prelude-crc", "headers", "payload", "message-crc"])
def test_an_aws_message_whose_crcs_do_not_hold_stops_reading_and_is_never_rewritten(where):
    raw = aws_event("chunk", chunk_payload({"type": "message_start"}))
    headers_len = struct.unpack_from(">I", raw, 4)[0]
    at = {
        "prelude-crc": 9,
        "headers": 13,
        "payload": 12 + headers_len + 2,
        "message-crc": len(raw) - 1,
    }
    bad = corrupt(raw, at[where])
    framer = AwsEventStreamFramer()
    assert list(framer.feed(bad)) == []
    assert framer.broken
    # The rewriter would recompute both CRCs of a message it changed: a corrupt one would
    # reach the client as sound. It goes on as it came, and so does the rest.
    rewriter = rewriter_for(AWS_EVENT_STREAM_BASE64, lambda data: data.replace(b"start", b"START"))
    assert rewriter(bad + raw) + rewriter(b"") == bad + raw


def chunk_payload(event: dict, padding: str = "abcdefgh") -> dict:
    raw = json.dumps(event).encode()
    return {"bytes": base64.b64encode(raw).decode(), "p": padding}


INVOKE_EVENTS = [
    {"type": "message_start", "message": {"id": "msg_1", "content": []}},
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "mcp__github__create_issue_tn1",
            "input": {},
        },
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": "{}"},
    },
    {"type": "content_block_stop", "index": 0},
    {"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 3}},
]
INVOKE_STREAM = aws_stream(
    [("chunk", chunk_payload(e, "p" * (i + 3))) for i, e in enumerate(INVOKE_EVENTS)]
)


def test_an_invoke_chunk_is_the_event_its_base64_holds_and_an_exception_none():
    frames = list(AwsEventStreamFramer().feed(INVOKE_STREAM))
    events = [AWS_EVENT_STREAM_BASE64.event(frame, *NO_SHAPE) for frame in frames]
    assert events == INVOKE_EVENTS
    exception = aws_event("validationException", {"message": "bad"}, message_type="exception")
    (frame,) = AwsEventStreamFramer().feed(exception)
    assert AWS_EVENT_STREAM_BASE64.event(frame, *NO_SHAPE) is None
    assert stream_exception(frame) == ("validationException", b'{"message": "bad"}')


@pytest.mark.parametrize(
    "payload",
    [{"bytes": "not base64!"}, {"bytes": "eyJ0eXBl"[:-1]}, {"p": "no bytes"}, [1, 2]],
    ids=["bad-alphabet", "bad-padding", "no-bytes", "not-an-object"],
)
def test_a_chunk_toolnames_cannot_open_is_said_not_passed_off_as_empty(payload):
    (frame,) = AwsEventStreamFramer().feed(aws_event("chunk", payload))
    with pytest.raises(ValueError, match="chunk"):
        AWS_EVENT_STREAM_BASE64.event(frame, *NO_SHAPE)
    # And the rewriter leaves it as it came.
    raw = aws_event("chunk", payload)
    rewriter = rewriter_for(AWS_EVENT_STREAM_BASE64, lambda data: b"changed")
    assert rewriter(raw) == raw


def restore(data: bytes) -> bytes:
    return data.replace(b"mcp__github__create_issue_tn1", b"mcp__github__create.issue")


def test_restoring_names_in_invoke_chunks_re_encodes_the_base64_and_both_crcs_at_every_split():
    whole = rewriter_for(AWS_EVENT_STREAM_BASE64, restore)
    expected = whole(INVOKE_STREAM) + whole(b"")
    assert expected != INVOKE_STREAM
    for chunks in every_split(INVOKE_STREAM):
        rewriter = rewriter_for(AWS_EVENT_STREAM_BASE64, restore)
        out = b"".join(rewriter(c) for c in chunks if c) + rewriter(b"")
        assert out == expected
    # What comes out is a sound stream (the framer checks both CRCs), the padding kept, and
    # only the event that held the alias changed.
    framer = AwsEventStreamFramer()
    frames = list(framer.feed(expected))
    assert not framer.broken and len(frames) == len(INVOKE_EVENTS)
    events = [AWS_EVENT_STREAM_BASE64.event(f, *NO_SHAPE) for f in frames]
    assert events[1]["content_block"]["name"] == "mcp__github__create.issue"
    assert events[:1] + events[2:] == INVOKE_EVENTS[:1] + INVOKE_EVENTS[2:]
    assert [json.loads(p)["p"] for _, p in frames] == ["p" * (i + 3) for i in range(5)]
    assert frames[0][1] == list(AwsEventStreamFramer().feed(INVOKE_STREAM))[0][1]


# -- NDJSON (Ollama's native API) ---------------------------------------------------------------

OLLAMA_LINES = [
    {"model": "qwen3", "message": {"role": "assistant", "content": "Un"}, "done": False},
    {"model": "qwen3", "message": {"role": "assistant", "content": "é°"}, "done": False},
    {
        "model": "qwen3",
        "message": {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"index": 0, "name": "get_weather", "arguments": {"city": "Paris"}}}
            ],
        },
        "done": False,
    },
    {"model": "qwen3", "message": {"role": "assistant", "content": ""}, "done": True},
]


def ndjson_lines(chunks: list[bytes]) -> list[bytes]:
    framer = NdjsonFramer()
    out = []
    for chunk in chunks:
        out += framer.feed(chunk)
    return out + list(framer.close())


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_ndjson_lines_are_the_same_however_the_bytes_are_split(newline):
    # Multi-byte characters (é, °) are cut in the middle by some splits.
    raw = ndjson(OLLAMA_LINES, newline)
    expected = [json.dumps(e, ensure_ascii=False).encode() for e in OLLAMA_LINES]
    for chunks in every_split(raw):
        assert ndjson_lines(chunks) == expected
        decoder = EventDecoder(NDJSON)
        events = [e for chunk in chunks for e in decoder.feed(chunk)] + list(decoder.close())
        assert events == OLLAMA_LINES
        assert decoder.failure is None


def test_ndjson_skips_blank_lines_and_reads_a_last_line_without_its_newline_at_close():
    raw = b'\n{"a": 1}\n\n  \n{"b": 2}'
    for chunks in every_split(raw):
        assert ndjson_lines(chunks) == [b'{"a": 1}', b'{"b": 2}']


def test_ndjson_gives_up_on_an_endless_line_instead_of_buffering_it():
    framer = NdjsonFramer()
    for _ in range(MAX_EVENT_BYTES // 65536 + 2):
        assert list(framer.feed(b"x" * 65536)) == []
    assert framer.broken
    assert len(framer.buffer) == 0
    assert list(framer.feed(b'\n{"a": 1}\n')) == []


def test_an_ndjson_error_line_is_the_providers_verdict_and_carries_no_event():
    line = b'{"error":"an error was encountered while running the model"}'
    assert NDJSON.event(line, *NO_SHAPE) is None
    assert NDJSON.exception(line) == ("error", line)
    assert "error" in NDJSON.rejects
    assert ndjson_error(b'{"done": true}') is None
    assert ndjson_error(b"not json") is None
    decoder = EventDecoder(NDJSON)
    raw = ndjson([OLLAMA_LINES[0]]) + line + b"\n" + ndjson(OLLAMA_LINES[2:])
    # Read on past it (Ollama ends the stream there; toolnames claims nothing about it).
    assert [*decoder.feed(raw), *decoder.close()] == [OLLAMA_LINES[0], *OLLAMA_LINES[2:]]
    assert decoder.exception == ("error", line)


@pytest.mark.parametrize(
    "line",
    [b"{not json", b"[1, 2]", b'"text"', b"\xff\xfe"],
    ids=["bad", "array", "string", "bytes"],
)
def test_an_ndjson_line_that_is_no_json_object_stops_reading_and_says_so(line):
    with pytest.raises(ValueError, match="NDJSON"):
        NDJSON.event(line, *NO_SHAPE)
    decoder = EventDecoder(NDJSON)
    raw = ndjson(OLLAMA_LINES[:1]) + line + b"\n" + ndjson(OLLAMA_LINES[2:])
    assert [*decoder.feed(raw), *decoder.close()] == OLLAMA_LINES[:1]
    assert decoder.broken
    assert "NDJSON" in decoder.failure


def rename_back(data: bytes) -> bytes:
    return data.replace(b"get_weather_1a2b3c4d", b"get.weather")


def test_restoring_names_in_ndjson_lines_gives_the_same_stream_at_every_split():
    lines = json.loads(json.dumps(OLLAMA_LINES))
    lines[2]["message"]["tool_calls"][0]["function"]["name"] = "get_weather_1a2b3c4d"
    raw = ndjson(lines)
    whole = rewriter_for(NDJSON, rename_back)
    expected = whole(raw) + whole(b"")
    assert expected == rename_back(raw) and b"1a2b3c4d" not in expected
    for chunks in every_split(raw):
        rewriter = rewriter_for(NDJSON, rename_back)
        out = [rewriter(c) for c in chunks if c] + [rewriter(b"")]
        assert b"".join(out) == expected
    for k in range(len(raw) + 1):
        # The whole lines of the first piece go on at once; only an unfinished one waits.
        first = rewriter_for(NDJSON, rename_back)(raw[:k])
        assert first == rename_back(raw[: raw.rfind(b"\n", 0, k) + 1])
