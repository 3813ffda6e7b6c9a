"""(c) Time to the first streamed chunk (benchmark.streaming)."""

import http.client
import json

from benchmark.streaming import StreamRow
from benchmark.streaming import first_chunk
from standin import StandinProvider

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
