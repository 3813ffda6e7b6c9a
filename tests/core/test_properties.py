"""No input breaks toolnames: properties over arbitrary JSON values and bytes, for every format.

Every wire format in the registry is covered, including formats added later: the tests iterate
``FORMATS``. Request bodies are arbitrary JSON values, JSON objects with the keys adapters read
(filled with arbitrary values, so that the adapters' deeper branches run), and arbitrary bytes;
response bodies and streams are arbitrary bytes, cut anywhere. The properties:

- analyse_request, block_response, read_response_calls and analyse_response never raise;
- through the addon (request, responseheaders, the stream tap, response or error hooks, with
  toolnames_save on) no hook raises; in observe mode the request bytes are left as sent and
  every streamed chunk comes back unchanged; in a running event loop, where observe mode
  checks a request late, the same holds and no flow is left waiting;
- stream collectors take arbitrary event dicts, framers arbitrary bytes cut anywhere;
- with msgspec installed, the addon gives a flow the same record, bytes and stream with either
  reader (tests/core/test_readers.py holds the core to it in more detail).
"""

import asyncio
import contextlib
import json
import struct
import zlib
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mitmproxy import http
from mitmproxy.flow import Error
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from harness.inprocess import running
from tests.testkit import api_for
from tests.testkit import aws_event
from tests.testkit import exchange_for
from tests.testkit import judge
from tests.testkit import sent_on
from tests.testkit.arbitrary import APIS
from tests.testkit.arbitrary import CONTENT_TYPES
from tests.testkit.arbitrary import EVENT_SEEDS
from tests.testkit.arbitrary import EVENTS
from tests.testkit.arbitrary import FAST
from tests.testkit.arbitrary import PATHS
from tests.testkit.arbitrary import REQUEST_SEEDS
from tests.testkit.arbitrary import REQUESTS
from tests.testkit.arbitrary import RESPONSE_SEEDS
from tests.testkit.arbitrary import RESPONSES
from tests.testkit.arbitrary import SDK_FIXTURES
from tests.testkit.arbitrary import SEED_DROPS
from tests.testkit.arbitrary import STREAMING_APIS
from tests.testkit.arbitrary import any_text
from tests.testkit.arbitrary import cut
from tests.testkit.arbitrary import examples
from tests.testkit.arbitrary import response_bodies
from toolnames_core import bodies
from toolnames_core import readers
from toolnames_core import streams
from toolnames_core.formats import FORMATS
from toolnames_core.framings import FRAMINGS
from toolnames_core.framings import AwsEventStreamFramer
from toolnames_core.model import NameRef
from toolnames_core.rules import RULES
from toolnames_core.rules import name_violations
from toolnames_core.rules import valid_name_pattern
from toolnames_core.streams import EventDecoder
from toolnames_mitm import deferral


def test_every_format_with_sdk_fixtures_has_request_seeds():
    # Seeds make the properties reach deep; a fixture this test cannot read would go unnoticed.
    fixture_apis = set()
    for fixture in SDK_FIXTURES.glob("*.json"):
        fixture_apis.add(api_for("POST", json.loads(fixture.read_text())["path"]))
    assert {api for api in APIS if REQUEST_SEEDS[api]} == fixture_apis & set(APIS)


@pytest.mark.parametrize("api", APIS)
def test_every_format_with_request_seeds_has_answers_to_seed_from(api):
    # A format whose fixtures the stand-in refuses would get generic answers only.
    if REQUEST_SEEDS[api]:
        assert RESPONSE_SEEDS[api], f"no answer seeds for {api}: {SEED_DROPS}"
    if REQUEST_SEEDS[api] and api in STREAMING_APIS:
        assert EVENT_SEEDS[api], f"no stream event seeds for {api}: {SEED_DROPS}"


@pytest.mark.parametrize("api", APIS)
def test_every_format_has_a_request_path_for_the_addon_properties(api):
    assert PATHS.get(api), f"no request path reaches {api}: give its WireFormat example_paths"


