"""scripts/scan's command line (scanner.cli): output by where it goes, exit statuses, help, folders.

Exit statuses are checked by running the real scripts/scan with this interpreter
(TOOLNAMES_SCAN_PYTHON); everything else runs cli.main() in-process.
"""

import json
import os
import pty
import select
import struct
import subprocess
import termios
from pathlib import Path

import pytest

from samples import recordings as samples
from scanner import cli
from tests.testkit import ANSI
from tests.testkit import BAD_CASE_FINDINGS
from tests.testkit import SCAN_SCRIPT
from tests.testkit import run_scan
from tests.testkit import scan_env
from tests.testkit import scan_json
from tests.testkit import strip_ansi
from toolnames_core import readers


def test_json_lines_name_the_file_flow_endpoint_api_rule_and_severity(capsys, recordings):
    _, rows, _ = scan_json(capsys, recordings["flows.mitm"])

    first = rows[0]
    assert first == {
        "file": str(recordings["flows.mitm"]),
        "format": "mitmproxy",
        "flow": 0,
        "flow_id": first["flow_id"],
        "endpoint": "POST api.openai.com/v1/chat/completions",
        "method": "POST",
        "host": "api.openai.com",
        "api": "openai-chat",
        "rule": "openai",
        "severity": "error",
        "code": "choice-not-in-tools",
        "path": "tool_choice.function.name",
        "message": "tool_choice.function.name 'search.web' (10 chars) names no offered tool; "
        "offered: 'search_web'",
    }
    assert len(first["flow_id"]) == 36


def test_output_is_tab_separated_without_colors_when_not_a_terminal(capsys, recordings):
    code = cli.main([str(recordings["traffic.har"])])
    out, err = capsys.readouterr()

    lines = out.splitlines()
    assert lines[0] == "file\tflow\tendpoint\tseverity\tcode\tpath\tmessage"
    assert len(lines) == 1 + len(BAD_CASE_FINDINGS)
    assert all(len(line.split("\t")) == 7 for line in lines)
    assert lines[1].split("\t")[:6] == [
        str(recordings["traffic.har"]),
        "0",
        "POST api.openai.com/v1/chat/completions",
        "error",
        "choice-not-in-tools",
        "tool_choice.function.name",
    ]
    assert ANSI not in out + err
    assert code == 1


def test_rule_option_checks_a_host_against_another_providers_rule(capsys, tmp_path):
    path = samples.write_flows(
        tmp_path / "n.mitm", [samples.chat_flow("names", samples.bad_names_body())]
    )

    _, rows, _ = scan_json(capsys, "--rule", "api.openai.com=gemini", path)

    # Gemini allows dots and colons; the 70 characters are still too many.
    assert [(r["rule"], r["code"]) for r in rows] == [("gemini", "name-too-long")]


def read_pty(fd: int, proc: subprocess.Popen) -> str:
    chunks = []
    while True:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the other side is closed
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    return b"".join(chunks).decode("utf-8", "replace")


def test_on_a_terminal_the_output_is_a_colored_table_with_a_progress_bar(recordings):
    master, slave = pty.openpty()
    import fcntl

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 220, 0, 0))
    proc = subprocess.Popen(
        [str(SCAN_SCRIPT), str(recordings["flows.mitm"])],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env={k: v for k, v in scan_env().items() if k != "NO_COLOR"} | {"TERM": "xterm"},
    )
    os.close(slave)
    try:
        text = read_pty(master, proc)
        code = proc.wait(timeout=60)
    finally:
        os.close(master)

    assert code == 1
    assert "\t" not in text
    assert "\x1b[31;1merror" in text
    assert "\r\x1b[K[" in text  # the progress bar, then cleared
    plain = strip_ansi(text)
    assert "choice-not-in-tools" in plain and "tool_choice.function.name" in plain
    assert "7 recorded exchanges" in plain


# -- Exit codes (the real scripts/scan) -----------------------------------------------------


def test_both_readers_find_the_same_and_the_summary_names_the_reader(capsys, recordings):
    paths = list(recordings.values())
    scans = {name: scan_json(capsys, "--reader", name, *paths) for name in ("json", "auto")}
    assert scans["json"][:2] == scans["auto"][:2]
    assert scans["json"][1]  # findings, in every recording format
    assert scans["json"][2].rstrip().endswith("; bodies read with json")
    assert scans["auto"][2].rstrip().endswith(f"; bodies read with {readers.READERS[0].name}")


