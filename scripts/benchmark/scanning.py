"""(d) scripts/scan's throughput: MB/s over a flow file, a HAR file and a YAML cassette of the
same agent traffic, and the scan's peak memory.

The traffic is what an agent's test suite records: chat completions requests with 10 tools
and conversations of 2 to 50 kB, the openai SDK's headers, OpenAI's answers (every other one
gzip-encoded, which a cassette keeps as !!binary, as vcrpy does) calling a tool, one call in
eight to a tool never offered. Cassettes are read with libyaml, and with ruamel.yaml's pure
Python parser (the reader without PyYAML) on a smaller file, for the comparison.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

from benchmark.report import Part
from benchmark.report import Target
from benchmark.report import table
from benchmark.report import verdict
from benchmark.workload import PROVIDER_RESPONSE_HEADERS
from benchmark.workload import SDK_REQUEST_HEADERS
from benchmark.workload import chat_body
from benchmark.workload import encode
from benchmark.workload import tool_name
from harness.load import progress
from samples import recordings as samples
from scanner.cassettes import CassetteReader
from scanner.flows import FlowFileReader
from scanner.jsonfiles import JsonReader
from scanner.output import JsonOutput
from scanner.output import Progress
from scanner.recorded import SNIFF_BYTES
from scanner.run import Input
from scanner.run import Scanner
from scanner.yamlevents import best_parser
from toolnames_core import READERS
from toolnames_core import Reader

try:
    import yaml as pyyaml
except ImportError:  # the cassette is then written by ruamel.yaml, slowly
    pyyaml = None

__all__ = [
    "TARGET_CASSETTE_MB_S",
    "ScanRow",
    "bench_scan",
    "cassette_text",
    "peak_rss",
    "read_seconds",
    "report_scan",
    "scan_seconds",
    "traffic",
    "write_inputs",
]

_SIZES = (2_000, 8_000, 20_000, 50_000)
_DISTINCT = 24  # exchanges written once and repeated up to the size asked for


class ScanRow(NamedTuple):
    """One input: its size, and the fastest CPU seconds to read it and to scan it."""

    label: str
    size: int  # bytes
    exchanges: int
    read_seconds: float  # the reader alone: records out of the file
    scan_seconds: float  # scripts/scan's whole work: reading and checking every exchange
    peak_rss: int | None  # bytes, of `python -m scanner` on the file (None: not measured)

    @property
    def read_mb_s(self) -> float:
        return self.size / self.read_seconds / 1e6

    @property
    def scan_mb_s(self) -> float:
        return self.size / self.scan_seconds / 1e6


def traffic(count: int = _DISTINCT) -> list:
    """``count`` distinct recorded exchanges (mitmproxy flows)."""
    flows = []
    for i in range(count):
        body = chat_body(10, _SIZES[i % len(_SIZES)], seed=i)
        called = tool_name(i % 10) if i % 8 else "search_the_web"  # one in eight not offered
        answer = samples.completion((called, '{"query": "weather Paris", "limit": 5}'))
        flow = samples.chat_flow(
            f"bench-{i}", encode(body), answer, response_encoding="gzip" if i % 2 else None
        )
        for name, value in SDK_REQUEST_HEADERS:
            flow.request.headers[name] = value
        for name, value in PROVIDER_RESPONSE_HEADERS:
            flow.response.headers[name] = value
        flows.append(flow)
    return flows


def cassette_text(flows: list) -> str:
    """What vcrpy writes: PyYAML's dump, block style (ruamel.yaml's when PyYAML is missing)."""
    if pyyaml is None:
        return samples.cassette_text(flows)
    document = {"interactions": [samples.cassette_interaction(f) for f in flows], "version": 1}
    dumper = getattr(pyyaml, "CSafeDumper", pyyaml.SafeDumper)
    return pyyaml.dump(document, Dumper=dumper, default_flow_style=False)


def _repeated(unit_size: int, size: int) -> int:
    return max(1, math.ceil(size / max(unit_size, 1)))


def write_inputs(workdir: Path, size: int) -> dict[str, tuple[Path, int]]:
    """A flow file, a HAR file and a cassette of about ``size`` bytes each, with how many
    exchanges each holds."""
    flows = traffic()
    out: dict[str, tuple[Path, int]] = {}
    n = _repeated(len(samples.flow_bytes(flows)), size)
    out["flow file"] = (samples.write_flows(workdir / "bench.mitm", flows * n), len(flows) * n)
    n = _repeated(len(json.dumps(samples.har_document(flows), indent=2)), size)
    out["HAR"] = (samples.write_har(workdir / "bench.har", flows * n), len(flows) * n)
    # One dump, its interactions repeated: dumping 10 MB of YAML would take longer than
    # reading it.
    head, _, rest = cassette_text(flows).partition("interactions:\n")
    items, _, tail = rest.rpartition("version: 1\n")
    n = _repeated(len(items.encode()), size)
    path = workdir / "bench.yaml"
    path.write_text(head + "interactions:\n" + items * n + "version: 1\n" + tail)
    out["cassette"] = (path, len(flows) * n)
    return out


# CPU time, not wall time: on a machine shared with other jobs it is the steadier figure, and
# what the scan gets when it has a core to itself.


def scan_seconds(
    path: Path, repeats: int, yaml_parser: str | None = None, reader: Reader = READERS[0]
) -> float:
    """The fastest of ``repeats`` in-process scans of ``path`` (findings to /dev/null), its
    bodies decoded by ``reader``."""
    best = float("inf")
    size = path.stat().st_size
    for _ in range(repeats):
        with open(os.devnull, "w") as devnull:
            scanner = Scanner(
                (), JsonOutput(devnull), Progress(size, devnull, enabled=False), reader
            )
            scanner.yaml_parser = yaml_parser
            started = time.process_time()
            scanner.run([Input(str(path), True, size)])
            best = min(best, time.process_time() - started)
        if scanner.unreadable or not scanner.checked:
            raise RuntimeError(f"the scan of {path} failed: {scanner.summary()}")
    return best


def read_seconds(path: Path, repeats: int, yaml_parser: str | None = None) -> float:
    """The fastest of ``repeats`` reads of ``path``'s records, without checking them."""
    best = float("inf")
    size = path.stat().st_size
    for _ in range(repeats):
        with open(path, "rb", buffering=SNIFF_BYTES) as fo:
            if path.suffix == ".mitm":
                reader = FlowFileReader(fo, size)
            elif path.suffix == ".har":
                reader = JsonReader(fo)
            else:
                reader = CassetteReader(fo, b"\n", yaml_parser)
            started = time.process_time()
            for _ in reader.records():
                pass
            best = min(best, time.process_time() - started)
    return best


