"""The Chat Completions adapter's request side (formats/openai_chat.py): every shape it reads."""

import json

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.testkit import SDK_DIR
from tests.testkit import sse
from toolnames_core.formats import FORMATS
from toolnames_core.formats.openai_chat import block_response
from toolnames_core.formats.openai_chat import read_request
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import NameRef

SDK_FIXTURES = SDK_DIR


def fn(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def custom(name: str) -> dict:
    return {"type": "custom", "custom": {"name": name}}


def problems(body: dict) -> list[tuple[str, str]]:
    return [(p.code, p.path) for p in read_request(body).problems]


def test_the_adapter_is_registered_for_openai_chat():
    assert FORMATS["openai-chat"].read_request is read_request
    assert FORMATS["openai-chat"].block_response is block_response


# --- tools ---------------------------------------------------------------------------------


def test_function_and_custom_tools_are_read_with_their_paths_and_kinds():
    view = read_request({"tools": [fn("get_weather"), custom("run_sql")]})
    assert view.tools_given
    assert view.tools == [
        NameRef("get_weather", ("tools", 0, "function", "name"), "function"),
        NameRef("run_sql", ("tools", 1, "custom", "name"), "custom"),
    ]
    assert view.problems == []
    assert view.offered_names == {"get_weather", "run_sql"}


def test_legacy_functions_are_offered_tools_too():
    view = read_request({"functions": [{"name": "get_weather", "parameters": {}}]})
    assert view.tools_given
    assert view.tools == [NameRef("get_weather", ("functions", 0, "name"), "function")]


def test_names_are_read_verbatim_whatever_they_hold():
    view = read_request({"tools": [fn(""), fn("search.web"), fn("a" * 200), fn("😀")]})
    assert [t.name for t in view.tools] == ["", "search.web", "a" * 200, "😀"]
    assert view.problems == []


@pytest.mark.parametrize(
    "body,tools_given",
    [({}, False), ({"tools": []}, True), ({"functions": []}, True), ({"messages": []}, False)],
)
def test_tools_given_tells_an_empty_list_from_no_list(body, tools_given):
    view = read_request(body)
    assert view.tools_given is tools_given
    assert view.tools == []


@pytest.mark.parametrize(
    "body,expected",
    [
        ({"tools": "get_weather"}, [("tool-malformed", "tools")]),
        ({"tools": {"0": fn("x")}}, [("tool-malformed", "tools")]),
        ({"tools": ["get_weather"]}, [("tool-malformed", "tools[0]")]),
        ({"tools": [None]}, [("tool-malformed", "tools[0]")]),
        ({"tools": [{"function": {"name": "x"}}]}, [("tool-malformed", "tools[0].type")]),
        ({"tools": [{"type": "web_search", "name": "x"}]}, [("tool-malformed", "tools[0].type")]),
        ({"tools": [{"type": ["function"]}]}, [("tool-malformed", "tools[0].type")]),
        ({"tools": [{"type": "function"}]}, [("tool-malformed", "tools[0].function")]),
        (
            {"tools": [{"type": "function", "function": "x"}]},
            [("tool-malformed", "tools[0].function")],
        ),
        (
            {"tools": [{"type": "function", "function": {}}]},
            [("tool-malformed", "tools[0].function.name")],
        ),
        (
            {"tools": [{"type": "function", "function": {"name": 7}}]},
            [("tool-malformed", "tools[0].function.name")],
        ),
        (
            {"tools": [{"type": "custom", "custom": {"name": None}}]},
            [("tool-malformed", "tools[0].custom.name")],
        ),
        # A custom tool keeps its name under "custom", not "function".
        (
            {"tools": [{"type": "custom", "function": {"name": "x"}}]},
            [("tool-malformed", "tools[0].custom")],
        ),
        ({"functions": "x"}, [("tool-malformed", "functions")]),
        ({"functions": [3]}, [("tool-malformed", "functions[0]")]),
        ({"functions": [{"name": False}]}, [("tool-malformed", "functions[0].name")]),
    ],
)
def test_malformed_tools_are_problems_at_their_own_path(body, expected):
    assert problems(body) == expected
    assert read_request(body).tools == []


def test_a_malformed_tool_does_not_hide_the_good_ones_around_it():
    view = read_request({"tools": [fn("a"), 5, {"type": "function", "function": {}}, fn("b")]})
    assert [t.name for t in view.tools] == ["a", "b"]
    assert [p.path for p in view.problems] == ["tools[1]", "tools[2].function.name"]


@pytest.mark.parametrize(
    "tool,message",
    [
        (
            {"type": "function", "function": {"name": 7}},
            "tools[0].function.name is a number, expected a string",
        ),
        ("x", "tools[0] is a string, expected an object"),
        ({"type": "web_search"}, 'tools[0].type is "web_search", expected "function" or "custom"'),
        ({"name": "x"}, 'tools[0].type is null, expected "function" or "custom"'),
    ],
)
def test_a_tool_problem_says_what_was_found_and_what_was_expected(tool, message):
    (problem,) = read_request({"tools": [tool]}).problems
    assert problem == Finding("tool-malformed", "error", problem.path, message)


# --- tool_choice -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["none", "auto", "required"])
def test_string_tool_choices_are_read_as_modes(mode):
    view = read_request({"tools": [fn("a")], "tool_choice": mode})
    assert view.choices == [Choice(mode, ("tool_choice",))]
    assert view.problems == []


def test_a_named_function_choice_points_at_its_name():
    view = read_request(
        {"tools": [fn("a")], "tool_choice": {"type": "function", "function": {"name": "a"}}}
    )
    ref = NameRef("a", ("tool_choice", "function", "name"), "function")
    assert view.choices == [Choice("named", ("tool_choice",), (ref,))]


def test_a_named_custom_choice_points_at_its_name():
    view = read_request(
        {"tools": [custom("c")], "tool_choice": {"type": "custom", "custom": {"name": "c"}}}
    )
    ref = NameRef("c", ("tool_choice", "custom", "name"), "custom")
    assert view.choices == [Choice("named", ("tool_choice",), (ref,))]


def test_allowed_tools_entries_each_point_at_their_name():
    choice = {
        "type": "allowed_tools",
        "allowed_tools": {"mode": "required", "tools": [fn("a"), custom("c")]},
    }
    view = read_request({"tools": [fn("a"), custom("c")], "tool_choice": choice})
    where = ("tool_choice", "allowed_tools")
    assert view.choices == [
        Choice(
            "allowed",
            where,
            (
                NameRef("a", (*where, "tools", 0, "function", "name"), "function"),
                NameRef("c", (*where, "tools", 1, "custom", "name"), "custom"),
            ),
        )
    ]
    assert view.problems == []


@pytest.mark.parametrize("mode", ["none", "auto"])
def test_legacy_function_call_modes_are_read(mode):
    view = read_request({"functions": [{"name": "a"}], "function_call": mode})
    assert view.choices == [Choice(mode, ("function_call",))]


def test_a_legacy_named_function_call_points_at_its_name():
    view = read_request({"functions": [{"name": "a"}], "function_call": {"name": "a"}})
    ref = NameRef("a", ("function_call", "name"), "function")
    assert view.choices == [Choice("named", ("function_call",), (ref,))]


def test_tool_choice_and_function_call_are_both_read_when_both_are_sent():
    view = read_request({"tools": [fn("a")], "tool_choice": "auto", "function_call": {"name": "b"}})
    assert [c.where for c in view.choices] == [("tool_choice",), ("function_call",)]


@pytest.mark.parametrize(
    "choice,path,says",
    [
        # The AI SDK's internal shape, leaked onto the wire (docs/providers.md §17).
        ({"type": "tool", "toolName": "search.web"}, "tool_choice", "AI SDK"),
        # The Responses API's shape, sent to Chat Completions.
        ({"type": "function", "name": "get_weather"}, "tool_choice", "Responses API shape"),
        # Anthropic's vocabulary.
        ("any", "tool_choice", 'expected "none", "auto", "required" or an object'),
        ({"type": "any"}, "tool_choice", 'expected type "function", "custom" or "allowed_tools"'),
        (
            {"type": "tool", "name": "x"},
            "tool_choice",
            'expected type "function", "custom" or "allowed_tools"',
        ),
        ("AUTO", "tool_choice", 'expected "none", "auto", "required" or an object'),
        (5, "tool_choice", "is a number, expected a string or an object"),
        (True, "tool_choice", "is a boolean, expected a string or an object"),
        (["auto"], "tool_choice", "is an array, expected a string or an object"),
        ({}, "tool_choice", 'expected type "function", "custom" or "allowed_tools"'),
        (
            {"type": "function"},
            "tool_choice",
            'a "function" choice needs {"function": {"name": "<tool name>"}}',
        ),
        ({"type": "function", "function": "a"}, "tool_choice", 'a "function" choice needs'),
        ({"type": "function", "function": {"name": 1}}, "tool_choice", 'a "function" choice needs'),
        (
            {"type": "custom", "name": "c"},
            "tool_choice",
            'a "custom" choice needs {"custom": {"name": "<tool name>"}}',
        ),
        ({"type": "allowed_tools"}, "tool_choice.allowed_tools", '"mode": "auto" | "required"'),
        (
            {"type": "allowed_tools", "allowed_tools": []},
            "tool_choice.allowed_tools",
            '"tools": [...]',
        ),
        (
            {"type": "allowed_tools", "allowed_tools": {"mode": "any", "tools": [fn("a")]}},
            "tool_choice.allowed_tools",
            '"mode": "auto" | "required"',
        ),
        (
            {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": "a"}},
            "tool_choice.allowed_tools",
            '"tools": [...]',
        ),
    ],
)
def test_malformed_tool_choices_are_choice_malformed_with_the_value_and_why(choice, path, says):
    view = read_request({"tools": [fn("a")], "tool_choice": choice})
    (problem,) = view.problems
    assert (problem.code, problem.severity, problem.path) == ("choice-malformed", "error", path)
    assert problem.message.startswith(path + " ")
    assert says in problem.message
    assert view.choices == []


def test_a_malformed_choice_message_quotes_at_most_120_characters_of_the_value():
    (problem,) = read_request(
        {"tools": [fn("a")], "tool_choice": {"type": "x", "pad": "p" * 500}}
    ).problems
    assert json.dumps({"type": "x", "pad": "p" * 500})[:120] in problem.message
    assert "p" * 200 not in problem.message


@pytest.mark.parametrize(
    "entry,path",
    [
        ("a", "tool_choice.allowed_tools.tools[1]"),
        ({"type": "web_search"}, "tool_choice.allowed_tools.tools[1]"),
        ({"name": "a"}, "tool_choice.allowed_tools.tools[1]"),
        ({"type": "function"}, "tool_choice.allowed_tools.tools[1]"),
        ({"type": "function", "name": "a"}, "tool_choice.allowed_tools.tools[1]"),
    ],
)
def test_a_malformed_allowed_tools_entry_is_reported_and_the_others_still_count(entry, path):
    choice = {
        "type": "allowed_tools",
        "allowed_tools": {"mode": "auto", "tools": [fn("a"), entry, fn("b")]},
    }
    view = read_request({"tools": [fn("a"), fn("b")], "tool_choice": choice})
    assert [(p.code, p.path) for p in view.problems] == [("choice-malformed", path)]
    (allowed,) = view.choices
    assert [ref.name for ref in allowed.names] == ["a", "b"]
    assert [ref.where[3] for ref in allowed.names] == [0, 2]


@pytest.mark.parametrize(
    "value", ["required", "any", 0, [], {"name": 3}, {"function": {"name": "a"}}]
)
def test_malformed_legacy_function_calls_are_choice_malformed(value):
    view = read_request({"functions": [{"name": "a"}], "function_call": value})
    assert [(p.code, p.path) for p in view.problems] == [("choice-malformed", "function_call")]
    assert view.choices == []


# --- history ---------------------------------------------------------------------------------


def test_history_tool_calls_and_legacy_function_calls_are_read_from_assistant_messages():
    body = {
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": "{}"},
                    },
                    {"id": "2", "type": "custom", "custom": {"name": "run_sql", "input": "x"}},
                    {"id": "3", "function": {"name": "no_type_given", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "1", "content": "sunny"},
            {"role": "assistant", "function_call": {"name": "old_style", "arguments": "{}"}},
        ]
    }
    view = read_request(body)
    assert view.history == [
        NameRef("get_weather", ("messages", 1, "tool_calls", 0, "function", "name"), "function"),
        NameRef("run_sql", ("messages", 1, "tool_calls", 1, "custom", "name"), "custom"),
        NameRef("no_type_given", ("messages", 1, "tool_calls", 2, "function", "name"), "function"),
        NameRef("old_style", ("messages", 3, "function_call", "name"), "function"),
    ]
    assert view.problems == []


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "tool_calls": [{"type": "function", "function": {"name": "x.y"}}]},
        {"role": "user", "name": "x.y", "content": "a user's name is not a tool's"},
        {"role": "tool", "content": "r", "tool_call_id": "c1"},
        {"role": "function", "name": 7, "content": "r"},
        {"role": "assistant", "content": "no calls"},
        {"role": "assistant", "tool_calls": None},
        "not a message",
        None,
    ],
)
def test_history_is_only_read_from_assistant_calls_and_named_results(message):
    view = read_request({"messages": [message]})
    assert view.history == []
    assert view.problems == []


