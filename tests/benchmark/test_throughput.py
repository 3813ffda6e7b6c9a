"""(b) Requests per second (benchmark.throughput)."""

import pytest

from benchmark.throughput import JSON_ONLY_SCRIPT
from benchmark.throughput import RpsRow
from benchmark.throughput import bench_rps
from benchmark.workload import cases
from harness.mitmdump import own_mitmdump


def test_the_ratio_takes_the_best_round_of_each_variant():
    row = RpsRow(cases(labels_with=["small"])[0])
    row.rps = {"plain": [90.0, 100.0], "json.loads only": [95.0, 60.0], "toolnames": [97.0, 80.0]}
    row.cpu = {"plain": [0.002, 0.001], "json.loads only": [0.001], "toolnames": [0.00125]}

    # Against json.loads only, the least an addon that reads the tools can cost.
    assert row.ratio == pytest.approx(97 / 95)
    assert row.ratio_to_plain == pytest.approx(0.97)
    # Round by round: 97/95 and 80/60.
    assert row.paired_median == pytest.approx((97 / 95 + 80 / 60) / 2)
    assert row.cpu_ms("plain") == pytest.approx(1.0)
    assert row.cpu_ratio == pytest.approx(0.8)


def test_the_json_loads_script_parses_the_body_once():
    namespace: dict = {}
    exec(JSON_ONLY_SCRIPT, namespace)  # noqa: S102 (the script mitmdump loads in (b))

    class Request:
        content = b'{"a": 1}'

    class Flow:
        request = Request()

    assert namespace["request"](Flow()) is None


@pytest.mark.e2e
def test_a_quick_run_sends_through_three_mitmdumps_without_errors(tmp_path):
    rows = bench_rps(cases(labels_with=["small"]), own_mitmdump(), tmp_path, True, 2)

    assert len(rows) == 1 and not rows[0].problems
    assert all(len(rounds) == 2 and min(rounds) > 0 for rounds in rows[0].rps.values())
