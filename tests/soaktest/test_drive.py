"""One soak run and what it leaves (soaktest.drive)."""

import shutil
from pathlib import Path

import pytest
from mitmproxy import io
from mitmproxy.test import tflow

from harness.provider import start_standin
from soaktest.drive import drive
from soaktest.drive import log_problems
from soaktest.drive import read_saved
from soaktest.drive import saved_ids
from soaktest.traffic import FORMATS
from soaktest.traffic import ID_HEADER
from soaktest.traffic import KINDS


@pytest.mark.e2e
def test_a_run_straight_to_the_standin_gets_every_expected_answer(tmp_path):
    # The stand-in answers as the soak expects with no proxy between: what is checked
    # through mitmdump is then the proxy's doing.
    # One whole cycle: every kind in every format.
    cycle = len(KINDS) * len(FORMATS)
    standin = start_standin(tmp_path, record=False)
    try:
        run = drive(standin, cycle, 4, "direct")
    finally:
        standin.stop()

    assert len(run.done) == cycle and run.wrong() == [] and run.client_errors == []


@pytest.mark.e2e
def test_a_kill_after_some_flows_ends_the_run_early(tmp_path):
    standin = start_standin(tmp_path, record=False)
    run = drive(standin, 400, 4, "kill", kill_after=20)

    assert run.killed_at is not None and 20 <= len(run.done) < 400
    assert standin.process.poll() is not None


def test_a_record_cut_at_the_end_of_the_file_leaves_the_complete_ones_readable(tmp_path):
    path = tmp_path / "saved.mitm"
    with open(path, "wb") as fo:
        writer = io.FlowWriter(fo)
        for i in range(3):
            flow = tflow.tflow(resp=True)
            flow.request.headers[ID_HEADER] = str(i)
            writer.add(flow)
    whole = path.read_bytes()
    cut = tmp_path / "cut.mitm"
    shutil.copyfile(path, cut)
    Path(cut).write_bytes(whole[: len(whole) - 25])

    saved = read_saved(cut)
    assert saved_ids(saved.flows) == [0, 1]
    assert saved.cut
    assert read_saved(path).cut is None


def test_only_lines_other_than_the_addons_notes_are_problems():
    class Logged:
        def log_text(self) -> str:
            return (
                "[12:00:00.000] Loading script addon/toolnames.py\n"
                "[12:00:00.001] HTTP(S) proxy listening at 127.0.0.1:1.\n"
                "[12:00:01.000][127.0.0.1:2]: toolnames error: name-invalid-chars: ...\n"
                "\n"
                "[12:00:02.000] Addon error: Traceback ...\n"
            )

    assert log_problems(Logged()) == ["[12:00:02.000] Addon error: Traceback ..."]
