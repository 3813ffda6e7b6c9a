"""
End to end: a bad toolnames option value stops a real mitmdump (12, and 11 under
scripts/test) with one line that names the option, the value and what is accepted, and exit
code 1; a good value runs the addon.

Before, mitmdump --set toolnames_redact=maybe started without a word and ran no toolnames
hook at all: mitmproxy parses a script's --set values inside its script loader, and a value it
cannot parse there unloads the script silently (see toolnames_mitm/options.py).
"""

import os
import subprocess
from pathlib import Path

import pytest

from harness.mitmdump import ADDON_SCRIPT
from harness.processes import free_port
from tests.testkit import REPO_ROOT
from tests.testkit import post
from tests.testkit import toolnames_lines

RULES = (
    "openai, azure, anthropic, gemini, bedrock, mistral, groq, deepseek, cohere, ollama, portable"
)
BOOLEAN = "accepted: true, false (the option alone means true)"

BAD = [
    (["toolnames_redact=maybe"], f"toolnames_redact: 'maybe' is not a boolean; {BOOLEAN}"),
    (["toolnames_redact=False"], f"toolnames_redact: 'False' is not a boolean; {BOOLEAN}"),
    (["toolnames_redact=no"], f"toolnames_redact: 'no' is not a boolean; {BOOLEAN}"),
    (
        ["toolnames_mode"],
        "toolnames_mode: was given without a value; accepted: observe, fix, block",
    ),
    (
        ["toolnames_mode=fix", "toolnames_mode=block"],
        "toolnames_mode: was given 2 times ('fix', 'block'); accepted: observe, fix, block",
    ),
    (
        ["toolnames_mode=blocking"],
        "toolnames_mode: 'blocking' is not a mode; accepted: observe, fix, block",
    ),
    (
        ["toolnames_rule=openrouter.ai=claude"],
        "toolnames_rule: 'openrouter.ai=claude' is not HOST_PATTERN=RULE with a known RULE; "
        f"accepted: HOST_PATTERN=RULE, RULE one of {RULES}",
    ),
    (
        ["toolnames_filter=~d"],
        "toolnames_filter: '~d' is not a mitmproxy filter expression; "
        "accepted: a mitmproxy filter expression such as '~d api.openai.com'",
    ),
    (
        ["toolnames_max_body=lots"],
        "toolnames_max_body: 'lots' is not a size; "
        "accepted: a number of bytes or a size such as 512k or 32m; 0 reads every body",
    ),
    (
        ["toolnames_mcp_rule=claude"],
        f"toolnames_mcp_rule: 'claude' is not a rule; accepted: {RULES}",
    ),
    (
        ["toolnames_save=no-such-folder/flagged.mitm"],
        "toolnames_save: 'no-such-folder/flagged.mitm' is in a folder that does not exist "
        "(no-such-folder); accepted: a new file or a mitmproxy flow file, in a folder that exists",
    ),
    # mitmproxy keeps a value for an option nobody declares, without a word: the proxy ran
    # in observe mode.
    (
        ["toolnames_moed=fix"],
        "toolnames_moed: is not a toolnames option; did you mean toolnames_mode?",
    ),
    (
        ["toolnames_mode=fix", "toolnames_max-body=1k"],
        "toolnames_max-body: is not a toolnames option; did you mean toolnames_max_body?",
    ),
]


def run_mitmdump(binary: Path, confdir: Path, cwd: Path, *sets: str) -> tuple[int, list[str]]:
    """Exit code and output lines (timestamps cut) of mitmdump started with the addon."""
    command = [
        str(binary),
        "--listen-host",
        "127.0.0.1",
        "--listen-port",
        str(free_port()),
        "--set",
        f"confdir={confdir}",
        "-s",
        str(ADDON_SCRIPT),
    ]
    for spec in sets:
        command += ["--set", spec]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines = (result.stdout + result.stderr).splitlines()
    return result.returncode, [line.split("] ", 1)[-1] for line in lines]


