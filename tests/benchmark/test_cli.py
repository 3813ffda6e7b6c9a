"""scripts/bench's command line (benchmark.cli)."""

import pytest

from benchmark.cli import main
from benchmark.cli import profiled_cases
from benchmark.streaming import EVENT_STREAM
from benchmark.streaming import FIX_RENAMING_PATH
from benchmark.streaming import NDJSON_STREAM


def test_help_names_the_three_parts_and_the_quick_run(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--help"])

    out = capsys.readouterr().out
    assert caught.value.code == 0
    assert "--quick" in out and "--only" in out and "--mitmdump" in out


def test_a_quick_run_of_part_a_prints_its_table_and_targets(capsys, tmp_path):
    assert (
        main(["--quick", "--only", "a", "--cases", "small", "--markdown", str(tmp_path / "a.md")])
        == 0
    )

    out = capsys.readouterr().out
    assert "(a) CPU per request" in out
    assert "| (a) no tools, small: request hook |" in out
    assert "targets met in" in out


def test_every_run_writes_its_tables_as_markdown_where_it_says(capsys, tmp_path):
    out_file = tmp_path / "run.md"

    assert main(["--quick", "--only", "a", "--cases", "small", "--markdown", str(out_file)]) == 0

    text = out_file.read_text()
    assert text.startswith("# toolnames bench, ") and ", quick, parts a, cases small" in text
    # The notes are paragraphs, not code blocks; the tables and the verdicts are kept whole.
    assert "\n    " not in text
    assert "| (a) no tools, small: request hook |" in text and "\nTargets\n" in text
    assert "targets met in" in text and "((a) " in text.splitlines()[-1]
    assert "A full run" not in capsys.readouterr().out  # a quick run is no full run


def test_runs_write_to_a_file_of_their_own_a_quick_one_marked():
    from benchmark.cli import default_markdown_path

    full = default_markdown_path(False, now=1_796_295_600.0)
    assert full.parts[-3:] == ("artifacts", "bench", "20261203T110000Z.md")
    assert default_markdown_path(True, now=1_796_295_600.0).name == "20261203T110000Z-quick.md"


def test_the_b_schedule_plans_both_tables_at_each_connection_count():
    from benchmark.throughput import FULL_SCHEDULE
    from benchmark.throughput import RENAMING_VARIANTS
    from benchmark.throughput import VARIANTS
    from benchmark.throughput import planned_seconds
    from benchmark.workload import cases

    chosen = cases(labels_with=["10 tools", "no tools, small"])
    per_round = FULL_SCHEDULE.duration * FULL_SCHEDULE.rounds * 2  # 1 and 16 connections

    expected = per_round * (2 * len(VARIANTS) + len(RENAMING_VARIANTS))
    assert planned_seconds(chosen, False, [1, 16]) == pytest.approx(expected)


def test_a_quick_run_of_part_c_streams_sse_bedrocks_event_stream_and_ndjson(capsys, tmp_path):
    # 5 ms between events: the run checks that fix mode gives the app's name back in each
    # stream (inside the base64 for Bedrock, a line at a time for Ollama) and reports a row
    # per path; no figure is judged.
    markdown = tmp_path / "c.md"
    main(["--quick", "--only", "c", "--delay-ms", "5", "--markdown", str(markdown)])

    out = capsys.readouterr().out
    for path in ("streaming mitmdump", "mitmdump + toolnames", FIX_RENAMING_PATH):
        assert f"| {path} " in out and f"| {EVENT_STREAM}{path} " in out
        assert f"| {NDJSON_STREAM}{path} " in out
    assert "| (c) Bedrock InvokeModel event stream: first chunk vs streaming mitmdump |" in out
    assert f"| (c) {NDJSON_STREAM}first chunk vs streaming mitmdump " in out
    assert "NDJSON, 2 lines" in out
    assert "base64, 7 events" in out


def test_profile_takes_each_body_once_in_its_order_a_label_with_a_comma_whole():
    chosen = profiled_cases(["2 MB, 50 tools", "10 tools", "2 MB, 50 tools"])

    assert [c.label for c in chosen] == ["2 MB, 50 tools", "10 tools"]


@pytest.mark.parametrize("label", ["no tools, small", "11 tools", "2 MB"])
def test_a_profile_of_no_body_with_tools_stops_the_run_before_it_starts(capsys, tmp_path, label):
    with pytest.raises(SystemExit) as caught:
        main(["--only", "a", "--profile", "10 tools", "--profile", label])

    assert f"no body with tools is labelled {label!r}" in str(caught.value.code)
    assert capsys.readouterr().out == ""  # nothing measured first


def test_observe_mode_is_profiled_with_any_body_fix_mode_only_with_one_with_tools():
    chosen = profiled_cases(["no tools, small", "10 tools"], "--profile-observe", tools_only=False)

    assert [c.label for c in chosen] == ["no tools, small", "10 tools"]
    with pytest.raises(SystemExit, match="--profile-observe: no body is labelled '11 tools'"):
        main(
            ["--only", "a", "--profile-observe", "no tools, small", "--profile-observe", "11 tools"]
        )
