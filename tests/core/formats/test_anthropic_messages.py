"""The Anthropic Messages adapter (docs/providers.md §5): request side, block answer, response side.

Request bodies come from tests/fixtures/sdk/anthropic-messages-*.json, captured from the real
anthropic SDK (2.14.0). Server-tool and other bodies built here follow the SDK's param types
(anthropic/types/tool_union_param.py, tool_choice_*_param.py) and are serialised as the SDK
sends them: compact, top-level keys sorted. Response bodies and streams are our own, written by
tests/fixtures/make_response_fixtures.py into tests/fixtures/responses/ (see its README.md).
"""

import copy
import json

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.testkit import answering_http_client
from tests.testkit import exchange_for
from tests.testkit import found
from tests.testkit import refs
from tests.testkit import response_fixture
from tests.testkit import sdk_fixture
from tests.testkit import stream_calls
from tests.testkit import vocabulary_bodies
from toolnames_core import Exchange
from toolnames_core.formats import FORMATS
from toolnames_core.formats.anthropic_messages import read_calls
from toolnames_core.formats.anthropic_messages import read_request
from toolnames_core.model import Finding

API = "anthropic-messages"


def sdk(case: str) -> dict:
    return sdk_fixture(f"anthropic-messages-{case}")


def wire(body: dict) -> bytes:
    # The anthropic SDK sends compact JSON, raw UTF-8, top-level keys sorted (fixtures/sdk/README.md).
    return json.dumps(
        dict(sorted(body.items())), separators=(",", ":"), ensure_ascii=False
    ).encode()


def analyse(body: dict, rule: str = "anthropic", fix: bool = False) -> Exchange:
    return exchange_for(wire(body), API, rule, fix=fix)


def base_body(**extra) -> dict:
    body = copy.deepcopy(sdk("tools")["body"])  # get_weather, search_knowledge_base
    body.update(extra)
    return body


def tool(name: str) -> dict:
    return {
        "name": name,
        "description": "A tool.",
        "input_schema": {"type": "object", "properties": {}},
    }


WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
BASH = {"type": "bash_20250124", "name": "bash"}
TEXT_EDITOR = {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}
COMPUTER_TOOLSET = {"type": "computer_toolset_20260801"}


# --- request side ---


SDK_CASES = [
    pytest.param("tools", [], [], id="tools"),
    pytest.param("stream", [], [], id="stream"),
    pytest.param("tool-choice-any", [("required", [])], [], id="choice-any"),
    pytest.param(
        "tool-choice-tool", [("named", ["tool_choice.name=get_weather"])], [], id="choice-tool"
    ),
    pytest.param("history", [], ["messages[1].content[1].name=get_weather"], id="tool-use-history"),
]


@pytest.mark.parametrize(("case", "choices", "history"), SDK_CASES)
def test_sdk_bodies_are_read_completely_and_raise_no_finding(case, choices, history):
    result = exchange_for(sdk(case)["body_text"].encode(), API, "anthropic")
    view = result.view
    assert result.findings == []
    assert [(t.path, t.name, t.kind) for t in view.tools] == [
        ("tools[0].name", "get_weather", "function"),
        ("tools[1].name", "search_knowledge_base", "function"),
    ]
    assert [(c.mode, [f"{r.path}={r.name}" for r in c.names]) for c in view.choices] == choices
    assert [f"{r.path}={r.name}" for r in view.history] == history
    assert view.streaming is (case == "stream")


@pytest.mark.parametrize(
    ("choice", "mode"), [("auto", "auto"), ("any", "required"), ("none", "none")]
)
def test_choice_types_map_to_modes(choice, mode):
    view = read_request(base_body(tool_choice={"type": choice, "disable_parallel_tool_use": True}))
    assert [(c.mode, c.path, c.names) for c in view.choices] == [(mode, "tool_choice", ())]


def test_server_and_client_tools_are_offered_under_their_name_and_nameless_toolsets_by_type():
    view = read_request(
        base_body(
            tools=[
                tool("get_weather"),
                WEB_SEARCH,
                BASH,
                TEXT_EDITOR,
                {**tool("x"), "type": "custom"},
                COMPUTER_TOOLSET,
            ]
        )
    )
    assert [(t.name, t.kind, t.path) for t in view.tools] == [
        ("get_weather", "function", "tools[0].name"),
        ("web_search", "function", "tools[1].name"),
        ("bash", "function", "tools[2].name"),
        ("str_replace_based_edit_tool", "function", "tools[3].name"),
        ("x", "function", "tools[4].name"),
        ("computer_toolset_20260801", "builtin", "tools[5].type"),
    ]
    assert view.problems == []


