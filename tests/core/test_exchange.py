"""The exchange: each body is parsed, or scanned, once per exchange, only a body that can hold
tool names or calls is parsed at all, and an answer is judged once, against its request."""

import json

import pytest

from tests.testkit import exchange_for
from tests.testkit import judge
from toolnames_core import Exchange
from toolnames_core import bodies
from toolnames_core import inspect_exchange
from toolnames_core.formats import FORMATS
from toolnames_core.rules import RULES

MASTRA_BODY = json.dumps(
    {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "search_web"}}],
        "tool_choice": {"type": "function", "function": {"name": "search.web"}},
    }
).encode()
TOOLS_BODY = json.dumps(
    {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "search_web"}}],
        "tool_choice": {"type": "function", "function": {"name": "search_web"}},
    }
).encode()
# Large enough for the verdict to be remembered rather than found again by a second scan.
PROSE_BODY = json.dumps({"messages": [{"role": "user", "content": "word " * 10_000}]}).encode()


def fresh(body: bytes) -> bytes:
    """Equal bytes in a new object (bytes(b) is b itself), so counts go by this body alone."""
    return bytes(bytearray(body))


CALL_ANSWER = json.dumps(
    {"choices": [{"message": {"tool_calls": [{"function": {"name": "search_web"}}]}}]}
).encode()
NO_CALLS_ANSWER = json.dumps({"choices": [{"message": {"content": "hi"}}]}).encode()


def test_a_body_with_tools_is_parsed_once_for_its_request_and_its_response(counted):
    body = fresh(TOOLS_BODY)
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    assert not bodies.nothing_to_check(body)
    exchange.check_request(body, scanned=True)
    findings = exchange.check_response(200, "application/json", NO_CALLS_ANSWER)
    assert [f.code for f in findings] == ["response-ignored-choice"]
    assert counted["loads"].count(body) == 1
    assert counted["scans"].count(body) == 1


def test_a_large_body_without_tools_is_scanned_once_and_never_parsed(counted):
    body = fresh(PROSE_BODY)
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(body)
    assert exchange.check_response(200, "application/json", NO_CALLS_ANSWER) == []
    assert counted["scans"].count(body) == 1
    assert counted["loads"].count(body) == 0


def test_a_body_fix_mode_rewrote_is_never_read_again(counted):
    body = fresh(MASTRA_BODY)
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(body, fix=True)
    assert exchange.new_body is not None
    # Judged against the request as the provider was sent it: the fixed choice is obeyed.
    assert exchange.check_response(200, "application/json", CALL_ANSWER) == []
    assert counted["loads"].count(body) == 1
    assert counted["loads"].count(exchange.new_body) == 0


def test_an_answer_is_judged_once():
    exchange = exchange_for(TOOLS_BODY, "openai-chat", "openai")
    assert exchange.check_response(200, "application/json", NO_CALLS_ANSWER)
    assert exchange.check_response(200, "application/json", NO_CALLS_ANSWER) == []
    assert [f.code for f in exchange.findings] == ["response-ignored-choice"]


@pytest.mark.parametrize("status", [None, 400, 429, 500])
def test_an_answer_that_is_not_a_success_is_not_judged(status):
    exchange = exchange_for(TOOLS_BODY, "openai-chat", "openai")
    assert exchange.check_response(status, "application/json", NO_CALLS_ANSWER) == []


def test_the_answer_to_a_blocked_request_is_toolnames_own_and_not_judged():
    body = TOOLS_BODY.replace(
        b'"function": {"name": "search_web"}}}', b'"function": {"name": "x"}}}'
    )
    exchange = exchange_for(body, "openai-chat", "openai")
    status, headers, answer = exchange.block_response()
    assert status == 400 and exchange.blocked
    assert exchange.check_response(status, headers["content-type"], answer) == []


@pytest.mark.parametrize("request_content", [None, b"", b'{"tools": [ broken', b"[1, 2]"])
def test_calls_answering_a_request_that_could_not_be_read_are_not_judged(request_content):
    # What the request offered is unknown: no call can be said to be unoffered.
    calls, _ = bodies.read_response_calls(FORMATS["openai-chat"], "application/json", CALL_ANSWER)
    assert judge(request_content, "openai-chat", calls, complete=True) == []


def test_calls_answering_a_request_without_tools_are_unoffered():
    calls, _ = bodies.read_response_calls(FORMATS["openai-chat"], "application/json", CALL_ANSWER)
    request = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()
    findings = judge(request, "openai-chat", calls, complete=True)
    assert [f.code for f in findings] == ["response-unknown-tool"]


@pytest.mark.parametrize("problem", [None, "its content-encoding could not be decoded"])
def test_a_recording_whose_request_was_not_read_has_its_answer_left_unjudged(problem):
    report = inspect_exchange(
        "POST",
        "api.openai.com",
        "/v1/chat/completions",
        None if problem is None else b"\x1f\x8b not really gzip",
        200,
        "application/json",
        CALL_ANSWER,
        request_problem=problem,
    )
    assert [f.code for f in report.findings] == ["request-unreadable"]


@pytest.mark.parametrize("status", [200, 201])
def test_an_answer_whose_body_is_not_at_hand_is_said_to_be_unchecked(status):
    exchange = exchange_for(TOOLS_BODY, "openai-chat", "openai")
    found = exchange.response_unread(status, "streamed through")
    assert [(f.code, f.severity) for f in found] == [("response-unreadable", "warning")]
    assert found[0].message == "the tool calls in the answer were not checked: streamed through"
    assert exchange.response_unread(status, "again") == []  # the answer is judged once


