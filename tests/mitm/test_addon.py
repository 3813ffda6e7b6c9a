"""The HTTP addon (toolnames_mitm/addon.py) on LLM API traffic, through mitmproxy's test helpers."""

import asyncio
import gzip
import json
import logging
import os
import re
import stat
from pathlib import Path

import pytest
from mitmproxy import contentviews
from mitmproxy import exceptions
from mitmproxy import flow
from mitmproxy import hooks
from mitmproxy import http
from mitmproxy import io
from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from harness.inprocess import running
from tests.testkit import RESPONSE_SUFFIXES
from tests.testkit import RESPONSES_DIR
from tests.testkit import UNUSUAL_NAMES
from tests.testkit import response_api
from tests.testkit import response_body
from tests.testkit import sent_on
from toolnames_core import FORMATS
from toolnames_core import FlowRecord
from toolnames_core import RuleOverride
from toolnames_core import inspect_exchange
from toolnames_core import parse_rule_override
from toolnames_core import readers
from toolnames_mitm import deferral
from toolnames_mitm.addon import ToolNames
from toolnames_mitm.view import ToolnamesView

ADDON_SCRIPT = Path(__file__).resolve().parents[2] / "addon" / "toolnames.py"


def fn(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def named(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


# What Mastra sends for tools: {"search.web": t} and toolChoice {type: "tool", toolName: "search.web"}.
MASTRA = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [fn("search_web")],
    "tool_choice": named("search.web"),
}
CLEAN = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [fn("search_web")],
    "tool_choice": "auto",
}
BAD_TOOL = {"model": "gpt-4o-mini", "messages": [], "tools": [fn("get_weather"), fn("search.web")]}
CHAT_PATH = b"/v1/chat/completions"


def chat_flow(
    body: object = None,
    *,
    method: bytes = b"POST",
    path: bytes = CHAT_PATH,
    host: str = "api.openai.com",
    live: bool = True,
) -> http.HTTPFlow:
    f = tflow.tflow(
        req=tutils.treq(method=method, scheme=b"https", host=host, port=443, path=path), live=live
    )
    if body is not None:
        f.request.text = body if isinstance(body, str) else json.dumps(body)
    return f


def provider_error(f: http.HTTPFlow) -> http.HTTPFlow:
    """The provider's answer to a request it rejects (a 400 carries no tool calls to check)."""
    body = json.dumps(
        {"error": {"message": "Invalid tool_choice", "type": "invalid_request_error"}}
    )
    f.response = http.Response.make(
        400, body, {"content-type": "application/json", "set-cookie": "s=1"}
    )
    return f


def warnings_logged(caplog) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "toolnames" and r.levelno == logging.WARNING
    ]


def assert_nothing_went_wrong(caplog) -> None:
    assert "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def read_flows(path: Path) -> list[http.HTTPFlow]:
    with open(path, "rb") as fo:
        return list(io.FlowReader(fo).stream())


# --- modes ----------------------------------------------------------------------------------------


def test_observe_mode_annotates_but_never_changes_a_byte_or_answers(caplog):
    with running(toolnames_mode="observe") as (tctx, tn):
        f = chat_flow(MASTRA)
        sent = f.request.raw_content
        headers = f.request.headers.copy()
        tn.request(f)
    assert f.request.raw_content == sent
    assert f.request.headers == headers
    assert f.response is None
    assert f.metadata["toolnames"]["action"] == "observed"
    assert f.marked == ":warning:"
    assert_nothing_went_wrong(caplog)


def test_fix_mode_rewrites_the_choice_to_the_offered_name_and_records_it():
    with running(toolnames_mode="fix") as (tctx, tn):
        f = chat_flow(MASTRA)
        sent = f.request.text
        tn.request(f)
    assert f.request.text == sent.replace('"search.web"', '"search_web"')
    assert f.request.headers["content-length"] == str(len(f.request.raw_content))
    assert f.response is None
    meta = f.metadata["toolnames"]
    assert meta["action"] == "fixed"
    assert meta["fixes"] == [
        {
            "path": "tool_choice.function.name",
            "from": "search.web",
            "to": "search_web",
            "rewrite": "mastra+openai-agents",
        }
    ]
    assert f.marked == ":hammer_and_wrench:"
    assert (
        f.comment
        == "toolnames fixed tool_choice.function.name 'search.web' → 'search_web' (mastra+openai-agents)"
    )


def test_fix_mode_leaves_an_ambiguous_choice_alone_and_says_why():
    body = {"tools": [fn("Search_Web"), fn("search_web")], "tool_choice": named("Search.Web")}
    with running(toolnames_mode="fix") as (tctx, tn):
        f = chat_flow(body)
        sent = f.request.raw_content
        tn.request(f)
    assert f.request.raw_content == sent
    meta = f.metadata["toolnames"]
    assert meta["action"] == "observed"
    assert "fixes" not in meta
    (skipped,) = meta["fix_skipped"]
    assert skipped["reason"] == "could be 'Search_Web' (mastra) or 'search_web' (openai-agents)"
    assert f.marked == ":warning:"
    # Where the user looks, not only in the metadata: the comment, hence the log line.
    assert f.comment.endswith(
        "; not fixed: 'Search.Web' could be 'Search_Web' (mastra) or 'search_web' (openai-agents)"
    )


def test_fix_mode_keeps_a_gzip_body_gzipped():
    with running(toolnames_mode="fix") as (tctx, tn):
        f = chat_flow()
        f.request.headers["content-encoding"] = "gzip"
        f.request.text = json.dumps(MASTRA)
        tn.request(f)
    assert f.request.headers["content-encoding"] == "gzip"
    assert json.loads(gzip.decompress(f.request.raw_content))["tool_choice"] == named("search_web")


def test_block_mode_answers_400_in_openai_error_shape_naming_the_offered_tools():
    with running(toolnames_mode="block") as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
    assert f.response.status_code == 400
    assert f.response.headers["content-type"] == "application/json"
    error = json.loads(f.response.content)["error"]
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "choice-not-in-tools"
    assert error["param"] == "tool_choice.function.name"
    assert error["message"].startswith(
        "toolnames: tool_choice.function.name 'search.web' (10 chars) names no offered tool"
    )
    assert "offered: 'search_web'" in error["message"]
    assert error["message"].endswith(
        "The request was blocked by toolnames and never reached the provider."
    )
    assert f.metadata["toolnames"]["action"] == "blocked"
    assert f.marked == ":no_entry:"
    assert f.comment.startswith("toolnames blocked: choice-not-in-tools: ")


@pytest.mark.parametrize("name,shown,label", UNUSUAL_NAMES)
def test_a_name_is_shown_in_one_escaped_form_in_log_comment_and_block_message(
    name, shown, label, caplog
):
    caplog.set_level(logging.WARNING)
    with running(toolnames_mode="block") as (tctx, tn):
        f = chat_flow({"model": "m", "messages": [], "tools": [fn(name)]})
        tn.request(f)
        tn.response(f)
    described = f"{shown} ({len(name)} chars; {label})"
    message = json.loads(f.response.content)["error"]["message"]
    (line,) = warnings_logged(caplog)
    for text in (message, f.comment, line):
        assert described in text
        assert name not in text
    # The client's own message lists the offered names in the same form.
    assert f"offered: {shown}" in message


def test_block_mode_names_the_offered_tools_for_a_bad_tool_name_too():
    with running(toolnames_mode="block") as (tctx, tn):
        f = chat_flow(BAD_TOOL)
        tn.request(f)
    error = json.loads(f.response.content)["error"]
    assert error["code"] == "name-invalid-chars"
    assert "offered: 'get_weather', 'search.web'" in error["message"]


@pytest.mark.parametrize(
    "body",
    [
        CLEAN,
        # Warnings are reported, never blocked: OpenAI documents no error for duplicates.
        {"tools": [fn("a"), fn("a")]},
        "not json",
    ],
)
def test_block_mode_lets_requests_without_errors_through(body):
    with running(toolnames_mode="block") as (tctx, tn):
        f = chat_flow(body)
        tn.request(f)
    assert f.response is None


