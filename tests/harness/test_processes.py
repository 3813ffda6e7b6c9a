"""The process harness (harness.processes): start, wait for a port or a line, stop."""

import signal
import socket
import sys

import pytest

from harness.processes import LogTimeout
from harness.processes import ProcessGroup
from harness.processes import StartupError
from harness.processes import free_port
from harness.processes import start_process

READY_THEN_SLEEP = "print('ready', flush=True); import time; time.sleep(60)"
DEAF_TO_SIGTERM = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ready', flush=True); time.sleep(60)"
)
LISTEN = (
    "import socket, sys, time; s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); "
    "s.listen(); time.sleep(60)"
)


def python(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", code, *args]


def test_a_free_port_can_be_bound():
    with socket.socket() as s:
        s.bind(("127.0.0.1", free_port()))


def test_a_line_is_waited_for_and_sigterm_stops_the_process(tmp_path):
    proc = start_process("sleeper", python(READY_THEN_SLEEP), tmp_path / "sleeper.log")

    assert "ready" in proc.wait_for_log("ready", timeout=10)
    assert proc.stop() == -signal.SIGTERM
    assert proc.process.poll() is not None


def test_a_line_that_never_comes_is_a_named_error_with_the_output(tmp_path):
    proc = start_process("sleeper", python(READY_THEN_SLEEP), tmp_path / "sleeper.log")
    try:
        proc.wait_for_log("ready")
        with pytest.raises(LogTimeout, match="'never' did not appear in the output of sleeper"):
            proc.wait_for_log("never", timeout=0.2)
    finally:
        proc.stop()


def test_a_line_can_be_waited_for_until_it_came_so_many_times(tmp_path):
    code = "import time\nfor i in range(3):\n    print('flow done', flush=True); time.sleep(0.2)\n"
    code += "time.sleep(60)"
    proc = start_process("flows", python(code), tmp_path / "flows.log")
    try:
        assert proc.wait_for_log("flow done", count=3).count("flow done") == 3
        with pytest.raises(LogTimeout, match="'flow done' did not appear 4 times"):
            proc.wait_for_log("flow done", timeout=0.1, count=4)
    finally:
        proc.stop()


def test_waiting_ends_as_soon_as_the_process_does(tmp_path):
    proc = start_process("quitter", python("print('bye')"), tmp_path / "quitter.log")

    with pytest.raises(LogTimeout, match=r"exit code 0\):\nbye"):
        proc.wait_for_log("never", timeout=30)


def test_a_process_deaf_to_sigterm_is_killed(tmp_path):
    proc = start_process("deaf", python(DEAF_TO_SIGTERM), tmp_path / "deaf.log")
    proc.wait_for_log("ready")

    assert proc.stop(timeout=0.5) == -signal.SIGKILL


def test_start_waits_until_the_port_listens(tmp_path):
    port = free_port()
    proc = start_process("listener", python(LISTEN, str(port)), tmp_path / "l.log", port=port)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
        assert proc.url == f"http://127.0.0.1:{port}"
        assert proc.rss_kib() > 0
        assert proc.cpu_seconds() >= 0
    finally:
        proc.stop()
    assert proc.rss_kib() is None


def test_a_process_that_exits_before_listening_fails_with_its_command_and_output(tmp_path):
    code = "import sys; print('no such script: x'); sys.exit(3)"

    with pytest.raises(StartupError) as caught:
        start_process("broken", python(code), tmp_path / "b.log", port=free_port())

    message = str(caught.value)
    assert "broken exited with code 3 before listening" in message
    assert "no such script: x" in message
    assert f"command: {sys.executable} -c" in message


def test_a_group_stops_every_process_it_holds(tmp_path):
    with ProcessGroup() as group:
        procs = [
            group.add(start_process(f"p{i}", python(READY_THEN_SLEEP), tmp_path / f"{i}.log"))
            for i in range(2)
        ]
        for proc in procs:
            proc.wait_for_log("ready")
    assert [p.process.poll() for p in procs] == [-signal.SIGTERM, -signal.SIGTERM]
    assert group.running == []


def test_kill9_ends_the_process_at_once(tmp_path):
    proc = start_process("deaf", python(DEAF_TO_SIGTERM), tmp_path / "deaf.log")
    proc.wait_for_log("ready")
    proc.kill9()

    assert proc.process.poll() == -signal.SIGKILL
    proc.stop()
