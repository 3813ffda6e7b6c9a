"""The content view's text (toolnames_core/render/exchange.py): tables of names, verdicts and findings."""

import json

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from mitmproxy import version

from tests.testkit import REQUEST_FIXTURES
from tests.testkit import RESPONSE_FIXTURES
from tests.testkit import SDK_DIR
from tests.testkit import api_for
from tests.testkit import cells
from tests.testkit import chat_answer
from tests.testkit import chat_body
from tests.testkit import fixtures_of
from tests.testkit import load_sdk
from tests.testkit import record_metadata
from tests.testkit import render_request_text
from tests.testkit import render_response_text
from tests.testkit import response_api
from tests.testkit import response_body
from tests.testkit import row_of
from toolnames_core import bodies
from toolnames_core.formats import FORMATS
from toolnames_core.model import Finding
from toolnames_core.model import Fix
from toolnames_core.render import exchange as render

SDK = SDK_DIR
MITMPROXY_12 = int(version.VERSION.split(".")[0]) >= 12
needs_mitmproxy12 = pytest.mark.skipif(
    not MITMPROXY_12, reason="the toolnames content view uses mitmproxy 12's content view API"
)


# --- the tables, on every format (mitmproxy 11 and 12) ---------------------------------------


@pytest.mark.parametrize("api", sorted(FORMATS))
def test_every_registered_format_has_request_fixtures_to_render(api):
    # The table tests below run over the fixtures: a format without one would go unrendered.
    assert fixtures_of(api), f"no SDK request fixture for {api} in tests/fixtures/sdk"


@pytest.mark.parametrize("path", REQUEST_FIXTURES, ids=[p.stem for p in REQUEST_FIXTURES])
def test_a_request_table_lists_every_name_the_request_holds(path):
    sdk = load_sdk(path)
    api = api_for("POST", sdk["path"])
    content = sdk["body_text"].encode("utf-8")
    view, problem = bodies.read_request(content, FORMATS[api])
    assert problem is None and view is not None

    text = render_request_text(content, api, "portable")

    assert text.startswith(f"toolnames: {FORMATS[api].title} request\nName rule: portable")
    for tool in view.tools:
        assert tool.path in text
        assert f"{tool.name} " in row_of(text, tool.name)
    for choice in view.choices:
        assert (choice.sent or choice.mode) in text  # as sent: {"type": "any"}, not "required"
        for ref in choice.names:
            assert ref.path in text
    for ref in view.history:
        assert ref.path in text
    assert f"Tools offered: {len(view.tools)}" in text
    assert "Findings: none (checked now under portable)" in text


@pytest.mark.parametrize("path", RESPONSE_FIXTURES, ids=[p.name for p in RESPONSE_FIXTURES])
def test_a_response_table_lists_every_call_the_response_makes(path):
    api = response_api(path.name)
    content_type, content = response_body(path)
    found, problem = bodies.read_response_calls(FORMATS[api], content_type, content)
    assert problem is None

    text = render_response_text(content, content_type, api, "portable", b"{}")
    unread = render_response_text(content, content_type, api, "portable", None)

    assert text.startswith(f"toolnames: {FORMATS[api].title} response")
    assert f"Calls in this response: {len(found) or 'none'}\n" in text
    for call in found:
        assert call.path in text
        # A request that offers no tools: no call was offered.
        assert cells(row_of(text, render.shown_name(call.name)))[3].startswith("✗ ")
        # A request that was not read: what it offered is unknown, as the addon says.
        assert cells(row_of(unread, render.shown_name(call.name)))[3] == "not judged"
    assert "Findings: none (not checked: what the request offered could not be read)" in unread


def test_a_flagged_request_shows_each_names_verdict_under_the_rule():
    content = chat_body(
        tools=("get_weather", "web.search", "x" * 70, "get_weather"),
        tool_choice="web_search",
        history=("web.search",),
    )

    text = render_request_text(content, "openai-chat", "openai")

    assert "Name rule: openai (a-zA-Z0-9_-, max 64)\n" in text
    assert cells(row_of(text, "web.search"))[1:4] == ["10", "function", "✗ bad chars '.'"]
    assert "✗ too long (70 > 64)" in row_of(text, "x" * 47 + "…")
    # OpenAI is not documented to reject duplicates: a warning mark, not an error one.
    assert "! duplicate ×2" in row_of(text, "get_weather")
    assert "✗ not offered" in row_of(text, "named")
    assert "messages[1].tool_calls[0].function.name" in text
    assert "Findings: 4 errors, 1 warning (checked now under openai)" in text
    for code in ("name-invalid-chars", "name-too-long", "choice-not-in-tools", "name-duplicate"):
        assert code in text


