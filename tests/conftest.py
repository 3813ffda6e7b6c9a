"""
Shared fixtures for the end-to-end tests: the stand-in provider and real mitmdump processes;
and ``counted``, which records what the core parses and scans.

    def test_passthrough(mitmdump, mitmdump_binary):
        proxy = mitmdump(binary=mitmdump_binary)  # reverse proxy to a fresh stand-in provider
        ...                                        # send requests to proxy.url
        assert "toolnames" in proxy.log_text()

Missing infrastructure (a venv, mitmdump 11, node_modules, chromium) is a skip on a developer's
machine but a failure under CI=true: scripts/test installs all of it, so there it means a broken
setup, and a silent skip would hide that.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import NoReturn

import pytest

from toolnames_core import bodies
from toolnames_core import readers

REPO_ROOT = Path(__file__).resolve().parent.parent
ADDON_SCRIPT = REPO_ROOT / "addon" / "toolnames.py"
MASTRA_DIR = REPO_ROOT / "tests" / "e2e" / "mastra"
MAIN_VENV_MITMDUMP = REPO_ROOT / ".venv" / "bin" / "mitmdump"
STARTUP_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
# Fixtures that start real processes; tests using them get the e2e marker automatically.
E2E_FIXTURES = {"standin", "mitmdump", "start_mitmdump", "mastra_project"}


@pytest.fixture
def counted(monkeypatch) -> dict[str, list[bytes]]:
    """Every body a reader decodes ("loads", whichever reader) and every tool-key scan starts
    on ("scans")."""

    seen: dict[str, list[bytes]] = {"loads": [], "scans": []}
    real_scan = bodies.TOOL_KEY_START

    class CountingPattern:
        def search(self, content, pos=0):
            if pos == 0:  # a scan starts; later calls go on from a false start
                seen["scans"].append(content)
            return real_scan.search(content, pos)

    def counting(decode):
        def body(content, shape=None):
            seen["loads"].append(content)
            return decode(content, shape)

        return body

    for reader in readers.READERS:
        monkeypatch.setattr(reader, "body", counting(reader.body))
    monkeypatch.setattr(bodies, "TOOL_KEY_START", CountingPattern())
    return seen


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def missing_infrastructure(reason: str) -> NoReturn:
    """Skip locally; fail under CI=true, where scripts/test has installed everything."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: missing test infrastructure is an error)", pytrace=False)
    pytest.skip(reason)


def _own_mitmdump() -> Path:
    # The mitmdump of the venv running pytest. sys.executable is <venv>/bin/python, a symlink
    # into the base interpreter: resolving it would leave the venv.
    own = Path(sys.executable).parent / "mitmdump"
    return own if own.exists() else MAIN_VENV_MITMDUMP


def mitmdump_binaries() -> list[Path]:
    """
    The mitmdump binaries the end-to-end tests run against: this venv's (mitmproxy 12 in the
    main run) and $TOOLNAMES_MITMDUMP_11 (set by scripts/test), unless that is the same one, as
    in the mitmproxy 11 run.
    """
    binaries = [_own_mitmdump()]
    mitmdump11 = os.environ.get("TOOLNAMES_MITMDUMP_11")
    if mitmdump11 and os.path.realpath(mitmdump11) != os.path.realpath(binaries[0]):
        binaries.append(Path(mitmdump11))
    return binaries


def mitmproxy_version(binary: Path) -> str | None:
    """The mitmproxy version installed next to a venv's mitmdump, read without running it."""
    dist_infos = binary.parent.parent.glob("lib/python3*/site-packages/mitmproxy-*.dist-info")
    for dist_info in sorted(dist_infos):
        return dist_info.name.removeprefix("mitmproxy-").removesuffix(".dist-info")
    return None


def _binary_id(binary: Path) -> str:
    version = mitmproxy_version(binary)
    return f"mitmproxy-{version}" if version else str(binary)


