"""mitmdump as the demo, the benchmark, the soak and the end-to-end tests start it: on a free
loopback port, with its own confdir, the addon or other scripts, and options."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path

from harness.processes import REPO_ROOT
from harness.processes import STARTUP_TIMEOUT
from harness.processes import Process
from harness.processes import StartupError
from harness.processes import free_port
from harness.processes import start_process

__all__ = ["ADDON_SCRIPT", "mitmdump_command", "own_mitmdump", "start_mitmdump"]

ADDON_SCRIPT = REPO_ROOT / "addon" / "toolnames.py"
# Another process can take a free port before mitmdump binds it: so many ports are tried.
PORT_ATTEMPTS = 3


def own_mitmdump() -> Path:
    """The mitmdump of the venv this Python runs in, else the project's .venv's.

    sys.executable is <venv>/bin/python, a symlink into the base interpreter: resolving it
    would leave the venv, so it is not resolved.
    """
    own = Path(sys.executable).parent / "mitmdump"
    return own if own.exists() else REPO_ROOT / ".venv" / "bin" / "mitmdump"


def mitmdump_command(
    binary: Path,
    port: int,
    mode: str,
    confdir: Path,
    *,
    scripts: Sequence[Path] = (),
    options: Mapping[str, str] | None = None,
    verbosity: str = "info",
    args: Sequence[str] = (),
) -> list[str]:
    """The command line: bound to loopback, ``mode`` a whole --mode value ("reverse:URL")."""
    command = [
        str(binary),
        "--listen-host",
        "127.0.0.1",
        "--listen-port",
        str(port),
        "--mode",
        mode,
        # Its own CA folder, so that ~/.mitmproxy is left alone.
        "--set",
        f"confdir={confdir}",
        "--set",
        f"termlog_verbosity={verbosity}",
    ]
    for script in scripts:
        command += ["-s", str(script)]
    for key, value in (options or {}).items():
        command += ["--set", f"{key}={value}"]
    return [*command, *args]


def start_mitmdump(
    binary: Path,
    mode: str,
    *,
    confdir: Path,
    log_dir: Path,
    name: str = "mitmdump",
    scripts: Sequence[Path] = (),
    options: Mapping[str, str] | None = None,
    verbosity: str = "info",
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    wrapper: Sequence[str] = (),
    startup_timeout: float = STARTUP_TIMEOUT,
) -> Process:
    """mitmdump listening on a free port, its output in ``log_dir``/NAME-PORT.log;
    StartupError (with its output) if it does not start. ``wrapper``: what runs it (valgrind's
    command line, which makes it start far slower: ``startup_timeout``)."""
    failure: StartupError | None = None
    for _ in range(PORT_ATTEMPTS):
        port = free_port()
        command = mitmdump_command(
            binary,
            port,
            mode,
            confdir,
            scripts=scripts,
            options=options,
            verbosity=verbosity,
            args=args,
        )
        log_path = log_dir / f"{name.replace(' ', '-')}-{port}.log"
        try:
            return start_process(
                name,
                [*wrapper, *command],
                log_path,
                port=port,
                env=env,
                startup_timeout=startup_timeout,
            )
        except StartupError as e:
            failure = e
            if "address already in use" not in str(e).lower():
                break
    assert failure is not None
    raise failure
