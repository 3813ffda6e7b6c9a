"""
End to end: the toolnames_save file through a real mitmdump (12, and 11 under scripts/test)
after a record was cut by a kill, and on a full disk.

Before, a restarted mitmdump appended after a cut record without a word, and every flow saved
after the cut was lost to `mitmdump -nr` ("Invalid data format") and to scripts/scan (which
stopped at the cut); a full disk logged a traceback for every flagged flow and at shutdown.
"""

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harness.mitmdump import ADDON_SCRIPT
from tests.testkit import DIRECT
from tests.testkit import mitmdump_read
from tests.testkit import post
from tests.testkit import read_flows
from tests.testkit import run_scan
from tests.testkit import wait_for_flows

# Blocked in block mode (tool_choice names no offered tool): flagged, answered by toolnames.
DOOMED = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "search_web", "parameters": {}}}],
    "tool_choice": {"type": "function", "function": {"name": "search.web"}},
}
CLEAN = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}


def saving(mitmdump, binary: Path, path: Path):
    return mitmdump(
        "--set", "toolnames_mode=block", "--set", f"toolnames_save={path}", binary=binary
    )


def send_doomed(proxy, n: int) -> None:
    for _ in range(n):
        status, _, body = post(f"{proxy.url}/v1/chat/completions", DOOMED)
        assert status == 400 and b"toolnames:" in body


def split_records(data: bytes) -> list[bytes]:
    """A flow file's records, by their length prefixes."""
    records, pos = [], 0
    while pos < len(data):
        colon = data.index(b":", pos)
        stop = colon + 1 + int(data[pos:colon]) + 1
        records.append(data[pos:stop])
        pos = stop
    return records


def save_lines(log: str) -> list[str]:
    return [line.split("] ", 1)[-1] for line in log.splitlines() if "toolnames_save" in line]