# --- the pure core ----------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
@FAST
@given(data=st.data(), rule=st.sampled_from(sorted(RULES)), fix=st.booleans())
def test_analysing_any_request_body_never_raises(api, data, rule, fix):
    body = data.draw(REQUESTS[api])
    result = exchange_for(body, api, rule, fix=fix)
    if not fix:
        assert result.new_body is None  # observe never changes a byte
    if result.new_body is not None:
        assert isinstance(result.new_body, bytes)
    for finding in result.findings:
        json.dumps(finding.to_dict())
    if result.errors:
        status, headers, answer = result.block_response()
        assert 400 <= status < 600 and isinstance(answer, bytes)


@pytest.mark.parametrize("api", APIS)
@FAST
@given(data=st.data(), content_type=st.sampled_from(CONTENT_TYPES), complete=st.booleans())
def test_reading_any_response_against_any_request_never_raises(api, data, content_type, complete):
    request, response = data.draw(REQUESTS[api]), data.draw(RESPONSES[api])
    found, problem = bodies.read_response_calls(FORMATS[api], content_type, response)
    assert all(isinstance(call, NameRef) and isinstance(call.name, str) for call in found)
    judge(request, api, found, complete)


@pytest.mark.parametrize("api", APIS)
@FAST
@given(data=st.data())
def test_the_response_side_finds_the_same_whether_or_not_the_request_side_ran_first(api, data):
    # analyse_request leaves its view for analyse_response (one parse per flow); the result
    # must be the one a fresh read gives.
    request, response = data.draw(REQUESTS[api]), data.draw(RESPONSES[api])
    content_type = data.draw(st.sampled_from(CONTENT_TYPES))
    found, _ = bodies.read_response_calls(FORMATS[api], content_type, response)
    fresh = judge(bytes(bytearray(request)), api, found, True)
    exchange_for(request, api, "openai")
    assert judge(request, api, found, True) == fresh


@examples(200)
@given(
    name=st.one_of(any_text, st.from_regex(r"[a-zA-Z0-9_.:-]{0,130}", fullmatch=True)),
    rule=st.sampled_from(sorted(RULES)),
)
def test_the_valid_name_fast_path_agrees_with_the_full_rule_check(name, rule):
    assert bool(valid_name_pattern(RULES[rule]).fullmatch(name)) == (
        not name_violations(name, RULES[rule])
    )


# --- streams ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", STREAMING_APIS)
@FAST
@given(data=st.data())
def test_stream_collectors_take_any_event_dicts(api, data):
    events = data.draw(st.lists(EVENTS[api], max_size=6))
    collector = FORMATS[api].stream_collector()
    for event in events:
        collector.event(event)
        assert all(isinstance(call.name, str) for call in collector.calls())


def framed(framer, pieces: list[bytes]) -> list:
    out = []
    for piece in pieces:
        out += framer.feed(piece)
    return out + list(framer.close())


@examples(80)
@given(data=st.data(), raw=response_bodies())
def test_framers_read_the_same_events_however_any_bytes_are_cut(data, raw):
    pieces = data.draw(cut(raw))
    for framing in FRAMINGS.values():
        assert framed(framing.framer(), pieces) == framed(framing.framer(), [raw])
        assert framed(EventDecoder(framing), pieces) == framed(EventDecoder(framing), [raw])


@pytest.mark.parametrize("api", STREAMING_APIS)
@FAST
@given(data=st.data())
def test_the_tap_returns_every_chunk_unchanged_and_reads_the_same_however_cut(api, data):
    raw = data.draw(RESPONSES[api])
    pieces = data.draw(cut(raw))
    tap = streams.StreamTap(FORMATS[api])
    assert [tap(piece) for piece in pieces] == pieces
    assert tap(b"") == b""
    whole = streams.StreamTap(FORMATS[api]).feed_all(raw)
    assert tap.calls() == whole.calls()
    assert (tap.problem() is None) == (whole.problem() is None)


