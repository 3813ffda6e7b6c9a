"""The project cites what a reader can open: every "providers.md §N" names a section of the
project's own docs/providers.md, and no tracked file names a path outside the repository."""

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CITATION = re.compile(r"providers\.md §(\d+(?:\.\d+)?)")
SECTION = re.compile(r"^#+ §(\d+(?:\.\d+)?) ", re.M)
# A relative path that climbs out of the file's folder, to be resolved against the repository.
CLIMBING = re.compile(r"(?:\.\./)+[\w.-]+")
# A relative path (first folder and the rest), to be told apart from the files beside the
# repository.
RELATIVE = re.compile(r"(?<![\w./-])([\w.-]+)/[\w.-][\w./-]*")
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


def outside(name: str, text: str) -> list[str]:
    """The places ``text`` names a path outside the repository: one that exists under the
    folder that holds the repository or under the home folder, a relative path whose parent
    steps climb out of it from the file's own folder, or a folder that sits beside it."""
    here = (REPO / name).parent
    # Only what is really there: a clone in /tmp may well name /tmp/something else.
    outer = text.replace(str(REPO), "")
    found = [
        m.group()
        for root in {REPO.parent, Path.home()}
        if root != Path("/")
        for m in re.finditer(re.escape(f"{root}/") + r"[\w.-]+", outer)
        if (Path(m.group())).exists()
    ]
    for m in CLIMBING.finditer(text):
        if not (here / m.group()).resolve().is_relative_to(REPO):
            found.append(m.group())
    # Only a path that is really there beside the repository: a folder name alone (mcp/,
    # shared/) may be a sibling by chance wherever a clone happens to sit.
    beside = _beside_the_repository()
    found += [
        m.group()
        for m in RELATIVE.finditer(text)
        if m.group(1) in beside and (REPO.parent / m.group().rstrip(".")).exists()
    ]
    return found


def _beside_the_repository() -> frozenset[str]:
    """The folders next to the repository (reading kept beside it), but none it has itself."""
    try:
        siblings = {p.name for p in REPO.parent.iterdir() if p.is_dir()}
    except OSError:
        return frozenset()
    own = {p.name for p in REPO.iterdir()}
    return frozenset(siblings - own - {REPO.name})


def test_no_tracked_file_names_a_path_outside_the_repository():
    found = {name: paths for name, text in tracked_text().items() if (paths := outside(name, text))}
    assert not found, f"paths outside the repository: {found}"


def test_a_path_beside_the_repository_is_found():
    # Built, not written out: this file is held to its own rule.
    up = f"{os.pardir}/"
    assert outside("docs/providers.md", f"see {up * 2}notes/x.md") == [f"{up * 2}notes"]
    assert outside("docs/providers.md", f"see {up}README.md") == []
    assert outside("README.md", f"see {REPO.parent}/no-such-notes/x.md") == []
    assert outside("README.md", f"see {REPO}/README.md") == []


def test_a_file_beside_the_repository_is_found_but_not_a_folder_name_alone():
    # A folder made beside the repository for this test, removed after it.
    import tempfile

    with tempfile.TemporaryDirectory(dir=REPO.parent, prefix="tn-citation-probe-") as made:
        beside = Path(made)
        (beside / "notes.md").write_text("reading\n")
        cited = f"see {beside.name}/notes.md"
        assert outside("README.md", cited) == [f"{beside.name}/notes.md"]
        # The same name as a sibling by chance (tests/core/mcp/ beside a worktree named mcp).
        assert outside("README.md", f"see {beside.name}/exchange.py") == []
