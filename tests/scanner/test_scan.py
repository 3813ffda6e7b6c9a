"""scripts/scan: the addon's checks over recorded traffic (flow files, HAR files, cassettes).

Recordings are generated here with scripts/make_sample_flows.py's builders (mitmproxy's tflow /
tutils, io.FlowWriter, mitmproxy's own HAR export, vcrpy-shaped YAML). Exit codes are checked by
running the real scripts/scan with this interpreter (TOOLNAMES_SCAN_PYTHON); everything else runs
toolnames_scan.main() in-process.
"""

import base64
import gzip
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import zlib
from pathlib import Path

import pytest
from mitmproxy import io as mitm_io
from mitmproxy.test import tflow

import make_sample_flows as samples
import toolnames_scan
import toolnames_scan_run
from tests.conftest import REPO_ROOT
from tests.testkit import exchange_for
from tests.testkit import running

SCAN = REPO_ROOT / "scripts" / "scan"
ADDON = REPO_ROOT / "addon" / "toolnames.py"
SDK_DIR = REPO_ROOT / "tests" / "fixtures" / "sdk"
ANSI = "\x1b["


def scan_env() -> dict[str, str]:
    return {**os.environ, "TOOLNAMES_SCAN_PYTHON": sys.executable}


def run_scan(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCAN), *map(str, args)],
        capture_output=True,
        text=True,
        env=scan_env(),
        cwd=cwd,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def scan_json(capsys, *args: str | Path) -> tuple[int, list[dict], str]:
    code = toolnames_scan.main(["--json", *map(str, args)])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def found(rows: list[dict]) -> list[tuple[int, str, str]]:
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


@pytest.fixture
def recordings(tmp_path: Path) -> dict[str, Path]:
    return {name: write(tmp_path / name, bad_flows()) for name, write in WRITERS.items()}


@pytest.mark.parametrize("name", WRITERS)
def test_every_format_reports_every_bad_case(capsys, recordings, name):
    code, rows, err = scan_json(capsys, recordings[name])

    assert found(rows) == sorted(BAD_CASE_FINDINGS)
    assert code == 1
    assert {r["format"] for r in rows} == {FORMAT_OF[name]}
    assert "7 recorded exchanges, 6 LLM API calls checked: 7 errors, 0 warnings, 0 info" in err


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
    code = toolnames_scan.main([str(recordings["traffic.har"])])
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


def test_endpoint_never_shows_the_query_where_gemini_keys_travel(capsys, tmp_path):
    flow = samples.chat_flow(
        "gemini",
        {"contents": [], "tools": [{"functionDeclarations": [{"name": "1bad"}]}]},
        host="generativelanguage.googleapis.com",
        path="/v1beta/models/gemini-2.0-flash:generateContent?key=AIza-not-a-key",
    )
    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "g.mitm", [flow]))

    assert [r["code"] for r in rows] == ["name-invalid-start"]
    assert rows[0]["endpoint"] == (
        "POST generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"
    )
    assert "AIza" not in json.dumps(rows)


def test_other_wire_formats_go_through_the_same_checks(capsys, tmp_path):
    body = json.loads((SDK_DIR / "anthropic-messages-tools.json").read_text())["body"]
    body["tools"][0]["name"] = "weather.get"
    flow = samples.chat_flow("anthropic", body, host="api.anthropic.com", path="/v1/messages")
    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "a.mitm", [flow]))

    assert [(r["api"], r["rule"], r["code"], r["path"]) for r in rows] == [
        ("anthropic-messages", "anthropic", "name-invalid-chars", "tools[0].name")
    ]


def test_rule_option_checks_a_host_against_another_providers_rule(capsys, tmp_path):
    path = samples.write_flows(
        tmp_path / "n.mitm", [samples.chat_flow("names", samples.bad_names_body())]
    )

    _, rows, _ = scan_json(capsys, "--rule", "api.openai.com=gemini", path)

    # Gemini allows dots and colons; the 70 characters are still too many.
    assert [(r["rule"], r["code"]) for r in rows] == [("gemini", "name-too-long")]