def test_an_empty_chunk_mid_stream_is_not_the_end_of_it():
    # HTTP/2 allows empty DATA frames; mitmproxy hands them to the tap as b"", the same value
    # that marks the end of the message. Found by the property above.
    chunks = [b"data: {}\n\nda", b"", b'ta: {"choices": [{"delta": {"tool_calls": [', b""]
    chunks += [b'{"index": 0, "function": {"name": "drop_tables"}}]}}]}\n\n', b""]
    tap = streams.StreamTap(FORMATS["openai-chat"])
    for chunk in chunks:
        assert tap(chunk) == chunk
    assert tap.ended
    assert [call.name for call in tap.calls()] == ["drop_tables"]
    assert tap.problem() is None


# --- the addon, through mitmproxy's test helpers -------------------------------------------------------


@pytest.fixture(scope="module")
def addon(tmp_path_factory):
    """One addon in one test master for all examples (a master per example is slow)."""
    save = tmp_path_factory.mktemp("save") / "flagged.mitm"
    with running(toolnames_save=str(save)) as (tctx, tn):
        yield tctx, tn


@pytest.fixture(scope="module")
def addon_in_observe_mode():
    with running() as (tctx, tn):
        yield tctx, tn


def make_flow(path: str, body: bytes) -> http.HTTPFlow:
    request = tutils.treq(
        method=b"POST", scheme=b"https", host="api.example.com", port=443, path=path.encode()
    )
    request.headers["authorization"] = "Bearer sk-secret"
    request.content = body
    return tflow.tflow(req=request, live=True)


def drawn_exchange(api: str, data) -> tuple[http.HTTPFlow, bytes]:
    """A live flow to one of ``api``'s paths with a drawn request body, and a drawn answer."""
    assert PATHS.get(api), f"no request path reaches {api}: give its WireFormat example_paths"
    body, response = data.draw(REQUESTS[api]), data.draw(RESPONSES[api])
    return make_flow(data.draw(st.sampled_from(PATHS[api])), body), response


def send(tn, flow, mode) -> None:
    """The request hook, as mitmproxy calls it; a block is answered at once."""
    sent = flow.request.raw_content
    tn.request(flow)
    if mode == "observe":
        assert flow.request.raw_content == sent
        assert flow.response is None
    if flow.response is not None:  # blocked
        tn.response(flow)


def answer(tn, flow, data, response, content_type, status, broken, mode) -> None:
    """The response hooks, as mitmproxy calls them, a streamed answer cut anywhere."""
    sent = flow.request.raw_content
    # The response as mitmproxy has it when its headers arrive: no body yet.
    flow.response = http.Response.make(status, b"", {"content-type": content_type})
    flow.response.raw_content = None
    tn.responseheaders(flow)
    pieces = data.draw(cut(response))
    if callable(flow.response.stream):
        out = [sent_on(flow.response.stream, piece) for piece in pieces]
        tail = sent_on(flow.response.stream, b"")
        if mode == "observe":
            assert out == pieces  # each chunk goes on at once, as it came
            assert tail == b""
        else:
            # Fix mode's rewriter holds an unfinished line or event until it is whole, and
            # changes nothing but names it gives back: every byte still comes out, in order.
            rewritten = b"".join(out) + tail
    else:
        flow.response.raw_content = response
    if broken:
        flow.error = Error("connection closed")
        tn.error(flow)
    else:
        tn.response(flow)
    if mode == "observe":
        assert flow.request.raw_content == sent
    elif callable(flow.response.stream):
        restored = (flow.metadata.get("toolnames") or {}).get("restored")
        assert rewritten == b"".join(pieces) or restored


