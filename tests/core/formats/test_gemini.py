"""The Gemini / Vertex AI adapter: request side, block answer, response side (docs/providers.md §6).

Bodies come from tests/fixtures/sdk/gemini-*.json, captured from google-genai 3.6.1. Bodies
marked "captured" below were produced the same way (google-genai 3.6.1 against a local
recorder, in a scratch venv) for cases the fixtures lack: built-in tools, modes NONE and
VALIDATED. The snake_case spellings are what Google's REST front end accepts besides
lowerCamelCase (proto JSON); no SDK sends them at the top level, but google-genai does send
`allowed_function_names` inside a camelCase `functionCallingConfig` on Vertex.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import settings
from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils

import toolnames
from tests.testkit import RESPONSES_DIR
from tests.testkit import exchange_for
from tests.testkit import keyed_bodies
from tests.testkit import replace_once
from tests.testkit import response_fixture
from tests.testkit import sdk_fixture
from tests.testkit import stream_calls
from toolnames_core import Exchange
from toolnames_core import fixes
from toolnames_core import request_checks
from toolnames_core import response_checks
from toolnames_core import streams
from toolnames_core.formats import FORMATS
from toolnames_core.formats import gemini
from toolnames_core.framings import SSE
from toolnames_core.rules import RULES

RULE = RULES["gemini"]
OFFERED = ["get_weather", "search_knowledge_base"]


def findings(body: dict, rule: str = "gemini") -> list[tuple[str, str, str]]:
    view = gemini.read_request(body)
    return sorted(
        (f.code, f.severity, f.path)
        for f in request_checks.check_request(view, RULES[rule], gemini.FORMAT)
    )


def analyse(text: str, *, fix: bool = False) -> Exchange:
    return exchange_for(text.encode(), "gemini", "gemini", fix=fix)


def declarations(*names: object, key: str = "functionDeclarations") -> dict:
    return {"tools": [{key: [{"name": n, "description": "d"} for n in names]}]}


# Captured: google-genai 3.6.1, tools=[function, GoogleSearch, ToolCodeExecution, UrlContext],
# function_calling_config mode AUTO. The SDK puts the built-ins first.
CAPTURED_BUILTINS_AUTO = (
    '{"contents": [{"parts": [{"text": "hi"}], "role": "user"}], "tools": [{"googleSearch": {}}, '
    '{"codeExecution": {}}, {"urlContext": {}}, {"functionDeclarations": [{"description": "w", '
    '"name": "get_weather", "parameters_json_schema": {"type": "object", "properties": {}}}]}], '
    '"toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}, "generationConfig": {}}'
)
# Captured: google-genai 3.6.1, mode NONE.
CAPTURED_NONE = (
    '{"contents": [{"parts": [{"text": "hi"}], "role": "user"}], "tools": [{"functionDeclarations": '
    '[{"description": "w", "name": "get_weather", "parameters_json_schema": {"type": "object", '
    '"properties": {}}}]}], "toolConfig": {"functionCallingConfig": {"mode": "NONE"}}, "generationConfig": {}}'
)
# Captured: google-genai 3.6.1 on Vertex, mode VALIDATED with allowed_function_names.
CAPTURED_VERTEX_VALIDATED = (
    '{"contents": [{"parts": [{"text": "hi"}], "role": "user"}], "tools": [{"googleSearch": {}}, '
    '{"functionDeclarations": [{"description": "w", "name": "get_weather", "parameters_json_schema": '
    '{"type": "object", "properties": {}}}]}], "toolConfig": {"functionCallingConfig": '
    '{"allowed_function_names": ["get_weather"], "mode": "VALIDATED"}}, "generationConfig": {}}'
)


def test_registered_with_sse_response_side():
    fmt = FORMATS["gemini"]
    assert fmt is gemini.FORMAT
    assert fmt.read_calls is gemini.read_calls
    assert fmt.framing is SSE
    assert fmt.stream_collector is not None


# -- request side: what the SDKs send ------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "gemini-tools",
        "gemini-stream",
        "gemini-tool-config-any",
        "gemini-history",
        "gemini-vertex-tools",
        "gemini-vertex-stream",
        "gemini-vertex-tool-config-any",
        "gemini-vertex-history",
    ],
)
def test_sdk_bodies_read_cleanly_with_every_declaration_offered(name):
    result = analyse(sdk_fixture(name)["body_text"])
    assert result.findings == []
    assert [t.name for t in result.view.tools] == OFFERED
    assert [t.path for t in result.view.tools] == [
        "tools[0].functionDeclarations[0].name",
        "tools[0].functionDeclarations[1].name",
    ]


@pytest.mark.parametrize(
    "name, names_path",
    [
        ("gemini-tool-config-any", "toolConfig.functionCallingConfig.allowedFunctionNames[0]"),
        # google-genai sends the snake_case key on Vertex, inside a camelCase object.
        (
            "gemini-vertex-tool-config-any",
            "toolConfig.functionCallingConfig.allowed_function_names[0]",
        ),
    ],
)
def test_any_with_allowed_names_is_an_allowed_choice_at_the_key_the_sdk_used(name, names_path):
    view = gemini.read_request(sdk_fixture(name)["body"])
    (choice,) = view.choices
    assert (choice.mode, choice.path) == ("allowed", "toolConfig.functionCallingConfig")
    assert [(n.name, n.path) for n in choice.names] == [("get_weather", names_path)]


@pytest.mark.parametrize("name", ["gemini-history", "gemini-vertex-history"])
def test_history_reads_function_call_and_function_response_names(name):
    view = gemini.read_request(sdk_fixture(name)["body"])
    assert [(h.name, h.path) for h in view.history] == [
        ("get_weather", "contents[1].parts[0].functionCall.name"),
        ("get_weather", "contents[2].parts[0].functionResponse.name"),
    ]


def test_builtin_tools_are_not_named_tools_and_raise_nothing():
    result = analyse(CAPTURED_BUILTINS_AUTO)
    assert result.findings == []
    assert [(t.name, t.path) for t in result.view.tools] == [
        ("get_weather", "tools[3].functionDeclarations[0].name")
    ]
    assert [c.mode for c in result.view.choices] == ["auto"]


def test_none_mode_is_a_none_choice():
    view = gemini.read_request(json.loads(CAPTURED_NONE))
    assert [(c.mode, c.names) for c in view.choices] == [("none", ())]


def test_vertex_validated_with_allowed_names_is_an_allowed_choice():
    result = analyse(CAPTURED_VERTEX_VALIDATED)
    assert result.findings == []
    (choice,) = result.view.choices
    assert choice.mode == "allowed"
    assert [n.path for n in choice.names] == [
        "toolConfig.functionCallingConfig.allowed_function_names[0]"
    ]


def test_snake_case_spellings_are_read_and_recorded_in_paths():
    body = {
        "tools": [{"function_declarations": [{"name": "get_weather"}, {"name": "lookup"}]}],
        "tool_config": {
            "function_calling_config": {"mode": "ANY", "allowed_function_names": ["lookup"]}
        },
        "contents": [
            {"role": "model", "parts": [{"function_call": {"name": "get_weather", "args": {}}}]},
            {
                "role": "user",
                "parts": [{"function_response": {"name": "get_weather", "response": {}}}],
            },
        ],
    }
    view = gemini.read_request(body)
    assert view.problems == []
    assert [t.path for t in view.tools] == [
        "tools[0].function_declarations[0].name",
        "tools[0].function_declarations[1].name",
    ]
    (choice,) = view.choices
    assert choice.path == "tool_config.function_calling_config"
    assert [n.path for n in choice.names] == [
        "tool_config.function_calling_config.allowed_function_names[0]"
    ]
    assert [h.path for h in view.history] == [
        "contents[0].parts[0].function_call.name",
        "contents[1].parts[0].function_response.name",
    ]


@pytest.mark.parametrize(
    "config, mode, names",
    [
        ({"mode": "AUTO"}, "auto", []),
        ({}, "auto", []),  # AUTO is the default
        ({"mode": "MODE_UNSPECIFIED"}, "auto", []),
        ({"mode": "ANY"}, "required", []),
        ({"mode": "ANY", "allowedFunctionNames": []}, "required", []),
        ({"mode": "ANY", "allowedFunctionNames": ["a", "b"]}, "allowed", ["a", "b"]),
        ({"mode": "VALIDATED"}, "auto", []),
        ({"mode": "VALIDATED", "allowedFunctionNames": ["b"]}, "allowed", ["b"]),
        ({"mode": "NONE"}, "none", []),
        ({"mode": "any"}, "required", []),
        ({"mode": 2}, "required", []),  # proto3 JSON also takes an enum's number
        ({"mode": 3}, "none", []),
    ],
)
def test_function_calling_modes_map_to_choices(config, mode, names):
    view = gemini.read_request(
        {**declarations("a", "b"), "toolConfig": {"functionCallingConfig": config}}
    )
    assert view.problems == []
    assert [(c.mode, [n.name for n in c.names]) for c in view.choices] == [(mode, names)]


# -- request side: findings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, code",
    [
        ("", "name-empty"),
        ("a" * 65, "name-too-long"),
        ("get weather", "name-invalid-chars"),
        ("get/weather", "name-invalid-chars"),
        ("1password_lookup", "name-invalid-start"),
        ("-tool", "name-invalid-start"),
    ],
)
def test_declaration_names_break_the_gemini_rule(name, code):
    assert findings(declarations(name)) == [
        (code, "error", "tools[0].functionDeclarations[0].name")
    ]


@pytest.mark.parametrize("name", ["mcp.server:read_file", "_private", "a" * 64, "get-weather"])
def test_dots_colons_and_dashes_pass_the_gemini_rule(name):
    assert findings(declarations(name)) == []


def test_the_gemini_rule_applies_to_snake_case_declarations_too():
    assert findings(declarations("mcp server", key="function_declarations")) == [
        ("name-invalid-chars", "error", "tools[0].function_declarations[0].name")
    ]


def test_duplicate_declarations_are_an_error_across_tool_objects():
    body = {
        "tools": [
            {"functionDeclarations": [{"name": "x"}]},
            {"function_declarations": [{"name": "x"}]},
        ]
    }
    assert findings(body) == [("name-duplicate", "error", "tools[1].function_declarations[0].name")]


def test_allowed_name_missing_from_declarations_is_reported_at_its_entry():
    body = {
        **declarations("get_weather"),
        "toolConfig": {
            "functionCallingConfig": {
                "mode": "ANY",
                "allowedFunctionNames": ["get_weather", "getWeather"],
            }
        },
    }
    assert findings(body) == [
        ("choice-not-in-tools", "error", "toolConfig.functionCallingConfig.allowedFunctionNames[1]")
    ]


@pytest.mark.parametrize(
    "body",
    [
        {"toolConfig": {"functionCallingConfig": {"mode": "ANY"}}},
        {
            "tools": [{"googleSearch": {}}],
            "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        },
        {
            "tools": [],
            "tool_config": {
                "function_calling_config": {"mode": "ANY", "allowed_function_names": ["x"]}
            },
        },
    ],
)
def test_calling_config_without_declarations_is_only_a_warning(body):
    # The Gemini API rejects it for Gemini 2.5 and older; Vertex and Gemini 3 accept it.
    (finding,) = findings(body)
    assert finding[:2] == ("choice-without-tools", "warning")


def test_none_mode_without_declarations_is_fine():
    assert (
        findings(
            {
                "tools": [{"googleSearch": {}}],
                "toolConfig": {"functionCallingConfig": {"mode": "NONE"}},
            }
        )
        == []
    )


def test_calling_config_whose_declarations_are_all_unreadable_is_an_error():
    body = {
        "tools": [{"functionDeclarations": [{"name": 7}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
    }
    assert findings(body) == [
        ("choice-without-tools", "error", "toolConfig.functionCallingConfig"),
        ("tool-malformed", "error", "tools[0].functionDeclarations[0].name"),
    ]


@pytest.mark.parametrize("mode", ["AUTO", "NONE"])
def test_allowed_names_with_a_mode_that_ignores_them_warn_and_are_not_checked(mode):
    body = {
        **declarations("a"),
        "toolConfig": {"functionCallingConfig": {"mode": mode, "allowedFunctionNames": ["zzz"]}},
    }
    assert findings(body) == [("choice-malformed", "warning", "toolConfig.functionCallingConfig")]


@pytest.mark.parametrize(
    "part, path",
    [
        (
            {"functionCall": {"name": "multi_tool_use parallel", "args": {}}},
            "contents[1].parts[0].functionCall.name",
        ),
        (
            {"functionResponse": {"name": "9lives", "response": {}}},
            "contents[1].parts[0].functionResponse.name",
        ),
        ({"function_call": {"name": "$READFILE"}}, "contents[1].parts[0].function_call.name"),
        (
            {"thoughtSignature": "c2ln", "functionCall": {"name": "x" * 65}},
            "contents[1].parts[0].functionCall.name",
        ),
    ],
)
def test_history_names_are_checked_against_the_rule(part, path):
    body = {
        **declarations("a"),
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [part]},
        ],
    }
    assert findings(body) == [("history-name-invalid", "error", path)]


def test_history_call_without_a_name_is_not_a_finding():
    # Vertex's streamed arguments: continuation parts carry no name.
    parts = [
        {
            "functionCall": {
                "partialArgs": [{"jsonPath": "$.location", "stringValue": "Boston"}],
                "willContinue": True,
            }
        },
        {"functionCall": {}},
    ]
    body = {**declarations("a"), "contents": [{"role": "model", "parts": parts}]}
    assert findings(body) == []


@pytest.mark.parametrize(
    "body, expected",
    [
        ({"tools": {"functionDeclarations": []}}, [("tool-malformed", "error", "tools")]),
        ({"tools": ["googleSearch"]}, [("tool-malformed", "error", "tools[0]")]),
        (
            {"tools": [{"functionDeclarations": {"name": "a"}}]},
            [("tool-malformed", "error", "tools[0].functionDeclarations")],
        ),
        (
            {"tools": [{"functionDeclarations": ["a"]}]},
            [("tool-malformed", "error", "tools[0].functionDeclarations[0]")],
        ),
        (
            {"tools": [{"functionDeclarations": [{"description": "no name"}]}]},
            [("tool-malformed", "error", "tools[0].functionDeclarations[0].name")],
        ),
        (
            {
                "tools": [
                    {
                        "functionDeclarations": [{"name": "a"}],
                        "function_declarations": [{"name": "b"}],
                    }
                ]
            },
            [("tool-malformed", "warning", "tools[0].functionDeclarations")],
        ),
        ({**declarations("a"), "toolConfig": "ANY"}, [("choice-malformed", "error", "toolConfig")]),
        (
            {**declarations("a"), "toolConfig": {"functionCallingConfig": ["ANY"]}},
            [("choice-malformed", "error", "toolConfig.functionCallingConfig")],
        ),
        (
            {**declarations("a"), "toolConfig": {"functionCallingConfig": {"mode": "FORCED"}}},
            [("choice-malformed", "error", "toolConfig.functionCallingConfig.mode")],
        ),
        (
            {**declarations("a"), "toolConfig": {"functionCallingConfig": {"mode": True}}},
            [("choice-malformed", "error", "toolConfig.functionCallingConfig.mode")],
        ),
        (
            {
                **declarations("a"),
                "toolConfig": {
                    "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": "a"}
                },
            },
            [
                (
                    "choice-malformed",
                    "error",
                    "toolConfig.functionCallingConfig.allowedFunctionNames",
                )
            ],
        ),
        (
            {
                **declarations("a"),
                "toolConfig": {
                    "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["a", 5]}
                },
            },
            [
                (
                    "choice-malformed",
                    "error",
                    "toolConfig.functionCallingConfig.allowedFunctionNames[1]",
                )
            ],
        ),
        (
            {**declarations("a"), "toolConfig": {}, "tool_config": {}},
            [("choice-malformed", "warning", "toolConfig")],
        ),
        (
            {"contents": [{"role": "model", "parts": [{"functionCall": "a"}]}]},
            [("tool-malformed", "error", "contents[0].parts[0].functionCall")],
        ),
        (
            {"contents": [{"role": "model", "parts": [{"functionCall": {"name": ["a"]}}]}]},
            [("tool-malformed", "error", "contents[0].parts[0].functionCall.name")],
        ),
    ],
)
def test_malformed_shapes_become_findings(body, expected):
    assert findings(body) == expected


def test_json_null_fields_count_as_unset():
    body = {"tools": None, "toolConfig": None, "contents": [{"parts": [{"functionCall": None}]}]}
    assert findings(body) == []


def test_streaming_is_decided_by_the_endpoint_not_the_body():
    assert gemini.read_request(sdk_fixture("gemini-stream")["body"]).streaming is False


# -- fix mode ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, key",
    [
        ("gemini-tool-config-any", "allowedFunctionNames"),
        ("gemini-vertex-tool-config-any", "allowed_function_names"),
    ],
)
def test_fix_rewrites_only_the_allowed_name(name, key):
    old = f'"{key}": ["get_weather"]'
    original = sdk_fixture(name)["body_text"]
    # Mastra (and the OpenAI Agents SDK) turn "get.weather" into the offered "get_weather".
    sent = replace_once(original, old, old.replace("get_weather", "get.weather"))
    result = analyse(sent, fix=True)
    assert [f.to_dict() for f in result.fixes] == [
        {
            "path": f"toolConfig.functionCallingConfig.{key}[0]",
            "from": "get.weather",
            "to": "get_weather",
            "rewrite": "mastra+openai-agents",
        }
    ]
    assert result.new_body == original.encode()


def test_fix_rewrites_one_entry_of_several_under_snake_case_keys():
    original = (
        '{"tools":[{"function_declarations":[{"name":"get_weather"},{"name":"search_docs"}]}],\n'
        ' "tool_config": {"function_calling_config": {"mode": "ANY",\n'
        '   "allowed_function_names": [ "get_weather" ,"search_docs"]}}}'
    )
    sent = replace_once(original, '"search_docs"]', '"search docs"]')
    result = analyse(sent, fix=True)
    assert [f.path for f in result.fixes] == [
        "tool_config.function_calling_config.allowed_function_names[1]"
    ]
    assert result.new_body == original.encode()


def test_fix_leaves_an_allowed_name_no_rewrite_explains():
    sent = replace_once(
        sdk_fixture("gemini-tool-config-any")["body_text"], '["get_weather"]', '["weather"]'
    )
    result = analyse(sent, fix=True)
    assert result.new_body is None
    assert [s.to_dict() for s in result.fix_skipped] == [
        {
            "path": "toolConfig.functionCallingConfig.allowedFunctionNames[0]",
            "name": "weather",
            "reason": "matches no offered tool under a known client rewrite (mastra, openai-agents)",
        }
    ]


def test_fix_plan_points_at_the_exact_json_string():
    body = {
        **declarations("get_weather"),
        "tool_config": {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["Get Weather"]}
        },
    }
    plan = fixes.plan_fixes(gemini.read_request(body))
    (fix,) = plan.fixes
    assert fix.where == ("tool_config", "functionCallingConfig", "allowedFunctionNames", 0)
    assert (fix.old, fix.new, fix.rewrite) == ("Get Weather", "get_weather", "openai-agents")


# -- block mode ----------------------------------------------------------------------------------------


def test_block_response_is_googles_invalid_argument_error():
    sent = replace_once(
        sdk_fixture("gemini-tools")["body_text"], '"name": "get_weather"', '"name": "get weather"'
    )
    result = analyse(sent)
    status, headers, body = result.block_response()
    assert status == 400
    assert headers == {"content-type": "application/json; charset=UTF-8"}
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message", "status"}
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    assert error["message"].startswith(
        "toolnames: tools[0].functionDeclarations[0].name 'get weather'"
    )
    assert error["message"].endswith("never reached the provider.")


def test_addon_blocks_a_vertex_request_in_googles_error_shape():
    fixture = sdk_fixture("gemini-vertex-tool-config-any")
    addon = toolnames.ToolNames()
    with taddons.context(addon) as tctx:
        tctx.configure(addon, toolnames_mode="block")
        flow = tflow.tflow(
            req=tutils.treq(
                method=b"POST",
                host="us-central1-aiplatform.googleapis.com",
                port=443,
                scheme=b"https",
                authority=b"",
                path=fixture["path"].encode(),
            )
        )
        flow.request.text = replace_once(fixture["body_text"], '["get_weather"]', '["getWeather"]')
        addon.request(flow)
    assert flow.response is not None
    assert flow.response.status_code == 400
    assert flow.response.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert flow.metadata["toolnames"]["api"] == "gemini"
    assert flow.metadata["toolnames"]["rule"] == "gemini"
    assert [f["code"] for f in flow.metadata["toolnames"]["findings"]] == ["choice-not-in-tools"]


# -- response side ---------------------------------------------------------------------------------


def test_read_calls_on_a_function_call_part_with_a_thought_signature():
    body = response_fixture("gemini-function-call.json")
    assert [(c.name, c.kind, c.path) for c in gemini.read_calls(body)] == [
        ("find_recipe", "function", "candidates[0].content.parts[0].functionCall.name")
    ]


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "gemini-stream-function-call.sse",
            [("get_moon_phase", "events[0].candidates[0].content.parts[0].functionCall.name")],
        ),
        # Vertex streamFunctionCallArguments: two calls, each named only in its first part.
        (
            "gemini-vertex-stream-partial-args.sse",
            [
                ("count_birds", "events[0].candidates[0].content.parts[0].functionCall.name"),
                ("log_sighting", "events[4].candidates[0].content.parts[0].functionCall.name"),
            ],
        ),
    ],
)
def test_stream_collector_counts_each_call_once_by_its_named_part(name, expected):
    assert [(c.name, c.path) for c in stream_calls("gemini", response_fixture(name))] == expected


@pytest.mark.parametrize("chunk_size", [1, 7, 1 << 20])
def test_sse_stream_through_the_tap_reports_an_unoffered_call(chunk_size):
    # Google ends SSE events with CRLF CRLF and sends no [DONE].
    raw = (RESPONSES_DIR / "gemini-stream-function-call.sse").read_bytes()
    tap = streams.StreamTap(gemini.FORMAT)
    for i in range(0, len(raw), chunk_size):
        assert tap(raw[i : i + chunk_size]) == raw[i : i + chunk_size]
    tap(b"")
    assert tap.problem() is None
    view = gemini.read_request(sdk_fixture("gemini-stream")["body"])
    found = response_checks.check_calls(tap.calls(), view, RULES["gemini"])
    assert [(f.code, f.path) for f in found] == [
        ("response-unknown-tool", "events[0].candidates[0].content.parts[0].functionCall.name")
    ]


def test_read_calls_finds_function_calls_in_every_candidate():
    # docs/providers.md §6: a part is {"functionCall": {...}, "thoughtSignature"?}.
    body = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "Let me check."},
                        {
                            "functionCall": {"name": "get_weather", "args": {"location": "Paris"}},
                            "thoughtSignature": "c2ln",
                        },
                        {
                            "functionCall": {
                                "id": "c2",
                                "name": "multi_tool_use.parallel",
                                "args": {},
                            }
                        },
                    ],
                },
                "finishReason": "STOP",
                "index": 0,
            },
            {
                "content": {"role": "model", "parts": [{"functionCall": {"name": "lookup"}}]},
                "index": 1,
            },
        ],
        "usageMetadata": {"promptTokenCount": 1},
    }
    assert [(c.name, c.path) for c in gemini.read_calls(body)] == [
        ("get_weather", "candidates[0].content.parts[1].functionCall.name"),
        ("multi_tool_use.parallel", "candidates[0].content.parts[2].functionCall.name"),
        ("lookup", "candidates[1].content.parts[0].functionCall.name"),
    ]


def test_read_calls_reads_the_json_array_of_a_stream_without_alt_sse():
    chunk = {"candidates": [{"content": {"parts": [{"functionCall": {"name": "a"}}]}}]}
    assert [c.path for c in gemini.read_calls([{"candidates": []}, chunk])] == [
        "[1].candidates[0].content.parts[0].functionCall.name"
    ]


def test_stream_collector_takes_names_from_sse_chunks_and_skips_nameless_parts():
    # docs/providers.md §6, Vertex streamFunctionCallArguments: only the first part carries the name.
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Checking"}]}}]},
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"functionCall": {"name": "getWeather", "willContinue": True}}],
                    }
                }
            ]
        },
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {
                                "functionCall": {
                                    "partialArgs": [
                                        {
                                            "jsonPath": "$.location",
                                            "stringValue": "Boston",
                                            "willContinue": True,
                                        }
                                    ],
                                    "willContinue": True,
                                }
                            }
                        ],
                    }
                }
            ]
        },
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"functionCall": {}}]},
                    "finishReason": "STOP",
                }
            ]
        },
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"functionCall": {"name": "lookup", "args": {}}}],
                    }
                }
            ]
        },
    ]
    assert [(c.name, c.path) for c in stream_calls("gemini", chunks)] == [
        ("getWeather", "events[1].candidates[0].content.parts[0].functionCall.name"),
        ("lookup", "events[4].candidates[0].content.parts[0].functionCall.name"),
    ]


def test_stream_collectors_are_independent():
    first, second = gemini.StreamCollector(), gemini.StreamCollector()
    first.event({"candidates": [{"content": {"parts": [{"functionCall": {"name": "a"}}]}}]})
    assert second.calls() == []
    assert len(first.calls()) == 1


# -- wrong types never raise ------------------------------------------------------------------------

MANGLED = [
    {},
    {"tools": None},
    {"tools": 1},
    {"tools": [None, 1, "x", [], {}]},
    {"tools": [{"functionDeclarations": None}]},
    {"tools": [{"functionDeclarations": [None, [], 1.5, {"name": None}, {"name": {"a": 1}}]}]},
    {"tools": [{"function_declarations": "x", "functionDeclarations": 3}]},
    {"toolConfig": []},
    {"toolConfig": {"functionCallingConfig": None}},
    {"toolConfig": {"functionCallingConfig": {"mode": None, "allowedFunctionNames": None}}},
    {"toolConfig": {"functionCallingConfig": {"mode": [], "allowedFunctionNames": {}}}},
    {
        "toolConfig": {
            "functionCallingConfig": {"mode": 1e300, "allowed_function_names": [[], None]}
        }
    },
    {"toolConfig": {"functionCallingConfig": {"mode": 99}}},
    {"tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": [""]}}},
    {"contents": "hello"},
    {"contents": [None, 1, [], {"parts": None}, {"parts": "x"}, {"parts": [None, 1, "x"]}]},
    {"contents": [{"parts": [{"functionCall": [], "functionResponse": 1, "function_call": None}]}]},
    {"candidates": [{"content": {"parts": [{"functionCall": {"name": 1}}]}}]},
]
MANGLED_RESPONSES = [
    {},
    {"candidates": None},
    {
        "candidates": [
            None,
            1,
            {"content": None},
            {"content": {"parts": [None, {"functionCall": "x"}, {"functionCall": {"name": None}}]}},
        ]
    },
]


@pytest.mark.parametrize("body", MANGLED + MANGLED_RESPONSES)
def test_mangled_bodies_never_raise(body):
    text = json.dumps(body)
    for fix in (False, True):
        analyse(text, fix=fix)
    request_checks.check_request(gemini.read_request(body), RULE, gemini.FORMAT)
    gemini.read_calls(body)
    stream_calls("gemini", [body])


@pytest.mark.parametrize("value", [None, 1, "x", [], [None, {"candidates": 1}], True])
def test_response_side_takes_any_json_value(value):
    assert gemini.read_calls(value) == []
    assert stream_calls("gemini", [value]) == []


# Bodies shaped like requests and responses, with arbitrary JSON wherever a value goes.
KEYS = [
    "tools", "functionDeclarations", "function_declarations", "name", "toolConfig", "tool_config",
    "functionCallingConfig", "function_calling_config", "mode", "allowedFunctionNames",
    "allowed_function_names", "contents", "parts", "functionCall", "function_call",
    "functionResponse", "candidates", "content", "ANY", "get_weather",
]  # fmt: skip
bodies = keyed_bodies(KEYS, ["ANY", "NONE", "AUTO", "VALIDATED", "get_weather", "get.weather", ""])


@settings(max_examples=300, deadline=None)
@given(body=bodies)
def test_arbitrary_json_never_raises(body):
    text = json.dumps(body)
    result = analyse(text, fix=True)
    if result.new_body is not None:
        json.loads(result.new_body)
    if result.errors:
        result.block_response()
    gemini.read_calls(body)
    stream_calls("gemini", [body])