# The child writes its own high-water mark: wait4's ru_maxrss would count the parent's pages
# that the child held between fork and exec (this process holds the generated files' flows).
_PEAK_RSS_MAIN = """\
import atexit, os, runpy
def peak():
    with open("/proc/self/status") as status, open(os.environ["BENCH_PEAK_FILE"], "w") as out:
        out.write(next(line for line in status if line.startswith("VmHWM:")))
atexit.register(peak)
runpy.run_module("scanner", run_name="__main__", alter_sys=True)
"""


def peak_rss(path: Path, workdir: Path) -> int:
    """The peak resident memory of ``python -m scanner --json path``, in bytes."""
    peak_file = workdir / "peak-rss.txt"
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS_MAIN, "--json", "--no-progress", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "BENCH_PEAK_FILE": str(peak_file)},
        check=False,
    )
    if done.returncode not in (0, 1):  # 1: findings that are errors, as the traffic has
        raise RuntimeError(f"python -m scanner {path} exited {done.returncode}: {done.stderr!r}")
    return int(peak_file.read_text().split()[1]) * 1024  # "VmHWM:  123 kB"


def bench_scan(workdir: Path, quick: bool, size: int | None = None) -> list[ScanRow]:
    size = size or (3_000_000 if quick else 10_000_000)
    repeats = 1 if quick else 3
    progress(f"(d) writing a flow file, a HAR file and a cassette of {size / 1e6:.1f} MB each")
    inputs = write_inputs(workdir, size)
    rows = []
    for label, (path, exchanges) in inputs.items():
        if label == "cassette":
            label += " (libyaml)" if best_parser() == "pyyaml" else " (ruamel.yaml)"
        progress(f"(d) reading and scanning the {label}")
        rows.append(
            ScanRow(
                label,
                path.stat().st_size,
                exchanges,
                read_seconds(path, repeats),
                scan_seconds(path, repeats),
                None if quick else peak_rss(path, workdir),
            )
        )
        # The same scan with each other reader (the first, above, is msgspec where it can
        # be imported); reading the records does not depend on it.
        for reader in READERS[1:]:
            rows.append(
                rows[-1]._replace(
                    label=f"{label}, {reader.name} reader",
                    scan_seconds=scan_seconds(path, repeats, reader=reader),
                    peak_rss=None,
                )
            )
    # The pure-Python reader, on the first tenth of the same cassette: it is far slower.
    small = workdir / "small.yaml"
    text = inputs["cassette"][0].read_text()
    cut = text.index("\n- request:", len(text) // 10)
    small.write_text(text[: cut + 1] + "version: 1\n")
    progress("(d) reading and scanning a tenth of the cassette with ruamel.yaml in pure Python")
    rows.append(
        ScanRow(
            "cassette (ruamel.yaml, pure Python)",
            small.stat().st_size,
            text[: cut + 1].count("\n- request:"),
            read_seconds(small, 1, "ruamel"),
            scan_seconds(small, 1, "ruamel"),
            None,
        )
    )
    return rows


TARGET_CASSETTE_MB_S = 20.0


def report_scan(rows: list[ScanRow]) -> Part:
    body = [
        [
            r.label,
            f"{r.size / 1e6:.1f} MB",
            str(r.exchanges),
            f"{r.read_mb_s:.1f} MB/s",
            f"{r.scan_mb_s:.1f} MB/s ({r.scan_seconds:.2f} s)",
            "-" if r.peak_rss is None else f"{r.peak_rss / 2**20:.0f} MiB",
        ]
        for r in rows
    ]
    header = ["input", "size", "exchanges", "reading", "scan (read + check)", "peak RSS"]
    text = table(header, body)
    targets = [
        Target(
            f"(d) {r.label}: scan throughput",
            f">= {TARGET_CASSETTE_MB_S:.0f} MB/s",
            f"{r.scan_mb_s:.1f} MB/s",
            verdict(r.scan_mb_s >= TARGET_CASSETTE_MB_S),
        )
        for r in rows
        if r.label.startswith("cassette") and "pure Python" not in r.label
    ]
    return Part(text, targets)