def test_control_characters_in_names_never_reach_the_terminal(capsys, tmp_path):
    body = samples.weather_request_body()
    body["tools"][0]["function"]["name"] = "evil\x1b[2J\tname\u202e"
    path = samples.write_flows(tmp_path / "evil.mitm", [samples.chat_flow("evil", body)])

    toolnames_scan.main([str(path)])
    out, _ = capsys.readouterr()

    row = out.splitlines()[1]
    assert "\x1b" not in out and "\u202e" not in out
    assert len(row.split("\t")) == 7
    assert "evil\\u001b[2J\\tname\\u202e" in row


# -- Terminal output ------------------------------------------------------------------------


def make_rows(n: int = 3) -> list:
    ex = toolnames_scan.Exchange(0, "POST", "api.openai.com", "/v1/chat/completions")
    finding = toolnames_scan.Finding(
        "name-too-long", "error", "tools[1].function.name", "tools[1].function.name " + "x" * 200
    )
    return [
        toolnames_scan.Row(
            "flows/a-long-file-name.mitm", "mitmproxy", ex, "openai-chat", "openai", finding
        )
    ] * n


def strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)


@pytest.mark.parametrize("width", [80, 120, 200, 300])
def test_terminal_table_lines_fit_the_terminal_and_keep_code_and_path(width):
    import io

    out = io.StringIO()
    table = toolnames_scan.TableOutput(out, width, color=True)
    for row in make_rows():
        table.row(row)
    table.close()

    lines = [strip_ansi(line) for line in out.getvalue().splitlines()]
    assert lines[0].split()[:3] == ["file", "flow", "endpoint"]
    assert all(toolnames_scan.text_width(line) <= width for line in lines)
    assert all("name-too-long" in line for line in lines[1:] if "error" in line)
    assert any(line.rstrip().endswith("…") for line in lines)  # the long message is cut
    assert "\x1b[31;1merror" in out.getvalue()


@pytest.mark.parametrize(
    "text, width, keep, expected",
    [
        ("tools[12].function.name", 10, "end", "…tion.name"),
        ("POST api.openai.com/v1/chat/completions", 16, "both", "POST api…letions"),
        ("a message that goes on", 10, "start", "a message…"),
        ("名前が長すぎる", 6, "start", "名前…"),
        ("short", 10, "start", "short"),
    ],
)
def test_fit_cuts_to_terminal_cells_and_keeps_the_telling_part(text, width, keep, expected):
    assert toolnames_scan.fit(text, width, keep) == expected
    assert toolnames_scan.text_width(expected) <= width


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
        [str(SCAN), str(recordings["flows.mitm"])],
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
    "content, name, message",
    [
        (os.urandom(4096), "random.bin", "not a mitmproxy flow file, HAR file or cassette"),
        (
            b"\x00\x01garbage" * 100,
            "garbage.mitm",
            "not a readable mitmproxy flow file: not a tnetstring",
        ),
        (
            b'{"name": "toolnames", "version": "1"}',
            "package.json",
            "not a readable HAR file or JSON cassette: a JSON document with no log.entries",
        ),
        (b"", "empty.har", "not a readable HAR file or JSON cassette: not a JSON object"),
        (
            b"steps:\n- run: make\n",
            "ci.yaml",
            "not a readable cassette: YAML without an interactions list",
        ),
    ],
    ids=["random-bytes", "garbage-named-mitm", "json-not-har", "empty-har", "yaml-not-cassette"],
)
def test_exit_2_for_a_file_that_is_not_traffic(tmp_path, content, name, message):
    path = tmp_path / name
    path.write_bytes(content)

    result = run_scan(path)

    assert result.returncode == 2
    assert f"scan: {path}: {message}" in result.stderr
    assert "1 file (1 unreadable)" in result.stderr


def cut(path: Path, fraction: float = 0.5) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path


@pytest.mark.parametrize(
    "name, message",
    [
        ("flows.mitm", r"truncated after 3 flows: the file ends inside flow 4 (it declares"),
        ("traffic.har", "truncated after 3 entries: the JSON ends inside log.entries[3]"),
        ("cassette.yaml", "truncated after 3 interactions: invalid YAML at line"),
    ],
)
def test_exit_2_for_a_truncated_file_still_reports_what_was_read(recordings, name, message):
    path = cut(recordings[name], 0.55)

    result = run_scan("--json", path)

    assert result.returncode == 2  # 2 wins over the error findings
    assert f"scan: {path}: {message}" in result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["flow"] for r in rows} >= {0, 1, 2}
    assert "choice-not-in-tools" in {r["code"] for r in rows}


