"""The benchmark's tables and its verdict on each target."""

from __future__ import annotations

import statistics
from typing import NamedTuple

from benchmark.cpu import FIX_GROWING
from benchmark.cpu import FIX_RENAMING
from benchmark.cpu import STREAM_FIX
from benchmark.cpu import STREAM_OBSERVE
from benchmark.cpu import CpuRow
from benchmark.cpu import other_reader
from benchmark.streaming import STREAM_TABLES
from benchmark.streaming import StreamRow
from benchmark.throughput import FIX_JSON_READER
from benchmark.throughput import FIX_MODE
from benchmark.throughput import JSON_ONLY
from benchmark.throughput import JSON_ONLY_AGAIN
from benchmark.throughput import JSON_READER
from benchmark.throughput import NAIVE_RENAMING
from benchmark.throughput import OBSERVE_MODE
from benchmark.throughput import RENAMING_VARIANTS
from benchmark.throughput import VARIANTS
from benchmark.throughput import RateRow
from benchmark.throughput import RenamingRow
from benchmark.throughput import RpsRow
from benchmark.throughput import per_connections
from toolnames_core import READERS

__all__ = [
    "TARGET_CPU",
    "TARGET_CPU_NO_TOOLS",
    "TARGET_ONE_TOOL",
    "TARGET_SMALL_NO_TOOLS",
    "TARGET_RENAMING_CPU",
    "TARGET_RENAMING_RPS",
    "TARGET_RENAMING_RPS_FAST",
    "TARGET_RPS",
    "TARGET_FAST_RPS_MANY_TOOLS",
    "TARGET_TTFC",
    "Part",
    "Target",
    "report_cpu",
    "report_renaming",
    "report_rps",
    "report_stream",
    "table",
    "verdict",
]

# The least an addon that reads the tools can cost is one json.loads of the body: (a) is judged
# against it from 10 tools up, and in absolute time where fixed costs dominate (one tool, a
# small body without tools); (b) against mitmdump running a json.loads-only script.
TARGET_CPU = 1.5
TARGET_ONE_TOOL = 25e-6  # seconds per request hook
TARGET_SMALL_NO_TOOLS = 5e-6
TARGET_CPU_NO_TOOLS = 0.5  # a large body without tools: scanned, never parsed
TARGET_RPS = 0.97
TARGET_TTFC = 1.05
# Issue 25: fix mode's renaming keeps every byte the client sent, so it should cost one read
# of the body plus a few splices: a whole renamed flow at most 2x one json.loads of the
# request (from 10 tools up), and through mitmdump at least the naive json.loads/json.dumps
# renaming script's rate (1.3 times it with msgspec).
TARGET_RENAMING_CPU = 2.0
TARGET_RENAMING_RPS = 1.0
TARGET_RENAMING_RPS_FAST = 1.3
# Issue 25 too: restoring names in a streamed answer costs at most 1.2x observing the same
# stream, per chunk.
TARGET_STREAM_RESTORING = 1.2


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


def _cpu_target(row: CpuRow) -> Target:
    hook = row.best("request hook")
    measured = (
        f"{row.ratio('request hook'):.2f}x ({_us(hook)}; "
        f"paired median {row.paired_median('request hook'):.2f}x)"
    )
    name = f"(a) {row.case.label}: request hook"
    if row.case.tools == 1:
        return Target(
            name, f"<= {_us(TARGET_ONE_TOOL)}", measured, verdict(hook <= TARGET_ONE_TOOL)
        )
    if not row.case.tools and len(row.case.raw) < 100_000:
        goal = f"<= {_us(TARGET_SMALL_NO_TOOLS)}"
        return Target(name, goal, measured, verdict(hook <= TARGET_SMALL_NO_TOOLS))
    limit = TARGET_CPU if row.case.tools else TARGET_CPU_NO_TOOLS
    return Target(
        name, f"<= {limit}x json.loads", measured, verdict(row.ratio("request hook") <= limit)
    )


def _renaming_cell(row: CpuRow) -> str:
    if not row.renaming_ratio:
        return "-"
    cell = f"{_us(row.best(FIX_RENAMING))} ({row.renaming_ratio:.2f}x)"
    if row.growing_ratio:
        cell += (
            f"; growing a round a request: {_us(row.best(FIX_GROWING))} ({row.growing_ratio:.2f}x)"
        )
    return cell