async def test_a_blocked_flow_goes_through_the_full_event_sequence_once(tmp_path, caplog):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_mode="block", toolnames_save=str(path)) as (tctx, tn):
        f = chat_flow(MASTRA)
        await tctx.cycle(tn, f)
    assert f.response.status_code == 400
    (saved,) = read_flows(path)
    assert saved.response.status_code == 400
    assert len(warnings_logged(caplog)) == 1
    assert_nothing_went_wrong(caplog)


# --- observe mode inside mitmproxy's event loop: the check waits for the flow ---------------------


async def test_observe_mode_checks_a_live_request_when_its_flow_completes(caplog):
    with running() as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
        assert "toolnames" not in f.metadata  # nothing held back on the way to the provider
        tn.response(provider_error(f))
        assert f.metadata["toolnames"]["findings"][0]["code"] == "choice-not-in-tools"
        assert f.marked == ":warning:"
        assert tn.deferral.waiting() == []
    assert len(warnings_logged(caplog)) == 1
    assert_nothing_went_wrong(caplog)


class UpdateRecorder:
    """Stands in for mitmweb's view, which redraws a flow when the update hook names it."""

    def __init__(self) -> None:
        self.updated: list[http.HTTPFlow] = []

    def update(self, flows):
        self.updated += flows


async def test_observe_mode_checks_a_request_whose_answer_is_slow_after_a_while(monkeypatch):
    monkeypatch.setattr(deferral, "DEFER_SECONDS", 0.001)
    recorder = UpdateRecorder()
    with running(recorder) as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
        await asyncio.sleep(0.05)
        assert f.metadata["toolnames"]["findings"][0]["code"] == "choice-not-in-tools"
        assert f.marked == ":warning:"
        assert recorder.updated == [f]  # shown while the app still waits
        tn.response(provider_error(f))  # completes later: checked once, logged once
    assert len(f.metadata["toolnames"]["findings"]) == 1


async def test_slow_requests_are_checked_in_the_order_they_came_by_one_timer(monkeypatch):
    monkeypatch.setattr(deferral, "DEFER_SECONDS", 0)
    recorder = UpdateRecorder()
    with running(recorder) as (tctx, tn):
        first, clean, completed, later = (chat_flow(b) for b in (MASTRA, CLEAN, MASTRA, MASTRA))
        tn.request(first)
        timer = tn.deferral.timer
        for f in (clean, completed):
            tn.request(f)
        monkeypatch.setattr(deferral, "DEFER_SECONDS", 3600)
        tn.request(later)
        assert tn.deferral.timer is timer  # one timer, however many requests wait
        tn.response(provider_error(completed))
        for _ in range(3):
            await asyncio.sleep(0)
        assert [p.flow for p in tn.deferral.waiting()] == [later]
        assert recorder.updated == [first]  # the clean flow was checked, and nothing changed
        assert "toolnames" not in clean.metadata
        assert tn.deferral.timer is not timer
        assert (
            tn.deferral.timer.when() == tn.deferral.waiting()[0].due
        )  # armed again for the next due
    assert tn.deferral.timer is None  # done() leaves no timer behind


async def test_requests_in_flight_are_checked_when_the_addon_is_unloaded():
    with running() as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
        tn.done()  # what mitmproxy calls when it reloads the script, or stops
        assert f.metadata["toolnames"]["findings"][0]["code"] == "choice-not-in-tools"
        assert tn.deferral.waiting() == []


async def test_a_flow_that_fails_is_checked_when_its_error_comes(caplog):
    with running() as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
        f.error = flow.Error("connection refused")
        tn.error(f)
        assert f.metadata["toolnames"]["findings"][0]["code"] == "choice-not-in-tools"
        await asyncio.sleep(0)
    assert len(warnings_logged(caplog)) == 1


@pytest.mark.parametrize("mode", ["fix", "block"])
async def test_fix_and_block_decide_before_the_request_is_forwarded(mode):
    with running(toolnames_mode=mode) as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
        assert f.metadata["toolnames"]["action"] == {"fix": "fixed", "block": "blocked"}[mode]
        assert tn.deferral.waiting() == []


# --- marker, comment, metadata, log line ---------------------------------------------------------


def test_metadata_records_api_rule_mode_action_and_findings_as_plain_json():
    with running() as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
    meta = f.metadata["toolnames"]
    assert json.loads(json.dumps(meta)) == meta
    assert meta == {
        "api": "openai-chat",
        "rule": "openai",
        "mode": "observe",
        "action": "observed",
        "findings": [
            {
                "code": "choice-not-in-tools",
                "severity": "error",
                "path": "tool_choice.function.name",
                "message": "tool_choice.function.name 'search.web' (10 chars) names no offered tool; offered: 'search_web'",
            }
        ],
    }


def test_the_record_names_the_client_that_sent_a_flagged_request():
    with running() as (tctx, tn):
        f = chat_flow(MASTRA)
        f.request.headers["user-agent"] = (
            "ai-sdk/openai-compatible/2.0.62 ai-sdk/provider-utils/4.0.40 runtime/node.js/v20.20.2"
        )
        tn.request(f)
        tn.response(provider_error(f))
    assert f.metadata["toolnames"]["client"] == (
        "Vercel AI SDK ai-sdk/openai-compatible (Mastra's model router uses it) 2.0.62 "
        "(node.js v20.20.2)"
    )
    assert FlowRecord.from_metadata(f.metadata["toolnames"]).client.startswith("Vercel AI SDK")


def test_the_comment_is_one_line_that_leads_with_the_worst_finding():
    body = {"tools": [fn("a"), fn("a"), fn("bad\nname")]}
    with running() as (tctx, tn):
        f = chat_flow(body)
        tn.request(f)
    assert "\n" not in f.comment
    assert f.comment.startswith("toolnames error: name-invalid-chars: tools[2].function.name 'bad")
    assert f.comment.endswith("(+1 more)")


def test_one_warning_line_per_flagged_flow_and_none_for_a_clean_one(caplog):
    caplog.set_level(logging.INFO)
    with running() as (tctx, tn):
        flagged, clean = chat_flow(MASTRA), chat_flow(CLEAN)
        for f in (flagged, clean):
            tn.request(f)
            tn.response(provider_error(f))
    (line,) = warnings_logged(caplog)
    assert line == "POST api.openai.com/v1/chat/completions: " + flagged.comment
    assert "toolnames" not in clean.metadata
    assert (clean.marked, clean.comment) == ("", "")
    assert_nothing_went_wrong(caplog)


