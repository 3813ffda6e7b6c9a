"""toolnames.report's summary: counts by outcome, code and host, as pure data and text."""

import json

from tests import testkit
from toolnames_core.model import Finding
from toolnames_core.model import Fix
from toolnames_core.report import FlowEntry
from toolnames_core.report import format_summary
from toolnames_core.report import summarize


def finding(code: str, severity: str = "error", path: str = "tools[0].function.name") -> Finding:
    return Finding(code, severity, path, f"{code} here")


def meta(action: str, *findings: Finding, fixes=None, mode: str = "observe") -> dict:
    return testkit.record_metadata("openai-chat", "openai", mode, action, findings, fixes)


FIX = Fix(("tool_choice", "function", "name"), "search.web", "search_web", "mastra")
ENTRIES = [
    FlowEntry(
        "1",
        "api.openai.com",
        "POST",
        "/v1/chat/completions",
        meta("observed", finding("name-invalid-chars"), finding("name-duplicate", "warning")),
    ),
    FlowEntry(
        "2",
        "api.openai.com",
        "POST",
        "/v1/chat/completions",
        meta(
            "fixed",
            finding("choice-not-in-tools", path="tool_choice.function.name"),  # where FIX is
            fixes=[FIX],
            mode="fix",
        ),
    ),
    FlowEntry(
        "3",
        "openrouter.ai",
        "POST",
        "/api/v1/chat/completions",
        meta("blocked", finding("name-invalid-chars"), mode="block"),
    ),
    FlowEntry("4", "api.openai.com", "POST", "/v1/chat/completions", None),
    FlowEntry("5", "api.openai.com", "POST", "/v1/chat/completions", {"findings": "?"}),
]


def test_the_summary_counts_outcomes_codes_and_hosts():
    summary = summarize(ENTRIES, selected=7)

    assert summary["selected"] == 7
    assert summary["inspected"] == 3
    assert summary["unreadable_metadata"] == 1
    assert summary["outcomes"] == {"flagged": 1, "fixed": 1, "blocked": 1}
    assert summary["findings"] == 4
    assert summary["by_severity"] == {"error": 3, "warning": 1}
    assert summary["by_code"] == {
        "name-invalid-chars": 2,
        "choice-not-in-tools": 1,
        "name-duplicate": 1,
    }
    assert summary["by_host"] == {
        "api.openai.com": {
            "flows": 2,
            "flagged": 2,
            "findings": 3,
            "by_code": {"choice-not-in-tools": 1, "name-duplicate": 1, "name-invalid-chars": 1},
        },
        "openrouter.ai": {
            "flows": 1,
            "flagged": 1,
            "findings": 1,
            "by_code": {"name-invalid-chars": 1},
        },
    }
    assert [(f["id"], f["outcome"]) for f in summary["flows"]] == [
        ("1", "flagged"),
        ("2", "fixed"),
        ("3", "blocked"),
    ]
    assert json.loads(json.dumps(summary)) == summary


def test_an_info_only_flow_is_inspected_but_not_flagged():
    entry = FlowEntry("1", "h", "POST", "/v1/responses", meta("observed", finding("x", "info")))
    summary = summarize([entry])
    assert summary["outcomes"] == {"flagged": 0, "fixed": 0, "blocked": 0}
    assert summary["by_host"]["h"]["flagged"] == 0
    assert summary["flows"][0]["outcome"] == "observed"


def test_the_log_text_leads_with_the_totals_then_codes_then_hosts():
    text = format_summary(summarize(ENTRIES, selected=7))
    assert text.splitlines() == [
        "toolnames report: 7 flow(s) selected, 3 inspected by toolnames; 1 flagged, 1 fixed, "
        "1 blocked; findings: 3 errors, 1 warning",
        "  1 flow(s) carry toolnames metadata this version cannot read",
        "  by code: name-invalid-chars 2, choice-not-in-tools 1, name-duplicate 1",
        "  api.openai.com: 2 flow(s), 2 flagged: choice-not-in-tools 1, name-duplicate 1, "
        "name-invalid-chars 1",
        "  openrouter.ai: 1 flow(s), 1 flagged: name-invalid-chars 1",
    ]


def test_nothing_selected_is_a_short_report():
    assert format_summary(summarize([])) == (
        "toolnames report: 0 flow(s) selected, 0 inspected by toolnames; 0 flagged, 0 fixed, "
        "0 blocked; findings: none"
    )


def disagreement(rule: str) -> Finding:
    return Finding("rule-disagrees", "warning", "tools[0].function.name", "the rule is off", rule)


def test_disagreements_are_counted_by_host_and_rule():
    entries = [
        FlowEntry(
            "1",
            "localhost:11434",
            "POST",
            "/v1/chat/completions",
            meta("observed", disagreement("openai"), disagreement("openai")),
        ),
        FlowEntry(
            "2",
            "localhost:11434",
            "POST",
            "/v1/chat/completions",
            meta("observed", disagreement("portable")),
        ),
        FlowEntry(
            "3",
            "api.groq.com",
            "POST",
            "/openai/v1/chat/completions",
            meta("observed", disagreement("groq"), finding("name-invalid-chars")),
        ),
        FlowEntry(
            "4",
            "api.openai.com",
            "POST",
            "/v1/chat/completions",
            meta("observed", finding("name-invalid-chars")),
        ),
    ]
    summary = summarize(entries)
    assert summary["disagreements"] == {
        "api.groq.com": {"groq": 1},
        "localhost:11434": {"openai": 2, "portable": 1},
    }
    assert summary["by_code"]["rule-disagrees"] == 4
    assert format_summary(summary).splitlines()[-1] == (
        "  the provider disagreed with toolnames' rule at: api.groq.com (rule groq 1); "
        "localhost:11434 (rule openai 2, rule portable 1). Set toolnames_rule for these hosts, "
        "or report it."
    )


def test_a_report_without_disagreements_says_nothing_of_them():
    summary = summarize(ENTRIES)
    assert summary["disagreements"] == {}
    assert "disagreed" not in format_summary(summary)
