"""
Claude Code end to end, a closed client: the real CLI from npm (tests/e2e/claude_code, installed
by scripts/test) on Amazon Bedrock (``CLAUDE_CODE_USE_BEDROCK=1``, InvokeModel's AWS event
stream) and on Vertex AI (``CLAUDE_CODE_USE_VERTEX=1``, ``:streamRawPredict``), its base URL on a
real mitmdump (12, and 11 under scripts/test) in reverse mode in front of the stand-in provider,
auth skipped as for an LLM gateway, run with ``claude -p … --output-format json``, given the
stand-in MCP server over stdio (scripts/standin/mcp_server.py --stdio), which serves the names
MCP servers are born with (``github.create_issue``, ``search docs``, 141 characters) and writes
down every call it gets, by its own name.

Claude Code sends an MCP tool as ``mcp__<server>__<tool>``. Up to 1.0.83 it sent the tool's
name as served, which Anthropic's rule (``^[a-zA-Z0-9_-]{1,128}$``, Bedrock's InvokeModel and
Vertex alike) rejects: every run fails with the provider's 400 (shown without toolnames, so the
stand-in is seen to validate). Observe names each culprit and lets the run fail as it would;
fix sends aliases and gives Claude Code its names back in the stream (base64 in Bedrock's
frames), so the run finishes with each MCP tool called under its own name; block answers in
the cloud's error shape and Claude Code reports the error. From 1.0.84 Claude Code replaces
what the rule rejects with ``_`` itself, and (2.1.332) leaves out a tool whose name stays too
long: toolnames has nothing to say there, and says nothing.

The stand-in's model is scripted through ``ANTHROPIC_CUSTOM_HEADERS``: ``x-standin-call:
mcp__standin__*`` calls every offered tool under that prefix, which an alias keeps, then answers
"done" once the tool results come back; requests without such tools (a title) get "hello".
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

import pytest

from standin import mcp_server
from tests.testkit import annotations
from tests.testkit import read_flows

pytestmark = [pytest.mark.needs_sdk, pytest.mark.e2e]

SERVER = "standin"  # the MCP server's key in --mcp-config: the <server> in mcp__<server>__<tool>
PREFIX = f"mcp__{SERVER}__"
# Past 64 once prefixed, within 128: Anthropic's rule takes it (Bedrock's Converse would not).
MID = "list_open_issues_" + "m" * 43
SERVED = (*mcp_server.NAMES, MID)
# What Claude Code up to 1.0.83 sends that Anthropic's rule rejects: a dot, a space, length.
CULPRITS = {
    PREFIX + mcp_server.DOTTED: "name-invalid-chars",
    PREFIX + mcp_server.SPACED: "name-invalid-chars",
    PREFIX + mcp_server.LONG: "name-too-long",
}
PROVIDER_SAYS = re.compile(r"API Error: 400 .*tools\.\d+\.custom\.name: String should")


class Version(NamedTuple):
    """A pinned Claude Code in tests/e2e/claude_code/package.json."""

    version: str
    command: tuple[str, ...]  # relative to the project; node is found on PATH


# The last release that sends MCP names as served (1.0.84 rewrites them; found by running
# each release against the stand-in), run as its package's cli.js under node.
LEGACY = Version("1.0.83", ("node", "node_modules/@anthropic-ai/claude-code/cli.js"))
# The newest release when this was written: a native binary its postinstall puts in place.
CURRENT = Version("2.1.332", ("node_modules/claude-code-current/bin/claude.exe",))


class Provider(NamedTuple):
    name: str
    api: str  # the record's "api" for its requests
    env: dict[str, str]  # Claude Code's variables for it, the base URL left out
    base_url_variable: str
    base_path: str  # what goes after the proxy's URL in that variable
    # How Claude Code shows block mode's answer: Bedrock's {"message"} is read by the AWS
    # SDK into its text; Vertex's is Anthropic's own error envelope, shown whole.
    blocked_shows: str


BEDROCK = Provider(
    "bedrock",
    "bedrock-invoke",
    {
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "CLAUDE_CODE_SKIP_BEDROCK_AUTH": "1",
        "AWS_REGION": "us-east-1",
    },
    "ANTHROPIC_BEDROCK_BASE_URL",
    "",
    "API Error: 400 toolnames: ",
)
VERTEX = Provider(
    "vertex",
    "anthropic-vertex",
    {
        "CLAUDE_CODE_USE_VERTEX": "1",
        "CLAUDE_CODE_SKIP_VERTEX_AUTH": "1",
        "ANTHROPIC_VERTEX_PROJECT_ID": "toolnames-e2e",
        "CLOUD_ML_REGION": "us-east5",
    },
    "ANTHROPIC_VERTEX_BASE_URL",
    "/v1",  # the SDK's default is https://{region}-aiplatform.googleapis.com/v1
    'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"toolnames: ',
)
providers = pytest.mark.parametrize("provider", [BEDROCK, VERTEX], ids=lambda p: p.name)


class Run(NamedTuple):
    result: dict  # Claude Code's --output-format json
    called: list[str]  # the MCP tools the server ran, by their own names, in order


def claude(project: Path, version: Version, provider: Provider, url: str, tmp_path: Path) -> Run:
    """One ``claude -p`` run against ``url``, in a home of its own, with the MCP server."""
    home = tmp_path / f"home-{version.version}"
    work = tmp_path / "work"
    for path in (home, work):
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
    calls = tmp_path / "mcp-calls.jsonl"
    calls.unlink(missing_ok=True)
    server = [sys.executable, "-m", "standin.mcp_server", "--stdio", "--record", str(calls)]
    for name in SERVED:
        server += ["--tool", name]
    config = {"mcpServers": {SERVER: {"type": "stdio", "command": server[0], "args": server[1:]}}}
    config_file = tmp_path / "mcp.json"
    config_file.write_text(json.dumps(config))
    env = {
        # Nothing of this machine's: no credentials, no proxy, no settings, no telemetry.
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        # Current releases on Bedrock hold MCP tools back behind a ToolSearch tool; the names
        # then reach the provider only once the model searched. Sent up front, as 1.0.83 does.
        "ENABLE_TOOL_SEARCH": "false",
        "ANTHROPIC_CUSTOM_HEADERS": f"x-standin-call: {PREFIX}*",
        **provider.env,
        provider.base_url_variable: url + provider.base_path,
    }
    command = [
        *checked(project, version),
        "-p",
        "Open an issue about the weather, using the standin tools.",
        "--mcp-config",
        str(config_file),
        "--strict-mcp-config",
        "--allowedTools",
        f"mcp__{SERVER}",
        "--output-format",
        "json",
    ]
    done = subprocess.run(
        command, cwd=work, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    try:
        result = json.loads(done.stdout)
    except ValueError:
        pytest.fail(
            f"claude {version.version} printed no JSON result (exit {done.returncode}):\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}",
            pytrace=False,
        )
    lines = calls.read_text().splitlines() if calls.exists() else []
    return Run(result, [json.loads(line)["name"] for line in lines])


def offered(standin) -> list[list[str]]:
    """The MCP tools each request the provider got offered, by the names it got."""
    out = []
    for request in standin.requests:
        try:
            body = json.loads(request["body"])
        except ValueError:
            continue
        names = [t.get("name", "") for t in body.get("tools", []) if isinstance(t, dict)]
        if any(n.startswith(PREFIX) for n in names):
            out.append([n for n in names if n.startswith(PREFIX)])
    return out


def findings(saved: Path) -> list[dict]:
    if not saved.exists():
        return []
    return [f for flow in read_flows(saved) for f in flow.metadata["toolnames"]["findings"]]


@functools.cache
def checked(project: Path, version: Version) -> list[str]:
    """The command that runs ``version``, once it answered ``--version`` with its number (a
    missing native binary or a broken install says so here, not as a failed run)."""
    command = [
        shutil.which("node") or "node" if c == "node" else str(project / c) for c in version.command
    ]
    # In a home of its own, like the runs: nothing read from or written to this machine's.
    with tempfile.TemporaryDirectory(prefix="toolnames-claude-version-") as home:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "XDG_CONFIG_HOME": os.path.join(home, ".config"),
            "XDG_CACHE_HOME": os.path.join(home, ".cache"),
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        done = subprocess.run(
            [*command, "--version"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.stdout.startswith(version.version + " "), (
        f"{' '.join(command)} --version: {done.stdout!r} {done.stderr[-500:]!r}"
    )
    return command


ANTHROPIC_RULE = re.compile(r"[a-zA-Z0-9_-]{1,128}")


def toolnames_proxy(mitmdump, binary, mode: str, saved: Path):
    return mitmdump(
        "--set", f"toolnames_mode={mode}", "--set", f"toolnames_save={saved}", binary=binary
    )


def culprits_named(saved: Path) -> dict[str, set[str]]:
    """Each culprit, and the codes of the findings about it, by the place they point at (a
    message shortens a long name)."""
    named: dict[str, set[str]] = {name: set() for name in CULPRITS}
    for flow in read_flows(saved):
        tools = json.loads(flow.request.get_content())["tools"]
        for finding in flow.metadata["toolnames"]["findings"]:
            place = re.fullmatch(r"tools\[(\d+)\]\.name", finding["path"])
            name = tools[int(place[1])]["name"] if place else None
            if name in named:
                named[name].add(finding["code"])
    return named


# -- up to 1.0.83: the names as served ----------------------------------------------------------


@providers
def test_without_toolnames_the_provider_refuses_every_run(
    claude_code_project, standin, provider, tmp_path
):
    run = claude(claude_code_project, LEGACY, provider, standin.url, tmp_path)
    assert run.result["is_error"] is True
    assert PROVIDER_SAYS.search(run.result["result"]), run.result["result"]
    assert run.called == []
    sent = offered(standin)
    assert sent and all(set(CULPRITS) <= set(names) for names in sent)


@providers
def test_observe_names_each_culprit_and_lets_the_run_fail_as_it_would(
    claude_code_project, mitmdump, mitmdump_binary, standin, provider, tmp_path
):
    saved = tmp_path / "flagged.mitm"
    proxy = toolnames_proxy(mitmdump, mitmdump_binary, "observe", saved)
    run = claude(claude_code_project, LEGACY, provider, proxy.url, tmp_path)
    assert run.result["is_error"] is True
    assert PROVIDER_SAYS.search(run.result["result"]), run.result["result"]
    assert run.called == []
    sent = offered(standin)  # observe changed no byte: the provider got the names as sent
    assert sent and all(set(CULPRITS) <= set(names) for names in sent)
    proxy.stop()
    named = culprits_named(saved)
    assert all(CULPRITS[name] in codes for name, codes in named.items()), named
    log = "\n".join(annotations(proxy.log_text()))
    assert PREFIX + mcp_server.DOTTED in log
    # Past 64 but within Anthropic's 128: fine on InvokeModel and Vertex, so not a finding.
    assert not any(MID in f["message"] for f in findings(saved))
    assert any(f["code"] == "provider-rejected" for f in findings(saved))  # its verdict, read
    records = [flow.metadata["toolnames"] for flow in read_flows(saved)]
    assert {r["api"] for r in records} == {provider.api}
    assert all(r["rule"] == "anthropic" for r in records)


@providers
def test_fix_makes_the_run_finish_with_each_mcp_tool_called_under_its_own_name(
    claude_code_project, mitmdump, mitmdump_binary, standin, provider, tmp_path
):
    saved = tmp_path / "fixed.mitm"
    proxy = toolnames_proxy(mitmdump, mitmdump_binary, "fix", saved)
    run = claude(claude_code_project, LEGACY, provider, proxy.url, tmp_path)
    assert run.result["is_error"] is False, run.result
    assert run.result["result"] == "done"
    assert sorted(run.called) == sorted(SERVED)
    sent = offered(standin)
    assert len(sent) >= 2  # the tools, then the tool results
    for names in sent:
        assert all(ANTHROPIC_RULE.fullmatch(n) for n in names), names
        assert PREFIX + MID in names and PREFIX + mcp_server.PLAIN in names  # left as they are
        assert not set(CULPRITS) & set(names)
    proxy.stop()
    records = [flow.metadata["toolnames"] for flow in read_flows(saved)]
    assert records and all(r["action"] == "fixed" for r in records), records


@providers
def test_block_answers_in_the_clouds_error_shape_and_claude_code_reports_it(
    claude_code_project, mitmdump, mitmdump_binary, standin, provider, tmp_path
):
    proxy = toolnames_proxy(mitmdump, mitmdump_binary, "block", tmp_path / "blocked.mitm")
    run = claude(claude_code_project, LEGACY, provider, proxy.url, tmp_path)
    assert run.result["is_error"] is True
    said = run.result["result"]
    assert said.startswith(provider.blocked_shows), said
    assert f"'{PREFIX + mcp_server.DOTTED}'" in said and "never reached the provider" in said
    assert run.called == []
    assert offered(standin) == []  # no request with the tools got past toolnames


# -- 2.1.332: Claude Code makes the names valid itself -----------------------------------------


@providers
def test_current_claude_code_sends_valid_names_and_toolnames_says_nothing(
    claude_code_project, mitmdump, mitmdump_binary, standin, provider, tmp_path
):
    # Fix mode: it would say what observe says, and must also leave a valid run alone.
    saved = tmp_path / "flagged.mitm"
    proxy = toolnames_proxy(mitmdump, mitmdump_binary, "fix", saved)
    run = claude(claude_code_project, CURRENT, provider, proxy.url, tmp_path)
    assert run.result["is_error"] is False, run.result
    assert run.result["result"] == "done"
    # '.' and ' ' became '_'; the name still past 128 once prefixed was left out, unsaid.
    assert sorted(run.called) == sorted(set(SERVED) - {mcp_server.LONG})
    sent = offered(standin)
    assert sent and all(ANTHROPIC_RULE.fullmatch(n) for names in sent for n in names)
    assert PREFIX + "github_create_issue" in sent[0]
    proxy.stop()
    assert findings(saved) == []
    assert annotations(proxy.log_text()) == []