def test_a_cassette_cut_where_it_is_still_valid_yaml_is_reported_as_truncated(tmp_path):
    path = samples.write_cassette(tmp_path / "c.yaml", bad_flows())
    text = path.read_text()
    # Inside the last interaction's uri, a plain scalar: what is left still parses.
    path.write_text(text[: text.rindex("uri: https://") + len("uri: https://api.ope")])

    result = run_scan(path)

    assert result.returncode == 2
    assert (
        f"scan: {path}: truncated after 7 interactions: the file ends in the middle of a line"
        in result.stderr
    )


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "the following arguments are required: PATH"),
        (["does-not-exist.mitm"], "no such file or directory: does-not-exist.mitm"),
        (["--rule", "no-equals-sign", "."], "argument --rule: expected HOST_PATTERN=RULE"),
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


def test_a_bug_in_a_check_is_exit_2_not_a_finding(capsys, monkeypatch, recordings):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(toolnames_scan_run, "inspect_exchange", broken)

    code = toolnames_scan.main([str(recordings["flows.mitm"])])

    assert code == 2
    assert (
        "flow 0: toolnames failed on this exchange: RuntimeError: boom" in capsys.readouterr().err
    )


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


def test_gzip_and_zhar_files_are_read_as_they_stream(capsys, tmp_path):
    flows = [samples.chat_flow("names", samples.bad_names_body())]
    (tmp_path / "f.mitm.gz").write_bytes(gzip.compress(samples.flow_bytes(flows)))
    # mitmproxy's `save.har x.zhar` writes zlib-compressed JSON.
    (tmp_path / "x.zhar").write_bytes(
        zlib.compress(json.dumps(samples.har_document(flows)).encode(), 9)
    )
    (tmp_path / "c.yaml.gz").write_bytes(gzip.compress(samples.cassette_text(flows).encode()))

    code, rows, err = scan_json(capsys, tmp_path)

    assert sorted({(Path(r["file"]).name, r["format"]) for r in rows}) == [
        ("c.yaml.gz", "cassette"),
        ("f.mitm.gz", "mitmproxy"),
        ("x.zhar", "har"),
    ]
    assert len(rows) == 9 and code == 1, err


def test_a_cut_gzip_file_reports_the_flows_before_the_cut(capsys, tmp_path):
    flows = [samples.chat_flow(f"names-{i}", samples.bad_names_body()) for i in range(40)]
    path = tmp_path / "f.mitm.gz"
    data = gzip.compress(samples.flow_bytes(flows), compresslevel=1)
    path.write_bytes(data[: len(data) * 3 // 4])

    code, rows, err = scan_json(capsys, path)

    assert code == 2
    assert "truncated after" in err and "Compressed file ended" in err
    assert len({r["flow"] for r in rows}) >= 10


def test_non_http_flows_are_skipped_but_keep_the_flow_numbering(capsys, tmp_path):
    flows = [tflow.ttcpflow(), samples.chat_flow("names", samples.bad_names_body())]
    code, rows, err = scan_json(capsys, samples.write_flows(tmp_path / "mixed.mitm", flows))

    assert {r["flow"] for r in rows} == {1}
    assert "1 recorded exchange," in err


def test_a_request_body_whose_content_encoding_does_not_decode_is_reported_as_unreadable(
    capsys, tmp_path
):
    flow = samples.chat_flow("bad-gzip", samples.bad_names_body())
    flow.request.headers["content-encoding"] = "gzip"
    flow.request.raw_content = b"\x1f\x8b\x08not really gzip"

    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "g.mitm", [flow]))

    assert [r["code"] for r in rows] == ["request-unreadable"]
    assert "its content-encoding could not be decoded" in rows[0]["message"]


def test_a_flow_whose_request_body_was_streamed_through_is_reported_as_unread(capsys, tmp_path):
    flow = samples.chat_flow("streamed-request", samples.bad_names_body())
    flow.request.raw_content = None

    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "s.mitm", [flow]))

    assert [r["code"] for r in rows] == ["request-unreadable"]