@pytest.mark.parametrize("role", ["function", "tool"])
def test_a_result_that_carries_its_functions_name_is_history(role):
    view = read_request({"messages": [{"role": role, "name": "x.y", "content": "r"}]})
    assert view.history == [NameRef("x.y", ("messages", 0, "name"))]


@pytest.mark.parametrize("messages", [None, "hi", {"role": "assistant"}, 3])
def test_a_messages_value_that_is_not_a_list_is_left_alone(messages):
    view = read_request({"messages": messages})
    assert (view.history, view.problems) == ([], [])


@pytest.mark.parametrize(
    "message,path",
    [
        ({"role": "assistant", "tool_calls": "get_weather"}, "messages[0].tool_calls"),
        (
            {"role": "assistant", "tool_calls": {"function": {"name": "a"}}},
            "messages[0].tool_calls",
        ),
        ({"role": "assistant", "tool_calls": ["get_weather"]}, "messages[0].tool_calls[0]"),
        ({"role": "assistant", "tool_calls": [None]}, "messages[0].tool_calls[0]"),
        (
            {"role": "assistant", "tool_calls": [{"type": "function"}]},
            "messages[0].tool_calls[0].function",
        ),
        (
            {
                "role": "assistant",
                "tool_calls": [{"type": "function", "function": {"arguments": "{}"}}],
            },
            "messages[0].tool_calls[0].function.name",
        ),
        ({"role": "assistant", "function_call": "get_weather"}, "messages[0].function_call"),
        ({"role": "assistant", "function_call": {"name": 1}}, "messages[0].function_call.name"),
    ],
)
def test_malformed_history_calls_are_problems_at_their_own_path(message, path):
    view = read_request({"messages": [message]})
    assert [(p.code, p.path) for p in view.problems] == [("tool-malformed", path)]
    assert view.history == []


