"""
Shared fixtures for the end-to-end tests: the stand-in provider and real mitmdump processes;
and ``counted``, which records what the core parses and scans.

    def test_passthrough(mitmdump, mitmdump_binary):
        proxy = mitmdump(binary=mitmdump_binary)  # reverse proxy to a fresh stand-in provider
        ...                                        # send requests to proxy.url
        assert "toolnames" in proxy.log_text()

Helpers live in tests/testkit/, which test modules import; nothing is imported from here.
"""

import os
import shutil
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.mitmdump import ADDON_SCRIPT
from harness.mitmdump import own_mitmdump
from harness.mitmdump import start_mitmdump as start_mitmdump_process
from harness.processes import Process
from harness.processes import ProcessGroup
from harness.processes import StartupError
from tests.testkit.infrastructure import CLAUDE_CODE_DIR
from tests.testkit.infrastructure import MASTRA_DIR
from tests.testkit.infrastructure import binary_id
from tests.testkit.infrastructure import missing_infrastructure
from tests.testkit.infrastructure import mitmdump_binaries
from tests.testkit.infrastructure import require_chromium
from toolnames_core import bodies
from toolnames_core import readers

# Fixtures that start real processes; tests using them get the e2e marker automatically.
E2E_FIXTURES = {"standin", "mitmdump", "start_mitmdump", "mastra_project", "claude_code_project"}


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
        def body(content, shape=None, resent=()):
            seen["loads"].append(content)
            return decode(content, shape, resent)

        return body

    for reader in readers.READERS:
        monkeypatch.setattr(reader, "body", counting(reader.body))
    monkeypatch.setattr(bodies, "TOOL_KEY_START", CountingPattern())
    return seen


MITMDUMP_BINARIES = mitmdump_binaries()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.e2e)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("browser"):
        require_chromium()


@pytest.fixture(scope="session")
def mitmproxy_confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A confdir for all mitmdumps of the session, so the CA is made once and ~/.mitmproxy is left alone."""
    return tmp_path_factory.mktemp("mitmproxy-confdir")


@pytest.fixture
def standin() -> Iterator[Any]:
    """A fresh stand-in LLM provider on a free loopback port (scripts/standin/)."""
    try:
        from standin import StandinProvider
    except ImportError as e:
        missing_infrastructure(f"the standin package cannot be imported: {e}")

    provider = StandinProvider(port=0)
    provider.start()
    try:
        yield provider
    finally:
        provider.stop()


@pytest.fixture
def mitmdump(
    request: pytest.FixtureRequest, tmp_path: Path, mitmproxy_confdir: Path
) -> Iterator[Callable[..., Process]]:
    """
    A factory that starts a real mitmdump (scripts/harness) and stops it after the test:

        start_mitmdump(*args, mode="reverse", upstream=None, binary=None, env=None, script=ADDON_SCRIPT)

    - mode: "reverse" or "upstream" (with `upstream`, which defaults to the `standin` fixture's
      url), or any other --mode value given whole ("regular", "reverse:http://...").
    - binary: a mitmdump path (e.g. the `mitmdump_binary` fixture); default: this venv's.
    - script: the addon to load with -s; None loads none.
    - args: more mitmdump arguments, e.g. "--set", "toolnames_mode=fix".
    """
    with ProcessGroup() as group:

        def start_mitmdump(
            *args: str,
            mode: str = "reverse",
            upstream: str | None = None,
            binary: str | os.PathLike[str] | None = None,
            env: dict[str, str] | None = None,
            script: str | os.PathLike[str] | None = ADDON_SCRIPT,
        ) -> Process:
            exe = Path(binary) if binary is not None else own_mitmdump()
            if not exe.exists():
                missing_infrastructure(
                    f"mitmdump not found at {exe}; run scripts/test to set up the venvs"
                )
            if mode in ("reverse", "upstream"):
                if upstream is None:
                    upstream = request.getfixturevalue("standin").url
                mode = f"{mode}:{upstream}"
            try:
                proc = start_mitmdump_process(
                    exe,
                    mode,
                    confdir=mitmproxy_confdir,
                    log_dir=tmp_path,
                    name="mitmdump",
                    scripts=[Path(script)] if script is not None else [],
                    args=args,
                    env=env,
                )
            except StartupError as e:
                pytest.fail(str(e), pytrace=False)
            return group.add(proc)

        yield start_mitmdump


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
def start_mitmdump(mitmdump: Callable[..., Process]) -> Callable[..., Process]:
    """The same factory as `mitmdump`, by its function's name."""
    return mitmdump


@pytest.fixture(params=MITMDUMP_BINARIES, ids=[binary_id(b) for b in MITMDUMP_BINARIES])
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
def claude_code_project() -> Path:
    """tests/e2e/claude_code, with both pinned Claude Codes installed (scripts/test runs npm ci
    there). Without node there is nothing to run them with: a skip that says so (a failure
    under CI=true); node present but the packages missing is a broken setup, so a failure."""
    if shutil.which("node") is None:
        missing_infrastructure("node not found: the Claude Code end-to-end tests need Node.js")
    if not (CLAUDE_CODE_DIR / "node_modules" / "@anthropic-ai" / "claude-code").is_dir():
        pytest.fail(
            f"{CLAUDE_CODE_DIR / 'node_modules'} is missing or incomplete: run scripts/test "
            "(or `npm ci` in tests/e2e/claude_code)",
            pytrace=False,
        )
    return CLAUDE_CODE_DIR


@pytest.fixture
def chromium_binary() -> str:
    """Path of Debian's chromium; skips if missing (fails under CI or TOOLNAMES_REQUIRE_BROWSER=1)."""
    return require_chromium()
