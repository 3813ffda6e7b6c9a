"""The Bedrock Converse adapter: request side, block answer, response side (docs/providers.md §7).

Bodies come from tests/fixtures/sdk/bedrock-converse-*.json, captured from boto3 1.44.8. The
body marked "captured" below was produced the same way (boto3 1.44.8 against a local recorder,
in a scratch venv) for what the fixtures lack: a cachePoint entry and {"auto": {}}. Response
events follow docs/providers.md §7 (vercel/ai fixture amazon-bedrock-tool-call.1.chunks.txt).
"""

from __future__ import annotations

import json
import operator

import pytest
from hypothesis import given
from hypothesis import settings
from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils

import toolnames
from tests import testkit
from tests.testkit import RESPONSES_DIR
from tests.testkit import exchange_for
from tests.testkit import keyed_bodies
from tests.testkit import replace_once
from tests.testkit import response_fixture
from tests.testkit import sdk_fixture
from tests.testkit import stream_calls
from toolnames_core import Exchange
from toolnames_core import request_checks
from toolnames_core import response_checks
from toolnames_core import streams
from toolnames_core.formats import FORMATS
from toolnames_core.formats import bedrock_converse
from toolnames_core.framings import AWS_EVENT_STREAM
from toolnames_core.rules import RULES

RULE = RULES["bedrock"]
OFFERED = ["get_weather", "search_knowledge_base"]
NEEDS_TOOL_CONFIG = (
    "The toolConfig field must be defined when using toolUse and toolResult content blocks."
)

# Captured: boto3 1.44.8, converse(toolConfig={"tools": [toolSpec, cachePoint], "toolChoice": {"auto": {}}}).
CAPTURED_CACHE_POINT_AUTO = (
    '{"messages": [{"role": "user", "content": [{"text": "hi"}]}], "toolConfig": {"tools": [{"toolSpec": '
    '{"name": "get_weather", "inputSchema": {"json": {"type": "object"}}}}, {"cachePoint": {"type": "default"}}], '
    '"toolChoice": {"auto": {}}}}'
)


def findings(body: dict, rule: str = "bedrock") -> list[tuple[str, str, str]]:
    view = bedrock_converse.read_request(body)
    return sorted(
        (f.code, f.severity, f.path)
        for f in request_checks.check_request(view, RULES[rule], bedrock_converse.FORMAT)
    )


def analyse(text: str, *, fix: bool = False) -> Exchange:
    return exchange_for(text.encode(), "bedrock-converse", "bedrock", fix=fix)


def specs(*names: object) -> dict:
    return {
        "toolConfig": {
            "tools": [{"toolSpec": {"name": n, "inputSchema": {"json": {}}}} for n in names]
        }
    }


def user(text: str = "hi") -> dict:
    return {"role": "user", "content": [{"text": text}]}


def tool_use(name: object, use_id: str = "tooluse_1") -> dict:
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": use_id, "name": name, "input": {}}}],
    }


def tool_result(use_id: str = "tooluse_1") -> dict:
    return {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": use_id, "content": [{"text": "ok"}], "status": "success"}}
        ],
    }


def test_registered_with_aws_eventstream_response_side():
    fmt = FORMATS["bedrock-converse"]
    assert fmt is bedrock_converse.FORMAT
    assert fmt.read_calls is bedrock_converse.read_calls
    assert fmt.framing is AWS_EVENT_STREAM
    assert fmt.stream_collector is not None


# -- request side: what boto3 sends ------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "bedrock-converse-tools",
        "bedrock-converse-stream",
        "bedrock-converse-tool-choice-tool",
        "bedrock-converse-tool-choice-any",
        "bedrock-converse-history",
    ],
)
def test_sdk_bodies_read_cleanly_with_every_tool_spec_offered(name):
    result = analyse(sdk_fixture(name)["body_text"])
    assert result.findings == []
    assert [(t.name, t.path) for t in result.view.tools] == [
        ("get_weather", "toolConfig.tools[0].toolSpec.name"),
        ("search_knowledge_base", "toolConfig.tools[1].toolSpec.name"),
    ]
    assert result.view.streaming is False  # Converse streams by endpoint, not by a body field


