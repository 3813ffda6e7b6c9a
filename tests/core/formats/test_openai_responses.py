"""The OpenAI Responses adapter (docs/providers.md §3): request side, block answer, response side.

Request bodies come from tests/fixtures/sdk/openai-responses-*.json, captured from the real
openai SDK (3.57.0). Bodies built here for forms the fixtures lack follow the SDK's param
types (openai/types/responses/*_param.py) and are serialised compactly, as the SDK sends
them. Response bodies and streams are our own, written by
tests/fixtures/make_response_fixtures.py into tests/fixtures/responses/ (see its README.md).
"""

import copy
import json
import operator

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.testkit import answering_http_client
from tests.testkit import exchange_for
from tests.testkit import found
from tests.testkit import judge
from tests.testkit import refs
from tests.testkit import response_fixture
from tests.testkit import sdk_fixture
from tests.testkit import stream_calls
from tests.testkit import vocabulary_bodies
from toolnames_core import Exchange
from toolnames_core.formats import FORMATS
from toolnames_core.formats.openai_responses import read_calls
from toolnames_core.formats.openai_responses import read_request
from toolnames_core.model import Finding

API = "openai-responses"


def sdk(case: str) -> dict:
    return sdk_fixture(f"openai-responses-{case}")


def wire(body: dict) -> bytes:
    # The openai SDK sends compact JSON with raw UTF-8 (fixtures/sdk/README.md).
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def analyse(body: dict, rule: str = "openai", fix: bool = False) -> Exchange:
    return exchange_for(wire(body), API, rule, fix=fix)


def base_body(**extra) -> dict:
    body = copy.deepcopy(sdk("tools")["body"])  # get_weather, search_knowledge_base
    body.update(extra)
    return body


def fn(name: str) -> dict:
    return {"type": "function", "name": name, "parameters": {"type": "object", "properties": {}}}


def namespace(name: str, *tools: dict) -> dict:
    return {"type": "namespace", "name": name, "description": "A group.", "tools": list(tools)}


# --- request side: what each SDK-captured body offers, forces and remembers ---


SDK_CASES = [
    pytest.param(
        "tools",
        ["tools[0].name=get_weather", "tools[1].name=search_knowledge_base"],
        [],
        [],
        id="tools",
    ),
    pytest.param(
        "named-choice",
        ["tools[0].name=get_weather", "tools[1].name=search_knowledge_base"],
        [("named", ["tool_choice.name=get_weather"])],
        [],
        id="named-function-choice",
    ),
    pytest.param(
        "custom-tool",
        ["tools[0].name=get_weather", "tools[1].name=run_sql"],
        [("named", ["tool_choice.name=run_sql"])],
        [],
        id="custom-tool-and-choice",
    ),
    pytest.param(
        "builtin-choice",
        [
            "tools[0].type=web_search_preview",
            "tools[0].type=web_search_preview_2025_03_11",
            "tools[1].name=get_weather",
        ],
        [("named", ["tool_choice.type=web_search_preview"])],
        [],
        id="builtin-choice",
    ),
    pytest.param(
        "allowed-tools",
        [
            "tools[0].name=get_weather",
            "tools[1].name=search_knowledge_base",
            "tools[2].type=web_search_preview",
            "tools[2].type=web_search_preview_2025_03_11",
        ],
        [
            (
                "allowed",
                [
                    "tool_choice.tools[0].name=get_weather",
                    "tool_choice.tools[1].type=web_search_preview",
                ],
            )
        ],
        [],
        id="allowed-tools-by-name-and-type",
    ),
    pytest.param(
        "namespace-tool",
        [
            "tools[0].name=get_weather",
            "tools[1].name=namespace:crm",
            "tools[1].tools[0].name=lookup_customer",
            "tools[1].tools[1].name=crm_query",
        ],
        [],
        [],
        id="namespace-tool",
    ),
    pytest.param(
        "additional-tools",
        [
            "input[1].tools[0].name=namespace:crm",
            "input[1].tools[0].tools[0].name=lookup_customer",
            "input[1].tools[0].tools[1].name=crm_query",
            "tools[0].name=get_weather",
            "tools[1].name=search_knowledge_base",
        ],
        [],
        [],
        id="additional-tools-item",
    ),
    pytest.param(
        "history",
        ["tools[0].name=get_weather", "tools[1].name=search_knowledge_base"],
        [],
        ["input[1].name=get_weather"],
        id="function-call-history",
    ),
]


@pytest.mark.parametrize(("case", "tools", "choices", "history"), SDK_CASES)
def test_sdk_bodies_are_read_completely_and_raise_no_finding(case, tools, choices, history):
    result = exchange_for(sdk(case)["body_text"].encode(), API, "openai")
    view = result.view
    assert result.findings == []
    assert sorted(f"{t.path}={t.name}" for t in view.tools) == sorted(tools)
    assert [(c.mode, [f"{r.path}={r.name}" for r in c.names]) for c in view.choices] == choices
    assert [f"{r.path}={r.name}" for r in view.history] == history