@pytest.mark.e2e
@pytest.mark.parametrize("sets,line", BAD, ids=[" ".join(s) for s, _ in BAD])
def test_a_bad_value_stops_mitmdump_with_one_line(
    mitmdump_binary, mitmproxy_confdir, tmp_path, sets, line
):
    code, output = run_mitmdump(mitmdump_binary, mitmproxy_confdir, tmp_path, *sets)
    assert code == 1, output
    ours = [o for o in output if o.startswith("toolnames_")]
    assert ours == [line], output
    assert not any("Traceback" in o or "Error in script" in o for o in output), output
    assert not (tmp_path / "no-such-folder").exists()


@pytest.mark.e2e
def test_a_bad_value_in_the_config_file_stops_mitmdump_with_one_line(mitmdump_binary, tmp_path):
    # mitmproxy reads ~/.mitmproxy/config.yaml (here: a confdir of the test's own) and keeps
    # values of options not yet declared, typed as YAML gives them, until the script loads.
    (tmp_path / "config.yaml").write_text("toolnames_redact: maybe\n")
    code, output = run_mitmdump(mitmdump_binary, tmp_path, tmp_path)
    assert code == 1, output
    assert [o for o in output if o.startswith("toolnames_")] == [
        f"toolnames_redact: 'maybe' is not a boolean; {BOOLEAN}"
    ]


@pytest.mark.e2e
def test_a_bad_value_stops_mitmdump_reading_a_file_too(mitmdump_binary, mitmproxy_confdir):
    sample = REPO_ROOT / "flows" / "mastra-choice-mismatch.mitm"
    result = subprocess.run(
        [str(mitmdump_binary), "-nr", str(sample), "--set", f"confdir={mitmproxy_confdir}"]
        + ["-s", str(ADDON_SCRIPT), "--set", "toolnames_redact=maybe"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    output = [line.split("] ", 1)[-1] for line in (result.stdout + result.stderr).splitlines()]
    assert result.returncode == 1, output
    assert [o for o in output if o.startswith("toolnames_")] == [
        f"toolnames_redact: 'maybe' is not a boolean; {BOOLEAN}"
    ]


MISMATCHED_CHOICE = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "search_web", "parameters": {}}}],
    "tool_choice": {"type": "function", "function": {"name": "search.web"}},
}


@pytest.mark.e2e
def test_good_values_run_the_addon(mitmdump, mitmdump_binary, tmp_path):
    saved = tmp_path / "flagged.mitm"
    proxy = mitmdump(
        "--set",
        "toolnames_redact=false",
        "--set",
        "toolnames_mode=block",
        "--set",
        f"toolnames_save={saved}",
        binary=mitmdump_binary,
    )
    status, _, body = post(f"{proxy.url}/v1/chat/completions", MISMATCHED_CHOICE)
    assert status == 400 and b"toolnames:" in body
    log = proxy.wait_for_log("toolnames blocked")
    assert len(toolnames_lines(log)) == 1
    assert proxy.stop() == 0
    assert saved.stat().st_size > 0


@pytest.mark.e2e
def test_a_save_file_that_holds_no_flows_stops_mitmdump_and_is_left_alone(
    mitmdump_binary, mitmproxy_confdir, tmp_path
):
    # Appended to, a typo naming another file would have had flows written into it.
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my notes, not flows\n")
    code, output = run_mitmdump(
        mitmdump_binary, mitmproxy_confdir, tmp_path, "toolnames_save=notes.txt"
    )
    assert code == 1, output
    assert [o for o in output if o.startswith("toolnames_")] == [
        "toolnames_save: 'notes.txt' is not a mitmproxy flow file: no flow record starts at "
        "byte 0 (b'my notes'…); accepted: a new file or a mitmproxy flow file, in a folder "
        "that exists"
    ]
    assert notes.read_bytes() == b"my notes, not flows\n"
