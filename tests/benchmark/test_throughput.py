"""(b) Requests per second (benchmark.throughput)."""

import pytest

from benchmark.throughput import JSON_ONLY_SCRIPT
from benchmark.throughput import RENAMING_VARIANTS
from benchmark.throughput import VARIANTS
from benchmark.throughput import RpsRow
from benchmark.throughput import bench_rps
from benchmark.workload import cases
from harness.mitmdump import own_mitmdump


def rounds(rps, cpu=None):
    from benchmark.throughput import Rounds

    return Rounds(list(rps), list(cpu or [0.001] * len(rps)))


def test_the_ratio_takes_the_best_round_of_each_variant_at_the_most_connections():
    row = RpsRow(cases(labels_with=["small"])[0])
    row.rounds = {
        16: {
            "plain": rounds([90.0, 100.0], [0.002, 0.001]),
            "json.loads only": rounds([95.0, 60.0], [0.001, 0.003]),
            "toolnames": rounds([97.0, 80.0], [0.00125, 0.002]),
        },
        1: {
            "plain": rounds([50.0, 52.0]),
            "json.loads only": rounds([40.0, 41.0]),
            "toolnames": rounds([30.0, 20.0]),
        },
    }

    assert row.connections == [1, 16] and row.judged == 16
    # Against json.loads only, the least an addon that reads the tools can cost.
    assert row.ratio == pytest.approx(97 / 95)
    assert row.ratio_to_plain == pytest.approx(0.97)
    # Round by round: 97/95 and 80/60; their median, and their range as a report shows it.
    assert row.per_round("toolnames", "json.loads only") == pytest.approx([97 / 95, 80 / 60])
    assert row.paired("toolnames", "json.loads only") == pytest.approx((97 / 95 + 80 / 60) / 2)
    assert row.spread("toolnames", "json.loads only") == "1.021-1.333"
    assert row.spread("toolnames", "json.loads only", 1) == "0.488-0.750"
    assert row.cpu_ms("plain") == pytest.approx(1.0)
    assert row.cpu_ratio == pytest.approx(0.8)
    # One connection is kept apart, and both are shown, fewest first.
    assert row.rate_ratio("toolnames", "json.loads only", 1) == pytest.approx(30 / 41)
    assert row.rates("toolnames") == "30.0 / 97.0"
    assert row.cpu_text("json.loads only") == "1.00 / 1.00"
    assert row.of_json_only("toolnames, json reader") is None


def test_rounds_alternate_connections_and_rotate_the_mitmdumps(monkeypatch):
    import benchmark.throughput as throughput

    sent = []

    class Result:
        def __init__(self, port, count):
            self.rps, self.requests, self.statuses, self.errors = port * 10 + count, 4, {200: 4}, []

    def fake_load(port, requests, connections, *, duration=None, count=None):
        sent.append((port, connections, "warm" if count else "round"))
        return Result(port, connections)

    class Proc:
        def __init__(self, port):
            self.port, self.used = port, 0.0

        def cpu_seconds(self):
            self.used += 0.002
            return self.used

    monkeypatch.setattr(throughput, "run_load", fake_load)
    procs = {"a": Proc(1), "b": Proc(2)}
    row = RpsRow(cases(labels_with=["small"])[0])

    throughput.run_rounds(row, procs, ("a", "b"), lambda i: None, [1, 16], 0.1, 2, 32)

    assert sent[:2] == [(1, 16, "warm"), (2, 16, "warm")]
    order = [(port, n) for port, n, kind in sent if kind == "round"]
    assert order == [(1, 1), (2, 1), (1, 16), (2, 16), (2, 1), (1, 1), (2, 16), (1, 16)]
    assert row.rounds[1]["a"].rps == [11, 11] and row.rounds[16]["b"].rps == [36, 36]
    # CPU per request: the process's CPU time over the round's requests.
    assert row.rounds[16]["a"].cpu == pytest.approx([0.0005, 0.0005])


def test_a_full_runs_time_under_load_follows_from_its_schedule():
    from benchmark.throughput import FULL_SCHEDULE
    from benchmark.throughput import Schedule

    assert Schedule(1.5, 3, 2).seconds(rows=7, variants=4, connections=[1, 16]) == 252.0
    assert FULL_SCHEDULE.seconds(1, 1, [1]) == FULL_SCHEDULE.duration * FULL_SCHEDULE.rounds


def test_the_json_loads_script_parses_the_request_and_the_answer_once_each(monkeypatch):
    import json

    namespace: dict = {}
    exec(JSON_ONLY_SCRIPT, namespace)  # noqa: S102 (the script mitmdump loads in (b))
    parsed = []
    monkeypatch.setattr(json, "loads", lambda raw: parsed.append(raw))

    class Message:
        def __init__(self, content):
            self.content = content

    class Flow:
        request = Message(b'{"tools": []}')
        response = Message(b'{"choices": []}')

    namespace["request"](Flow())
    namespace["response"](Flow())

    # As toolnames must: the request for its tools, the answer for the calls in it.
    assert parsed == [b'{"tools": []}', b'{"choices": []}']


@pytest.mark.e2e
def test_a_quick_run_sends_through_every_mitmdump_of_the_table_without_errors(tmp_path):
    rows = bench_rps(cases(labels_with=["small"]), own_mitmdump(), tmp_path, True, [1, 2])

    assert len(rows) == 1 and not rows[0].problems
    measured = [r for by_variant in rows[0].rounds.values() for r in by_variant.values()]
    assert len(measured) == 2 * len(VARIANTS)
    assert all(len(r.rps) == 2 and min(r.rps) > 0 and min(r.cpu) > 0 for r in measured)


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

    rows = bench_renaming(cases(labels_with=["10 tools"]), own_mitmdump(), tmp_path, True, [1, 2])

    assert len(rows) == 1 and not rows[0].problems
    measured = [r for by_variant in rows[0].rounds.values() for r in by_variant.values()]
    assert all(len(r.rps) == 2 and min(r.rps) > 0 for r in measured)
    assert len(measured) == 2 * len(RENAMING_VARIANTS)  # the floor, json.loads only, too
    assert any(t.target.startswith("(b) fix mode, 10 tools") for t in report_renaming(rows).targets)


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


def test_a_load_sends_its_requests_in_turn():
    from benchmark.throughput import requests_in_turn
    from benchmark.workload import CHAT_PATH

    requests = requests_in_turn([b"a", b"b", b"c"])

    assert [requests(i).body for i in range(5)] == [b"a", b"b", b"c", b"a", b"b"]
    assert requests(0).path == CHAT_PATH


def test_fix_modes_table_sends_each_body_asked_again_in_turn(monkeypatch, tmp_path):
    from benchmark import throughput
    from benchmark.workload import renaming_requests

    sent = {}

    def run_rows(row_class, variants, chosen, bodies, *rest):
        sent.update(bodies)
        return []

    monkeypatch.setattr(throughput, "run_rows", run_rows)
    chosen = cases(only=["10 tools", "no tools, small"])

    throughput.bench_renaming(chosen, own_mitmdump(), tmp_path, False, [1])

    assert sent == {"10 tools": renaming_requests(chosen[0].raw)}