def test_tool_kinds_follow_the_tool_type():
    view = read_request(sdk("custom-tool")["body"])
    assert [(t.name, t.kind) for t in view.tools] == [
        ("get_weather", "function"),
        ("run_sql", "custom"),
    ]
    assert view.choices[0].names[0].kind == "custom"
    builtin = read_request(sdk("builtin-choice")["body"])
    assert builtin.choices[0].names[0].kind == "builtin"


def test_stream_flag_comes_from_the_body():
    assert read_request(sdk("stream")["body"]).streaming is True
    assert read_request(sdk("tools")["body"]).streaming is False
    assert read_request(base_body(stream="true")).streaming is False


def test_plain_string_input_has_no_history():
    view = read_request(base_body(input="What's the weather?"))
    assert view.history == [] and view.problems == []


def test_custom_tool_call_history_is_read_with_kind_custom():
    body = base_body(
        input=[
            {"type": "custom_tool_call", "call_id": "c1", "name": "run_sql", "input": "SELECT 1"}
        ]
    )
    assert [(h.name, h.kind, h.path) for h in read_request(body).history] == [
        ("run_sql", "custom", "input[0].name")
    ]


# --- findings: every code that applies to this format ---

LONG = "x" * 65

FINDING_CASES = [
    pytest.param(
        base_body(tools=[fn("")]),
        "openai",
        [("name-empty", "error", "tools[0].name")],
        id="name-empty",
    ),
    pytest.param(
        base_body(tools=[fn(LONG)]),
        "openai",
        [("name-too-long", "error", "tools[0].name")],
        id="name-too-long",
    ),
    pytest.param(
        base_body(tools=[fn("search.web")]),
        "openai",
        [("name-invalid-chars", "error", "tools[0].name")],
        id="name-invalid-chars",
    ),
    pytest.param(
        base_body(tools=[fn("1st_tool")]),
        "portable",
        [("name-invalid-start", "error", "tools[0].name")],
        id="name-invalid-start",
    ),
    pytest.param(
        base_body(tools=[fn("a"), {"type": "custom", "name": "a"}]),
        "openai",
        [("name-duplicate", "warning", "tools[1].name")],
        id="duplicate-function-and-custom",
    ),
    pytest.param(
        base_body(
            tools=[fn("a")],
            input=[{"type": "additional_tools", "role": "developer", "tools": [fn("a")]}],
        ),
        "deepseek",
        [("name-duplicate", "error", "input[0].tools[0].name")],
        id="duplicate-across-tools-and-additional-tools",
    ),
    pytest.param(
        base_body(tools=[namespace("crm", fn("a"), fn("a"))]),
        "openai",
        [("name-duplicate", "warning", "tools[0].tools[1].name")],
        id="duplicate-inside-one-namespace",
    ),
    pytest.param(
        base_body(tool_choice={"type": "function", "name": "get_wether"}),
        "openai",
        [("choice-not-in-tools", "error", "tool_choice.name")],
        id="choice-not-in-tools-function",
    ),
    pytest.param(
        base_body(tool_choice={"type": "custom", "name": "get_weather"}),
        "openai",
        [],
        id="custom-choice-matches-any-named-tool",
    ),
    pytest.param(
        base_body(tool_choice={"type": "image_generation"}),
        "openai",
        [("choice-not-in-tools", "error", "tool_choice.type")],
        id="choice-not-in-tools-builtin",
    ),
    pytest.param(
        base_body(
            tool_choice={"type": "function", "name": "web_search_preview"},
            tools=[{"type": "web_search_preview"}],
        ),
        "openai",
        [("choice-not-in-tools", "error", "tool_choice.name")],
        id="builtin-offered-by-type-not-by-name",
    ),
    pytest.param(
        base_body(tool_choice="required", tools=[]),
        "openai",
        [("choice-without-tools", "error", "tool_choice")],
        id="choice-without-tools",
    ),
    pytest.param(
        {"model": "gpt-4.1", "input": "hi", "tool_choice": {"type": "function", "name": "x"}},
        "openai",
        [("choice-without-tools", "error", "tool_choice")],
        id="named-choice-and-no-tools-key",
    ),
    pytest.param(
        base_body(
            input=[
                {
                    "type": "function_call",
                    "call_id": "c",
                    "name": "multi_tool_use.parallel",
                    "arguments": "{}",
                }
            ]
        ),
        "openai",
        [("history-name-invalid", "error", "input[0].name")],
        id="history-name-invalid",
    ),
    pytest.param(
        base_body(
            input=[
                {
                    "type": "function_call",
                    "call_id": "c",
                    "name": "a",
                    "namespace": "mcp.fs",
                    "arguments": "{}",
                }
            ]
        ),
        "openai",
        [("history-name-invalid", "error", "input[0].namespace")],
        id="history-namespace-invalid",
    ),
    pytest.param(
        base_body(tools=[namespace("crm.v2", fn("lookup"))]),
        "openai",
        [("name-invalid-chars", "error", "tools[0].name")],
        id="namespace-name-invalid",
    ),
    pytest.param(
        base_body(tools=[namespace("n" * 65, fn("lookup"))]),
        "openai",
        [("name-too-long", "error", "tools[0].name")],
        id="namespace-name-too-long",
    ),
    pytest.param(
        base_body(tools=[namespace("crm", fn("a")), namespace("crm", fn("b"))]),
        "openai",
        [("name-duplicate", "warning", "tools[1].name")],
        id="namespace-declared-twice",
    ),
    pytest.param(
        base_body(tools=[namespace("crm"), fn("a"), namespace("crm")]),
        "openai",
        [("name-duplicate", "warning", "tools[2].name")],
        id="namespace-without-tools-declared-twice",
    ),
    pytest.param(
        base_body(tools=[namespace("crm", fn("bad name"))]),
        "openai",
        [("name-invalid-chars", "error", "tools[0].tools[0].name")],
        id="namespace-inner-name-invalid",
    ),
]