def test_msgspec_is_a_usage_error_where_it_cannot_be_imported(capsys, recordings):
    if readers.FAST:
        code, rows, err = scan_json(capsys, "--reader", "msgspec", recordings["flows.mitm"])
        assert rows and err.rstrip().endswith("; bodies read with msgspec")
        return
    with pytest.raises(SystemExit) as e:
        cli.main(["--reader", "msgspec", str(recordings["flows.mitm"])])
    assert e.value.code == 2
    assert "pipx inject mitmproxy msgspec" in capsys.readouterr().err


def test_exit_0_when_no_finding_is_an_error(tmp_path):
    result = run_scan(samples.write_flows(tmp_path / "clean.mitm", samples.clean_flows()))

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["file\tflow\tendpoint\tseverity\tcode\tpath\tmessage"]
    assert "1 file, 1 recorded exchange, 1 LLM API call checked: 0 errors" in result.stderr


def test_exit_0_for_warnings_only(tmp_path):
    har = samples.har_document([samples.chat_flow("no-body", samples.weather_request_body())])
    del har["log"]["entries"][0]["request"]["postData"]
    path = tmp_path / "no-body.har"
    path.write_text(json.dumps(har))

    result = run_scan("--json", path)

    assert [json.loads(line)["code"] for line in result.stdout.splitlines()] == [
        "request-unreadable"
    ]
    assert result.returncode == 0


def test_exit_1_when_any_finding_is_an_error(recordings):
    result = run_scan(*recordings.values())

    assert result.returncode == 1, result.stderr
    assert "3 files, 21 recorded exchanges, 18 LLM API calls checked: 21 errors" in result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "the following arguments are required: PATH"),
        (["does-not-exist.mitm"], "no such file or directory: does-not-exist.mitm"),
        (["--rule", "no-equals-sign", "."], "argument --rule: expected HOST_PATTERN=RULE"),
        (["--mcp-rule", "nosuchrule", "."], "argument --mcp-rule: 'nosuchrule' is not a rule"),
        (
            ["--rule", "*=nosuchrule", "."],
            "argument --rule: unknown rule 'nosuchrule'; known rules: openai",
        ),
    ],
)
def test_exit_2_for_usage_errors(tmp_path, args, message):
    result = run_scan(*args, cwd=tmp_path)

    assert result.returncode == 2
    assert result.stderr.startswith("usage: scan ")
    assert f"scan: error: {message}" in result.stderr


def test_help_documents_formats_and_exit_code_precedence():
    result = run_scan("--help")

    assert result.returncode == 0
    assert "2 takes precedence over 1" in result.stdout
    for word in ("HAR", "vcrpy", "mitmproxy flow files", "--json"):
        assert word in result.stdout


# -- Folders, compression, odd records ------------------------------------------------------


def test_folders_are_searched_recursively_and_skip_what_is_not_traffic(capsys, tmp_path):
    bad = [samples.chat_flow("names", samples.bad_names_body())]
    samples.write_flows(tmp_path / "top.mitm", bad)
    (tmp_path / "a" / "b").mkdir(parents=True)
    samples.write_har(tmp_path / "a" / "b" / "deep.har", bad)
    samples.write_cassette(tmp_path / "a" / "test_x.yaml", bad)
    samples.write_flows(tmp_path / "a" / "saved-without-extension", bad)
    (tmp_path / "a" / "README.md").write_text("# notes\n")
    (tmp_path / "a" / "config.yaml").write_text("steps: [1, 2]\n")
    (tmp_path / "a" / "package.json").write_text('{"name": "x"}')
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "broken.mitm").write_bytes(b"junk")

    code, rows, err = scan_json(capsys, tmp_path)

    assert sorted({Path(r["file"]).relative_to(tmp_path).as_posix() for r in rows}) == [
        "a/b/deep.har",
        "a/saved-without-extension",
        "a/test_x.yaml",
        "top.mitm",
    ]
    assert len(rows) == 4 * 3
    assert "4 files (3 other files skipped)" in err
    assert code == 1


def test_a_traffic_file_in_a_folder_that_cannot_be_read_is_reported(capsys, tmp_path):
    (tmp_path / "broken.har").write_text('{"log": {"entries": [{"request": ')

    code, _, err = scan_json(capsys, tmp_path)

    assert code == 2
    assert "broken.har: truncated after 0 entries: the JSON ends inside log.entries[0]" in err
