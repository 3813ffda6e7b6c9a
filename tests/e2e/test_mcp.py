"""
MCP end to end: the real `mcp` SDK's server (scripts/standin/mcp_server.py, MCPServer over
Streamable HTTP under uvicorn) behind a real mitmdump with the addon in reverse mode, and
the SDK's own Streamable HTTP client, in the handshake protocol (2025-11-25, sessions) and
the 2026-07-28 one (stateless, Mcp-Method and Mcp-Name headers), answered as SSE or JSON.

Observe names every bad listed name and a call of a name never listed, never the plain one,
and changes nothing the client gets; fix lists only names the rule accepts, the client's
calls of aliases run the server's own tools, and every other answer is the same.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.processes import ProcessGroup
from harness.processes import free_port
from harness.processes import start_process
from tests.testkit.e2e import read_flows
from tests.testkit.e2e import toolnames_lines

pytestmark = [pytest.mark.needs_sdk, pytest.mark.e2e]

mcp_server = pytest.importorskip("standin.mcp_server")
pytest.importorskip("mcp")

UNLISTED = "delete_repo"
# toolnames_mcp_rule's default, openai: what every name the fixed client lists must keep.
OPENAI_RULE = re.compile(r"[a-zA-Z0-9_-]{1,64}")


@contextlib.contextmanager
def serving(tmp_path: Path, *flags: str):
    """The stand-in MCP server (scripts/standin/mcp_server.py) on a free port: its base URL."""
    port = free_port()
    command = [sys.executable, "-m", "standin.mcp_server", "--port", str(port), *flags]
    log = tmp_path / f"mcp-server-{port}.log"
    with ProcessGroup() as group:
        group.add(start_process("mcp server", command, log, port=port))
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(params=[False, True], ids=["sse", "json"])
def mcp_url(request, tmp_path: Path):
    """The stand-in MCP server's URL, answering SSE or JSON."""
    with serving(tmp_path, *(["--json"] if request.param else [])) as url:
        yield url


async def session_of(url: str, mode: str, calls: list[str]) -> dict:
    """What the SDK's client gets: the names it lists and each call's result."""
    from mcp import Client

    got: dict = {"calls": {}}
    async with Client(url + mcp_server.PATH, mode=mode) as client:
        tools = (await client.list_tools()).tools
        got["names"] = [t.name for t in tools]
        got["tools"] = [t.model_dump(exclude={"name"}) for t in tools]
        for name in calls or got["names"]:
            try:
                result = await client.call_tool(name, {"text": "Paris"})
                got["calls"][name] = (result.is_error, [c.model_dump() for c in result.content])
            except Exception as e:  # noqa: BLE001 (the SDK raises the server's error)
                got["calls"][name] = ("raised", type(e).__name__)
    return got


@pytest.fixture
def sse_url(tmp_path: Path):
    """The stand-in MCP server over the older HTTP+SSE transport."""
    with serving(tmp_path, "--sse") as url:
        yield url


