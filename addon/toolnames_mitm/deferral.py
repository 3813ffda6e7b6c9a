"""Observe mode's deferred checks: each request is checked when its flow completes, or a
little after it was forwarded if the answer is slow in coming, whichever comes first.

Checking any sooner would compete with the provider's first token for the CPU
(``scripts/bench`` (c)); checking only at completion would leave a flow whose answer
streams for minutes unmarked while the user watches it. One timer serves every pending
check (a timer per flow cost more than the rest of the request hook).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from mitmproxy import http

from toolnames_core import Exchange
from toolnames_mitm.flows import Pending
from toolnames_mitm.flows import Tracked

__all__ = ["DEFER_SECONDS", "Deferral"]

# At the latest this long after an observed request is forwarded, it is checked.
DEFER_SECONDS = 1.0


class Deferral:
    """The one timer that runs the pending checks whose answers are slow. A check waits on
    its flow's ``Tracked`` (the addon's one store); the timer keeps their order only, the
    order their requests came, so the earliest due is first."""

    def __init__(self, run: Callable[[Pending], None], on_swept: Callable[[list], None]) -> None:
        self.run = run  # checks one pending request
        self.on_swept = on_swept  # told the flows a sweep checked
        # Tracked flows in the order their checks were deferred; one checked at completion
        # stays until the timer passes it (at most DEFER_SECONDS).
        self.queue: deque[Tracked] = deque()
        self.timer: asyncio.TimerHandle | None = None

    def add(
        self,
        loop: asyncio.AbstractEventLoop,
        tracked: Tracked,
        flow: http.HTTPFlow,
        exchange: Exchange,
        content: bytes,
        problem: str | None,
    ) -> None:
        due = loop.time() + DEFER_SECONDS
        tracked.pending = Pending(due, flow, exchange, content, problem)
        self.queue.append(tracked)
        if self.timer is None:
            self.timer = loop.call_at(due, self._sweep)

    def run_now(self, tracked: Tracked | None) -> Pending | None:
        """Run a flow's pending check now, if it has one; what was pending."""
        if tracked is None or tracked.pending is None:
            return None
        pending, tracked.pending = tracked.pending, None
        self.run(pending)
        return pending

    def waiting(self) -> list[Pending]:
        """The checks still pending, in order."""
        return [t.pending for t in self.queue if t.pending is not None]

    def run_all(self) -> None:
        """Run every pending check (the addon is unloaded with requests in flight)."""
        self.cancel()
        while self.queue:
            self.run_now(self.queue.popleft())

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _sweep(self) -> None:
        self.timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        swept = []
        while self.queue:
            pending = self.queue[0].pending
            if pending is not None and pending.due > now:
                self.timer = loop.call_at(pending.due, self._sweep)
                break
            ran = self.run_now(self.queue.popleft())
            if ran is not None:
                swept.append(ran.flow)
        if swept:
            self.on_swept(swept)
