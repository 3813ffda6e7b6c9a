"""scripts/bench's (d) (benchmark.scanning): the inputs it writes hold the same traffic in each
format, and its table and target say what was measured. Untimed: speed is for scripts/bench."""

from pathlib import Path

from benchmark.scanning import TARGET_CASSETTE_MB_S
from benchmark.scanning import ScanRow
from benchmark.scanning import bench_scan
from benchmark.scanning import report_scan
from benchmark.scanning import traffic
from benchmark.scanning import write_inputs
from tests.testkit import scan_json
from toolnames_core import READERS


def test_each_format_holds_the_same_traffic_and_the_scan_finds_the_same(capsys, tmp_path):
    inputs = write_inputs(tmp_path, 400_000)
    distinct = len(traffic())

    found = {}
    for label, (path, exchanges) in inputs.items():
        assert path.stat().st_size >= 400_000
        code, rows, err = scan_json(capsys, path)
        assert code == 1, err  # the calls to a tool never offered are errors
        assert f"{exchanges} recorded exchanges, {exchanges} LLM API calls checked" in err
        # Each file repeats the same distinct exchanges (a different number of times).
        found[label] = {(r["flow"] % distinct, r["code"]) for r in rows}

    assert found["flow file"] == found["HAR"] == found["cassette"]
    assert found["cassette"] == {(i, "response-unknown-tool") for i in range(0, distinct, 8)}


def test_the_cassette_keeps_gzip_answers_as_binary_as_vcrpy_does(tmp_path):
    inputs = write_inputs(tmp_path, 100_000)

    text = Path(inputs["cassette"][0]).read_text()
    assert "!!binary" in text
    assert text.endswith("version: 1\n")


def test_a_small_run_measures_every_format_and_the_pure_python_reader(tmp_path):
    rows = bench_scan(tmp_path, quick=False, size=300_000)

    # Each input with the first reader, then with each other reader (json, with msgspec there).
    first = [r for r in rows if not r.label.endswith(" reader")]
    labels = [r.label for r in first]
    assert labels[:2] == ["flow file", "HAR"]
    assert labels[2].startswith("cassette (")
    assert labels[3] == "cassette (ruamel.yaml, pure Python)"
    others = [r.label for r in rows if r.label.endswith(" reader")]
    assert others == [f"{label}, {r.name} reader" for label in labels[:3] for r in READERS[1:]]
    assert all(r.read_seconds > 0 and r.scan_seconds > 0 and r.exchanges for r in rows)
    assert all(r.peak_rss and r.peak_rss > 10 * 2**20 for r in first[:3])


def test_the_report_judges_the_libyaml_cassette_row_only():
    rows = [
        ScanRow("flow file", 10_000_000, 300, 0.2, 0.4, 50 * 2**20),
        ScanRow("cassette (libyaml)", 10_000_000, 300, 0.2, 1.0, 50 * 2**20),
        ScanRow("cassette (ruamel.yaml, pure Python)", 1_000_000, 30, 0.6, 0.7, None),
    ]

    part = report_scan(rows)

    assert "| cassette (libyaml) " in part.text and "10.0 MB/s (1.00 s)" in part.text
    assert "50 MiB" in part.text
    assert [(t.target, t.result) for t in part.targets] == [
        ("(d) cassette (libyaml): scan throughput", "MISS")
    ]
    assert part.targets[0].goal == f">= {TARGET_CASSETTE_MB_S:.0f} MB/s"
