"""Findings for a request (checks.py), and the block message built from them (analysis.py)."""

import dataclasses
import json

import pytest

from tests.testkit import exchange_for
from toolnames_core import Exchange
from toolnames_core import exchange
from toolnames_core.formats import openai_chat
from toolnames_core.formats.openai_chat import read_request
from toolnames_core.model import Choice
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.request_checks import check_request
from toolnames_core.request_checks import check_tools
from toolnames_core.request_checks import offered_text
from toolnames_core.rules import RULES


def fn(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


def named(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


def findings(body: dict, rule: str = "openai") -> list:
    return check_request(read_request(body), RULES[rule], openai_chat.FORMAT)


def summary(body: dict, rule: str = "openai") -> list[tuple[str, str, str]]:
    return [(f.code, f.severity, f.path) for f in findings(body, rule)]


def history(name: str) -> dict:
    return {
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": name}}],
            },
        ]
    }


# Every finding code the request side can give, with its severity and path.
CASES = [
    (
        "name-empty",
        {"tools": [fn("")]},
        "openai",
        [("name-empty", "error", "tools[0].function.name")],
    ),
    (
        "name-too-long",
        {"tools": [fn("a" * 65)]},
        "openai",
        [("name-too-long", "error", "tools[0].function.name")],
    ),
    (
        "name-invalid-chars",
        {"tools": [fn("ok"), fn("search.web")]},
        "openai",
        [("name-invalid-chars", "error", "tools[1].function.name")],
    ),
    (
        "name-invalid-start",
        {"tools": [fn("9lives")]},
        "gemini",
        [("name-invalid-start", "error", "tools[0].function.name")],
    ),
    (
        "name-invalid-chars in a legacy function",
        {"functions": [{"name": "a b"}]},
        "openai",
        [("name-invalid-chars", "error", "functions[0].name")],
    ),
    (
        "name-invalid-chars in a custom tool",
        {"tools": [{"type": "custom", "custom": {"name": "run sql"}}]},
        "openai",
        [("name-invalid-chars", "error", "tools[0].custom.name")],
    ),
    # OpenAI documents no duplicate-name error, so a duplicate only warns there.
    (
        "name-duplicate (openai)",
        {"tools": [fn("a"), fn("b"), fn("a")]},
        "openai",
        [("name-duplicate", "warning", "tools[2].function.name")],
    ),
    (
        "name-duplicate (anthropic)",
        {"tools": [fn("a"), fn("a")]},
        "anthropic",
        [("name-duplicate", "error", "tools[1].function.name")],
    ),
    (
        "name-duplicate (gemini)",
        {"tools": [fn("a"), fn("a")]},
        "gemini",
        [("name-duplicate", "error", "tools[1].function.name")],
    ),
    (
        "name-duplicate (deepseek)",
        {"tools": [fn("a"), fn("a")]},
        "deepseek",
        [("name-duplicate", "error", "tools[1].function.name")],
    ),
    (
        "name-duplicate (portable)",
        {"tools": [fn("a"), fn("a")]},
        "portable",
        [("name-duplicate", "error", "tools[1].function.name")],
    ),
    (
        "name-duplicate across functions and tools",
        {"tools": [fn("a")], "functions": [{"name": "a"}]},
        "openai",
        [("name-duplicate", "warning", "functions[0].name")],
    ),
    (
        "choice-not-in-tools (Mastra's toolChoice)",
        {"tools": [fn("search_web")], "tool_choice": named("search.web")},
        "openai",
        [("choice-not-in-tools", "error", "tool_choice.function.name")],
    ),
    (
        "choice-not-in-tools (custom)",
        {"tools": [fn("a")], "tool_choice": {"type": "custom", "custom": {"name": "b"}}},
        "openai",
        [("choice-not-in-tools", "error", "tool_choice.custom.name")],
    ),
    (
        "choice-not-in-tools (allowed_tools)",
        {
            "tools": [fn("a"), fn("b")],
            "tool_choice": {
                "type": "allowed_tools",
                "allowed_tools": {"mode": "auto", "tools": [fn("a"), fn("x"), fn("y")]},
            },
        },
        "openai",
        [
            ("choice-not-in-tools", "error", "tool_choice.allowed_tools.tools[1].function.name"),
            ("choice-not-in-tools", "error", "tool_choice.allowed_tools.tools[2].function.name"),
        ],
    ),
    (
        "choice-not-in-tools (legacy function_call)",
        {"functions": [{"name": "a"}], "function_call": {"name": "b"}},
        "openai",
        [("choice-not-in-tools", "error", "function_call.name")],
    ),
    (
        "choice-without-tools (auto)",
        {"tool_choice": "auto"},
        "openai",
        [("choice-without-tools", "error", "tool_choice")],
    ),
    (
        "choice-without-tools (required)",
        {"tools": [], "tool_choice": "required"},
        "openai",
        [("tools-empty", "error", "tools"), ("choice-without-tools", "error", "tool_choice")],
    ),
    (
        "tools-empty",
        {"tools": []},
        "openai",
        [("tools-empty", "error", "tools")],
    ),
    (
        "choice-without-tools (none, Chat Completions)",
        {"tool_choice": "none"},
        "openai",
        [("choice-without-tools", "error", "tool_choice")],
    ),
    (
        "choice-without-tools (a named choice of a legacy function)",
        {"functions": [{"name": "a"}], "tool_choice": named("a")},
        "openai",
        [("choice-without-tools", "error", "tool_choice")],
    ),
    (
        "choice-without-tools (named)",
        {"tool_choice": named("a")},
        "openai",
        [("choice-without-tools", "error", "tool_choice")],
    ),
    (
        "choice-without-tools (function_call)",
        {"function_call": {"name": "a"}},
        "openai",
        [("choice-without-tools", "error", "function_call")],
    ),
    (
        "history-name-invalid",
        {"tools": [fn("a")], **history("multi_tool_use.parallel")},
        "openai",
        [("history-name-invalid", "error", "messages[1].tool_calls[0].function.name")],
    ),
    (
        "history-name-invalid (legacy)",
        {"messages": [{"role": "assistant", "function_call": {"name": "a" * 65}}]},
        "openai",
        [("history-name-invalid", "error", "messages[0].function_call.name")],
    ),
    (
        "tool-malformed",
        {"tools": [{"type": "function"}]},
        "openai",
        [("tool-malformed", "error", "tools[0].function")],
    ),
    (
        "choice-malformed",
        {"tools": [fn("a")], "tool_choice": {"type": "tool", "toolName": "a"}},
        "openai",
        [("choice-malformed", "error", "tool_choice")],
    ),
]