@pytest.mark.parametrize(
    "rule, verdict",
    [
        ("openai", "ok"),
        ("portable", "✗ bad chars '-'; starts with '1'"),
        ("gemini", "✗ starts with '1'"),
        ("cohere", "✗ bad chars '-'; starts with '1'"),
    ],
)
def test_the_verdict_column_follows_the_rule_applied(rule, verdict):
    text = render_request_text(chat_body(tools=("1-tool",)), "openai-chat", rule)
    assert cells(row_of(text, "1-tool"))[3] == verdict


def test_recorded_findings_and_fixes_replace_a_fresh_check():
    # The body as sent after the fix: a fresh check would find nothing wrong.
    content = chat_body(tools=("search_web",), tool_choice="search_web")
    finding = Finding(
        "choice-not-in-tools", "error", "tool_choice.function.name", "'search.web' is not offered"
    )
    fix = Fix(("tool_choice", "function", "name"), "search.web", "search_web", "mastra")
    meta = record_metadata("openai-chat", "openai", "fix", "fixed", [finding], [fix])

    text = render_request_text(content, "openai-chat", "openai", meta)

    assert (
        "Outcome: fixed in fix mode: tool_choice.function.name 'search.web' → 'search_web' (mastra)"
        in text
    )
    assert "Findings: 1 error (recorded by toolnames for this flow)" in text
    assert "checked now" not in text
    assert row_of(text, "search.web").split() == [
        "search.web",
        "search_web",
        "mastra",
        "tool_choice.function.name",
    ]


def test_metadata_this_version_cannot_read_is_ignored():
    meta = {"findings": [{"code": 1}], "action": "flagged"}
    text = render_request_text(chat_body(tools=("a.b",)), "openai-chat", "openai", meta)
    assert "Outcome" not in text
    assert "Findings: 1 error (checked now under openai)" in text


def test_a_blocked_flows_answer_says_it_came_from_toolnames():
    finding = Finding("name-invalid-chars", "error", "tools[0].function.name", "bad")
    meta = record_metadata("openai-chat", "openai", "block", "blocked", [finding])
    answer = json.dumps({"error": {"message": "toolnames: bad"}}).encode()

    text = render_response_text(
        answer, "application/json", "openai-chat", "openai", chat_body(("a.b",)), meta, 400
    )

    assert "Outcome: blocked in block mode: toolnames answered with an error;" in text
    assert "This answer is toolnames' own: the request was blocked." in text
    assert "Calls in this response: none" in text


@pytest.mark.parametrize(
    "offered, called, verdict",
    [
        (("get_weather",), "get_weather", "offered"),
        (("get_weather",), "get_time", "✗ never offered"),
        (("get_weather",), "multi_tool_use.parallel", "✗ OpenAI's parallel wrapper, not a tool"),
    ],
)
def test_a_response_call_is_checked_against_what_the_request_offered(offered, called, verdict):
    text = render_response_text(
        chat_answer(called), "application/json", "openai-chat", "openai", chat_body(offered)
    )
    assert verdict in row_of(text, called)


@pytest.mark.parametrize(
    "status, source",
    [
        (400, "HTTP 400: read for the tool names and choice the provider rejected"),
        (500, "HTTP 500: calls are checked in successful responses only"),
    ],
)
def test_an_error_answer_is_not_checked_for_calls(status, source):
    text = render_response_text(
        b'{"error": {"message": "nope"}}',
        "application/json",
        "openai-chat",
        "openai",
        chat_body(tool_choice="get_weather"),
        status=status,
    )
    assert f"Findings: none ({source})" in text
    assert "The provider's verdict" not in text  # "nope" rejects no name


def test_a_rejection_shows_the_providers_verdict_and_its_words():
    # The text and param as OpenAI sends them (https://github.com/run-llama/llama_index/issues/16093).
    said = (
        "Invalid 'tools[0].function.name': string does not match pattern. "
        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
    )
    answer = json.dumps({"error": {"message": said, "param": "tools[0].function.name"}}).encode()
    text = render_response_text(
        answer, "application/json", "openai-chat", "openai", chat_body(["get weather"]), status=400
    )
    assert "The provider's verdict: HTTP 400, 1 rejection(s)" in text
    assert "✗ tools[0].function.name  'get weather' (11 chars)" in text
    assert "\"Invalid 'tools[0].function.name': string does not match pattern." in text
    assert "provider-rejected  at tools[0].function.name" in text


