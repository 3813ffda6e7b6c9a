"""The provider's verdict against toolnames' prediction (verdicts.py), through an exchange: a
confirmed prediction, a missed rejection, a false alarm, and what is not a rule's matter."""

import json

from tests.testkit import sse
from toolnames_core import Exchange
from toolnames_core.formats import FORMATS
from toolnames_core.rules import RULES
from toolnames_core.streams import StreamTap

PATTERN = "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."


def rejection(index: int = 0) -> bytes:
    # OpenAI's answer to a bad name (https://github.com/run-llama/llama_index/issues/16093).
    path = f"tools[{index}].function.name"
    said = f"Invalid '{path}': string does not match pattern. {PATTERN}"
    return json.dumps({"error": {"message": said, "param": path, "code": "invalid_value"}}).encode()


def request(*names: str) -> bytes:
    tools = [{"type": "function", "function": {"name": n}} for n in names]
    return json.dumps({"messages": [], "tools": tools}).encode()


ACCEPTED = b'{"choices": [{"message": {"content": "hi"}}]}'


def exchange(*names: str, rule: str = "openai", fix: bool = False) -> Exchange:
    ex = Exchange(FORMATS["openai-chat"], RULES[rule], "api.example.com")
    ex.check_request(request(*names), fix=fix)
    return ex


def codes_of(findings) -> list[tuple[str, str]]:
    return [(f.code, f.path) for f in findings]


def test_a_confirmed_prediction_is_one_rejection_and_no_disagreement():
    ex = exchange("search.web")
    found = ex.check_response(400, "application/json", rejection())
    assert codes_of(found) == [("provider-rejected", "tools[0].function.name")]
    assert found[0].severity == "error"
    assert found[0].message.startswith(
        "the provider rejected tools[0].function.name 'search.web' (10 chars) (HTTP 400): "
        "\"Invalid 'tools[0].function.name': string does not match pattern."
    )
    assert found[0].message.endswith("; toolnames had predicted it (name-invalid-chars)")


def test_a_missed_rejection_says_the_rule_disagrees_and_which_rules_would_agree():
    ex = exchange("fs.read", rule="gemini")  # gemini's rule accepts the dot
    found = ex.check_response(400, "application/json", rejection())
    assert codes_of(found) == [
        ("provider-rejected", "tools[0].function.name"),
        ("rule-disagrees", "tools[0].function.name"),
    ]
    assert found[0].message.endswith("; toolnames had not predicted it")
    disagrees = found[1]
    assert (disagrees.severity, disagrees.rule) == ("warning", "gemini")
    assert disagrees.message.startswith(
        "rule gemini disagrees with api.example.com: the provider rejected "
        "tools[0].function.name 'fs.read' (7 chars), which rule gemini accepts; rules that reject it: "
        "openai, azure, anthropic, bedrock and 5 more; set toolnames_rule='api.example.com=openai'"
    )


def test_a_false_alarm_is_a_disagreement_on_an_accepted_request():
    ex = exchange("fs.read", "ok")
    found = ex.check_response(200, "application/json", ACCEPTED)
    assert codes_of(found) == [("rule-disagrees", "tools[0].function.name")]
    assert found[0].message == (
        "rule openai disagrees with api.example.com: tools[0].function.name 'fs.read' (7 chars) "
        "breaks rule openai (name-invalid-chars), but the provider accepted the request (HTTP 200); "
        "rules that accept it: gemini; set toolnames_rule='api.example.com=gemini' (or another of "
        "them) if this host keeps answering so, or report it"
    )
    assert [f.code for f in ex.findings] == ["name-invalid-chars", "rule-disagrees"]


