"""An upstream for load runs that costs next to nothing: it reads each request whole and
answers every one with the same bytes.

The benchmark's requests per second through mitmdump must measure mitmdump. The stand-in
provider parses and validates every body in Python, threads and all, on the same two CPUs:
with bodies of 700 kB and more it was the slowest process of the run, set the pace, and every
mitmdump came out alike. A provider's own cost is paid on its own machines.

    python -m harness.sink --answer answer.http    # prints: sink listening on http://...
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from http import HTTPStatus
from pathlib import Path

from harness.processes import Process
from harness.processes import start_announcing

__all__ = ["LISTENING", "http_answer", "main", "start_sink"]

# What `python -m harness.sink` prints once it serves; its URL follows.
LISTENING = "sink listening on "
# Requests with another framing than Content-Length (mitmdump sends a body it buffered with
# one) are answered so, and the connection closed.
UNSUPPORTED = b"HTTP/1.1 501 Not Implemented\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


def http_answer(status: int, headers: tuple[tuple[str, str], ...], body: bytes) -> bytes:
    """A whole HTTP/1.1 answer, its Content-Length set (any given one is replaced)."""
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{name}: {value}" for name, value in headers if name.lower() != "content-length"]
    lines.append(f"content-length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _content_length(head: bytes) -> int | None:
    """The request's Content-Length (0 if it has none); None if it is chunked."""
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            return None
    return length


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answer: bytes):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = _content_length(head)
            if length is None:
                writer.write(UNSUPPORTED)
                break
            if length:
                await reader.readexactly(length)
            writer.write(answer)
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        pass  # the client went away, or sent a head too long to be a request
    finally:
        writer.close()


async def _run(port: int, answer: bytes) -> None:
    # Stopped with SIGTERM (harness.processes): an exit, not a kill.
    stopped = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
    server = await asyncio.start_server(
        lambda r, w: _serve(r, w, answer), "127.0.0.1", port, limit=1 << 20
    )
    bound = server.sockets[0].getsockname()[1]
    print(f"{LISTENING}http://127.0.0.1:{bound}", flush=True)
    await stopped.wait()
    # Not wait_closed(): it would wait for clients that keep their connections open.
    server.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.sink", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="0: a free port, printed")
    parser.add_argument("--answer", type=Path, required=True, help="a file of the whole answer")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C, when run by hand
        asyncio.run(_run(args.port, args.answer.read_bytes()))
    return 0


def start_sink(log_dir: Path, answer: bytes, *, name: str = "sink") -> Process:
    """``python -m harness.sink`` on a port it picks itself, answering every request with
    ``answer`` (a whole HTTP/1.1 answer: ``http_answer``)."""
    answer_file = log_dir / f"{name}.http"
    answer_file.write_bytes(answer)
    command = [sys.executable, "-m", "harness.sink", "--port", "0", "--answer", str(answer_file)]
    return start_announcing("the sink upstream", command, log_dir / f"{name}.log", LISTENING)


if __name__ == "__main__":
    sys.exit(main())
