"""Ollama's native chat API (formats/ollama.py, docs/providers.md §11): its path, its rule (no
name limits, so no name error is ever predicted, only what does go wrong), the choice
Ollama ignores, the history, the block answer, the calls in its answers and NDJSON streams,
the stream's error line as Ollama's verdict, and fix mode (nothing renamed under Ollama's
rule, and why; both ways under a rule the user names)."""

import json

import pytest

from tests.testkit import every_split
from tests.testkit import ndjson
from toolnames_core import Exchange
from toolnames_core import codes
from toolnames_core.endpoints import parse_rule_override
from toolnames_core.formats import format_for
from toolnames_core.formats.ollama import FORMAT
from toolnames_core.formats.ollama import read_calls
from toolnames_core.formats.ollama import read_request
from toolnames_core.framings import NDJSON
from toolnames_core.rules import RULES


def tool(name) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def body(*names, **extra) -> dict:
    return {
        "model": "qwen3:8b",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [tool(n) for n in names],
        **extra,
    }


def checked(content: dict, fix: bool = False, host: str = "127.0.0.1", overrides=()) -> Exchange:
    exchange = Exchange.for_request("POST", "/api/chat", host, 11434, overrides)
    exchange.check_request(json.dumps(content).encode(), fix=fix)
    return exchange


def codes_of(exchange: Exchange) -> list[tuple[str, str, str]]:
    return sorted((f.code, f.severity, f.path) for f in exchange.findings)


@pytest.mark.parametrize("path", ["/api/chat", "/api/chat/", "/ollama/api/chat"])
def test_its_paths_are_its_own(path):
    assert format_for("POST", path) is FORMAT


def test_generate_takes_no_tools_and_is_not_read():
    assert format_for("POST", "/api/generate") is None


@pytest.mark.parametrize("host", ["127.0.0.1", "gpu-box.lan", "api.openai.com"])
def test_its_names_get_ollamas_rule_whatever_the_host(host):
    exchange = Exchange.for_request("POST", "/api/chat", host)
    assert exchange.rule is RULES["ollama"]
    assert not exchange.rule.enforced and not exchange.rule.honours_choice


@pytest.mark.parametrize(
    "name", ["github.create_issue", "x" * 300, "with space/and:colon", "émoji🙂", "1st"]
)
def test_no_name_is_an_error_under_ollamas_rule(name):
    exchange = checked(body(name, "lookup"))
    assert exchange.findings == []
    assert exchange.errors == []


def test_an_empty_or_missing_name_and_a_duplicate_are_warnings():
    content = body("", "a", "a")
    content["tools"].append({"type": "function", "function": {"parameters": {}}})
    content["tools"].append(None)
    exchange = checked(content)
    assert codes_of(exchange) == [
        (codes.NAME_DUPLICATE, "warning", "tools[2].function.name"),
        (codes.NAME_EMPTY, "warning", "tools[0].function.name"),
        (codes.NAME_EMPTY, "warning", "tools[3].function.name"),
        (codes.NAME_EMPTY, "warning", "tools[4].function.name"),
    ]
    said = {f.path: f.message for f in exchange.findings}
    assert "lets it pass, but no model can call it" in said["tools[0].function.name"]
    assert "is missing; Ollama takes it as the empty name" in said["tools[3].function.name"]
    # The provider accepting it is no disagreement: its rule predicted no error.
    assert exchange.check_response(200, "application/json", b'{"done": true}') == []


@pytest.mark.parametrize(
    "content, path",
    [
        (body(tools="lookup"), "tools"),
        (body(tools=["lookup"]), "tools[0]"),
        (body(tools=[{"function": "lookup"}]), "tools[0].function"),
        (body(tools=[{"function": {"name": 7}}]), "tools[0].function.name"),
        (body(messages=[{"role": "assistant", "tool_calls": {}}]), "messages[0].tool_calls"),
    ],
)
def test_what_gos_decoder_refuses_is_malformed(content, path):
    exchange = checked(content)
    assert codes_of(exchange) == [(codes.TOOL_MALFORMED, "error", path)]


def test_a_tool_choice_on_api_chat_is_dropped_by_ollama_and_said():
    exchange = checked(body("lookup", tool_choice={"type": "function", "function": {"name": "x"}}))
    assert codes_of(exchange) == [(codes.CHOICE_IGNORED, "warning", "tool_choice")]
    assert "/api/chat" in exchange.findings[0].message


def test_the_history_holds_the_calls_and_the_results_tool_name():
    content = body("get.weather")
    content["messages"] += [
        {
            "role": "assistant",
            "tool_calls": [{"function": {"name": "get.weather", "arguments": {}}}, {}],
        },
        {"role": "tool", "tool_name": "get.weather", "content": "18"},
    ]
    view = read_request(content)
    assert [(r.name, r.path) for r in view.history] == [
        ("get.weather", "messages[1].tool_calls[0].function.name"),
        ("get.weather", "messages[2].tool_name"),
    ]
    assert view.streaming  # Ollama's default
    assert not read_request({**content, "stream": False}).streaming


def test_block_answers_in_ollamas_error_shape():
    exchange = checked(body(tools=[{"function": {"name": 7}}]))
    status, headers, raw = exchange.block_response()
    assert status == 400
    assert headers["content-type"].startswith("application/json")
    error = json.loads(raw)
    assert list(error) == ["error"]
    assert error["error"].startswith("toolnames: tools[0].function.name is a number")