def test_a_false_alarm_said_again_is_the_same_finding_and_says_only_its_own_answer():
    # A client resends its tools every request: the disagreement about each name is weighed
    # once (issue 25), and is the same finding each time; another status, host, place or
    # name is weighed on its own.
    def accepted(ex: Exchange, status: int = 200):
        return ex.check_response(status, "application/json", ACCEPTED)

    (first,) = accepted(exchange("fs.read", "ok"))
    (again,) = accepted(exchange("fs.read", "ok"))
    assert again is first
    (other_status,) = accepted(exchange("fs.read", "ok"), 201)
    assert "(HTTP 201)" in other_status.message and "(HTTP 200)" in first.message
    elsewhere = Exchange(FORMATS["openai-chat"], RULES["openai"], "other.example.com")
    elsewhere.check_request(request("fs.read", "ok"))
    (other_host,) = accepted(elsewhere)
    assert "disagrees with other.example.com" in other_host.message
    (moved,) = accepted(exchange("ok", "fs.read"))
    assert moved.path == "tools[1].function.name" and moved.message.count("tools[1]") == 1
    (renamed,) = accepted(exchange("fs.write", "ok"))
    assert "'fs.write'" in renamed.message and "'fs.read'" not in renamed.message


def test_a_name_no_known_rule_accepts_says_to_report_it():
    ex = exchange("a b")  # a space: every rule rejects it
    (found,) = ex.check_response(200, "application/json", ACCEPTED)
    assert found.message.endswith("; no rule toolnames knows accepts it: report it")


def test_a_request_fix_mode_changed_is_no_evidence_about_the_rule():
    ex = exchange("fs.read", fix=True)
    assert ex.new_body is not None
    assert ex.check_response(200, "application/json", ACCEPTED) == []
    ex = exchange("ok", fix=True)  # nothing to fix: the provider got the client's bytes
    found = ex.check_response(400, "application/json", rejection())
    assert [f.code for f in found] == ["provider-rejected", "rule-disagrees"]


def test_a_blocked_request_has_no_verdict_of_the_provider():
    ex = exchange("fs.read")
    ex.block_response()
    assert ex.check_response(400, "application/json", rejection()) == []
    assert ex.rejections == []


def test_a_choice_rejection_is_not_a_rules_matter():
    # vLLM's text (https://github.com/vllm-project/vllm/pull/19239): no rule judged the choice.
    said = "Invalid value for `function`: `do-something` in `tool_choice`!"
    ex = Exchange(FORMATS["openai-chat"], RULES["openai"], "localhost:8000")
    body = {"messages": [], "tools": [{"type": "function", "function": {"name": "do_something"}}]}
    body["tool_choice"] = {"type": "function", "function": {"name": "do-something"}}
    ex.check_request(json.dumps(body).encode())
    found = ex.check_response(400, "application/json", json.dumps({"message": said}).encode())
    assert codes_of(found) == [("provider-rejected", "tool_choice.function.name")]
    assert found[0].message.endswith("toolnames had predicted it (choice-not-in-tools)")


def test_an_untied_rejection_quotes_the_provider_and_guesses_nothing():
    # Groq's check of the model's calls (https://github.com/mastra-ai/mastra/issues/9688).
    said = "Tool call validation failed: tool call validation failed: attempted to call tool 'listFiles' which was not in request.tools"
    ex = exchange("list_files")
    (found,) = ex.check_response(
        400, "application/json", json.dumps({"error": {"message": said}}).encode()
    )
    assert (found.code, found.path) == ("provider-rejected", "")
    assert found.message == (
        "the provider rejected a tool name or the tool choice (HTTP 400) at a place toolnames "
        f'cannot tie to a name in the request: "{said}"; toolnames had predicted no error in this request'
    )


def test_a_rejection_of_a_request_toolnames_did_not_read_claims_no_prediction():
    ex = Exchange(FORMATS["openai-chat"], RULES["openai"], "api.example.com")
    ex.check_request(b"", problem="the body is 9000 bytes, over toolnames_max_body")
    (found,) = ex.check_response(400, "application/json", rejection())
    assert (found.code, found.path) == ("provider-rejected", "tools[0].function.name")
    assert found.message.endswith(
        "; toolnames did not read this request (request-unreadable), so it predicted nothing"
    )
    assert [f.code for f in ex.findings] == ["request-unreadable", "provider-rejected"]


