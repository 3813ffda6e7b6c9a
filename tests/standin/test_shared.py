"""What the stand-in's formats share (standin.shared): the fake model's order of answers, its
arguments, how a stream is cut into pieces."""

import json

from standin.openai_chat import ChatCompletions
from standin.shared import PARALLEL_WRAPPERS
from standin.shared import Offered
from standin.shared import Turn
from standin.shared import arguments_for
from standin.shared import pieces
from standin.shared import sse_event
from standin.shared import text_pieces

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OFFERED = {"get_weather": Offered(WEATHER), "lookup": Offered({"type": "object"})}


def test_arguments_fill_a_required_string_city_and_nothing_else():
    assert arguments_for("get_weather", OFFERED) == {"city": "Paris"}
    assert arguments_for("lookup", OFFERED) == {}
    assert arguments_for("never_offered", OFFERED) == {}


def test_the_parallel_wrapper_gets_the_shape_models_send():
    arguments = arguments_for(PARALLEL_WRAPPERS[0], OFFERED)

    assert arguments == {
        "tool_uses": [{"recipient_name": "functions.get_weather", "parameters": {}}]
    }


def test_the_fake_model_answers_a_tool_result_then_the_header_then_the_forced_tool():
    chat = ChatCompletions()
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}]
    forced = {"type": "function", "function": {"name": "get_weather"}}
    body = {"messages": [{"role": "user", "content": "hi"}], "tools": tools, "tool_choice": forced}
    after_tool = {**body, "messages": [*body["messages"], {"role": "tool", "content": "ok"}]}

    assert chat.decide(after_tool, "/v1/chat/completions", b"x", "lookup").text == "done"
    by_header = chat.decide(body, "/v1/chat/completions", b"x", "lookup, get_weather")
    assert [c.name for c in by_header.calls] == ["lookup", "get_weather"]
    assert [c.arguments for c in chat.decide(body, "/p", b"x", "").calls] == [{"city": "Paris"}]
    assert chat.decide({"messages": []}, "/p", b"x", "").text == "hello"


def test_a_prefix_with_a_star_calls_every_offered_tool_it_starts_and_none_else():
    chat = ChatCompletions()
    names = ["mcp__srv__create_issue_1a2b3c4d", "Bash", "mcp__srv__search_docs", "mcp__other__x"]
    tools = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]
    body = {"messages": [{"role": "user", "content": "hi"}], "tools": tools}

    by_prefix = chat.decide(body, "/v1/chat/completions", b"x", "mcp__srv__*")
    assert [c.name for c in by_prefix.calls] == [names[0], names[2]]
    mixed = chat.decide(body, "/p", b"x", "Bash, mcp__other__*")
    assert [c.name for c in mixed.calls] == ["Bash", "mcp__other__x"]
    # A request offering no such tool (a client's title or summary request) gets text.
    assert chat.decide({"messages": []}, "/p", b"x", "mcp__srv__*").text == "hello"


def test_the_same_request_gets_the_same_ids():
    chat = ChatCompletions()
    first = chat.decide({"messages": []}, "/p", b"body", "")
    again = chat.decide({"messages": []}, "/p", b"body", "")
    other = chat.decide({"messages": []}, "/p", b"other body", "")

    assert first.uid == again.uid != other.uid


def test_tokens_grow_with_the_calls():
    assert Turn("m", "u", text="hello").output_tokens == 2
    two_calls = ChatCompletions().decide({}, "/p", b"x", "a,b")
    assert len(two_calls.calls) == 2 and two_calls.output_tokens == 17


def test_pieces_cut_text_into_several_deltas_that_join_back():
    assert pieces("abcdefg", 3) == ["abc", "def", "g"]
    assert pieces("", 3) == [""]
    assert text_pieces("hello") == ["hel", "lo"]
    assert "".join(text_pieces("a longer answer")) == "a longer answer"


def test_sse_events_are_compact_json_with_an_optional_event_name():
    assert sse_event({"a": 1}) == b'data: {"a":1}\n\n'
    assert sse_event("[DONE]") == b"data: [DONE]\n\n"
    named = sse_event({"type": "x"}, event="x")
    assert named.startswith(b"event: x\ndata: ")
    assert json.loads(named.split(b"data: ", 1)[1]) == {"type": "x"}
