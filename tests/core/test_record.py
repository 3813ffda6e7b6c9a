"""The record of a flow (record.py): made from an exchange, kept as metadata, read back once."""

import dataclasses
import json
import operator

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.testkit import exchange_for
from toolnames_core import FlowRecord
from toolnames_core.model import Finding
from toolnames_core.model import Fix
from toolnames_core.record import RecordedFix
from toolnames_core.record import RecordedRejection

MASTRA = (
    b'{"tools": [{"type": "function", "function": {"name": "search_web"}}],'
    b' "tool_choice": {"type": "function", "function": {"name": "search.web"}}}'
)


def test_a_fixed_exchange_is_recorded_with_what_the_client_sent_and_what_went_on():
    recorded = FlowRecord.of(exchange_for(MASTRA, "openai-chat", "openai", fix=True), "fix")
    assert (recorded.action, recorded.outcome) == ("fixed", "fixed")
    assert recorded.fixes == [
        RecordedFix("tool_choice.function.name", "search.web", "search_web", "mastra+openai-agents")
    ]
    assert recorded.comment() == (
        "toolnames fixed tool_choice.function.name 'search.web' → 'search_web' (mastra+openai-agents)"
    )


def test_a_blocked_exchange_is_recorded_as_blocked():
    exchange = exchange_for(MASTRA, "openai-chat", "openai")
    exchange.block_response()
    recorded = FlowRecord.of(exchange, "block")
    assert recorded.outcome == "blocked"
    assert recorded.comment().startswith("toolnames blocked: choice-not-in-tools: ")


def test_the_record_survives_metadata_unchanged():
    recorded = FlowRecord.of(exchange_for(MASTRA, "openai-chat", "openai", fix=True), "fix")
    recorded.saved = True
    assert FlowRecord.from_metadata(recorded.to_metadata()) == recorded
    recorded.length_dropped = "531"
    assert FlowRecord.from_metadata(recorded.to_metadata()) == recorded
    assert "without its Content-Length" in recorded.fixes_text()


@pytest.mark.parametrize(
    "meta",
    [
        None,
        "text",
        {},
        {"api": "openai-chat", "rule": "openai", "mode": "observe", "action": "observed", "findings": [{"code": 1}]},
        {"api": "openai-chat", "rule": "openai", "mode": "fix", "action": "fixed", "findings": []},
        {"api": "openai-chat", "rule": "openai", "mode": "observe", "action": "exploded", "findings": []},
    ],
)  # fmt: skip
def test_metadata_this_version_cannot_read_is_no_record(meta):
    assert FlowRecord.from_metadata(meta) is None


def test_the_comment_is_one_line_and_storable_whatever_the_names_hold():
    finding = Finding("name-invalid-chars", "error", "tools[0]", "'a\nb\t\ud800' is bad")
    comment = FlowRecord("openai-chat", "openai", "observe", "observed", [finding]).comment()
    assert "\n" not in comment and "\t" not in comment
    comment.encode("utf-8")  # a lone surrogate would make the flow impossible to save


def test_only_warnings_errors_and_fixes_flag_a_flow():
    info = Finding("x", "info", "", "note")
    assert FlowRecord("openai-chat", "openai", "observe", "observed", [info]).outcome is None
    warning = Finding("x", "warning", "", "note")
    assert (
        FlowRecord("openai-chat", "openai", "observe", "observed", [warning]).outcome == "flagged"
    )


# Anthropic's answer to a name over its pattern (https://github.com/home-assistant/core/issues/147760).
ANTHROPIC_REJECTION = (
    b'{"type": "error", "error": {"type": "invalid_request_error", "message": '
    b"\"tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'\"}}"
)


def test_what_the_provider_rejected_is_recorded_and_read_back():
    exchange = exchange_for(b'{"tools": [{"name": "a.b"}]}', "anthropic-messages", "anthropic")
    exchange.check_response(400, "application/json", ANTHROPIC_REJECTION)
    recorded = FlowRecord.of(exchange, "observe")
    (rejection,) = recorded.rejections
    assert rejection == RecordedRejection(
        "tools[0].name",
        "a.b",
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        True,
    )
    meta = recorded.to_metadata()
    assert meta["rejected"] == [
        {"path": "tools[0].name", "name": "a.b", "text": rejection.text, "tied": True}
    ]
    assert FlowRecord.from_metadata(meta) == recorded


