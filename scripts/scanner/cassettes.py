"""scripts/scan's reader for YAML cassettes (vcrpy, pytest-recording, Ruby VCR, betamax).

cassette_exchange also serves JSON cassettes (jsonfiles.py).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from typing import BinaryIO

from scanner.recorded import ReadFailure
from scanner.recorded import RecordedExchange
from scanner.recorded import RecordProblem
from scanner.recorded import convert_record
from scanner.recorded import decode_body
from scanner.recorded import header_map
from scanner.recorded import mcp_headers
from scanner.recorded import response_body
from scanner.recorded import split_url
from scanner.recorded import text_bytes
from scanner.yamlevents import EventSource
from scanner.yamlevents import ValueBuilder
from scanner.yamlevents import open_events
from scanner.yamlevents import yaml_failure

__all__ = [
    "CassetteReader",
    "cassette_exchange",
]


def _cassette_body(value: object) -> bytes | None:
    """A cassette body: text, !!binary bytes, {string: ...}, {base64_string: ...} (betamax),
    or {type: json, content: ...} (structured JSON bodies)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return text_bytes(value)
    if isinstance(value, dict):
        if "string" in value:
            return _cassette_body(value["string"])
        if isinstance(value.get("base64_string"), str):
            try:
                return base64.b64decode(value["base64_string"])
            except (binascii.Error, ValueError):
                return None
        if "content" in value:
            content = value["content"]
            if isinstance(content, (dict, list)):
                return json.dumps(content).encode()
            return _cassette_body(content)
    return None


def cassette_exchange(item: object, index: int) -> RecordedExchange:
    request = item.get("request") if isinstance(item, dict) else None
    if not isinstance(request, dict):
        raise ValueError("the interaction has no request mapping")
    method, uri = request.get("method"), request.get("uri", request.get("url"))
    if not isinstance(method, str) or not isinstance(uri, str):
        raise ValueError("the request has no method or uri")
    host, path, port = split_url(uri)
    ex = RecordedExchange(index, method, host, path, port=port)
    if method.upper() != "POST":
        return ex
    request_headers = header_map(request.get("headers"))
    ex.mcp_headers = mcp_headers(request_headers)
    raw = _cassette_body(request.get("body"))
    if raw is not None:
        ce = request_headers.get("content-encoding")
        ex.request_content, ex.request_problem = decode_body(raw, ce)
    response = item.get("response")
    if isinstance(response, dict):
        status = response.get("status")
        code = status.get("code") if isinstance(status, dict) else status
        try:
            ex.status = int(code) if code is not None and not isinstance(code, bool) else None
        except (TypeError, ValueError):
            ex.status = None
        headers = header_map(response.get("headers"))
        ex.content_type = headers.get("content-type", "")
        body = response.get("body", response.get("content"))
        raw = _cassette_body(body)
        if raw is not None:
            ex.response_content, ex.response_problem = response_body(
                raw, headers.get("content-encoding")
            )
    return ex


class CassetteReader:
    """vcrpy / pytest-recording YAML (and Ruby VCR's), one interaction at a time.

    Built on the parser's event stream rather than a whole-document load, so a large
    cassette is never held whole (scanner.yamlevents picks the parser: libyaml when it can).
    """

    title = "cassette"
    unit = "interactions"
    format = "cassette"
    KEYS = ("interactions", "http_interactions")

    def __init__(
        self, fo: BinaryIO, last_byte: bytes | None = None, parser: str | None = None
    ) -> None:
        self.fo = fo
        self.last_byte = last_byte
        self.parser = parser
        self.count = 0

    def _items(self, source: EventSource) -> Iterator[object]:
        builder = ValueBuilder(source)
        kinds, pull = source.kinds, builder.pull
        pull()  # stream start
        event = pull()
        if type(event) is kinds.stream_end:
            raise ReadFailure("an empty YAML file")
        event = pull()  # the document's first node
        found = False
        if type(event) is kinds.sequence_start:
            # vcrpy's first format: a bare list of {request, response}.
            found = True
            yield from self._sequence(builder, kinds)
        elif type(event) is kinds.mapping_start:
            while type(event := pull()) is not kinds.mapping_end:
                key = builder.value(event)
                event = pull()
                if not found and key in self.KEYS and type(event) is kinds.sequence_start:
                    found = True
                    yield from self._sequence(builder, kinds)
                else:
                    builder.value(event)
        if not found:
            raise ReadFailure("YAML without an interactions list: not a cassette")
        while source.get() is not None:  # the rest, so a broken end is still reported
            pass
        # A YAML file cut in the middle is often still valid YAML. vcrpy, pytest-recording and
        # Ruby VCR end every cassette with a newline; a cut file almost never does.
        if self.last_byte not in (None, b"", b"\n"):
            raise ReadFailure(
                "the file ends in the middle of a line (cassette writers end with a newline)",
                truncated=True,
            )

    @staticmethod
    def _sequence(builder: ValueBuilder, kinds) -> Iterator[object]:
        pull, end = builder.pull, kinds.sequence_end
        while type(event := pull()) is not end:
            yield builder.value(event)

    def records(self) -> Iterator[RecordedExchange | RecordProblem | None]:
        source = open_events(self.fo, self.parser)
        items = self._items(source)
        while True:
            try:
                item = next(items)
            except StopIteration:
                return
            except source.errors as e:
                raise yaml_failure(e, source.at_end(e)) from e
            except RecursionError as e:
                raise ReadFailure("the YAML is nested too deeply to read") from e
            except UnicodeDecodeError as e:
                raise ReadFailure(f"not UTF-8 text ({e.reason})") from e
            index = self.count
            self.count += 1
            yield convert_record(cassette_exchange, item, index)