@pytest.mark.parametrize(
    "name, mode, names",
    [
        ("bedrock-converse-tools", None, []),
        ("bedrock-converse-tool-choice-any", "required", []),
        (
            "bedrock-converse-tool-choice-tool",
            "named",
            [("get_weather", "toolConfig.toolChoice.tool.name")],
        ),
    ],
)
def test_tool_choice_forms_map_to_choices(name, mode, names):
    view = bedrock_converse.read_request(sdk_fixture(name)["body"])
    expected = [] if mode is None else [(mode, "toolConfig.toolChoice", names)]
    assert [(c.mode, c.path, [(n.name, n.path) for n in c.names]) for c in view.choices] == expected


def test_auto_choice_and_cache_point_entries():
    result = analyse(CAPTURED_CACHE_POINT_AUTO)
    assert result.findings == []
    assert [t.path for t in result.view.tools] == ["toolConfig.tools[0].toolSpec.name"]
    assert [c.mode for c in result.view.choices] == ["auto"]


def test_history_reads_tool_use_names():
    view = bedrock_converse.read_request(sdk_fixture("bedrock-converse-history")["body"])
    assert [(h.name, h.path) for h in view.history] == [
        ("get_weather", "messages[1].content[0].toolUse.name")
    ]


def test_unknown_tool_members_are_skipped_quietly():
    body = {
        "toolConfig": {
            "tools": [
                {"cachePoint": {"type": "default"}},
                {"systemTool": {"name": "nova grounding"}},
                {"toolSpec": {"name": "a"}},
            ]
        }
    }
    view = bedrock_converse.read_request(body)
    assert view.problems == []
    assert [t.path for t in view.tools] == ["toolConfig.tools[2].toolSpec.name"]


# -- request side: findings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, code",
    [
        ("", "name-empty"),
        ("a" * 65, "name-too-long"),
        (
            "Complete Session",
            "name-invalid-chars",
        ),  # docs/providers.md §7, remote-swe-agents PR #457
        ("search.web", "name-invalid-chars"),
        ("mcp:read", "name-invalid-chars"),
    ],
)
def test_tool_spec_names_break_the_bedrock_rule(name, code):
    assert findings(specs(name)) == [(code, "error", "toolConfig.tools[0].toolSpec.name")]


@pytest.mark.parametrize("name", ["get-weather", "9lives", "a" * 64, "_x"])
def test_dashes_and_leading_digits_pass_the_bedrock_rule(name):
    assert findings(specs(name)) == []


def test_duplicate_tool_specs_only_warn():
    # docs/providers.md §7 has no Bedrock duplicate-name error.
    assert findings(specs("a", "a")) == [
        ("name-duplicate", "warning", "toolConfig.tools[1].toolSpec.name")
    ]


def test_named_choice_missing_from_tools():
    body = specs("get_weather")
    body["toolConfig"]["toolChoice"] = {"tool": {"name": "getWeather"}}
    assert findings(body) == [("choice-not-in-tools", "error", "toolConfig.toolChoice.tool.name")]


def test_portable_rule_override_rejects_dashes():
    assert findings(specs("get-weather"), rule="portable") == [
        ("name-invalid-chars", "error", "toolConfig.tools[0].toolSpec.name")
    ]


def test_history_tool_use_names_are_checked_against_the_rule():
    # docs/providers.md §1.2 / §7: a hallucinated name replayed in history fails every later request.
    body = {**specs("a"), "messages": [user(), tool_use("multi_tool_use.parallel"), tool_result()]}
    assert findings(body) == [
        ("history-name-invalid", "error", "messages[1].content[0].toolUse.name")
    ]


@pytest.mark.parametrize(
    "messages, path",
    [
        ([user(), tool_use("get_weather"), tool_result()], "messages[1].content[0].toolUse"),
        ([user(), tool_result()], "messages[1].content[0].toolResult"),
        (
            [
                {
                    "role": "user",
                    "content": [{"text": "hi"}, {"toolResult": {"toolUseId": "t", "content": []}}],
                }
            ],
            "messages[0].content[1].toolResult",
        ),
    ],
)
def test_tool_blocks_without_tool_config_are_an_error(messages, path):
    view = bedrock_converse.read_request({"messages": messages})
    (finding,) = [
        f
        for f in request_checks.check_request(view, RULE, bedrock_converse.FORMAT)
        if f.code == "history-without-tools"
    ]
    assert (finding.severity, finding.path) == ("error", path)
    assert NEEDS_TOOL_CONFIG in finding.message


def test_tool_blocks_with_tool_config_are_fine():
    assert (
        findings(
            {**specs("get_weather"), "messages": [user(), tool_use("get_weather"), tool_result()]}
        )
        == []
    )