def test_named_choice_can_pick_a_server_tool():
    assert (
        analyse(
            base_body(
                tools=[tool("get_weather"), WEB_SEARCH],
                tool_choice={"type": "tool", "name": "web_search"},
            )
        ).findings
        == []
    )


def test_server_tool_use_blocks_in_history_are_not_checked_as_client_names():
    messages = [
        {"role": "user", "content": "Search"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_1",
                    "name": "web_search",
                    "input": {"query": "x"},
                },
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_use", "id": "toolu_2", "name": "ignored.user.role", "input": {}}
            ],
        },
    ]
    view = read_request(base_body(tools=[WEB_SEARCH, tool("get_weather")], messages=messages))
    assert [(h.name, h.path) for h in view.history] == [
        ("get_weather", "messages[1].content[2].name")
    ]


LONG = "x" * 129

FINDING_CASES = [
    pytest.param(
        base_body(tools=[tool("")]),
        "anthropic",
        [("name-empty", "error", "tools[0].name")],
        id="name-empty",
    ),
    pytest.param(
        base_body(tools=[tool(LONG)]),
        "anthropic",
        [("name-too-long", "error", "tools[0].name")],
        id="name-too-long",
    ),
    pytest.param(base_body(tools=[tool("x" * 128)]), "anthropic", [], id="128-chars-is-fine"),
    pytest.param(
        base_body(tools=[tool("search.web")]),
        "anthropic",
        [("name-invalid-chars", "error", "tools[0].name")],
        id="name-invalid-chars",
    ),
    pytest.param(
        base_body(tools=[tool("1st")]),
        "portable",
        [("name-invalid-start", "error", "tools[0].name")],
        id="name-invalid-start",
    ),
    pytest.param(
        base_body(tools=[tool("web_search"), WEB_SEARCH]),
        "anthropic",
        [("name-duplicate", "error", "tools[1].name")],
        id="user-tool-clashes-with-server-tool",
    ),
    pytest.param(
        base_body(tool_choice={"type": "tool", "name": "get_wether"}),
        "anthropic",
        [("choice-not-in-tools", "error", "tool_choice.name")],
        id="choice-not-in-tools",
    ),
    pytest.param(
        base_body(tool_choice={"type": "tool", "name": "web_search"}),
        "anthropic",
        [("choice-not-in-tools", "error", "tool_choice.name")],
        id="choice-of-a-server-tool-not-offered",
    ),
    pytest.param(
        {"max_tokens": 10, "messages": [], "model": "m", "tool_choice": {"type": "any"}},
        "anthropic",
        [("choice-without-tools", "error", "tool_choice")],
        id="choice-without-tools",
    ),
    pytest.param(
        {"max_tokens": 10, "messages": [], "model": "m", "tool_choice": {"type": "none"}},
        "anthropic",
        [],
        id="none-needs-no-tools",
    ),
    pytest.param(
        base_body(
            messages=[
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "$READFILE", "input": {}}],
                }
            ]
        ),
        "anthropic",
        [("history-name-invalid", "error", "messages[0].content[0].name")],
        id="history-name-invalid",
    ),
]


@pytest.mark.parametrize(("body", "rule", "expected"), FINDING_CASES)
def test_findings(body, rule, expected):
    assert found(analyse(body, rule)) == sorted(expected)