def test_request_and_response_findings_share_one_warning_line_when_the_flow_completes(caplog):
    caplog.set_level(logging.INFO)
    with running() as (tctx, tn):
        f = chat_flow(BAD_TOOL)
        tn.request(f)
        assert warnings_logged(caplog) == []  # the flow is not complete yet
        call = {"type": "function", "function": {"name": "delete_all", "arguments": "{}"}}
        body = {"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [call]}}]}
        f.response = http.Response.make(200, json.dumps(body), {"content-type": "application/json"})
        tn.response(f)
    (line,) = warnings_logged(caplog)
    codes = [x["code"] for x in f.metadata["toolnames"]["findings"]]
    # The provider accepted the name the rule rejects: rule-disagrees, from the same answer.
    assert codes == ["name-invalid-chars", "response-unknown-tool", "rule-disagrees"]
    assert line.endswith(f.comment)
    assert f.comment.endswith("(+2 more)")


def test_an_answer_streamed_through_unread_is_said_to_be_unchecked(caplog):
    # Another addon streams the answer through its own function: toolnames has no tap on it.
    with running() as (tctx, tn):
        f = chat_flow(CLEAN)
        tn.request(f)
        f.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
        f.response.stream = lambda chunk: chunk
        tn.responseheaders(f)
        f.response.raw_content = None  # mitmproxy keeps no streamed body by default
        tn.response(f)
    (finding,) = f.metadata["toolnames"]["findings"]
    assert (finding["code"], finding["severity"]) == ("response-unreadable", "warning")
    assert "streamed through without toolnames reading it" in finding["message"]
    assert callable(f.response.stream)  # the other addon's stream is left alone
    assert f.marked == ":warning:"
    assert_nothing_went_wrong(caplog)


def test_a_recorded_request_without_an_answer_is_logged_when_read(caplog):
    caplog.set_level(logging.INFO)
    with running() as (tctx, tn):
        f = chat_flow(MASTRA, live=False)  # e.g. mitmdump -nr on a flow saved before its answer
        tn.request(f)
    (line,) = warnings_logged(caplog)
    assert line.endswith(f.comment)
    assert "choice-not-in-tools" in line


def test_a_users_own_marker_and_comment_are_kept():
    with running() as (tctx, tn):
        f = chat_flow(MASTRA)
        f.marked = ":star:"
        f.comment = "look at this later"
        tn.request(f)
    assert (f.marked, f.comment) == (":star:", "look at this later")
    assert f.metadata["toolnames"]["findings"]


def test_an_earlier_toolnames_marker_and_comment_are_replaced():
    with running(toolnames_mode="block") as (tctx, tn):
        f = chat_flow(MASTRA)
        f.marked = ":warning:"
        f.comment = "toolnames error: something from an earlier run"
        tn.request(f)
    assert f.marked == ":no_entry:"
    assert f.comment.startswith("toolnames blocked: ")


# --- live and non-live flows -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["fix", "block"])
def test_a_flow_that_is_not_live_is_annotated_but_never_changed(mode):
    with running(toolnames_mode=mode) as (tctx, tn):
        f = chat_flow(MASTRA, live=False)
        sent = f.request.raw_content
        tn.request(f)
    assert f.request.raw_content == sent
    assert f.response is None
    assert f.metadata["toolnames"]["action"] == "observed"
    assert f.metadata["toolnames"]["mode"] == mode
    assert f.marked == ":warning:"


@pytest.mark.parametrize("mode", ["fix", "block"])
def test_a_live_flow_that_already_has_a_response_is_not_changed(mode):
    with running(toolnames_mode=mode) as (tctx, tn):
        f = chat_flow(MASTRA)
        f.response = tutils.tresp()
        sent = f.request.raw_content
        tn.request(f)
    assert f.request.raw_content == sent
    assert f.response.status_code == 200
    assert f.metadata["toolnames"]["action"] == "observed"


def test_a_flow_read_back_is_shown_from_its_metadata_without_reanalysis(caplog):
    # Saved after a fix: the body is already correct, the metadata says what was done.
    fixed_body = dict(MASTRA, tool_choice=named("search_web"))
    meta = {
        "api": "openai-chat",
        "rule": "openai",
        "mode": "fix",
        "action": "fixed",
        "findings": [
            {
                "code": "choice-not-in-tools",
                "severity": "error",
                "path": "tool_choice.function.name",
                "message": "m",
            }
        ],
        "fixes": [
            {
                "path": "tool_choice.function.name",
                "from": "search.web",
                "to": "search_web",
                "rewrite": "mastra",
            }
        ],
    }
    with running(toolnames_mode="block") as (tctx, tn):
        f = chat_flow(fixed_body, live=False)
        f.metadata["toolnames"] = json.loads(json.dumps(meta))
        tn.request(f)
    assert f.metadata["toolnames"] == meta
    assert f.marked == ":hammer_and_wrench:"
    assert (
        f.comment
        == "toolnames fixed tool_choice.function.name 'search.web' → 'search_web' (mastra)"
    )
    assert f.response is None
    assert len(warnings_logged(caplog)) == 1


@pytest.mark.parametrize(
    "meta",
    [
        "not a dict",
        {"findings": "x"},
        {"findings": [{"code": "x"}]},
        {"action": "fixed"},
        {"action": "fixed", "fixes": [{"path": 1}]},
    ],
)
def test_a_flow_read_back_with_unreadable_metadata_is_left_alone(meta, caplog):
    with running() as (tctx, tn):
        f = chat_flow(MASTRA, live=False)
        f.metadata["toolnames"] = meta
        tn.request(f)
    assert f.metadata["toolnames"] == meta
    assert (f.marked, f.comment) == ("", "")
    assert_nothing_went_wrong(caplog)


# --- options ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options,line",
    [
        (
            {"toolnames_mode": "blocking"},
            "toolnames_mode: 'blocking' is not a mode; accepted: observe, fix, block",
        ),
        (
            {"toolnames_rule": ["openrouter.ai=claude"]},
            "toolnames_rule: 'openrouter.ai=claude' is not HOST_PATTERN=RULE with a known RULE",
        ),
        ({"toolnames_filter": "~d"}, "toolnames_filter: '~d' is not a mitmproxy filter"),
        ({"toolnames_max_body": "lots"}, "toolnames_max_body: 'lots' is not a size"),
    ],
)
def test_a_bad_value_set_while_running_is_refused_in_one_line_and_rolled_back(options, line):
    with running(toolnames_mode="fix") as (tctx, tn):
        with pytest.raises(exceptions.OptionsError) as e:
            tctx.configure(tn, **options)
        assert str(e.value).startswith(line) and "\n" not in str(e.value)
        assert tn.mode == "fix" and tctx.options.toolnames_mode == "fix"


@pytest.mark.parametrize("where", ["directory", "under_a_file", "in_a_missing_folder"])
def test_a_save_path_that_cannot_be_a_file_is_refused_and_no_folder_is_made(tmp_path, where):
    (tmp_path / "file").write_text("x")
    path = {
        "directory": tmp_path,
        "under_a_file": tmp_path / "file" / "flows.mitm",
        "in_a_missing_folder": tmp_path / "missing" / "flows.mitm",
    }[where]
    with running() as (tctx, tn), pytest.raises(exceptions.OptionsError, match="toolnames_save: "):
        tctx.configure(tn, toolnames_save=str(path))
    assert tn.writer is None
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    "spec,line",
    [
        (
            "toolnames_redact=maybe",
            "toolnames_redact: 'maybe' is not a boolean; accepted: true, false (the option alone means true)",
        ),
        (
            "toolnames_mode=blokc",
            "toolnames_mode: 'blokc' is not a mode; accepted: observe, fix, block",
        ),
    ],
)
def test_a_bad_value_given_before_the_script_loads_is_one_error_line_and_the_addon_stays_off(
    caplog, spec, line
):
    # mitmdump --set toolnames_redact=maybe: the value waits, as a string, for the script to
    # declare its options. Unparsable, it used to unload the script without a word.
    with taddons.context() as tctx:
        tctx.options.set(spec, defer=True)
        with caplog.at_level(logging.ERROR):
            tn = tctx.script(str(ADDON_SCRIPT)).addons[0]
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [line]
        assert tn.off
        f = chat_flow(MASTRA)
        tn.request(f)
        assert "toolnames" not in f.metadata  # off, said once: never running half configured
        option = spec.partition("=")[0]
        value = {"toolnames_redact": False, "toolnames_mode": "block"}[option]
        tctx.options.update(**{option: value})
        tctx.master.addons.invoke_addon_sync(tn, hooks.ConfigureHook({option}))
        assert not tn.off
        g = chat_flow(MASTRA)
        tn.request(g)
        assert "toolnames" in g.metadata


def test_a_rule_option_becomes_the_addons_overrides():
    with running(toolnames_rule=["*=portable"]) as (tctx, tn):
        assert tn.overrides == (RuleOverride("*", "portable"),)


def test_the_reader_in_use_is_said_once_at_start_up(caplog):
    caplog.set_level(logging.INFO)
    with running() as (tctx, tn):
        lines = [r.getMessage() for r in caplog.records if "reading bodies with" in r.getMessage()]
        assert lines == [
            f"toolnames: reading bodies with {readers.DEFAULT.description}"
            + (
                ""
                if readers.FAST
                else "; for a faster reader add msgspec to mitmproxy's environment "
                "(pipx inject mitmproxy msgspec, or uv tool install mitmproxy --with msgspec)"
            )
        ]
        assert tn.reader is readers.DEFAULT
        # Held: tracked is keyed weakly, and a flow no one holds goes with the next collection
        # (mitmproxy's flows sit in reference cycles), which made this test fail now and then.
        f = chat_flow(MASTRA)
        tn.request(f)
        assert tn.tracked[f].exchange.reader is readers.DEFAULT


