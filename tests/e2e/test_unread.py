"""
What toolnames could not read is said, never passed off as clean (issue 23): a whole answer
whose gzip body does not decode, through a real mitmdump in observe and fix mode, live and
again by `scripts/scan` on the saved file.
"""

import json
import subprocess

import pytest

from tests.testkit import annotations
from tests.testkit import post
from tests.testkit import wait_for_flows

SCAN = ["scripts/scan", "--json", "--no-progress"]
# Fix mode sends the dotted name under an alias (OpenAI rejects the dot); observe sends a good one.
NAMES = {"observe": "create_issue", "fix": "github.create_issue"}


def chat(name: str) -> dict:
    tool = {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "go"}],
        "tools": [tool],
    }


def scanned(saved) -> list[tuple[str, str]]:
    result = subprocess.run(
        [*SCAN, str(saved)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode in (0, 1), result.stderr
    return [(r["code"], r["severity"]) for r in map(json.loads, result.stdout.splitlines())]


@pytest.mark.parametrize("mode", ["observe", "fix"])
@pytest.mark.parametrize("corrupt", ["crc", "cut"])
def test_a_whole_answer_whose_gzip_does_not_decode_is_unreadable(
    mitmdump, mitmdump_binary, standin, tmp_path, mode, corrupt
):
    saved = tmp_path / "unread.mitm"
    proxy = mitmdump(
        "--set",
        f"toolnames_mode={mode}",
        "--set",
        f"toolnames_save={saved}",
        binary=mitmdump_binary,
    )
    # The model calls a tool never offered: a read answer would be response-unknown-tool.
    headers = {"x-standin-call": "delete_repo", "x-standin-corrupt-gzip": corrupt}
    status, got, body = post(proxy.url + "/v1/chat/completions", chat(NAMES[mode]), headers)

    assert status == 200 and got["content-encoding"] == "gzip"
    assert body == standin.requests[-1]["response_body"]  # on as it came, in either mode
    (flow,) = wait_for_flows(saved, 1)
    proxy.stop()
    record = flow.metadata["toolnames"]
    codes = [f["code"] for f in record["findings"]]
    assert "response-unreadable" in codes and "response-unknown-tool" not in codes
    unreadable = next(f for f in record["findings"] if f["code"] == "response-unreadable")
    # mitmproxy 11 refuses a cut gzip body; 12 decodes it as far as it goes, a cut JSON.
    assert unreadable["message"].startswith("the tool calls in the answer were not checked: ")
    lines = annotations(proxy.log_text())
    assert len(lines) == 1
    if mode == "fix":
        # The alias went to the provider; nothing in the answer could be given back.
        assert record["action"] == "fixed"
        (skipped,) = record["fix_skipped"]
        assert (
            skipped["name"] == NAMES["fix"]
            and "was not given back in the answer" in skipped["reason"]
        )
        assert "not fixed: 'github.create_issue' was not given back" in lines[0]
    else:
        assert lines[0].startswith("toolnames warning: response-unreadable: ")
    assert ("response-unreadable", "warning") in scanned(saved)
