"""The demo's steps: each client through mitmdump in one mode, what the addon logged, what the
provider received; the saved flows at the end. Every step is checked and its check printed."""

from __future__ import annotations

import base64
import json
import stat
import time
import urllib.request
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from mitmproxy import io as mitmproxy_io

from harness.mitmdump import own_mitmdump
from harness.processes import Process
from walkthrough.clients import API_KEY
from walkthrough.clients import KEY
from walkthrough.clients import WIRE_NAME
from walkthrough.clients import clip
from walkthrough.clients import run_mastra
from walkthrough.clients import run_sdk
from walkthrough.clients import sdk_error_text

__all__ = [
    "LOGGED",
    "LOOPBACK",
    "Proxy",
    "Report",
    "forced_name",
    "mastra_step",
    "provider_requests",
    "provider_reset",
    "saved_summary",
    "sdk_step",
    "show_log",
    "shown",
]

# In every command the demo prints: a proxy a user starts listens on loopback only.
LOOPBACK = "--listen-host 127.0.0.1"

# Straight to loopback, whatever http_proxy says.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass
class Report:
    failures: list[str] = field(default_factory=list)
    passed: int = 0

    def check(self, ok: bool, text: str) -> bool:
        print(f"  {'✓' if ok else '✗'} {text}", flush=True)
        if ok:
            self.passed += 1
        else:
            self.failures.append(text)
        return ok


@dataclass
class Proxy:
    """mitmdump with the addon, and how many of the addon's log lines have been shown."""

    process: Process
    seen: int = 0

    @property
    def url(self) -> str:
        return self.process.url

    def new_lines(self, expected: int, timeout: float = 5.0) -> list[str]:
        """The addon's log lines since the last call, once at least `expected` have appeared."""
        deadline = time.monotonic() + timeout
        while True:
            lines = [
                line.split(": toolnames ", 1)[1]
                for line in self.process.log_text().splitlines()
                if line.startswith("[") and ": toolnames " in line
            ]
            if len(lines) - self.seen >= expected or time.monotonic() > deadline:
                new, self.seen = lines[self.seen :], len(lines)
                return ["toolnames " + line for line in new]
            time.sleep(0.05)


def shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# -- the provider's records -------------------------------------------------------------------------


def provider_requests(provider: str) -> list[bytes]:
    with DIRECT.open(f"{provider}/_standin/requests", timeout=10) as response:
        return [base64.b64decode(r["body_b64"]) for r in json.load(response)]


def provider_reset(provider: str) -> None:
    request = urllib.request.Request(f"{provider}/_standin/reset", data=b"", method="POST")
    DIRECT.open(request, timeout=10).close()


def forced_name(body: bytes) -> object:
    try:
        return json.loads(body)["tool_choice"]["function"]["name"]
    except (ValueError, KeyError, TypeError):
        return None


# -- the steps --------------------------------------------------------------------------------------


# The start of the line mitmdump logs for the request, in each mode.
LOGGED = {
    "observe": "toolnames error: choice-not-in-tools: tool_choice.function.name 'search.web'",
    "fix": f"toolnames fixed tool_choice.function.name '{KEY}' → '{WIRE_NAME}'",
    "block": "toolnames blocked: choice-not-in-tools: tool_choice.function.name 'search.web'",
}


def show_log(mode: str, lines: list[str], report: Report) -> None:
    for line in lines:
        print(f"    mitmdump log: {clip(line, 160)}")
    if lines and all(line.startswith(LOGGED[mode]) for line in lines):
        report.passed += 1
    else:
        report.check(False, f"mitmdump's log should say: {LOGGED[mode]}…")