@pytest.mark.parametrize(
    "rejected",
    [
        "not a list",
        [{"path": "tools[0].name", "name": 3, "text": "t", "tied": True}],
        [{"path": "tools[0].name", "name": None, "text": "t", "tied": "yes"}],
        [{"path": None, "name": None, "text": "t", "tied": False}],
    ],
)
def test_a_rejection_this_version_cannot_read_makes_no_record(rejected):
    meta = FlowRecord.of(exchange_for(MASTRA, "openai-chat", "openai"), "observe").to_metadata()
    assert FlowRecord.from_metadata(meta) is not None
    assert FlowRecord.from_metadata({**meta, "rejected": rejected}) is None


def test_a_rejection_that_confirms_the_prediction_is_said_once_in_the_comment():
    exchange = exchange_for(b'{"tools": [{"name": "a.b"}]}', "anthropic-messages", "anthropic")
    exchange.check_response(400, "application/json", ANTHROPIC_REJECTION)
    comment = FlowRecord.of(exchange, "observe").comment()
    assert comment.startswith("toolnames error: name-invalid-chars: tools[0].name 'a.b'")
    assert comment.endswith("; the provider rejected it too")
    assert "more)" not in comment


def test_a_rejection_toolnames_did_not_predict_counts_as_more():
    # The rule for this host accepts the name: the provider's rejection is news.
    exchange = exchange_for(b'{"tools": [{"name": "ab"}]}', "anthropic-messages", "anthropic")
    exchange.check_response(400, "application/json", ANTHROPIC_REJECTION)
    comment = FlowRecord.of(exchange, "observe").comment()
    assert comment.startswith("toolnames error: provider-rejected: ")
    assert comment.endswith(" (+1 more)")  # the rule-disagrees warning
    assert "the provider rejected it too" not in comment


def _chat(*names: str, choice: str | None = None) -> bytes:
    tools = [{"type": "function", "function": {"name": n}} for n in names]
    body = {"messages": [], "tools": tools}
    if choice:
        body["tool_choice"] = {"type": "function", "function": {"name": choice}}
    return json.dumps(body).encode()


def _openai_rejection(path: str, said: str) -> bytes:
    return json.dumps({"error": {"message": f"Invalid '{path}': {said}", "param": path}}).encode()


def test_a_fix_the_provider_still_rejected_leads_with_the_rejection_not_the_fix():
    exchange = exchange_for(_chat("a.b"), "openai-chat", "openai", fix=True)
    rejection = _openai_rejection("tools[0].function.name", "string too long.")
    exchange.check_response(400, "application/json", rejection)
    recorded = FlowRecord.of(exchange, "fix")
    assert (recorded.action, recorded.outcome) == ("fixed", "flagged")
    comment = recorded.comment()
    alias = exchange.fixes[0].new
    assert comment.startswith(
        f"toolnames error: provider-rejected: the provider rejected tools[0].function.name "
        f"'{alias}' ({len(alias)} chars), toolnames' alias for 'a.b' (HTTP 400): "
    )
    assert comment.endswith(f" (+1 more); toolnames fixed renamed 'a.b' → '{alias}'")


def test_a_call_to_a_tool_never_offered_outranks_the_fix():
    exchange = exchange_for(_chat("a.b"), "openai-chat", "openai", fix=True)
    answer = b'{"choices": [{"message": {"tool_calls": [{"function": {"name": "nope"}}]}}]}'
    exchange.check_response(200, "application/json", answer)
    comment = FlowRecord.of(exchange, "fix").comment()
    assert comment.startswith("toolnames error: response-unknown-tool: ")
    assert "; toolnames fixed renamed 'a.b' → " in comment


def test_a_choice_fix_mode_left_as_sent_still_stands_beside_a_rename():
    # The choice matches no offered tool under any known rewrite: the provider will reject it.
    exchange = exchange_for(_chat("a.b", choice="zzz"), "openai-chat", "openai", fix=True)
    recorded = FlowRecord.of(exchange, "fix")
    assert recorded.outcome == "flagged"
    assert recorded.comment().startswith("toolnames error: choice-not-in-tools: ")


def test_a_fix_with_only_warnings_left_leads_with_the_fix():
    exchange = exchange_for(_chat("a.b"), "openai-chat", "openai", fix=True)
    exchange.response_unread(200, "streamed through")
    recorded = FlowRecord.of(exchange, "fix")
    assert recorded.outcome == "fixed"
    assert recorded.comment().startswith("toolnames fixed renamed 'a.b' → ")
    assert " (+1 more)" in recorded.comment()  # the response-unreadable warning


def _fresh(exchange, mode: str) -> FlowRecord:
    """The record of ``exchange`` made as if none had been made of it before, by this flow
    or any other: everything it says is made of its own lists."""
    earlier, exchange.record = exchange.record, None
    try:
        return dataclasses.replace(FlowRecord.of(exchange, mode), made=None)
    finally:
        exchange.record = earlier


