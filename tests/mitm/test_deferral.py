"""Observe mode's deferred checks (deferral.py): checked at completion or by the one timer."""

import asyncio

from mitmproxy.test import tflow

from toolnames_core import Exchange
from toolnames_core.formats import FORMATS
from toolnames_core.rules import RULES
from toolnames_mitm import deferral
from toolnames_mitm.flows import Tracked


def pending_recorder():
    ran, swept = [], []
    return ran, swept, deferral.Deferral(lambda p: ran.append(p.flow.id), swept.extend)


async def test_a_check_runs_once_whether_the_flow_completes_or_the_timer_fires(monkeypatch):
    monkeypatch.setattr(deferral, "DEFER_SECONDS", 0.01)
    ran, swept, d = pending_recorder()
    loop = asyncio.get_running_loop()
    early, late = tflow.tflow(), tflow.tflow()
    tracked = {f: Tracked() for f in (early, late)}
    for f in (early, late):
        d.add(loop, tracked[f], f, Exchange(FORMATS["openai-chat"], RULES["openai"]), b"{}", None)
    assert tracked[early].pending.flow is early  # the pending check waits on the flow's entry
    assert d.run_now(tracked[early]).flow is early  # completed before its time
    assert d.run_now(tracked[early]) is None and tracked[early].pending is None
    assert d.run_now(None) is None  # a flow toolnames does not track
    await asyncio.sleep(0.05)
    assert ran == [early.id, late.id]
    assert swept == [late]
    assert d.waiting() == [] and not d.queue and d.timer is None


async def test_one_timer_serves_every_pending_check_and_run_all_leaves_none(monkeypatch):
    monkeypatch.setattr(deferral, "DEFER_SECONDS", 3600)
    ran, _, d = pending_recorder()
    loop = asyncio.get_running_loop()
    flows = [tflow.tflow() for _ in range(3)]
    timers = set()
    for f in flows:
        d.add(loop, Tracked(), f, Exchange(FORMATS["openai-chat"], RULES["openai"]), b"{}", None)
        timers.add(d.timer)
    assert len(timers) == 1
    assert [p.flow for p in d.waiting()] == flows
    d.run_all()
    assert ran == [f.id for f in flows]
    assert d.timer is None and d.waiting() == [] and not d.queue
