"""scripts/scan as the tests run it, and the recorded traffic they feed it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from samples import recordings as samples
from scanner import cli
from tests.testkit.infrastructure import REPO_ROOT

__all__ = [
    "ANSI",
    "BAD_CASE_FINDINGS",
    "FORMAT_OF",
    "MeasuredScan",
    "SCAN_SCRIPT",
    "UNIT_OF",
    "WRITERS",
    "bad_flows",
    "big_flagged_flow",
    "cut_file",
    "measured_scan",
    "run_scan",
    "scan_env",
    "scan_found",
    "scan_json",
    "strip_ansi",
]

SCAN_SCRIPT = REPO_ROOT / "scripts" / "scan"


ANSI = "\x1b["


def scan_env() -> dict[str, str]:
    return {**os.environ, "TOOLNAMES_SCAN_PYTHON": sys.executable}


def big_flagged_flow():
    """A flow whose 110 KB request (a long conversation) offers a bad name and whose answer
    calls a tool never offered: two errors, for the scanner's memory tests."""
    body = samples.weather_request_body()
    body["messages"] = [
        {"role": "user" if i % 2 else "assistant", "content": "lorem ipsum dolor " * 300}
        for i in range(20)
    ]
    body["tools"].append(samples.function_tool("bad.name"))
    return samples.chat_flow("big", body, samples.hallucinated_call_response())


class MeasuredScan(NamedTuple):
    code: int
    peak_mb: float  # the scan's peak RSS
    stderr: str


# Run by a small Python between pytest and the scan: measured from pytest directly, the scan's
# figure would include pytest's own pages (Linux counts what a process held before exec in its
# maxrss).
_MEASURE = (
    "import resource, subprocess, sys\n"
    "with open(sys.argv[1], 'wb') as err:\n"
    "    code = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err,"
    " stdin=subprocess.DEVNULL)\n"
    "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def measured_scan(path: Path, workdir: Path) -> MeasuredScan:
    """``scripts/scan --json path``: its exit code, peak RSS and what it wrote to stderr."""
    err = workdir / "scan-stderr.txt"
    result = subprocess.run(
        [sys.executable, "-c", _MEASURE, err, SCAN_SCRIPT, "--json", path],
        capture_output=True,
        text=True,
        env=scan_env(),
        timeout=600,
        check=True,
    )
    code, peak_kib = map(int, result.stdout.split())
    return MeasuredScan(code, peak_kib / 1024, err.read_text())  # ru_maxrss is in KiB


def run_scan(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCAN_SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        env=scan_env(),
        cwd=cwd,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def scan_json(capsys, *args: str | Path) -> tuple[int, list[dict], str]:
    code = cli.main(["--json", *map(str, args)])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def scan_found(rows: list[dict]) -> list[tuple[int, str, str]]:
    return sorted((r["flow"], r["code"], r["path"]) for r in rows)


# The bad cases of issues 2 and 3, one exchange each, and what the scan reports for each.
def bad_flows() -> list:
    return [
        samples.chat_flow(
            "mastra", samples.mastra_choice_mismatch_body(), samples.rejected("x", None), status=400
        ),
        samples.chat_flow(
            "names", samples.bad_names_body(), samples.rejected("x", None), status=400
        ),
        samples.chat_flow(
            "hallucinated",
            samples.weather_request_body(),
            samples.hallucinated_call_response(),
            response_encoding="gzip",
        ),
        samples.chat_flow(
            "parallel", samples.weather_request_body(), samples.parallel_wrapper_response()
        ),
        samples.chat_flow(
            "streamed",
            samples.weather_request_body(stream=True),
            samples.streamed_call_response(),
            content_type="text/event-stream",
        ),
        samples.chat_flow(
            "clean", samples.weather_request_body(), samples.clean_flows()[0].response.text
        ),
        samples.chat_flow("not-llm", b"hello", method="GET", path="/index.html"),
    ]


BAD_CASE_FINDINGS = [
    (0, "choice-not-in-tools", "tool_choice.function.name"),
    (1, "name-invalid-chars", "tools[0].function.name"),  # github.create_issue
    (1, "name-invalid-chars", "tools[2].function.name"),  # filesystem:read_file
    (1, "name-too-long", "tools[1].function.name"),  # 70 characters
    (2, "response-unknown-tool", "choices[0].message.tool_calls[0].function.name"),
    (3, "response-unknown-tool", "choices[0].message.tool_calls[0].function.name"),
    (4, "response-unknown-tool", "events[1].choices[0].delta.tool_calls[0].function.name"),
]


WRITERS = {
    "flows.mitm": samples.write_flows,
    "traffic.har": samples.write_har,
    "cassette.yaml": samples.write_cassette,
}


FORMAT_OF = {"flows.mitm": "mitmproxy", "traffic.har": "har", "cassette.yaml": "cassette"}


UNIT_OF = {"flows.mitm": "flow", "traffic.har": "entries", "cassette.yaml": "interactions"}


def strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)


def cut_file(path: Path, fraction: float = 0.5) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path