def _says(recorded: FlowRecord) -> tuple:
    """All a record says of its flow."""
    return (
        recorded.to_metadata(),
        recorded.outcome,
        recorded.comment(),
        recorded.fixes_text(),
        recorded.renamed,
    )


@pytest.mark.parametrize(
    "status,answer",
    [
        (200, b'{"choices": [{"message": {"tool_calls": [{"function": {"name": "nope"}}]}}]}'),
        (400, _openai_rejection("tools[0].function.name", "string too long.")),
        (200, b'{"choices": [{"message": {"content": "hi"}}]}'),
    ],
)
def test_a_record_made_again_for_its_answer_says_what_one_made_afresh_says(status, answer):
    # The answer's record reuses what the request's made (issue 25); nothing it says differs.
    exchange = exchange_for(_chat("a.b", "c.d", choice="a.b"), "openai-chat", "openai", fix=True)
    first = FlowRecord.of(exchange, "fix")
    assert first.to_metadata() == _fresh(exchange, "fix").to_metadata()
    assert first.comment() == _fresh(exchange, "fix").comment()
    exchange.check_response(status, "application/json", answer)
    again = FlowRecord.of(exchange, "fix")
    assert again.fixes is first.fixes  # reused, not made again
    fresh = _fresh(exchange, "fix")
    assert again.to_metadata() == fresh.to_metadata()
    assert (again.outcome, again.comment()) == (fresh.outcome, fresh.comment())
    # A record made from it with other fixes judges by those, not by what was made before.
    fewer = dataclasses.replace(again, fixes=again.fixes[:1])
    fewer_fresh = dataclasses.replace(fresh, fixes=fresh.fixes[:1], made=None)
    assert fewer.to_metadata() == fewer_fresh.to_metadata()
    assert (fewer.outcome, fewer.comment()) == (fewer_fresh.outcome, fewer_fresh.comment())


def test_each_fix_is_recorded_once_and_as_itself():
    # An agent resends its tools every turn, and fix mode shares each place's fix between
    # requests: its record is made once too (issue 25), and never another fix's.
    body = _chat("a.b", "c.d", choice="a.b")
    first = FlowRecord.of(exchange_for(body, "openai-chat", "openai", fix=True), "fix")
    exchange = exchange_for(body, "openai-chat", "openai", fix=True)
    again = FlowRecord.of(exchange, "fix")
    assert all(map(operator.is_, first.fixes, again.fixes)) and len(first.fixes) == 3
    assert again.fixes == [RecordedFix(f.path, f.old, f.new, f.rewrite) for f in exchange.fixes]
    other = FlowRecord.of(
        exchange_for(_chat("a.b", "e.f"), "openai-chat", "openai", fix=True), "fix"
    )
    assert [f.old for f in other.fixes] == ["a.b", "e.f"]


def test_metadata_made_again_stays_storable_whatever_the_names_hold():
    # The entries are made storable once and reused by the answer's record: a name with a
    # lone surrogate is escaped in both records' metadata, as in one made afresh.
    exchange = exchange_for(_chat("a\ud800.b", "c.d"), "openai-chat", "openai", fix=True)
    first = FlowRecord.of(exchange, "fix").to_metadata()
    exchange.check_response(200, "application/json", b'{"choices": []}')
    again = FlowRecord.of(exchange, "fix").to_metadata()
    for meta in (first, again, _fresh(exchange, "fix").to_metadata()):
        json.dumps(meta, ensure_ascii=False).encode("utf-8")
        assert (
            "\\ud800" in json.dumps(meta["fixes"]) and "\\ud800" in meta["findings"][0]["message"]
        )
    assert again == _fresh(exchange, "fix").to_metadata()


def test_the_metadata_entries_of_shared_findings_and_fixes_are_made_once():
    # Fix mode shares each place's finding and fix between requests; their entries are made
    # once too (issue 25), each the entry of its own finding or fix.
    body = _chat("a.b", "c.d", choice="a.b")
    first = FlowRecord.of(exchange_for(body, "openai-chat", "openai", fix=True), "fix")
    again = FlowRecord.of(exchange_for(body, "openai-chat", "openai", fix=True), "fix")
    one, two = first.to_metadata(), again.to_metadata()
    assert all(map(operator.is_, one["fixes"], two["fixes"]))
    assert all(map(operator.is_, one["findings"], two["findings"]))
    assert one["fixes"] == [f.to_dict() for f in first.fixes]
    assert one["findings"] == [f.to_dict() for f in first.findings]
    other = FlowRecord.of(exchange_for(_chat("e.f"), "openai-chat", "openai", fix=True), "fix")
    assert [e["from"] for e in other.to_metadata()["fixes"]] == ["e.f"]


