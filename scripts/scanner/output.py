"""scripts/scan's output: findings as a table, tab-separated or JSON lines, and the progress bar."""

from __future__ import annotations

import json
import re
import shutil
import time
import unicodedata
from dataclasses import dataclass

from scanner.recorded import RecordedExchange
from toolnames_core import Finding
from toolnames_core import escape_text

__all__ = [
    "HEADER",
    "JsonOutput",
    "Output",
    "Progress",
    "Row",
    "TableOutput",
    "TsvOutput",
    "char_width",
    "fit",
    "human_size",
    "sanitize",
    "text_width",
]

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def sanitize(text: str) -> str:
    """Recorded names may hold control characters or bidi overrides: show them escaped, as
    every other place toolnames shows a name does, never let them reach the terminal."""
    return escape_text(text)


def char_width(c: str) -> int:
    if unicodedata.combining(c):
        return 0
    return 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1


def text_width(text: str) -> int:
    return sum(char_width(c) for c in text)


def fit(text: str, width: int, keep: str = "start") -> str:
    """``text`` cut to ``width`` terminal cells with an ellipsis; ``keep`` says which part stays."""
    if text_width(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    budget = width - 1

    def take(chars, budget: int) -> str:
        out, used = [], 0
        for c in chars:
            w = char_width(c)
            if used + w > budget:
                break
            out.append(c)
            used += w
        return "".join(out)

    if keep == "end":
        return "…" + take(reversed(text), budget)[::-1]
    if keep == "both":
        head = take(text, budget - budget // 2)
        return head + "…" + take(reversed(text), budget - text_width(head))[::-1]
    return take(text, budget) + "…"


@dataclass(slots=True)
class Row:
    file: str
    format: str
    exchange: RecordedExchange
    api: str
    rule: str
    finding: Finding

    def cells(self) -> list[str]:
        f = self.finding
        return [
            self.file,
            str(self.exchange.index),
            self.exchange.endpoint,
            f.severity,
            f.code,
            f.path,
            f.message,
        ]

    def to_dict(self) -> dict:
        f = self.finding
        d = {
            "file": self.file,
            "format": self.format,
            "flow": self.exchange.index,
            "endpoint": self.exchange.endpoint,
            "method": self.exchange.method.upper(),
            "host": self.exchange.host,
            "api": self.api,
            "rule": self.rule,
            "severity": f.severity,
            "code": f.code,
            "path": f.path,
            "message": f.message,
        }
        if self.exchange.flow_id:
            d["flow_id"] = self.exchange.flow_id
        return d


HEADER = ["file", "flow", "endpoint", "severity", "code", "path", "message"]


class Output:
    """Where findings go. ``before_write`` clears the progress bar when both share a terminal."""

    def __init__(self, out, before_write=None) -> None:
        self.out = out
        self.before_write = before_write or (lambda: None)

    def write(self, text: str) -> None:
        self.before_write()
        self.out.write(text)

    def tick(self) -> None:
        """Called while reading, between findings."""

    def close(self) -> None:
        self.out.flush()


class JsonOutput(Output):
    def row(self, row: Row) -> None:
        # json.dumps escapes C0 controls; C1 controls and bidi overrides are escaped too.
        text = json.dumps(row.to_dict(), ensure_ascii=False)
        self.write(_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


class TsvOutput(Output):
    def __init__(self, out, before_write=None) -> None:
        super().__init__(out, before_write)
        self.write("\t".join(HEADER) + "\n")

    def row(self, row: Row) -> None:
        self.write("\t".join(sanitize(c) for c in row.cells()) + "\n")


class TableOutput(Output):
    """An aligned table sized to the terminal. Column widths come from the first rows (up to
    BATCH of them, or what came within BATCH_SECONDS), then later rows stream with those
    widths, so a long scan shows findings as they come."""

    # (max width, minimum width, which part of a long value stays visible)
    COLUMNS = [
        (40, 12, "end"),
        (8, 4, "start"),
        (48, 16, "both"),
        (8, 8, "start"),
        (26, 26, "start"),
        (40, 16, "end"),
    ]
    # Below this much room the message goes on its own line under the other columns.
    MESSAGE_MIN = 50
    COLORS = {"error": "\x1b[31;1m", "warning": "\x1b[33m", "info": "\x1b[36m"}
    BATCH = 50
    BATCH_SECONDS = 1.0

    def __init__(self, out, width: int, color: bool, before_write=None) -> None:
        super().__init__(out, before_write)
        self.width = width
        self.color = color
        self.pending: list[list[str]] = []
        self.first_at = 0.0
        self.widths: list[int] | None = None
        self.wrap = False

    def row(self, row: Row) -> None:
        cells = [sanitize(c) for c in row.cells()]
        if self.widths is not None:
            self._write([cells])
            return
        if not self.pending:
            self.first_at = time.monotonic()
        self.pending.append(cells)
        if len(self.pending) >= self.BATCH:
            self._flush()

    def tick(self) -> None:
        if self.pending and time.monotonic() - self.first_at > self.BATCH_SECONDS:
            self._flush()

    def _flush(self) -> None:
        if self.widths is None and self.pending:
            self.widths = self._layout(self.pending)
            self.write(self._line(HEADER, header=True) + "\n")
            self._write(self.pending)
            self.pending = []

    def _layout(self, rows: list[list[str]]) -> list[int]:
        widths = []
        for i, (cap, _, _) in enumerate(self.COLUMNS):
            natural = max(text_width(r[i]) for r in [HEADER, *rows])
            widths.append(min(natural, cap))
        gaps = 2 * len(self.COLUMNS)
        room = self.width - sum(widths) - gaps
        if room >= self.MESSAGE_MIN:
            self.wrap = False
            return [*widths, room]
        # A narrower terminal: the message gets a line of its own, and the other columns
        # shrink (widest first) until they fit on theirs.
        self.wrap = True
        while sum(widths) + gaps - 2 > self.width:
            candidates = [i for i in (0, 2, 5) if widths[i] > self.COLUMNS[i][1]]
            if not candidates:
                break
            i = max(candidates, key=lambda i: widths[i])
            widths[i] -= 1
        return [*widths, self.width - 4]

    def _line(self, cells: list[str], header: bool = False) -> str:
        if self.wrap:
            first = self._columns(cells[:-1], header)
            if header:
                return first
            return first + "\n    " + fit(cells[-1], self.widths[-1])
        return self._columns(cells, header)

    def _columns(self, cells: list[str], header: bool) -> str:
        parts = []
        for i, cell in enumerate(cells):
            width = self.widths[i]
            keep = self.COLUMNS[i][2] if i < len(self.COLUMNS) else "start"
            text = fit(cell, width, keep)
            last = i == len(cells) - 1
            pad = "" if last else " " * (width - text_width(text))
            if self.color and header:
                text = f"\x1b[1m{text}\x1b[0m"
            elif self.color and i == 3:
                text = f"{self.COLORS.get(cell, '')}{text}\x1b[0m"
            parts.append(text + pad)
        return "  ".join(parts).rstrip()

    def _write(self, rows: list[list[str]]) -> None:
        self.write("".join(self._line(cells) + "\n" for cells in rows))
        self.out.flush()

    def close(self) -> None:
        self._flush()
        super().close()


def human_size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


class Progress:
    """A one-line progress bar on stderr: bytes read of all inputs, from file positions."""

    INTERVAL = 0.1

    def __init__(self, total: int, stream, enabled: bool) -> None:
        self.total = max(total, 1)
        self.stream = stream
        self.enabled = enabled
        self.shown = False
        self.last = 0.0

    def update(self, done: int, label: str, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < self.INTERVAL:
            return
        self.last = now
        width = shutil.get_terminal_size((80, 24)).columns
        fraction = min(done / self.total, 1.0)
        stats = f" {fraction * 100:3.0f}% {human_size(done)} / {human_size(self.total)} "
        bar_width = max(10, min(40, width // 3))
        filled = int(bar_width * fraction)
        bar = "[" + "=" * filled + " " * (bar_width - filled) + "]"
        room = width - len(bar) - len(stats) - 2
        name = fit(sanitize(label), room, "end") if room > 4 else ""
        self.stream.write(f"\r\x1b[K{bar}{stats}{name}")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False
            self.last = 0.0  # redraw at the next update
