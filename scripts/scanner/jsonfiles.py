"""scripts/scan's reader for JSON: HAR files and JSON cassettes, read one array item at a time."""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import re
from collections.abc import Iterator
from typing import BinaryIO

from scanner.cassettes import cassette_exchange
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

__all__ = [
    "JsonArrayStream",
    "JsonReader",
    "MAX_JSON_VALUE",
    "har_exchange",
]

# One HAR entry or JSON cassette interaction larger than this is refused, not buffered.
MAX_JSON_VALUE = 256 * 1024 * 1024


class JsonArrayStream:
    """Yields the items of the first array found at one of ``paths`` in a JSON document.

    Only one item (plus a read-ahead chunk) is held at a time: the structure around the
    array is walked by hand, and each item is decoded with ``raw_decode`` from a buffer that
    grows only while the item is incomplete.
    """

    CHUNK = 1024 * 1024
    _WS = re.compile(r"[ \t\n\r]*")

    def __init__(self, fo: BinaryIO, paths: dict[tuple[str, ...], str]) -> None:
        self.fo = fo
        self.paths = paths
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self.json = json.JSONDecoder()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.found: tuple[str, ...] | None = None
        self.where = "the document"

    def _more(self, at_least: int = 0) -> bool:
        if self.eof:
            return False
        if self.pos:
            self.buf = self.buf[self.pos :]
            self.pos = 0
        data = self.fo.read(max(self.CHUNK, at_least))
        if not data:
            self.eof = True
            self.buf += self.decoder.decode(b"", final=True)
            return False
        self.buf += self.decoder.decode(data)
        return True

    def peek(self) -> str:
        while True:
            self.pos = self._WS.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def _expect(self, chars: str, what: str) -> str:
        c = self.peek()
        if c == "":
            raise ReadFailure(f"the JSON ends inside {self.where}", truncated=True)
        if c not in chars:
            raise ReadFailure(f"invalid JSON in {self.where}: expected {what}, found {c!r}")
        self.pos += 1
        return c

    def value(self) -> object:
        if self.peek() == "":
            raise ReadFailure(f"the JSON ends inside {self.where}", truncated=True)
        while True:
            try:
                value, end = self.json.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                incomplete = e.pos >= len(self.buf) - 8 or e.msg.startswith("Unterminated string")
                if self.eof:
                    if incomplete:
                        raise ReadFailure(
                            f"the JSON ends inside {self.where}", truncated=True
                        ) from e
                    raise ReadFailure(f"invalid JSON in {self.where}: {e.msg}") from e
                if not incomplete:
                    raise ReadFailure(f"invalid JSON in {self.where}: {e.msg}") from e
                if len(self.buf) - self.pos > MAX_JSON_VALUE:
                    raise ReadFailure(
                        f"{self.where} is larger than {MAX_JSON_VALUE >> 20} MB"
                    ) from e
                self._more(len(self.buf) - self.pos)
                continue
            except RecursionError as e:
                raise ReadFailure(f"{self.where} is nested too deeply to read") from e
            if self._may_continue(value, end) and self._more():
                continue  # a number (or literal) may go on in the next chunk
            self.pos = end
            return value

    def _may_continue(self, value: object, end: int) -> bool:
        if end == len(self.buf):
            return True
        # "12" of "12.5": raw_decode stops at the ".", which no complete number is followed by.
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        return number and self.buf[end] in ".eE+-0123456789" and len(self.buf) - end < 64

    def items(self) -> Iterator[object]:
        c = self.peek()
        if c != "{":
            found = "nothing" if c == "" else f"{c!r}"
            raise ReadFailure(f"not a JSON object (starts with {found})")
        yield from self._object(())
        if self.found is None:
            names = [".".join(p) for p in self.paths]
            wanted = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
            raise ReadFailure(f"a JSON document with no {wanted} array")

    def _object(self, prefix: tuple[str, ...]) -> Iterator[object]:
        self.pos += 1  # the "{"
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            self.where = ".".join(prefix) or "the top-level object"
            key = self.value()
            if not isinstance(key, str):
                raise ReadFailure(f"invalid JSON in {self.where}: expected a key")
            self._expect(":", "':'")
            sub = (*prefix, key)
            self.where = ".".join(sub)
            if self.found is None and sub in self.paths:
                if self.peek() != "[":
                    raise ReadFailure(f"{self.where} is not an array")
                self.found = sub
                yield from self._array(sub)
            elif (
                self.found is None
                and self.peek() == "{"
                and any(p[: len(sub)] == sub for p in self.paths)
            ):
                yield from self._object(sub)
            else:
                self.value()
            self.where = ".".join(prefix) or "the top-level object"
            if self._expect(",}", "',' or '}'") == "}":
                return

    def _array(self, path: tuple[str, ...]) -> Iterator[object]:
        self.pos += 1  # the "["
        name = ".".join(path)
        if self.peek() == "]":
            self.pos += 1
            return
        n = 0
        while True:
            self.where = f"{name}[{n}]"
            yield self.value()
            n += 1
            self.where = name
            if self._expect(",]", "',' or ']'") == "]":
                return


