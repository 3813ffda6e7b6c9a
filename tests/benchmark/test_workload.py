"""What the benchmark sends (benchmark.workload)."""

import itertools
import json

from benchmark.workload import ASKED
from benchmark.workload import SDK_LOAD_HEADERS
from benchmark.workload import asked_again
from benchmark.workload import cases
from benchmark.workload import chat_body
from benchmark.workload import earlier_requests
from benchmark.workload import encode
from benchmark.workload import mcp_named
from benchmark.workload import renaming_requests
from benchmark.workload import stream_chunks
from benchmark.workload import tool_name


def test_the_cases_span_one_to_a_thousand_tools_and_two_megabyte_bodies():
    by_label = {case.label: case for case in cases()}

    assert [c.tools for c in by_label.values()] == [1, 10, 100, 1000, 50, 0, 0]
    assert 1.9e6 < len(by_label["2 MB, 50 tools"].raw) < 2.1e6  # "about" 2 MB
    assert 1.9e6 < len(by_label["no tools, 2 MB"].raw) < 2.1e6
    assert by_label["no tools, 2 MB"].size == f"{len(by_label['no tools, 2 MB'].raw) / 1e6:.1f} MB"
    assert len(json.loads(by_label["1000 tools"].raw)["tools"]) == 1000


def test_cases_are_chosen_by_part_of_their_label():
    assert [c.label for c in cases(labels_with=["small"])] == ["no tools, small"]
    assert [c.label for c in cases(only=["1 tool", "10 tools"])] == ["1 tool", "10 tools"]


def test_tool_names_are_distinct_and_valid_everywhere():
    names = [tool_name(i) for i in range(1000)]

    assert len(set(names)) == 1000
    assert all(n.replace("_", "").isalnum() and len(n) <= 64 for n in names)


def test_bodies_are_reproducible_and_encoded_as_the_sdk_sends_them():
    assert encode(chat_body(10)) == encode(chat_body(10))
    assert b": " not in encode({"a": 1, "b": "é"}) and "é".encode() in encode({"b": "é"})


def test_the_load_headers_leave_what_http_client_sets_itself():
    assert "Host" not in SDK_LOAD_HEADERS and "Connection" not in SDK_LOAD_HEADERS
    assert SDK_LOAD_HEADERS["user-agent"].startswith("OpenAI/Python")


def test_an_mcp_named_body_differs_only_in_its_tool_names_and_the_calls_of_them():
    raw = encode(chat_body(3, size=5_000))
    named = json.loads(mcp_named(raw))
    plain = json.loads(raw)

    def calls(body):
        return [c["function"] for m in body["messages"] for c in m.get("tool_calls") or ()]

    assert [t["function"]["name"] for t in named["tools"]] == [
        t["function"]["name"].replace("_", ".", 1) for t in plain["tools"]
    ]
    assert len(calls(named)) > 1
    assert [c["name"] for c in calls(named)] == [
        c["name"].replace("_", ".", 1) for c in calls(plain)
    ]
    for function in (*(t["function"] for t in (*named["tools"], *plain["tools"])),):
        function.pop("name")
    for function in (*calls(named), *calls(plain)):
        function.pop("name")
    assert named == plain


def test_earlier_requests_grow_a_round_each_and_end_with_the_body_itself():
    raw = encode(chat_body(3, size=20_000))
    body = json.loads(raw)
    rounds = sum(m["role"] == "user" for m in body["messages"][:-1])
    assert rounds > 5

    sent = earlier_requests(raw, 5)

    assert len(sent) == 5 and sent[-1] is raw
    parsed = [json.loads(b) for b in sent]
    for earlier, later in itertools.pairwise(parsed):
        # Each holds the one before it but for the last question, and one round more.
        assert later["messages"][: len(earlier["messages"]) - 1] == earlier["messages"][:-1]
        added = later["messages"][len(earlier["messages"]) - 1 : -1]
        assert added[0]["role"] == "user" and [m["role"] for m in added].count("user") == 1
    for earlier in parsed:
        assert earlier["messages"][-1] == body["messages"][-1]
        assert {k: v for k, v in earlier.items() if k != "messages"} == {
            k: v for k, v in body.items() if k != "messages"
        }
    assert sent[0] == encode(parsed[0])  # encoded as the SDK sends it
    # A conversation of fewer rounds gives what it holds: its first request is the system
    # prompt and the question.
    everything = earlier_requests(raw, rounds + 10)
    assert len(everything) == rounds + 1
    assert [m["role"] for m in json.loads(everything[0])["messages"]] == ["system", "user"]
    assert earlier_requests(raw, 1) == [raw]


def test_the_stream_calls_the_tool_in_fragments_then_ends():
    chunks = stream_chunks("get_weather")
    events = [json.loads(c.removeprefix(b"data: ")) for c in chunks[:-1]]

    assert chunks[-1] == b"data: [DONE]\n\n"
    calls = [e["choices"][0]["delta"].get("tool_calls") for e in events]
    assert calls[1][0]["function"]["name"] == "get_weather"
    arguments = "".join(c[0]["function"]["arguments"] for c in calls[1:] if c)
    assert json.loads(arguments) == {"city": "Paris", "unit": "celsius", "days": 3}
    assert events[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_a_question_asked_again_keeps_all_but_the_last_message_and_differs_in_it():
    raw = encode(chat_body(3, size=3_000))
    body = json.loads(raw)

    asked = asked_again(raw, 3)

    assert asked[0] == raw and len(set(asked)) == 3
    for sent in map(json.loads, asked[1:]):
        assert sent["messages"][:-1] == body["messages"][:-1]
        assert {k: v for k, v in sent.items() if k != "messages"} == {
            k: v for k, v in body.items() if k != "messages"
        }
        last = sent["messages"][-1]
        assert last["role"] == "user" and last["content"].startswith(
            body["messages"][-1]["content"]
        )
    assert asked[1] == encode(json.loads(asked[1]))  # as the SDK sends it


def test_fix_mode_is_timed_over_requests_its_splice_never_holds_whole():
    # The splice keeps a few large bodies it searched (jsonsplice._MAX_SCANNED): sent in turn,
    # each request is one it does not hold, as a chat client's next request is.
    from toolnames_core import jsonsplice

    raw = encode(chat_body(3, size=3_000))

    assert renaming_requests(raw) == asked_again(mcp_named(raw), ASKED)
    assert ASKED > jsonsplice._MAX_SCANNED
