"""scripts/demo: the toolnames addon doing its job end to end, offline, on loopback.

Starts the stand-in provider (scripts/standin/) and, for each of the modes
observe, fix and block, a real mitmdump with the addon in reverse mode in front of it.
Two clients send the request Mastra builds when a tool registered under the key
"search.web" is forced by that key (tools offers "search_web", tool_choice names
"search.web"): a real Mastra agent (node, tests/e2e/mastra, when its node_modules are
installed) and the openai SDK. Then fix mode's renaming: a Vercel AI SDK app whose tool is
named "github.create_issue", rejected by the provider in observe mode, working in fix mode.
Last, MCP (walkthrough/mcp.py): the stand-in MCP server behind mitmdump in observe and fix
mode, listed and called by the `mcp` SDK's client.
Every step is checked; the exit status is 1 if any step did not behave as described.
Flagged flows are saved to OUT/flagged.mitm.

Run it through scripts/demo, which sets up .venv and Mastra first.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from harness.mitmdump import ADDON_SCRIPT
from harness.mitmdump import own_mitmdump
from harness.mitmdump import start_mitmdump
from harness.processes import REPO_ROOT
from harness.processes import HarnessError
from harness.processes import ProcessGroup
from harness.provider import start_standin
from standin.mcp_server import PATH
from walkthrough.clients import KEY
from walkthrough.clients import WIRE_NAME
from walkthrough.clients import mastra_available
from walkthrough.mcp import mcp_available
from walkthrough.mcp import mcp_step
from walkthrough.mcp import start_mcp_server
from walkthrough.renaming import MCP_NAME
from walkthrough.renaming import ai_sdk_available
from walkthrough.renaming import renaming_step
from walkthrough.steps import LOOPBACK
from walkthrough.steps import Proxy
from walkthrough.steps import Report
from walkthrough.steps import mastra_step
from walkthrough.steps import saved_summary
from walkthrough.steps import sdk_step
from walkthrough.steps import shown

__all__ = ["MODES", "SECTIONS", "main", "run_mcp", "run_mode", "run_renaming"]

MODES = {
    "observe": "reports what is wrong and changes nothing",
    "fix": "rewrites the forced name to the tool Mastra meant",
    "block": "answers HTTP 400 itself, so the provider never sees the request",
}
SECTIONS = len(MODES) + 2  # the modes, renaming, then MCP


def run_mode(
    index: int,
    mode: str,
    group: ProcessGroup,
    provider: str,
    save: Path,
    out: Path,
    mastra_skip: str | None,
    report: Report,
) -> None:
    print(f"\n== {index}/{SECTIONS} {mode}: toolnames_mode={mode} {MODES[mode]} ==")
    proxy = start_proxy(mode, group, provider, save, out)
    try:
        if mastra_skip is None:
            mastra_step(mode, proxy, provider, report)
        sdk_step(mode, proxy, provider, report)
    finally:
        group.stop(proxy.process)


def run_renaming(
    group: ProcessGroup, provider: str, save: Path, out: Path, skip: str | None, report: Report
) -> None:
    print(
        f"\n== {SECTIONS - 1}/{SECTIONS} renaming: toolnames_mode=fix gives the provider names it "
        "accepts, and the app its own names back =="
    )
    if skip is not None:
        print(f"  (skipped: {skip})")
        return
    for mode in ("observe", "fix"):
        proxy = start_proxy(mode, group, provider, save, out, name=f"mitmdump-renaming-{mode}")
        try:
            renaming_step(mode, proxy, provider, report)
        finally:
            group.stop(proxy.process)


def run_mcp(group: ProcessGroup, save: Path, out: Path, skip: str | None, report: Report) -> None:
    print(
        f"\n== {SECTIONS}/{SECTIONS} mcp: toolnames in front of an MCP server, where names are "
        "born (docs/mcp.md) =="
    )
    if skip is not None:
        print(f"  (skipped: {skip})")
        return
    server = start_mcp_server(group, out)
    print(f"  server    the stand-in MCP server (the mcp SDK's) at {server}{PATH}")
    for mode in ("observe", "fix"):
        proxy = start_proxy(mode, group, server, save, out, name=f"mitmdump-mcp-{mode}")
        try:
            mcp_step(mode, proxy, server, report)
        finally:
            group.stop(proxy.process)


def start_proxy(
    mode: str, group: ProcessGroup, provider: str, save: Path, out: Path, name: str = ""
) -> Proxy:
    proc = start_mitmdump(
        own_mitmdump(),
        f"reverse:{provider}",
        confdir=out / "mitmproxy-conf",
        log_dir=out,
        name=name or f"mitmdump-{mode}",
        scripts=[ADDON_SCRIPT],
        options={"toolnames_mode": mode, "toolnames_save": str(save)},
    )
    group.add(proc)
    print(
        f"  $ mitmdump {LOOPBACK} --mode reverse:{provider} -s addon/toolnames.py "
        f"--set toolnames_mode={mode} --set toolnames_save={shown(save)}"
    )
    return Proxy(proc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=REPO_ROOT / ".demo", help="where logs and flagged.mitm go"
    )
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    save = out / "flagged.mitm"
    save.unlink(missing_ok=True)  # each run saves its own flows

    # A SIGTERM (or SIGHUP) ends the demo like a Ctrl-C: through the finally below.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))

    report = Report()
    mastra_skip = mastra_available()
    group = ProcessGroup()
    try:
        provider = group.add(start_standin(out)).url
        print("toolnames demo: offline, everything on 127.0.0.1")
        print(f"  provider  the stand-in OpenAI-compatible API at {provider}")
        print("  proxy     mitmdump with addon/toolnames.py, in reverse mode in front of it")
        print(
            f"  request   a Mastra agent's tool registered under the key '{KEY}' and forced by it:"
        )
        print(
            f"            tools offers '{WIRE_NAME}' (Mastra's rewrite), tool_choice names '{KEY}'"
        )
        if mastra_skip:
            print(f"  (no Mastra client: {mastra_skip}; the openai SDK sends the request)")
        print(
            f"  then      a Vercel AI SDK app whose tool is named '{MCP_NAME}', as MCP names them"
        )
        for index, mode in enumerate(MODES, 1):
            run_mode(index, mode, group, provider, save, out, mastra_skip, report)
        run_renaming(group, provider, save, out, mastra_skip or ai_sdk_available(), report)
        run_mcp(group, save, out, mcp_available(), report)
        saved_summary(save, report)
    except HarnessError as e:
        # A process did not even start: that is a failure of the demo, with its output.
        report.failures.append(str(e))
        print(f"\nerror: {e}", file=sys.stderr)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        group.stop_all()

    if report.failures:
        print(
            f"\ndemo FAILED: {len(report.failures)} step(s) did not behave as described "
            f"(logs in {shown(out)}/)",
            file=sys.stderr,
        )
        return 1
    print(f"\ndemo OK: {report.passed} checks passed (logs in {shown(out)}/)")
    return 0
