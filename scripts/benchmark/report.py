"""The benchmark's tables and its verdict on each target."""

from __future__ import annotations

import statistics
from typing import NamedTuple

from benchmark.cpu import CpuRow
from benchmark.streaming import StreamRow
from benchmark.throughput import RpsRow

__all__ = [
    "TARGET_CPU",
    "TARGET_CPU_NO_TOOLS",
    "TARGET_RPS",
    "TARGET_TTFC",
    "Part",
    "Target",
    "report_cpu",
    "report_rps",
    "report_stream",
    "table",
    "verdict",
]

TARGET_CPU = 1.5
TARGET_CPU_NO_TOOLS = 0.5
TARGET_RPS = 0.95
TARGET_TTFC = 1.05


class Target(NamedTuple):
    target: str
    goal: str
    measured: str
    result: str  # PASS or MISS


class Part(NamedTuple):
    """One part's table, and its targets."""

    text: str
    targets: list[Target]


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} µs"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def report_cpu(rows: list[CpuRow]) -> Part:
    body = []
    targets: list[Target] = []
    for row in rows:
        body.append(
            [
                row.case.label,
                row.case.size,
                _us(row.best("json.loads")),
                f"{_us(row.best('check_request'))} ({row.ratio('check_request'):.2f}x)",
                f"{_us(row.best('request hook'))} ({row.ratio('request hook'):.2f}x)",
                f"{_us(row.best('flow hooks'))} ({row.ratio('flow hooks'):.2f}x)",
            ]
        )
        limit = TARGET_CPU if row.case.tools else TARGET_CPU_NO_TOOLS
        targets.append(
            Target(
                f"(a) {row.case.label}: request hook",
                f"<= {limit}x json.loads",
                f"{row.ratio('request hook'):.2f}x ({_us(row.best('request hook'))})",
                verdict(row.ratio("request hook") <= limit),
            )
        )
    text = table(
        [
            "body",
            "size",
            "json.loads",
            "check_request",
            "request hook",
            "request + response hooks",
        ],
        body,
    )
    return Part(text, targets)


def report_rps(rows: list[RpsRow], concurrency: int) -> Part:
    body = []
    targets: list[Target] = []
    for row in rows:
        body.append(
            [
                row.case.label,
                row.case.size,
                f"{row.best('plain'):.1f}",
                f"{row.best('json.loads only'):.1f}",
                f"{row.best('toolnames'):.1f}",
                f"{row.ratio:.3f}",
                f"{row.cpu_ms('plain'):.2f} / {row.cpu_ms('json.loads only'):.2f} / "
                f"{row.cpu_ms('toolnames'):.2f}",
                f"{row.cpu_ratio:.3f}",
                "; ".join(row.problems) or "none",
            ]
        )
        targets.append(
            Target(
                f"(b) {row.case.label}",
                f">= {TARGET_RPS} of plain mitmdump",
                f"{row.ratio:.3f} (CPU ratio {row.cpu_ratio:.3f})",
                verdict(row.ratio >= TARGET_RPS and not row.problems),
            )
        )
    text = table(
        [
            "body",
            "size",
            "plain req/s",
            "json.loads only req/s",
            "toolnames req/s",
            "ratio",
            "mitmdump CPU ms/request (plain / json / toolnames)",
            "CPU ratio",
            "errors",
        ],
        body,
    )
    return Part(text, targets)


def report_stream(rows: list[StreamRow], delay_ms: int) -> Part:
    by_name = {r.name: r for r in rows}
    base = by_name["streaming mitmdump"].median_ttfc
    body = [
        [
            r.name,
            _ms(r.median_ttfc),
            _ms(min(r.ttfc)),
            _ms(statistics.median(r.total)),
            f"{r.median_ttfc / base:.3f}",
            f"{(r.median_ttfc - base) * 1e3:+.2f} ms",
            "yes" if r.identical else "NO",
        ]
        for r in rows
    ]
    addon = by_name["mitmdump + toolnames"]
    ratio = addon.median_ttfc / base
    plain_ratio = addon.median_ttfc / by_name["plain mitmdump"].median_ttfc
    targets = [
        Target(
            "(c) first chunk vs streaming mitmdump",
            f"<= {TARGET_TTFC}",
            f"{ratio:.3f}",
            verdict(ratio <= TARGET_TTFC and all(r.identical for r in rows)),
        ),
        Target(
            "(c) first chunk vs plain mitmdump",
            f"<= {TARGET_TTFC}",
            f"{plain_ratio:.3f}",
            verdict(plain_ratio <= TARGET_TTFC),
        ),
    ]
    text = table(
        [
            "path",
            "first chunk (median)",
            "first chunk (best)",
            "whole stream (median)",
            "first chunk / streaming mitmdump",
            "difference",
            "bytes identical",
        ],
        body,
    )
    return Part(text, targets)
