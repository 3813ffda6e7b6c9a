"""Observe mode's deferred checks: each request is checked when its flow completes, or a
little after it was forwarded if the answer is slow in coming, whichever comes first.

Checking any sooner would compete with the provider's first token for the CPU
(``scripts/bench`` (c)); checking only at completion would leave a flow whose answer
streams for minutes unmarked while the user watches it. One timer serves every pending
check (a timer per flow cost more than the rest of the request hook).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import NamedTuple

from mitmproxy import http

from toolnames_core import Exchange

__all__ = ["DEFER_SECONDS", "Deferral", "Pending"]

# At the latest this long after an observed request is forwarded, it is checked.
DEFER_SECONDS = 1.0


class Pending(NamedTuple):
    """An observed request whose check waits."""

    due: float  # on the event loop's clock
    flow: http.HTTPFlow
    exchange: Exchange
    content: bytes
    problem: str | None  # why the body cannot be read, if it cannot


class Deferral:
    """The pending checks, in the order their requests came (so the earliest due is first),
    and the one timer that runs those whose answers are slow."""

    def __init__(self, run: Callable[[Pending], None], on_swept: Callable[[list], None]) -> None:
        self.run = run  # checks one pending request
        self.on_swept = on_swept  # told the flows a sweep checked
        self.pending: dict[str, Pending] = {}
        self.timer: asyncio.TimerHandle | None = None

    def add(
        self,
        loop: asyncio.AbstractEventLoop,
        flow: http.HTTPFlow,
        exchange: Exchange,
        content: bytes,
        problem: str | None,
    ) -> None:
        due = loop.time() + DEFER_SECONDS
        self.pending[flow.id] = Pending(due, flow, exchange, content, problem)
        if self.timer is None:
            self.timer = loop.call_at(due, self._sweep)

    def run_now(self, flow_id: str) -> Pending | None:
        """Run a flow's pending check now, if it has one; what was pending."""
        pending = self.pending.pop(flow_id, None)
        if pending is not None:
            self.run(pending)
        return pending

    def run_all(self) -> None:
        """Run every pending check (the addon is unloaded with requests in flight)."""
        self.cancel()
        for flow_id in list(self.pending):
            self.run_now(flow_id)

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _sweep(self) -> None:
        self.timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        due_ids = []
        for flow_id, pending in self.pending.items():
            if pending.due > now:
                self.timer = loop.call_at(pending.due, self._sweep)
                break
            due_ids.append(flow_id)
        swept = [p.flow for p in map(self.run_now, due_ids) if p is not None]
        if swept:
            self.on_swept(swept)