def test_duplicates_the_rule_only_warns_about_are_a_missed_rejection():
    # DeepSeek's text (https://github.com/router-for-me/CLIProxyAPI/issues/4788) on a host whose
    # rule (openai) only warns about duplicates.
    said = {"error": {"message": "Tool names must be unique.", "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}}  # fmt: skip
    ex = exchange("read", "read")
    found = ex.check_response(400, "application/json", json.dumps(said).encode())
    assert codes_of(found) == [
        ("provider-rejected", "tools[1].function.name"),
        ("rule-disagrees", "tools[1].function.name"),
    ]
    assert found[0].message.endswith("toolnames had only warned (name-duplicate)")


def test_a_stream_is_accepted_once_its_first_event_arrived():
    ex = exchange("fs.read")
    tap = StreamTap(FORMATS["openai-chat"])
    tap(sse([{"choices": [{"delta": {"content": "hi"}}]}], done=False))
    found = ex.check_stream(200, tap, complete=False)  # it broke off after that event
    assert [f.code for f in found] == ["rule-disagrees"]


def test_a_stream_that_broke_off_before_any_event_proves_nothing():
    ex = exchange("fs.read")
    tap = StreamTap(FORMATS["openai-chat"])
    tap(b"da")  # not one whole event
    assert ex.check_stream(200, tap, complete=False) == []


def test_the_providers_words_are_shown_with_a_raw_bidi_character_escaped():
    name = "search\u202eweb"
    body = {"tools": [{"type": "function", "function": {"name": name}}]}
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(json.dumps(body).encode())
    answer = {
        "error": {
            "message": f"Invalid 'tools[0].function.name': '{name}' does not match pattern.",
            "type": "invalid_request_error",
            "param": "tools[0].function.name",
            "code": "invalid_value",
        }
    }
    exchange.check_response(400, "application/json", json.dumps(answer).encode())
    (rejected,) = [f for f in exchange.findings if f.code == "provider-rejected"]
    assert "\u202e" not in rejected.message
    assert "'search\\u202eweb' does not match pattern" in rejected.message


def test_a_rejected_alias_is_the_providers_verdict_on_the_rule_not_a_confirmation():
    ex = exchange("fs.read", fix=True)
    alias = ex.fixes[0].new
    found = ex.check_response(400, "application/json", rejection())
    assert codes_of(found) == [
        ("provider-rejected", "tools[0].function.name"),
        ("rule-disagrees", "tools[0].function.name"),
    ]
    rejected, disagrees = found
    assert f"'{alias}' ({len(alias)} chars), toolnames' alias for 'fs.read' (HTTP 400)" in (
        rejected.message
    )
    assert rejected.message.endswith("; fix mode's name did not work, and the request failed")
    assert "predicted" not in rejected.message
    assert disagrees.rule == "openai" and "toolnames' alias for 'fs.read'" in disagrees.message


def test_a_rejected_choice_fix_is_no_verdict_on_the_rule():
    body = {"messages": [], "tools": [{"type": "function", "function": {"name": "search_web"}}]}
    body["tool_choice"] = {"type": "function", "function": {"name": "search.web"}}
    ex = Exchange(FORMATS["openai-chat"], RULES["openai"], "api.example.com")
    ex.check_request(json.dumps(body).encode(), fix=True)
    path = "tool_choice.function.name"
    said = json.dumps({"error": {"message": f"Invalid '{path}': no such tool", "param": path}})
    (found,) = ex.check_response(400, "application/json", said.encode())
    assert (found.code, found.path) == ("provider-rejected", path)
    assert "what toolnames sent for 'search.web' (mastra+openai-agents)" in found.message
