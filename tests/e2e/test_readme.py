"""
The commands the README and the manual give work as written: every proxy a user starts binds
to loopback, every repository path they name exists, and the scan and offline mitmdump
commands run on the committed samples (with mitmproxy 12, and 11 under scripts/test).

The commands are read from the ```sh blocks of README.md, every docs/*.md and flows/README.md,
and from the ``Usage:`` of addon/toolnames.py's docstring.
"""

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harness.mitmdump import ADDON_SCRIPT
from tests.testkit import REPO_ROOT

DOCS = [
    REPO_ROOT / "README.md",
    *sorted((REPO_ROOT / "docs").glob("*.md")),
    REPO_ROOT / "flows" / "README.md",
]
PROXIES = {"mitmdump", "mitmweb", "mitmproxy"}
# Where a command's argument names a file of the repository.
REPO_DIRS = ("addon/", "scripts/", "flows/", "tests/", "docs/", "requirements/")
# What starts a command line: a block holding one must be marked sh to be checked here.
PROGRAMS = re.compile(r"^(\.venv/bin/|scripts/\w|mitmdump |mitmweb |mitmproxy |export |python )")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def blocks(path: Path) -> list[tuple[str, str]]:
    return FENCE.findall(path.read_text(encoding="utf-8"))


def shell_lines(text: str) -> list[str]:
    """The commands of a shell block, continuation lines joined."""
    return [line for line in text.replace("\\\n", " ").splitlines() if line.strip()]


def readme_commands() -> list[list[str]]:
    commands = []
    for doc in DOCS:
        for lang, text in blocks(doc):
            if lang == "sh":
                commands += [shlex.split(line, comments=True) for line in shell_lines(text)]
    return [c for c in commands if c]


def usage_commands() -> list[list[str]]:
    docstring = ast.get_docstring(ast.parse(ADDON_SCRIPT.read_text(encoding="utf-8"))) or ""
    usage = docstring.split("Usage:\n\n", 1)[1].split("\n\n", 1)[0]
    return [shlex.split(line) for line in usage.splitlines()]


def program(command: list[str]) -> str:
    return Path(command[0]).name


def serves(command: list[str]) -> bool:
    """Whether a mitmproxy command starts a proxy server (-n and -nr do not)."""
    return not any(arg in ("-n", "-nr", "--no-server", "server=false") for arg in command)


def repo_paths(command: list[str]) -> list[str]:
    return [arg for arg in command[1:] if arg.startswith(REPO_DIRS)]


def test_the_readme_has_commands_to_check():
    commands = readme_commands()
    assert sum(program(c) in PROXIES for c in commands) >= 10
    assert sum(c[0] == "scripts/scan" for c in commands) >= 4


def test_every_block_with_a_command_is_marked_sh():
    unmarked = [
        f"{doc.name}: {line}"
        for doc in DOCS
        for lang, text in blocks(doc)
        if lang != "sh"
        for line in text.splitlines()
        if PROGRAMS.match(line)
    ]
    assert not unmarked, "commands outside ```sh blocks, not checked here: " + "; ".join(unmarked)


@pytest.mark.parametrize(
    "command",
    [c for c in readme_commands() + usage_commands() if program(c) in PROXIES],
    ids=" ".join,
)
def test_every_proxy_a_user_starts_binds_to_loopback(command):
    # mitmproxy listens on every interface by default; this proxy carries API keys.
    if serves(command):
        assert "--listen-host" in command, "no --listen-host 127.0.0.1"
        assert command[command.index("--listen-host") + 1] == "127.0.0.1"


@pytest.mark.parametrize(
    "command", [c for c in readme_commands() if program(c) in PROXIES], ids=" ".join
)
def test_every_readme_proxy_command_says_which_mitmproxy(command):
    assert command[0].startswith(".venv/bin/"), "the venv's mitmproxy, set up by the quick start"


@pytest.mark.parametrize("command", readme_commands() + usage_commands(), ids=" ".join)
def test_every_repository_path_a_command_names_exists(command):
    assert [p for p in repo_paths(command) if not (REPO_ROOT / p).exists()] == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO_ROOT)))
def test_every_repository_path_the_text_names_exists(doc):
    named = re.findall(
        r"`((?:addon|scripts|flows|tests|docs|requirements)/[^`\s]*)`", doc.read_text()
    )
    assert named
    missing = [p for p in named if not (REPO_ROOT / p).exists() and not (doc.parent / p).exists()]
    assert missing == []


# A relative Markdown link: its target (none for a link within the page) and its anchor.
LINK = re.compile(r"\]\(([^)#:\s]*)(?:#([^)\s]*))?\)")
HEADING = re.compile(r"^#+ (.+)$", re.M)


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in HEADING.findall(text)
    }


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(REPO_ROOT)))
def test_every_relative_link_names_a_file_and_heading_that_exist(doc):
    broken = []
    for target, anchor in LINK.findall(doc.read_text(encoding="utf-8")):
        path = doc.parent / target if target else doc
        if not path.exists():
            broken.append(target)
        elif anchor and (path.suffix != ".md" or anchor not in anchors(path)):
            broken.append(f"{target}#{anchor}")
    assert broken == []


def test_the_readme_links_to_every_page_of_the_manual():
    linked = {t for t, _ in LINK.findall((REPO_ROOT / "README.md").read_text(encoding="utf-8"))}
    pages = {f"docs/{page.name}" for page in (REPO_ROOT / "docs").glob("*.md")}
    assert pages <= linked


def test_the_sdk_snippets_take_their_key_from_the_environment():
    snippets = [
        (doc, text)
        for doc in DOCS
        for lang, text in blocks(doc)
        if lang == "python" and "OpenAI(" in text
    ]
    # The README's chat completions client; the manual's, and its realtime session.
    assert len(snippets) >= 3
    for doc, snippet in snippets:
        compile(snippet, doc.name, "exec")
        assert 'api_key=os.environ["OPENAI_API_KEY"]' in snippet
        assert 'base_url="http://127.0.0.1:8080/v1"' in snippet


def runnable(command: list[str]) -> bool:
    """Every file the command reads is in the repository."""
    files = [a for a in command[1:] if a.endswith((".mitm", ".har", ".yaml", ".json", ".py"))]
    return all(a.startswith(REPO_DIRS) for a in files)


SCANS = [c for c in readme_commands() if c[0] == "scripts/scan" and runnable(c)]
OFFLINE = [
    c
    for c in readme_commands()
    if program(c) == "mitmdump" and not serves(c) and runnable(c) and repo_paths(c)
]


@pytest.mark.e2e
@pytest.mark.parametrize("command", SCANS, ids=" ".join)
def test_the_scan_commands_run_on_the_committed_samples(command):
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        # This interpreter, not a .venv the command would set up on first use.
        env={**os.environ, "TOOLNAMES_SCAN_PYTHON": sys.executable},
    )
    # 1: error findings, as the samples hold; 2 would be an input it could not read.
    assert result.returncode == 1, result.stdout + result.stderr
    assert "error" in result.stdout


def test_there_are_scan_and_offline_commands_to_run():
    assert len(SCANS) >= 4 and len(OFFLINE) >= 2


@pytest.mark.e2e
@pytest.mark.parametrize("command", OFFLINE, ids=" ".join)
def test_the_offline_mitmdump_commands_run_on_the_committed_samples(
    command, mitmdump_binary, mitmproxy_confdir
):
    result = subprocess.run(
        [str(mitmdump_binary), *command[1:], "--set", f"confdir={mitmproxy_confdir}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert ": toolnames error: " in result.stdout