def _conversation(*calls: str, tools: tuple[str, ...] = ("a.b", "c.d")) -> bytes:
    """A chat request offering ``tools`` after a history that called each of ``calls``."""
    messages: list[dict] = [{"role": "user", "content": "hi"}]
    for i, name in enumerate(calls):
        call = {"id": f"call_{i}", "type": "function", "function": {"name": name}}
        messages.append({"role": "assistant", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": "ok"})
    functions = [{"type": "function", "function": {"name": n}} for n in tools]
    return json.dumps({"messages": messages, "tools": functions}).encode()


def test_the_next_flows_record_takes_what_was_made_of_the_same_fixes():
    # An agent resends its tools and history every turn, and fix mode shares each place's
    # fix and finding between requests: what a record makes of them is made once for all
    # the flows that hold them (issue 25), and says what one made afresh says.
    body = _conversation("a.b")
    first = FlowRecord.of(exchange_for(body, "openai-chat", "openai", fix=True), "fix")
    said = _says(first)
    exchange = exchange_for(body, "openai-chat", "openai", fix=True)
    again = FlowRecord.of(exchange, "fix")
    assert again.made is first.made and again.fixes is first.fixes
    assert _says(again) == said == _says(_fresh(exchange, "fix"))
    assert "'a.b' → " in said[2] and "(2 places)" in said[2]


def test_a_conversation_that_grew_takes_what_was_made_of_the_fixes_it_began_with():
    # Each round adds calls to the history after the last: the fixes of the round before
    # come first, and what was made of them is kept, the new ones made. Every record says
    # what one made afresh says, the new places counted and repaired.
    before = None
    for calls in [(), ("a.b",), ("a.b", "c.d"), ("a.b", "c.d", "a.b")]:
        exchange = exchange_for(_conversation(*calls), "openai-chat", "openai", fix=True)
        recorded = FlowRecord.of(exchange, "fix")
        assert _says(recorded) == _says(_fresh(exchange, "fix")), calls
        if before is not None:
            assert len(recorded.fixes) == len(before.fixes) + 1
            assert all(map(operator.is_, before.fixes, recorded.fixes))
        before = recorded
    assert recorded.outcome == "fixed"
    assert "'a.b' → " in recorded.comment() and "(3 places)" in recorded.comment()
    # Fixes of any kind may come after (fix mode's own put a choice's first): one that
    # points a choice elsewhere is said too.
    exchange = exchange_for(_conversation("a.b", "c.d", "a.b"), "openai-chat", "openai", fix=True)
    pointed = Fix(("tool_choice", "function", "name"), "a/b", "a.b", "mastra+openai-agents")
    exchange.fixes = [*exchange.fixes, pointed]
    recorded = FlowRecord.of(exchange, "fix")
    assert _says(recorded) == _says(_fresh(exchange, "fix"))
    assert "tool_choice.function.name 'a/b' → 'a.b' (mastra+openai-agents)" in recorded.comment()


_ANSWERS = [
    None,
    b'{"choices": [{"message": {"content": "hi"}}]}',
    b'{"choices": [{"message": {"tool_calls": [{"function": {"name": "nope"}}]}}]}',
    _openai_rejection("messages[1].tool_calls[0].function.name", "string too long."),
]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(["a.b", "c.d", "e.f", "ok", "zz.top"]), max_size=4),
            st.sampled_from([("a.b", "c.d"), ("a.b", "c.d", "ok"), ("e.f",)]),
            st.sampled_from(_ANSWERS),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_whatever_flows_came_before_a_record_says_what_one_made_afresh_says(flows):
    # Records of other flows, of conversations that grew, shrank or are others, their
    # answers judged later and in another order (as a proxy's connections interleave):
    # nothing made for one is taken where it does not hold.
    answered = []
    for calls, tools, answer in flows:
        exchange = exchange_for(
            _conversation(*calls, tools=tools), "openai-chat", "openai", fix=True
        )
        assert _says(FlowRecord.of(exchange, "fix")) == _says(_fresh(exchange, "fix"))
        answered.append((exchange, answer))
    for exchange, answer in reversed(answered):
        if answer is not None:
            status = 400 if b'"error"' in answer else 200
            exchange.check_response(status, "application/json", answer)
        assert _says(FlowRecord.of(exchange, "fix")) == _says(_fresh(exchange, "fix"))
