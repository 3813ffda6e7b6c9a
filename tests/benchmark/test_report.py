"""The benchmark's tables and verdicts (benchmark.report)."""

import pytest

from benchmark.cpu import FIX_GROWING
from benchmark.cpu import FIX_RENAMING
from benchmark.cpu import JSON_GROWING
from benchmark.cpu import STREAM_FIX
from benchmark.cpu import STREAM_OBSERVE
from benchmark.cpu import CpuRow
from benchmark.report import TARGET_CPU
from benchmark.report import TARGET_FAST_CPU
from benchmark.report import report_cpu
from benchmark.report import report_stream
from benchmark.report import table
from benchmark.streaming import EVENT_STREAM
from benchmark.streaming import FIX_RENAMING_PATH
from benchmark.streaming import NDJSON_STREAM
from benchmark.streaming import StreamRow
from benchmark.workload import Case
from toolnames_core import READERS


def cpu_row(tools: int, json_loads: float, hook: float) -> CpuRow:
    samples = {
        "json.loads": [json_loads, json_loads * 2],
        "check_request": [hook, hook],
        "request hook": [hook, hook],
        "flow hooks": [hook * 2, hook * 2],
    }
    return CpuRow(Case(f"{tools} tools", b"{}", tools), samples)


def test_a_table_pads_every_cell_to_its_column():
    text = table(["a", "bb"], [["ccc", "d"]])

    assert text.splitlines() == ["| a   | bb |", "|-----|----|", "| ccc | d  |"]


def test_cpu_targets_pass_up_to_the_limit_and_miss_beyond_it():
    part = report_cpu([cpu_row(10, 1e-5, 1e-5 * TARGET_CPU), cpu_row(10, 1e-5, 1e-5 * 1.6)])

    assert [t.result for t in part.targets if "msgspec" not in t.target] == ["PASS", "MISS"]
    assert "1.50x" in part.targets[0].measured and "| 10 tools |" in part.text


@pytest.mark.skipif(READERS[0].name != "msgspec", reason="msgspec is not installed")
def test_with_msgspec_the_hook_must_cost_less_than_json_loads_from_10_tools_up():
    rows = [
        cpu_row(10, 1e-5, 0.9e-5),
        cpu_row(100, 1e-5, 1e-5 * TARGET_FAST_CPU),
        cpu_row(1, 1e-5, 0.5e-5),
    ]

    part = report_cpu(rows)

    fast = [(t.target, t.result) for t in part.targets if "msgspec" in t.target]
    assert fast == [
        ("(a) 10 tools: request hook, msgspec reader", "PASS"),
        ("(a) 100 tools: request hook, msgspec reader", "MISS"),
    ]
    assert "Readers side by side" in part.text


def test_a_body_without_tools_is_held_to_the_stricter_target():
    assert report_cpu([cpu_row(0, 1e-5, 0.6e-5)]).targets[0].result == "MISS"


def test_the_stream_is_judged_against_streaming_mitmdump_and_identical_bytes():
    rows = [
        StreamRow("plain mitmdump", [0.2], [0.2]),
        StreamRow("streaming mitmdump", [0.010], [0.2]),
        StreamRow("mitmdump + toolnames", [0.0104], [0.2]),
    ]
    assert [t.result for t in report_stream(rows, 50).targets] == ["PASS", "PASS"]

    rows[2].identical = False
    assert report_stream(rows, 50).targets[0].result == "MISS"


def test_a_row_of_fix_modes_renaming_gets_a_line_of_its_own():
    rows = [
        StreamRow("plain mitmdump", [0.2], [0.2]),
        StreamRow("streaming mitmdump", [0.010], [0.2]),
        StreamRow("mitmdump + toolnames", [0.0104], [0.2]),
        StreamRow(FIX_RENAMING_PATH, [0.0150], [0.2]),
    ]
    part = report_stream(rows, 50)

    assert f"| {FIX_RENAMING_PATH} | 15.0 ms" in part.text
    assert [t.result for t in part.targets] == ["PASS", "PASS"]  # the targets are observe's


