"""The stand-in provider (scripts/standin/) in a process of its own, as the demo, the benchmark
and the soak run it: a load run's client must not share the provider's GIL."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.processes import Process
from harness.processes import start_announcing

__all__ = ["LISTENING", "start_standin"]

# What `python -m standin` prints once it serves; its URL follows.
LISTENING = "standin provider listening on "


def start_standin(
    log_dir: Path, *, name: str = "standin", record: bool = True, nodelay: bool = False
) -> Process:
    """``python -m standin`` on a port it picks itself (no race for a free port); its URL is
    read from the line it prints. ``record=False`` for load runs, which would otherwise pile
    up every body in its memory; ``nodelay`` so that they measure the proxy, not delayed ACKs.
    """
    command = [sys.executable, "-m", "standin", "--port", "0", "--quiet"]
    if not record:
        command.append("--no-record")
    if nodelay:
        command.append("--nodelay")
    return start_announcing("the stand-in provider", command, log_dir / f"{name}.log", LISTENING)