def test_the_json_reader_can_be_chosen_and_msgspec_insisted_on():
    with running(toolnames_reader="json") as (tctx, tn):
        assert tn.reader is readers.STANDARD
        f = chat_flow(MASTRA)
        tn.request(f)
        assert tn.tracked[f].exchange.reader is readers.STANDARD
        if readers.FAST:
            tctx.configure(tn, toolnames_reader="msgspec")
            assert tn.reader is readers.FAST
        else:
            with pytest.raises(exceptions.OptionsError, match="pipx inject mitmproxy msgspec"):
                tctx.configure(tn, toolnames_reader="msgspec")
        with pytest.raises(
            exceptions.OptionsError,
            match="toolnames_reader: 'ujson' is not a reader; accepted: auto, json, msgspec",
        ):
            tctx.configure(tn, toolnames_reader="ujson")


def test_a_rule_override_checks_a_host_against_another_providers_rule():
    body = {"tools": [fn("get-weather")]}
    with running(toolnames_rule=["api.example.com=anthropic", "*.openai.com=portable"]) as (
        tctx,
        tn,
    ):
        f = chat_flow(body)
        tn.request(f)
        g = chat_flow(body, host="api.example.com")
        tn.request(g)
    assert f.metadata["toolnames"]["rule"] == "portable"
    assert [x["code"] for x in f.metadata["toolnames"]["findings"]] == ["name-invalid-chars"]
    assert "toolnames" not in g.metadata  # hyphens are fine for Anthropic


def test_the_filter_limits_which_flows_are_inspected():
    with running(toolnames_filter="~d api.openai.com", toolnames_mode="block") as (tctx, tn):
        inside, outside = chat_flow(MASTRA), chat_flow(MASTRA, host="llm.internal")
        tn.request(inside)
        tn.request(outside)
    assert inside.response is not None
    assert outside.response is None and "toolnames" not in outside.metadata


def test_clearing_the_filter_inspects_everything_again():
    with running(toolnames_filter="~d nowhere.example") as (tctx, tn):
        tctx.configure(tn, toolnames_filter=None)
        f = chat_flow(MASTRA)
        tn.request(f)
    assert "toolnames" in f.metadata


@pytest.mark.parametrize("limit,read", [("1k", False), ("64k", True), ("32m", True)])
def test_a_body_over_max_body_is_left_unread_and_flagged(limit, read):
    body = dict(BAD_TOOL, messages=[{"role": "user", "content": "x" * 4000}])
    with running(toolnames_max_body=limit, toolnames_mode="block") as (tctx, tn):
        f = chat_flow(body)
        sent = f.request.raw_content
        tn.request(f)
    codes = [x["code"] for x in f.metadata["toolnames"]["findings"]]
    if read:
        assert codes == ["name-invalid-chars"]
    else:
        assert codes == ["request-unreadable"]
        assert f.metadata["toolnames"]["findings"][0]["message"].endswith(
            f"the body is {len(sent)} bytes, over toolnames_max_body"
        )
        assert f.request.raw_content == sent and f.response is None


def call_answer(f: http.HTTPFlow, name: str) -> http.HTTPFlow:
    call = {"type": "function", "function": {"name": name, "arguments": "{}"}}
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [call]}}]}
    f.response = http.Response.make(200, json.dumps(body), {"content-type": "application/json"})
    return f


def unread_request(reason: str) -> tuple[http.HTTPFlow, bytes]:
    """A request toolnames does not read, which offers the tool its answer calls."""
    body = json.dumps(dict(CLEAN, messages=[{"role": "user", "content": "x" * 4000}])).encode()
    f = chat_flow()
    f.request.content = body
    if reason == "streamed":
        f.request.raw_content = None  # mitmproxy's stream_large_bodies: never held
    elif reason == "bad encoding":
        f.request.headers["content-encoding"] = "gzip"  # but it is not
    return f, body


UNREAD = ["over max_body", "streamed", "bad encoding"]


def answered_unread_request(reason: str) -> tuple[http.HTTPFlow, bytes]:
    with running(toolnames_max_body="1k") as (tctx, tn):
        f, body = unread_request(reason)
        tn.request(f)
        tn.response(call_answer(f, "search_web"))
    return f, body


def assert_only_unread(f: http.HTTPFlow, body: bytes, parsed: list[bytes]) -> None:
    codes = [x["code"] for x in f.metadata["toolnames"]["findings"]]
    assert codes == ["request-unreadable"]  # not "search_web was never offered"
    assert body not in parsed


@pytest.mark.parametrize("reason", UNREAD)
def test_an_unread_requests_answer_is_not_judged_nor_its_body_read(reason, counted):
    assert_only_unread(*answered_unread_request(reason), counted["loads"])


@pytest.mark.parametrize("reason", UNREAD)
async def test_an_unread_requests_answer_is_not_judged_when_checked_late(reason, counted):
    # Inside an event loop the request check waits for the flow to complete.
    assert_only_unread(*answered_unread_request(reason), counted["loads"])


# --- saving ----------------------------------------------------------------------------------------


def test_flagged_flows_are_appended_once_complete_and_readable(tmp_path):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path)) as (tctx, tn):
        first, second = chat_flow(MASTRA), chat_flow(BAD_TOOL)
        tn.request(first)
        tn.request(second)
        assert path.read_bytes() == b""  # nothing is saved before the flow is complete
        tn.response(provider_error(first))
        tn.response(provider_error(second))
    saved = read_flows(path)
    assert [s.id for s in saved] == [first.id, second.id]
    assert saved[0].metadata["toolnames"]["findings"] == first.metadata["toolnames"]["findings"]
    assert saved[0].request.content == first.request.content
    assert saved[0].response.status_code == 400
    assert (saved[0].marked, saved[0].comment) == (first.marked, first.comment)


def test_a_flow_that_ends_in_an_error_is_saved_from_the_error_hook(tmp_path):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path)) as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
        f.error = tflow.terr()
        tn.error(f)
    (saved,) = read_flows(path)
    assert saved.error.msg == f.error.msg
    assert saved.response is None


def test_a_flow_is_never_saved_twice(tmp_path):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path)) as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
        provider_error(f)
        tn.response(f)
        tn.response(f)
        f.error = tflow.terr()
        tn.error(f)
    assert len(read_flows(path)) == 1


def test_a_judged_flow_keeps_its_record_but_not_what_its_exchange_read(caplog):
    # mitmproxy's flows sit in reference cycles and live until the collector finds them;
    # a long conversation's exchange holds thousands of names, so it goes when judged.
    with running() as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
        tn.response(provider_error(f))
        assert tn.tracked[f].exchange is None
        recorded = f.metadata["toolnames"]
        lines = len(caplog.records)
        f.error = tflow.terr()
        tn.error(f)  # after the answer: judged already, nothing to add
        assert f.metadata["toolnames"] == recorded
        assert len(caplog.records) == lines


def test_unflagged_flows_and_flows_that_are_not_llm_calls_are_not_saved(tmp_path):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path)) as (tctx, tn):
        for f in (
            chat_flow(CLEAN),
            chat_flow(MASTRA, path=b"/v1/embeddings"),
            chat_flow(MASTRA, method=b"GET"),
        ):
            tn.request(f)
            tn.response(provider_error(f))
    assert read_flows(path) == []


def test_the_save_file_is_created_readable_by_its_owner_only(tmp_path):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path)) as (tctx, tn):
        pass
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_an_existing_save_file_others_can_read_is_kept_but_warned_about(tmp_path, caplog):
    path = tmp_path / "flagged.mitm"
    path.touch()
    path.chmod(0o644)
    with running(toolnames_save=str(path)):
        pass
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert "readable or writable by others (mode 644)" in caplog.text