@pytest.mark.parametrize(("body", "rule", "expected"), FINDING_CASES)
def test_findings(body, rule, expected):
    assert found(analyse(body, rule)) == sorted(expected)


MALFORMED_CASES = [
    pytest.param({"tools": "get_weather"}, [("tool-malformed", "tools")], id="tools-not-array"),
    pytest.param({"tools": [None]}, [("tool-malformed", "tools[0]")], id="tool-not-object"),
    pytest.param(
        {"tools": [{"name": "a"}]}, [("tool-malformed", "tools[0].type")], id="tool-without-type"
    ),
    pytest.param(
        {"tools": [{"type": "function", "name": 3}]},
        [("tool-malformed", "tools[0].name")],
        id="name-not-string",
    ),
    pytest.param(
        {"tools": [{"type": "function", "function": {"name": "a"}}]},
        [("tool-malformed", "tools[0].name")],
        id="chat-completions-tool-shape",
    ),
    pytest.param(
        {"tools": [{"type": "mcp"}]},
        [("tool-malformed", "tools[0].server_label")],
        id="mcp-without-label",
    ),
    pytest.param(
        {"tools": [{"type": "namespace", "name": "crm", "tools": {}}]},
        [("tool-malformed", "tools[0].tools")],
        id="namespace-tools-not-array",
    ),
    pytest.param(
        {"tools": [namespace("crm", {"type": "web_search_preview"})]},
        [("tool-malformed", "tools[0].tools[0].type")],
        id="namespace-holding-a-builtin",
    ),
    pytest.param(
        {"tools": [{"type": "namespace", "tools": [fn("a")]}]},
        [("tool-malformed", "tools[0].name")],
        id="namespace-without-name",
    ),
    pytest.param(
        {"input": [{"type": "additional_tools", "tools": None}]},
        [("tool-malformed", "input[0].tools")],
        id="additional-tools-not-array",
    ),
    pytest.param(
        {"input": [{"type": "function_call", "name": None}]},
        [("tool-malformed", "input[0].name")],
        id="history-name-null",
    ),
    pytest.param(
        {"tools": [fn("a")], "tool_choice": "any"},
        [("choice-malformed", "tool_choice")],
        id="choice-unknown-string",
    ),
    pytest.param(
        {"tools": [fn("a")], "tool_choice": 1},
        [("choice-malformed", "tool_choice")],
        id="choice-number",
    ),
    pytest.param(
        {"tools": [fn("a")], "tool_choice": {"type": "function", "function": {"name": "a"}}},
        [("choice-malformed", "tool_choice")],
        id="chat-completions-choice-shape",
    ),
    pytest.param(
        {"tools": [fn("a")], "tool_choice": {"type": "tool", "name": "a"}},
        [("choice-malformed", "tool_choice")],
        id="anthropic-choice-shape",
    ),
    pytest.param(
        {"tools": [fn("a")], "tool_choice": {"type": "tool", "toolName": "a"}},
        [("choice-malformed", "tool_choice")],
        id="ai-sdk-choice-leaked",
    ),
    pytest.param(
        {"tools": [fn("a")], "tool_choice": {"type": "mcp"}},
        [("choice-malformed", "tool_choice")],
        id="mcp-choice-without-label",
    ),
    pytest.param(
        {"tools": [fn("a")], "tool_choice": {"type": "allowed_tools", "mode": "any", "tools": []}},
        [("choice-malformed", "tool_choice")],
        id="allowed-tools-bad-mode",
    ),
    pytest.param(
        {
            "tools": [fn("a")],
            "tool_choice": {
                "type": "allowed_tools",
                "mode": "auto",
                "tools": [None, {"type": None}, fn("a")],
            },
        },
        [
            ("choice-malformed", "tool_choice.tools[0]"),
            ("choice-malformed", "tool_choice.tools[1]"),
        ],
        id="allowed-tools-bad-entries",
    ),
]


