"""Load for a proxy under test: many keep-alive connections sending requests, for the
benchmark's requests per second and the soak's flows."""

from __future__ import annotations

import http.client
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["Answer", "Client", "LoadRequest", "LoadResult", "progress", "run_load"]


def progress(message: str) -> None:
    """A timestamped note on stderr, for runs that take minutes."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class LoadRequest(NamedTuple):
    """One request of a load run: a POST of ``body`` (JSON) to ``path``."""

    path: str
    body: bytes
    headers: dict[str, str]


class Answer(NamedTuple):
    status: int
    body: bytes


class Client:
    """One keep-alive HTTP/1.1 connection; reconnects when the server closed it."""

    def __init__(self, port: int, timeout: float = 60.0, retry: bool = True) -> None:
        self.port, self.timeout, self.retry = port, timeout, retry
        self.conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        return self.conn

    def post(self, path: str, body: bytes, headers: dict[str, str] | None = None) -> Answer:
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(
                    "POST", path, body, {"content-type": "application/json", **(headers or {})}
                )
                response = conn.getresponse()
                data = response.read()
            except (ConnectionError, http.client.RemoteDisconnected, BrokenPipeError):
                # A keep-alive connection the server closed while idle: send again, once.
                self.close()
                if attempt == 2 or not self.retry:
                    raise
                continue
            if response.will_close:
                self.close()
            return Answer(response.status, data)
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


@dataclass
class LoadResult:
    requests: int
    seconds: float
    statuses: dict[int, int]
    errors: list[str]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def run_load(
    port: int,
    requests: Callable[[int], LoadRequest],
    concurrency: int,
    *,
    duration: float | None = None,
    count: int | None = None,
    on_done: Callable[[int, Answer], None] | None = None,
    stop: threading.Event | None = None,
    retry: bool = True,
) -> LoadResult:
    """``concurrency`` threads, each on its own keep-alive connection, send requests
    ``requests(i)`` until ``duration`` seconds or ``count`` requests,
    or until ``stop`` is set. ``on_done(i, answer)`` runs for every full response."""
    lock = threading.Lock()
    next_index = 0
    statuses: dict[int, int] = {}
    errors: list[str] = []
    done = 0
    start = time.perf_counter()
    deadline = start + duration if duration else None

    def worker() -> None:
        nonlocal next_index, done
        client = Client(port, retry=retry)
        try:
            while True:
                with lock:
                    if stop is not None and stop.is_set():
                        return
                    if count is not None and next_index >= count:
                        return
                    if deadline is not None and time.perf_counter() >= deadline:
                        return
                    i = next_index
                    next_index += 1
                request = requests(i)
                try:
                    answer = client.post(request.path, request.body, request.headers)
                except Exception as e:  # noqa: BLE001 (reported, and the run goes on)
                    client.close()
                    with lock:
                        errors.append(f"request {i}: {type(e).__name__}: {e}")
                    continue
                if on_done is not None:
                    on_done(i, answer)
                with lock:
                    statuses[answer.status] = statuses.get(answer.status, 0) + 1
                    done += 1
        finally:
            client.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return LoadResult(done, time.perf_counter() - start, statuses, errors)