def test_reopening_the_save_file_appends_to_it(tmp_path):
    path = tmp_path / "flagged.mitm"
    for _ in range(2):
        with running(toolnames_save=str(path)) as (tctx, tn):
            f = chat_flow(MASTRA)
            tn.request(f)
            tn.response(provider_error(f))
    assert len(read_flows(path)) == 2


def test_clearing_toolnames_save_stops_saving(tmp_path):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path)) as (tctx, tn):
        tctx.configure(tn, toolnames_save=None)
        assert tn.writer is None
        f = chat_flow(MASTRA)
        tn.request(f)
        tn.response(provider_error(f))
    assert read_flows(path) == []


SECRET_REQUEST_HEADERS = [
    "authorization",
    "proxy-authorization",
    "api-key",
    "x-api-key",
    "x-goog-api-key",
    "x-amz-security-token",
    "cookie",
]
SECRET_QUERY = [
    "key",
    "api_key",
    "api-key",
    "apikey",
    "access_token",
    "token",
    "sig",
    "x-amz-security-token",
    "x-amz-signature",
    "x-amz-credential",
    # Query names are matched case-insensitively, as AWS and Azure spell them.
    "X-Amz-Signature",
    "Key",
]


def secret_flow() -> http.HTTPFlow:
    query = "&".join(f"{name}=secret-{i}" for i, name in enumerate(SECRET_QUERY))
    f = chat_flow(MASTRA, path=CHAT_PATH + b"?api-version=2024-10-21&" + query.encode())
    for name in SECRET_REQUEST_HEADERS:
        f.request.headers[name] = f"secret-{name}"
    f.request.headers.add("cookie", "second=secret")
    f.request.headers["user-agent"] = "OpenAI/Python 3.57.0"
    return f


def test_saved_copies_have_every_credential_redacted_and_the_live_flow_keeps_them(tmp_path):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path)) as (tctx, tn):
        f = secret_flow()
        tn.request(f)
        tn.response(provider_error(f))
    (saved,) = read_flows(path)
    for name in SECRET_REQUEST_HEADERS:
        assert saved.request.headers.get_all(name) == ["REDACTED-by-toolnames"] * len(
            f.request.headers.get_all(name)
        )
        assert f.request.headers[name].startswith("secret")
    assert saved.request.headers.get_all("cookie") == ["REDACTED-by-toolnames"] * 2
    assert saved.response.headers["set-cookie"] == "REDACTED-by-toolnames"
    assert f.response.headers["set-cookie"] == "s=1"
    for name in SECRET_QUERY:
        assert saved.request.query[name] == "REDACTED-by-toolnames"
        assert f.request.query[name].startswith("secret-")
    assert "secret" not in saved.request.url
    # Everything else is kept.
    assert saved.request.query["api-version"] == "2024-10-21"
    assert saved.request.headers["user-agent"] == "OpenAI/Python 3.57.0"
    assert saved.request.content == f.request.content
    assert saved.id == f.id


def test_with_redaction_off_flows_are_saved_as_they_are(tmp_path):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path), toolnames_redact=False) as (tctx, tn):
        f = secret_flow()
        tn.request(f)
        tn.response(provider_error(f))
    (saved,) = read_flows(path)
    assert saved.request.headers == f.request.headers
    assert saved.request.url == f.request.url


# --- bad input -------------------------------------------------------------------------------------


def gzip_body(f: http.HTTPFlow, body: dict) -> None:
    f.request.headers["content-encoding"] = "gzip"
    f.request.content = json.dumps(body).encode()


def garbled_gzip(f: http.HTTPFlow) -> None:
    f.request.headers["content-encoding"] = "gzip"
    f.request.raw_content = b"this is not gzip"


def streamed(f: http.HTTPFlow) -> None:
    f.request.raw_content = None


BAD_INPUTS = [
    (
        "not json",
        lambda f: setattr(f.request, "text", "tools: [search.web]"),
        "the body is not JSON",
    ),
    (
        "a JSON array",
        lambda f: setattr(f.request, "text", '[{"tools": []}]'),
        "the body is an array, not a JSON object",
    ),
    (
        "a JSON string",
        lambda f: setattr(f.request, "text", '"tools"'),
        "the body is a string, not a JSON object",
    ),
    (
        "invalid UTF-8",
        lambda f: setattr(f.request, "content", b'{"tools": "\xff"}'),
        "the body is not JSON",
    ),
    ("invalid gzip", garbled_gzip, "its content-encoding could not be decoded"),
    (
        "100000 levels of [",
        lambda f: setattr(f.request, "text", "[" * 100_000),
        "the JSON is nested too deeply to read",
    ),
    (
        "deep nesting inside tools",
        lambda f: setattr(f.request, "text", '{"tools": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        "the JSON is nested too deeply to read",
    ),
    ("a streamed request", streamed, "the body was streamed through the proxy"),
]


@pytest.mark.parametrize("mode", ["observe", "fix", "block"])
@pytest.mark.parametrize("setup,says", [b[1:] for b in BAD_INPUTS], ids=[b[0] for b in BAD_INPUTS])
def test_a_body_that_cannot_be_read_is_flagged_unreadable_and_passed_on(setup, says, mode, caplog):
    with running(toolnames_mode=mode) as (tctx, tn):
        f = chat_flow()
        setup(f)
        sent = f.request.raw_content
        tn.request(f)
        tn.response(provider_error(f))
    (finding,) = f.metadata["toolnames"]["findings"]
    assert (finding["code"], finding["severity"], finding["path"]) == (
        "request-unreadable",
        "warning",
        "",
    )
    assert finding["message"].startswith("toolnames could not read this request: " + says)
    assert f.request.raw_content == sent
    assert f.response.status_code == 400  # the provider's answer, not a block
    assert f.marked == ":warning:"
    assert len(warnings_logged(caplog)) == 1
    assert_nothing_went_wrong(caplog)


def test_a_gzip_body_is_checked_after_decoding():
    with running() as (tctx, tn):
        f = chat_flow()
        gzip_body(f, BAD_TOOL)
        tn.request(f)
    assert [x["code"] for x in f.metadata["toolnames"]["findings"]] == ["name-invalid-chars"]


@pytest.mark.parametrize(
    "method,path",
    [
        (b"GET", CHAT_PATH),
        (b"PUT", CHAT_PATH),
        (b"POST", b"/v1/embeddings"),
        (b"POST", b"/v1/chat/completions/extra"),
        (b"POST", b"/v1/models"),
    ],
)
@pytest.mark.parametrize("mode", ["observe", "fix", "block"])
def test_other_methods_and_paths_are_ignored(method, path, mode, caplog):
    with running(toolnames_mode=mode) as (tctx, tn):
        f = chat_flow(MASTRA, method=method, path=path)
        sent = f.request.raw_content
        tn.request(f)
        tn.response(provider_error(f))
    assert f.request.raw_content == sent
    assert "toolnames" not in f.metadata
    if method == b"POST":
        # Never silent: the tools it carries went unchecked, and that is said, once.
        (line,) = warnings_logged(caplog)
        assert "toolnames did not check this request: it carries tools" in line
    else:
        assert warnings_logged(caplog) == []


@pytest.mark.parametrize(
    "path",
    [
        b"/v1/chat/completions?api-version=1",
        b"/openai/deployments/gpt/chat/completions/",
        b"/api/v1/chat/completions",
    ],
)
def test_chat_completions_is_recognised_under_any_prefix_and_query(path):
    with running() as (tctx, tn):
        f = chat_flow(MASTRA, path=path)
        tn.request(f)
    assert f.metadata["toolnames"]["api"] == "openai-chat"


def test_a_body_without_tool_keys_is_left_without_annotation():
    with running(toolnames_mode="block") as (tctx, tn):
        f = chat_flow({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]})
        tn.request(f)
    assert "toolnames" not in f.metadata and f.response is None


def test_a_name_with_a_lone_surrogate_still_lets_the_flow_be_saved(tmp_path, caplog):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path)) as (tctx, tn):
        f = chat_flow('{"tools": [{"type": "function", "function": {"name": "bad\\ud800"}}]}')
        tn.request(f)
        tn.response(provider_error(f))
    (saved,) = read_flows(path)
    assert "bad\\ud800" in saved.metadata["toolnames"]["findings"][0]["message"]
    assert "bad\\ud800" in saved.comment
    assert_nothing_went_wrong(caplog)


