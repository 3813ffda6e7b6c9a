"""scripts/scan's scan: which reader reads each file, checking every exchange, the verdict."""

from __future__ import annotations

import codecs
import gzip
import io
import os
import re
import sys
import zlib
from collections import Counter
from dataclasses import dataclass
from dataclasses import replace
from typing import BinaryIO

from scanner.cassettes import CassetteReader
from scanner.flows import FlowFileReader
from scanner.jsonfiles import JsonReader
from scanner.output import Output
from scanner.output import Progress
from scanner.output import Row
from scanner.output import sanitize
from scanner.recorded import PROG
from scanner.recorded import SNIFF_BYTES
from scanner.recorded import ReadFailure
from scanner.recorded import RecordedExchange
from scanner.recorded import RecordProblem
from scanner.yamlevents import slow_parser_note
from toolnames_core import READERS
from toolnames_core import SEVERITY_RANK
from toolnames_core import Exchange
from toolnames_core import FlowRecord
from toolnames_core import McpExchange
from toolnames_core import McpState
from toolnames_core import Reader
from toolnames_core import Session
from toolnames_core import inspect_exchange
from toolnames_core import inspect_mcp
from toolnames_core import inspect_session
from toolnames_core import mcp_server
from toolnames_core import offered_keys
from toolnames_core import unchecked_text

__all__ = [
    "CASSETTE_EXTENSIONS",
    "EXIT_CLEAN",
    "EXIT_ERRORS",
    "EXIT_INCOMPLETE",
    "FLOW_EXTENSIONS",
    "Input",
    "JSON_EXTENSIONS",
    "Scanner",
    "TRAFFIC_EXTENSIONS",
    "by_extension",
    "sniff",
]

# Extensions that only ever hold traffic: inside a folder, such a file is read even when its
# content is not recognised (and then reported as unreadable); other files are skipped.
FLOW_EXTENSIONS = (".mitm", ".flow", ".flows", ".dump")
TRAFFIC_EXTENSIONS = (*FLOW_EXTENSIONS, ".har", ".zhar")
CASSETTE_EXTENSIONS = (".yaml", ".yml")
JSON_EXTENSIONS = (".har", ".json")


EXIT_CLEAN = 0
EXIT_ERRORS = 1
EXIT_INCOMPLETE = 2


# ---------------------------------------------------------------------------------------------
# Compressed inputs


class _ZlibRaw(io.RawIOBase):
    """Streams zlib data (mitmproxy's .zhar) without holding the file."""

    def __init__(self, fo: BinaryIO) -> None:
        self.fo = fo
        self.d = zlib.decompressobj()
        self.tail = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while not self.d.eof:
            data = self.tail or self.fo.read(SNIFF_BYTES)
            if not data:
                raise EOFError("the zlib-compressed data ends early")
            out = self.d.decompress(data, len(b))
            self.tail = self.d.unconsumed_tail
            if out:
                b[: len(out)] = out
                return len(out)
        return 0


def _last_byte(fo: BinaryIO) -> bytes:
    return os.pread(fo.fileno(), 1, max(os.fstat(fo.fileno()).st_size - 1, 0))


def _is_zlib(head: bytes) -> bool:
    return len(head) >= 2 and head[0] == 0x78 and (head[0] * 256 + head[1]) % 31 == 0


# ---------------------------------------------------------------------------------------------
# Choosing a reader


_TNETSTRING_DICT = re.compile(rb"\d{1,12}:\d{1,12}:")
_CASSETTE_YAML = re.compile(rb"(?m)^(?:http_)?interactions\s*:|^-\s+request\s*:")
_JSON_KEYS = re.compile(rb'"(?:log|interactions|http_interactions)"\s*:')


def sniff(head: bytes) -> str | None:
    """The kind of traffic ``head`` (the first bytes of a file) starts, or None."""
    head = head.removeprefix(codecs.BOM_UTF8)
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if _TNETSTRING_DICT.match(head):
        return "flows"
    stripped = head.lstrip()
    if stripped.startswith(b"{") and _JSON_KEYS.search(head):
        return "json"
    if _CASSETTE_YAML.search(head):
        return "yaml"
    return None