MALFORMED_CASES = [
    pytest.param({"tools": {"name": "a"}}, [("tool-malformed", "tools")], id="tools-not-array"),
    pytest.param({"tools": ["a"]}, [("tool-malformed", "tools[0]")], id="tool-not-object"),
    pytest.param(
        {"tools": [{"description": "no name"}]},
        [("tool-malformed", "tools[0].name")],
        id="user-tool-without-name",
    ),
    pytest.param(
        {"tools": [{"type": "custom", "name": None}]},
        [("tool-malformed", "tools[0].name")],
        id="custom-name-null",
    ),
    pytest.param(
        {"tools": [{"type": "bash_20250124", "name": 1}]},
        [("tool-malformed", "tools[0].name")],
        id="server-tool-name-number",
    ),
    pytest.param({"tools": [{"type": 7}]}, [("tool-malformed", "tools[0].type")], id="type-number"),
    pytest.param(
        {"tools": [{"type": "function", "function": {"name": "a", "parameters": {}}}]},
        [("tool-malformed", "tools[0]")],
        id="openai-tool-shape",
    ),
    pytest.param(
        {
            "messages": [
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "input": {}}]}
            ]
        },
        [("tool-malformed", "messages[0].content[0].name")],
        id="tool-use-without-name",
    ),
    pytest.param(
        {"tools": [tool("a")], "tool_choice": "auto"},
        [("choice-malformed", "tool_choice")],
        id="choice-string",
    ),
    pytest.param(
        {"tools": [tool("a")], "tool_choice": {"type": "tool"}},
        [("choice-malformed", "tool_choice")],
        id="tool-choice-without-name",
    ),
    pytest.param(
        {"tools": [tool("a")], "tool_choice": {"type": "tool", "toolName": "a"}},
        [("choice-malformed", "tool_choice")],
        id="ai-sdk-choice-leaked",
    ),
    pytest.param(
        {"tools": [tool("a")], "tool_choice": {"type": "function", "function": {"name": "a"}}},
        [("choice-malformed", "tool_choice")],
        id="openai-choice-shape",
    ),
    pytest.param(
        {"tools": [tool("a")], "tool_choice": {"type": "required"}},
        [("choice-malformed", "tool_choice")],
        id="unknown-type",
    ),
]


@pytest.mark.parametrize(("body", "expected"), MALFORMED_CASES)
def test_shapes_it_cannot_read_are_reported_at_their_path(body, expected):
    assert sorted((f.code, f.path) for f in analyse(body).findings) == sorted(expected)


def test_string_choice_message_suggests_the_anthropic_object():
    result = analyse(base_body(tool_choice="required"))
    assert '{"type": "any"}' in result.findings[0].message


# --- fix mode ---


def test_fix_mode_rewrites_only_the_named_choice():
    original = sdk("tool-choice-tool")["body_text"]
    old = '"tool_choice":{"type":"tool","name":"get_weather"}'
    assert original.count(old) == 1
    sent = original.replace(old, '"tool_choice":{"type":"tool","name":"Get Weather"}')
    result = exchange_for(sent.encode(), API, "anthropic", fix=True)
    assert [(f.path, f.old, f.new) for f in result.fixes] == [
        ("tool_choice.name", "Get Weather", "get_weather")
    ]
    assert result.new_body == original.encode()


def test_fix_mode_can_point_a_choice_at_a_server_tool():
    good = base_body(
        tools=[tool("get_weather"), WEB_SEARCH],
        tool_choice={"type": "tool", "name": "web_search", "disable_parallel_tool_use": True},
    )
    bad = copy.deepcopy(good)
    bad["tool_choice"]["name"] = "web-search"
    result = analyse(bad, fix=True)
    assert result.new_body == wire(good)


# --- block answer ---


def test_block_response_is_an_anthropic_error_body():
    finding = Finding("choice-not-in-tools", "error", "tool_choice.name", "x")
    status, headers, body = FORMATS[API].block_response("toolnames: nope", finding)
    assert status == 400 and headers["content-type"] == "application/json"
    assert json.loads(body) == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "toolnames: nope"},
    }


@pytest.mark.needs_sdk
def test_block_response_makes_the_anthropic_sdk_raise_bad_request():
    anthropic = pytest.importorskip("anthropic")
    result = analyse(base_body(tool_choice={"type": "tool", "name": "get_wether"}))
    client = anthropic.Anthropic(
        api_key="test-key",
        base_url="http://proxy.invalid",
        max_retries=0,
        http_client=answering_http_client(result.block_response()),
    )
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(
            model="claude-test-model", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    assert raised.value.status_code == 400
    assert raised.value.body["error"]["type"] == "invalid_request_error"
    assert "'get_wether'" in raised.value.message


# --- response side ---


def test_read_calls_tool_use_block():
    assert refs(read_calls(response_fixture("anthropic-messages-tool-use.json"))) == [
        ("json", "function", "content[0].name")
    ]


def test_read_calls_skips_text_and_server_tool_use():
    body = {
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
            {"type": "tool_use", "id": "toolu_1", "name": "a", "input": {}},
            {"type": "tool_use", "id": "toolu_2", "name": "b", "input": {}},
        ]
    }
    assert refs(read_calls(body)) == [
        ("a", "function", "content[2].name"),
        ("b", "function", "content[3].name"),
    ]