# --- reading saved flows back ----------------------------------------------------------------------


def test_flows_read_back_show_the_same_annotations_as_the_live_run(tmp_path):
    path = tmp_path / "flagged.mitm"
    bodies = [MASTRA, BAD_TOOL, {"tools": [fn("a"), fn("a")]}, "not json"]
    with running(toolnames_save=str(path)) as (tctx, tn):
        live = [chat_flow(body) for body in bodies]
        for f in live:
            tn.request(f)
            tn.response(provider_error(f))
    with open(path, "rb") as fo:
        back = list(io.FlowReader(fo).stream())
    assert [f.live for f in back] == [False] * len(bodies)
    for f in back:
        f.marked, f.comment = "", ""
    with running(toolnames_mode="block") as (tctx, tn):
        for f in back:
            tn.request(f)
            tn.response(f)
    for before, after in zip(live, back, strict=True):
        assert after.metadata["toolnames"]["findings"] == before.metadata["toolnames"]["findings"]
        assert (after.marked, after.comment) == (before.marked, before.comment)
        assert after.response.status_code == 400  # still the provider's answer


def test_flows_read_back_without_metadata_are_analysed_afresh(tmp_path):
    path = tmp_path / "flagged.mitm"
    with running(toolnames_save=str(path)) as (tctx, tn):
        f = chat_flow(MASTRA)
        tn.request(f)
        tn.response(provider_error(f))
    (back,) = read_flows(path)
    back.metadata.clear()
    back.marked, back.comment = "", ""
    with running(toolnames_mode="fix") as (tctx, tn):
        tn.request(back)
    assert back.metadata["toolnames"]["findings"] == f.metadata["toolnames"]["findings"]
    assert back.metadata["toolnames"]["action"] == "observed"  # not live: never fixed
    assert back.request.content == f.request.content
    assert (back.marked, back.comment) == (f.marked, f.comment)


def test_the_log_line_never_carries_a_key_from_the_query_string(caplog):
    caplog.set_level(logging.INFO)
    with running() as (tctx, tn):
        f = chat_flow(BAD_TOOL, path=b"/v1/chat/completions?api-version=1&key=sekrit-value")
        tn.request(f)
        tn.response(provider_error(f))
    (line,) = warnings_logged(caplog)
    assert "sekrit-value" not in line
    assert "api-version=1&key=REDACTED-by-toolnames" in line


def test_a_rule_override_with_a_port_matches_that_port_only():
    with running(toolnames_rule=["localhost:4000=portable"]) as (tctx, tn):
        flows = {}
        for port in (4000, 4001):
            f = chat_flow({"tools": [fn("get-weather")]}, host="localhost")
            f.request.port = port
            tn.request(f)
            flows[port] = f
    assert flows[4000].metadata["toolnames"]["rule"] == "portable"
    assert "toolnames" not in flows[4001].metadata


# --- one answer: the live addon, the scanner and the content view agree ----------------------

OFFERING_OTHER_TOOL = {
    "openai-chat": {"tools": [{"type": "function", "function": {"name": "other_tool"}}]},
    "openai-responses": {"tools": [{"type": "function", "name": "other_tool"}]},
    "anthropic-messages": {"tools": [{"name": "other_tool", "input_schema": {"type": "object"}}]},
    "gemini": {"tools": [{"functionDeclarations": [{"name": "other_tool"}]}]},
    "bedrock-converse": {"toolConfig": {"tools": [{"toolSpec": {"name": "other_tool"}}]}},
    "cohere-chat": {"tools": [{"type": "function", "function": {"name": "other_tool"}}]},
    "bedrock-invoke": {
        "anthropic_version": "bedrock-2023-05-31",
        "tools": [{"name": "other_tool", "input_schema": {"type": "object"}}],
    },
    "ollama": {"tools": [{"type": "function", "function": {"name": "other_tool"}}]},
}
REQUESTS = {
    "offers another tool": lambda api: json.dumps(OFFERING_OTHER_TOOL[api]).encode(),
    "offers no tools": lambda api: b'{"messages": []}',
    "is not JSON": lambda api: b"not json",
    "is an array": lambda api: b"[1, 2]",
}
FINDING_LINE = re.compile(r"^  \S? (?:error|warning|info)\s+(\S+)(?:\s+at (\S+))?$", re.M)


def live_findings(api: str, path: str, request: bytes, content_type: str, answer: bytes):
    """What the addon records for a live flow, its streamed answer read chunk by chunk."""
    tn = ToolNames()
    with taddons.context(tn):
        f = tflow.tflow(req=tutils.treq(method=b"POST", path=path.encode(), content=request))
        f.live = True
        tn.request(f)
        f.response = http.Response.make(200, answer, {"content-type": content_type})
        tn.responseheaders(f)
        if callable(f.response.stream):
            for i in range(0, len(answer), 97):
                f.response.stream(answer[i : i + 97])
            f.response.stream(b"")
        tn.response(f)
    recorded = FlowRecord.from_metadata(f.metadata.get("toolnames"))
    return sorted((x.code, x.path) for x in recorded.findings) if recorded else []


def view_findings(api: str, path: str, request: bytes, content_type: str, answer: bytes):
    """What the content view shows for the same flow, read from its text."""
    f = tflow.tflow(req=tutils.treq(method=b"POST", path=path.encode(), content=request))
    f.response = http.Response.make(200, answer, {"content-type": content_type})
    text = ""
    for message in (f.request, f.response):
        meta = contentviews.Metadata(flow=f, http_message=message, content_type=content_type)
        text += ToolnamesView().prettify(message.content, meta)
    return sorted((code, where or "") for code, where in FINDING_LINE.findall(text))


@pytest.mark.parametrize("request_kind", sorted(REQUESTS))
@pytest.mark.parametrize(
    "fixture",
    sorted(p.name for p in RESPONSES_DIR.iterdir() if p.suffix in RESPONSE_SUFFIXES),
)
def test_the_addon_the_scanner_and_the_view_give_one_answer(fixture, request_kind):
    api = response_api(fixture)
    content_type, answer = response_body(RESPONSES_DIR / fixture)
    # A path the format's record gives; the answer's framing comes from its content type.
    path = FORMATS[api].example_paths[0]
    request = REQUESTS[request_kind](api)

    live = live_findings(api, path, request, content_type, answer)
    scanned = inspect_exchange("POST", "api.example.com", path, request, 200, content_type, answer)
    assert live == sorted((x.code, x.path) for x in scanned.findings)
    if request_kind in ("is not JSON", "is an array"):
        assert [code for code, _ in live] == ["request-unreadable"]  # the answer is not judged
    else:
        assert "response-unknown-tool" in [code for code, _ in live]
    if hasattr(contentviews, "Contentview"):  # the view needs mitmproxy 12
        assert view_findings(api, path, request, content_type, answer) == live


# --- fix mode renames what the rule rejects, and restores the answer --------------------------


def renaming_flow(tn, answer: bytes, content_type: str, chunk: int = 0) -> http.HTTPFlow:
    """A live flow through the addon in fix mode: a request offering MCP-style names, and
    the provider's ``answer`` (streamed in ``chunk``-byte pieces when ``chunk``)."""
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [fn("github.create_issue"), fn("ok_tool")],
        "tool_choice": named("github.create_issue"),
    }
    f = tflow.tflow(
        req=tutils.treq(
            method=b"POST", path=b"/v1/chat/completions", content=json.dumps(body).encode()
        )
    )
    f.live = True
    tn.request(f)
    f.response = http.Response.make(200, answer, {"content-type": content_type})
    tn.responseheaders(f)
    if chunk:
        out = b"".join(
            sent_on(f.response.stream, answer[i : i + chunk]) for i in range(0, len(answer), chunk)
        )
        f.response.content = out + sent_on(f.response.stream, b"")
    tn.response(f)
    return f


