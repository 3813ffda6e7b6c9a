"""Where the repository and its test infrastructure are: the mitmdump binaries, chromium.

Missing infrastructure (a venv, mitmdump 11, node_modules, chromium) is a skip on a developer's
machine but a failure under CI=true: scripts/test installs all of it, so there it means a broken
setup, and a silent skip would hide that.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

from harness.mitmdump import own_mitmdump

__all__ = [
    "CLAUDE_CODE_DIR",
    "MAIN_VENV_MITMDUMP",
    "MASTRA_DIR",
    "REPO_ROOT",
    "binary_id",
    "chromium_path",
    "in_ci",
    "missing_infrastructure",
    "mitmdump_binaries",
    "mitmproxy_version",
    "require_chromium",
]

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
MASTRA_DIR = REPO_ROOT / "tests" / "e2e" / "mastra"
CLAUDE_CODE_DIR = REPO_ROOT / "tests" / "e2e" / "claude_code"
MAIN_VENV_MITMDUMP = REPO_ROOT / ".venv" / "bin" / "mitmdump"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def missing_infrastructure(reason: str) -> NoReturn:
    """Skip locally; fail under CI=true, where scripts/test has installed everything."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: missing test infrastructure is an error)", pytrace=False)
    pytest.skip(reason)


def mitmdump_binaries() -> list[Path]:
    """
    The mitmdump binaries the end-to-end tests run against: this venv's (mitmproxy 12 in the
    main run) and $TOOLNAMES_MITMDUMP_11 (set by scripts/test), unless that is the same one, as
    in the mitmproxy 11 run.
    """
    binaries = [own_mitmdump()]
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


def binary_id(binary: Path) -> str:
    """A test id for a mitmdump binary: its mitmproxy version, or its path."""
    version = mitmproxy_version(binary)
    return f"mitmproxy-{version}" if version else str(binary)


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