def test_history_without_tools_blocks_the_sdk_history_body_stripped_of_tool_config():
    body = sdk_fixture("bedrock-converse-history")["body"]
    del body["toolConfig"]
    result = analyse(json.dumps(body))
    assert [(f.code, f.path) for f in result.errors] == [
        ("history-without-tools", "messages[1].content[0].toolUse")
    ]


@pytest.mark.parametrize(
    "body, expected",
    [
        ({"toolConfig": []}, [("tool-malformed", "error", "toolConfig")]),
        ({"toolConfig": {}}, [("tool-malformed", "error", "toolConfig.tools")]),
        ({"toolConfig": {"tools": []}}, [("tool-malformed", "error", "toolConfig.tools")]),
        (
            {"toolConfig": {"tools": {"toolSpec": {"name": "a"}}}},
            [("tool-malformed", "error", "toolConfig.tools")],
        ),
        ({"toolConfig": {"tools": ["a"]}}, [("tool-malformed", "error", "toolConfig.tools[0]")]),
        (
            {"toolConfig": {"tools": [{"toolSpec": "a"}]}},
            [("tool-malformed", "error", "toolConfig.tools[0].toolSpec")],
        ),
        (
            {"toolConfig": {"tools": [{"toolSpec": {"description": "no name"}}]}},
            [("tool-malformed", "error", "toolConfig.tools[0].toolSpec.name")],
        ),
        (
            {**specs("a"), "messages": [tool_use(None)]},
            [("tool-malformed", "error", "messages[0].content[0].toolUse.name")],
        ),
        (
            {**specs("a"), "messages": [{"role": "assistant", "content": [{"toolUse": "a"}]}]},
            [("tool-malformed", "error", "messages[0].content[0].toolUse")],
        ),
    ],
)
def test_malformed_tool_shapes_become_findings(body, expected):
    assert findings(body) == expected


@pytest.mark.parametrize(
    "choice",
    [
        "auto",
        {"none": {}},  # docs/providers.md §7: Converse has no "none"
        {"auto": {}, "any": {}},
        {},
        {"tool": {}},
        {"tool": {"name": 3}},
        {"tool": "get_weather"},
        {"any": True},
        {"type": "tool", "name": "get_weather"},  # Anthropic's shape
    ],
)
def test_malformed_tool_choices_become_findings(choice):
    body = specs("get_weather")
    body["toolConfig"]["toolChoice"] = choice
    assert findings(body) == [("choice-malformed", "error", "toolConfig.toolChoice")]


def test_tool_choice_without_tool_specs():
    body = {
        "toolConfig": {"tools": [{"cachePoint": {"type": "default"}}], "toolChoice": {"any": {}}}
    }
    assert findings(body) == [("choice-without-tools", "error", "toolConfig.toolChoice")]


# -- fix mode -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sent_name, rewrite",
    [
        ("get.weather", "mastra+openai-agents"),
        ("Get Weather", "openai-agents"),
    ],
)
def test_fix_rewrites_only_the_named_choice(sent_name, rewrite):
    original = sdk_fixture("bedrock-converse-tool-choice-tool")["body_text"]
    sent = replace_once(
        original, '"tool": {"name": "get_weather"}', f'"tool": {{"name": "{sent_name}"}}'
    )
    result = analyse(sent, fix=True)
    assert [f.to_dict() for f in result.fixes] == [
        {
            "path": "toolConfig.toolChoice.tool.name",
            "from": sent_name,
            "to": "get_weather",
            "rewrite": rewrite,
        }
    ]
    assert result.new_body == original.encode()


# -- block mode ----------------------------------------------------------------------------------------------


def test_block_response_is_a_validation_exception():
    sent = replace_once(
        sdk_fixture("bedrock-converse-tools")["body_text"],
        '"name": "get_weather"',
        '"name": "get weather"',
    )
    result = analyse(sent)
    status, headers, body = result.block_response()
    assert status == 400
    # botocore reads the error code from x-amzn-ErrorType, up to the first ':'.
    assert headers["x-amzn-ErrorType"].split(":", 1)[0] == "ValidationException"
    assert headers["content-type"] == "application/json"
    message = json.loads(body)
    assert list(message) == ["message"]
    assert message["message"].startswith(
        "toolnames: toolConfig.tools[0].toolSpec.name 'get weather'"
    )


