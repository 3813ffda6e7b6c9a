"""The demo's last part: fix mode renames the tool names a provider rejects, both ways.

A Vercel AI SDK app (tests/e2e/mastra/ai_sdk_tools.cjs) has a tool named as MCP servers name
them, 'github.create_issue'; OpenAI's rule rejects the dot. Through mitmdump in observe mode the
provider rejects the app's first request. In fix mode the provider sees only an alias, the app
gets its own name back in the answer, runs its tool under that name, and the second turn (the
call and its result in the history) goes through too.
"""

from __future__ import annotations

import json

from walkthrough.clients import MASTRA_DIR
from walkthrough.clients import clip
from walkthrough.clients import run_node
from walkthrough.steps import Proxy
from walkthrough.steps import Report
from walkthrough.steps import provider_requests
from walkthrough.steps import provider_reset

__all__ = ["AI_SDK_SCRIPT", "MCP_NAME", "ai_sdk_available", "renaming_step", "run_ai_sdk"]

AI_SDK_SCRIPT = MASTRA_DIR / "ai_sdk_tools.cjs"
MCP_NAME = "github.create_issue"
REJECTED = "string does not match pattern"


def ai_sdk_available() -> str | None:
    """None if the Vercel AI SDK app can run, else why not."""
    for package in ("ai", "@ai-sdk/openai"):
        if not (MASTRA_DIR / "node_modules" / package).is_dir():
            return f"tests/e2e/mastra/node_modules/{package} is not set up"
    return None


def run_ai_sdk(url: str) -> dict:
    """ai_sdk_tools.cjs (chat completions, streamed) through the proxy: its JSON line."""
    return run_node(AI_SDK_SCRIPT, url + "/v1", "chat", "stream")


def offered_names(body: bytes) -> list[str]:
    try:
        return [tool["function"]["name"] for tool in json.loads(body)["tools"]]
    except (ValueError, KeyError, TypeError):
        return []


def renaming_step(mode: str, proxy: Proxy, provider: str, report: Report) -> None:
    print(f"  Vercel AI SDK app with the tool '{MCP_NAME}' (node {AI_SDK_SCRIPT.name}):")
    provider_reset(provider)
    out = run_ai_sdk(proxy.url)
    got = provider_requests(provider)
    for line in proxy.new_lines(1 if mode == "observe" else 2):
        print(f"    mitmdump log: {clip(line, 160)}")
    if mode == "observe":
        report.check(
            not out.get("ok") and REJECTED in str(out.get("error")),
            f"the provider rejected the name: {clip(out.get('error'), 110)}",
        )
        return
    executed = [call.get("name") for call in out.get("executed", [])]
    report.check(
        bool(out.get("ok")) and executed == [MCP_NAME],
        f"the app ran its tool under its own name, '{MCP_NAME}', and answered "
        f"{json.dumps(out.get('text'))}"
        if out.get("ok")
        else f"the app failed: {clip(out.get('error'), 110)}",
    )
    sent = [name for body in got for name in offered_names(body)]
    report.check(
        len(got) == 2 and MCP_NAME.encode() not in b"".join(got) and bool(sent),
        f"the provider saw only names it accepts ({', '.join(sorted(set(sent)))}) in both turns",
    )
