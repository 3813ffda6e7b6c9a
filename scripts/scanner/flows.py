"""scripts/scan's reader for mitmproxy flow files."""

from __future__ import annotations

import io
import mmap
from collections.abc import Iterator
from typing import BinaryIO

from mitmproxy import http
from mitmproxy import io as mitm_io

from scanner.recorded import MCP_HEADERS
from scanner.recorded import ReadFailure
from scanner.recorded import RecordedExchange
from scanner.recorded import RecordProblem
from scanner.recorded import shorten
from toolnames_core import FlowRecord
from toolnames_mitm import next_record

__all__ = [
    "FlowFileReader",
    "flow_exchange",
]


class _FlowFile:
    """The file object FlowReader reads, refusing reads past the end of the file.

    A tnetstring announces its length first: a cut file announces more than it holds, and a
    corrupt one may announce gigabytes. Either is reported without reading the rest.
    """

    def __init__(self, fo: BinaryIO, size: int | None) -> None:
        self.fo = fo
        self.size = size
        self.declared: tuple[int, int] | None = None

    def read(self, n: int = -1) -> bytes:
        if self.size is not None and n > 1:
            remaining = self.size - self.fo.tell()
            if n > remaining:
                self.declared = (n, remaining)
                raise ValueError(f"a record declares {n} bytes but only {remaining} remain")
        return self.fo.read(n)

    def restart(self, pos: int) -> None:
        """Read on from ``pos``, past a damaged record."""
        self.fo.seek(pos)
        self.declared = None

    def peek(self, n: int) -> bytes:
        return self.fo.peek(n)

    def tell(self) -> int:
        return self.fo.tell()

    def seek(self, pos: int) -> int:
        return self.fo.seek(pos)


class FlowFileReader:
    title = "mitmproxy flow file"
    unit = "flows"
    format = "mitmproxy"

    def __init__(self, fo: BinaryIO, size: int | None) -> None:
        self.file = _FlowFile(fo, size)
        self.count = 0

    def records(self) -> Iterator[RecordedExchange | RecordProblem | None]:
        start = self.file.tell()  # where the record being read begins
        stream = mitm_io.FlowReader(self.file).stream()
        while True:
            try:
                flow = next(stream)
            except StopIteration:
                return
            except Exception as e:  # noqa: BLE001
                # FlowReadException, and what FlowReader lets through for some corrupt records
                # (a KeyError from a flow state missing a field, EOFError from a cut .gz).
                resumes = self._resumes(start)
                if resumes is None:
                    raise self._failure(e) from e
                # A record cut short with flows appended after it (a kill or a full disk,
                # then another run saving to the same file): the flows after it are read.
                index = self.count
                self.count += 1
                yield RecordProblem(
                    index,
                    f"bytes {start} to {resumes} are not a whole flow record (one cut short, "
                    f"by a kill or a full disk, with flows written after it); read on from "
                    f"byte {resumes}, where whole flows start again",
                )
                self.file.restart(resumes)
                start = resumes
                stream = mitm_io.FlowReader(self.file).stream()
                continue
            index = self.count
            self.count += 1
            yield flow_exchange(flow, index) if isinstance(flow, http.HTTPFlow) else None
            start = self.file.tell()

    def _resumes(self, start: int) -> int | None:
        """Where whole flows start again after the damaged record at ``start``; None when
        none do, or the file cannot be searched (compressed)."""
        if self.file.size is None:
            return None
        try:
            fd = self.file.fo.fileno()
            with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
                return next_record(data, start + 1, min(len(data), self.file.size))
        except (OSError, ValueError, io.UnsupportedOperation):
            return None  # not a file on disk (a pipe, a BytesIO)

    def _failure(self, e: Exception) -> ReadFailure:
        cause = e.__cause__ or e
        reason = shorten(
            f"{cause}" if isinstance(cause, ValueError) else f"{type(cause).__name__}: {cause}"
        )
        ordinal = self.count + 1
        if self.file.declared is not None:
            declared, remaining = self.file.declared
            return ReadFailure(
                f"the file ends inside flow {ordinal} (it declares {declared} bytes, {remaining} remain)",
                truncated=True,
            )
        at_end = self.file.size is not None and self.file.tell() >= self.file.size
        if at_end or isinstance(cause, EOFError):
            return ReadFailure(f"the file ends inside flow {ordinal} ({reason})", truncated=True)
        if self.count == 0:
            return ReadFailure(reason)
        return ReadFailure(f"flow {ordinal} (before byte {self.file.tell()}): {reason}")


def flow_exchange(flow: http.HTTPFlow, index: int) -> RecordedExchange:
    request = flow.request
    ex = RecordedExchange(
        index, request.method, request.pretty_host, request.path, flow_id=flow.id, port=request.port
    )
    if flow.websocket is not None:
        # A live API's session (OpenAI Realtime, Gemini Live): its messages are the exchange.
        ex.messages = [
            (i, m.from_client, m.content)
            for i, m in enumerate(flow.websocket.messages)
            if not m.injected
        ]
        ex.recorded = FlowRecord.from_metadata(flow.metadata.get("toolnames"))
        return ex
    if request.method.upper() != "POST":
        return ex  # every LLM API call toolnames knows is a POST: leave the rest undecoded
    ex.mcp_headers = {
        name: request.headers[name] for name in MCP_HEADERS if name in request.headers
    }
    if request.raw_content is not None:
        try:
            ex.request_content = request.get_content(strict=True) or b""
        except ValueError as e:
            ex.request_problem = f"its content-encoding could not be decoded ({e})"
    ex.recorded = FlowRecord.from_metadata(flow.metadata.get("toolnames"))
    response = flow.response
    if response is not None:
        ex.status = response.status_code
        ex.content_type = response.headers.get("content-type", "")
        if response.raw_content is not None:
            ex.response_content = response.raw_content
            try:
                ex.response_content = response.get_content(strict=True) or b""
            except ValueError as e:
                ex.response_problem = f"its content-encoding could not be decoded ({e})"
    return ex
