"""Fix mode (fixes.py, exchange_for(fix=True)): one name rewritten, nothing else."""

import json

import pytest

from tests.testkit import exchange_for
from toolnames_core import Exchange
from toolnames_core.aliases import alias_for
from toolnames_core.fixes import apply_fixes
from toolnames_core.fixes import plan_fixes
from toolnames_core.fixes import rewrite
from toolnames_core.formats.openai_chat import read_request
from toolnames_core.model import Choice
from toolnames_core.model import Fix
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.rewrites import Rewrite
from toolnames_core.rules import RULES


def fn(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


def named(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


def fix(content: bytes | str) -> Exchange:
    if isinstance(content, str):
        content = content.encode("utf-8")
    return exchange_for(content, "openai-chat", "openai", fix=True)


# --- plan_fixes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "offered,chosen,new,rewrite",
    [
        # Mastra's key and the Agents SDK's name agree on "search_web": one match, both named.
        (["search_web", "other"], "search.web", "search_web", "mastra+openai-agents"),
        # Only Mastra prefixes a leading digit.
        (["_9lives"], "9lives", "_9lives", "mastra"),
        # Only Mastra cuts a valid 64-character key to 63.
        (["a" * 63], "a" * 64, "a" * 63, "mastra"),
        # Only Mastra writes an emoji as two underscores.
        (["a__b"], "a\U0001f600b", "a__b", "mastra"),
        # Only the Agents SDK lower-cases and turns hyphens into underscores.
        (["get_weather"], "Get-Weather", "get_weather", "openai-agents"),
    ],
)
def test_a_choice_that_one_rewrite_maps_to_exactly_one_offered_tool_is_fixed(
    offered, chosen, new, rewrite
):
    view = read_request({"tools": [fn(n) for n in offered], "tool_choice": named(chosen)})
    plan = plan_fixes(view)
    assert plan.fixes == [Fix(("tool_choice", "function", "name"), chosen, new, rewrite)]
    assert [s.to_dict() for s in plan.skipped] == []


def test_a_choice_that_maps_to_two_offered_tools_is_skipped_with_both_candidates():
    view = read_request(
        {"tools": [fn("Search_Web"), fn("search_web")], "tool_choice": named("Search.Web")}
    )
    plan = plan_fixes(view)
    assert plan.fixes == []
    assert [s.to_dict() for s in plan.skipped] == [
        {
            "path": "tool_choice.function.name",
            "name": "Search.Web",
            "reason": "could be 'Search_Web' (mastra) or 'search_web' (openai-agents)",
        }
    ]


def test_a_choice_no_rewrite_maps_to_an_offered_tool_is_skipped():
    view = read_request({"tools": [fn("get_weather")], "tool_choice": named("fetch.weather")})
    plan = plan_fixes(view)
    assert plan.fixes == []
    assert [s.to_dict() for s in plan.skipped] == [
        {
            "path": "tool_choice.function.name",
            "name": "fetch.weather",
            "reason": "matches no offered tool under a known client rewrite (mastra, openai-agents)",
        }
    ]


def test_choices_that_already_match_and_builtin_choices_are_left_alone():
    view = RequestView(
        "openai-responses",
        tools=[NameRef("search_web", ("tools", 0, "name"))],
        choices=[
            Choice("named", ("a",), (NameRef("search_web", ("a", "name")),)),
            Choice("named", ("b",), (NameRef("web.search", ("b", "type"), "builtin"),)),
        ],
    )
    plan = plan_fixes(view)
    assert (plan.fixes, plan.skipped) == ([], [])


def test_plan_fixes_uses_the_rewrites_it_is_given():
    only_upper = (Rewrite("upper", str.upper, "test"),)
    view = read_request({"tools": [fn("ABC")], "tool_choice": named("abc")})
    assert plan_fixes(view, only_upper).fixes == [
        Fix(("tool_choice", "function", "name"), "abc", "ABC", "upper")
    ]
    assert (
        plan_fixes(view, ()).skipped[0].reason
        == "matches no offered tool under a known client rewrite ()"
    )


def test_a_rewrite_that_gives_none_is_no_match():
    nothing = (Rewrite("nothing", lambda name: None, "test"),)
    view = read_request({"tools": [fn("a")], "tool_choice": named("")})
    assert plan_fixes(view, nothing).fixes == []


# --- analyse_request(fix=True): the fixed body ---------------------------------------------------

# Odd whitespace, unusual key order, escapes, raw UTF-8 and number forms a re-serialiser would
# normalise: the fixed body must keep all of them.
MASTRA_BODY = (
    '{ "tool_choice" :{"function" : {"name":"search.web"} ,"type":"function"},\n'
    '\t"messages":[{"content":"caf\\u00e9 – déjà \\"vu\\"","role":"user"}],'
    '"temperature":1.0E+0 ,  "top_p":0.50,\r\n'
    '  "tools":[ {"function":{"name":"search_web","parameters":{"type":"object","properties":{}}},"type":"function"} ],'
    '"model":"gpt-4o-mini"   }'
)


def test_the_fixed_body_differs_from_the_original_only_in_the_name():
    assert MASTRA_BODY.count('"search.web"') == 1
    result = fix(MASTRA_BODY)
    assert result.new_body == MASTRA_BODY.replace('"search.web"', '"search_web"').encode("utf-8")
    assert result.fixes == [
        Fix(("tool_choice", "function", "name"), "search.web", "search_web", "mastra+openai-agents")
    ]
    assert result.fix_skipped == []
    # The finding stays: it describes the request the client sent.
    assert [f.code for f in result.findings] == ["choice-not-in-tools"]


def test_the_fixed_body_passes_the_checks_it_failed():
    fixed = fix(MASTRA_BODY).new_body
    assert exchange_for(fixed, "openai-chat", "openai").findings == []


@pytest.mark.parametrize(
    "body,path",
    [
        (
            {
                "tools": [{"type": "custom", "custom": {"name": "run_sql"}}],
                "tool_choice": {"type": "custom", "custom": {"name": "run.sql"}},
            },
            "tool_choice.custom.name",
        ),
        (
            {"functions": [{"name": "search_web"}], "function_call": {"name": "search.web"}},
            "function_call.name",
        ),
    ],
)
def test_named_custom_choices_and_legacy_function_calls_are_fixed_in_place(body, path):
    text = json.dumps(body)
    result = fix(text)
    ((old, new),) = [(f.old, f.new) for f in result.fixes]
    assert result.fixes[0].path == path
    assert result.new_body == text.replace(json.dumps(old), json.dumps(new)).encode()


def test_allowed_tools_entries_are_fixed_one_by_one_and_the_unfixable_one_is_reported():
    choice = {
        "type": "allowed_tools",
        "allowed_tools": {
            "mode": "required",
            "tools": [fn("search.web"), fn("get_weather"), fn("nope"), fn("9lives")],
        },
    }
    text = json.dumps(
        {"tools": [fn("search_web"), fn("get_weather"), fn("_9lives")], "tool_choice": choice}
    )
    result = fix(text)
    assert [(f.path, f.new) for f in result.fixes] == [
        ("tool_choice.allowed_tools.tools[0].function.name", "search_web"),
        ("tool_choice.allowed_tools.tools[3].function.name", "_9lives"),
    ]
    assert [s.to_dict() for s in result.fix_skipped] == [
        {
            "path": "tool_choice.allowed_tools.tools[2].function.name",
            "name": "nope",
            "reason": "matches no offered tool under a known client rewrite (mastra, openai-agents)",
        }
    ]
    expected = text.replace('"search.web"', '"search_web"').replace(
        '{"name": "9lives"}', '{"name": "_9lives"}'
    )
    assert result.new_body == expected.encode()


@pytest.mark.parametrize(
    "tools,chosen,reason",
    [
        (
            ["Search_Web", "search_web"],
            "Search.Web",
            "could be 'Search_Web' (mastra) or 'search_web' (openai-agents)",
        ),
        (
            ["get_weather"],
            "fetch.weather",
            "matches no offered tool under a known client rewrite (mastra, openai-agents)",
        ),
    ],
)
def test_two_matches_or_none_leave_the_body_unchanged_and_say_why(tools, chosen, reason):
    result = fix(json.dumps({"tools": [fn(n) for n in tools], "tool_choice": named(chosen)}))
    assert result.new_body is None
    assert result.fixes == []
    (skipped,) = result.fix_skipped
    assert skipped.path == "tool_choice.function.name" and skipped.name == chosen
    assert skipped.reason.startswith(reason)


def test_nothing_is_fixed_unless_fix_mode_is_on():
    result = exchange_for(MASTRA_BODY.encode(), "openai-chat", "openai")
    assert (result.new_body, result.fixes, result.fix_skipped) == (None, [], [])
    assert [f.code for f in result.findings] == ["choice-not-in-tools"]


@pytest.mark.parametrize(
    "body",
    [
        {"tools": [fn("search_web")], "tool_choice": named("search_web")},
        {"tools": [fn("a")], "messages": [{"role": "user", "content": "a.b"}]},
        {"tools": [fn("search_web")], "tool_choice": "required"},
    ],
)
def test_requests_the_rule_accepts_are_never_rewritten(body):
    result = fix(json.dumps(body))
    assert (result.new_body, result.fixes, result.fix_skipped) == (None, [], [])


def test_a_body_that_is_not_utf8_is_left_as_sent_and_the_fix_reported_as_skipped():
    # json.loads reads UTF-16 JSON, so the mismatch is found; the splice works on UTF-8 only.
    content = json.dumps({"tools": [fn("search_web")], "tool_choice": named("search.web")}).encode(
        "utf-16"
    )
    result = fix(content)
    assert [f.code for f in result.findings] == ["choice-not-in-tools"]
    assert (result.new_body, result.fixes) == (None, [])
    assert [s.to_dict() for s in result.fix_skipped] == [
        {
            "path": "tool_choice.function.name",
            "name": "search.web",
            "reason": "was left as sent: the body is not UTF-8",
        }
    ]


def test_a_body_with_a_utf8_byte_order_mark_is_fixed_and_keeps_the_mark():
    content = b"\xef\xbb\xbf" + MASTRA_BODY.encode()
    result = fix(content)
    assert (
        result.new_body
        == b"\xef\xbb\xbf" + MASTRA_BODY.replace('"search.web"', '"search_web"').encode()
    )


def test_a_body_with_nan_and_infinity_is_fixed():
    text = MASTRA_BODY.replace('"top_p":0.50', '"top_p":NaN,"x":-Infinity')
    assert fix(text).new_body == text.replace('"search.web"', '"search_web"').encode()


def test_a_repeated_tool_choice_key_is_fixed_where_json_loads_reads_it():
    text = (
        '{"tools": ['
        + json.dumps(fn("search_web"))
        + '], "tool_choice": "auto", "tool_choice": '
        + json.dumps(named("search.web"))
        + "}"
    )
    result = fix(text)
    assert result.new_body == text.replace('"search.web"', '"search_web"').encode()


def test_apply_fixes_replaces_each_fixed_value():
    body = b'{"a": {"name": "x.y"}, "b": ["p q"]}'
    fixes = [Fix(("a", "name"), "x.y", "x_y", "mastra"), Fix(("b", 0), "p q", "p_q", "mastra")]
    assert apply_fixes(body, fixes) == b'{"a": {"name": "x_y"}, "b": ["p_q"]}'


# --- rewrite: the one step an exchange's body and a session's message go through -------------

MCP = "github.create_issue"
OPENAI = RULES["openai"]


def body_of(tools: list[str], chosen: str | None = None) -> bytes:
    body = {"tools": [fn(n) for n in tools]}
    if chosen is not None:
        body["tool_choice"] = named(chosen)
    return json.dumps(body).encode()


def test_rewrite_splices_the_choice_fix_and_an_alias_and_names_the_aliases():
    content = body_of(["search_web", MCP], "search.web")
    view = read_request(json.loads(content))
    done = rewrite(view, OPENAI, content, "not UTF-8", plan_fixes(view))
    alias = alias_for(MCP, OPENAI)
    assert [(f.path, f.old, f.new) for f in done.fixes] == [
        ("tool_choice.function.name", "search.web", "search_web"),
        ("tools[1].function.name", MCP, alias),
    ]
    assert json.loads(done.content) == json.loads(body_of(["search_web", alias], "search_web"))
    assert (done.skipped, done.aliases) == ([], {alias: MCP})


def test_rewrite_leaves_content_that_is_not_utf8_and_says_why_for_every_fix():
    content = body_of([MCP]).decode().encode("utf-16")
    done = rewrite(read_request(json.loads(content)), OPENAI, content, "the reason")
    assert (done.fixes, done.content, done.aliases) == ([], None, {})
    assert [s.to_dict() for s in done.skipped] == [
        {"path": "tools[0].function.name", "name": MCP, "reason": "the reason"}
    ]


def test_rewrite_splices_only_where_splices_says_and_keeps_the_planning_skips():
    content = body_of([MCP, "a.b"], "nope")
    view = read_request(json.loads(content))
    choices = plan_fixes(view)  # "nope" matches nothing offered: skipped
    done = rewrite(view, OPENAI, content, "x", choices, splices=lambda where: where[1] == 1)
    assert [f.path for f in done.fixes] == ["tools[1].function.name"]
    assert json.loads(done.content)["tools"][0]["function"]["name"] == MCP
    assert [s.name for s in done.skipped] == ["nope"]
    nothing = rewrite(view, OPENAI, content, "x", choices, splices=lambda where: False)
    assert (nothing.fixes, nothing.content, [s.name for s in nothing.skipped]) == (
        [],
        None,
        ["nope"],
    )


def test_rewrite_leaves_a_body_the_rule_accepts():
    content = body_of(["search_web"])
    assert rewrite(read_request(json.loads(content)), OPENAI, content, "x") == ([], None, [], {})
