"""YAML cassettes (scanner.cassettes): vcrpy, pytest-recording, Ruby VCR, betamax."""

import base64
import gzip
import json

import pytest

from samples import recordings as samples
from tests.testkit import bad_flows
from tests.testkit import big_flagged_flow
from tests.testkit import measured_scan
from tests.testkit import run_scan
from tests.testkit import scan_found
from tests.testkit import scan_json


def test_a_cassette_cut_where_it_is_still_valid_yaml_is_reported_as_truncated(tmp_path):
    path = samples.write_cassette(tmp_path / "c.yaml", bad_flows())
    text = path.read_text()
    # Inside the last interaction's uri, a plain scalar: what is left still parses.
    path.write_text(text[: text.rindex("uri: https://") + len("uri: https://api.ope")])

    result = run_scan(path)

    assert result.returncode == 2
    assert (
        f"scan: {path}: truncated after 7 interactions: the file ends in the middle of a line"
        in result.stderr
    )


MASTRA_TEXT = json.dumps(samples.mastra_choice_mismatch_body())


CALL_TEXT = json.dumps(samples.hallucinated_call_response())


WEATHER_TEXT = json.dumps(samples.weather_request_body())


URI = "https://api.openai.com/v1/chat/completions"


CASSETTES = {
    # vcrpy 1.x+ as pytest-recording writes it (see also samples.cassette_text).
    "vcrpy-flow-style.yaml": f"""\
interactions:
- request:
    body: {json.dumps(WEATHER_TEXT)}
    headers: {{Content-Type: [application/json]}}
    method: POST
    uri: {URI}
  response:
    body: {{string: !!binary "{base64.b64encode(gzip.compress(CALL_TEXT.encode())).decode()}"}}
    headers: {{Content-Encoding: [gzip], Content-Type: [application/json]}}
    status: {{code: 200, message: OK}}
version: 1
""",
    # Python 2 era vcrpy wrote !!python/unicode.
    "vcrpy-py2.yaml": f"""\
interactions:
- request:
    body: !!python/unicode {json.dumps(WEATHER_TEXT)}
    method: POST
    uri: !!python/unicode '{URI}'
  response:
    body: {{string: !!python/unicode {json.dumps(CALL_TEXT)}}}
    headers: {{}}
    status: {{code: 200, message: OK}}
""",
    # vcrpy's first format: a bare list.
    "vcrpy-v0.yaml": f"""\
- request:
    body: {json.dumps(WEATHER_TEXT)}
    method: POST
    uri: {URI}
  response:
    body: {{string: {json.dumps(CALL_TEXT)}}}
    status: {{code: 200}}
""",
    # Ruby VCR (and VCR-compatible tools): http_interactions, lower-case method, encoded bodies.
    "ruby-vcr.yml": f"""\
---
http_interactions:
- request:
    method: post
    uri: {URI}
    body:
      encoding: UTF-8
      string: {json.dumps(WEATHER_TEXT)}
    headers:
      Content-Type:
      - application/json
  response:
    status:
      code: 200
      message: OK
    headers:
      Content-Type:
      - application/json
    body:
      encoding: UTF-8
      string: {json.dumps(CALL_TEXT)}
  recorded_at: Thu, 01 Jan 2026 00:00:00 GMT
recorded_with: VCR 6.2.0
""",
    # vcrpy's JSON serializer.
    "vcrpy.json": json.dumps(
        {
            "interactions": [
                {
                    "request": {"body": WEATHER_TEXT, "headers": {}, "method": "POST", "uri": URI},
                    "response": {
                        "body": {"string": CALL_TEXT},
                        "headers": {"Content-Type": ["application/json"]},
                        "status": {"code": 200, "message": "OK"},
                    },
                }
            ],
            "version": 1,
        }
    ),
    # betamax: JSON, base64_string bodies.
    "betamax.json": json.dumps(
        {
            "http_interactions": [
                {
                    "request": {
                        "body": {"encoding": "utf-8", "string": WEATHER_TEXT},
                        "headers": {},
                        "method": "POST",
                        "uri": URI,
                    },
                    "response": {
                        "body": {
                            "encoding": None,
                            "base64_string": base64.b64encode(CALL_TEXT.encode()).decode(),
                        },
                        "headers": {"Content-Type": ["application/json"]},
                        "status": {"code": 200, "message": "OK"},
                        "url": URI,
                    },
                    "recorded_at": "2026-01-01T00:00:00",
                }
            ],
            "recorded_with": "betamax/0.9.0",
        }
    ),
    # Structured JSON bodies and a bare status code, as some vcrpy forks write them.
    "structured.yaml": f"""\
version: 1
interactions:
  - request:
      method: POST
      uri: {URI}
      body:
        type: json
        content: {WEATHER_TEXT}
    response:
      status: 200
      body:
        type: json
        content: {CALL_TEXT}
""",
}


@pytest.mark.parametrize("name", CASSETTES)
def test_cassette_forms(capsys, tmp_path, name):
    path = tmp_path / name
    path.write_text(CASSETTES[name])

    code, rows, err = scan_json(capsys, path)

    assert [(r["format"], r["code"], r["path"]) for r in rows] == [
        ("cassette", "response-unknown-tool", "choices[0].message.tool_calls[0].function.name")
    ], err
    assert code == 1


def test_a_cassette_with_a_mastra_request_and_a_streamed_answer(capsys, tmp_path):
    flows = [
        samples.chat_flow("m", samples.mastra_choice_mismatch_body()),
        samples.chat_flow(
            "s",
            samples.weather_request_body(stream=True),
            samples.streamed_call_response("get_weather"),
            content_type="text/event-stream",
        ),
    ]
    _, rows, _ = scan_json(capsys, samples.write_cassette(tmp_path / "c.yaml", flows))

    assert scan_found(rows) == [(0, "choice-not-in-tools", "tool_choice.function.name")]


def test_memory_stays_bounded_while_scanning_a_large_cassette(tmp_path):
    # ~100 MB of interactions, each a 110 KB request with a bad name and a hallucinated call:
    # one interaction's YAML, repeated.
    text = samples.cassette_text([big_flagged_flow()])
    one = text[text.index("- request:") : text.rindex("version: 1\n")]
    count = 100 * 1024 * 1024 // len(one)
    path = tmp_path / "big.yaml"
    with open(path, "w") as f:
        f.write("interactions:\n")
        for _ in range(count):
            f.write(one)
        f.write("version: 1\n")
    size_mb = path.stat().st_size / 2**20

    scan = measured_scan(path, tmp_path)

    assert scan.code == 1, scan.stderr
    summary = f"{count} recorded exchanges, {count} LLM API calls checked: {2 * count} errors"
    assert summary in scan.stderr
    assert "read slowly" not in scan.stderr
    assert size_mb > 95
    assert scan.peak_mb < 150, f"peak RSS {scan.peak_mb:.0f} MB while scanning {size_mb:.0f} MB"