@pytest.mark.parametrize("body,rule,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_finding_code_comes_with_its_severity_and_path(body, rule, expected):
    assert summary(body, rule) == expected


def test_the_table_covers_every_request_finding_code():
    codes = {code for case in CASES for code, _, _ in case[3]}
    assert codes == {
        "name-empty",
        "name-too-long",
        "name-invalid-chars",
        "name-invalid-start",
        "name-duplicate",
        "tools-empty",
        "choice-not-in-tools",
        "choice-without-tools",
        "history-name-invalid",
        "tool-malformed",
        "choice-malformed",
    }


@pytest.mark.parametrize(
    "body",
    [
        {"tools": [fn("get_weather"), fn("search-kb")]},
        {"tools": [fn("a")], "tool_choice": "auto"},
        {"tools": [fn("a")], "tool_choice": "required"},
        {"tools": [fn("a")], "tool_choice": named("a")},
        {"function_call": "none"},
        {"functions": [{"name": "a"}], "function_call": {"name": "a"}},
        {"tools": [fn("a")], **history("a")},
        # A history call to a tool no longer offered is not a request error.
        {"tools": [fn("a")], **history("b")},
        {"messages": [{"role": "user", "content": "no tools at all"}]},
    ],
)
def test_a_request_that_follows_the_rule_has_no_findings(body):
    assert findings(body) == []


def test_a_name_finding_message_names_the_path_value_length_and_rule():
    (f,) = findings({"tools": [fn("search.web")]})
    assert f.message == (
        "tools[0].function.name 'search.web' (10 chars) contains '.', outside rule openai (a-zA-Z0-9_-, max 64)"
    )
    assert f.rule == "openai"


def test_a_name_with_several_violations_gives_one_finding_each():
    codes = [f.code for f in findings({"tools": [fn("9" + "." * 70)]}, "portable")]
    assert codes == ["name-too-long", "name-invalid-chars", "name-invalid-start"]


def test_a_too_long_name_message_gives_its_length_and_the_limit():
    (f,) = findings({"tools": [fn("x" * 70)]})
    assert (
        "(70 chars)" in f.message
        and "is over the 64 characters allowed by rule openai" in f.message
        and "70 characters" not in f.message  # the length is said once
    )


def test_a_duplicate_message_lists_every_path_and_says_whether_the_rule_rejects_it():
    (warn,) = findings({"tools": [fn("a"), fn("a"), fn("a")]}, "openai")
    assert warn.message == (
        "'a' (1 chars) is offered 3 times (tools[0].function.name, tools[1].function.name, "
        "tools[2].function.name); rule openai cannot tell them apart in duplicates"
    )
    (err,) = findings({"tools": [fn("a"), fn("a")]}, "anthropic")
    assert err.message.endswith("rule anthropic rejects duplicates")


def test_a_choice_not_in_tools_message_lists_the_offered_names():
    (f,) = findings(
        {"tools": [fn("search_web"), fn("get_weather")], "tool_choice": named("search.web")}
    )
    assert f.message == (
        "tool_choice.function.name 'search.web' (10 chars) names no offered tool; "
        "offered: 'get_weather', 'search_web'"
    )


def test_a_choice_without_tools_message_names_the_choice_as_sent():
    (f,) = findings({"tool_choice": "required"})
    assert f.message == 'tool_choice is "required", but the request offers no tools'
    (f,) = findings({"tool_choice": named("a")})
    assert f.message == "tool_choice names 'a', but the request offers no tools"


def test_a_named_choice_matching_only_a_legacy_function_says_which_list_is_missing():
    (f,) = findings({"functions": [{"name": "a"}], "tool_choice": named("a")})
    assert f.message == "tool_choice names 'a', but the request offers no tools"
    (f,) = findings({"tools": [fn("a")], "function_call": {"name": "a"}})
    assert f.message == "function_call names 'a', but the request offers no functions"


def test_a_name_the_rule_rejects_is_shown_escaped_with_its_code_points():
    (f,) = findings({"tools": [fn("search\u202eweb")]})
    assert f.message == (
        "tools[0].function.name 'search\\u202eweb' (10 chars; U+202E RIGHT-TO-LEFT OVERRIDE) "
        "contains '\\u202e', outside rule openai (a-zA-Z0-9_-, max 64)"
    )


def test_a_history_message_gives_every_reason_and_the_consequence():
    (f,) = findings(history("multi_tool_use.parallel"))
    assert f.message == (
        "messages[1].tool_calls[0].function.name 'multi_tool_use.parallel' (23 chars) contains '.', "
        "outside rule openai (a-zA-Z0-9_-, max 64); providers reject the whole request for it"
    )


def test_tools_that_failed_to_parse_do_not_count_as_offered():
    body = {"tools": [{"type": "function", "function": {"name": 1}}], "tool_choice": "auto"}
    assert [f.code for f in findings(body)] == ["tool-malformed", "choice-without-tools"]


def test_builtin_tools_are_not_name_checked_and_are_chosen_by_their_own_namespace():
    view = RequestView(
        "openai-responses",
        tools=[
            NameRef("web_search_preview", ("tools", 0, "type"), "builtin"),
            NameRef("a.b", ("tools", 1, "name")),
        ],
        choices=[
            Choice(
                "named",
                ("tool_choice",),
                (NameRef("web_search_preview", ("tool_choice", "type"), "builtin"),),
            ),
            Choice("named", ("x",), (NameRef("a.b", ("x", "name"), "builtin"),)),
        ],
    )
    assert [(f.code, f.path) for f in check_request(view, RULES["openai"], openai_chat.FORMAT)] == [
        ("name-invalid-chars", "tools[1].name"),
        # A function's name does not satisfy a built-in choice.
        ("choice-not-in-tools", "x.name"),
    ]


def test_adapter_problems_come_first_then_tools_choices_and_history():
    body = {
        "tools": [fn("a.b"), 5],
        "tool_choice": named("c"),
        **history("d e"),
    }
    assert [f.code for f in findings(body)] == [
        "tool-malformed",
        "name-invalid-chars",
        "choice-not-in-tools",
        "history-name-invalid",
    ]


@pytest.mark.parametrize(
    "names,expected",
    [
        ([], "no tools are offered"),
        (["b", "a"], "offered: 'a', 'b'"),
        ([f"t{i:02}" for i in range(12)], "offered: " + ", ".join(f"'t{i:02}'" for i in range(12))),
        (
            [f"t{i:02}" for i in range(15)],
            "offered: " + ", ".join(f"'t{i:02}'" for i in range(12)) + " and 3 more",
        ),
    ],
)
def test_offered_text_lists_up_to_twelve_names_sorted(names, expected):
    view = RequestView("openai-chat", tools=[NameRef(n, ("tools", i)) for i, n in enumerate(names)])
    assert offered_text(view) == expected


# --- analysis: body bytes in, findings and the block message out ------------------------------


def analyse(body: object, rule: str = "openai") -> Exchange:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return exchange_for(content, "openai-chat", rule)


@pytest.mark.parametrize(
    "content,says",
    [
        (b"not json", "the body is not JSON"),
        (b"[1, 2]", "the body is an array, not a JSON object"),
        (b'"tools"', "the body is a string, not a JSON object"),
        (b"null", "the body is null, not a JSON object"),
        (b"\xff\xfe{", "the body is not JSON"),
        (b"[" * 100_000, "the JSON is nested too deeply to read"),
        (
            b'{"tools": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "the JSON is nested too deeply to read",
        ),
    ],
)
def test_a_body_that_cannot_be_read_is_one_request_unreadable_warning(content, says):
    result = analyse(content)
    (f,) = result.findings
    assert (f.code, f.severity, f.path) == ("request-unreadable", "warning", "")
    assert f.message.startswith("toolnames could not read this request: " + says)
    assert result.view is None and result.errors == []


def _max_json_depth() -> int:
    lo, hi = 1, 200_000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            json.loads("[" * mid + "]" * mid)
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo


@pytest.mark.parametrize("key", ["tool_choice", "function_call", "tools", "messages"])
def test_nesting_just_under_the_json_limit_never_raises(key):
    # On Python 3.11 json.dumps for a choice-malformed message used to hit the limit
    # json.loads had just stayed under.
    top = _max_json_depth()
    for depth in range(top - 6, top + 1):
        content = (json.dumps({key: 0})[:-2] + "[" * depth + "]" * depth + "}").encode()
        result = analyse(content)
        assert all(
            f.code in ("request-unreadable", "tool-malformed", "choice-malformed")
            for f in result.findings
        )


def test_an_object_without_any_tool_key_is_not_parsed_at_all():
    # Not even broken JSON is reported: a body with no tool keys costs a substring search.
    assert analyse(b'{"model": "m", "messages": [ broken').findings == []
    assert analyse({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).view is None


def test_block_message_leads_with_the_first_error_and_lists_the_offered_tools():
    result = analyse({"tools": [fn("get_weather"), fn("search.web")]})
    assert exchange.block_message(result.findings, result.view) == (
        "toolnames: tools[1].function.name 'search.web' (10 chars) contains '.', outside rule openai "
        "(a-zA-Z0-9_-, max 64); offered: 'get_weather', 'search.web'. "
        "The request was blocked by toolnames and never reached the provider."
    )


def test_block_message_for_a_missing_choice_does_not_list_the_offered_tools_twice():
    result = analyse({"tools": [fn("search_web")], "tool_choice": named("search.web")})
    message = exchange.block_message(result.findings, result.view)
    assert message.count("offered:") == 1


def test_block_message_counts_the_other_errors_and_names_at_most_five():
    result = analyse({"tools": [fn(f"bad.{i}") for i in range(8)]})
    message = exchange.block_message(result.findings, result.view)
    assert ". 7 more error(s): name-invalid-chars at tools[1].function.name, " in message
    assert "tools[5].function.name and 2 more." in message
    assert "tools[6]" not in message


def test_block_response_answers_with_the_first_error_as_code_and_param():
    result = analyse({"tools": [fn("ok")], "tool_choice": named("search.web")})
    status, headers, body = result.block_response()
    error = json.loads(body)["error"]
    assert status == 400 and headers["content-type"] == "application/json"
    assert (error["code"], error["param"], error["type"]) == (
        "choice-not-in-tools",
        "tool_choice.function.name",
        "invalid_request_error",
    )
    assert error["message"].startswith("toolnames: tool_choice.function.name 'search.web'")


def test_anthropic_choices_are_named_as_sent_not_as_the_mode_they_mean():
    body = {"messages": [], "tools": [], "tool_choice": {"type": "any"}}
    found = exchange_for(json.dumps(body).encode(), "anthropic-messages", "anthropic").findings
    assert [f.message for f in found] == [
        'tool_choice is {"type": "any"}, but the request offers no tools'
    ]


def test_a_forced_choice_the_model_ignored_is_named_as_sent():
    body = {"messages": [], "tools": [{"name": "a"}], "tool_choice": {"type": "any"}}
    exchange = exchange_for(json.dumps(body).encode(), "anthropic-messages", "anthropic")
    (f,) = exchange.check_calls([])
    assert f.message == (
        'tool_choice {"type": "any"} requires a tool call, but the model called no tool'
    )


def test_block_message_says_once_that_no_tools_are_offered():
    result = analyse({"tool_choice": "required"})
    message = exchange.block_message(result.findings, result.view)
    assert message == (
        'toolnames: tool_choice is "required", but the request offers no tools. '
        "The request was blocked by toolnames and never reached the provider."
    )


def test_a_request_sent_again_gets_the_same_findings_each_under_its_own_rule_and_place():
    # The findings at a place are remembered (an agent resends its tools and history with
    # every request): the same request must read alike, and a name moved to another place,
    # or judged by another rule, must not get the remembered message.
    body = {"tools": [fn("get.weather"), fn("ok")], **history("get.weather")}
    first = findings(body)
    assert findings(body) == first
    assert [f.path for f in first] == [
        "tools[0].function.name",
        "messages[1].tool_calls[0].function.name",
    ]
    moved = {"tools": [fn("ok"), fn("get.weather")], **history("get.weather")}
    assert [f.path for f in findings(moved)][0] == "tools[1].function.name"
    assert findings(moved)[0].message.startswith("tools[1].function.name 'get.weather'")
    assert findings(body, "gemini") == []  # gemini allows dots
    assert [f.rule for f in findings(body, "azure")] == ["azure", "azure"]


def test_the_tools_findings_are_made_once_for_the_same_tools_and_never_served_stale():
    # A request's tools' findings are remembered for the same names at the same places
    # (model.tool_set), per rule object: the same names elsewhere, or under another rule of
    # the same id, get their own; and each request gets a list of its own.
    body = {"tools": [fn("get.weather"), fn("get.weather")]}
    first = findings(body)
    first.clear()  # a caller may change its list (exchange._note_skipped does)
    assert [(f.code, f.path) for f in findings(body)] == [
        ("name-invalid-chars", "tools[0].function.name"),
        ("name-invalid-chars", "tools[1].function.name"),
        ("name-duplicate", "tools[1].function.name"),
    ]
    legacy = {"functions": [{"name": "get.weather"}, {"name": "get.weather"}]}
    assert [f.path for f in findings(legacy)] == [
        "functions[0].name",
        "functions[1].name",
        "functions[1].name",
    ]
    assert [f.severity for f in findings(body, "deepseek")][-1] == "error"  # rejects duplicates
    lenient = dataclasses.replace(RULES["openai"], chars="a-z.")
    assert check_request(read_request(body), lenient, openai_chat.FORMAT)[0].code == (
        "name-duplicate"
    )


def test_tools_without_findings_are_settled_once_and_never_served_stale():
    # That the tools hold no finding is remembered too (model.tool_set, per rule object):
    # the same tools under a rule that rejects their names, or other tools, get their own.
    body = {"tools": [fn("get_weather"), fn("search")]}
    assert findings(body) == []
    assert findings(body) == []
    strict = dataclasses.replace(RULES["openai"], chars="a-z")
    assert [f.path for f in check_request(read_request(body), strict, openai_chat.FORMAT)] == [
        "tools[0].function.name"
    ]
    assert findings(body) == []
    renamed = {"tools": [fn("get.weather"), fn("search")]}
    assert [f.path for f in findings(renamed)] == ["tools[0].function.name"]
    repeated = {"tools": [fn("search"), fn("search")]}
    assert [f.code for f in findings(repeated)] == ["name-duplicate"]
    view = read_request(body)
    mine = check_tools(view, RULES["openai"])
    mine.append("a caller's own")  # each request gets a list of its own
    assert check_tools(view, RULES["openai"]) == []


@pytest.mark.parametrize(
    ("path", "body", "said"),
    [
        (
            "/v1/chat/completions",
            {
                "tools": [{"type": "function", "function": {"name": "a.b"}}],
                "tool_choice": "required",
            },
            'tool_choice is "required"',
        ),
        (
            "/v1/chat/completions",
            {
                "tools": [{"type": "function", "function": {"name": "a"}}],
                "tool_choice": {"type": "function", "function": {"name": "elsewhere"}},
            },
            "tool_choice names 'elsewhere'",
        ),
        (
            "/v1/messages",
            {
                "tools": [{"name": "a", "input_schema": {}}],
                "tool_choice": {"type": "tool", "name": "a"},
            },
            "tool_choice names 'a'",
        ),
    ],
)
def test_a_forced_choice_sent_to_ollama_is_a_warning_that_it_is_ignored(path, body, said):
    exchange = Exchange.for_request("POST", path, "localhost", 11434)
    exchange.check_request(json.dumps({"messages": [], **body}).encode())
    (finding,) = exchange.findings
    assert (finding.code, finding.severity, finding.rule) == ("choice-ignored", "warning", "ollama")
    assert said in finding.message and "ignores tool choices" in finding.message
    # The same request elsewhere: a choice naming no offered tool is the error it is there.
    elsewhere = Exchange.for_request("POST", path, "localhost", 8080)
    elsewhere.check_request(json.dumps({"messages": [], **body}).encode())
    assert "choice-ignored" not in {f.code for f in elsewhere.findings}


def test_auto_sent_to_ollama_is_nothing_to_say():
    exchange = Exchange.for_request("POST", "/v1/chat/completions", "localhost", 11434)
    tools = [{"type": "function", "function": {"name": "a"}}]
    exchange.check_request(json.dumps({"tools": tools, "tool_choice": "auto"}).encode())
    assert exchange.findings == []