def test_a_record_cut_by_a_kill_is_truncated_and_every_reader_reads_every_flow_after_it(
    mitmdump, mitmdump_binary, mitmproxy_confdir, tmp_path
):
    path = tmp_path / "flagged.mitm"
    first = saving(mitmdump, mitmdump_binary, path)
    send_doomed(first, 2)
    wait_for_flows(path, 2)
    first.kill9()
    # What a kill in the middle of writing a record leaves: the start of one, cut.
    whole = path.read_bytes()
    record = split_records(whole)[0]
    cut = record[: len(record) // 2]
    with open(path, "ab") as f:
        f.write(cut)

    second = saving(mitmdump, mitmdump_binary, path)
    send_doomed(second, 2)
    wait_for_flows(path, 4)
    assert second.stop() == 0

    log = second.log_text()
    assert save_lines(log) == [
        f"toolnames_save: {path} ended inside a flow record cut short by a kill or a full disk "
        f"(a record declares {len(record)} bytes and only {len(cut)} remain): "
        f"truncated it to its 2 whole flow(s), {len(cut)} byte(s) removed; saving "
        "appends after them"
    ]
    assert len(read_flows(path)) == 4
    # mitmdump -nr reads the whole file: four flows, each logged as it was flagged.
    shown = mitmdump_read(mitmdump_binary, mitmproxy_confdir, path, "-s", str(ADDON_SCRIPT))
    assert shown.count("toolnames blocked") == 4, shown
    scan = run_scan("--json", path)
    assert scan.returncode == 1, scan.stderr  # errors found, and nothing unread
    assert "4 recorded exchanges" in scan.stderr and "skipped" not in scan.stderr


def test_a_file_damaged_before_its_end_goes_aside_and_scan_reads_every_whole_flow_in_it(
    mitmdump, mitmdump_binary, mitmproxy_confdir, tmp_path
):
    # What toolnames made of a cut file before: a cut record, flows appended after it.
    path = tmp_path / "flagged.mitm"
    first = saving(mitmdump, mitmdump_binary, path)
    send_doomed(first, 2)
    wait_for_flows(path, 2)
    assert first.stop() == 0
    one, two = split_records(path.read_bytes())
    damaged = one + two[:200] + two
    path.write_bytes(damaged)

    second = saving(mitmdump, mitmdump_binary, path)
    send_doomed(second, 1)
    wait_for_flows(path, 1)
    assert second.stop() == 0

    aside = tmp_path / "flagged.mitm.damaged"
    assert aside.read_bytes() == damaged
    (line,) = save_lines(second.log_text())
    assert f"moved it as it is to {aside}" in line
    mitmdump_read(mitmdump_binary, mitmproxy_confdir, path)  # the new file reads whole
    scan = run_scan("--json", aside)
    assert scan.returncode == 2, scan.stderr  # incomplete: the damage is reported
    assert "flows[1] skipped: bytes" in scan.stderr
    assert len(scan.stdout.splitlines()) == 2 * len(run_scan("--json", path).stdout.splitlines())


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs, as root can mount one; skipped elsewhere."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)],
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_full_disk_is_one_line_the_proxy_goes_on_and_saving_resumes_when_there_is_room(
    mitmdump, mitmdump_binary, tiny_disk
):
    path = tiny_disk / "flagged.mitm"
    pad = tiny_disk / "pad"
    pad.write_bytes(b"x" * 48 * 1024)  # room for a few flows
    proxy = saving(mitmdump, mitmdump_binary, path)
    send_doomed(proxy, 15)
    status, _, _ = post(f"{proxy.url}/v1/chat/completions", CLEAN)
    assert status == 200  # still proxying
    log = proxy.wait_for_log("toolnames_save")
    saved = len(read_flows(path))
    assert 0 < saved < 15
    pad.unlink()
    send_doomed(proxy, 1)
    log = proxy.wait_for_log("saving to")
    assert proxy.stop() == 0

    log = proxy.log_text()
    assert "Traceback" not in log and "Error" not in log.replace("toolnames_save", ""), log
    assert save_lines(log) == [
        f"toolnames_save: cannot write a flagged flow to {path} (No space left on device): it "
        "and each flagged flow after it are not saved while writing fails (the file keeps every "
        "flow saved before), and toolnames says when one is",
        f"toolnames_save: saving to {path} again; {15 - saved} flagged flow(s) were not saved "
        "while it failed (No space left on device)",
    ]
    assert len(read_flows(path)) == saved + 1  # whole: no cut record was left in it


def post_raw(url: str, raw: bytes, headers: dict) -> int:
    request = urllib.request.Request(url, data=raw, headers=headers, method="POST")
    try:
        with DIRECT.open(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


# A Responses API request with remote MCP servers whose URLs carry their keys, and a
# function name OpenAI rejects (blocked, so flagged and saved).
MCP_URLS = {
    "model": "gpt-4.1",
    "input": "hi",
    "tools": [
        {"type": "function", "name": "search.web", "parameters": {"type": "object"}},
        {
            "type": "mcp",
            "server_label": "gh",
            "server_url": "https://mcp.example/sse?team=a&api_key=URLSECRET1",
            "require_approval": "never",
        },
        {"type": "mcp", "server_label": "me", "server_url": "https://me:URLSECRET2@mcp.example/"},
    ],
}


def test_saved_flows_keep_no_credential_of_a_url_a_form_or_a_body_that_does_not_decode(
    mitmdump, mitmdump_binary, mitmproxy_confdir, tmp_path
):
    path = tmp_path / "flagged.mitm"
    proxy = saving(mitmdump, mitmdump_binary, path)
    assert post(f"{proxy.url}/v1/responses", MCP_URLS)[0] == 400
    # Says gzip, and is plain: the body goes by unread, and the provider refuses it.
    lying = json.dumps({**DOOMED, "api_key": "LIESECRET"}).encode()
    status = post_raw(
        f"{proxy.url}/v1/chat/completions",
        lying,
        {"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert status >= 400
    wait_for_flows(path, 2)
    assert proxy.stop() == 0

    data = path.read_bytes()
    assert b"SECRET" not in data
    urls, unread = read_flows(path)
    tools = json.loads(urls.request.content)["tools"]
    assert tools[1]["server_url"] == "https://mcp.example/sse?team=a&api_key=REDACTED-by-toolnames"
    assert tools[2]["server_url"] == "https://REDACTED-by-toolnames@mcp.example/"
    assert unread.request.raw_content is None
    why = unread.metadata["toolnames_save_left_out"]["request"]
    assert why.startswith("its Content-Encoding (gzip) does not decode")
    lines = save_lines(proxy.log_text())
    assert lines == [
        f"POST 127.0.0.1/v1/chat/completions: toolnames_save: saved without its request body: {why}"
    ]
    # The scan reports the flow from the live addon's record.
    scan = run_scan("--json", path)
    assert "request-unreadable" in scan.stdout, scan.stdout + scan.stderr
