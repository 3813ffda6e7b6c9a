"""The fast part of the soak (scripts/soak): a few hundred mixed flows through a real mitmdump
with toolnames_save on, then a kill -9 mid-run. Counts and files only; nothing is timed, and
memory is left to the long soak, where the number of flows makes it mean something."""

import stat

import pytest

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