def _renaming_target(row: CpuRow, what: str, column: str, ratio: float) -> Target:
    """Fix mode's renaming timed in ``column`` (a whole flow, or a conversation as it grew),
    ``ratio`` times json.loads of the same requests."""
    return Target(
        f"(a) {row.case.label}: fix mode, {what}",
        f"<= {TARGET_RENAMING_CPU}x json.loads",
        f"{ratio:.2f}x ({_us(row.best(column))})",
        verdict(ratio <= TARGET_RENAMING_CPU),
    )


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
                _renaming_cell(row),
                f"{_us(row.best(STREAM_OBSERVE))} / {_us(row.best(STREAM_FIX))} "
                f"({row.stream_ratio:.2f}x)"
                if row.stream_ratio
                else "-",
            ]
        )
        targets.append(_cpu_target(row))
        targets += _fast_cpu_target(row)
        if row.renaming_ratio is not None and row.case.tools >= FAST_FROM_TOOLS:
            targets.append(
                _renaming_target(row, "whole renamed flow", FIX_RENAMING, row.renaming_ratio)
            )
        if row.growing_ratio is not None:
            targets.append(
                _renaming_target(
                    row,
                    "the conversation growing a round a request",
                    FIX_GROWING,
                    row.growing_ratio,
                )
            )
        if row.stream_ratio is not None and row.case.tools >= FAST_FROM_TOOLS:
            targets.append(
                Target(
                    f"(a) {row.case.label}: fix mode, restoring a stream, per chunk",
                    f"<= {TARGET_STREAM_RESTORING}x observing it",
                    f"{row.stream_ratio:.2f}x ({_us(row.best(STREAM_FIX))} against "
                    f"{_us(row.best(STREAM_OBSERVE))})",
                    verdict(row.stream_ratio <= TARGET_STREAM_RESTORING),
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
            "fix: every tool renamed, call restored (x its json.loads)",
            "stream per chunk: observe / fix (fix / observe)",
        ],
        body,
    )
    return Part(text + "\n\n" + _readers_table(rows), targets)


# With msgspec (toolnames_core/readers.py), issue 17's targets: the request hook below 1.0x
# json.loads from 10 tools up, and above 1.0 of the json.loads-only mitmdump with tools.
TARGET_FAST_CPU = 1.0
TARGET_FAST_RPS = 1.0
FAST_FROM_TOOLS = 10
# Issue 25: from 100 tools up, what msgspec saves on the parse must show through mitmdump.
TARGET_FAST_RPS_MANY_TOOLS = 1.2
MANY_TOOLS = 100


def _fast_cpu_target(row: CpuRow) -> list[Target]:
    if READERS[0].name != "msgspec" or row.case.tools < FAST_FROM_TOOLS:
        return []
    ratio = row.ratio("request hook")
    return [
        Target(
            f"(a) {row.case.label}: request hook, msgspec reader",
            f"< {TARGET_FAST_CPU}x json.loads",
            f"{ratio:.2f}x ({_us(row.best('request hook'))})",
            verdict(ratio < TARGET_FAST_CPU),
        )
    ]


def _readers_table(rows: list[CpuRow]) -> str:
    """Both readers side by side: the plain columns above are the first reader's."""
    columns = [
        (f"{name} ({reader.name})", name if i == 0 else other_reader(name, reader))
        for i, reader in enumerate(READERS)
        for name in ("check_request", "request hook")
    ]
    body = [
        [
            row.case.label,
            _us(row.best("json.loads")),
            *(
                f"{_us(row.best(key))} ({row.ratio(key):.2f}x)" if key in row.samples else "-"
                for _, key in columns
            ),
        ]
        for row in rows
    ]
    return "Readers side by side:\n\n" + table(
        ["body", "json.loads", *(title for title, _ in columns)], body
    )


def _paired(row: RateRow, variant: str, base: str) -> str:
    """The paired median of ``variant`` over ``base`` and the range of its rounds, as a target
    line shows them: "paired median 0.894, rounds 0.861-0.974"."""
    return f"paired median {row.paired(variant, base):.3f}, rounds {row.spread(variant, base)}"