def test_a_flow_fixed_in_flight_reports_what_the_app_sent_from_its_record(capsys, tmp_path):
    flow = samples.chat_flow("mastra", samples.mastra_choice_mismatch_body())
    flow.live = True  # as toolnames_save writes it: rewritten on its way to the provider
    with running(toolnames_mode="fix") as (tctx, tn):
        tn.request(flow)
    flow.live = False
    assert flow.metadata["toolnames"]["action"] == "fixed"
    # Its body is the fixed one: checked again, it would look clean.
    path = samples.write_flows(tmp_path / "fixed.mitm", [flow])
    assert "choice-not-in-tools" not in str(
        exchange_for(flow.request.content, "openai-chat", "openai").findings
    )

    code, rows, _ = scan_json(capsys, path)

    assert [(r["api"], r["rule"], r["code"], r["path"]) for r in rows] == [
        ("openai-chat", "openai", "choice-not-in-tools", "tool_choice.function.name")
    ]
    assert "'search.web'" in rows[0]["message"]
    assert code == 1


def test_a_fix_declined_in_flight_is_shown_with_its_reason(capsys, tmp_path):
    body = samples.weather_request_body()
    body["tools"] = [
        {"type": "function", "function": {"name": "Search_Web"}},
        {"type": "function", "function": {"name": "search_web"}},
    ]
    body["tool_choice"] = {"type": "function", "function": {"name": "Search.Web"}}
    flow = samples.chat_flow("ambiguous", body)
    flow.live = True
    with running(toolnames_mode="fix") as (tctx, tn):
        tn.request(flow)
    flow.live = False
    assert flow.metadata["toolnames"]["action"] == "observed"
    path = samples.write_flows(tmp_path / "declined.mitm", [flow])

    toolnames_scan.main([str(path)])
    out, _ = capsys.readouterr()

    assert (
        "not fixed: 'Search.Web' could be 'Search_Web' (mastra) or 'search_web' (openai-agents)"
        in out
    )


def test_a_name_with_a_bidi_override_is_shown_escaped_with_its_code_point(capsys, tmp_path):
    body = samples.weather_request_body()
    body["tools"][0]["function"]["name"] = "search\u202eweb"
    path = samples.write_flows(tmp_path / "bidi.mitm", [samples.chat_flow("bidi", body)])

    toolnames_scan.main([str(path)])
    out, _ = capsys.readouterr()

    assert "\u202e" not in out
    assert "'search\\u202eweb' (10 chars; U+202E RIGHT-TO-LEFT OVERRIDE)" in out


# -- HAR and cassette variants ---------------------------------------------------------------


def har_with(entry_changes) -> dict:
    flows = [
        samples.chat_flow(
            "hallucinated", samples.weather_request_body(), samples.hallucinated_call_response()
        )
    ]
    har = samples.har_document(flows)
    entry_changes(har["log"]["entries"][0])
    return har


def _chrome_style(entry: dict) -> None:
    # Browsers keep content-encoding in the headers but store the decoded text, and some
    # tools write headers as [name, value] pairs.
    entry["response"]["headers"] = [
        ["content-type", "application/json"],
        ["content-encoding", "gzip"],
    ]


def _base64_content(entry: dict) -> None:
    content = entry["response"]["content"]
    content["text"] = base64.b64encode(content["text"].encode()).decode()
    content["encoding"] = "base64"


def _base64_raw_gzip(entry: dict) -> None:
    content = entry["response"]["content"]
    content["text"] = base64.b64encode(gzip.compress(content["text"].encode())).decode()
    content["encoding"] = "base64"
    entry["response"]["headers"].append({"name": "Content-Encoding", "value": "gzip"})


def _as_exported(entry: dict) -> None:
    pass


@pytest.mark.parametrize(
    "change",
    [_chrome_style, _base64_content, _base64_raw_gzip, _as_exported],
    ids=lambda f: f.__name__,
)
def test_har_variants_from_browsers_and_tools(capsys, tmp_path, change):
    har = har_with(change)
    har["log"] = {"pages": [{"id": "page_1", "title": "x" * 5000}], **har["log"]}
    path = tmp_path / "v.har"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(har, indent=1).encode())

    _, rows, err = scan_json(capsys, path)

    assert [(r["code"], r["path"]) for r in rows] == [
        ("response-unknown-tool", "choices[0].message.tool_calls[0].function.name")
    ], err


