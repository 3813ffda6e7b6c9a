"""A stand-in LLM provider on loopback, shared by the demo and the tests.

It speaks five wire formats (see formats.py and the project's docs/providers.md): OpenAI Chat Completions and Responses,
Anthropic Messages, Gemini generateContent and Bedrock Converse.  It validates
tool names like the real providers do and answers deterministically:

* the last message is a tool result      -> text "done"
* header ``x-standin-call: NAME[,NAME2]`` -> tool call(s) to NAME, offered or not;
  ``PREFIX*`` calls every offered tool whose name starts with PREFIX
* a forced tool choice                   -> a call to that tool (or the first tool)
* otherwise                              -> text "hello"

Other request headers: ``x-standin-delay-ms: N`` sleeps N ms between stream
events; ``x-standin-break-after: K`` drops the connection after K stream events;
``x-standin-encoding: gzip|deflate|br`` compresses a stream, each event flushed as it
goes, if the request's Accept-Encoding admits that coding, as a real server negotiates (br
needs the brotli module, which mitmproxy depends on); ``x-standin-hold: TOKEN`` sends the first stream event, then waits (up to 30 s)
until ``provider.release(TOKEN)`` or ``POST /_standin/release/TOKEN``, so a test
can prove a chunk reached the client before the provider finished, without a timer;
``x-standin-framing: length`` sends a stream with a Content-Length instead of chunked (as
buffering gateways, replay and mock servers do), each event still written as it goes;
``x-standin-corrupt-gzip: crc|cut`` sends a whole answer as a gzip body that does not decode,
its checksum broken or its end cut off (whatever the Accept-Encoding: a broken server).
A request signed with AWS SigV4 (``Authorization: AWS4-HMAC-SHA256 …``) is answered only if
its signature holds for a test access key the stand-in knows (sigv4.py), else with AWS's 403.
Each recorded request also keeps the ``response_body`` bytes the stand-in sent, as they stood
when the record was read: read it after the client has read the whole answer.

In-process use::

    with StandinProvider() as provider:
        ...  # provider.url, provider.requests, provider.reset()

Out-of-process use: ``python -m standin --port 8765`` prints
``standin provider listening on http://127.0.0.1:8765``; then
``GET /_standin/requests`` lists recorded requests (body base64 in "body_b64")
and ``POST /_standin/reset`` clears them.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import gzip
import json
import signal
import socket
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

from standin import sigv4
from standin.formats import route
from standin.shared import ProviderError

__all__ = [
    "HOLD_TIMEOUT",
    "INTROSPECT_RELEASE",
    "INTROSPECT_REQUESTS",
    "INTROSPECT_RESET",
    "StandinProvider",
    "accepts_coding",
    "main",
]

INTROSPECT_REQUESTS = "/_standin/requests"
INTROSPECT_RESET = "/_standin/reset"
INTROSPECT_RELEASE = "/_standin/release/"
HOLD_TIMEOUT = 30.0


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # keep-alive connections must not block shutdown
    allow_reuse_address = True
    # socketserver's default of 5 drops connection attempts when a proxy opens a dozen at once.
    request_queue_size = 128

    def __init__(
        self,
        address,
        log: bool,
        keep_records: bool = True,
        nodelay: bool = False,
        name_max_length: int | None = None,
    ):
        super().__init__(address, _Handler)
        self.log = log
        self.keep_records = keep_records
        self.nodelay = nodelay
        self.name_max_length = name_max_length
        self.lock = threading.Lock()
        self.recorded: list[dict] = []
        self.connections: set[socket.socket] = set()
        self.holds: dict[str, threading.Event] = {}

    def hold(self, token: str) -> threading.Event:
        with self.lock:
            return self.holds.setdefault(token, threading.Event())

    def handle_error(self, request, client_address):
        # Clients (SDKs, mitmproxy) reset idle keep-alive connections; that is not an error.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 so that mitmproxy and the SDKs can reuse connections (keep-alive).
    protocol_version = "HTTP/1.1"
    server_version = "standin-provider/1"
    server: _Server

    def setup(self):
        # StreamRequestHandler.setup reads this to set TCP_NODELAY on the connection.
        self.disable_nagle_algorithm = self.server.nodelay
        super().setup()
        with self.server.lock:
            self.server.connections.add(self.connection)

    def finish(self):
        try:
            super().finish()
        finally:
            with self.server.lock:
                self.server.connections.discard(self.connection)

    def log_message(self, format, *args):  # noqa: A002 - signature from the base class
        if self.server.log:
            sys.stderr.write(f"standin: {self.address_string()} {format % args}\n")

    def do_GET(self):
        self._handle()

    def do_POST(self):
        self._handle()

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_POST

    # -- request side -------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            # Recorded de-chunked: the entity body, without chunk framing.
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _decoded(self, raw: bytes) -> bytes:
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding in ("gzip", "deflate"):
            return zlib.decompress(
                raw, 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
            )
        return raw

    def _handle(self):
        self.record = None  # handlers live as long as a keep-alive connection
        try:
            raw = self._read_body()
        except (ValueError, OSError):
            self.close_connection = True
            return self._send_json(400, {"error": {"message": "standin: unreadable request body"}})
        # Requests may arrive in absolute form (http://host/path) when sent to a proxy port.
        target = urlsplit(self.path)
        path, query = target.path or "/", target.query
        if path == INTROSPECT_REQUESTS and self.command == "GET":
            return self._send_json(200, self.server_records_for_http())
        if path.startswith(INTROSPECT_RELEASE) and self.command == "POST":
            self.server.hold(path.removeprefix(INTROSPECT_RELEASE)).set()
            return self._send_json(200, {"ok": True})
        if path == INTROSPECT_RESET and self.command == "POST":
            with self.server.lock:
                self.server.recorded.clear()
            return self._send_json(200, {"ok": True})
        self.record = {
            "method": self.command,
            "path": self.path,
            "headers": [[k, v] for k, v in self.headers.items()],
            "body": raw,
            "response_body": b"",
        }
        if self.server.keep_records:
            with self.server.lock:
                self.server.recorded.append(self.record)
        try:
            # A SigV4-signed request is refused, as AWS refuses it, unless its signature holds.
            refused = sigv4.check(self.command, path, query, list(self.headers.items()), raw)
            if refused is not None:
                return self._send_error(refused)
            self._dispatch(path, query, raw)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # a stand-in bug should be visible, not a dropped connection
            self._send_json(500, {"error": {"message": f"standin internal error: {exc!r}"}})

    def server_records_for_http(self) -> list[dict]:
        with self.server.lock:
            records = list(self.server.recorded)
        return [
            {
                "method": r["method"],
                "path": r["path"],
                "headers": r["headers"],
                "body_b64": base64.b64encode(r["body"]).decode(),
                "response_body_b64": base64.b64encode(r["response_body"]).decode(),
            }
            for r in records
        ]

    def _dispatch(self, path: str, query: str, raw: bytes):
        found = route(path)
        if found is None:
            return self._send_json(404, {"error": {"message": f"standin: no endpoint at {path}"}})
        if self.command != "POST":
            return self._send_json(
                405, {"error": {"message": f"standin: {self.command} not allowed"}}
            )
        fmt, mode = found
        try:
            body = json.loads(self._decoded(raw))
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except (ValueError, zlib.error):
            return self._send_error(fmt.not_json())
        try:
            fmt.validate(body, self.server.name_max_length)
        except ProviderError as err:
            return self._send_error(err)
        turn = fmt.decide(body, path, raw, self.headers.get("x-standin-call", ""))
        streaming = (
            mode == "stream"
            or (mode == "body" and body.get("stream") is True)
            or (mode == "body-streams" and body.get("stream") is not False)
        )
        if not streaming:
            corrupt = self.headers.get("x-standin-corrupt-gzip")
            if corrupt:
                return self._send_corrupt_gzip(fmt.render(turn, body), corrupt)
            return self._send_json(200, fmt.render(turn, body))
        events = fmt.events(turn, body, query)
        failing = self.headers.get("x-standin-stream-error")
        if failing:
            # The provider's error once the answer has begun, in its own framing, after the
            # first event: what a model that fails mid-answer sends.
            events = [*events[:1], fmt.stream_error(failing)]
        self._send_stream(fmt.stream_content_type(query), events)

    # -- response side ------------------------------------------------------

    def _send_error(self, err: ProviderError):
        self._send_json(err.status, err.body, err.headers)

    def _send_json(self, status: int, payload, headers=()):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            # Recorded before it is sent, as the streams are: see _send_stream.
            if self.record is not None:
                self.record["response_body"] = data
            self.wfile.write(data)

    def _send_corrupt_gzip(self, payload, how: str):
        packed = gzip.compress(json.dumps(payload).encode())
        if how == "crc":  # the trailer's CRC-32 flipped: every byte of the text is there
            packed = packed[:-8] + bytes(b ^ 0xFF for b in packed[-8:-4]) + packed[-4:]
        elif how == "cut":
            packed = packed[: len(packed) // 2]
        else:
            raise ValueError("x-standin-corrupt-gzip is crc or cut")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(packed)))
        self.end_headers()
        self.record["response_body"] = packed
        self.wfile.write(packed)

    def _header_int(self, name: str) -> int | None:
        try:
            return max(0, int(self.headers.get(name, "")))
        except ValueError:
            return None

    def _send_stream(self, content_type: str, events: list[bytes]):
        delay = (self._header_int("x-standin-delay-ms") or 0) / 1000
        break_after = self._header_int("x-standin-break-after")
        hold = self.headers.get("x-standin-hold")
        encoding = self.headers.get("x-standin-encoding")
        if encoding and not accepts_coding(self.headers.get("accept-encoding", ""), encoding):
            encoding = None  # a server never sends a coding the client did not ask for
        compress = _stream_compressor(encoding) if encoding else None
        sized = self.headers.get("x-standin-framing", "").lower() == "length"
        if sized and (break_after is not None or hold or compress is not None):
            raise ValueError("x-standin-framing: length goes with no break, hold or encoding")
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        if compress is not None:
            self.send_header("Content-Encoding", encoding)
        self.send_header("Cache-Control", "no-cache")
        if sized:
            self.send_header("Content-Length", str(sum(map(len, events))))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        if sized:
            for index, event in enumerate(events):
                if index and delay:
                    time.sleep(delay)
                # Recorded before it is sent: a client that has read the whole answer can
                # then rely on the record holding all of it (a test compares the two).
                self.record["response_body"] += event
                self.wfile.write(event)
                self.wfile.flush()
            return
        for index, event in enumerate(events):
            if break_after is not None and index >= break_after:
                # Simulate a broken stream: no terminating chunk, connection gone.
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if index and delay:
                time.sleep(delay)
            if index == 1 and hold:
                self.server.hold(hold).wait(HOLD_TIMEOUT)
            if compress is not None:
                event = compress(event)
            # One HTTP chunk per event, recorded first (as above), written and flushed at once.
            self.record["response_body"] += event
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
        if compress is not None:
            end = compress(None)
            self.record["response_body"] += end
            self.wfile.write(b"%x\r\n%s\r\n" % (len(end), end))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def accepts_coding(accept_encoding: str, coding: str) -> bool:
    """Whether an Accept-Encoding value admits ``coding`` (RFC 9110 §12.5.3; q=0 refuses)."""
    for item in accept_encoding.split(","):
        name, _, params = item.strip().partition(";")
        if name.strip().lower() in (coding, "*"):
            q = params.strip().lower().removeprefix("q=")
            return not (params and q.replace(".", "").strip("0") == "")
    return False


def _stream_compressor(encoding: str):
    """compress(event) -> the bytes that carry it, flushed; compress(None) ends the stream."""
    if encoding == "br":
        import brotli  # a dependency of mitmproxy, so present wherever the stand-in runs

        brotli_obj = brotli.Compressor()
        return lambda data: (
            brotli_obj.finish() if data is None else brotli_obj.process(data) + brotli_obj.flush()
        )
    wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}[encoding]
    obj = zlib.compressobj(wbits=wbits)
    return lambda data: (
        obj.flush() if data is None else obj.compress(data) + obj.flush(zlib.Z_SYNC_FLUSH)
    )


class StandinProvider:
    """The stand-in provider on a ThreadingHTTPServer, served from a daemon thread."""

    def __init__(
        self,
        port: int = 0,
        host: str = "127.0.0.1",
        log: bool = False,
        record: bool = True,
        nodelay: bool = False,
        name_max_length: int | None = None,
    ):
        self.host, self._port, self._log, self._record = host, port, log, record
        # A provider whose rule drifted from its documentation: the longest function name it
        # takes (OpenAI's formats), stricter or looser than the documented 64, so tests can
        # show toolnames telling its rule and the provider's verdict apart.
        self.name_max_length = name_max_length
        # http.server leaves Nagle's algorithm on, and the stand-in writes a response's head and
        # body separately: the body then waits for the peer's delayed ACK (40 ms on Linux),
        # which caps a connection at about 25 requests per second. Load runs turn it off.
        self._nodelay = nodelay
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> StandinProvider:
        if self._server is None:
            self._server = _Server(
                (self.host, self._port),
                self._log,
                self._record,
                self._nodelay,
                self.name_max_length,
            )
            self._thread = threading.Thread(
                target=self._server.serve_forever, args=(0.1,), name="standin-provider", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._port = server.server_address[1]
        server.shutdown()
        with server.lock:
            open_connections = list(server.connections)
        for conn in open_connections:  # end idle keep-alive connections too
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> StandinProvider:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._server.server_address[1] if self._server else self._port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def requests(self) -> list[dict]:
        """Recorded requests: {"method", "path" (with query), "headers" [[name, value]…], "body"
        bytes, "response_body" bytes sent so far}: copies, so a stream still being sent is cut."""
        if self._server is None:
            return []
        with self._server.lock:
            return [
                {**r, "headers": [list(h) for h in r["headers"]]} for r in self._server.recorded
            ]

    def release(self, token: str) -> None:
        """Let a stream held by ``x-standin-hold: TOKEN`` go on."""
        if self._server is not None:
            self._server.hold(token).set()

    def reset(self) -> None:
        if self._server is not None:
            with self._server.lock:
                self._server.recorded.clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Stand-in LLM provider for the toolnames tests and demo."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--quiet", action="store_true", help="do not log requests to stderr")
    parser.add_argument(
        "--no-record",
        action="store_true",
        help="keep no requests in memory (GET /_standin/requests then lists none): for load runs",
    )
    parser.add_argument(
        "--nodelay",
        action="store_true",
        help="TCP_NODELAY on every connection, so load runs measure the proxy, not delayed ACKs",
    )
    parser.add_argument(
        "--name-max-length",
        type=int,
        metavar="N",
        help="act as an OpenAI whose rule drifted: take function names up to N characters "
        "instead of the documented 64 (Chat Completions and Responses)",
    )
    args = parser.parse_args(argv)

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    provider = StandinProvider(
        port=args.port,
        host=args.host,
        log=not args.quiet,
        record=not args.no_record,
        nodelay=args.nodelay,
        name_max_length=args.name_max_length,
    ).start()
    print(f"standin provider listening on {provider.url}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        provider.stop()
    return 0
