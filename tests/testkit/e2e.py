"""End to end: mitmdump's log, plain HTTP past any proxy, saved flows read back."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from mitmproxy import io as mitmproxy_io
from mitmproxy.exceptions import FlowReadException

from tests.testkit.infrastructure import REPO_ROOT

__all__ = [
    "DIRECT",
    "annotations",
    "mitmdump_read",
    "post",
    "read_flows",
    "recording_client",
    "toolnames_lines",
    "wait_for_flows",
]

# Straight to loopback, whatever http_proxy says.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def toolnames_lines(log: str) -> list[str]:
    """The addon's log lines without mitmdump's timestamp: 'POST host/path: toolnames …'."""
    return [m[1] for m in re.finditer(r"(?m)^\[[\d:.]+\] (\w+ \S+: toolnames .*)$", log)]


def annotations(log: str) -> list[str]:
    """The addon's log lines from 'toolnames' on (the URL before it differs once redacted)."""
    return ["toolnames " + line.split(": toolnames ", 1)[1] for line in toolnames_lines(log)]


def post(url: str, body: dict, headers: dict | None = None) -> tuple[int, dict, bytes]:
    """(status, headers with lowercase names, body) of a plain HTTP POST."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with DIRECT.open(request, timeout=10) as response:
            return (
                response.status,
                {k.lower(): v for k, v in response.headers.items()},
                response.read(),
            )
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


def recording_client(sdk):
    """An httpx client for `sdk` (anthropic or openai) and the list of request bodies it sends."""
    sent: list[bytes] = []

    def record(request) -> None:
        sent.append(request.read())

    return sdk.DefaultHttpxClient(event_hooks={"request": [record]}, trust_env=False), sent


def read_flows(path: Path) -> list:
    with open(path, "rb") as f:
        return list(mitmproxy_io.FlowReader(f).stream())


def wait_for_flows(path: Path, count: int, timeout: float = 10.0) -> list:
    """The flows saved so far, once there are `count` (a flow is saved when it completes)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            flows = read_flows(path) if path.exists() else []
        except FlowReadException:
            # Read while mitmdump was writing a flow: its record is not whole yet.
            if time.monotonic() > deadline:
                raise
            flows = []
        if len(flows) >= count or time.monotonic() > deadline:
            return flows
        time.sleep(0.05)


def mitmdump_read(binary: Path, confdir: Path, path: Path, *args: str) -> str:
    """What `mitmdump -nr path` prints; fails the test if it cannot read the file."""
    result = subprocess.run(
        [str(binary), "-nr", str(path), "--set", f"confdir={confdir}", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr
