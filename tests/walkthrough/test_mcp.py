"""The demo's MCP part (walkthrough.mcp): its checks pass only with toolnames in front.

tests/e2e/test_demo.py runs the part through mitmdump; here the client talks to the stand-in
MCP server directly, so each check that needs toolnames must fail, and the one that does
not (the server runs its own tool when called by its own name) must pass.
"""

import sys
from types import SimpleNamespace

import pytest

from harness.processes import ProcessGroup
from standin.mcp_server import DOTTED
from walkthrough import mcp
from walkthrough.steps import Proxy
from walkthrough.steps import Report


def test_the_part_is_left_out_with_a_reason_when_the_sdk_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)

    assert mcp.mcp_available().startswith("the mcp SDK is not installed")


def straight_to(server: str) -> Proxy:
    """A 'proxy' that is no proxy: the server's own URL and an empty log."""
    return Proxy(SimpleNamespace(url=server, log_text=lambda: ""))


@pytest.fixture
def server(tmp_path):
    with ProcessGroup() as group:
        yield mcp.start_mcp_server(group, tmp_path)


@pytest.mark.needs_sdk
def test_without_toolnames_the_observe_checks_fail(server):
    report = Report()

    mcp.mcp_step("observe", straight_to(server), server, report)

    assert report.passed == 0
    assert len(report.failures) == 2
    assert mcp.UNLISTED in report.failures[1]


@pytest.mark.needs_sdk
def test_without_toolnames_the_client_lists_the_servers_names_and_calls_them_as_they_are(
    server, capsys
):
    report = Report()

    mcp.mcp_step("fix", straight_to(server), server, report)

    # No alias is listed, so the step calls the server's own dotted name, which runs.
    assert report.failures == [
        "the client lists only names OpenAI's rule accepts (aliases for the three others)"
    ]
    assert report.passed == 1
    assert f"the call of {DOTTED} ran the server's own tool" in capsys.readouterr().out
