"""toolnames.report as mitmproxy runs it: the command over flows the addon checked."""

import json
import logging

import pytest
from mitmproxy import exceptions
from mitmproxy import http
from mitmproxy.addons import view
from mitmproxy.log import ALERT
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from harness import inprocess
from toolnames_core import FlowRecord


def chat(body: dict, host: str = "api.openai.com") -> http.HTTPFlow:
    f = tflow.tflow(
        req=tutils.treq(
            method=b"POST", scheme=b"https", host=host, port=443, path=b"/v1/chat/completions"
        )
    )
    f.request.headers["content-type"] = "application/json"
    f.request.text = json.dumps(body)
    return f


def tool(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


BAD_NAME = {"messages": [], "tools": [tool("search.web")]}
MASTRA = {
    "messages": [],
    "tools": [tool("search_web")],
    "tool_choice": {"type": "function", "function": {"name": "search.web"}},
}


@pytest.fixture
def running():
    """The addon and mitmproxy's flow view (which resolves @all), configured as at startup."""
    v = view.View()
    with inprocess.running(v) as (tctx, tn):
        yield tctx, tn, v


def checked_flows(tctx, tn) -> list[http.HTTPFlow]:
    """A flagged, a fixed, a blocked and a clean flow, as the addon leaves them."""
    flagged = chat(BAD_NAME)
    tn.request(flagged)
    tctx.configure(tn, toolnames_mode="fix")
    fixed = chat(MASTRA)
    tn.request(fixed)
    tctx.configure(tn, toolnames_mode="block")
    blocked = chat(BAD_NAME, host="openrouter.ai")
    tn.request(blocked)
    clean = chat({"messages": [], "tools": [tool("ok")]})
    tn.request(clean)
    assert [
        FlowRecord.from_metadata(f.metadata.get("toolnames", {})).outcome
        for f in (flagged, fixed, blocked)
    ] == [
        "flagged",
        "fixed",
        "blocked",
    ]
    return [flagged, fixed, blocked, clean]


def test_the_command_logs_the_report_of_all_flows_as_an_alert(running, caplog):
    tctx, tn, v = running
    v.add([*checked_flows(tctx, tn), tflow.ttcpflow()])
    caplog.set_level(logging.INFO)

    tctx.master.commands.execute("toolnames.report @all")

    (record,) = [r for r in caplog.records if r.getMessage().startswith("toolnames report:")]
    assert record.levelno == ALERT
    lines = record.getMessage().splitlines()
    assert lines[0] == (
        "toolnames report: 5 flow(s) selected, 3 inspected by toolnames; 1 flagged, 1 fixed, "
        "1 blocked; findings: 3 errors"
    )
    assert "  by code: name-invalid-chars 2, choice-not-in-tools 1" in lines
    assert "  openrouter.ai: 1 flow(s), 1 flagged: name-invalid-chars 1" in lines


def test_the_command_writes_the_report_as_json_to_a_path(running, tmp_path, caplog):
    tctx, tn, v = running
    flows = checked_flows(tctx, tn)
    v.add(flows)
    target = tmp_path / "report.json"
    caplog.set_level(logging.INFO)

    tctx.master.commands.execute(f"toolnames.report @marked {target}")

    written = json.loads(target.read_text(encoding="utf-8"))
    assert written["selected"] == 3  # the clean flow is not marked
    assert written["outcomes"] == {"flagged": 1, "fixed": 1, "blocked": 1}
    assert [f["id"] for f in written["flows"]] == [f.id for f in flows[:3]]
    assert f"toolnames report written to {target}" in caplog.text


async def test_the_command_counts_observed_flows_still_in_flight(running, caplog):
    tctx, tn, v = running
    in_flight = chat(BAD_NAME)
    tn.request(in_flight)  # inside the event loop, observe mode checks it later
    assert "toolnames" not in in_flight.metadata
    v.add([in_flight])
    caplog.set_level(logging.INFO)

    tctx.master.commands.execute("toolnames.report @all")

    assert "1 inspected by toolnames; 1 flagged" in caplog.text
    assert in_flight.marked


def test_a_path_that_cannot_be_written_is_a_command_error(running, tmp_path):
    tctx, tn, v = running
    with pytest.raises(exceptions.CommandError, match="Cannot write the toolnames report"):
        tn.report(checked_flows(tctx, tn), str(tmp_path))  # a directory


def test_the_path_is_optional_in_the_commands_signature(running):
    tctx, tn, v = running
    assert tctx.master.commands.commands["toolnames.report"].signature_help() == (
        "toolnames.report flows path"
    )
    assert tctx.command(tn.report, "@all") is None  # no path: only the log line
