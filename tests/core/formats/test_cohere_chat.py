"""Cohere's chat v2 (formats/cohere_chat.py, docs/providers.md §10): its paths, Cohere's rule
on every host, the reading of tools, the REQUIRED/NONE choice and history, the calls of a
whole answer and of a stream (names given back in tool-call-start at any split), the block
answer and the provider's verdict."""

import json

import pytest

from toolnames_core import Exchange
from toolnames_core.formats import FORMATS
from toolnames_core.formats import format_for
from toolnames_core.formats.cohere_chat import FORMAT
from toolnames_core.formats.cohere_chat import StreamCollector
from toolnames_core.formats.cohere_chat import read_calls
from toolnames_core.formats.cohere_chat import read_request
from toolnames_core.framings import SSE
from toolnames_core.streams import StreamTap

BAD = "github.create-issue"


def tool(name):
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


BODY = {
    "model": "command-a-03-2025",
    "messages": [{"role": "user", "content": "file it"}],
    "tools": [tool(BAD), tool("get_weather")],
    "tool_choice": "REQUIRED",
}


def history(name):
    return [
        {"role": "user", "content": "file it"},
        {
            "role": "assistant",
            "tool_plan": "I will file it.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "ok"}]},
    ]


def exchange(host="api.cohere.com", path="/v2/chat"):
    return Exchange.for_request("POST", path, host)


@pytest.mark.parametrize("path", ["/v2/chat", "/v2/chat?x=1", "/cohere/v2/chat"])
def test_v2_chat_paths_are_its_own(path):
    assert format_for("POST", path) is FORMAT


def test_cohere_v1_and_the_compatibility_api_are_not():
    assert format_for("POST", "/v1/chat") is None
    assert format_for("POST", "/compatibility/v1/chat/completions") is FORMATS["openai-chat"]


@pytest.mark.parametrize("host", ["api.cohere.com", "api.cohere.ai", "localhost", "x.azure.com"])
def test_every_host_gets_coheres_rule(host):
    assert exchange(host).rule.id == "cohere"


def test_tools_choice_and_history_are_read_where_they_sit():
    view = read_request({**BODY, "messages": history(BAD)})
    assert [(t.name, t.path) for t in view.tools] == [
        (BAD, "tools[0].function.name"),
        ("get_weather", "tools[1].function.name"),
    ]
    assert [(c.mode, c.path) for c in view.choices] == [("required", "tool_choice")]
    assert [(h.name, h.path) for h in view.history] == [
        (BAD, "messages[1].tool_calls[0].function.name")
    ]
    assert view.problems == []


@pytest.mark.parametrize("value, mode", [("REQUIRED", "required"), ("NONE", "none")])
def test_the_two_choices(value, mode):
    (choice,) = read_request({**BODY, "tool_choice": value}).choices
    assert choice.mode == mode and choice.sent == json.dumps(value)


@pytest.mark.parametrize(
    "value",
    [
        "required",  # OpenAI's spelling
        "AUTO",
        {"type": "function", "function": {"name": "get_weather"}},  # no named form exists
        3,
    ],
)
def test_any_other_choice_is_a_finding_not_a_crash(value):
    ex = exchange()
    ex.check_request(json.dumps({**BODY, "tool_choice": value}).encode())
    findings = [f for f in ex.request_findings if f.code == "choice-malformed"]
    assert [f.path for f in findings] == ["tool_choice"]
    assert (
        "REQUIRED" in findings[0].message and "no choice that names a tool" in findings[0].message
    )


def test_required_without_tools_is_said():
    ex = exchange()
    ex.check_request(json.dumps({"model": "m", "messages": [], "tool_choice": "REQUIRED"}).encode())
    assert [f.code for f in ex.request_findings] == ["choice-without-tools"]


@pytest.mark.parametrize(
    "tools, path",
    [
        ("x", "tools"),
        (["x"], "tools[0]"),
        ([{"type": "web_search"}], "tools[0].type"),
        ([{"type": "function", "function": {"name": 3}}], "tools[0].function.name"),
        ([{"type": "function"}], "tools[0].function"),
    ],
)
def test_malformed_tools_are_said(tools, path):
    view = read_request({"tools": tools})
    assert [f.path for f in view.problems] == [path]


def test_a_name_cohere_rejects_is_found_with_coheres_rule():
    ex = exchange()
    ex.check_request(json.dumps(BODY).encode())
    (finding,) = ex.request_findings
    assert finding.code == "name-invalid-chars" and finding.rule == "cohere"
    assert finding.path == "tools[0].function.name"


def test_fix_renames_tools_and_history_and_gives_the_name_back_in_a_whole_answer():
    ex = exchange()
    ex.check_request(json.dumps({**BODY, "messages": history(BAD)}).encode(), fix=True)
    sent = json.loads(ex.new_body)
    alias = sent["tools"][0]["function"]["name"]
    assert alias != BAD and alias.isidentifier()
    assert sent["messages"][1]["tool_calls"][0]["function"]["name"] == alias
    assert sent["tools"][1]["function"]["name"] == "get_weather"
    answer = {
        "id": "r1",
        "finish_reason": "TOOL_CALL",
        "message": {
            "role": "assistant",
            "tool_plan": "I will call it.",
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": alias, "arguments": "{}"}}
            ],
        },
    }
    restored = json.loads(ex.restore(json.dumps(answer).encode()))
    assert restored["message"]["tool_calls"][0]["function"]["name"] == BAD