@pytest.mark.parametrize(
    "content, expected",
    [
        (b'{"model": "gpt-4.1", "messages": []}', "This request names no tools"),
        (b"not json", "request-unreadable"),
        (b'["tools"]', "request-unreadable"),
        (b'{"tools": 5}', "tool-malformed"),
        (b'{"tools": [{"type": "function", "function": {"name": 5}}]}', "tool-malformed"),
        (b'{"tools": [], "tool_choice": "required"}', "✗ no tools offered"),
    ],
)
def test_odd_requests_render_a_table_and_a_finding_instead_of_failing(content, expected):
    assert expected in render_request_text(content, "openai-chat", "openai")


@pytest.mark.parametrize(
    "name, shown",
    [
        ("get_weather", "get_weather"),
        ("", "''"),
        (" padded", "' padded'"),
        ("tab\there", "'tab\\there'"),
        ("search\u202eweb", "'search\\u202eweb'"),
        ("se\u0430rch", "'se\\u0430rch'"),
        ("n" * 60, "n" * 47 + "…"),
    ],
)
def test_a_name_is_shown_as_one_unambiguous_cell(name, shown):
    assert render.shown_name(name) == shown


# Keys of every format, so arbitrary bodies reach deep into the adapters.
KEYS = [
    "tools", "tool_choice", "type", "function", "name", "messages", "role", "tool_calls",
    "functions", "function_call", "input", "output", "content", "choices", "message",
    "toolConfig", "toolSpec", "toolChoice", "tool", "toolUse", "contents", "parts",
    "functionDeclarations", "functionCall", "functionCallingConfig", "allowedFunctionNames",
]  # fmt: skip
WORDS = ["function", "custom", "auto", "required", "any", "none", "tool", "assistant", "a.b"]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.sampled_from(WORDS),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(FORMATS)), json_values, json_values)
def test_any_json_renders_without_raising(api, request_body, response_body):
    request_content = json.dumps(request_body).encode()
    assert render_request_text(request_content, api, "openai").startswith("toolnames: ")
    answer = render_response_text(
        json.dumps(response_body).encode(), "application/json", api, "openai", request_content
    )
    assert answer.startswith("toolnames: ")


def test_an_unknown_rule_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown rule 'nope'"):
        render_request_text(chat_body(), "openai-chat", "nope")


def test_each_unusual_character_in_the_names_shown_is_named_by_its_code_point():
    body = {"tools": [{"type": "function", "function": {"name": "search\u202eweb"}}]}
    text = render_request_text(json.dumps(body).encode(), "openai-chat", "openai")
    assert "'search\\u202eweb'" in text and "search\u202eweb" not in text
    assert "  '\\u202e'  U+202E RIGHT-TO-LEFT OVERRIDE" in text


def test_the_view_says_a_request_is_signed_and_why_fix_mode_left_it_as_sent():
    content = json.dumps(
        {"toolConfig": {"tools": [{"toolSpec": {"name": "github.create_issue"}}]}}
    ).encode()
    signed = {
        "algorithm": "AWS4-HMAC-SHA256",
        "access_key_id": "AKIDTESTNOTAKEY",
        "date": "20261202",
        "region": "us-east-1",
        "service": "bedrock",
        "signed_headers": ["content-type", "host", "x-amz-date"],
        "presigned": False,
    }
    meta = {"api": "bedrock-converse", "rule": "bedrock", "mode": "fix", "action": "observed"}
    declined = {**meta, "findings": [], "signed": {**signed, "declined": "toolnames_resign is off"}}
    text = render_request_text(content, "bedrock-converse", "bedrock", declined)
    (line,) = [x for x in text.splitlines() if x.startswith("Signed: ")]
    assert line.startswith(
        "Signed: AWS SigV4 (access key AKIDTESTNOTAKEY, service bedrock, region us-east-1; "
        "signed headers content-type;host;x-amz-date); not fixed: toolnames_resign is off; "
        "what would work: --set toolnames_resign=true"
    )
    unsigned = render_request_text(content, "bedrock-converse", "bedrock", {**meta, "findings": []})
    assert "Signed: " not in unsigned


def test_the_outcome_says_what_fix_mode_did_a_rename_is_no_rewritten_choice():
    content = chat_body(tools=("a_b_12345678",))
    finding = Finding("name-invalid-chars", "error", "tools[0].function.name", "'a.b' has a dot")
    fix = Fix(("tools", 0, "function", "name"), "a.b", "a_b_12345678", "alias")
    meta = record_metadata("openai-chat", "openai", "fix", "fixed", [finding], [fix])
    text = render_request_text(content, "openai-chat", "openai", meta)
    assert "Outcome: fixed in fix mode: renamed 'a.b' → 'a_b_12345678'\n" in text
    assert "tool choice" not in text
