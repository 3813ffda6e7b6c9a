"""What the scan prints (scanner.output): the terminal table, cut to the terminal's cells, no
control characters; the progress bar.
"""

import pytest

from samples import recordings as samples
from scanner import cli
from scanner import output
from scanner.recorded import RecordedExchange
from tests.testkit import strip_ansi
from toolnames_core.model import Finding


def test_control_characters_in_names_never_reach_the_terminal(capsys, tmp_path):
    body = samples.weather_request_body()
    body["tools"][0]["function"]["name"] = "evil\x1b[2J\tname\u202e"
    path = samples.write_flows(tmp_path / "evil.mitm", [samples.chat_flow("evil", body)])

    cli.main([str(path)])
    out, _ = capsys.readouterr()

    row = out.splitlines()[1]
    assert "\x1b" not in out and "\u202e" not in out
    assert len(row.split("\t")) == 7
    assert "evil\\u001b[2J\\tname\\u202e" in row


def test_a_name_with_a_bidi_override_is_shown_escaped_with_its_code_point(capsys, tmp_path):
    body = samples.weather_request_body()
    body["tools"][0]["function"]["name"] = "search\u202eweb"
    path = samples.write_flows(tmp_path / "bidi.mitm", [samples.chat_flow("bidi", body)])

    cli.main([str(path)])
    out, _ = capsys.readouterr()

    assert "\u202e" not in out
    assert "'search\\u202eweb' (10 chars; U+202E RIGHT-TO-LEFT OVERRIDE)" in out


# -- Terminal output ------------------------------------------------------------------------


def make_rows(n: int = 3) -> list:
    ex = RecordedExchange(0, "POST", "api.openai.com", "/v1/chat/completions")
    finding = Finding(
        "name-too-long", "error", "tools[1].function.name", "tools[1].function.name " + "x" * 200
    )
    return [
        output.Row("flows/a-long-file-name.mitm", "mitmproxy", ex, "openai-chat", "openai", finding)
    ] * n


@pytest.mark.parametrize("width", [80, 120, 200, 300])
def test_terminal_table_lines_fit_the_terminal_and_keep_code_and_path(width):
    import io

    out = io.StringIO()
    table = output.TableOutput(out, width, color=True)
    for row in make_rows():
        table.row(row)
    table.close()

    lines = [strip_ansi(line) for line in out.getvalue().splitlines()]
    assert lines[0].split()[:3] == ["file", "flow", "endpoint"]
    assert all(output.text_width(line) <= width for line in lines)
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
    assert output.fit(text, width, keep) == expected
    assert output.text_width(expected) <= width


def test_progress_bar_counts_bytes_of_all_files():
    import io

    stream = io.StringIO()
    progress = output.Progress(2 * 2**20, stream, enabled=True)
    progress.update(2**20, "flows/a.mitm", force=True)
    progress.clear()

    text = stream.getvalue()
    assert " 50% 1.0 MB / 2.0 MB " in text and "flows/a.mitm" in text
    assert text.endswith("\r\x1b[K")