@pytest.mark.parametrize(
    "stream,streaming", [(True, True), (False, False), ("true", False), (1, False)]
)
def test_streaming_is_only_a_literal_true(stream, streaming):
    assert read_request({"stream": stream}).streaming is streaming


# --- whatever JSON comes in ------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)
KEYS = [
    "type",
    "function",
    "custom",
    "name",
    "tools",
    "mode",
    "allowed_tools",
    "role",
    "tool_calls",
]
shaped = st.recursive(
    json_values,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS), children, max_size=4)
    ),
    max_leaves=16,
)


@settings(max_examples=400, deadline=None)
@given(
    body=st.fixed_dictionaries(
        {},
        optional={
            "tools": shaped,
            "functions": shaped,
            "tool_choice": shaped | st.sampled_from(["none", "auto", "required", "x"]),
            "function_call": shaped,
            "messages": st.lists(
                st.fixed_dictionaries(
                    {"role": st.just("assistant")},
                    optional={"tool_calls": shaped, "function_call": shaped},
                ),
                max_size=3,
            ),
            "stream": shaped,
        },
    )
)
def test_any_json_in_any_field_gives_problems_never_an_exception(body):
    view = read_request(body)
    allowed = {"tool-malformed", "choice-malformed", "tools-empty"}
    assert {p.code for p in view.problems} <= allowed
    assert all(p.severity == "error" and p.message.startswith(p.path) for p in view.problems)
    for ref in [*view.tools, *view.history, *(r for c in view.choices for r in c.names)]:
        value = body
        for key in ref.where:
            value = value[key]
        assert value == ref.name  # every NameRef points exactly at its string