ALIAS = (
    "github_create_issue_" + __import__("hashlib").sha256(b"github.create_issue").hexdigest()[:8]
)


@pytest.mark.parametrize("accepted", ["gzip, deflate, br, zstd", "br", None])
def test_fix_mode_asks_for_an_uncompressed_answer_when_it_renames(accepted):
    # A compressed stream cannot have its names given back without re-compressing it; no
    # Accept-Encoding at all admits any coding, so it is set then too.
    tn = ToolNames()
    with taddons.context(tn) as tctx:
        tctx.configure(tn, toolnames_mode="fix")
        body = {"messages": [], "tools": [fn("github.create_issue")]}
        f = tflow.tflow(req=tutils.treq(method=b"POST", path=b"/v1/chat/completions"))
        f.request.content = json.dumps(body).encode()
        if accepted is None:
            f.request.headers.pop("accept-encoding", None)
        else:
            f.request.headers["accept-encoding"] = accepted
        f.live = True
        tn.request(f)
    assert f.request.headers["accept-encoding"] == "identity"
    meta = f.metadata["toolnames"]
    assert meta["accept_encoding"] == {"from": accepted or "", "to": "identity"}
    assert f.comment.endswith("; asked for an uncompressed answer")
    assert FlowRecord.from_metadata(meta).accept_encoding_sent == (accepted or "")


@pytest.mark.parametrize("mode,body", [("observe", None), ("fix", "choice only")])
def test_the_accept_encoding_is_left_alone_unless_names_must_come_back(mode, body):
    # Observe mode changes nothing; a fix of the choice alone gives no name back.
    tn = ToolNames()
    with taddons.context(tn) as tctx:
        tctx.configure(tn, toolnames_mode=mode)
        f = chat_flow(MASTRA)
        f.request.headers["accept-encoding"] = "gzip, br"
        tn.request(f)
        tn.response(provider_error(f))
    assert f.request.headers["accept-encoding"] == "gzip, br"
    assert "accept_encoding" not in f.metadata["toolnames"]


@pytest.mark.parametrize("chunk", [0, 1, 7, 1000])
def test_fix_mode_sends_aliases_and_the_app_gets_its_own_names_back(chunk):
    tn = ToolNames()
    with taddons.context(tn) as tctx:
        tctx.configure(tn, toolnames_mode="fix")
        call = {"id": "c0", "type": "function", "function": {"name": ALIAS, "arguments": "{}"}}
        if chunk:
            events = [
                {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **call}]}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            ]
            answer = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
            content_type = "text/event-stream"
        else:
            answer = json.dumps({"choices": [{"message": {"tool_calls": [call]}}]}).encode()
            content_type = "application/json"
        f = renaming_flow(tn, answer, content_type, chunk)
    sent = json.loads(f.request.content)
    assert [t["function"]["name"] for t in sent["tools"]] == [ALIAS, "ok_tool"]
    assert sent["tool_choice"]["function"]["name"] == ALIAS
    assert f.response.content == answer.replace(ALIAS.encode(), b"github.create_issue")
    meta = f.metadata["toolnames"]
    assert meta["action"] == "fixed" and meta["restored"] == 1
    assert [(x["from"], x["to"], x["rewrite"]) for x in meta["fixes"]] == [
        ("github.create_issue", ALIAS, "alias")
    ] * 2
    assert "response-unknown-tool" not in [x["code"] for x in meta["findings"]]
    assert f.comment.startswith(
        f"toolnames fixed renamed 'github.create_issue' → '{ALIAS}' (2 places); restored 1 name(s)"
    )


@pytest.mark.parametrize("sized", [False, True])
def test_fix_mode_gives_names_back_in_a_gzip_stream_and_sends_it_on_uncompressed(sized):
    # A provider that compresses although asked for identity (or a signed request, whose
    # Accept-Encoding is signed): the stream is decoded, and its headers say so.
    tn = ToolNames()
    with taddons.context(tn) as tctx:
        tctx.configure(tn, toolnames_mode="fix")
        call = {"id": "c0", "type": "function", "function": {"name": ALIAS, "arguments": "{}"}}
        event = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **call}]}}]}
        plain = b"data: " + json.dumps(event).encode() + b"\n\ndata: [DONE]\n\n"
        packed = gzip.compress(plain)
        body = {"messages": [], "tools": [fn("github.create_issue")]}
        f = tflow.tflow(req=tutils.treq(method=b"POST", path=b"/v1/chat/completions"))
        f.request.content = json.dumps(body).encode()
        f.live = True
        tn.request(f)
        headers = {"content-type": "text/event-stream", "content-encoding": "gzip"}
        if sized:
            headers["content-length"] = str(len(packed))
        f.response = http.Response.make(200, b"", headers)
        f.response.raw_content = None
        tn.responseheaders(f)
        assert "content-encoding" not in f.response.headers
        assert "content-length" not in f.response.headers
        out = b"".join(
            sent_on(f.response.stream, packed[i : i + 9]) for i in range(0, len(packed), 9)
        )
        out += sent_on(f.response.stream, b"")
        tn.response(f)
    assert out == plain.replace(ALIAS.encode(), b"github.create_issue")
    meta = f.metadata["toolnames"]
    assert meta["answer_decoded"] == "gzip" and meta["restored"] == 1
    assert "gave the names back inside the gzip stream, sent on uncompressed" in f.comment


def test_observe_mode_renames_nothing():
    tn = ToolNames()
    with taddons.context(tn):
        answer = json.dumps({"choices": [{"message": {"content": "hi"}}]}).encode()
        f = renaming_flow(tn, answer, "application/json")
    assert b"github.create_issue" in f.request.content
    assert f.metadata["toolnames"]["action"] == "observed"


# --- the provider's verdict: rejections heard, rules that drifted ------------------------------

# OpenAI's answer to a bad name (https://github.com/run-llama/llama_index/issues/16093).
REJECTED_SEARCH_WEB = json.dumps(
    {
        "error": {
            "message": "Invalid 'tools[1].function.name': string does not match pattern. "
            "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
            "type": "invalid_request_error",
            "param": "tools[1].function.name",
            "code": "invalid_value",
        }
    }
)


def answered(f: http.HTTPFlow, status: int, body: str | bytes, content_type: str, tn) -> None:
    f.response = http.Response.make(status, body, {"content-type": content_type})
    tn.responseheaders(f)
    if callable(f.response.stream):
        raw = body.encode() if isinstance(body, str) else body
        f.response.stream(raw)
        f.response.stream(b"")
    tn.response(f)


def found_codes(f: http.HTTPFlow) -> list[tuple[str, str]]:
    return [(x["code"], x["path"]) for x in f.metadata["toolnames"]["findings"]]


def test_a_rejection_toolnames_predicted_is_confirmed_live(caplog):
    caplog.set_level(logging.INFO)
    with running() as (tctx, tn):
        f = chat_flow(BAD_TOOL)
        tn.request(f)
        answered(f, 400, REJECTED_SEARCH_WEB, "application/json", tn)
    assert found_codes(f) == [
        ("name-invalid-chars", "tools[1].function.name"),
        ("provider-rejected", "tools[1].function.name"),
    ]
    meta = f.metadata["toolnames"]
    assert meta["findings"][1]["message"].endswith(
        "toolnames had predicted it (name-invalid-chars)"
    )
    assert meta["rejected"] == [
        {
            "path": "tools[1].function.name",
            "name": "search.web",
            "text": json.loads(REJECTED_SEARCH_WEB)["error"]["message"],
            "tied": True,
        }
    ]
    assert len(warnings_logged(caplog)) == 1


def test_a_rejection_toolnames_missed_is_a_disagreement_with_the_hosts_rule(caplog):
    caplog.set_level(logging.INFO)
    # A gateway set to gemini's rule, which accepts the dot its upstream rejects.
    with running(toolnames_rule=["gateway.example=gemini"]) as (tctx, tn):
        f = chat_flow(BAD_TOOL, host="gateway.example")
        tn.request(f)
        answered(f, 400, REJECTED_SEARCH_WEB, "application/json", tn)
    assert found_codes(f) == [
        ("provider-rejected", "tools[1].function.name"),
        ("rule-disagrees", "tools[1].function.name"),
    ]
    (line,) = warnings_logged(caplog)
    assert (
        "toolnames error: provider-rejected: the provider rejected tools[1].function.name" in line
    )
    disagrees = f.metadata["toolnames"]["findings"][1]
    assert disagrees["rule"] == "gemini"
    assert "rule gemini disagrees with gateway.example" in disagrees["message"]
    assert f.marked == ":warning:"


