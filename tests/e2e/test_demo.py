"""scripts/demo, run as a user runs it: its own set-up, observe / fix / block, the saved flows."""

import subprocess
from pathlib import Path

import pytest

from tests.testkit import REPO_ROOT

# The demo drives the openai SDK from .venv, whichever venv runs pytest: once is enough.
pytestmark = [pytest.mark.e2e, pytest.mark.needs_sdk]

DEMO_TIMEOUT = 180


def processes_mentioning(text: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            data = cmdline.read_bytes()
        except OSError:
            continue  # the process ended meanwhile
        if text.encode() in data:
            found.append(data.replace(b"\0", b" ").decode(errors="replace"))
    return found


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("demo")
    result = subprocess.run(
        [str(REPO_ROOT / "scripts" / "demo"), "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT,
    )
    return result, out


def test_demo_exits_0_with_every_step_as_described(demo):
    result, _ = demo

    assert result.returncode == 0, result.stdout + result.stderr
    assert "✗" not in result.stdout
    assert "demo OK:" in result.stdout


@pytest.mark.parametrize(
    "line",
    [
        # observe: the finding in mitmdump's log, the provider's own rejection, exact bytes.
        "== 1/5 observe:",
        "mitmdump log: toolnames error: choice-not-in-tools: tool_choice.function.name "
        "'search.web' (10 chars) names no offered tool; offered: 'search_web'",
        "✓ the provider rejected it: Tool choice 'search.web' not found in 'tools' parameter.",
        "✓ the provider got Mastra's request as sent (tool_choice 'search.web')",
        "bytes the SDK sent",
        # fix: the rewrite, and Mastra's forced tool call running end to end.
        "== 2/5 fix:",
        "mitmdump log: toolnames fixed tool_choice.function.name 'search.web' → 'search_web'",
        '✓ the forced call search_web ran: {"forecast": "sunny", "city": "Paris", "tempC": 20}',
        "✓ the provider got tool_choice 'search_web', then the tool's result",
        '✓ 200 OK, tool call search_web({"city":"Paris"})',
        "✓ the provider got the SDK's bytes with only the forced name changed",
        # block: the toolnames 400 in the provider's error shape; nothing reaches the provider.
        "== 3/5 block:",
        "mitmdump log: toolnames blocked: choice-not-in-tools:",
        "✓ Mastra failed with the toolnames error: toolnames: tool_choice.function.name",
        "✓ BadRequestError, HTTP 400, code 'choice-not-in-tools': toolnames:",
        "✓ the provider received nothing (0 requests)",
        # renaming: the provider rejects the MCP-style name, fix mode makes the app work.
        "== 4/5 renaming:",
        "✓ the provider rejected the name: Invalid 'tools[0].function.name': string does not "
        "match pattern.",
        "mitmdump log: toolnames fixed renamed 'github.create_issue' → 'github_create_issue_",
        "✓ the app ran its tool under its own name, 'github.create_issue', and answered \"done\"",
        "✓ the provider saw only names it accepts (get_weather, github_create_issue_",
        # MCP: toolnames in front of the stand-in MCP server, the mcp SDK's client through it.
        "== 5/5 mcp:",
        "mitmdump log: toolnames warning: mcp-name-rejected: MCP tool name 'github.create_issue' "
        "is rejected by the rules of openai,",
        "mitmdump log: toolnames warning: mcp-call-unlisted: tools/call of 'delete_repo', which "
        "this MCP session never listed",
        "✓ toolnames named the three names providers reject; the client got the server's",
        "mitmdump log: toolnames fixed renamed 'github.create_issue' → 'github_create_issue_e877a647'",
        "✓ the client lists only names OpenAI's rule accepts (aliases for the three others)",
        "✓ the call of github_create_issue_e877a647 ran the server's own tool: github.create_issue "
        'ran with {"text": "Paris"}',
        # the saved flows, and how to look at them.
        "✓ 15 flows (5 observed, 8 fixed, 2 blocked), each with its response",
        "✓ the API key is redacted in the file; its mode is 600",
    ],
)
def test_demo_output_tells_the_story(demo, line):
    result, _ = demo

    assert line in result.stdout


def test_demo_prints_where_the_flagged_flows_are_and_how_to_read_them(demo):
    result, out = demo

    saved = out / "flagged.mitm"
    assert saved.stat().st_size > 0
    assert f"mitmdump -nr {saved} -s addon/toolnames.py" in result.stdout
    assert f"mitmweb -r {saved}" in result.stdout
    assert f"scripts/scan {saved}" in result.stdout


def test_every_command_the_demo_prints_binds_to_loopback(demo):
    result, _ = demo

    commands = [line for line in result.stdout.splitlines() if " -s addon/toolnames.py" in line]
    # One per mode, two for renaming and two for MCP (observe, fix), two to read the saved flows.
    assert len(commands) == 9
    assert all("--listen-host 127.0.0.1" in command for command in commands), commands


def test_demo_leaves_no_process_behind(demo):
    _, out = demo

    assert processes_mentioning(str(out)) == []