def _rate_tables(rows: list[RateRow], variants: list[str], ratios: list[tuple[str, str]]) -> str:
    """Two tables of (b) rows: req/s of each mitmdump, and ``ratios`` (variant over base), at
    each number of client connections; then mitmdump's CPU per request alike."""
    if not rows:
        return "(no rows)"
    conns = per_connections(rows[0])
    judged = rows[0].judged
    rates = table(
        [
            "body",
            "size",
            *(f"{v} req/s" for v in variants),
            *(f"{v} / {base} (paired median at {judged}; its rounds)" for v, base in ratios),
            "errors",
        ],
        [
            [
                row.case.label,
                row.case.size,
                *(row.rates(v) if row.measured(v) else "-" for v in variants),
                *(
                    " / ".join(f"{row.rate_ratio(v, base, n):.3f}" for n in row.connections)
                    + f" ({row.paired(v, base):.3f}; {row.spread(v, base)})"
                    if row.measured(v)
                    else "-"
                    for v, base in ratios
                ),
                "; ".join(row.problems) or "none",
            ]
            for row in rows
        ],
    )
    cpu = table(
        ["body", *variants],
        [
            [row.case.label, *(row.cpu_text(v) if row.measured(v) else "-" for v in variants)]
            for row in rows
        ],
    )
    return (
        f"Each cell: {conns[1:-1].replace(' connections', '')} client connections.\n\n"
        + rates
        + "\n\nmitmdump's CPU per request, ms (user + system, /proc, best round), "
        + f"{conns[1:-1]}:\n\n"
        + cpu
    )


def _rps_targets(row: RpsRow) -> list[Target]:
    """Observe mode's (b) targets (issue 25's restatement, against the json.loads-only script
    that parses the request and the JSON answer): every row at least 0.97 of it (parity
    within this machine's noise; the goal at 1 and 10 tools); with msgspec at least 1.2 from
    100 tools up, and above 1.0 on the other rows with tools past 10 (the 2 MB conversation:
    issue 17's target, which the restatement leaves as it was)."""
    measured = (
        f"{row.ratio:.3f} ({_paired(row, 'toolnames', JSON_ONLY)}; "
        f"{row.ratio_to_plain:.3f} of plain"
    )
    if row.measured(JSON_ONLY_AGAIN):  # the noise the ratio carries, beside it
        measured += f"; json.loads only against itself {row.of_json_only(JSON_ONLY_AGAIN):.3f}"
    measured += ")"
    out = [
        Target(
            f"(b) {row.case.label}",
            f">= {TARGET_RPS} of json.loads-only mitmdump",
            measured,
            verdict(row.ratio >= TARGET_RPS and not row.problems),
        )
    ]
    if READERS[0].name != "msgspec" or row.case.tools <= FAST_FROM_TOOLS:
        return out
    if row.case.tools >= MANY_TOOLS:
        goal, met = f">= {TARGET_FAST_RPS_MANY_TOOLS}", row.ratio >= TARGET_FAST_RPS_MANY_TOOLS
    else:
        goal, met = f"> {TARGET_FAST_RPS}", row.ratio > TARGET_FAST_RPS
    out.append(
        Target(
            f"(b) {row.case.label}: msgspec reader",
            f"{goal} of json.loads-only mitmdump",
            measured,
            verdict(met and not row.problems),
        )
    )
    return out


def report_rps(rows: list[RpsRow]) -> Part:
    targets = [target for row in rows for target in _rps_targets(row)]
    variants = list(VARIANTS)
    ratios = [(v, JSON_ONLY) for v in (JSON_ONLY_AGAIN, OBSERVE_MODE, JSON_READER) if v in VARIANTS]
    ratios.append((OBSERVE_MODE, "plain"))
    return Part(_rate_tables(rows, variants, ratios), targets)


def _stream_table(rows: list[StreamRow], base: float) -> str:
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
    header = [
        "path",
        "first chunk (median)",
        "first chunk (best)",
        "whole stream (median)",
        "first chunk / streaming mitmdump",
        "difference",
        "bytes identical",
    ]
    return table(header, body)


