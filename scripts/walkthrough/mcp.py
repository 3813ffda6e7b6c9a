"""The demo's MCP part: toolnames in front of an MCP server, where names are born.

The stand-in MCP server (scripts/standin/mcp_server.py, the real `mcp` SDK's server over
Streamable HTTP) lists `github.create_issue`, `search docs`, a 141-character name and
`get_weather`. The SDK's own client lists them through mitmdump in reverse mode: in observe
mode toolnames names every listed name a provider would reject and a call of a name the
server never listed, and the client gets the server's names; in fix mode the client lists
only names OpenAI's rule accepts, and its call of an alias runs the server's own tool.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from harness.processes import ProcessGroup
from harness.processes import free_port
from harness.processes import start_process
from walkthrough.clients import clip
from walkthrough.steps import Proxy
from walkthrough.steps import Report

__all__ = ["UNLISTED", "mcp_available", "mcp_step", "start_mcp_server"]

UNLISTED = "delete_repo"
# toolnames_mcp_rule's default, openai: every name the client lists through fix mode keeps it.
OPENAI_RULE = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def mcp_available() -> str | None:
    """None if the `mcp` SDK (server and client) can be imported, else why not."""
    try:
        import mcp  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        return f"the mcp SDK is not installed ({e})"
    return None


def start_mcp_server(group: ProcessGroup, out: Path) -> str:
    """The stand-in MCP server on a free loopback port: its base URL."""
    port = free_port()
    command = [sys.executable, "-m", "standin.mcp_server", "--port", str(port)]
    group.add(start_process("the stand-in MCP server", command, out / "mcp-server.log", port=port))
    return f"http://127.0.0.1:{port}"


async def _session(url: str, calls: list[str]) -> dict:
    """What the SDK's Streamable HTTP client lists, and each call's first text (or error)."""
    from mcp import Client

    from standin.mcp_server import PATH

    got: dict = {"calls": {}}
    async with Client(url + PATH) as client:
        got["names"] = [t.name for t in (await client.list_tools()).tools]
        for name in calls or []:
            try:
                result = await client.call_tool(name, {"text": "Paris"})
            except Exception as e:  # noqa: BLE001 (the SDK raises the server's error)
                got["calls"][name] = f"error: {e}"
                continue
            text = " ".join(getattr(c, "text", "") for c in result.content)
            got["calls"][name] = f"error: {text}" if result.is_error else text
    return got


def mcp_step(mode: str, proxy: Proxy, server: str, report: Report) -> None:
    from standin.mcp_server import DOTTED
    from standin.mcp_server import NAMES

    print(f"  the mcp SDK's client lists the server's tools through it ({mode}):")
    if mode == "observe":
        got = asyncio.run(_session(proxy.url, [UNLISTED]))
    else:
        listed = asyncio.run(_session(proxy.url, []))["names"]
        alias = next((n for n in listed if n.startswith("github_create_issue_")), DOTTED)
        got = asyncio.run(_session(proxy.url, [alias]))
        got["alias"] = alias
    names = got["names"]
    for line in proxy.new_lines(2):
        print(f"    mitmdump log: {clip(line, 160)}")
    print(f"    the client lists: {', '.join(clip(n, 40) for n in names)}")
    if mode == "observe":
        logged = proxy.process.log_text()
        report.check(
            names == list(NAMES) and all(clip(n, 40).rstrip("…") in logged for n in NAMES[:3]),
            "toolnames named the three names providers reject; the client got the server's",
        )
        report.check(
            "mcp-call-unlisted" in logged and UNLISTED in logged,
            f"toolnames named the call of '{UNLISTED}', which the server never listed",
        )
        return
    alias = got["alias"]
    report.check(
        len(names) == len(NAMES) and all(OPENAI_RULE.fullmatch(n) for n in names),
        "the client lists only names OpenAI's rule accepts (aliases for the three others)",
    )
    ran = got["calls"].get(alias, "")
    report.check(
        ran.startswith(f"{DOTTED} ran with"),
        f"the call of {alias} ran the server's own tool: {clip(ran, 80)}",
    )
