"""scripts/demo: the toolnames addon doing its job end to end, offline, on loopback.

Starts the stand-in provider (scripts/standin_provider.py) and, for each of the modes
observe, fix and block, a real mitmdump with the addon in reverse mode in front of it.
Two clients send the request Mastra builds when a tool registered under the key
"search.web" is forced by that key (tools offers "search_web", tool_choice names
"search.web"): a real Mastra agent (node, tests/e2e/mastra, when its node_modules are
installed) and the openai SDK. Every step is checked; the exit status is 1 if any step
did not behave as described. Flagged flows are saved to OUT/flagged.mitm.

Run it through scripts/demo, which sets up .venv and Mastra first.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ADDON = ROOT / "addon" / "toolnames.py"
STANDIN = ROOT / "scripts" / "standin_provider.py"
MASTRA_DIR = ROOT / "tests" / "e2e" / "mastra"
MASTRA_SCRIPT = MASTRA_DIR / "forced_tool.cjs"
# The venv this runs in (.venv under scripts/demo) has mitmdump, mitmweb and openai.
BIN = Path(sys.executable).parent

API_KEY = "sk-demo-not-a-key"
KEY = "search.web"  # the key the tool is registered under, and the name forced
WIRE_NAME = "search_web"  # what Mastra offers for it
STARTUP_TIMEOUT = 30.0
CLIENT_TIMEOUT = 60.0

# The Mastra-shaped request the openai SDK sends (what @mastra/core 1.67.0 puts on the wire).
SDK_REQUEST = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "system", "content": "Always call the weather tool."},
        {"role": "user", "content": "hi"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": WIRE_NAME,
                "description": "Get the weather for a city",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                    "additionalProperties": False,
                },
            },
        }
    ],
    "tool_choice": {"type": "function", "function": {"name": KEY}},
}

MODES = {
    "observe": "reports what is wrong and changes nothing",
    "fix": "rewrites the forced name to the tool Mastra meant",
    "block": "answers HTTP 400 itself, so the provider never sees the request",
}

# Straight to loopback, whatever http_proxy says.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class DemoError(Exception):
    """A step that could not even run (a process did not start)."""


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


def shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def clip(text: str, width: int = 150) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- processes ----------------------------------------------------------------------------------


class Processes:
    """Every process the demo starts; all of them are stopped on the way out, however it ends."""

    def __init__(self) -> None:
        self.running: list[subprocess.Popen] = []

    def start(self, command: list, **kwargs) -> subprocess.Popen:
        # A session of their own: a Ctrl-C in the terminal reaches only the demo, which stops them.
        process = subprocess.Popen(command, start_new_session=True, **kwargs)
        self.running.append(process)
        return process

    def stop(self, process: subprocess.Popen) -> None:
        if process.poll() is None:
            # mitmdump shuts down cleanly on SIGTERM (its done hooks run). Not SIGINT: started
            # from a background job, mitmdump ignores SIGINT until it installs its own handler.
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process in self.running:
            self.running.remove(process)

    def stop_all(self) -> None:
        for process in reversed(list(self.running)):
            self.stop(process)


def start_standin(processes: Processes, log_path: Path) -> str:
    """The stand-in provider's CLI on a free port; returns its URL."""
    log = open(log_path, "wb")  # noqa: SIM115 (kept open for the child's lifetime)
    process = processes.start(
        [sys.executable, str(STANDIN), "--port", "0", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=log,
        cwd=ROOT,
    )
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            line = process.stdout.readline().decode(errors="replace").strip()
            if line.startswith("standin provider listening on "):
                return line.rsplit(" ", 1)[1]
            if not line and process.poll() is not None:
                break
    raise DemoError(f"the stand-in provider did not start (see {shown(log_path)})")


@dataclass
class Proxy:
    process: subprocess.Popen
    url: str
    log_path: Path
    command: list[str]
    seen: int = 0  # how many of the addon's log lines have been shown already

    def new_lines(self, expected: int, timeout: float = 5.0) -> list[str]:
        """The addon's log lines since the last call, once at least `expected` have appeared."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
            lines = [
                line.split(": toolnames ", 1)[1]
                for line in text.splitlines()
                if line.startswith("[") and ": toolnames " in line
            ]
            if len(lines) - self.seen >= expected or time.monotonic() > deadline:
                new, self.seen = lines[self.seen :], len(lines)
                return ["toolnames " + line for line in new]
            time.sleep(0.05)


def start_mitmdump(processes: Processes, mode: str, provider: str, save: Path, out: Path) -> Proxy:
    log_path = out / f"mitmdump-{mode}.log"
    for _ in range(3):
        port = free_port()
        command = [
            str(BIN / "mitmdump"),
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            str(port),
            "--mode",
            f"reverse:{provider}",
            "-s",
            str(ADDON),
            "--set",
            f"toolnames_mode={mode}",
            "--set",
            f"toolnames_save={save}",
            # Its own CA folder, so the demo leaves ~/.mitmproxy alone.
            "--set",
            f"confdir={out / 'mitmproxy-conf'}",
        ]
        with open(log_path, "wb") as log:
            process = processes.start(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return Proxy(process, f"http://127.0.0.1:{port}", log_path, command)
            except OSError:
                time.sleep(0.05)
        processes.stop(process)
        # Another process may have taken the free port first: try another one.
        if "address already in use" not in log_path.read_text(errors="replace").lower():
            break
    tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-15:])
    raise DemoError(f"mitmdump did not start ({shown(log_path)}):\n{tail}")


# -- the provider's records -----------------------------------------------------------------------


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


# -- clients --------------------------------------------------------------------------------------


def mastra_available() -> str | None:
    """None if the Mastra client can run, else why not."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (MASTRA_DIR / "node_modules" / "@mastra" / "core").is_dir():
        return "tests/e2e/mastra/node_modules is not set up (scripts/demo runs npm ci there)"
    return None


def run_mastra(proxy: Proxy) -> dict:
    try:
        result = subprocess.run(
            ["node", str(MASTRA_SCRIPT), proxy.url + "/v1", KEY],
            cwd=MASTRA_DIR,
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"no answer within {CLIENT_TIMEOUT:.0f}s", "executed": []}
    lines = result.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        detail = clip(result.stderr or result.stdout or f"exit code {result.returncode}")
        return {
            "ok": False,
            "error": f"forced_tool.cjs printed no result: {detail}",
            "executed": [],
        }


@dataclass
class SdkOutcome:
    sent: list[bytes]
    completion: object = None
    error: Exception | None = None


def run_sdk(proxy: Proxy) -> SdkOutcome:
    import openai

    outcome = SdkOutcome(sent=[])

    def record(request) -> None:
        outcome.sent.append(request.read())

    http_client = openai.DefaultHttpxClient(event_hooks={"request": [record]}, trust_env=False)
    client = openai.OpenAI(
        base_url=proxy.url + "/v1",
        api_key=API_KEY,
        max_retries=0,
        timeout=CLIENT_TIMEOUT,
        http_client=http_client,
    )
    try:
        outcome.completion = client.chat.completions.create(**SDK_REQUEST)
    except openai.APIError as e:
        outcome.error = e
    finally:
        client.close()
    return outcome


def sdk_error_text(error: Exception | None) -> str:
    body = getattr(error, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    return str(message or error)


# -- the three runs -------------------------------------------------------------------------------


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
    out = run_mastra(proxy)
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
    outcome = run_sdk(proxy)
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


def run_mode(
    index: int,
    mode: str,
    processes: Processes,
    provider: str,
    save: Path,
    out: Path,
    mastra_skip: str | None,
    report: Report,
) -> None:
    print(f"\n== {index}/3 {mode}: toolnames_mode={mode} {MODES[mode]} ==")
    proxy = start_mitmdump(processes, mode, provider, save, out)
    print(
        f"  $ mitmdump --mode reverse:{provider} -s addon/toolnames.py "
        f"--set toolnames_mode={mode} --set toolnames_save={shown(save)}"
    )
    try:
        if mastra_skip is None:
            mastra_step(mode, proxy, provider, report)
        sdk_step(mode, proxy, provider, report)
    finally:
        processes.stop(proxy.process)


def saved_summary(save: Path, report: Report) -> None:
    from mitmproxy import io as mitmproxy_io

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
    print(f"  {shown(BIN / 'mitmdump')} -nr {where} -s addon/toolnames.py")
    print(f"  {shown(BIN / 'mitmweb')} -r {where} -s addon/toolnames.py")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / ".demo", help="where logs and flagged.mitm go"
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
    processes = Processes()
    mastra_skip = mastra_available()
    try:
        provider = start_standin(processes, out / "standin.log")
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
        for index, mode in enumerate(MODES, 1):
            run_mode(index, mode, processes, provider, save, out, mastra_skip, report)
        saved_summary(save, report)
    except DemoError as e:
        report.failures.append(str(e))
        print(f"\nerror: {e}", file=sys.stderr)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        processes.stop_all()

    if report.failures:
        print(
            f"\ndemo FAILED: {len(report.failures)} step(s) did not behave as described "
            f"(logs in {shown(out)}/)",
            file=sys.stderr,
        )
        return 1
    print(f"\ndemo OK: {report.passed} checks passed (logs in {shown(out)}/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