def by_extension(name: str) -> str | None:
    name = name.lower()
    if name.endswith(".gz"):
        return "gzip"
    if name.endswith(".zhar"):
        return "zlib"
    if name.endswith(FLOW_EXTENSIONS):
        return "flows"
    if name.endswith(JSON_EXTENSIONS):
        return "json"
    if name.endswith(CASSETTE_EXTENSIONS):
        return "yaml"
    return None


# ---------------------------------------------------------------------------------------------
# The scan


# Hosts and paths said to carry unchecked tools, remembered (as the addon's MAX_UNCLAIMED_SAID).
MAX_UNCHECKED_SAID = 4096


@dataclass(slots=True)
class Input:
    path: str
    explicit: bool
    size: int


class Scanner:
    def __init__(
        self, overrides: tuple, output: Output, progress: Progress, reader: Reader = READERS[0]
    ) -> None:
        self.overrides = overrides
        # How bodies are decoded, as the live addon decodes them (toolnames_core/readers.py).
        self.reader = reader
        self.output = output
        self.progress = progress
        self.files = 0
        self.skipped = 0
        self.unreadable = 0
        self.records = 0
        self.checked = 0
        # Of those, MCP exchanges (said apart in the summary: they are no LLM API calls).
        self.checked_mcp = 0
        self.severities: Counter[str] = Counter()
        self.bad_records = 0
        self.incomplete = False
        self.done_bytes = 0
        self.yaml_noted = False
        # None: the fastest YAML parser there is; scripts/bench sets one to compare them.
        self.yaml_parser: str | None = None
        # Each MCP session's listed names, from one recorded exchange to the next, and the
        # rule listed names are held to (the addon's toolnames_mcp_rule default).
        self.mcp = McpState()
        self.mcp_rule = "openai"
        # Requests that carried tools to a path no format is at, and the hosts and paths
        # already said (once each, as the live addon says them; bounded as it is).
        self.unchecked = 0
        self.unchecked_said: dict[tuple[str, str], None] = {}

    def note(self, message: str) -> None:
        self.progress.clear()
        sys.stderr.write(f"{PROG}: {sanitize(message)}\n")
        sys.stderr.flush()

    def run(self, inputs: list[Input]) -> None:
        for item in inputs:
            self.scan_file(item)
            self.done_bytes += item.size
        self.progress.clear()
        self.output.close()

    def scan_file(self, item: Input) -> None:
        label = item.path
        try:
            with open(item.path, "rb", buffering=SNIFF_BYTES) as base:
                reader = self._reader(item, base)
                if reader is None:
                    self.skipped += 1
                    return
                self.files += 1
                self._read(item, base, reader)
        except ReadFailure as e:
            self.files += 1
            self._failed(label, e.reason)
        except OSError as e:
            self.files += 1
            self._failed(label, f"cannot read it: {e.strerror or e}")

    def _reader(self, item: Input, base: BinaryIO):
        """The reader for this file; None to skip a folder's non-traffic file."""
        fo: BinaryIO = base
        name = os.path.basename(item.path)
        head = base.peek(SNIFF_BYTES)[:SNIFF_BYTES]
        kind = sniff(head) or by_extension(name)
        size: int | None = item.size
        if kind == "zlib" and _is_zlib(head):
            # mitmproxy's `save.har file.zhar` writes zlib-compressed JSON.
            fo = io.BufferedReader(_ZlibRaw(base), SNIFF_BYTES)
            kind, size = "json", None
            head = b"{"
        elif kind == "gzip":
            # GzipFile itself, not a BufferedReader over it: its peek decompresses one chunk
            # only, so a cut .gz is read up to the cut.
            fo = gzip.GzipFile(fileobj=base, mode="rb")
            name = name[:-3] if name.lower().endswith(".gz") else name
            try:
                head = fo.peek(SNIFF_BYTES)[:SNIFF_BYTES]
            except (OSError, EOFError, zlib.error) as e:
                if not item.explicit:
                    return None
                raise ReadFailure(f"not readable gzip data ({e})") from e
            kind, size = sniff(head) or by_extension(name), None
        elif kind == "zlib":
            kind = None
        traffic_name = name.lower().endswith(TRAFFIC_EXTENSIONS)
        if not item.explicit and sniff(head) is None and not traffic_name:
            return None  # a folder's README, config or source file
        if kind is None:
            if not head:
                raise ReadFailure("an empty file, not a flow file, HAR file or cassette")
            raise ReadFailure(
                f"not a mitmproxy flow file, HAR file or cassette (it starts with {head[:16]!r})"
            )
        if kind == "flows":
            return FlowFileReader(fo, size)
        if kind == "json":
            return JsonReader(fo)
        if not self.yaml_noted:
            # Once per scan, before the first cassette: a suite's cassettes can take minutes.
            self.yaml_noted = True
            if note := slow_parser_note():
                self.note(note)
        return CassetteReader(fo, _last_byte(base) if fo is base else None, self.yaml_parser)

    def _read(self, item: Input, base: BinaryIO, reader) -> None:
        label = item.path
        records = reader.records()
        while True:
            try:
                record = next(records)
            except StopIteration:
                break
            except ReadFailure as e:
                self._failed(label, self._describe(reader, e))
                return
            except (EOFError, zlib.error, gzip.BadGzipFile) as e:
                failure = ReadFailure(
                    f"the compressed data is cut or corrupt ({e})", truncated=True
                )
                self._failed(label, self._describe(reader, failure))
                return
            self.records += 1 if record is not None else 0
            if isinstance(record, RecordProblem):
                self.incomplete = True
                self.bad_records += 1
                self.note(f"{label}: {reader.unit}[{record.index}] skipped: {record.reason}")
            elif isinstance(record, RecordedExchange):
                self._check(label, reader.format, record)
            self.output.tick()
            self.progress.update(self.done_bytes + base.tell(), label)

    def _describe(self, reader, e: ReadFailure) -> str:
        read = _count(reader.count, reader.unit)
        if e.truncated:
            return f"truncated after {read}: {e.reason}"
        if reader.count == 0:
            return f"not a readable {reader.title}: {e.reason}"
        return f"unreadable after {read}: {e.reason}"

    def _failed(self, label: str, message: str) -> None:
        self.incomplete = True
        self.unreadable += 1
        self.note(f"{label}: {message}")

    def _check(self, label: str, fmt: str, ex: RecordedExchange) -> None:
        if ex.messages is not None:
            self._check_session(label, fmt, ex)
            return
        if ex.method.upper() != "POST":
            return
        if ex.record_knows_more:
            # What the app sent, or what a stream answered, is only in the record the live
            # addon made of the flow (response findings included).
            self._report(label, fmt, ex, ex.recorded)
            return
        try:
            report = inspect_exchange(
                ex.method,
                ex.host,
                ex.path,
                ex.request_content,
                ex.status,
                ex.content_type,
                ex.response_content,
                self.overrides,
                request_problem=ex.request_problem,
                reader=self.reader,
                response_problem=ex.response_problem,
                port=ex.port,
            )
        except Exception as e:  # noqa: BLE001 - a bug in a check must not end the scan
            self.incomplete = True
            self.note(
                f"{label}: flow {ex.index}: toolnames failed on this exchange: {type(e).__name__}: {e}"
            )
            return
        if report is None:
            report = self._mcp(label, ex)
        if report is not None:
            self._report(label, fmt, ex, report)
        elif ex.request_content is not None and ex.request_problem is None:
            self._unclaimed(label, ex)

    def _unclaimed(self, label: str, ex: RecordedExchange) -> None:
        """Never silent: a recorded request that carries tools to a path no format is at
        was not checked, and that is said once per host and path, as the live addon says it."""
        keys = offered_keys(ex.request_content, self.reader)
        if not keys:
            return
        self.unchecked += 1
        where = (ex.host, ex.path.split("?", 1)[0])
        if where in self.unchecked_said:
            return
        if len(self.unchecked_said) >= MAX_UNCHECKED_SAID:
            del self.unchecked_said[next(iter(self.unchecked_said))]
        self.unchecked_said[where] = None
        text = unchecked_text(ex.method, ex.path, keys)
        self.note(f"{label}: flow {ex.index}: {ex.endpoint}: {text}")

    def _mcp(self, label: str, ex: RecordedExchange) -> McpExchange | None:
        """An MCP request and its answer, judged against the listings recorded before it."""
        headers = ex.mcp_headers
        try:
            exchange = inspect_mcp(
                self.mcp,
                mcp_server(ex.host, ex.path),
                ex.request_content,
                ex.status,
                ex.content_type,
                ex.response_content,
                rule=self.mcp_rule,
                session_id=headers.get("mcp-session-id", ""),
                method_header=headers.get("mcp-method", ""),
                name_header=headers.get("mcp-name", ""),
            )
        except Exception as e:  # noqa: BLE001 - a bug in a check must not end the scan
            self.incomplete = True
            self.note(
                f"{label}: flow {ex.index}: toolnames failed on this MCP exchange: {type(e).__name__}: {e}"
            )
            return None
        return exchange

    def _check_session(self, label: str, fmt: str, ex: RecordedExchange) -> None:
        """A WebSocket session, replayed message by message as the live addon read it."""
        if ex.recorded is not None and ex.recorded.action == "fixed":
            # Its messages hold the names as sent and as given back: the record holds the app's.
            self._report(label, fmt, ex, ex.recorded)
            return
        try:
            session = inspect_session(
                ex.host, ex.path, ex.messages, self.overrides, reader=self.reader
            )
        except Exception as e:  # noqa: BLE001 - a bug in a check must not end the scan
            self.incomplete = True
            self.note(
                f"{label}: flow {ex.index}: toolnames failed on this session: {type(e).__name__}: {e}"
            )
            return
        if session is not None:
            self._report(label, fmt, ex, session)

    def _report(
        self,
        label: str,
        fmt: str,
        ex: RecordedExchange,
        report: Exchange | FlowRecord | Session | McpExchange,
    ) -> None:
        self.checked += 1
        # An exchange holds its format and rule as records; the others keep their ids.
        if isinstance(report, Exchange):
            api, rule = report.format.api, report.rule.id
        else:
            api, rule = report.api, report.rule
        if api == McpExchange.api:  # a record of a fixed MCP flow too
            self.checked_mcp += 1
        for finding in report.findings:
            if finding.message_index is not None:
                # Which message of the session: the path is inside it.
                where = f"messages[{finding.message_index}]"
                finding = replace(
                    finding, path=f"{where}.{finding.path}" if finding.path else where
                )
            self.severities[finding.severity] += 1
            self.output.row(Row(label, fmt, ex, api, rule, finding))

    def exit_code(self) -> int:
        if self.incomplete:
            return EXIT_INCOMPLETE
        return EXIT_ERRORS if self.severities["error"] else EXIT_CLEAN

    def summary(self) -> str:
        files = _count(self.files, "file")
        notes = []
        if self.unreadable:
            notes.append(f"{self.unreadable} unreadable")
        if self.bad_records:
            notes.append(f"{_count(self.bad_records, 'unusable record')} skipped")
        if self.skipped:
            notes.append(f"{_count(self.skipped, 'other file')} skipped")
        if notes:
            files += f" ({', '.join(notes)})"
        ranked = sorted(SEVERITY_RANK, key=SEVERITY_RANK.__getitem__, reverse=True)
        found = ", ".join(_count(self.severities[s], s, "" if s == "info" else "s") for s in ranked)
        exchanges = _count(self.records, "recorded exchange")
        checked = _count(self.checked - self.checked_mcp, "LLM API call")
        if self.checked_mcp:
            checked += f" and {_count(self.checked_mcp, 'MCP exchange')}"
        unchecked = ""
        if self.unchecked:
            unchecked = (
                f"; {_count(self.unchecked, 'request')} with tools not checked (no format "
                "toolnames reads is at their path)"
            )
        return (
            f"{files}, {exchanges}, {checked} checked: {found}{unchecked}; bodies read with "
            f"{self.reader.name}"
        )


_SINGULAR = {"flows": "flow", "entries": "entry", "interactions": "interaction"}


def _count(n: int, noun: str, plural: str = "s") -> str:
    """``_count(1, "flows")`` -> "1 flow"; ``_count(2, "error")`` -> "2 errors"."""
    if noun in _SINGULAR:
        return f"{n} {noun if n != 1 else _SINGULAR[noun]}"
    return f"{n} {noun}{plural if n != 1 else ''}"