ANSWER = {
    "model": "qwen3:8b",
    "message": {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"function": {"index": 0, "name": "lookup", "arguments": {}}},
            {"function": {"index": 1, "name": "drop_tables", "arguments": {}}},
        ],
    },
    "done": True,
}


def test_a_whole_answers_calls_are_read_and_an_unoffered_one_named():
    assert [(c.name, c.path) for c in read_calls(ANSWER)] == [
        ("lookup", "message.tool_calls[0].function.name"),
        ("drop_tables", "message.tool_calls[1].function.name"),
    ]
    exchange = checked(body("lookup", stream=False))
    found = exchange.check_response(200, "application/json", json.dumps(ANSWER).encode())
    assert [(f.code, f.path) for f in found] == [
        (codes.RESPONSE_UNKNOWN_TOOL, "message.tool_calls[1].function.name")
    ]


def stream_of(answer: dict) -> bytes:
    text = {**answer, "message": {"role": "assistant", "content": "Un moment"}, "done": False}
    calls = {**answer, "done": False}
    done = {**answer, "message": {"role": "assistant", "content": ""}, "done": True}
    return ndjson([text, calls, done])


def test_a_streams_calls_are_read_at_every_split():
    raw = stream_of(ANSWER)
    for chunks in every_split(raw):
        exchange = checked(body("lookup"))
        tap = exchange.stream_tap("")
        assert b"".join(tap(c) for c in chunks) + tap(b"") == raw  # observe: unchanged
        found = exchange.check_stream(200, tap, True)
        assert [(f.code, f.path) for f in found] == [
            (codes.RESPONSE_UNKNOWN_TOOL, "events[1].message.tool_calls[1].function.name")
        ]


def test_a_line_that_is_not_json_is_response_unreadable_not_an_exception():
    raw = stream_of(ANSWER).replace(b'"done": true', b'"done": tru', 1)
    exchange = checked(body("lookup", "drop_tables"))
    tap = exchange.stream_tap("")
    tap(raw[:30])
    tap(raw[30:])
    tap(b"")
    found = exchange.check_stream(200, tap, True)
    assert [(f.code, f.severity) for f in found] == [(codes.RESPONSE_UNREADABLE, "warning")]
    assert "NDJSON" in found[0].message


def test_an_error_line_mid_stream_is_ollamas_verdict_not_an_accepted_request():
    # Under a rule that rejects the dot, a 200 stream would be read as the provider
    # accepting the name (rule-disagrees); Ollama's error line says the request failed.
    override = (parse_rule_override("127.0.0.1=openai"),)
    exchange = checked(body("get.weather"), overrides=override)
    assert exchange.rule.id == "openai"
    text = {"model": "m", "message": {"role": "assistant", "content": "x"}, "done": False}
    raw = ndjson([text, {"error": "an error was encountered while running the model"}])
    tap = exchange.stream_tap("")
    tap(raw)
    tap(b"")
    found = exchange.check_stream(200, tap, True)
    assert codes.RULE_DISAGREES not in {f.code for f in found}
    # An error that names no tool ties to nothing: no provider-rejected invented either.
    assert codes.PROVIDER_REJECTED not in {f.code for f in found}

    accepted = checked(body("get.weather"), overrides=override)
    tap = accepted.stream_tap("")
    tap(ndjson([text]))
    tap(b"")
    assert codes.RULE_DISAGREES in {f.code for f in accepted.check_stream(200, tap, True)}


def test_fix_mode_renames_nothing_under_ollamas_rule_and_says_why():
    exchange = checked(body("github.create_issue", "", "a", "a"), fix=True)
    assert exchange.new_body is None and exchange.fixes == [] and exchange.restorer is None
    said = {f.path: f.message for f in exchange.findings}
    for path in ("tools[1].function.name", "tools[3].function.name"):
        assert "not fixed: " in said[path]
        assert "rule ollama limits no names" in said[path]
    assert {s.path for s in exchange.fix_skipped} == {
        "tools[1].function.name",
        "tools[3].function.name",
    }


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_fix_mode_renames_both_ways_under_a_rule_the_user_names(streamed):
    override = (parse_rule_override("*=portable"),)
    content = body("github.create_issue", "lookup", stream=streamed)
    content["messages"] += [
        {"role": "assistant", "tool_calls": [{"function": {"name": "github.create_issue"}}]},
        {"role": "tool", "tool_name": "github.create_issue", "content": "ok"},
    ]
    exchange = checked(content, fix=True, overrides=override)
    assert exchange.rule.id == "portable"
    sent = json.loads(exchange.new_body)
    alias = sent["tools"][0]["function"]["name"]
    assert alias != "github.create_issue" and "." not in alias
    assert sent["messages"][1]["tool_calls"][0]["function"]["name"] == alias
    assert sent["messages"][2]["tool_name"] == alias
    assert sent["tools"][1] == tool("lookup")

    answer = json.loads(json.dumps(ANSWER).replace('"drop_tables"', json.dumps(alias)))
    if not streamed:
        back = json.loads(exchange.restore(json.dumps(answer).encode()))
        assert back["message"]["tool_calls"][1]["function"]["name"] == "github.create_issue"
        return
    raw = stream_of(answer)
    expected = raw.replace(alias.encode(), b"github.create_issue")
    for chunks in every_split(raw):
        fixed = checked(content, fix=True, overrides=override)
        tap = fixed.stream_tap("")
        out = b"".join(tap(c) for c in chunks) + tap(b"")
        assert out == expected
        assert fixed.check_stream(200, tap, True) == []  # both calls are of offered tools


def test_the_format_streams_as_ndjson():
    assert FORMAT.framing is NDJSON