MITMDUMP_BINARIES = mitmdump_binaries()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chromium_path() -> str | None:
    for candidate in ("/usr/bin/chromium", "chromium", "chromium-browser"):
        path = shutil.which(candidate)
        if path:
            return path
    return None


def require_chromium() -> str:
    path = chromium_path()
    if path:
        return path
    reason = "chromium not found (scripts/test installs Debian's chromium when run as root)"
    if os.environ.get("TOOLNAMES_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason}; TOOLNAMES_REQUIRE_BROWSER=1 makes that an error", pytrace=False)
    missing_infrastructure(reason)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("browser"):
        require_chromium()


@dataclass
class Mitmdump:
    """A running mitmdump subprocess, started by the mitmdump fixture."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    command: list[str]
    confdir: Path
    _log_file: Any = field(repr=False, default=None)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_text(self) -> str:
        """Everything mitmdump has printed so far (stdout and stderr)."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_for_log(self, text: str, timeout: float = 10.0) -> str:
        """Waits until `text` appears in the output (mitmdump logs asynchronously)."""
        deadline = time.monotonic() + timeout
        while True:
            log = self.log_text()
            if text in log:
                return log
            if time.monotonic() > deadline or self.process.poll() is not None:
                pytest.fail(
                    f"{text!r} did not appear in mitmdump's output within {timeout}s "
                    f"(exit code {self.process.poll()}):\n{log}",
                    pytrace=False,
                )
            time.sleep(0.05)

    def stop(self) -> int:
        """SIGTERM (mitmdump shuts down cleanly, running the addons' done hooks), then SIGKILL.

        Not SIGINT: a mitmdump started from a background job can lose a SIGINT sent while it
        is still starting up (seen while writing scripts/demo).
        """
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        return self.process.returncode


def _wait_until_listening(proc: Mitmdump) -> str | None:
    """None once the port accepts connections, else why it never will."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.process.poll() is not None:
            return f"mitmdump exited with code {proc.process.returncode} before listening"
        try:
            with socket.create_connection(("127.0.0.1", proc.port), timeout=0.5):
                return None
        except OSError:
            time.sleep(0.05)
    return f"mitmdump did not listen on 127.0.0.1:{proc.port} within {STARTUP_TIMEOUT:.0f}s"


@pytest.fixture(scope="session")
def mitmproxy_confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A confdir for all mitmdumps of the session, so the CA is made once and ~/.mitmproxy is left alone."""
    return tmp_path_factory.mktemp("mitmproxy-confdir")


@pytest.fixture
def standin() -> Iterator[Any]:
    """A fresh stand-in LLM provider on a free loopback port (scripts/standin_provider.py)."""
    try:
        from standin_provider import StandinProvider
    except ImportError as e:
        missing_infrastructure(f"scripts/standin_provider.py cannot be imported: {e}")

    provider = StandinProvider(port=0)
    provider.start()
    try:
        yield provider
    finally:
        provider.stop()