def test_a_har_entry_without_a_request_is_skipped_and_makes_the_scan_incomplete(capsys, tmp_path):
    har = samples.har_document([samples.chat_flow("names", samples.bad_names_body())])
    har["log"]["entries"].insert(0, {"comment": "no request"})
    path = tmp_path / "odd.har"
    path.write_text(json.dumps(har))

    code, rows, err = scan_json(capsys, path)

    assert {r["flow"] for r in rows} == {1}
    assert "entries[0] skipped: the entry has no request object" in err
    assert code == 2


MASTRA_TEXT = json.dumps(samples.mastra_choice_mismatch_body())
CALL_TEXT = json.dumps(samples.hallucinated_call_response())
WEATHER_TEXT = json.dumps(samples.weather_request_body())
URI = "https://api.openai.com/v1/chat/completions"

CASSETTES = {
    # vcrpy 1.x+ as pytest-recording writes it (see also samples.cassette_text).
    "vcrpy-flow-style.yaml": f"""\
interactions:
- request:
    body: {json.dumps(WEATHER_TEXT)}
    headers: {{Content-Type: [application/json]}}
    method: POST
    uri: {URI}
  response:
    body: {{string: !!binary "{base64.b64encode(gzip.compress(CALL_TEXT.encode())).decode()}"}}
    headers: {{Content-Encoding: [gzip], Content-Type: [application/json]}}
    status: {{code: 200, message: OK}}
version: 1
""",
    # Python 2 era vcrpy wrote !!python/unicode.
    "vcrpy-py2.yaml": f"""\
interactions:
- request:
    body: !!python/unicode {json.dumps(WEATHER_TEXT)}
    method: POST
    uri: !!python/unicode '{URI}'
  response:
    body: {{string: !!python/unicode {json.dumps(CALL_TEXT)}}}
    headers: {{}}
    status: {{code: 200, message: OK}}
""",
    # vcrpy's first format: a bare list.
    "vcrpy-v0.yaml": f"""\
- request:
    body: {json.dumps(WEATHER_TEXT)}
    method: POST
    uri: {URI}
  response:
    body: {{string: {json.dumps(CALL_TEXT)}}}
    status: {{code: 200}}
""",
    # Ruby VCR (and VCR-compatible tools): http_interactions, lower-case method, encoded bodies.
    "ruby-vcr.yml": f"""\
---
http_interactions:
- request:
    method: post
    uri: {URI}
    body:
      encoding: UTF-8
      string: {json.dumps(WEATHER_TEXT)}
    headers:
      Content-Type:
      - application/json
  response:
    status:
      code: 200
      message: OK
    headers:
      Content-Type:
      - application/json
    body:
      encoding: UTF-8
      string: {json.dumps(CALL_TEXT)}
  recorded_at: Thu, 01 Jan 2026 00:00:00 GMT
recorded_with: VCR 6.2.0
""",
    # vcrpy's JSON serializer.
    "vcrpy.json": json.dumps(
        {
            "interactions": [
                {
                    "request": {"body": WEATHER_TEXT, "headers": {}, "method": "POST", "uri": URI},
                    "response": {
                        "body": {"string": CALL_TEXT},
                        "headers": {"Content-Type": ["application/json"]},
                        "status": {"code": 200, "message": "OK"},
                    },
                }
            ],
            "version": 1,
        }
    ),
    # betamax: JSON, base64_string bodies.
    "betamax.json": json.dumps(
        {
            "http_interactions": [
                {
                    "request": {
                        "body": {"encoding": "utf-8", "string": WEATHER_TEXT},
                        "headers": {},
                        "method": "POST",
                        "uri": URI,
                    },
                    "response": {
                        "body": {
                            "encoding": None,
                            "base64_string": base64.b64encode(CALL_TEXT.encode()).decode(),
                        },
                        "headers": {"Content-Type": ["application/json"]},
                        "status": {"code": 200, "message": "OK"},
                        "url": URI,
                    },
                    "recorded_at": "2026-01-01T00:00:00",
                }
            ],
            "recorded_with": "betamax/0.9.0",
        }
    ),
    # Structured JSON bodies and a bare status code, as some vcrpy forks write them.
    "structured.yaml": f"""\
version: 1
interactions:
  - request:
      method: POST
      uri: {URI}
      body:
        type: json
        content: {WEATHER_TEXT}
    response:
      status: 200
      body:
        type: json
        content: {CALL_TEXT}
""",
}


