"""The project cites what a reader can open: every "providers.md §N" names a section of the
project's own docs/providers.md, and no tracked file names a path outside the repository."""

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CITATION = re.compile(r"providers\.md §(\d+(?:\.\d+)?)")
SECTION = re.compile(r"^#+ §(\d+(?:\.\d+)?) ", re.M)
# Paths of the machine the project was written on, or of reading kept beside the repository.
OUTSIDE = re.compile(r"/work/|/root/|/home/|\.\./shared/|shared/reference/")
NOT_TEXT = (".mitm", ".flows", ".har", ".zhar", ".gz", ".png", ".lock")


def tracked_text() -> dict[str, str]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    texts = {}
    for name in listed.decode().split("\0"):
        path = REPO / name
        if not name or name.endswith(NOT_TEXT) or name.endswith("package-lock.json"):
            continue
        try:
            texts[name] = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue
    return texts


def test_every_citation_of_providers_md_names_a_section_it_has():
    sections = set(SECTION.findall((REPO / "docs" / "providers.md").read_text()))
    cited = {
        f"{name}: §{number}"
        for name, text in tracked_text().items()
        for number in CITATION.findall(text)
        if number not in sections
    }
    assert not cited, f"citations of sections docs/providers.md lacks: {sorted(cited)}"


def test_no_tracked_file_names_a_path_outside_the_repository():
    found = [
        f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()}"
        for name, text in tracked_text().items()
        if name != "tests/test_citations.py"
        for m in OUTSIDE.finditer(text)
    ]
    assert not found, f"paths outside the repository: {found}"