# --- SDK-captured bodies -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "fixture,tools,choices,history",
    [
        ("openai-chat-tools", ["get_weather", "search_knowledge_base"], [], []),
        ("openai-chat-stream", ["get_weather", "search_knowledge_base"], [], []),
        (
            "openai-chat-required-choice",
            ["get_weather", "search_knowledge_base"],
            [("required", ())],
            [],
        ),
        (
            "openai-chat-named-choice",
            ["get_weather", "search_knowledge_base"],
            [("named", ("get_weather",))],
            [],
        ),
        ("openai-chat-custom-tool", ["get_weather", "run_sql"], [("named", ("run_sql",))], []),
        (
            "openai-chat-allowed-tools",
            ["get_weather", "search_knowledge_base"],
            [("allowed", ("get_weather",))],
            [],
        ),
        ("openai-chat-legacy-functions", ["get_weather"], [("named", ("get_weather",))], []),
        ("openai-chat-history", ["get_weather", "search_knowledge_base"], [], ["get_weather"]),
    ],
)
def test_bodies_the_openai_sdk_sends_are_read_without_problems(fixture, tools, choices, history):
    body = json.loads((SDK_FIXTURES / f"{fixture}.json").read_text(encoding="utf-8"))["body"]
    view = read_request(body)
    assert view.problems == []
    assert [t.name for t in view.tools] == tools
    assert [(c.mode, tuple(r.name for r in c.names)) for c in view.choices] == choices
    assert [h.name for h in view.history] == history
    assert view.streaming is (fixture == "openai-chat-stream")