def collect(events) -> list[tuple[str, str, str]]:
    return refs(stream_calls(API, events))


def test_stream_call_is_read_from_content_block_start():
    assert collect(response_fixture("anthropic-messages-stream-tool-use.sse")) == [
        ("json", "function", "events[1].content_block.name")
    ]


def test_stream_several_blocks_and_a_repeated_start_count_once():
    def start(index, block):
        return {"type": "content_block_start", "index": index, "content_block": block}

    events = [
        {"type": "message_start", "message": {"content": []}},
        start(0, {"type": "text", "text": ""}),
        start(1, {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}}),
        start(2, {"type": "tool_use", "id": "t1", "name": "a", "input": {}}),
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": "{}"},
        },
        start(2, {"type": "tool_use", "id": "t1", "name": "a", "input": {}}),
        start(3, {"type": "tool_use", "id": "t2", "name": "b", "input": {}}),
    ]
    assert collect(events) == [
        ("a", "function", "events[3].content_block.name"),
        ("b", "function", "events[6].content_block.name"),
    ]


# --- wrong types anywhere never raise ---

MANGLED_REQUESTS = [
    {},
    {"tools": None, "tool_choice": [], "messages": None, "stream": "yes"},
    {"tools": [None, 1, [], {}, {"type": None}, {"type": {}, "name": []}, {"type": "custom"}]},
    {"messages": {"role": "assistant"}},
    {
        "messages": [
            None,
            1,
            {"role": "assistant", "content": "text"},
            {"role": "assistant", "content": [None, 1, {"type": "tool_use", "name": {}}]},
        ]
    },
    # Unhashable values where a type string belongs must not reach a dict lookup.
    {"tool_choice": {"type": ["tool"]}},
    {"tool_choice": {"type": {"auto": 1}}},
    {
        "tools": [{"type": ["custom"], "name": "a"}],
        "messages": [{"role": "assistant", "content": [{"type": ["tool_use"], "name": "a"}]}],
    },
    {"tool_choice": {"type": "tool", "name": 5}},
]


@pytest.mark.parametrize("body", MANGLED_REQUESTS)
def test_mangled_requests_never_raise(body):
    view = read_request(body)
    assert all(p.code in ("tool-malformed", "choice-malformed") for p in view.problems)
    analyse(body, fix=True)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"content": None},
        {"content": "text"},
        {"content": [None, 1, {"type": "tool_use"}, {"type": "tool_use", "name": 3}]},
    ],
)
def test_mangled_responses_never_raise(body):
    assert read_calls(body) == []


@pytest.mark.parametrize(
    "events",
    [
        [None, 1, [], {}],
        [
            {"type": ["content_block_start"]},
            {"type": "content_block_start", "content_block": {"type": ["tool_use"], "name": "a"}},
        ],
        [{"type": "content_block_start"}, {"type": "content_block_start", "content_block": []}],
        [
            {
                "type": "content_block_start",
                "index": {},
                "content_block": {"type": "tool_use", "name": "a"},
            }
        ],
        [
            {
                "type": "content_block_start",
                "index": True,
                "content_block": {"type": "tool_use", "name": None},
            }
        ],
    ],
)
def test_mangled_stream_events_never_raise(events):
    assert all(isinstance(c.name, str) for c in stream_calls(API, events))


# This format's keys and type values, so the shapes get read deeply.
WORDS = [
    "type",
    "name",
    "tools",
    "tool_choice",
    "messages",
    "role",
    "content",
    "content_block",
    "index",
    "stream",
    "input",
]
TYPES = [
    "custom",
    "tool",
    "auto",
    "any",
    "none",
    "tool_use",
    "server_tool_use",
    "assistant",
    "user",
    "web_search_20250305",
    "content_block_start",
    "function",
]
bodies = vocabulary_bodies(WORDS, TYPES)


@settings(max_examples=300, deadline=None)
@given(bodies)
def test_any_json_body_is_read_without_raising(body):
    read_request(body)
    read_calls(body)
    analyse(body, fix=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(bodies, max_size=6))
def test_any_json_event_sequence_is_collected_without_raising(events):
    stream_calls(API, events)