@pytest.mark.parametrize(("body", "expected"), MALFORMED_CASES)
def test_shapes_it_cannot_read_are_reported_at_their_path(body, expected):
    result = analyse(body)
    assert sorted((f.code, f.path) for f in result.findings) == sorted(expected)


# --- decisions: namespaces, built-ins, MCP, allow-lists ---


def test_same_inner_name_in_two_namespaces_or_at_top_level_is_not_a_duplicate():
    body = base_body(
        tools=[
            fn("search"),
            namespace("mcp__docs", fn("search")),
            namespace("mcp__web", fn("search")),
        ]
    )
    result = analyse(body, "portable")
    assert result.findings == []
    assert [t.path for t in result.view.tools if t.kind != "builtin"] == ["tools[0].name"]
    # A namespace without a name is a scope of its own all the same.
    unnamed = namespace("x", fn("search"))
    unnamed["name"] = None
    result = analyse(base_body(tools=[fn("search"), unnamed]), "portable")
    assert [f.code for f in result.findings] == ["tool-malformed"]
    assert [t.path for t in result.view.tools if t.kind != "builtin"] == ["tools[0].name"]


def test_the_same_list_of_tools_again_is_read_once_and_each_request_adds_its_own(monkeypatch):
    # The fast reader hands the same decoded list again for the same bytes of tools
    # (readers.py): its names and findings are read once (issue 25), what an input item of a
    # request adds to them stays that request's.
    from toolnames_core.formats import openai_responses

    tools = [fn(f"tool_{i}") for i in range(8)] + [namespace("crm", fn("a")), fn("bad name")]
    more = {"type": "additional_tools", "tools": [namespace("crm", fn("b")), fn("tool_0")]}
    with_more = {"model": "gpt-4.1", "tools": tools, "input": [more]}
    alone = {"model": "gpt-4.1", "tools": tools, "input": "hi"}
    fresh = [read_request(copy.deepcopy(body)) for body in (with_more, alone)]
    read = []
    real = openai_responses._tool_name

    def counted(tool, *args):
        read.append(tool["name"])
        return real(tool, *args)

    monkeypatch.setattr(openai_responses, "_tool_name", counted)
    views = [read_request(body) for body in (with_more, alone, with_more, alone)]
    first = [f"tool_{i}" for i in range(8)] + ["a", "bad name"]
    assert read == [*first, "b", "tool_0", "b", "tool_0"]  # the input's items each time
    for view, expected in zip(views, [*fresh, *fresh], strict=True):
        assert view.tools == expected.tools
        assert view.problems == expected.problems
        assert view.namespaced == expected.namespaced
    # crm is declared in the tools and in the input of one request, not of the other.
    assert [(p.code, p.path) for p in fresh[0].problems] == [
        ("name-duplicate", "input[0].tools[0].name")
    ]
    assert fresh[1].problems == []
    assert [ref.name for ref in fresh[0].tools].count("tool_0") == 2
    assert all(map(operator.is_, views[3].tools, views[1].tools))


def test_named_choice_and_allow_list_match_a_namespaced_tool_by_its_bare_name():
    body = sdk("additional-tools")["body"]
    body["tool_choice"] = {
        "type": "allowed_tools",
        "mode": "required",
        "tools": [
            {"type": "function", "name": "lookup_customer"},
            {"type": "custom", "name": "crm_query"},
            {"type": "namespace", "name": "crm"},
        ],
    }
    assert analyse(body).findings == []
    body["tool_choice"] = {"type": "function", "name": "lookup_customer"}
    assert analyse(body).findings == []


def test_allow_list_entry_naming_an_undeclared_namespace_is_reported():
    body = base_body(
        tool_choice={
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [{"type": "namespace", "name": "crm"}],
        }
    )
    assert found(analyse(body)) == [("choice-not-in-tools", "error", "tool_choice.tools[0].name")]


@pytest.mark.parametrize(
    ("tool_type", "choice_type"),
    [
        ("web_search_preview", "web_search_preview"),
        ("web_search_preview_2025_03_11", "web_search_preview"),
        ("web_search_preview", "web_search_preview_2025_03_11"),
        ("computer_use_preview", "computer_use_preview"),
        ("computer_use_preview", "computer_use"),
        ("computer", "computer_use_preview"),
        ("file_search", "file_search"),
        ("image_generation", "image_generation"),
        ("code_interpreter", "code_interpreter"),
        ("shell", "shell"),
        ("apply_patch", "apply_patch"),
        ("programmatic_tool_calling", "programmatic_tool_calling"),
    ],
)
def test_builtin_choice_is_satisfied_by_a_tool_of_its_type_or_family(tool_type, choice_type):
    body = base_body(tools=[{"type": tool_type}], tool_choice={"type": choice_type})
    assert analyse(body).findings == []


