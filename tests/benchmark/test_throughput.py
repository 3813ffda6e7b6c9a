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


def test_the_naive_renaming_script_renames_as_fix_mode_does_and_gives_names_back():
    import json

    from benchmark.throughput import RENAMING_SCRIPT
    from benchmark.workload import chat_answer
    from benchmark.workload import chat_body
    from benchmark.workload import encode
    from benchmark.workload import mcp_named
    from toolnames_core import Exchange
    from toolnames_core import choose_rule
    from toolnames_core import format_for

    namespace: dict = {}
    exec(RENAMING_SCRIPT, namespace)  # noqa: S102 (the script mitmdump loads in (b))
    named = mcp_named(encode(chat_body(3, size=3_000)))
    chat = format_for("POST", "/v1/chat/completions")
    exchange = Exchange(chat, choose_rule(chat, "api.openai.com"))
    exchange.check_request(named, fix=True)

    class Message:
        def __init__(self, content):
            self.content = content

    class Flow:
        metadata: dict = {}
        request = Message(named)

    flow = Flow()
    namespace["request"](flow)
    # The same names as fix mode's, in every place; only the bytes around them differ.
    assert json.loads(flow.request.content) == json.loads(exchange.new_body)
    alias = json.loads(exchange.new_body)["tools"][0]["function"]["name"]
    flow.response = Message(chat_answer(alias))
    namespace["response"](flow)
    called = json.loads(flow.response.content)["choices"][0]["message"]["tool_calls"][0]
    assert called["function"]["name"] == "get.weather"


@pytest.mark.e2e
def test_a_quick_renaming_run_sends_through_the_naive_script_and_fix_mode_without_errors(tmp_path):
    from benchmark.report import report_renaming
    from benchmark.throughput import bench_renaming

    rows = bench_renaming(cases(labels_with=["10 tools"]), own_mitmdump(), tmp_path, True, 2)

    assert len(rows) == 1 and not rows[0].problems
    assert all(len(rounds) == 2 and min(rounds) > 0 for rounds in rows[0].rps.values())
    assert any(
        t.target.startswith("(b) fix mode, 10 tools") for t in report_renaming(rows, 2).targets
    )


def test_a_mitmdump_that_logged_a_traceback_or_an_addon_error_ends_the_run(tmp_path):
    from benchmark.throughput import raise_on_logged_errors

    class Logged:
        def __init__(self, name, text):
            self.name = name
            self.path = tmp_path / name
            self.path.write_text(text)

        def log_text(self):
            return self.path.read_text()

    clean = Logged("clean", "proxy listening\n")
    raise_on_logged_errors([clean])  # nothing logged: the figures stand

    for text in ("Traceback (most recent call last):\n  boom\n", "Addon error: KeyError\n"):
        with pytest.raises(RuntimeError, match="broken logged an error") as caught:
            raise_on_logged_errors([clean, Logged("broken", "started\n" + text)])
        assert text.strip().splitlines()[-1] in str(caught.value)
