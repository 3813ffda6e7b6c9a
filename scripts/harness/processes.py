"""Processes that the demo, the benchmark, the soak and the end-to-end tests start and stop.

Each process gets a session of its own (a Ctrl-C in the terminal reaches only the driver,
which stops them) and writes its output to a log file; waiting for a port or a log line has
a deadline and ends in a named error that carries the output.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

__all__ = [
    "REPO_ROOT",
    "STARTUP_TIMEOUT",
    "STOP_TIMEOUT",
    "HarnessError",
    "LogTimeout",
    "Process",
    "ProcessGroup",
    "StartupError",
    "free_port",
    "start_announcing",
    "start_process",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


class HarnessError(Exception):
    """A process did not do what the harness waited for."""


class StartupError(HarnessError):
    """A process exited, or did not listen, before it was ready."""


class LogTimeout(HarnessError):
    """A line did not appear in a process's output in time."""


def free_port() -> int:
    """A loopback port free right now (another process may still take it before it is bound)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Process:
    """A started subprocess, its output in ``log_path``."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    command: list[str]
    port: int | None = None
    _log_file: object = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        """Everything the process has printed so far (stdout and stderr)."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_for_log(self, text: str, timeout: float = 10.0, count: int = 1) -> str:
        """The output once ``text`` is in it (``count`` times: a log line per flow comes when
        that flow is done, not all at once); LogTimeout if it is not within ``timeout``
        seconds or the process ended without printing it."""
        deadline = time.monotonic() + timeout
        while True:
            log = self.log_text()
            if log.count(text) >= count:
                return log
            if time.monotonic() > deadline or self.process.poll() is not None:
                times = f" {count} times" if count > 1 else ""
                raise LogTimeout(
                    f"{text!r} did not appear{times} in the output of {self.name} within "
                    f"{timeout}s (exit code {self.process.poll()}):\n{log}"
                )
            time.sleep(0.05)

    def wait_listening(self, timeout: float = STARTUP_TIMEOUT) -> None:
        """Returns once the port accepts connections; StartupError if it never will."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise StartupError(
                    f"{self.name} exited with code {self.process.returncode} before listening"
                )
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise StartupError(f"{self.name} did not listen on {self.url} within {timeout:.0f}s")

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM, then SIGKILL after ``timeout`` seconds; the exit code.

        SIGTERM, not SIGINT: mitmdump shuts down cleanly on it (the addons' done hooks run),
        while one started from a background job ignores SIGINT until it installs its handler.
        """
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._close_log()
        return self.process.returncode

    def kill9(self) -> None:
        """SIGKILL at once: no clean-up in the process, as after a crash."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def rss_kib(self) -> int | None:
        """Resident memory from /proc (Linux), None when the process is gone."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return None

    def cpu_seconds(self) -> float:
        """User plus system CPU time the process has used so far, from /proc (Linux)."""
        try:
            stat = Path(f"/proc/{self.process.pid}/stat").read_text()
        except OSError:
            return 0.0
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _close_log(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None


def start_process(
    name: str,
    command: Sequence[str],
    log_path: Path,
    *,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path = REPO_ROOT,
    startup_timeout: float = STARTUP_TIMEOUT,
) -> Process:
    """Starts ``command`` with its output in ``log_path``; with ``port``, waits until it
    listens there (stopping it and raising StartupError if it does not within
    ``startup_timeout`` seconds)."""
    log_file = open(log_path, "wb")  # noqa: SIM115 (open while the process runs; stop closes it)
    try:
        popen = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            start_new_session=True,
        )
    except OSError:
        log_file.close()
        raise
    proc = Process(name, popen, log_path, list(command), port, log_file)
    if port is not None:
        try:
            proc.wait_listening(startup_timeout)
        except StartupError as e:
            proc.stop()
            raise StartupError(
                f"{e}\ncommand: {' '.join(command)}\n--- {name} output ---\n{proc.log_text()}"
            ) from None
    return proc


def start_announcing(
    name: str, command: Sequence[str], log_path: Path, announcement: str
) -> Process:
    """Starts a server that picks its own port (no race for a free one) and prints
    ``announcement`` followed by its URL once it serves; its port is read from that line."""
    proc = start_process(name, command, log_path)
    try:
        log = proc.wait_for_log(announcement, timeout=STARTUP_TIMEOUT)
    except LogTimeout as e:
        proc.stop()
        raise StartupError(str(e)) from None
    url = log.split(announcement, 1)[1].split()[0]
    proc.port = int(url.rsplit(":", 1)[1])
    return proc


class ProcessGroup:
    """Every process a run starts; all of them are stopped on the way out, however it ends.

    with ProcessGroup() as group:
        provider = group.add(start_standin(...))
    """

    def __init__(self) -> None:
        self.running: list[Process] = []

    def add(self, proc: Process) -> Process:
        self.running.append(proc)
        return proc

    def stop(self, proc: Process) -> int:
        if proc in self.running:
            self.running.remove(proc)
        return proc.stop()

    def stop_all(self) -> None:
        for proc in reversed(list(self.running)):
            self.stop(proc)

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_all()