@pytest.mark.parametrize(
    "choice_type", ["image_generation", "shell", "apply_patch", "file_search", "web_search_preview"]
)
def test_builtin_choice_without_that_tool_is_reported(choice_type):
    body = base_body(
        tools=[fn("get_weather"), {"type": "local_shell"}, {"type": "web_search"}],
        tool_choice={"type": choice_type},
    )
    result = analyse(body)
    assert found(result) == [("choice-not-in-tools", "error", "tool_choice.type")]
    assert f"'{choice_type}'" in result.findings[0].message


def test_mcp_choice_needs_an_mcp_tool_with_the_same_server_label():
    tools = [
        fn("get_weather"),
        {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.deepwiki.com/mcp"},
    ]
    ok = base_body(
        tools=tools, tool_choice={"type": "mcp", "server_label": "deepwiki", "name": "ask_question"}
    )
    assert analyse(ok).findings == []
    other = base_body(tools=tools, tool_choice={"type": "mcp", "server_label": "gitmcp"})
    result = analyse(other)
    assert found(result) == [("choice-not-in-tools", "error", "tool_choice.server_label")]
    assert (
        "'mcp:gitmcp'" in result.findings[0].message
        and "'mcp:deepwiki'" in result.findings[0].message
    )


def test_allow_list_entries_are_checked_by_name_type_and_server_label():
    body = base_body(
        tools=[
            fn("get_weather"),
            {"type": "custom", "name": "run_sql"},
            {"type": "image_generation"},
            {"type": "mcp", "server_label": "deepwiki"},
        ],
        tool_choice={
            "type": "allowed_tools",
            "mode": "required",
            "tools": [
                {"type": "function", "name": "get_weather"},
                {"type": "custom", "name": "run_sql"},
                {"type": "image_generation"},
                {"type": "mcp", "server_label": "deepwiki"},
                {"type": "function", "name": "get_time"},
                {"type": "code_interpreter"},
                {"type": "mcp", "server_label": "other"},
            ],
        },
    )
    assert found(analyse(body)) == [
        ("choice-not-in-tools", "error", "tool_choice.tools[4].name"),
        ("choice-not-in-tools", "error", "tool_choice.tools[5].type"),
        ("choice-not-in-tools", "error", "tool_choice.tools[6].server_label"),
    ]


def test_tool_choice_none_needs_no_tools():
    assert analyse({"model": "gpt-4.1", "input": "hi", "tool_choice": "none"}).findings == []


# --- fix mode: only the chosen name changes, every other byte stays ---


def _fix_case(case: str, old: str, new: str):
    text = sdk(case)["body_text"]
    assert text.count(old) == 1
    return text, text.replace(old, new)


FIX_CASES = [
    pytest.param(
        *_fix_case(
            "named-choice",
            '"tool_choice":{"type":"function","name":"get_weather"}',
            '"tool_choice":{"type":"function","name":"Get Weather"}',
        ),
        "tool_choice.name",
        id="named-function-choice",
    ),
    pytest.param(
        *_fix_case(
            "custom-tool",
            '"tool_choice":{"type":"custom","name":"run_sql"}',
            '"tool_choice":{"type":"custom","name":"Run SQL"}',
        ),
        "tool_choice.name",
        id="named-custom-choice",
    ),
    pytest.param(
        *_fix_case(
            "allowed-tools",
            '{"type":"function","name":"get_weather"},{"type":"web_search_preview"}',
            '{"type":"function","name":"Get Weather"},{"type":"web_search_preview"}',
        ),
        "tool_choice.tools[0].name",
        id="allow-list-function-entry",
    ),
]


@pytest.mark.parametrize(("original", "sent", "path"), FIX_CASES)
def test_fix_mode_rewrites_only_the_mismatched_name(original, sent, path):
    result = exchange_for(sent.encode(), API, "openai", fix=True)
    assert [f.path for f in result.fixes] == [path]
    assert result.new_body == original.encode()


def _sdk_text(body: dict) -> str:
    return wire(body).decode()


def test_fix_mode_rewrites_a_custom_allow_list_entry_and_a_namespaced_tool_choice():
    body = sdk("additional-tools")["body"]
    good = {
        **body,
        "tool_choice": {
            "type": "allowed_tools",
            "mode": "auto",
            "tools": [
                {"type": "custom", "name": "crm_query"},
                {"type": "function", "name": "lookup_customer"},
            ],
        },
    }
    bad = copy.deepcopy(good)
    bad["tool_choice"]["tools"][0]["name"] = "CRM Query"
    bad["tool_choice"]["tools"][1]["name"] = "Lookup Customer"
    result = exchange_for(_sdk_text(bad).encode(), API, "openai", fix=True)
    assert sorted(f.path for f in result.fixes) == [
        "tool_choice.tools[0].name",
        "tool_choice.tools[1].name",
    ]
    assert result.new_body == _sdk_text(good).encode()


def test_fix_mode_leaves_builtin_and_mcp_choices_alone():
    for choice in ({"type": "image_generation"}, {"type": "mcp", "server_label": "Deep Wiki"}):
        body = base_body(
            tools=[fn("get_weather"), {"type": "mcp", "server_label": "deep_wiki"}],
            tool_choice=choice,
        )
        result = analyse(body, fix=True)
        assert result.fixes == [] and result.new_body is None
        assert [f.code for f in result.findings] == ["choice-not-in-tools"]


# --- block answer ---


def test_block_response_is_an_openai_error_body():
    finding = Finding("choice-not-in-tools", "error", "tool_choice.name", "x")
    status, headers, body = FORMATS[API].block_response("toolnames: nope", finding)
    assert status == 400 and headers["content-type"] == "application/json"
    assert json.loads(body) == {
        "error": {
            "message": "toolnames: nope",
            "type": "invalid_request_error",
            "param": "tool_choice.name",
            "code": "choice-not-in-tools",
        }
    }


@pytest.mark.needs_sdk
def test_block_response_makes_the_openai_sdk_raise_bad_request():
    openai = pytest.importorskip("openai")
    result = analyse(base_body(tool_choice={"type": "function", "name": "get_wether"}))
    client = openai.OpenAI(
        api_key="sk-test",
        base_url="http://proxy.invalid/v1",
        max_retries=0,
        http_client=answering_http_client(result.block_response()),
    )
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model="gpt-4.1", input="hi", tools=[fn("get_weather")])
    assert raised.value.status_code == 400
    assert raised.value.code == "choice-not-in-tools"
    assert raised.value.param == "tool_choice.name"
    assert "'get_wether'" in raised.value.message


