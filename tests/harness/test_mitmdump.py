"""mitmdump as the harness starts it (harness.mitmdump)."""

from pathlib import Path

import pytest

from harness.mitmdump import ADDON_SCRIPT
from harness.mitmdump import mitmdump_command
from harness.mitmdump import own_mitmdump
from harness.mitmdump import start_mitmdump
from harness.processes import StartupError


def test_the_command_binds_to_loopback_with_its_own_confdir(tmp_path):
    command = mitmdump_command(
        Path("/venv/bin/mitmdump"),
        8123,
        "reverse:http://127.0.0.1:9",
        tmp_path / "conf",
        scripts=[ADDON_SCRIPT],
        options={"toolnames_mode": "fix"},
        args=["--set", "flow_detail=0"],
    )

    assert command[:7] == [
        "/venv/bin/mitmdump",
        "--listen-host",
        "127.0.0.1",
        "--listen-port",
        "8123",
        "--mode",
        "reverse:http://127.0.0.1:9",
    ]
    text = " ".join(command)
    assert f"--set confdir={tmp_path / 'conf'}" in text
    assert f"-s {ADDON_SCRIPT}" in text
    assert text.endswith("--set toolnames_mode=fix --set flow_detail=0")


def test_own_mitmdump_is_the_one_beside_this_python():
    assert own_mitmdump().name == "mitmdump"
    assert own_mitmdump().exists()


@pytest.mark.e2e
def test_a_real_mitmdump_starts_with_the_addon_and_stops_cleanly(tmp_path):
    proc = start_mitmdump(
        own_mitmdump(),
        "reverse:http://127.0.0.1:9",
        confdir=tmp_path / "conf",
        log_dir=tmp_path,
        scripts=[ADDON_SCRIPT],
    )
    try:
        log = proc.wait_for_log(f"listening at 127.0.0.1:{proc.port}")
        assert f"Loading script {ADDON_SCRIPT}" in log
    finally:
        assert proc.stop() == 0


@pytest.mark.e2e
def test_a_mitmdump_that_cannot_start_says_why(tmp_path):
    missing = tmp_path / "no_such_addon.py"
    with pytest.raises(StartupError, match="No such script"):
        start_mitmdump(
            own_mitmdump(),
            "regular",
            confdir=tmp_path / "conf",
            log_dir=tmp_path,
            scripts=[missing],
        )


@pytest.mark.e2e
def test_a_wrapper_runs_mitmdump_and_is_waited_for_as_long_as_it_is_given(tmp_path):
    # valgrind is the wrapper benchmark.instructions gives; env(1) stands in for it here.
    proc = start_mitmdump(
        own_mitmdump(),
        "reverse:http://127.0.0.1:9",
        confdir=tmp_path / "conf",
        log_dir=tmp_path,
        wrapper=["env", "TOOLNAMES_WRAPPED=1"],
        startup_timeout=60.0,
    )
    try:
        assert proc.command[:3] == ["env", "TOOLNAMES_WRAPPED=1", str(own_mitmdump())]
        proc.wait_for_log(f"listening at 127.0.0.1:{proc.port}")
    finally:
        assert proc.stop() == 0

    with pytest.raises(StartupError, match="did not listen .* within 0s"):
        start_mitmdump(
            own_mitmdump(),
            "reverse:http://127.0.0.1:9",
            confdir=tmp_path / "conf",
            log_dir=tmp_path,
            wrapper=["env"],
            startup_timeout=0.0,
        )
