"""(c) Time to the first streamed chunk, through mitmdump without and with the addon, from a
stand-in that streams slowly; and through the addon in fix mode, renaming every tool of a body
whose tools are MCP-named and restoring the name in the streamed call."""

from __future__ import annotations

import http.client
import json
import statistics
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import NamedTuple

from benchmark.throughput import start_bench_mitmdump
from benchmark.workload import CHAT_PATH
from benchmark.workload import SDK_LOAD_HEADERS
from benchmark.workload import chat_body
from benchmark.workload import encode
from benchmark.workload import mcp_named
from harness.load import progress
from harness.mitmdump import ADDON_SCRIPT
from harness.processes import ProcessGroup
from harness.provider import start_standin

__all__ = [
    "FIX_RENAMING_PATH",
    "STREAM_SSE_SCRIPT",
    "StreamResult",
    "StreamRow",
    "Streamed",
    "bench_stream",
    "first_chunk",
]

# The fair baseline: what any user who wants SSE streamed through mitmdump has to load.
STREAM_SSE_SCRIPT = """\
def responseheaders(flow):
    if flow.response.headers.get("content-type", "").startswith("text/event-stream"):
        flow.response.stream = True
"""


# The path whose request has every tool renamed and whose streamed call is given back.
FIX_RENAMING_PATH = "mitmdump + toolnames, fix: renaming"


class Streamed(NamedTuple):
    """One streamed request: seconds to the first body byte and to the end, and the body."""

    first_chunk: float
    total: float
    body: bytes


def first_chunk(conn: http.client.HTTPConnection, body: bytes, headers: dict[str, str]) -> Streamed:
    start = time.perf_counter()
    conn.request("POST", CHAT_PATH, body, {"content-type": "application/json", **headers})
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"status {response.status}: {response.read()[:500]!r}")
    first = response.read1(65536)
    ttfc = time.perf_counter() - start
    rest = response.read()
    return Streamed(ttfc, time.perf_counter() - start, first + rest)


@dataclass
class StreamRow:
    name: str
    ttfc: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    identical: bool = True

    @property
    def median_ttfc(self) -> float:
        return statistics.median(self.ttfc)


class StreamResult(NamedTuple):
    rows: list[StreamRow]
    reference: bytes  # the stream as the stand-in sends it


def bench_stream(binary: Path, workdir: Path, quick: bool, delay_ms: int) -> StreamResult:
    samples = 6 if quick else 30
    body = chat_body(10)
    body["stream"] = True
    raw = encode(body)
    # Every tool MCP-named (fix mode aliases them all), the first one forced: the stream's call
    # goes out under its alias and comes back under the app's name.
    renamed = json.loads(mcp_named(raw))
    app_name = renamed["tools"][0]["function"]["name"]
    renamed["tool_choice"] = {"type": "function", "function": {"name": app_name}}
    bodies = {FIX_RENAMING_PATH: encode(renamed)}
    headers = {**SDK_LOAD_HEADERS, "x-standin-delay-ms": str(delay_ms)}
    sse_script = workdir / "stream_sse.py"
    sse_script.write_text(STREAM_SSE_SCRIPT)
    with ProcessGroup() as group:
        standin = group.add(start_standin(workdir, name="standin-c", record=False, nodelay=True))
        targets = {"direct (no proxy)": standin}
        for name, scripts in (
            ("plain mitmdump", []),
            ("streaming mitmdump", [sse_script]),
            ("mitmdump + toolnames", [ADDON_SCRIPT]),
        ):
            targets[name] = start_bench_mitmdump(group, name, binary, standin.url, workdir, scripts)
        targets[FIX_RENAMING_PATH] = start_bench_mitmdump(
            group,
            "mitmdump + toolnames (fix)",
            binary,
            standin.url,
            workdir,
            [ADDON_SCRIPT],
            options={"toolnames_mode": "fix"},
        )
        conns = {
            name: http.client.HTTPConnection("127.0.0.1", proc.port, timeout=60)
            for name, proc in targets.items()
        }
        rows = {name: StreamRow(name) for name in targets}
        reference = b""
        expected = {}
        for name, conn in conns.items():  # warm up every connection and path
            expected[name] = first_chunk(conn, bodies.get(name, raw), headers).body
            reference = expected[name] if name not in bodies else reference
        restored = expected[FIX_RENAMING_PATH]
        if f'"name":"{app_name}"'.encode() not in restored:
            raise RuntimeError(f"fix mode did not give {app_name!r} back: {restored[:300]!r}")
        for i in range(samples):
            names = list(conns)
            # Take turns in a rotating order, so drift and the order itself favour no one.
            names = names[i % len(names) :] + names[: i % len(names)]
            for name in names:
                streamed = first_chunk(conns[name], bodies.get(name, raw), headers)
                row = rows[name]
                row.ttfc.append(streamed.first_chunk)
                row.total.append(streamed.total)
                # The renamed path's stream differs from the stand-in's by the names given back.
                row.identical = row.identical and streamed.body == expected[name]
                if name not in bodies:
                    row.identical = row.identical and streamed.body == reference
            if (i + 1) % max(1, samples // 4) == 0:
                progress(f"(c) {i + 1}/{samples} streamed requests through each")
        for conn in conns.values():
            conn.close()
    return StreamResult(list(rows.values()), reference)