def sse(events, done=True):
    out = b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + json.dumps(e).encode() + b"\n\n"
        for e in events
    )
    return out + (b"data: [DONE]\n\n" if done else b"")


def stream_events(name):
    return [
        {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
        {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will"}}},
        {
            "type": "tool-call-start",
            "index": 0,
            "delta": {
                "message": {
                    "tool_calls": {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }
                }
            },
        },
        {
            "type": "tool-call-delta",
            "index": 0,
            "delta": {"message": {"tool_calls": {"function": {"arguments": '{"name": "x"}'}}}},
        },
        {"type": "tool-call-end", "index": 0},
        {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}},
    ]


def test_a_stream_call_is_read_from_its_tool_call_start_only():
    tap = StreamTap(FORMAT).feed_all(sse(stream_events("lookup")))
    assert [(c.name, c.path) for c in tap.calls()] == [
        ("lookup", "events[2].delta.message.tool_calls.function.name")
    ]
    assert tap.problem() is None


def test_a_list_of_calls_in_tool_call_start_is_read_each():
    collector = StreamCollector()
    call = {"id": "c", "type": "function", "function": {"name": "a", "arguments": ""}}
    collector.event(
        {"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": [call]}}}
    )
    assert [c.path for c in collector.calls()] == [
        "events[0].delta.message.tool_calls[0].function.name"
    ]


def test_a_call_to_a_tool_never_offered_is_found_in_a_stream():
    ex = exchange()
    ex.check_request(json.dumps({**BODY, "tools": [tool("get_weather")]}).encode())
    tap = StreamTap(FORMAT).feed_all(sse(stream_events("drop_tables")))
    codes = [f.code for f in ex.check_calls(tap.calls())]
    assert codes == ["response-unknown-tool"]


def test_fix_gives_the_name_back_in_tool_call_start_at_every_split():
    ex = exchange()
    ex.check_request(json.dumps({**BODY, "stream": True}).encode(), fix=True)
    alias = json.loads(ex.new_body)["tools"][0]["function"]["name"]
    wire = sse(stream_events(alias))
    want = sse(stream_events(BAD))
    for cut in range(1, len(wire)):
        tap = ex.stream_tap()
        got = b"".join(tap(piece) for piece in (wire[:cut], wire[cut:], b""))
        assert got == want, cut
        assert [c.name for c in tap.calls()] == [alias]
        ex.restorer.restored = 0


def test_the_done_line_and_events_without_calls_are_no_trouble():
    tap = StreamTap(FORMAT).feed_all(sse(stream_events("x")[:2] + stream_events("x")[-1:]))
    assert tap.calls() == [] and tap.problem() is None
    assert FORMAT.framing is SSE


def test_read_calls_of_a_whole_answer():
    body = {"message": {"tool_calls": [{"function": {"name": "a"}}, {"function": {}}, "x"]}}
    assert [c.path for c in read_calls(body)] == ["message.tool_calls[0].function.name"]
    assert read_calls({"message": "x"}) == [] and read_calls({}) == []


def test_block_answers_in_coheres_error_shape_the_same_each_time():
    ex = exchange()
    ex.check_request(json.dumps(BODY).encode())
    answer = ex.block_response()
    body = json.loads(answer.body)
    assert answer.status == 400 and answer.headers["content-type"] == "application/json"
    assert set(body) == {"id", "message"}
    assert body["message"].startswith(f"toolnames: tools[0].function.name '{BAD}'")
    again = exchange()
    again.check_request(json.dumps(BODY).encode())
    assert again.block_response().body == answer.body


def test_coheres_400_for_a_bad_name_is_tied_to_the_name():
    ex = exchange()
    ex.check_request(json.dumps(BODY).encode())
    text = (
        "invalid request: tool names can only contain certain characters (A-Za-z0-9_) and "
        f"can't begin with a digit (provided name: '{BAD}')."
    )
    error = json.dumps({"id": "6b3c", "message": text}).encode()
    findings = ex.check_response(400, "application/json", error)
    assert [(r.name, r.tied, r.path) for r in ex.rejections] == [
        (BAD, True, "tools[0].function.name")
    ]
    assert [f.code for f in findings] == ["provider-rejected"]
