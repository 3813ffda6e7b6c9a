"""YAML events to values (scanner.yamlevents): libyaml (PyYAML) and ruamel.yaml give a cassette
the same exchanges, the same failures, and a scan without libyaml says once that it is slow."""

import base64
import gzip
import io
import json
from pathlib import Path

import pytest
import ruamel.yaml
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from samples import recordings as samples
from scanner import yamlevents
from scanner.cassettes import CassetteReader
from scanner.recorded import ReadFailure
from tests.testkit import REPO_ROOT
from tests.testkit import bad_flows
from tests.testkit import scan_json

SAMPLE_CASSETTES = sorted((REPO_ROOT / "flows" / "cassettes").glob("*.y*ml"))
URI = "https://api.openai.com/v1/chat/completions"
REQUEST = json.dumps(samples.weather_request_body())
ANSWER = json.dumps(samples.hallucinated_call_response())


def read(data: bytes, parser: str) -> tuple[list, tuple[bool, str] | None]:
    """Every record a parser yields from ``data``, and how the reading ended."""
    reader = CassetteReader(io.BufferedReader(io.BytesIO(data)), data[-1:], parser)
    records: list = []
    try:
        records.extend(reader.records())
    except ReadFailure as e:
        return records, (e.truncated, e.reason)
    return records, None


def assert_same_reading(data: bytes) -> tuple[list, tuple[bool, str] | None]:
    fast, slow = read(data, "pyyaml"), read(data, "ruamel")
    assert fast[0] == slow[0]
    if fast[1] is None or slow[1] is None:
        assert fast[1] == slow[1]
    else:
        assert fast[1][0] == slow[1][0]  # truncated or not
        # The parsers word their own errors alike but not identically (libyaml does not name
        # the character it could not read, and may count the line of an error one further).
        if fast[1][1].startswith("invalid YAML") or slow[1][1].startswith("invalid YAML"):
            assert fast[1][1].startswith("invalid YAML") and slow[1][1].startswith("invalid YAML")
        else:
            assert fast[1][1] == slow[1][1]
    return fast


def test_the_fast_parser_is_libyaml_in_both_test_environments():
    # requirements/test*.txt pin PyYAML, whose wheels include libyaml.
    assert yamlevents.best_parser() == "pyyaml"
    assert yamlevents.slow_parser_note() is None


@pytest.mark.parametrize("path", SAMPLE_CASSETTES, ids=lambda p: p.name)
def test_the_committed_sample_cassettes_read_the_same_with_both_parsers(path):
    records, failure = assert_same_reading(path.read_bytes())

    assert failure is None
    assert len(records) == 4
    assert all(r.request_content for r in records)


@pytest.mark.parametrize("style", ["block", "flow"])
def test_every_cut_of_a_cassette_reads_the_same_with_both_parsers(style):
    # Block style as vcrpy writes now; flow style for leaf collections as older vcrpy did.
    data = samples.cassette_text(bad_flows()).encode()
    if style == "flow":
        data = GENERATED["anchors and aliases"].encode() + GENERATED["binary bodies"].encode()[14:]
    outcomes = {assert_same_reading(data[:cut])[1] is None for cut in range(0, len(data), 13)}

    assert outcomes == {True, False}  # some cuts still parse whole, most do not


def interaction(
    body: str, answer: str, answer_headers: str = "Content-Type: [application/json]"
) -> str:
    return f"""\
- request:
    body: {body}
    headers: {{Content-Type: [application/json]}}
    method: POST
    uri: {URI}
  response:
    body: {{string: {answer}}}
    headers: {{{answer_headers}}}
    status: {{code: 200, message: OK}}
"""


GZIPPED = base64.b64encode(gzip.compress(ANSWER.encode())).decode()