def mastra_step(mode: str, proxy: Proxy, provider: str, report: Report) -> None:
    print("  Mastra agent (node tests/e2e/mastra/forced_tool.cjs):")
    provider_reset(provider)
    out = run_mastra(proxy.url)
    got = provider_requests(provider)
    show_log(mode, proxy.new_lines(2 if mode == "fix" else 1), report)
    if mode == "observe":
        report.check(
            not out.get("ok") and "not found in 'tools' parameter" in out.get("error", ""),
            f"the provider rejected it: {clip(out.get('error'), 110)}",
        )
        report.check(
            len(got) == 1 and forced_name(got[0]) == KEY,
            f"the provider got Mastra's request as sent (tool_choice '{KEY}')",
        )
    elif mode == "fix":
        results = out.get("toolResults") or [{}]
        report.check(
            bool(out.get("ok") and out.get("toolCalls") == [WIRE_NAME] and out.get("executed")),
            f"the forced call {WIRE_NAME} ran: {json.dumps(results[0].get('result'))}"
            if out.get("ok")
            else f"the forced call failed: {clip(out.get('error'), 110)}",
        )
        follow_up = len(got) == 2 and b'"role":"tool"' in got[1]
        report.check(
            follow_up and forced_name(got[0]) == WIRE_NAME,
            f"the provider got tool_choice '{WIRE_NAME}', then the tool's result; "
            f"Mastra's answer: {json.dumps(out.get('text'))}",
        )
    else:
        report.check(
            not out.get("ok") and out.get("error", "").startswith("toolnames:"),
            f"Mastra failed with the toolnames error: {clip(out.get('error'), 200)}",
        )
        report.check(got == [], f"the provider received nothing ({len(got)} requests)")


def sdk_step(mode: str, proxy: Proxy, provider: str, report: Report) -> None:
    print("  openai SDK (the same request, from Python):")
    provider_reset(provider)
    outcome = run_sdk(proxy.url)
    got = provider_requests(provider)
    show_log(mode, proxy.new_lines(1), report)
    error = sdk_error_text(outcome.error) if outcome.error else None
    sent = outcome.sent[0] if outcome.sent else b""
    if mode == "observe":
        report.check(
            error is not None and "not found in 'tools' parameter" in error,
            f"{type(outcome.error).__name__} from the provider: {clip(error, 100)}",
        )
        report.check(
            got == outcome.sent and len(got) == 1,
            f"the provider got exactly the {len(sent)} bytes the SDK sent",
        )
    elif mode == "fix":
        calls = outcome.completion.choices[0].message.tool_calls if outcome.completion else None
        call = calls[0].function if calls else None
        report.check(
            call is not None and call.name == WIRE_NAME,
            f"200 OK, tool call {call.name}({call.arguments})"
            if call
            else f"no tool call: {clip(error, 100)}",
        )
        report.check(
            got == [sent.replace(f'"{KEY}"'.encode(), f'"{WIRE_NAME}"'.encode())],
            "the provider got the SDK's bytes with only the forced name changed",
        )
    else:
        code = getattr(outcome.error, "code", None)
        report.check(
            error is not None and error.startswith("toolnames:") and code == "choice-not-in-tools",
            f"{type(outcome.error).__name__}, HTTP 400, code '{code}': {clip(error, 60)}",
        )
        report.check(got == [], f"the provider received nothing ({len(got)} requests)")


def saved_summary(save: Path, report: Report) -> None:
    print("\n== Saved flagged flows ==")
    if not report.check(save.exists(), f"{shown(save)} exists"):
        return
    with open(save, "rb") as f:
        flows = list(mitmproxy_io.FlowReader(f).stream())
    actions: dict[str, int] = {}
    for flow in flows:
        action = flow.metadata.get("toolnames", {}).get("action", "?")
        actions[action] = actions.get(action, 0) + 1
    counts = ", ".join(f"{n} {action}" for action, n in actions.items())
    report.check(
        set(actions) == {"observed", "fixed", "blocked"} and all(f.response for f in flows),
        f"{len(flows)} flows ({counts}), each with its response",
    )
    mode = stat.S_IMODE(save.stat().st_mode)
    report.check(
        API_KEY.encode() not in save.read_bytes() and mode == 0o600,
        f"the API key is redacted in the file; its mode is {mode:o}",
    )
    where = shown(save)
    print("\nLook at them (markers, comments and findings come with the flows):")
    bin_dir = own_mitmdump().parent
    print(f"  {shown(bin_dir / 'mitmdump')} -nr {where} -s addon/toolnames.py {LOOPBACK}")
    print(f"  {shown(bin_dir / 'mitmweb')} -r {where} -s addon/toolnames.py {LOOPBACK}")
    print(f"  scripts/scan {where}   # the findings, LLM and MCP, as a table")