def test_addon_blocks_converse_stream_with_a_validation_exception():
    fixture = sdk_fixture("bedrock-converse-stream")
    addon = toolnames.ToolNames()
    with taddons.context(addon) as tctx:
        tctx.configure(addon, toolnames_mode="block")
        flow = tflow.tflow(
            req=tutils.treq(
                method=b"POST",
                host="bedrock-runtime.us-east-1.amazonaws.com",
                port=443,
                scheme=b"https",
                authority=b"",
                path=fixture["path"].encode(),  # the model id's ':' arrives as %3A
            )
        )
        flow.request.text = replace_once(
            fixture["body_text"],
            '"name": "search_knowledge_base"',
            '"name": "search.knowledge_base"',
        )
        addon.request(flow)
    assert flow.response is not None
    assert flow.response.status_code == 400
    assert flow.response.headers["x-amzn-ErrorType"].startswith("ValidationException:")
    assert "toolConfig.tools[1].toolSpec.name" in flow.response.json()["message"]
    assert (flow.metadata["toolnames"]["api"], flow.metadata["toolnames"]["rule"]) == (
        "bedrock-converse",
        "bedrock",
    )


# -- response side -------------------------------------------------------------------------------------------


def stream_events() -> list[dict]:
    """Our decoded event stream (fixtures/responses/README.md): {<:event-type>: <payload>} per line."""
    lines = (
        (RESPONSES_DIR / "bedrock-converse-stream-tool-use.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    )
    return [json.loads(line) for line in lines if line.strip()]


def test_read_calls_on_a_response_with_text_and_two_tool_use_blocks():
    body = response_fixture("bedrock-converse-tool-use.json")
    assert [(c.name, c.kind, c.path) for c in bedrock_converse.read_calls(body)] == [
        ("read_meter", "function", "output.message.content[1].toolUse.name"),
        ("read_thermostat", "function", "output.message.content[2].toolUse.name"),
    ]


def test_stream_collector_reads_the_name_from_content_block_start():
    assert [(c.name, c.path) for c in stream_calls("bedrock-converse", stream_events())] == [
        ("open_ticket", "events[4].contentBlockStart.start.toolUse.name")
    ]


@pytest.mark.parametrize("chunk_size", [1, 13, 1 << 20])
def test_event_stream_through_the_tap_reports_an_unoffered_call(chunk_size):
    # On the wire the event type is the :event-type header and the payload the inner object.
    raw = testkit.aws_stream([next(iter(e.items())) for e in stream_events()])
    tap = streams.StreamTap(bedrock_converse.FORMAT)
    for i in range(0, len(raw), chunk_size):
        assert tap(raw[i : i + chunk_size]) == raw[i : i + chunk_size]
    tap(b"")
    assert tap.problem() is None
    view = bedrock_converse.read_request(sdk_fixture("bedrock-converse-stream")["body"])
    found = response_checks.check_calls(tap.calls(), view, RULES["bedrock"])
    assert [(f.code, f.path) for f in found] == [
        ("response-unknown-tool", "events[4].contentBlockStart.start.toolUse.name")
    ]


def test_read_calls_finds_tool_use_blocks():
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"text": "Checking."},
                    {
                        "toolUse": {
                            "toolUseId": "tooluse_1",
                            "name": "get_weather",
                            "input": {"location": "Paris"},
                        }
                    },
                    {"toolUse": {"toolUseId": "tooluse_2", "name": "json", "input": {}}},
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    }
    assert [(c.name, c.path) for c in bedrock_converse.read_calls(body)] == [
        ("get_weather", "output.message.content[1].toolUse.name"),
        ("json", "output.message.content[2].toolUse.name"),
    ]


def test_stream_collector_takes_names_from_content_block_start_events():
    events = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Checking"}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 1,
                "start": {"toolUse": {"toolUseId": "tool-use-id", "name": "test-tool"}},
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 1,
                "delta": {"toolUse": {"input": '{"value":'}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 2,
                "start": {"toolUse": {"toolUseId": "t2", "name": "lookup"}},
                "p": "abcd",
            }
        },
        {"messageStop": {"stopReason": "tool_use"}},
        {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}},
    ]
    assert [(c.name, c.path) for c in stream_calls("bedrock-converse", events)] == [
        ("test-tool", "events[3].contentBlockStart.start.toolUse.name"),
        ("lookup", "events[6].contentBlockStart.start.toolUse.name"),
    ]