GENERATED = {
    "multi-document": "interactions:\n"
    + interaction(json.dumps(REQUEST), json.dumps(ANSWER))
    + "version: 1\n---\nsecond: [document, 1]\n",
    "multi-document, broken second": "interactions:\n"
    + interaction(json.dumps(REQUEST), json.dumps(ANSWER))
    + "---\nsecond: [unclosed\n",
    "anchors and aliases": f"""\
interactions:
- request:
    body: &body {json.dumps(REQUEST)}
    headers: &headers {{Content-Type: [application/json]}}
    method: &post POST
    uri: &uri {URI}
  response: &answer
    body: {{string: {json.dumps(ANSWER)}}}
    headers: *headers
    status: {{code: 200}}
- request: {{body: *body, headers: *headers, method: *post, uri: *uri}}
  response: *answer
""",
    "undefined alias": "interactions:\n- request: *nowhere\n",
    "binary bodies": "interactions:\n"
    + interaction(
        "!!binary " + base64.b64encode(REQUEST.encode()).decode(),
        f'!!binary "{GZIPPED}"',
        "Content-Encoding: [gzip], Content-Type: [application/json]",
    )
    + interaction("!!binary not*base64", "!!binary ''"),
    "unicode": "interactions:\n"
    + interaction(
        json.dumps(REQUEST.replace("Paris", "Zürich 東京 😀"), ensure_ascii=False),
        json.dumps(ANSWER.replace("get_weather", "wetter_für_zürich"), ensure_ascii=False),
    )
    + interaction('"caf\\u00e9 \\U0001F600 \\x41"', "'single ''quoted'' é'"),
    "scalar types": "interactions:\n"
    + interaction("null", "~")
    + interaction("!!str 12", "true")
    + interaction("'12'", "1.5e3")
    + "- request: {method: !!python/unicode POST, uri: !!python/unicode 'x', body: !!int '7'}\n",
    "block scalars": f"interactions:\n- request:\n    body: |\n      {REQUEST}\n    method: POST\n"
    f"    uri: {URI}\n  response:\n    body:\n      string: >-\n        {ANSWER}\n"
    "    status: {code: 200}\n",
    "ruby vcr": f"""\
---
http_interactions:
- request:
    method: post
    uri: {URI}
    body:
      encoding: UTF-8
      string: {json.dumps(REQUEST)}
  response:
    status: {{code: 200, message: OK}}
    headers:
      Content-Type:
      - application/json
    body: {{encoding: UTF-8, string: {json.dumps(ANSWER)}}}
  recorded_at: Thu, 01 Jan 2026 00:00:00 GMT
recorded_with: VCR 6.2.0
""",
    "bare list": interaction(json.dumps(REQUEST), json.dumps(ANSWER)),
    "crlf and bom": "\ufeffinteractions:\r\n"
    + interaction(json.dumps(REQUEST), json.dumps(ANSWER)).replace("\n", "\r\n"),
    "keys that are not text": "interactions:\n- {request: {method: POST, uri: x}, [1, 2]: list key, 3: int key}\n",
    "no interactions": "version: 1\nsomething: [else]\n",
    "a scalar document": "just text\n",
    "empty": "",
    "only a comment": "# nothing here\n",
    "cut inside a quoted body": "interactions:\n"
    + interaction(json.dumps(REQUEST), json.dumps(ANSWER))[:-90],
    "cut at the end of a line": "interactions:\n- request:\n    method: POST\n    uri: x\n  response:\n",
    "cut in the middle of a line": "interactions:\n- request:\n    method: POST\n    uri: https://api.op",
    # Older vcrpy wrote leaf collections in flow style; a ':' inside one is plain text.
    "colons in flow collections": "interactions:\n- request:\n    method: POST\n    uri: x\n"
    "    headers: {Date: [Thu, 01 Jan 2026 00:00:00 GMT], X-Url: [https://a.example/b]}\n",
    "yaml 1.2 directive": "%YAML 1.2\n---\ninteractions:\n- request: {method: POST, uri: x}\n",
    "yaml 1.1 directive, explicit tags": "%YAML 1.1\n---\ninteractions:\n"
    "- !!map {request: !!map {method: !!str POST, uri: x, body: !!null ''}}\n",
    "complex key": "interactions:\n- request: {method: POST, uri: x, ? [complex] : 1}\n",
    # The reader resolves YAML 1.1's hex, octal and yes/on as text, with either parser.
    "escapes and 1.1 scalars": "interactions:\n"
    '- request: {method: POST, uri: x, body: "a\\/b\\tc\\N"}\n'
    "- request: {method: POST, uri: x, body: 0x1F, a: 0o17, b: yes, c: on, d: 1_000}\n",
    "tab where indentation goes": "interactions:\n- request:\n\tmethod: POST\n",
}


@pytest.mark.parametrize("name", GENERATED)
def test_generated_cassettes_read_the_same_with_both_parsers(name):
    assert_same_reading(GENERATED[name].encode())