@pytest.mark.parametrize(
    "body, status",
    [(PROSE_BODY, 200), (TOOLS_BODY, 400), (TOOLS_BODY, None)],
    ids=["no-tools-offered", "an-error-answer", "no-answer"],
)
def test_a_missing_body_that_could_hold_no_calls_is_no_finding(body, status):
    assert exchange_for(body, "openai-chat", "openai").response_unread(status, "gone") == []


def test_a_recording_without_the_answers_body_is_not_a_clean_answer():
    exchange = inspect_exchange(
        "POST", "api.openai.com", "/v1/chat/completions", TOOLS_BODY, 200, "text/event-stream"
    )
    (finding,) = exchange.response_findings
    assert finding.code == "response-unreadable"
    assert "store_streamed_bodies" in finding.message


def _renamed(fix: bool) -> Exchange:
    body = {"messages": [], "tools": [{"type": "function", "function": {"name": "github.x"}}]}
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(json.dumps(body).encode(), fix=fix)
    return exchange


@pytest.mark.parametrize("accepted", ["gzip, deflate, br, zstd", "br", "", " IDENTITY "])
def test_an_answer_whose_names_come_back_is_asked_for_uncompressed(accepted):
    exchange = _renamed(fix=True)
    assert exchange.restorer is not None
    wanted = None if accepted.strip().lower() == "identity" else "identity"
    assert exchange.answer_encoding(accepted) == wanted
    assert exchange.accept_encoding_sent == (None if wanted is None else accepted)


@pytest.mark.parametrize("content_length", ["531", None])
@pytest.mark.parametrize("fix", [True, False])
def test_a_sized_stream_loses_its_length_only_when_names_may_come_back(fix, content_length):
    exchange = _renamed(fix=fix)
    tap = exchange.stream_tap()
    drops = fix and content_length is not None
    assert exchange.drops_length(tap, content_length) is drops
    assert exchange.length_dropped == (content_length if drops else None)


def test_an_answer_with_no_names_to_give_back_keeps_its_encoding():
    exchange = _renamed(fix=False)  # observed: nothing renamed, nothing to restore
    assert exchange.answer_encoding("gzip") is None
    assert exchange.accept_encoding_sent is None


def test_a_recorded_answer_that_does_not_decode_is_unchecked_not_clean():
    exchange = inspect_exchange(
        "POST",
        "api.openai.com",
        "/v1/chat/completions",
        TOOLS_BODY,
        200,
        "application/json",
        b"\x1f\x8b not gzip",
        response_problem="its content-encoding could not be decoded (Invalid gzip)",
    )
    (finding,) = exchange.response_findings
    assert (finding.code, finding.severity) == ("response-unreadable", "warning")
    assert finding.message.endswith(": its content-encoding could not be decoded (Invalid gzip)")


@pytest.mark.parametrize(
    "read",
    [
        lambda ex: ex.response_unread(200, "its content-encoding could not be decoded"),
        lambda ex: ex.check_response(200, "application/json", b'{"choices": [{"message": {"t'),
    ],
    ids=["undecodable", "cut-short"],
)
def test_fix_mode_says_which_names_an_unreadable_answer_could_not_give_back(read):
    exchange = _renamed(fix=True)
    alias = next(iter(exchange.restorer.aliases))
    assert [f.code for f in read(exchange)] == ["response-unreadable"]
    (skipped,) = exchange.fix_skipped
    assert skipped.name == "github.x"
    assert skipped.reason == (
        "was not given back in the answer, which toolnames could not read: a call to it "
        f"reached the app as '{alias}'"
    )
    assert exchange.restore(b'{"name": "%s"}' % alias.encode()) is None  # left as it came


def test_fix_mode_says_it_left_the_names_of_a_responses_namespace_as_sent():
    from toolnames_core import FORMATS
    from toolnames_core.rules import RULES

    inner = [{"type": "function", "name": "create.issue"}]
    body = {"input": "x", "tools": [{"type": "namespace", "name": "gh.tools", "tools": inner}]}
    exchange = Exchange(FORMATS["openai-responses"], RULES["openai"])
    exchange.check_request(json.dumps(body).encode(), fix=True)
    assert exchange.new_body is None and exchange.fixes == []
    assert [(s.path, s.name) for s in exchange.fix_skipped] == [
        ("tools[0].name", "gh.tools"),
        ("tools[0].tools[0].name", "create.issue"),
    ]
    for finding in exchange.request_findings:
        assert "; not fixed: " in finding.message
        assert "does not rename names in a Responses namespace" in finding.message


@pytest.mark.parametrize("names", [["namespace:x.y", "a.b"], ["a.b", "namespace:x.y"]])
def test_a_tool_named_like_a_namespace_is_said_to_be_left_wherever_it_sits(names):
    # _namespaced_left returns early when no tool can be in a namespace: a name that starts
    # with "namespace:", first or last, must still be seen (as it was before the shortcut).
    tools = [{"type": "function", "function": {"name": n}} for n in names]
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(json.dumps({"messages": [], "tools": tools}).encode(), fix=True)
    path = f"tools[{names.index('namespace:x.y')}].function.name"
    assert [(s.path, s.name) for s in exchange.fix_skipped] == [(path, "x.y")]