@pytest.mark.parametrize("name", CASSETTES)
def test_cassette_forms(capsys, tmp_path, name):
    path = tmp_path / name
    path.write_text(CASSETTES[name])

    code, rows, err = scan_json(capsys, path)

    assert [(r["format"], r["code"], r["path"]) for r in rows] == [
        ("cassette", "response-unknown-tool", "choices[0].message.tool_calls[0].function.name")
    ], err
    assert code == 1


def test_a_cassette_with_a_mastra_request_and_a_streamed_answer(capsys, tmp_path):
    flows = [
        samples.chat_flow("m", samples.mastra_choice_mismatch_body()),
        samples.chat_flow(
            "s",
            samples.weather_request_body(stream=True),
            samples.streamed_call_response("get_weather"),
            content_type="text/event-stream",
        ),
    ]
    _, rows, _ = scan_json(capsys, samples.write_cassette(tmp_path / "c.yaml", flows))

    assert found(rows) == [(0, "choice-not-in-tools", "tool_choice.function.name")]


# -- The JSON streamer ----------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_json_items_are_read_whatever_the_chunk_boundaries(monkeypatch, chunk):
    import io

    monkeypatch.setattr(toolnames_scan.JsonArrayStream, "CHUNK", chunk)
    doc = {
        "log": {
            "version": 1.25,
            "creator": {"name": 'é " \\u', "n": [1, 2, {"x": None}]},
            "entries": [{"n": 12345}, "s\u00e9\\", 3.5e10, [True, False, None], {}],
            "after": 98765,
        },
        "tail": -0.5,
    }
    stream = toolnames_scan.JsonArrayStream(
        io.BytesIO(json.dumps(doc).encode()), {("log", "entries"): "har"}
    )

    assert list(stream.items()) == doc["log"]["entries"]


def test_json_corruption_is_found_without_reading_the_rest_of_the_file():
    import io

    class Counting(io.BytesIO):
        read_bytes = 0

        def read(self, n=-1):
            data = super().read(n)
            Counting.read_bytes += len(data)
            return data

    body = b'{"log": {"entries": [{"a": 1}, {"a": 2 "b": 3}' + b" " * 50_000_000 + b"]}}"
    stream = toolnames_scan.JsonArrayStream(Counting(body), {("log", "entries"): "har"})

    items = stream.items()
    assert next(items) == {"a": 1}
    with pytest.raises(toolnames_scan.ReadFailure, match=r"invalid JSON in log.entries\[1\]"):
        next(items)
    assert Counting.read_bytes < 5_000_000


# -- Samples in flows/ ------------------------------------------------------------------------