async def sse_session_of(url: str, calls: list[str]) -> dict:
    """The same over HTTP+SSE: the SDK's sse_client and ClientSession."""
    from mcp import ClientSession
    from mcp.client.sse import sse_client

    got: dict = {"calls": {}}
    async with (
        sse_client(url + mcp_server.SSE_PATH) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = (await session.list_tools()).tools
        got["names"] = [t.name for t in tools]
        got["tools"] = [t.model_dump(exclude={"name"}) for t in tools]
        for name in calls or got["names"]:
            result = await session.call_tool(name, {"text": "Paris"})
            got["calls"][name] = (result.is_error, [c.model_dump() for c in result.content])
    return got


def proxy(mitmdump, binary, url: str, save: Path, mode: str):
    return mitmdump(
        "--set",
        f"toolnames_mode={mode}",
        "--set",
        f"toolnames_save={save}",
        mode=f"reverse:{url}",
        binary=binary,
    )


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_observe_names_every_bad_name_and_the_unlisted_call_and_changes_nothing(
    mitmdump, mitmdump_binary, mcp_url, tmp_path, protocol
):
    direct = await session_of(mcp_url, protocol, [])
    saved = tmp_path / "flagged.mitm"
    proc = proxy(mitmdump, mitmdump_binary, mcp_url, saved, "observe")
    through = await session_of(proc.url, protocol, [])
    assert through == direct
    unlisted = await session_of(proc.url, protocol, [UNLISTED])
    assert unlisted["calls"][UNLISTED] != (False, [])
    proc.stop()
    findings = [f for flow in read_flows(saved) for f in flow.metadata["toolnames"]["findings"]]

    def listed(code: str) -> set[str]:
        """The names findings of ``code`` are about, by their place in the listing."""
        places = [
            re.search(r"tools\[(\d+)\]\.name$", f["path"]) for f in findings if f["code"] == code
        ]
        return {direct["names"][int(m[1])] for m in places}

    bad = {mcp_server.DOTTED, mcp_server.SPACED, mcp_server.LONG}
    assert listed("mcp-name-rejected") == bad
    assert listed("mcp-name-invalid") == {mcp_server.SPACED, mcp_server.LONG}
    unlisted_calls = [f for f in findings if f["code"] == "mcp-call-unlisted"]
    assert [f["severity"] for f in unlisted_calls] == ["warning"]
    assert UNLISTED in unlisted_calls[0]["message"]
    log = "\n".join(toolnames_lines(proc.log_text()))
    assert "mcp-name-rejected" in log and "mcp-call-unlisted" in log
    assert mcp_server.PLAIN not in listed("mcp-name-rejected") | listed("mcp-name-duplicate")


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_fix_lists_names_the_rule_accepts_and_calls_run_the_servers_tools(
    mitmdump, mitmdump_binary, mcp_url, tmp_path, protocol
):
    direct = await session_of(mcp_url, protocol, [])
    proc = proxy(mitmdump, mitmdump_binary, mcp_url, tmp_path / "fixed.mitm", "fix")
    fixed = await session_of(proc.url, protocol, [])
    assert all(OPENAI_RULE.fullmatch(name) for name in fixed["names"]), fixed["names"]
    assert mcp_server.PLAIN in fixed["names"] and len(fixed["names"]) == len(mcp_server.NAMES)
    # Everything but the names is as the server sent it.
    assert fixed["tools"] == direct["tools"]
    # Each alias runs the server's tool of the same place, with the same answer.
    for alias, original in zip(fixed["names"], direct["names"], strict=True):
        assert fixed["calls"][alias] == direct["calls"][original]
        text = fixed["calls"][alias][1][0]["text"]
        assert text.startswith(f"{original} ran with "), text
    proc.stop()
    log = "\n".join(toolnames_lines(proc.log_text()))
    assert "toolnames fixed renamed" in log and "(unalias)" in log
    if protocol == "auto":  # the 2026-07-28 client names the tool in Mcp-Name too
        assert "Mcp-Name" in log


async def test_http_sse_observe_and_fix(mitmdump, mitmdump_binary, sse_url, tmp_path):
    """The older transport: answers come on the GET stream, matched to the POSTs by id."""
    direct = await sse_session_of(sse_url, [])
    saved = tmp_path / "observed.mitm"
    observing = proxy(mitmdump, mitmdump_binary, sse_url, saved, "observe")
    assert await sse_session_of(observing.url, []) == direct
    await sse_session_of(observing.url, [UNLISTED])
    observing.stop()
    findings = [f for flow in read_flows(saved) for f in flow.metadata["toolnames"]["findings"]]
    rejected = [f for f in findings if f["code"] == "mcp-name-rejected"]
    assert len(rejected) == 2 * 3  # two sessions, three bad names each
    assert [f["code"] for f in findings if UNLISTED in f["message"]] == ["mcp-call-unlisted"]
    plain = f"tools[{direct['names'].index(mcp_server.PLAIN)}]"
    assert not [f for f in findings if plain in f["path"]]
    fixing = proxy(mitmdump, mitmdump_binary, sse_url, tmp_path / "fixed.mitm", "fix")
    fixed = await sse_session_of(fixing.url, [])
    assert all(OPENAI_RULE.fullmatch(name) for name in fixed["names"]), fixed["names"]
    assert fixed["tools"] == direct["tools"]
    for alias, original in zip(fixed["names"], direct["names"], strict=True):
        assert fixed["calls"][alias] == direct["calls"][original]


def ts_session_of(project: Path, url: str, transport: str, calls: list[str]) -> dict:
    """What the TypeScript SDK's client gets (tests/e2e/mastra/mcp_client.cjs, under node)."""
    result = subprocess.run(
        ["node", str(project / "mcp_client.cjs"), url, transport, *calls],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project,
    )
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got.pop("ok"), got
    return got


@pytest.mark.parametrize("transport", ["streamable", "sse"])
def test_the_typescript_sdk_client_observed_and_fixed(
    mitmdump, mitmdump_binary, mastra_project, tmp_path, transport
):
    """@modelcontextprotocol/sdk's client, Streamable HTTP and HTTP+SSE, through mitmdump."""
    with serving(tmp_path, *(["--sse"] if transport == "sse" else [])) as base:
        typescript_session(mitmdump, mitmdump_binary, mastra_project, tmp_path, transport, base)


def typescript_session(mitmdump, mitmdump_binary, mastra_project, tmp_path, transport, base):
    path = mcp_server.PATH if transport == "streamable" else mcp_server.SSE_PATH
    direct = ts_session_of(mastra_project, base + path, transport, [])
    saved = tmp_path / "observed.mitm"
    observing = proxy(mitmdump, mitmdump_binary, base, saved, "observe")
    assert ts_session_of(mastra_project, observing.url + path, transport, []) == direct
    ts_session_of(mastra_project, observing.url + path, transport, [UNLISTED])
    observing.stop()
    findings = [f for flow in read_flows(saved) for f in flow.metadata["toolnames"]["findings"]]
    places = {m[1] for f in findings if (m := re.search(r"tools\[(\d+)\]", f["path"]))}
    assert {direct["names"][int(i)] for i in places} == {
        mcp_server.DOTTED,
        mcp_server.SPACED,
        mcp_server.LONG,
    }
    assert [f["code"] for f in findings if UNLISTED in f["message"]] == ["mcp-call-unlisted"]
    fixing = proxy(mitmdump, mitmdump_binary, base, tmp_path / "fixed.mitm", "fix")
    fixed = ts_session_of(mastra_project, fixing.url + path, transport, [])
    assert all(OPENAI_RULE.fullmatch(name) for name in fixed["names"]), fixed["names"]
    assert fixed["tools"] == direct["tools"]
    for alias, original in zip(fixed["names"], direct["names"], strict=True):
        assert fixed["calls"][alias] == direct["calls"][original]
        assert fixed["calls"][alias][1][0]["text"].startswith(f"{original} ran with ")


async def calls_of(url: str, mode: str, names: list[str]) -> dict:
    """A new client that calls ``names`` without listing first (it kept an earlier listing)."""
    from mcp import Client

    got: dict = {}
    async with Client(url + mcp_server.PATH, mode=mode) as client:
        for name in names:
            try:
                result = await client.call_tool(name, {"text": "Paris"})
                got[name] = (result.is_error, [c.model_dump() for c in result.content])
            except Exception as e:  # noqa: BLE001 (the SDK raises the server's error)
                got[name] = ("raised", type(e).__name__)
    return got


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_fix_restores_an_alias_after_a_restart_with_no_listing_seen(
    mitmdump, mitmdump_binary, mcp_url, tmp_path, protocol
):
    """A client that listed through one mitmdump calls the aliases through a new one that
    never saw a listing: toolnames asks the server for its tools and sends the server's names."""
    direct = await session_of(mcp_url, protocol, [])
    first = proxy(mitmdump, mitmdump_binary, mcp_url, tmp_path / "first.mitm", "fix")
    fixed = await session_of(first.url, protocol, [])
    first.stop()
    aliases = [a for a in fixed["names"] if a not in direct["names"]]
    assert len(aliases) == 3, fixed["names"]
    saved = tmp_path / "second.mitm"
    second = proxy(mitmdump, mitmdump_binary, mcp_url, saved, "fix")
    got = await calls_of(second.url, protocol, aliases)
    second.stop()
    for alias in aliases:
        original = direct["names"][fixed["names"].index(alias)]
        assert got[alias] == direct["calls"][original], (alias, got[alias])
    assert "mcp-alias-unrestored" not in second.log_text()


async def test_http_sse_after_a_restart_an_alias_goes_on_and_the_record_says_why(
    mitmdump, mitmdump_binary, sse_url, tmp_path
):
    """On HTTP+SSE the server answers on the client's own stream, where toolnames' question
    would reach the client: nothing is asked, the call goes on as it came (the server says it
    has no such tool), and the record says why, without holding the call."""
    from mcp import ClientSession
    from mcp.client.sse import sse_client

    first = proxy(mitmdump, mitmdump_binary, sse_url, tmp_path / "first.mitm", "fix")
    fixed = await sse_session_of(first.url, [mcp_server.PLAIN])
    first.stop()
    dotted = next(n for n in fixed["names"] if n.startswith("github_create_issue_"))
    saved = tmp_path / "second.mitm"
    second = proxy(mitmdump, mitmdump_binary, sse_url, saved, "fix")
    async with (
        sse_client(second.url + mcp_server.SSE_PATH) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool(dotted, {"text": "Paris"})
    second.stop()
    assert result.is_error
    findings = [f for flow in read_flows(saved) for f in flow.metadata["toolnames"]["findings"]]
    unrestored = [f for f in findings if f["code"] == "mcp-alias-unrestored"]
    assert len(unrestored) == 1 and "HTTP+SSE" in unrestored[0]["message"], findings