# --- block answer --------------------------------------------------------------------------------


def test_block_response_is_a_400_in_openai_error_shape():
    finding = Finding("choice-not-in-tools", "error", "tool_choice.function.name", "m")
    status, headers, body = block_response("toolnames: it is wrong", finding)
    assert status == 400
    assert headers == {"content-type": "application/json"}
    assert json.loads(body) == {
        "error": {
            "message": "toolnames: it is wrong",
            "type": "invalid_request_error",
            "param": "tool_choice.function.name",
            "code": "choice-not-in-tools",
        }
    }


@pytest.mark.parametrize("key", ["tools", "functions", "tool_choice", "function_call"])
def test_a_null_optional_field_means_not_set_as_clients_send_it(key):
    # Clients serialising an unset optional parameter send null; block mode must not stop them.
    view = read_request({"model": "m", "messages": [], key: None})
    assert view.problems == []
    assert (view.tools, view.choices, view.tools_given) == ([], [], False)


def _wrapper_stream(alias: str, size: int) -> bytes:
    """A streamed multi_tool_use.parallel call naming ``alias`` twice, its arguments cut into
    fragments of ``size`` characters, as OpenAI streams them."""
    uses = [{"recipient_name": f"functions.{alias}", "parameters": {"n": n}} for n in (1, 2)]
    arguments = json.dumps({"tool_uses": uses}, separators=(",", ":"))
    first = {"index": 0, "id": "c", "type": "function"}
    events = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                **first,
                                "function": {"name": "multi_tool_use.parallel", "arguments": ""},
                            }
                        ]
                    },
                }
            ]
        }
    ]
    for i in range(0, len(arguments), size):
        fragment = {"index": 0, "function": {"arguments": arguments[i : i + size]}}
        events.append({"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]})
    return sse(events)


def _joined_arguments(stream: bytes) -> dict:
    arguments = ""
    for line in stream.splitlines():
        if line.startswith(b"data: {"):
            for call in json.loads(line[6:])["choices"][0]["delta"]["tool_calls"]:
                arguments += call["function"].get("arguments", "")
    return json.loads(arguments)


@pytest.mark.parametrize("size", [1, 3, 10, 17, 1000])
def test_a_streamed_parallel_wrapper_gets_its_recipient_names_back_at_any_split(size):
    from toolnames_core import Exchange
    from toolnames_core.rules import RULES

    body = {"messages": [], "tools": [{"type": "function", "function": {"name": "github.x"}}]}
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(json.dumps(body).encode(), fix=True)
    (alias,) = exchange.restorer.aliases
    stream = _wrapper_stream(alias, size)
    for cut in {1, 7, 64, len(stream) // 3}:  # the proxy's chunks, cut anywhere
        tap = exchange.stream_tap()
        exchange.restorer.restored = 0
        out = b"".join(tap(stream[i : i + cut]) for i in range(0, len(stream), cut)) + tap(b"")
        uses = _joined_arguments(out)["tool_uses"]
        assert [u["recipient_name"] for u in uses] == ["functions.github.x"] * 2
        assert [u["parameters"] for u in uses] == [{"n": 1}, {"n": 2}]
        assert exchange.restored == 2
        assert alias.encode() not in out