# --- response side ---


def test_read_calls_custom_tool_call():
    assert refs(read_calls(response_fixture("openai-responses-custom-tool-call.json"))) == [
        ("draw_chart", "custom", "output[0].name")
    ]


def test_read_calls_unwraps_the_parallel_wrapper_and_keeps_it():
    assert refs(read_calls(response_fixture("openai-responses-parallel-wrapper.json"))) == [
        ("parallel", "function", "output[0].name"),
        ("tide_times", "function", "output[0].arguments.tool_uses[0].recipient_name"),
        ("ferryStatus", "function", "output[0].arguments.tool_uses[1].recipient_name"),
    ]


def test_read_calls_skips_messages_and_hosted_tool_items_and_reads_namespaced_calls_by_name():
    body = {
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "hi"}],
            },
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {"type": "mcp_call", "name": "ask_question", "server_label": "deepwiki"},
            {
                "type": "function_call",
                "call_id": "c",
                "name": "lookup_customer",
                "namespace": "crm",
                "arguments": "{}",
            },
        ]
    }
    assert refs(read_calls(body)) == [("lookup_customer", "function", "output[3].name")]
    assert read_calls(body)[0].namespace == "crm"


def namespaced_call(name: str, namespace: str | None) -> dict:
    call = {"type": "function_call", "call_id": "c", "name": name, "arguments": "{}"}
    if namespace is not None:
        call["namespace"] = namespace
    return {"output": [call]}


NAMESPACED_TOOLS = base_body(
    tools=[fn("search"), namespace("docs", fn("lookup")), namespace("web", fn("fetch"))]
)


@pytest.mark.parametrize(
    ("name", "called_namespace", "message"),
    [
        ("lookup", "docs", None),
        ("fetch", "web", None),
        ("lookup", None, None),  # no namespace given: matched by its bare name
        ("search", None, None),
        (
            "lookup",
            "web",
            "'lookup' (6 chars) in namespace 'web' (3 chars), which has no such tool",
        ),
        (
            "search",
            "docs",
            "'search' (6 chars) in namespace 'docs' (4 chars), which has no such tool",
        ),
        (
            "lookup",
            "crm",
            "'lookup' (6 chars) in namespace 'crm' (3 chars), which was never offered",
        ),
    ],
)
def test_a_namespaced_call_must_name_a_tool_of_that_namespace(name, called_namespace, message):
    request = wire(NAMESPACED_TOOLS)
    calls = read_calls(namespaced_call(name, called_namespace))
    findings = judge(request, API, calls, complete=True)
    if message is None:
        assert findings == []
    else:
        (finding,) = findings
        assert (finding.code, finding.path) == ("response-unknown-tool", "output[0].name")
        assert message in finding.message


