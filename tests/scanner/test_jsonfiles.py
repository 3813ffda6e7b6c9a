"""HAR files and JSON cassettes (scanner.jsonfiles), streamed one item at a time."""

import base64
import gzip
import json

import pytest

from samples import recordings as samples
from scanner import jsonfiles
from scanner.recorded import ReadFailure
from tests.testkit import scan_json

# -- HAR and cassette variants ---------------------------------------------------------------


def har_with(entry_changes) -> dict:
    flows = [
        samples.chat_flow(
            "hallucinated", samples.weather_request_body(), samples.hallucinated_call_response()
        )
    ]
    har = samples.har_document(flows)
    entry_changes(har["log"]["entries"][0])
    return har


def _chrome_style(entry: dict) -> None:
    # Browsers keep content-encoding in the headers but store the decoded text, and some
    # tools write headers as [name, value] pairs.
    entry["response"]["headers"] = [
        ["content-type", "application/json"],
        ["content-encoding", "gzip"],
    ]


def _base64_content(entry: dict) -> None:
    content = entry["response"]["content"]
    content["text"] = base64.b64encode(content["text"].encode()).decode()
    content["encoding"] = "base64"


def _base64_raw_gzip(entry: dict) -> None:
    content = entry["response"]["content"]
    content["text"] = base64.b64encode(gzip.compress(content["text"].encode())).decode()
    content["encoding"] = "base64"
    entry["response"]["headers"].append({"name": "Content-Encoding", "value": "gzip"})


def _as_exported(entry: dict) -> None:
    pass


@pytest.mark.parametrize(
    "change",
    [_chrome_style, _base64_content, _base64_raw_gzip, _as_exported],
    ids=lambda f: f.__name__,
)
def test_har_variants_from_browsers_and_tools(capsys, tmp_path, change):
    har = har_with(change)
    har["log"] = {"pages": [{"id": "page_1", "title": "x" * 5000}], **har["log"]}
    path = tmp_path / "v.har"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(har, indent=1).encode())

    _, rows, err = scan_json(capsys, path)

    assert [(r["code"], r["path"]) for r in rows] == [
        ("response-unknown-tool", "choices[0].message.tool_calls[0].function.name")
    ], err


def test_a_har_entry_without_a_request_is_skipped_and_makes_the_scan_incomplete(capsys, tmp_path):
    har = samples.har_document([samples.chat_flow("names", samples.bad_names_body())])
    har["log"]["entries"].insert(0, {"comment": "no request"})
    path = tmp_path / "odd.har"
    path.write_text(json.dumps(har))

    code, rows, err = scan_json(capsys, path)

    assert {r["flow"] for r in rows} == {1}
    assert "entries[0] skipped: the entry has no request object" in err
    assert code == 2


# -- The JSON streamer ----------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_json_items_are_read_whatever_the_chunk_boundaries(monkeypatch, chunk):
    import io

    monkeypatch.setattr(jsonfiles.JsonArrayStream, "CHUNK", chunk)
    doc = {
        "log": {
            "version": 1.25,
            "creator": {"name": 'é " \\u', "n": [1, 2, {"x": None}]},
            "entries": [{"n": 12345}, "s\u00e9\\", 3.5e10, [True, False, None], {}],
            "after": 98765,
        },
        "tail": -0.5,
    }
    stream = jsonfiles.JsonArrayStream(
        io.BytesIO(json.dumps(doc).encode()), {("log", "entries"): "har"}
    )

    assert list(stream.items()) == doc["log"]["entries"]


def test_json_corruption_is_found_without_reading_the_rest_of_the_file():
    import io

    class Counting(io.BytesIO):
        read_bytes = 0

        def read(self, n=-1):
            data = super().read(n)
            Counting.read_bytes += len(data)
            return data

    body = b'{"log": {"entries": [{"a": 1}, {"a": 2 "b": 3}' + b" " * 50_000_000 + b"]}}"
    stream = jsonfiles.JsonArrayStream(Counting(body), {("log", "entries"): "har"})

    items = stream.items()
    assert next(items) == {"a": 1}
    with pytest.raises(ReadFailure, match=r"invalid JSON in log.entries\[1\]"):
        next(items)
    assert Counting.read_bytes < 5_000_000