def test_a_false_alarm_is_a_disagreement_on_the_accepted_answer():
    with running() as (tctx, tn):
        f = chat_flow(BAD_TOOL, host="localhost")
        tn.request(f)
        answered(f, 200, json.dumps({"choices": []}), "application/json", tn)
    assert found_codes(f) == [
        ("name-invalid-chars", "tools[1].function.name"),
        ("rule-disagrees", "tools[1].function.name"),
    ]
    assert (
        "but the provider accepted the request (HTTP 200)"
        in (f.metadata["toolnames"]["findings"][1]["message"])
    )


def test_a_streamed_answer_counts_as_accepted_once_its_first_event_arrived():
    with running() as (tctx, tn):
        f = chat_flow(BAD_TOOL)
        tn.request(f)
        f.response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
        tn.responseheaders(f)
        f.response.stream(b'data: {"choices": [{"delta": {"content": "hi"}}]}\n\n')
        tn.error(f)  # the stream broke off after its first event
    assert ("rule-disagrees", "tools[1].function.name") in found_codes(f)


def test_fix_and_block_modes_hear_no_drift_in_what_they_changed():
    with running(toolnames_mode="fix") as (tctx, tn):
        f = chat_flow(BAD_TOOL)
        tn.request(f)  # renamed: the provider never saw 'search.web'
        answered(f, 200, json.dumps({"choices": []}), "application/json", tn)
    assert "rule-disagrees" not in [code for code, _ in found_codes(f)]
    with running(toolnames_mode="block") as (tctx, tn):
        f = chat_flow(BAD_TOOL)
        tn.request(f)
        tn.response(f)  # toolnames' own 400, never the provider's
    assert "provider-rejected" not in [code for code, _ in found_codes(f)]


VERDICTS = {
    "a confirmed rejection": ("openai", 400, REJECTED_SEARCH_WEB),
    "a missed rejection": ("gemini", 400, REJECTED_SEARCH_WEB),
    "a false alarm": ("openai", 200, json.dumps({"choices": []})),
}


@pytest.mark.parametrize("verdict", sorted(VERDICTS))
def test_the_addon_the_scanner_and_the_view_hear_the_provider_alike(verdict):
    rule, status, answer = VERDICTS[verdict]
    overrides = [f"api.example.com={rule}"]
    request = json.dumps(BAD_TOOL).encode()
    with running(toolnames_rule=overrides) as (tctx, tn):
        f = chat_flow(BAD_TOOL, host="api.example.com")
        tn.request(f)
        answered(f, status, answer, "application/json", tn)
        live = sorted(found_codes(f))
        scanned = inspect_exchange(
            "POST",
            "api.example.com",
            "/v1/chat/completions",
            request,
            status,
            "application/json",
            answer.encode(),
            tuple(parse_rule_override(o) for o in overrides),
        )
        assert live == sorted((x.code, x.path) for x in scanned.findings)
        assert "rule-disagrees" in [code for code, _ in live] or verdict == "a confirmed rejection"
        if hasattr(contentviews, "Contentview"):  # the view needs mitmproxy 12
            f.metadata.clear()  # read afresh, as for a flow saved without a record
            text = ""
            for message in (f.request, f.response):
                meta = contentviews.Metadata(
                    flow=f, http_message=message, content_type="application/json"
                )
                text += ToolnamesView().prettify(message.content, meta)
            shown = sorted((code, where or "") for code, where in FINDING_LINE.findall(text))
            assert shown == live


# --- never silent: tools sent to a path no format claims -----------------------------------------

# Cohere's v1 chat: no format reads it (v2 is cohere-chat).
COHERE_TOOLS = {"model": "command-r", "tools": [{"name": "a.b", "parameter_definitions": {}}]}


def unclaimed_flow(path: bytes, body: object, host: str = "api.cohere.com") -> http.HTTPFlow:
    return chat_flow(body, path=path, host=host)


@pytest.mark.parametrize("mode", ["observe", "fix", "block"])
def test_tools_sent_to_a_path_no_format_claims_are_said_unchecked_once_per_host_and_path(
    mode, caplog
):
    caplog.set_level(logging.WARNING)
    tn = ToolNames()
    with taddons.context(tn) as tctx:
        tctx.configure(tn, toolnames_mode=mode)
        sent = [
            unclaimed_flow(b"/v1/chat", COHERE_TOOLS),
            unclaimed_flow(b"/v1/chat?stream=1", COHERE_TOOLS),  # same path: not said again
            unclaimed_flow(b"/v1/chat", COHERE_TOOLS, host="other.example"),
            unclaimed_flow(b"/api/v1/chat", {"tools": [{"function": {"name": "x"}}]}),
            unclaimed_flow(b"/model/m/invoke", {"toolConfig": {"tools": [{"toolSpec": {}}]}}),
        ]
        before = [f.request.content for f in sent]
        for f in sent:
            tn.request(f)
    lines = warnings_logged(caplog)
    assert [line.split(":", 1)[0] for line in lines] == [
        "POST api.cohere.com/v1/chat",
        "POST other.example/v1/chat",
        "POST api.cohere.com/api/v1/chat",
        "POST api.cohere.com/model/m/invoke",
    ]
    assert 'it carries tools ("toolConfig")' in lines[-1]
    for f, content in zip(sent, before, strict=True):
        # Every such flow says so, logged or not; none is changed or answered.
        assert f.metadata["toolnames_unchecked"]["reason"] == f.comment
        assert f.comment.startswith("toolnames did not check this request: it carries tools")
        assert f.marked == ":grey_question:"
        assert f.request.content == content and f.response is None
        assert "toolnames" not in f.metadata
    assert_nothing_went_wrong(caplog)


@pytest.mark.parametrize(
    "method, path, body",
    [
        (b"POST", b"/v1/chat", {"model": "command-a", "messages": []}),  # no tools
        (b"POST", b"/v1/chat", {"tools": []}),
        (b"POST", b"/upload", "tools=a&functions=b"),
        (b"PUT", b"/v1/chat", COHERE_TOOLS),
        (b"GET", b"/v1/chat", None),
    ],
)
def test_a_request_without_tools_to_another_path_stays_quiet(method, path, body, caplog):
    caplog.set_level(logging.WARNING)
    tn = ToolNames()
    with taddons.context(tn):
        f = chat_flow(body, method=method, path=path, host="api.cohere.com")
        tn.request(f)
    assert warnings_logged(caplog) == []
    assert not f.marked and not f.comment and f.metadata == {}


def test_a_users_own_marker_and_comment_are_kept_on_an_unchecked_flow():
    tn = ToolNames()
    with taddons.context(tn):
        f = unclaimed_flow(b"/v1/chat", COHERE_TOOLS)
        f.marked, f.comment = ":star:", "mine"
        tn.request(f)
    assert (f.marked, f.comment) == (":star:", "mine")
    assert "toolnames_unchecked" in f.metadata


def test_an_unclaimed_request_is_not_said_when_toolnames_is_off_or_filtered_out(caplog):
    caplog.set_level(logging.WARNING)
    tn = ToolNames()
    with taddons.context(tn) as tctx:
        tctx.configure(tn, toolnames_mode="off")
        off = unclaimed_flow(b"/v1/chat", COHERE_TOOLS)
        tn.request(off)
        tctx.configure(tn, toolnames_mode="observe", toolnames_filter="~d api.openai.com")
        filtered = unclaimed_flow(b"/v1/chat", COHERE_TOOLS)
        tn.request(filtered)
    assert warnings_logged(caplog) == []
    assert off.metadata == {} and filtered.metadata == {}