def collect(events) -> list[tuple[str, str, str]]:
    return refs(stream_calls(API, events))


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        (
            "openai-responses-stream-function-call.sse",
            [("plan_ferry_trip", "function", "events[2].item.name")],
        ),
        (
            "openai-responses-stream-custom-tool-call.sse",
            [("draw_chart", "custom", "events[2].item.name")],
        ),
        (
            "openai-responses-stream-parallel-wrapper.sse",
            [
                ("parallel", "function", "events[1].item.name"),
                ("tide_times", "function", "events[1].item.arguments.tool_uses[0].recipient_name"),
                ("ferryStatus", "function", "events[1].item.arguments.tool_uses[1].recipient_name"),
            ],
        ),
    ],
)
def test_stream_calls_are_counted_once_despite_added_done_and_completed(fixture, expected):
    assert collect(response_fixture(fixture)) == expected


def test_stream_wrapper_arguments_from_deltas_when_the_stream_breaks_off():
    events = response_fixture("openai-responses-stream-parallel-wrapper.sse")
    # Cut the stream before arguments.done: the arguments are only in the deltas.
    cut = next(i for i, e in enumerate(events) if e["type"].endswith("arguments.done"))
    assert [name for name, _, _ in collect(events[:cut])] == [
        "parallel",
        "tide_times",
        "ferryStatus",
    ]


def test_stream_two_calls_and_a_call_seen_only_in_the_final_response():
    def added(index, item_id, name):
        return {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {
                "type": "function_call",
                "id": item_id,
                "call_id": f"call_{index}",
                "name": name,
                "arguments": "",
            },
        }

    final = {
        "type": "response.completed",
        "response": {
            "output": [
                {"type": "function_call", "id": "fc_0", "name": "a", "arguments": "{}"},
                {"type": "function_call", "id": "fc_1", "name": "b", "arguments": "{}"},
                {"type": "custom_tool_call", "id": "ct_2", "name": "c", "input": ""},
            ]
        },
    }
    events = [
        added(0, "fc_0", "a"),
        added(1, "fc_1", "b"),
        {
            "type": "response.output_item.done",
            "item": {"type": "function_call", "id": "fc_1", "name": "b"},
        },
        final,
    ]
    assert collect(events) == [
        ("a", "function", "events[0].item.name"),
        ("b", "function", "events[1].item.name"),
        ("c", "custom", "events[3].response.output[2].name"),
    ]


def test_stream_empty_name_gives_way_to_the_real_one():
    events = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "function_call", "id": "fc", "name": ""},
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {"type": "function_call", "id": "fc", "name": "get_weather"},
        },
    ]
    assert collect(events) == [("get_weather", "function", "events[1].item.name")]


def test_stream_arguments_done_names_a_call_not_announced_otherwise():
    events = [
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc",
            "output_index": 0,
            "name": "get_weather",
            "arguments": "{}",
        }
    ]
    assert collect(events) == [("get_weather", "function", "events[0].name")]


def test_a_streamed_call_keeps_its_namespace():
    item = {"type": "function_call", "id": "fc", "name": "lookup", "namespace": "docs"}
    events = [{"type": "response.output_item.added", "output_index": 0, "item": item}]
    (call,) = stream_calls(API, events)
    assert (call.name, call.namespace) == ("lookup", "docs")


# --- wrong types anywhere never raise ---

MANGLED_REQUESTS = [
    {},
    {"tools": None, "tool_choice": None, "input": None, "stream": None},
    {
        "tools": [
            1,
            "x",
            [],
            {},
            {"type": 5},
            {"type": "function", "name": {}},
            {"type": "namespace", "name": [], "tools": [None, {}]},
        ]
    },
    {
        "tools": [{"type": "mcp", "server_label": 3}],
        "tool_choice": {"type": "mcp", "server_label": None},
    },
    {"tool_choice": {"type": "allowed_tools", "mode": "auto", "tools": "all"}},
    {"tool_choice": {"type": {"nested": True}}},
    {"tool_choice": {"type": "function", "name": ["a"]}},
    {"input": {"type": "function_call"}},
    # Unhashable values where a type string belongs must not reach a dict lookup.
    {
        "tools": [{"type": ["function"], "name": "a"}],
        "tool_choice": {"type": ["function"], "name": "a"},
    },
    {"input": [{"type": ["function_call"], "name": "a"}, {"type": {"k": 1}}]},
    {
        "input": [
            1,
            None,
            "x",
            {"type": "additional_tools", "tools": [{"type": "namespace", "tools": "x"}]},
            {"type": "function_call", "name": 1, "namespace": 2},
        ]
    },
]


