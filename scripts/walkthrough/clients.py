"""The demo's two clients, sending the request Mastra builds: a real Mastra agent (node) and
the openai SDK."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.processes import REPO_ROOT

__all__ = [
    "API_KEY",
    "CLIENT_TIMEOUT",
    "KEY",
    "MASTRA_DIR",
    "SDK_REQUEST",
    "WIRE_NAME",
    "SdkOutcome",
    "clip",
    "mastra_available",
    "run_mastra",
    "run_node",
    "run_sdk",
    "sdk_error_text",
]

MASTRA_DIR = REPO_ROOT / "tests" / "e2e" / "mastra"
MASTRA_SCRIPT = MASTRA_DIR / "forced_tool.cjs"
API_KEY = "sk-demo-not-a-key"
KEY = "search.web"  # the key the tool is registered under, and the name forced
WIRE_NAME = "search_web"  # what Mastra offers for it
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


def clip(text: str, width: int = 150) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def mastra_available() -> str | None:
    """None if the Mastra client can run, else why not."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (MASTRA_DIR / "node_modules" / "@mastra" / "core").is_dir():
        return "tests/e2e/mastra/node_modules is not set up (scripts/demo runs npm ci there)"
    return None


def run_node(script: Path, *args: str) -> dict:
    """A node client of tests/e2e/mastra: the JSON line it printed last, or why there is none."""
    try:
        result = subprocess.run(
            ["node", str(script), *args],
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
            "error": f"{script.name} printed no result: {detail}",
            "executed": [],
        }


def run_mastra(url: str) -> dict:
    """forced_tool.cjs through the proxy at ``url``: what it printed last, as JSON."""
    return run_node(MASTRA_SCRIPT, url + "/v1", KEY)


@dataclass
class SdkOutcome:
    sent: list[bytes]
    completion: object = None
    error: Exception | None = None


def run_sdk(url: str) -> SdkOutcome:
    import openai  # only in .venv, which scripts/demo sets up

    outcome = SdkOutcome(sent=[])

    def record(request) -> None:
        outcome.sent.append(request.read())

    http_client = openai.DefaultHttpxClient(event_hooks={"request": [record]}, trust_env=False)
    client = openai.OpenAI(
        base_url=url + "/v1",
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