def test_the_cpu_table_shows_fix_modes_renaming_against_its_own_json_loads():
    row = cpu_row(10, 1e-5, 1e-5)
    row.samples.update({"json.loads, MCP-named": [2e-5], FIX_RENAMING: [8e-5]})

    assert "80.0 µs (4.00x)" in report_cpu([row]).text
    main_table = report_cpu([cpu_row(10, 1e-5, 1e-5)]).text.split("\n\nReaders side by side")[0]
    assert main_table.splitlines()[-1].rstrip(" |").endswith("-")


@pytest.mark.parametrize(("growing", "result"), [(2e-3, "PASS"), (2.01e-3, "MISS")])
def test_a_growing_conversation_is_judged_against_json_loads_of_the_same_requests(growing, result):
    row = cpu_row(50, 1e-3, 1e-3)
    row.samples.update(
        {
            "json.loads, MCP-named": [1e-3],
            FIX_RENAMING: [1.5e-3],
            JSON_GROWING: [1e-3, 3e-3],
            FIX_GROWING: [growing, 4e-3],
        }
    )

    part = report_cpu([row])

    (target,) = [t for t in part.targets if "growing" in t.target]
    assert target.target == "(a) 50 tools: fix mode, the conversation growing a round a request"
    assert target.goal == "<= 2.0x json.loads" and target.result == result
    cell = f"1,500 µs (1.50x); growing a round a request: {growing * 1e6:,.0f} µs"
    assert f"{cell} ({growing / 1e-3:.2f}x)" in part.text
    # A body that is not a long conversation is not sent as one growing, nor judged so.
    plain = cpu_row(50, 1e-3, 1e-3)
    plain.samples.update({"json.loads, MCP-named": [1e-3], FIX_RENAMING: [1.5e-3]})
    assert not [t for t in report_cpu([plain]).targets if "growing" in t.target]
    assert "growing" not in report_cpu([plain]).text


@pytest.mark.parametrize(("fix", "result"), [(1.2e-5, "PASS"), (1.21e-5, "MISS")])
def test_restoring_a_stream_is_judged_against_observing_it_per_chunk(fix, result):
    row = cpu_row(10, 1e-5, 1e-5)
    row.samples.update({STREAM_OBSERVE: [1e-5, 2e-5], STREAM_FIX: [fix, 3e-5]})

    part = report_cpu([row])

    (target,) = [t for t in part.targets if "stream" in t.target]
    assert target.target == "(a) 10 tools: fix mode, restoring a stream, per chunk"
    assert target.goal == "<= 1.2x observing it" and target.result == result
    assert f"10.0 µs / {fix * 1e6:.1f} µs ({fix / 1e-5:.2f}x)" in part.text
    # A row without the stream columns shows none, and is not judged on them.
    assert not [t for t in report_cpu([cpu_row(10, 1e-5, 1e-5)]).targets if "stream" in t.target]


def test_one_tool_and_a_small_body_without_tools_are_held_to_absolute_budgets():
    within = report_cpu([cpu_row(1, 1e-6, 24e-6), cpu_row(0, 1e-7, 4.9e-6)])
    beyond = report_cpu([cpu_row(1, 1e-3, 26e-6), cpu_row(0, 1e-3, 5.1e-6)])

    assert [t.result for t in within.targets] == ["PASS", "PASS"]  # 24x and 49x json.loads
    assert [t.result for t in beyond.targets] == ["MISS", "MISS"]  # far below json.loads
    assert [t.goal for t in within.targets] == ["<= 25.0 µs", "<= 5.0 µs"]


def rate_row(row_class, by_connections: dict[int, dict[str, float]], tools: int = 10):
    """A (b) row whose every variant made the given req/s in each of two rounds, at 2 ms of
    mitmdump's CPU per request with one connection and 1 ms with more."""
    from benchmark.throughput import Rounds

    row = row_class(Case(f"{tools} tools", b"{}", tools))
    row.rounds = {
        n: {v: Rounds([rps, rps], [0.002 if n == 1 else 0.001] * 2) for v, rps in rates.items()}
        for n, rates in by_connections.items()
    }
    return row