@pytest.fixture
def mitmdump(
    request: pytest.FixtureRequest, tmp_path: Path, mitmproxy_confdir: Path
) -> Iterator[Callable[..., Mitmdump]]:
    """
    A factory that starts a real mitmdump and stops it after the test:

        start_mitmdump(*args, mode="reverse", upstream=None, binary=None, env=None, script=ADDON_SCRIPT)

    - mode: "reverse" or "upstream" (with `upstream`, which defaults to the `standin` fixture's
      url), or any other --mode value given whole ("regular", "reverse:http://...").
    - binary: a mitmdump path (e.g. the `mitmdump_binary` fixture); default: this venv's.
    - script: the addon to load with -s; None loads none.
    - args: more mitmdump arguments, e.g. "--set", "toolnames_mode=fix".
    """
    started: list[Mitmdump] = []

    def start_mitmdump(
        *args: str,
        mode: str = "reverse",
        upstream: str | None = None,
        binary: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        script: str | os.PathLike[str] | None = ADDON_SCRIPT,
    ) -> Mitmdump:
        exe = Path(binary) if binary is not None else _own_mitmdump()
        if not exe.exists():
            missing_infrastructure(
                f"mitmdump not found at {exe}; run scripts/test to set up the venvs"
            )
        if mode in ("reverse", "upstream"):
            if upstream is None:
                upstream = request.getfixturevalue("standin").url
            mode = f"{mode}:{upstream}"
        full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}

        failure = ""
        for attempt in range(3):
            port = free_port()
            command = [
                str(exe),
                "--listen-host",
                "127.0.0.1",
                "--listen-port",
                str(port),
                "--mode",
                mode,
                "--set",
                f"confdir={mitmproxy_confdir}",
            ]
            if script is not None:
                command += ["-s", str(script)]
            command += ["--set", "termlog_verbosity=info", *args]
            log_path = tmp_path / f"mitmdump-{len(started) + 1}-{port}.log"
            log_file = open(log_path, "wb")  # noqa: SIM115 (closed by Mitmdump.stop)
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                env=full_env,
                cwd=REPO_ROOT,
                start_new_session=True,
            )
            proc = Mitmdump(process, port, log_path, command, mitmproxy_confdir, log_file)
            started.append(proc)
            problem = _wait_until_listening(proc)
            if problem is None:
                return proc
            proc.stop()
            output = proc.log_text()
            failure = f"{problem}\ncommand: {' '.join(command)}\n--- mitmdump output ---\n{output}"
            # Another process can take the free port before mitmdump binds it: try another.
            if "address already in use" not in output.lower() or attempt == 2:
                break
        pytest.fail(failure, pytrace=False)

    yield start_mitmdump
    for proc in reversed(started):
        proc.stop()


# A second addon for mitmdump: prints the level of each toolnames log record, which mitmdump's
# own output does not show.
LEVEL_PRINTER = """
import logging

class PrintLevel(logging.Handler):
    def emit(self, record):
        if ": toolnames " in record.getMessage():
            print("level:", record.levelname, record.getMessage(), flush=True)

logging.getLogger().addHandler(PrintLevel())
"""


@pytest.fixture
def level_printer(tmp_path: Path) -> Path:
    """That addon as a script file: ``mitmdump("-s", str(level_printer), ...)``."""
    path = tmp_path / "print_levels.py"
    path.write_text(LEVEL_PRINTER)
    return path


@pytest.fixture
def start_mitmdump(mitmdump: Callable[..., Mitmdump]) -> Callable[..., Mitmdump]:
    """The same factory as `mitmdump`, by its function's name."""
    return mitmdump


@pytest.fixture(params=MITMDUMP_BINARIES, ids=[_binary_id(b) for b in MITMDUMP_BINARIES])
def mitmdump_binary(request: pytest.FixtureRequest) -> Path:
    """Parametrizes a test over the available mitmdumps (mitmproxy 12, and 11 under scripts/test)."""
    binary: Path = request.param
    if not binary.exists():
        missing_infrastructure(
            f"mitmdump not found at {binary}; run scripts/test to set up the venvs"
        )
    return binary


@pytest.fixture
def mastra_project() -> Path:
    """tests/e2e/mastra, with its node_modules installed (scripts/test runs npm ci there)."""
    if shutil.which("node") is None:
        pytest.fail("node not found: the Mastra end-to-end tests need Node.js", pytrace=False)
    if not (MASTRA_DIR / "node_modules" / "@mastra" / "core").is_dir():
        pytest.fail(
            f"{MASTRA_DIR / 'node_modules'} is missing or incomplete: run scripts/test "
            "(or `npm ci` in tests/e2e/mastra)",
            pytrace=False,
        )
    return MASTRA_DIR


@pytest.fixture
def chromium_binary() -> str:
    """Path of Debian's chromium; skips if missing (fails under CI or TOOLNAMES_REQUIRE_BROWSER=1)."""
    return require_chromium()
