"""(a) CPU per request (benchmark.cpu)."""

import json

import pytest

from benchmark.cpu import FIX_GROWING
from benchmark.cpu import FIX_RENAMING
from benchmark.cpu import GROWING_ROUNDS
from benchmark.cpu import JSON_GROWING
from benchmark.cpu import STREAM_FIX
from benchmark.cpu import STREAM_OBSERVE
from benchmark.cpu import bench_cpu
from benchmark.cpu import chat_flow
from benchmark.cpu import in_turn
from benchmark.cpu import other_reader
from benchmark.cpu import renamed_flows
from benchmark.cpu import renewer
from benchmark.cpu import streamed_answer
from benchmark.cpu import time_interleaved
from benchmark.workload import Case
from benchmark.workload import cases
from benchmark.workload import chat_body
from benchmark.workload import earlier_requests
from benchmark.workload import encode
from benchmark.workload import mcp_name
from benchmark.workload import mcp_named
from benchmark.workload import renaming_requests
from harness.inprocess import running
from toolnames_core import READERS
from toolnames_core import StreamTap
from toolnames_mitm import ToolNames


def test_each_function_is_timed_once_per_repeat():
    calls = {"a": 0, "b": 0}

    def bump(name):
        calls[name] += 1

    samples = time_interleaved({"a": lambda: bump("a"), "b": lambda: bump("b")}, 0.001, 3)

    assert [len(s) for s in samples.values()] == [3, 3]
    assert all(t > 0 for s in samples.values() for t in s)
    assert calls["a"] > 3 and calls["b"] > 3


def test_the_flow_is_the_openai_sdks_request_and_a_clean_answer():
    flow, response = chat_flow(b'{"model": "m"}')

    assert flow.live and flow.request.path == "/v1/chat/completions"
    assert flow.request.headers["x-stainless-lang"] == "python"
    assert response.status_code == 200 and b"hello" in response.content


def test_a_quick_run_measures_the_four_functions_for_each_body_and_reader():
    rows = bench_cpu(cases(labels_with=["small"]), quick=True)

    assert [r.case.label for r in rows] == ["no tools, small"]
    # The plain columns with the first reader, the reading ones with each other reader too.
    others = {other_reader(n, r) for r in READERS[1:] for n in ("check_request", "request hook")}
    assert set(rows[0].samples) == {
        "json.loads",
        "check_request",
        "request hook",
        "flow hooks",
        *others,
    }
    assert rows[0].ratio("json.loads") == 1.0


def test_a_body_with_tools_also_measures_fix_modes_renaming_and_restoring_a_stream():
    rows = bench_cpu(cases(only=["1 tool"]), quick=True)

    assert {"json.loads, MCP-named", FIX_RENAMING, STREAM_OBSERVE, STREAM_FIX} <= set(
        rows[0].samples
    )
    assert rows[0].renaming_ratio > 0 and rows[0].stream_ratio > 0
    # One round of conversation: nothing to send as it grew.
    assert FIX_GROWING not in rows[0].samples and rows[0].growing_ratio is None


def test_fix_modes_renaming_is_timed_over_the_question_asked_again_in_turn(monkeypatch):
    from benchmark import cpu

    made = []
    real = cpu.renamed_flows

    def renamed_flows(bodies):
        made.append(list(bodies))
        return real(bodies)

    monkeypatch.setattr(cpu, "renamed_flows", renamed_flows)
    (case,) = cases(only=["1 tool"])

    bench_cpu([case], quick=True)

    assert made == [renaming_requests(case.raw)]


def test_a_long_conversation_is_also_renamed_as_it_grew_a_round_a_request():
    case = Case("long", encode(chat_body(3, size=GROWING_ROUNDS * 2_000)), 3)

    (row,) = bench_cpu([case], quick=True)

    assert {JSON_GROWING, FIX_GROWING} <= set(row.samples) and row.growing_ratio > 0


def test_turns_are_taken_in_order_and_start_over():
    called = []
    turns = in_turn([lambda: called.append("a"), lambda: called.append("b")])
    for _ in range(5):
        turns()

    assert called == ["a", "b", "a", "b", "a"]
    alone = [lambda: None]
    assert in_turn(alone) is alone[0]


def test_renamed_flows_send_each_request_as_it_grew_in_turn():
    (case,) = cases(only=["2 MB, 50 tools"])
    grown = earlier_requests(mcp_named(case.raw), 3)
    sent = []
    real = ToolNames.request

    def request(self, flow):
        sent.append(flow.request.raw_content)
        real(self, flow)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ToolNames, "request", request)
        with renamed_flows(grown) as renaming:
            del sent[:]  # the runs that found the alias and checked each flow once
            for _ in range(4):
                renaming()

    # Each as the client sent it, a flow of its own renewed for each run.
    assert sent == [grown[0], grown[1], grown[2], grown[0]]


@pytest.mark.parametrize("mode", ["observe", "fix"])
def test_a_streamed_answer_gives_the_client_the_apps_name_and_runs_again(mode):
    (case,) = cases(only=["10 tools"])
    app = mcp_name(json.loads(case.raw)["tools"][0]["function"]["name"])
    seen = []
    real = StreamTap.pieces

    def pieces(self, chunk):
        out = real(self, chunk)
        seen.extend(out)
        return out

    streaming = streamed_answer(case.raw, mode)  # raises SystemExit if the client would not
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StreamTap, "pieces", pieces)
        streaming()
        streaming()
    out = b"".join(seen)
    # Run after run, the tap hands the client the app's own name, in fix mode given back.
    assert out.count(f'"name":"{app}"'.encode()) == 2


def test_the_answer_can_call_a_tool():
    _, response = chat_flow(b"{}", call="github_create_issue_1a2b3c4d")

    (call,) = json.loads(response.content)["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "github_create_issue_1a2b3c4d"


def test_a_renewed_flow_is_renamed_again_as_it_came_off_the_wire():
    """The renaming loop puts the client's request and the provider's answer back by their
    bytes and header fields, not by Message.content (which the loop would charge fix mode
    for): after each run the flow is as it came, and fix mode renames and restores it alike."""
    (case,) = cases(only=["10 tools"])
    named = mcp_named(case.raw)
    with running(toolnames_mode="fix") as (_, tn):
        flow, _ = chat_flow(named)
        tn.request(flow)
        alias = json.loads(flow.request.content)["tools"][0]["function"]["name"]
        flow, response = chat_flow(named, call=alias)
        came = (flow.request.headers.fields, response.headers.fields, response.raw_content)
        renew = renewer(flow, response)
        sent = []
        for _ in range(2):
            renew()
            assert flow.response is None and flow.request.raw_content == named
            assert (flow.request.headers.fields, *came[1:]) == came
            tn.request(flow)
            sent.append((flow.request.raw_content, flow.request.headers.fields))
            flow.response = response
            tn.responseheaders(flow)
            tn.response(flow)
            assert flow.metadata["toolnames"]["restored"] == 1
            assert alias.encode() not in response.raw_content
    # Renamed, with its length and Accept-Encoding changed, the same way both times.
    assert sent[0] == sent[1] and sent[0][0] != named
    assert dict(sent[0][1])[b"content-length"] == str(len(sent[0][0])).encode()


def test_the_renamed_flow_runs_again_and_is_checked_to_give_the_call_back():
    (case,) = cases(only=["10 tools"])
    with renamed_flows([mcp_named(case.raw)]) as renaming:
        renaming()
        renaming()
    # Names the rule accepts are not aliased, so nothing is given back: said, not timed.
    with pytest.raises(SystemExit, match="did not restore"), renamed_flows([case.raw]):
        pass