def test_each_b_row_shows_req_s_and_cpu_per_request_at_1_and_16_connections():
    from benchmark.report import report_rps
    from benchmark.throughput import RpsRow

    rates = {"plain": 100.0, "json.loads only": 90.0, "toolnames": 99.0}
    row = rate_row(RpsRow, {1: {v: r / 4 for v, r in rates.items()}, 16: rates})

    text = report_rps([row]).text

    assert "Each cell: 1 / 16 client connections." in text
    line = next(x for x in text.splitlines() if x.startswith("| 10 tools |"))
    assert "| 25.0 / 100.0 " in line and "| 22.5 / 90.0 " in line and "| 24.8 / 99.0 " in line
    assert "| 1.100 / 1.100 (1.100; 1.100-1.100) " in line  # toolnames / json.loads only
    cpu = text.split("mitmdump's CPU per request")[1]
    assert "| 10 tools | 2.00 / 1.00 " in cpu


def test_a_b_ratio_shows_the_range_of_its_rounds_beside_their_median():
    from benchmark.report import report_rps
    from benchmark.throughput import RpsRow

    rates = {"plain": 100.0, "json.loads only": 90.0, "toolnames": 99.0}
    row = rate_row(RpsRow, {1: rates, 16: rates})
    row.rounds[16]["toolnames"].rps = [99.0, 72.0]  # rounds of 1.1 and 0.8 at 16

    part = report_rps([row])

    line = next(x for x in part.text.splitlines() if x.startswith("| 10 tools |"))
    assert "| 1.100 / 1.100 (0.950; 0.800-1.100) " in line  # the best rounds' ratio stays
    (observe,) = part.targets
    assert observe.measured == "1.100 (paired median 0.950, rounds 0.800-1.100; 0.990 of plain)"


def test_the_json_loads_only_mitmdump_against_its_twin_is_shown_beside_the_addon():
    from benchmark.report import report_rps
    from benchmark.throughput import JSON_ONLY_AGAIN
    from benchmark.throughput import RpsRow

    rates = {"plain": 100.0, "json.loads only": 90.0, JSON_ONLY_AGAIN: 85.5, "toolnames": 99.0}
    row = rate_row(RpsRow, {1: rates, 16: rates})

    part = report_rps([row])

    header = next(x for x in part.text.splitlines() if x.startswith("| body "))
    assert f"| {JSON_ONLY_AGAIN} / json.loads only (paired median at 16; its rounds) " in header
    line = next(x for x in part.text.splitlines() if x.startswith("| 10 tools |"))
    assert "| 0.950 / 0.950 (0.950; 0.950-0.950) " in line
    (observe,) = part.targets  # judged as before: the twin is the noise shown, not a target
    assert observe.measured.endswith("; json.loads only against itself 0.950)")
    assert observe.result == "PASS"


def test_each_fix_mode_b_target_shows_the_floor_measured_in_its_rounds():
    from benchmark.report import report_renaming
    from benchmark.throughput import FIX_MODE
    from benchmark.throughput import JSON_ONLY
    from benchmark.throughput import NAIVE_RENAMING
    from benchmark.throughput import RenamingRow

    rates = {NAIVE_RENAMING: 100.0, JSON_ONLY: 120.0, FIX_MODE: 110.0}
    row = rate_row(RenamingRow, {1: rates, 16: rates}, tools=100)

    part = report_renaming([row])

    header = next(x for x in part.text.splitlines() if x.startswith("| body "))
    assert f"| {JSON_ONLY} / {NAIVE_RENAMING} (paired median at 16; its rounds) " in header
    assert part.targets  # judged on fix mode alone: the floor is shown, not judged
    for target in part.targets:
        assert "; the floor, json.loads only, 1.200" in target.measured
        assert JSON_ONLY not in target.target


@pytest.mark.skipif(READERS[0].name != "msgspec", reason="msgspec is not installed")
def test_a_fix_mode_target_above_the_floor_says_json_loads_alone_falls_short_of_it():
    from benchmark.report import report_renaming
    from benchmark.throughput import FIX_MODE
    from benchmark.throughput import JSON_ONLY
    from benchmark.throughput import NAIVE_RENAMING
    from benchmark.throughput import RenamingRow

    # The floor (json.loads only) at 1.2 of the naive renamer: over 1.0, under 1.3.
    rates = {NAIVE_RENAMING: 100.0, JSON_ONLY: 120.0, FIX_MODE: 110.0}
    row = rate_row(RenamingRow, {1: rates, 16: rates}, tools=100)

    judged = {t.goal: t for t in report_renaming([row]).targets}

    over, under = (
        judged[">= 1.0 of the naive renaming mitmdump"],
        judged[">= 1.3 of the naive renaming mitmdump"],
    )
    assert over.result == "PASS" and "under the target" not in over.measured
    assert under.result == "MISS"
    assert under.measured.endswith(
        "; the floor, json.loads only, 1.200, under the target 1.3: "
        "json.loads alone falls short of it here)"
    )