@pytest.mark.parametrize("api", APIS)
@examples(25)
@given(
    data=st.data(),
    content_type=st.sampled_from(CONTENT_TYPES),
    status=st.sampled_from((200, 200, 200, 201, 400, 500)),
    mode=st.sampled_from(("observe", "observe", "fix", "block")),
    broken=st.booleans(),
)
def test_no_hook_raises_and_observe_mode_forwards_every_byte_unchanged(
    addon, api, data, content_type, status, mode, broken
):
    tctx, tn = addon
    tctx.configure(tn, toolnames_mode=mode)
    flow, response = drawn_exchange(api, data)
    send(tn, flow, mode)
    if flow.response is None:
        answer(tn, flow, data, response, content_type, status, broken, mode)


@pytest.mark.parametrize("api", APIS)
@examples(10)
@given(
    data=st.data(),
    content_type=st.sampled_from(CONTENT_TYPES),
    status=st.sampled_from((200, 200, 201, 400)),
    broken=st.booleans(),
    slow=st.booleans(),
)
def test_observe_mode_in_a_running_loop_never_raises_nor_keeps_a_flow(
    addon_in_observe_mode, api, data, content_type, status, broken, slow
):
    # Inside mitmproxy's loop an observed request is checked when its flow completes, or by
    # the timer first (``slow``); either way nothing of the flow is left behind.
    tctx, tn = addon_in_observe_mode
    flow, response = drawn_exchange(api, data)

    async def in_the_loop():
        with mock.patch.object(deferral, "DEFER_SECONDS", 0 if slow else 3600):
            send(tn, flow, "observe")
            for _ in range(2):
                await asyncio.sleep(0)  # the timer's turn, when it is due
            answer(tn, flow, data, response, content_type, status, broken, "observe")

    try:
        asyncio.run(in_the_loop())
        assert tn.deferral.waiting() == []
    finally:
        tn.done()  # the timer belonged to that loop


def test_the_addon_property_covers_every_registered_format():
    # A format without a path here would only be covered at the analysis level.
    assert set(PATHS) >= set(APIS), f"add request paths for {sorted(set(APIS) - set(PATHS))}"


def test_nasty_aws_messages_are_built_right():
    # The corrupt-stream strategy flips bytes of real messages: make sure they start out valid.
    message = aws_event("messageStart", {"role": "assistant"})
    total, headers_len = struct.unpack(">II", message[:8])
    assert total == len(message)
    assert zlib.crc32(message[:-4]) == struct.unpack(">I", message[-4:])[0]
    with contextlib.suppress(StopIteration):
        assert next(iter(AwsEventStreamFramer().feed(message)))[0][":event-type"] == "messageStart"


@pytest.mark.skipif(readers.FAST is None, reason="msgspec is not installed: one reader only")
@pytest.mark.parametrize("api", APIS)
@examples(15)
@given(
    data=st.data(),
    content_type=st.sampled_from(CONTENT_TYPES),
    status=st.sampled_from((200, 200, 201, 400)),
    mode=st.sampled_from(("observe", "fix", "block")),
)
def test_both_readers_give_a_live_flow_the_same_record_bytes_and_stream(
    addon, api, data, content_type, status, mode
):
    # One addon, its reader switched: two test masters at once would share ctx.options.
    tctx, tn = addon
    flow, response = drawn_exchange(api, data)
    body, path = flow.request.raw_content, flow.request.path
    pieces = data.draw(cut(response))
    results = []
    for reader in ("json", "msgspec"):  # left as auto leaves it, with msgspec there
        tctx.configure(tn, toolnames_mode=mode, toolnames_reader=reader)
        flow = make_flow(path, body)
        tn.request(flow)
        sent = None
        if flow.response is None:
            flow.response = http.Response.make(status, b"", {"content-type": content_type})
            flow.response.raw_content = None
            tn.responseheaders(flow)
            if callable(flow.response.stream):
                sent = [sent_on(flow.response.stream, piece) for piece in [*pieces, b""]]
            else:
                flow.response.raw_content = response
        tn.response(flow)
        results.append(
            (
                flow.request.raw_content,
                flow.response.raw_content,
                sent,
                flow.metadata.get("toolnames"),
                flow.comment,
                flow.marked,
            )
        )
    assert results[0] == results[1]
