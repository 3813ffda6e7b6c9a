"""The fast part of the soak (scripts/soak): a few hundred mixed flows through a real mitmdump
with toolnames_save on, then a kill -9 mid-run. Counts and files only; nothing is timed, and
memory is left to the long soak, where the number of flows makes it mean something."""

import shutil
import stat
from pathlib import Path

import pytest

from soaktest import drive
from soaktest import phases
from soaktest import traffic

pytestmark = pytest.mark.e2e


def failed(checks) -> list[str]:
    return [f"{c.name}: {c.detail}" for c in checks if not c.ok]


def test_mixed_flows_are_all_answered_logged_cleanly_and_the_flagged_ones_saved_once(
    mitmdump_binary, tmp_path
):
    run, checks = phases.phase_soak(mitmdump_binary, tmp_path, 300, 16, growth=10.0)
    assert failed(checks) == []
    # The mix reaches every kind in every format, streamed and not.
    kinds = {(traffic.flow_for(i).kind, traffic.flow_for(i).request.path) for i in run.done}
    assert len(kinds) == len(set(traffic.KINDS)) * len(traffic.FORMATS)
    assert stat.S_IMODE(run.save.stat().st_mode) == 0o600


def test_after_kill_9_every_flagged_flow_completed_before_it_is_read_back(
    mitmdump_binary, tmp_path
):
    run, checks = phases.phase_kill(mitmdump_binary, tmp_path, 300, 16, kill_after=120)
    assert failed(checks) == []
    assert run.killed_at is not None


def test_a_record_cut_at_the_end_of_the_file_leaves_the_complete_ones_readable(tmp_path):
    from mitmproxy import io
    from mitmproxy.test import tflow

    path = tmp_path / "saved.mitm"
    with open(path, "wb") as fo:
        writer = io.FlowWriter(fo)
        for i in range(3):
            flow = tflow.tflow(resp=True)
            flow.request.headers[traffic.ID_HEADER] = str(i)
            writer.add(flow)
    whole = path.read_bytes()
    cut = tmp_path / "cut.mitm"
    shutil.copyfile(path, cut)
    Path(cut).write_bytes(whole[: len(whole) - 25])
    flows, reason = drive.read_saved(cut)
    assert drive.saved_ids(flows) == [0, 1]
    assert reason
    assert drive.read_saved(path)[1] is None