@pytest.mark.skipif(READERS[0].name != "msgspec", reason="msgspec is not installed")
def test_observe_b_targets_are_parity_at_few_tools_and_1_2_with_msgspec_from_100_tools_up():
    from benchmark.report import report_rps
    from benchmark.throughput import RpsRow

    def judged(tools: int, ratio: float) -> list[tuple[str, str, str]]:
        rates = {"plain": 100.0, "json.loads only": 100.0, "toolnames": 100.0 * ratio}
        row = rate_row(RpsRow, {1: rates, 16: rates}, tools)
        return [(t.target, t.goal, t.result) for t in report_rps([row]).targets]

    json_only = "of json.loads-only mitmdump"
    # 1 and 10 tools: parity within the machine's noise, nothing more.
    assert judged(1, 0.97) == [("(b) 1 tools", f">= 0.97 {json_only}", "PASS")]
    assert judged(10, 0.969)[0][2] == "MISS" and len(judged(10, 0.97)) == 1
    # From 100 tools up msgspec must show: 1.2, where 1.19 is not enough.
    for tools in (100, 1000):
        assert judged(tools, 1.2)[1] == (
            f"(b) {tools} tools: msgspec reader",
            f">= 1.2 {json_only}",
            "PASS",
        )
        assert judged(tools, 1.19)[1][2] == "MISS"
    # The 2 MB conversation (50 tools) keeps issue 17's "above 1.0".
    assert judged(50, 1.01)[1][1:] == (f"> 1.0 {json_only}", "PASS")


def test_the_event_stream_gets_a_table_and_a_target_against_its_own_streaming_mitmdump():
    rows = [
        StreamRow("plain mitmdump", [0.2], [0.2]),
        StreamRow("streaming mitmdump", [0.010], [0.2]),
        StreamRow("mitmdump + toolnames", [0.0104], [0.2]),
        StreamRow(EVENT_STREAM + "streaming mitmdump", [0.020], [0.3]),
        StreamRow(EVENT_STREAM + "mitmdump + toolnames", [0.0206], [0.3]),
        StreamRow(EVENT_STREAM + FIX_RENAMING_PATH, [0.0300], [0.3]),
    ]
    part = report_stream(rows, 50)

    assert [t.result for t in part.targets] == ["PASS", "PASS", "PASS"]
    assert part.targets[2].measured == "1.030"  # against 20 ms, not the SSE rows' 10 ms
    assert f"| {EVENT_STREAM}{FIX_RENAMING_PATH} | 30.0 ms" in part.text
    rows[5].identical = False
    assert report_stream(rows, 50).targets[2].result == "MISS"
    rows[4].ttfc = [0.0220]
    rows[5].identical = True
    assert report_stream(rows, 50).targets[2].result == "MISS"


def test_ollamas_ndjson_gets_a_table_and_a_target_of_its_own():
    rows = [
        StreamRow("plain mitmdump", [0.2], [0.2]),
        StreamRow("streaming mitmdump", [0.010], [0.2]),
        StreamRow("mitmdump + toolnames", [0.0104], [0.2]),
        StreamRow(NDJSON_STREAM + "streaming mitmdump", [0.030], [0.3]),
        StreamRow(NDJSON_STREAM + "mitmdump + toolnames", [0.0309], [0.3]),
        StreamRow(NDJSON_STREAM + FIX_RENAMING_PATH, [0.0400], [0.3]),
    ]
    part = report_stream(rows, 50)

    assert part.targets[2].target == (f"(c) {NDJSON_STREAM}first chunk vs streaming mitmdump")
    assert [t.result for t in part.targets] == ["PASS", "PASS", "PASS"]
    assert part.targets[2].measured == "1.030"  # against 30 ms, its own baseline
    assert f"| {NDJSON_STREAM}{FIX_RENAMING_PATH} | 40.0 ms" in part.text
    assert f"| {NDJSON_STREAM}streaming mitmdump |" not in part.text.split("\n\n")[0]
    rows[4].ttfc = [0.0330]
    assert report_stream(rows, 50).targets[2].result == "MISS"