SAMPLE_FINDINGS = {
    "all-cases.har": [
        (0, "choice-not-in-tools"),
        (1, "name-invalid-chars"),
        (1, "name-invalid-chars"),
        (1, "name-too-long"),
        (2, "response-unknown-tool"),
        (3, "response-unknown-tool"),
        (4, "response-unknown-tool"),
    ],
    "bad-names.mitm": [(0, "name-invalid-chars"), (0, "name-invalid-chars"), (0, "name-too-long")],
    "cassettes/test_agent.yaml": [
        (0, "choice-not-in-tools"),
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
    "mastra-choice-mismatch.mitm": [(0, "choice-not-in-tools")],
}


def test_the_committed_samples_show_the_documented_findings(capsys):
    flows_dir = REPO_ROOT / "flows"
    code, rows, err = scan_json(capsys, flows_dir)

    by_file = {name: [] for name in SAMPLE_FINDINGS}
    for r in rows:
        by_file[Path(r["file"]).relative_to(flows_dir).as_posix()].append((r["flow"], r["code"]))
    assert {k: sorted(v) for k, v in by_file.items()} == SAMPLE_FINDINGS
    assert "6 files (1 other file skipped)" in err  # README.md
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
        samples.main(["make_sample_flows.py", str(out)])

    for path in (tmp_path / "one").rglob("*"):
        if path.is_file():
            assert (
                path.read_bytes()
                == (tmp_path / "two" / path.relative_to(tmp_path / "one")).read_bytes()
            )


# -- mitmdump itself, and memory ------------------------------------------------------------


@pytest.mark.e2e
def test_mitmdump_reads_the_same_files_and_logs_the_findings_as_warnings(tmp_path, mitmdump_binary):
    path = samples.write_flows(tmp_path / "bad.mitm", bad_flows())

    result = subprocess.run(
        [
            str(mitmdump_binary),
            "-nr",
            str(path),
            "-s",
            str(ADDON),
            "--flow-detail",
            "0",
            "--set",
            "termlog_verbosity=warn",
            "--set",
            f"confdir={tmp_path / 'confdir'}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )

    lines = [line for line in (result.stdout + result.stderr).splitlines() if "toolnames" in line]
    assert result.returncode == 0, result.stdout + result.stderr
    assert [line.split(": toolnames ", 1)[1].split(":")[:2] for line in lines] == [
        ["error", " choice-not-in-tools"],
        ["error", " name-invalid-chars"],
        ["error", " response-unknown-tool"],
        ["error", " response-unknown-tool"],
        ["error", " response-unknown-tool"],
    ]


def test_memory_stays_bounded_while_scanning_a_large_flow_file(tmp_path):
    # ~200 MB of flows, each a 110 KB request (a long conversation) with a bad name and a
    # hallucinated call: written by repeating one flow's bytes, which takes a fraction of a second.
    body = samples.weather_request_body()
    body["messages"] = [
        {"role": "user" if i % 2 else "assistant", "content": "lorem ipsum dolor " * 300}
        for i in range(20)
    ]
    body["tools"].append(samples.function_tool("bad.name"))
    one = samples.flow_bytes([samples.chat_flow("big", body, samples.hallucinated_call_response())])
    count = 200 * 1024 * 1024 // len(one)
    path = tmp_path / "big.mitm"
    with open(path, "wb") as f:
        for _ in range(count):
            f.write(one)
    size_mb = path.stat().st_size / 2**20

    # The scan runs under a small Python that reports its child's peak RSS: measured from
    # pytest directly, the child's figure would include pytest's own pages (Linux counts the
    # memory a process had before exec in its maxrss).
    measure = (
        "import resource, subprocess, sys\n"
        "with open(sys.argv[1], 'wb') as out, open(sys.argv[2], 'wb') as err:\n"
        "    code = subprocess.call(sys.argv[3:], stdout=out, stderr=err, stdin=subprocess.DEVNULL)\n"
        "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            measure,
            tmp_path / "out.jsonl",
            tmp_path / "err.txt",
            SCAN,
            "--json",
            path,
        ],
        capture_output=True,
        text=True,
        env=scan_env(),
        timeout=600,
        check=True,
    )
    code, peak_kib = map(int, result.stdout.split())
    peak_mb = peak_kib / 1024  # ru_maxrss is in KiB on Linux

    assert code == 1, (tmp_path / "err.txt").read_text()
    assert (
        f"{count} recorded exchanges, {count} LLM API calls checked: {2 * count} errors"
        in (tmp_path / "err.txt").read_text()
    )
    assert size_mb > 190
    assert peak_mb < 150, f"peak RSS {peak_mb:.0f} MB while scanning {size_mb:.0f} MB"


def test_scan_runs_on_flows_written_by_mitmproxy_itself(tmp_path, capsys):
    # io.FlowWriter straight from tflow(): the shape mitmdump -w writes.
    flow = tflow.tflow(resp=True)
    flow.request.method = "POST"
    flow.request.path = "/v1/chat/completions"
    flow.request.text = json.dumps(samples.bad_names_body())
    with open(tmp_path / "raw.flows", "wb") as f:
        mitm_io.FlowWriter(f).add(flow)

    _, rows, _ = scan_json(capsys, tmp_path / "raw.flows")

    assert len(rows) == 3


def test_progress_bar_counts_bytes_of_all_files():
    import io

    stream = io.StringIO()
    progress = toolnames_scan.Progress(2 * 2**20, stream, enabled=True)
    progress.update(2**20, "flows/a.mitm", force=True)
    progress.clear()

    text = stream.getvalue()
    assert " 50% 1.0 MB / 2.0 MB " in text and "flows/a.mitm" in text
    assert text.endswith("\r\x1b[K")