@pytest.mark.parametrize("body", MANGLED_REQUESTS)
def test_mangled_requests_never_raise(body):
    view = read_request(body)
    assert all(p.code in ("tool-malformed", "choice-malformed") for p in view.problems)
    analyse(body, fix=True)


MANGLED_RESPONSES = [
    {},
    {"output": None},
    {"output": "x"},
    {
        "output": [
            None,
            1,
            [],
            {"type": "function_call"},
            {"type": "function_call", "name": 5},
            {"type": 5, "name": "x"},
        ]
    },
    {"output": [{"type": "function_call", "name": "parallel", "arguments": "{not json"}]},
    {"output": [{"type": ["function_call"], "name": "a"}, {"type": {}, "name": "b"}]},
    {
        "output": [
            {
                "type": "function_call",
                "name": "multi_tool_use.parallel",
                "arguments": {"tool_uses": [1, {"recipient_name": 2}]},
            }
        ]
    },
]


@pytest.mark.parametrize("body", MANGLED_RESPONSES)
def test_mangled_responses_never_raise(body):
    for call in read_calls(body):
        assert isinstance(call.name, str)


MANGLED_EVENTS = [
    [None, 1, "x", [], {}],
    [{"type": "response.output_item.added", "output_index": {}, "item": []}],
    [
        {
            "type": "response.output_item.added",
            "output_index": [1],
            "item": {"type": "function_call", "id": {}, "name": "a"},
        }
    ],
    [
        {
            "type": "response.output_item.added",
            "output_index": True,
            "item": {"type": "function_call", "id": "x", "name": "parallel"},
        },
        {"type": "response.function_call_arguments.delta", "item_id": "x", "delta": 5},
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "x",
            "delta": '{"tool_uses":',
        },
    ],
    [
        {"type": ["response.output_item.added"]},
        {"type": "response.output_item.done", "item": {"type": ["function_call"], "name": "a"}},
    ],
    [
        {"type": "response.completed", "response": {"output": {"a": 1}}},
        {"type": "response.completed", "response": []},
    ],
    [
        {
            "type": "response.function_call_arguments.done",
            "output_index": None,
            "item_id": None,
            "name": None,
        }
    ],
]


@pytest.mark.parametrize("events", MANGLED_EVENTS)
def test_mangled_stream_events_never_raise(events):
    assert all(isinstance(c.name, str) for c in stream_calls(API, events))


# This format's keys and type values, so the shapes get read deeply.
WORDS = [
    "type",
    "name",
    "tools",
    "tool_choice",
    "input",
    "output",
    "server_label",
    "namespace",
    "mode",
    "function",
    "custom",
    "item",
    "output_index",
    "item_id",
    "id",
    "response",
    "arguments",
    "delta",
    "stream",
]
TYPES = [
    "function",
    "custom",
    "namespace",
    "mcp",
    "allowed_tools",
    "additional_tools",
    "function_call",
    "custom_tool_call",
    "web_search_preview",
    "tool",
    "auto",
    "required",
    "none",
    "parallel",
    "multi_tool_use.parallel",
    "response.output_item.added",
    "response.output_item.done",
    "response.completed",
    "response.function_call_arguments.done",
    "response.function_call_arguments.delta",
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


@pytest.mark.parametrize("size", [1, 4, 13, 1000])
def test_a_streamed_parallel_wrapper_gets_its_recipient_names_back_in_its_deltas(size):
    from tests.testkit import sse
    from toolnames_core import Exchange
    from toolnames_core.rules import RULES

    body = {"input": "hi", "tools": [{"type": "function", "name": "github.x"}]}
    exchange = Exchange(FORMATS["openai-responses"], RULES["openai"])
    exchange.check_request(json.dumps(body).encode(), fix=True)
    (alias,) = exchange.restorer.aliases
    uses = [{"recipient_name": f"functions.{alias}", "parameters": {}}]
    arguments = json.dumps({"tool_uses": uses}, separators=(",", ":"))
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "c",
        "name": "multi_tool_use.parallel",
    }
    events = [
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "arguments": ""}}
    ]
    events += [
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "delta": arguments[i : i + size],
        }
        for i in range(0, len(arguments), size)
    ]
    events.append(
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**item, "arguments": arguments},
        }
    )
    stream = sse(events, done=False)
    tap = exchange.stream_tap()
    out = b"".join(tap(stream[i : i + 9]) for i in range(0, len(stream), 9)) + tap(b"")
    sent = [json.loads(line[6:]) for line in out.splitlines() if line.startswith(b"data: ")]
    joined = "".join(e["delta"] for e in sent if e["type"].endswith(".delta"))
    assert json.loads(joined)["tool_uses"][0]["recipient_name"] == "functions.github.x"
    done = json.loads(sent[-1]["item"]["arguments"])
    assert done["tool_uses"][0]["recipient_name"] == "functions.github.x"
    assert alias.encode() not in out