def test_generated_cassettes_hold_what_they_claim():
    # The parity above would also hold if both parsers read nothing: check what was read.
    records, failure = read(GENERATED["anchors and aliases"].encode(), "pyyaml")
    assert failure is None and len(records) == 2
    assert records[0].request_content == records[1].request_content == REQUEST.encode()
    assert records[1].response_content == ANSWER.encode()

    records, failure = read(GENERATED["binary bodies"].encode(), "pyyaml")
    assert failure is None
    assert records[0].request_content == REQUEST.encode()
    assert records[0].response_content == ANSWER.encode()  # !!binary, gunzipped

    records, _ = read(GENERATED["unicode"].encode(), "pyyaml")
    assert "Zürich 東京 😀".encode() in records[0].request_content
    assert records[1].request_content == "café 😀 A".encode()

    records, failure = read(GENERATED["multi-document, broken second"].encode(), "pyyaml")
    assert len(records) == 1 and failure is not None and failure[1].startswith("invalid YAML")

    _, failure = read(GENERATED["cut inside a quoted body"].encode(), "pyyaml")
    assert failure is not None and failure[0]  # truncated

    records, failure = read(GENERATED["colons in flow collections"].encode(), "pyyaml")
    assert failure is None and len(records) == 1

    _, failure = read(GENERATED["undefined alias"].encode(), "pyyaml")
    assert failure is not None and "alias" in failure[1]


def test_known_difference_a_surrogate_escape_stops_libyaml_where_ruamel_reads_on():
    # "\\ud83d" in a double-quoted scalar: no YAML writer emits one (they write "\\U0001F600"
    # or the character itself), so this is left as it is: libyaml refuses the file, ruamel
    # reads a lone surrogate, which the checks then find unreadable as JSON.
    data = ("interactions:\n" + interaction('"\\ud83d\\ude00"', "x")).encode()

    fast, slow = read(data, "pyyaml"), read(data, "ruamel")

    assert fast[0] == [] and fast[1] is not None and "escape" in fast[1][1]
    assert len(slow[0]) == 1 and slow[1] is None


@settings(max_examples=40, deadline=None)
@given(
    bodies=st.lists(
        st.one_of(st.text(), st.binary(max_size=64), st.none(), st.integers()),
        min_size=1,
        max_size=4,
    ),
    flow_style=st.booleans(),
)
def test_any_cassette_ruamel_writes_reads_the_same_with_both_parsers(bodies, flow_style):
    yaml = ruamel.yaml.YAML(typ="safe", pure=True)
    yaml.default_flow_style = flow_style
    out = io.StringIO()
    yaml.dump(
        {
            "interactions": [
                {
                    "request": {"body": b, "method": "POST", "uri": URI},
                    "response": {"body": {"string": b}, "status": {"code": 200}},
                }
                for b in bodies
            ]
        },
        out,
    )
    records, failure = assert_same_reading(out.getvalue().encode("utf-8", "surrogatepass"))

    assert failure is None or not failure[1].startswith("invalid YAML")
    assert len(records) == len(bodies)


def without_libyaml(monkeypatch) -> None:
    """As if PyYAML were not installed."""
    monkeypatch.setattr(yamlevents, "pyyaml", None)


def test_without_libyaml_the_scan_says_once_that_cassettes_are_slow_and_reads_them_alike(
    capsys, monkeypatch, tmp_path
):
    for name in ("a.yaml", "b.yaml"):
        samples.write_cassette(tmp_path / name, bad_flows())
    fast_code, fast_rows, fast_err = scan_json(capsys, tmp_path)
    without_libyaml(monkeypatch)

    code, rows, err = scan_json(capsys, tmp_path)

    assert yamlevents.best_parser() == "ruamel"
    assert "cassettes are read slowly" not in fast_err
    assert err.count("scan: YAML cassettes are read slowly") == 1
    assert "`pip install pyyaml`" in err
    assert (code, rows) == (fast_code, fast_rows)


def test_without_libyaml_a_scan_of_flow_files_says_nothing_about_yaml(
    capsys, monkeypatch, tmp_path
):
    without_libyaml(monkeypatch)

    _, _, err = scan_json(capsys, samples.write_flows(tmp_path / "f.mitm", bad_flows()))

    assert "YAML" not in err


def test_an_unknown_parser_is_refused():
    with pytest.raises(ValueError, match="unknown YAML parser"):
        yamlevents.open_events(io.BytesIO(b""), "nope")


def test_sample_cassettes_exist():
    assert SAMPLE_CASSETTES, Path("flows/cassettes") / "*.yaml"
