"""The record of a flow (record.py): made from an exchange, kept as metadata, read back once."""

import pytest

from tests.testkit import exchange_for
from toolnames_core import FlowRecord
from toolnames_core.model import Finding
from toolnames_core.record import RecordedFix

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