def test_stream_collectors_are_independent():
    first, second = bedrock_converse.StreamCollector(), bedrock_converse.StreamCollector()
    first.event({"contentBlockStart": {"start": {"toolUse": {"name": "a"}}}})
    assert second.calls() == []
    assert len(first.calls()) == 1


# -- wrong types never raise -----------------------------------------------------------------------------------

MANGLED = [
    {},
    {"toolConfig": None},
    {"toolConfig": 1},
    {"toolConfig": {"tools": None, "toolChoice": None}},
    {
        "toolConfig": {
            "tools": [
                None,
                1,
                "x",
                [],
                {},
                {"toolSpec": None},
                {"toolSpec": {"name": None}},
                {"toolSpec": {"name": []}},
            ]
        }
    },
    {"toolConfig": {"tools": [{"toolSpec": {"name": "a"}}], "toolChoice": []}},
    {"toolConfig": {"tools": [{"toolSpec": {"name": "a"}}], "toolChoice": {"tool": None}}},
    {
        "toolConfig": {
            "tools": [{"toolSpec": {"name": "a"}}],
            "toolChoice": {"tool": {"name": {"x": 1}}},
        }
    },
    {"messages": "hi"},
    {
        "messages": [
            None,
            1,
            [],
            {"content": None},
            {"content": "x"},
            {"content": [None, 1, "x", [], {"toolUse": None}, {"toolResult": None}]},
        ]
    },
    {"messages": [{"content": [{"toolUse": {"name": 1.5}}, {"toolUse": []}]}], "toolConfig": None},
    {"output": None},
    {
        "output": {
            "message": {
                "content": [
                    None,
                    {"toolUse": "x"},
                    {"toolUse": {"name": None}},
                    {"toolUse": {"name": ["a"]}},
                ]
            }
        }
    },
    {"contentBlockStart": None},
    {"contentBlockStart": {"start": None}},
    {"contentBlockStart": {"start": {"toolUse": {"name": 5}}}},
]


@pytest.mark.parametrize("body", MANGLED)
def test_mangled_bodies_never_raise(body):
    text = json.dumps(body)
    for fix in (False, True):
        analyse(text, fix=fix)
    request_checks.check_request(bedrock_converse.read_request(body), RULE, bedrock_converse.FORMAT)
    bedrock_converse.read_calls(body)
    stream_calls("bedrock-converse", [body])


@pytest.mark.parametrize("value", [None, 1, "x", [], [{"output": 1}], True])
def test_response_side_takes_any_json_value(value):
    assert bedrock_converse.read_calls(value) == []
    assert stream_calls("bedrock-converse", [value]) == []


# Bodies shaped like requests and responses, with arbitrary JSON wherever a value goes.
KEYS = [
    "toolConfig", "tools", "toolSpec", "cachePoint", "name", "toolChoice", "auto", "any", "tool",
    "messages", "content", "toolUse", "toolResult", "output", "message", "contentBlockStart",
    "start", "get_weather",
]  # fmt: skip
bodies = keyed_bodies(KEYS, ["get_weather", "get.weather", "", "x" * 65])


@settings(max_examples=300, deadline=None)
@given(body=bodies)
def test_arbitrary_json_never_raises(body):
    text = json.dumps(body)
    result = analyse(text, fix=True)
    if result.new_body is not None:
        json.loads(result.new_body)
    if result.errors:
        result.block_response()
    bedrock_converse.read_calls(body)
    stream_calls("bedrock-converse", [body])


def test_the_same_list_of_tools_again_is_read_once():
    # The fast reader hands the same decoded toolConfig again for the same bytes
    # (readers.py): its tools are read once (issue 25), for any request that sends them.
    tools = [{"toolSpec": {"name": f"tool_{i}"}} for i in range(8)] + [{"toolSpec": {}}]
    first, again = (
        bedrock_converse.read_request({"toolConfig": {"tools": tools, "toolChoice": choice}})
        for choice in ({"auto": {}}, {"tool": {"name": "tool_1"}})
    )
    assert [ref.name for ref in again.tools] == [f"tool_{i}" for i in range(8)]
    assert all(map(operator.is_, again.tools, first.tools))
    assert again.problems == first.problems and len(first.problems) == 1
    assert [choice.mode for choice in again.choices] == ["named"]
    other = bedrock_converse.read_request({"toolConfig": {"tools": list(tools)}})
    assert other.tools == first.tools and other.tools[0] is not first.tools[0]