_JSON_PATHS = {
    ("log", "entries"): "har",
    ("interactions",): "cassette",  # vcrpy's JSON serializer
    ("http_interactions",): "cassette",  # betamax, Ruby VCR
}


class JsonReader:
    title = "HAR file or JSON cassette"
    format = "har"

    def __init__(self, fo: BinaryIO) -> None:
        self.stream = JsonArrayStream(fo, _JSON_PATHS)
        self.count = 0

    @property
    def unit(self) -> str:
        return "interactions" if self.format == "cassette" else "entries"

    def records(self) -> Iterator[RecordedExchange | RecordProblem | None]:
        for item in self.stream.items():
            self.format = _JSON_PATHS[self.stream.found]
            self.title = "cassette" if self.format == "cassette" else "HAR file"
            index = self.count
            self.count += 1
            convert = har_exchange if self.format == "har" else cassette_exchange
            yield convert_record(convert, item, index)


def har_exchange(entry: object, index: int) -> RecordedExchange:
    request = entry.get("request") if isinstance(entry, dict) else None
    if not isinstance(request, dict):
        raise ValueError("the entry has no request object")
    method, url = request.get("method"), request.get("url")
    if not isinstance(method, str) or not isinstance(url, str):
        raise ValueError("the request has no method or url")
    host, path, port = split_url(url)
    ex = RecordedExchange(index, method, host, path, port=port)
    if method.upper() != "POST":
        return ex
    request_headers = header_map(request.get("headers"))
    ex.mcp_headers = mcp_headers(request_headers)
    post = request.get("postData")
    text = post.get("text") if isinstance(post, dict) else None
    if isinstance(text, str):
        try:
            raw = base64.b64decode(text) if post.get("encoding") == "base64" else text_bytes(text)
        except (binascii.Error, ValueError) as e:
            ex.request_problem = f"postData.text is not valid base64 ({e})"
        else:
            ce = request_headers.get("content-encoding")
            ex.request_content, ex.request_problem = decode_body(raw, ce)
    response = entry.get("response")
    if isinstance(response, dict):
        status = response.get("status")
        # Browsers record a request that got no answer with status 0.
        if isinstance(status, int) and not isinstance(status, bool) and status > 0:
            ex.status = status
        headers = header_map(response.get("headers"))
        content = response.get("content") if isinstance(response.get("content"), dict) else {}
        ex.content_type = headers.get("content-type") or str(content.get("mimeType") or "")
        text = content.get("text")
        if isinstance(text, str):
            try:
                raw = (
                    base64.b64decode(text)
                    if content.get("encoding") == "base64"
                    else text_bytes(text)
                )
            except (binascii.Error, ValueError):
                raw = None
            if raw is not None:
                ex.response_content, ex.response_problem = response_body(
                    raw, headers.get("content-encoding")
                )
    return ex
