"""The sample recordings in flows/ (samples.recordings): what the scan finds in them, no real
credentials, the same bytes on every run.
"""

from pathlib import Path

from samples import recordings as samples
from tests.testkit import REPO_ROOT
from tests.testkit import scan_json

# -- Samples in flows/ ------------------------------------------------------------------------


SAMPLE_FINDINGS = {
    # Flows 0 and 1 record the provider's 400, which names the tool the request check flagged:
    # provider-rejected confirms the prediction.
    "all-cases.har": [
        (0, "choice-not-in-tools"),
        (0, "provider-rejected"),
        (1, "name-invalid-chars"),
        (1, "name-invalid-chars"),
        (1, "name-too-long"),
        (1, "provider-rejected"),
        (2, "response-unknown-tool"),
        (3, "response-unknown-tool"),
        (4, "response-unknown-tool"),
    ],
    "bad-names.mitm": [
        (0, "name-invalid-chars"),
        (0, "name-invalid-chars"),
        (0, "name-too-long"),
        (0, "provider-rejected"),
    ],
    "cassettes/test_agent.yaml": [
        (0, "choice-not-in-tools"),
        (0, "provider-rejected"),
        (1, "response-unknown-tool"),
        (2, "response-unknown-tool"),
        (3, "response-unknown-tool"),
    ],
    "clean.mitm": [],
    "hallucinated-call.mitm": [
        (0, "response-unknown-tool"),
        (1, "response-unknown-tool"),
        (2, "response-unknown-tool"),
    ],
    "mastra-choice-mismatch.mitm": [(0, "choice-not-in-tools"), (0, "provider-rejected")],
    # An MCP session: the three bad listed names, an unlisted call, a disagreeing Mcp-Name.
    "mcp-session.mitm": [
        (0, "mcp-name-invalid"),
        (0, "mcp-name-invalid"),
        (0, "mcp-name-rejected"),
        (0, "mcp-name-rejected"),
        (0, "mcp-name-rejected"),
        (2, "mcp-call-unlisted"),
        (3, "mcp-header-mismatch"),
    ],
}


def test_the_committed_samples_show_the_documented_findings(capsys):
    flows_dir = REPO_ROOT / "flows"
    code, rows, err = scan_json(capsys, flows_dir)

    by_file = {name: [] for name in SAMPLE_FINDINGS}
    for r in rows:
        by_file[Path(r["file"]).relative_to(flows_dir).as_posix()].append((r["flow"], r["code"]))
    assert {k: sorted(v) for k, v in by_file.items()} == SAMPLE_FINDINGS
    assert "7 files (1 other file skipped)" in err  # README.md
    assert code == 1


def test_the_samples_hold_no_real_credentials():
    for path in (REPO_ROOT / "flows").rglob("*"):
        if path.is_file() and path.name != "README.md":
            data = path.read_bytes()
            if path.suffix != ".mitm" or b"gzip" not in data:
                assert b"Bearer sk-test-not-a-key" in data
            assert data.count(b"Bearer ") == data.count(b"Bearer sk-test-not-a-key")


def test_sample_generation_is_reproducible(tmp_path):
    for out in (tmp_path / "one", tmp_path / "two"):
        samples.main(["samples", str(out)])

    for path in (tmp_path / "one").rglob("*"):
        if path.is_file():
            assert (
                path.read_bytes()
                == (tmp_path / "two" / path.relative_to(tmp_path / "one")).read_bytes()
            )
