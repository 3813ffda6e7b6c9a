"""(c) Time to the first streamed chunk (benchmark.streaming)."""

import http.client
import json

from benchmark.streaming import EVENT_STREAM
from benchmark.streaming import FIX_RENAMING_PATH
from benchmark.streaming import INVOKE_HEADERS
from benchmark.streaming import INVOKE_STREAM_PATH
from benchmark.streaming import NDJSON_STREAM
from benchmark.streaming import StreamRow
from benchmark.streaming import first_chunk
from benchmark.streaming import restored_calls
from benchmark.streaming import stream_cases
from benchmark.workload import encode
from benchmark.workload import invoke_body
from standin import StandinProvider
from toolnames_core import format_for

STREAM = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}


def test_the_first_chunk_arrives_before_the_stream_ends():
    with StandinProvider() as provider:
        conn = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=10)
        streamed = first_chunk(conn, json.dumps(STREAM).encode(), {"x-standin-delay-ms": "100"})
        conn.close()

    assert streamed.first_chunk < 0.1 <= streamed.total
    assert streamed.body.endswith(b"data: [DONE]\n\n")


def test_a_row_reports_the_median():
    assert StreamRow("x", [0.3, 0.1, 0.2]).median_ttfc == 0.2


def test_bedrock_invokes_first_chunk_arrives_early_and_its_call_is_read_inside_the_base64():
    body = invoke_body(3)
    forced = body["tools"][0]["name"]
    body["tool_choice"] = {"type": "tool", "name": forced}
    headers = {**INVOKE_HEADERS, "x-standin-delay-ms": "100"}
    with StandinProvider() as provider:
        conn = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=10)
        streamed = first_chunk(conn, encode(body), headers, INVOKE_STREAM_PATH)
        conn.close()

    assert streamed.first_chunk < 0.1 <= streamed.total
    assert b":event-type" in streamed.body and forced.encode() not in streamed.body
    assert restored_calls(INVOKE_STREAM_PATH, streamed.body) == [forced]


def test_the_streams_are_sse_the_aws_event_stream_and_ndjson_each_with_a_renaming_body():
    sse, events, lines = stream_cases(50)
    assert format_for("POST", sse.path).framing.name == "sse" and sse.prefix == ""
    invoke = format_for("POST", events.path)
    assert invoke.api == "bedrock-invoke" and invoke.framing.name == "aws-eventstream-base64"
    assert events.prefix == EVENT_STREAM
    ollama = format_for("POST", lines.path)
    assert ollama.api == "ollama" and ollama.framing.name == "ndjson"
    assert lines.prefix == NDJSON_STREAM
    for case in (sse, events, lines):
        assert case.app_name.encode() in case.renamed and case.app_name.encode() not in case.body
    # Ollama's own rule renames nothing: its fix row goes through a mitmdump given a rule
    # that does, the others through the one fix mode's mitmdump.
    assert (sse.fix_target, events.fix_target) == (FIX_RENAMING_PATH, FIX_RENAMING_PATH)
    assert lines.fix_rule == "openai" and lines.fix_target != FIX_RENAMING_PATH


def test_ollamas_first_line_arrives_early_and_the_called_tool_is_read_in_it():
    _, _, lines = stream_cases(100)
    with StandinProvider() as provider:
        conn = http.client.HTTPConnection("127.0.0.1", provider.port, timeout=10)
        streamed = first_chunk(conn, lines.body, lines.headers, lines.path)
        conn.close()

    assert streamed.first_chunk < 0.1 <= streamed.total
    assert streamed.body.endswith(b"\n") and b'"done":true' in streamed.body.splitlines()[-1]
    # The stand-in's model calls the tool x-standin-call names by its prefix.
    assert restored_calls(lines.path, streamed.body) == ["get_weather"]