def report_stream(rows: list[StreamRow], delay_ms: int) -> Part:
    """(c): OpenAI's SSE rows, then each other framing's rows (named with its prefix in
    STREAM_TABLES: Bedrock InvokeModel's event stream, Ollama's NDJSON) where there are any,
    each against its own streaming mitmdump."""
    sse = [r for r in rows if not r.name.startswith(STREAM_TABLES)]
    by_name = {r.name: r for r in sse}
    base = by_name["streaming mitmdump"].median_ttfc
    addon = by_name["mitmdump + toolnames"]
    ratio = addon.median_ttfc / base
    plain_ratio = addon.median_ttfc / by_name["plain mitmdump"].median_ttfc
    targets = [
        Target(
            "(c) first chunk vs streaming mitmdump",
            f"<= {TARGET_TTFC}",
            f"{ratio:.3f}",
            verdict(ratio <= TARGET_TTFC and all(r.identical for r in sse)),
        ),
        Target(
            "(c) first chunk vs plain mitmdump",
            f"<= {TARGET_TTFC}",
            f"{plain_ratio:.3f}",
            verdict(plain_ratio <= TARGET_TTFC),
        ),
    ]
    text = _stream_table(sse, base)
    for prefix in STREAM_TABLES:
        framed = [r for r in rows if r.name.startswith(prefix)]
        if not framed:
            continue
        by_name = {r.name.removeprefix(prefix): r for r in framed}
        base = by_name["streaming mitmdump"].median_ttfc
        ratio = by_name["mitmdump + toolnames"].median_ttfc / base
        targets.append(
            Target(
                f"(c) {prefix}first chunk vs streaming mitmdump",
                f"<= {TARGET_TTFC}",
                f"{ratio:.3f}",
                verdict(ratio <= TARGET_TTFC and all(r.identical for r in framed)),
            )
        )
        text += "\n\n" + _stream_table(framed, base)
    return Part(text, targets)


def report_mcp(rows: list) -> Part:
    """(e): an MCP tools/list page through the MCP hooks, observe and fix, against json.loads."""
    body = [
        [
            f"tools/list, 1,000 tools, {row.answer}",
            f"{row.size:,} B",
            _ms(row.best("json.loads")),
            f"{_ms(row.best('observe'))} ({row.ratio('observe'):.2f}x)",
            f"{_ms(row.best('fix'))} ({row.ratio('fix'):.2f}x)",
        ]
        for row in rows
    ]
    header = ["answer", "size", "json.loads", "observe: whole flow", "fix: 200 names aliased"]
    return Part(table(header, body), [])


def _floor(row: RenamingRow, target: float) -> str:
    """The most any renamer could reach, measured in the same rounds, as a fix-mode target
    line shows it beside its figure; and when that lies under the target, that it does: an
    addon that parses the request and the answer with json.loads, and does nothing else,
    misses the target on this run's machine (only a faster reader can meet it)."""
    if not row.measured(JSON_ONLY):
        return ""
    floor = row.ratio(JSON_ONLY)
    under = f", under the target {target}: json.loads alone falls short of it here"
    return f"; the floor, json.loads only, {floor:.3f}{under if floor < target else ''}"


def report_renaming(rows: list[RenamingRow]) -> Part:
    """(b) for fix mode: the addon renaming against the naive renaming script."""
    targets: list[Target] = []
    json_reader = FIX_JSON_READER if rows and rows[0].measured(FIX_JSON_READER) else None
    for row in rows:
        if row.case.tools < FAST_FROM_TOOLS:
            continue  # issue 25's targets start at 10 tools
        # The json reader must match the naive script; msgspec must beat it.
        plain = json_reader or FIX_MODE
        targets.append(
            Target(
                f"(b) fix mode, {row.case.label}: {'json reader' if json_reader else FIX_MODE}",
                f">= {TARGET_RENAMING_RPS} of the naive renaming mitmdump",
                f"{row.ratio(plain):.3f} ({_paired(row, plain, NAIVE_RENAMING)}"
                f"{_floor(row, TARGET_RENAMING_RPS)})",
                verdict(row.ratio(plain) >= TARGET_RENAMING_RPS and not row.problems),
            )
        )
        if READERS[0].name == "msgspec":
            targets.append(
                Target(
                    f"(b) fix mode, {row.case.label}: msgspec reader",
                    f">= {TARGET_RENAMING_RPS_FAST} of the naive renaming mitmdump",
                    f"{row.ratio(FIX_MODE):.3f} ({_paired(row, FIX_MODE, NAIVE_RENAMING)}"
                    f"{_floor(row, TARGET_RENAMING_RPS_FAST)})",
                    verdict(row.ratio(FIX_MODE) >= TARGET_RENAMING_RPS_FAST and not row.problems),
                )
            )
    variants = list(RENAMING_VARIANTS)
    ratios = [(v, NAIVE_RENAMING) for v in variants[1:]]
    return Part(_rate_tables(rows, variants, ratios), targets)
