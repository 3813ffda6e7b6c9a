"""
Run toolnames' checks over recorded traffic: mitmproxy flow files, HAR files and test cassettes.

    scripts/scan flows/                       # a table on a terminal, tab-separated otherwise
    scripts/scan --json recordings/ a.har     # one JSON object per finding per line
    scripts/scan --rule 'openrouter.ai=anthropic' tests/cassettes/

Every exchange goes through `toolnames_core.analysis.inspect_exchange`, the code the live
addon runs: this module only reads recordings and prints what that function finds.

Inputs are streamed, one flow / HAR entry / cassette interaction at a time, so memory stays
bounded by the largest single exchange, not by the file.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import codecs
import gzip
import io
import json
import os
import re
import shutil
import signal
import sys
import time
import traceback
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

# `scripts/scan` runs this file directly: make the addon's core importable, as the tests'
# pythonpath does.
_ADDON_DIR = str(Path(__file__).resolve().parent.parent / "addon")
if _ADDON_DIR not in sys.path:
    sys.path.insert(0, _ADDON_DIR)

from mitmproxy import http  # noqa: E402
from mitmproxy import io as mitm_io  # noqa: E402
from mitmproxy.net import encoding as mitm_encoding  # noqa: E402
from ruamel.yaml import YAML  # noqa: E402
from ruamel.yaml import events as yaml_events  # noqa: E402
from ruamel.yaml.error import YAMLError  # noqa: E402

from toolnames_core import analysis  # noqa: E402
from toolnames_core import endpoints  # noqa: E402
from toolnames_core.model import SEVERITY_RANK  # noqa: E402
from toolnames_core.model import Finding  # noqa: E402

PROG = "scan"
SNIFF_BYTES = 64 * 1024
# Extensions that only ever hold traffic: inside a folder, such a file is read even when its
# content is not recognised (and then reported as unreadable); other files are skipped.
FLOW_EXTENSIONS = (".mitm", ".flow", ".flows", ".dump")
TRAFFIC_EXTENSIONS = (*FLOW_EXTENSIONS, ".har", ".zhar")
CASSETTE_EXTENSIONS = (".yaml", ".yml")
JSON_EXTENSIONS = (".har", ".json")
# One HAR entry or JSON cassette interaction larger than this is refused, not buffered.
MAX_JSON_VALUE = 256 * 1024 * 1024

EXIT_CLEAN = 0
EXIT_ERRORS = 1
EXIT_INCOMPLETE = 2

HELP_EPILOG = """\
formats (chosen by content, then by file extension):
  mitmproxy flow files   what `mitmdump -w`, mitmweb and toolnames_save write (.mitm, .flows, any name)
  HAR files              from browsers, mitmweb and `mitmdump --set hardump=`; .zhar (zlib) too
  cassettes              vcrpy / pytest-recording YAML (`interactions:`), Ruby VCR and betamax
                         (`http_interactions`), JSON cassettes; bodies as text, !!binary or base64
  Any of them may be gzip-compressed. Folders are searched recursively (hidden entries are
  skipped); a file found in a folder that is not recognisable traffic is skipped, while a file
  named on the command line must be traffic.

output:
  On a terminal, a table (file, flow, endpoint, severity, code, JSON path, message) sized to
  the terminal. Otherwise the same columns tab-separated, with a header line. --json writes one
  JSON object per finding per line. "flow" is the 0-based position of the flow in the file,
  of the entry in log.entries, or of the interaction in the cassette. A summary line and any
  read errors go to stderr, with a progress bar when stderr is a terminal.

exit status:
  0  every input was read and no finding has severity error
  1  at least one error finding (the provider would reject the request, or the model called
     a tool that was never offered)
  2  the scan is incomplete: an input could not be read, or only partly (truncated or corrupt;
     the findings from the part that was read are still printed), a usage error, or the
     scanner itself failed.
  2 takes precedence over 1: when any input could not be read (fully), the status is 2 even
  if error findings were reported, so an incomplete scan never passes for a verdict on all
  of the traffic. The findings from what was read are printed either way.
"""


class ReadFailure(Exception):
    """An input stopped being readable; ``truncated`` when it ended in the middle of a record."""

    def __init__(self, reason: str, truncated: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.truncated = truncated


@dataclass(slots=True)
class Exchange:
    """One recorded request and its response, as plain data for inspect_exchange."""

    index: int
    method: str
    host: str
    path: str
    request_content: bytes | None = None
    request_problem: str | None = None
    status: int | None = None
    content_type: str = ""
    response_content: bytes | None = None
    flow_id: str | None = None

    @property
    def endpoint(self) -> str:
        # Never the query: Gemini's API key travels there (key=...).
        return f"{self.method.upper()} {self.host}{self.path.split('?', 1)[0]}"


@dataclass(slots=True)
class RecordProblem:
    """A record that is not a usable exchange (a HAR entry without a request, ...)."""

    index: int
    reason: str


# ---------------------------------------------------------------------------------------------
# Bodies


def decode_body(raw: bytes, content_encoding: str | None) -> tuple[bytes | None, str | None]:
    """The body without its content-encoding, as the addon's ``get_content(strict=True)`` reads it.

    HAR files and decoded cassettes keep the content-encoding header but store the decoded
    text: a body that does not decode but is already text is taken as it is.
    """
    if not content_encoding:
        return raw, None
    try:
        decoded = mitm_encoding.decode(raw, content_encoding)
        if isinstance(decoded, str):
            raise ValueError(f"Invalid Content-Encoding: {content_encoding}")
        return decoded, None
    except ValueError as e:
        if _is_text(raw):
            return raw, None
        return None, f"its content-encoding could not be decoded ({e})"


def _is_text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in raw


def response_body(raw: bytes, content_encoding: str | None) -> bytes:
    """Like the addon's ``get_content(strict=False)``: the raw body when it does not decode."""
    decoded, _ = decode_body(raw, content_encoding)
    return raw if decoded is None else decoded


def _text_bytes(text: str) -> bytes:
    # JSON strings may hold lone surrogates; keep them rather than fail.
    return text.encode("utf-8", "surrogatepass")


def _headers(value: object) -> dict[str, str]:
    """Lower-cased name -> first value, from HAR lists ({name, value} or [name, value]) or
    cassette mappings (name -> value or [values])."""
    out: dict[str, str] = {}
    items: list = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        for h in value:
            if isinstance(h, dict):
                items.append((h.get("name"), h.get("value")))
            elif isinstance(h, (list, tuple)) and len(h) >= 2:
                items.append((h[0], h[1]))
    for name, v in items:
        if isinstance(v, list):
            v = v[0] if v else None
        if isinstance(v, bytes):
            v = v.decode("latin-1")
        if isinstance(name, str) and isinstance(v, (str, int)):
            out.setdefault(name.lower(), str(v))
    return out


def _split_url(url: str) -> tuple[str, str]:
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return "", url
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return host, path


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
# mitmproxy flow files


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

    def records(self) -> Iterator[Exchange | RecordProblem | None]:
        stream = mitm_io.FlowReader(self.file).stream()
        while True:
            try:
                flow = next(stream)
            except StopIteration:
                return
            except Exception as e:  # noqa: BLE001
                # FlowReadException, and what FlowReader lets through for some corrupt records
                # (a KeyError from a flow state missing a field, EOFError from a cut .gz).
                raise self._failure(e) from e
            index = self.count
            self.count += 1
            yield flow_exchange(flow, index) if isinstance(flow, http.HTTPFlow) else None

    def _failure(self, e: Exception) -> ReadFailure:
        cause = e.__cause__ or e
        reason = _short(
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


def flow_exchange(flow: http.HTTPFlow, index: int) -> Exchange:
    request = flow.request
    ex = Exchange(index, request.method, request.pretty_host, request.path, flow_id=flow.id)
    if request.method.upper() != "POST":
        return ex  # every LLM API call toolnames knows is a POST: leave the rest undecoded
    if request.raw_content is not None:
        try:
            ex.request_content = request.get_content(strict=True) or b""
        except ValueError as e:
            ex.request_problem = f"its content-encoding could not be decoded ({e})"
    response = flow.response
    if response is not None:
        ex.status = response.status_code
        ex.content_type = response.headers.get("content-type", "")
        if response.raw_content is not None:
            ex.response_content = response.get_content(strict=False) or b""
    return ex


# ---------------------------------------------------------------------------------------------
# JSON: HAR files and JSON cassettes, read one array item at a time


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

    def records(self) -> Iterator[Exchange | RecordProblem | None]:
        for item in self.stream.items():
            self.format = _JSON_PATHS[self.stream.found]
            self.title = "cassette" if self.format == "cassette" else "HAR file"
            index = self.count
            self.count += 1
            convert = har_exchange if self.format == "har" else cassette_exchange
            yield _record(convert, item, index)


def _record(convert, item: object, index: int) -> Exchange | RecordProblem:
    try:
        return convert(item, index)
    except ValueError as e:
        return RecordProblem(index, str(e))


def har_exchange(entry: object, index: int) -> Exchange:
    request = entry.get("request") if isinstance(entry, dict) else None
    if not isinstance(request, dict):
        raise ValueError("the entry has no request object")
    method, url = request.get("method"), request.get("url")
    if not isinstance(method, str) or not isinstance(url, str):
        raise ValueError("the request has no method or url")
    ex = Exchange(index, method, *_split_url(url))
    if method.upper() != "POST":
        return ex
    post = request.get("postData")
    text = post.get("text") if isinstance(post, dict) else None
    if isinstance(text, str):
        try:
            raw = base64.b64decode(text) if post.get("encoding") == "base64" else _text_bytes(text)
        except (binascii.Error, ValueError) as e:
            ex.request_problem = f"postData.text is not valid base64 ({e})"
        else:
            ce = _headers(request.get("headers")).get("content-encoding")
            ex.request_content, ex.request_problem = decode_body(raw, ce)
    response = entry.get("response")
    if isinstance(response, dict):
        status = response.get("status")
        # Browsers record a request that got no answer with status 0.
        if isinstance(status, int) and not isinstance(status, bool) and status > 0:
            ex.status = status
        headers = _headers(response.get("headers"))
        content = response.get("content") if isinstance(response.get("content"), dict) else {}
        ex.content_type = headers.get("content-type") or str(content.get("mimeType") or "")
        text = content.get("text")
        if isinstance(text, str):
            try:
                raw = (
                    base64.b64decode(text)
                    if content.get("encoding") == "base64"
                    else _text_bytes(text)
                )
            except (binascii.Error, ValueError):
                raw = None
            if raw is not None:
                ex.response_content = response_body(raw, headers.get("content-encoding"))
    return ex


# ---------------------------------------------------------------------------------------------
# Cassettes


def _cassette_body(value: object) -> bytes | None:
    """A cassette body: text, !!binary bytes, {string: ...}, {base64_string: ...} (betamax),
    or {type: json, content: ...} (structured JSON bodies)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return _text_bytes(value)
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


def cassette_exchange(item: object, index: int) -> Exchange:
    request = item.get("request") if isinstance(item, dict) else None
    if not isinstance(request, dict):
        raise ValueError("the interaction has no request mapping")
    method, uri = request.get("method"), request.get("uri", request.get("url"))
    if not isinstance(method, str) or not isinstance(uri, str):
        raise ValueError("the request has no method or uri")
    ex = Exchange(index, method, *_split_url(uri))
    if method.upper() != "POST":
        return ex
    raw = _cassette_body(request.get("body"))
    if raw is not None:
        ce = _headers(request.get("headers")).get("content-encoding")
        ex.request_content, ex.request_problem = decode_body(raw, ce)
    response = item.get("response")
    if isinstance(response, dict):
        status = response.get("status")
        code = status.get("code") if isinstance(status, dict) else status
        try:
            ex.status = int(code) if code is not None and not isinstance(code, bool) else None
        except (TypeError, ValueError):
            ex.status = None
        headers = _headers(response.get("headers"))
        ex.content_type = headers.get("content-type", "")
        body = response.get("body", response.get("content"))
        raw = _cassette_body(body)
        if raw is not None:
            ex.response_content = response_body(raw, headers.get("content-encoding"))
    return ex


_YAML_INT = re.compile(r"[-+]?[0-9]+$")
_YAML_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")


def _yaml_scalar(event) -> object:
    tag = str(event.tag) if event.tag else ""
    value = event.value
    if tag.endswith(":binary"):
        try:
            return base64.b64decode(value)
        except (binascii.Error, ValueError):
            return value
    if tag and not tag.endswith((":int", ":null", ":bool", ":float")):
        return value  # !!str, !!python/unicode and any other tag: the text
    if event.style is not None and not tag:
        return value  # quoted or block text
    if value in ("", "~", "null", "Null", "NULL"):
        return None
    if value in ("true", "True", "TRUE"):
        return True
    if value in ("false", "False", "FALSE"):
        return False
    if _YAML_INT.match(value):
        return int(value)
    if _YAML_FLOAT.match(value):
        return float(value)
    return value


def _yaml_failure(e: YAMLError) -> ReadFailure:
    problem = getattr(e, "problem", None) or str(e)
    mark = getattr(e, "problem_mark", None)
    context = getattr(e, "context", None)
    text = (
        f"invalid YAML at line {mark.line + 1}: {problem}"
        if mark is not None
        else f"invalid YAML: {problem}"
    )
    if context:
        text += f" ({context})"
    truncated = "end of stream" in problem or "stream end" in problem
    return ReadFailure(_short(text), truncated=truncated)


class CassetteReader:
    """vcrpy / pytest-recording YAML (and Ruby VCR's), one interaction at a time.

    Built from ruamel.yaml's event stream rather than ``load``, so a large cassette is never
    held whole; ruamel's C parser is used when it is installed (much faster).
    """

    title = "cassette"
    unit = "interactions"
    format = "cassette"
    KEYS = ("interactions", "http_interactions")

    def __init__(self, fo: BinaryIO, last_byte: bytes | None = None) -> None:
        self.fo = fo
        self.last_byte = last_byte
        self.count = 0
        self.anchors: dict[str, object] = {}
        self._peeked = None
        self._events: Iterator | None = None

    def _next(self):
        if self._peeked is not None:
            event, self._peeked = self._peeked, None
            return event
        return self._pull()

    def _peek(self):
        if self._peeked is None:
            self._peeked = self._pull()
        return self._peeked

    def _pull(self):
        try:
            return next(self._events)
        except StopIteration:
            raise ReadFailure("the YAML ends early", truncated=True) from None

    def _build(self) -> object:
        event = self._next()
        if isinstance(event, yaml_events.AliasEvent):
            if event.anchor not in self.anchors:
                raise ReadFailure(f"undefined YAML alias {event.anchor!r}")
            return self.anchors[event.anchor]
        if isinstance(event, yaml_events.ScalarEvent):
            value: object = _yaml_scalar(event)
        elif isinstance(event, yaml_events.SequenceStartEvent):
            value = []
            while not isinstance(self._peek(), yaml_events.SequenceEndEvent):
                value.append(self._build())
            self._next()
        elif isinstance(event, yaml_events.MappingStartEvent):
            value = {}
            while not isinstance(self._peek(), yaml_events.MappingEndEvent):
                key = self._build()
                if not isinstance(key, (str, int, float, bool, bytes, type(None))):
                    key = repr(key)
                value[key] = self._build()
            self._next()
        else:
            raise ReadFailure(f"unexpected YAML event {type(event).__name__}")
        if getattr(event, "anchor", None):
            self.anchors[event.anchor] = value
        return value

    def _items(self) -> Iterator[object]:
        self._next()  # stream start
        if isinstance(self._peek(), yaml_events.StreamEndEvent):
            raise ReadFailure("an empty YAML file")
        self._next()  # document start
        found = False
        if isinstance(self._peek(), yaml_events.SequenceStartEvent):
            # vcrpy's first format: a bare list of {request, response}.
            found = True
            yield from self._sequence()
        elif isinstance(self._peek(), yaml_events.MappingStartEvent):
            self._next()
            while not isinstance(self._peek(), yaml_events.MappingEndEvent):
                key = self._build()
                if (
                    not found
                    and key in self.KEYS
                    and isinstance(self._peek(), yaml_events.SequenceStartEvent)
                ):
                    found = True
                    yield from self._sequence()
                else:
                    self._build()
        if not found:
            raise ReadFailure("YAML without an interactions list: not a cassette")
        for _ in self._events:  # the rest, so a broken end is still reported
            pass
        # A YAML file cut in the middle is often still valid YAML. vcrpy, pytest-recording and
        # Ruby VCR end every cassette with a newline; a cut file almost never does.
        if self.last_byte not in (None, b"", b"\n"):
            raise ReadFailure(
                "the file ends in the middle of a line (cassette writers end with a newline)",
                truncated=True,
            )

    def _sequence(self) -> Iterator[object]:
        self._next()
        while not isinstance(self._peek(), yaml_events.SequenceEndEvent):
            yield self._build()
        self._next()

    def records(self) -> Iterator[Exchange | RecordProblem | None]:
        self._events = iter(YAML(typ="safe").parse(self.fo))
        items = self._items()
        while True:
            try:
                item = next(items)
            except StopIteration:
                return
            except YAMLError as e:
                raise _yaml_failure(e) from e
            except RecursionError as e:
                raise ReadFailure("the YAML is nested too deeply to read") from e
            except UnicodeDecodeError as e:
                raise ReadFailure(f"not UTF-8 text ({e.reason})") from e
            index = self.count
            self.count += 1
            yield _record(cassette_exchange, item, index)


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
# Output


_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def sanitize(text: str) -> str:
    """Recorded names may hold control characters or bidi overrides: show them escaped,
    never let them reach the terminal."""
    return _UNSAFE.sub(lambda m: json.dumps(m.group())[1:-1], text)


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
    exchange: Exchange
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


# ---------------------------------------------------------------------------------------------
# The scan


@dataclass(slots=True)
class Input:
    path: str
    explicit: bool
    size: int


class Scanner:
    def __init__(self, overrides: tuple, output: Output, progress: Progress) -> None:
        self.overrides = overrides
        self.output = output
        self.progress = progress
        self.files = 0
        self.skipped = 0
        self.unreadable = 0
        self.records = 0
        self.checked = 0
        self.severities: Counter[str] = Counter()
        self.bad_records = 0
        self.incomplete = False
        self.done_bytes = 0

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
        return CassetteReader(fo, _last_byte(base) if fo is base else None)

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
            elif isinstance(record, Exchange):
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

    def _check(self, label: str, fmt: str, ex: Exchange) -> None:
        if ex.method.upper() != "POST":
            return
        try:
            report = analysis.inspect_exchange(
                ex.method,
                ex.host,
                ex.path,
                ex.request_content,
                ex.status,
                ex.content_type,
                ex.response_content,
                self.overrides,
                request_problem=ex.request_problem,
            )
        except Exception as e:  # noqa: BLE001 - a bug in a check must not end the scan
            self.incomplete = True
            self.note(
                f"{label}: flow {ex.index}: toolnames failed on this exchange: {type(e).__name__}: {e}"
            )
            return
        if report is None:
            return
        self.checked += 1
        for finding in report.findings:
            self.severities[finding.severity] += 1
            self.output.row(Row(label, fmt, ex, report.api, report.rule, finding))

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
        return f"{files}, {exchanges}, {_count(self.checked, 'LLM API call')} checked: {found}"


_SINGULAR = {"flows": "flow", "entries": "entry", "interactions": "interaction"}


def _count(n: int, noun: str, plural: str = "s") -> str:
    """``_count(1, "flows")`` -> "1 flow"; ``_count(2, "error")`` -> "2 errors"."""
    if noun in _SINGULAR:
        return f"{n} {noun if n != 1 else _SINGULAR[noun]}"
    return f"{n} {noun}{plural if n != 1 else ''}"


def collect_inputs(paths: list[str]) -> list[Input]:
    inputs: list[Input] = []
    seen: set[str] = set()

    def add(path: str, explicit: bool) -> None:
        real = os.path.realpath(path)
        if real in seen:
            return
        seen.add(real)
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0
        inputs.append(Input(path, explicit, size))

    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if not name.startswith(".") and os.path.isfile(full):
                        add(full, explicit=False)
        else:
            add(path, explicit=True)
    return inputs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run the toolnames checks over recorded LLM API traffic: mitmproxy flow files, "
        "HAR files and test cassettes (vcrpy / pytest-recording).",
        epilog=HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="files, or folders to search recursively"
    )
    parser.add_argument(
        "--json", action="store_true", help="write one JSON object per finding per line"
    )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="HOST_PATTERN=RULE",
        help="check requests to matching hosts against another provider's rule, as the addon's "
        "toolnames_rule option (e.g. 'openrouter.ai=anthropic', '*=portable'); repeatable. "
        f"Rules: {', '.join(endpoints.RULES)}.",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar, even on a terminal"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    missing = [p for p in args.paths if not os.path.exists(p)]
    if missing:
        parser.error(f"no such file or directory: {', '.join(missing)}")
    try:
        overrides = tuple(endpoints.parse_rule_override(spec) for spec in args.rule)
    except ValueError as e:
        parser.error(f"argument --rule: {e}")

    inputs = collect_inputs(args.paths)
    progress = Progress(
        sum(i.size for i in inputs),
        sys.stderr,
        enabled=sys.stderr.isatty() and not args.no_progress,
    )
    output: Output
    if args.json:
        output = JsonOutput(sys.stdout, progress.clear)
    elif sys.stdout.isatty():
        color = not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        width = shutil.get_terminal_size((120, 24)).columns
        output = TableOutput(sys.stdout, width, color, progress.clear)
    else:
        output = TsvOutput(sys.stdout, progress.clear)
    scanner = Scanner(overrides, output, progress)
    try:
        scanner.run(inputs)
    except Exception:  # noqa: BLE001 - exit 1 would read as "error findings"
        progress.clear()
        traceback.print_exc()
        sys.stderr.write(f"{PROG}: internal error: the scan did not finish\n")
        return EXIT_INCOMPLETE
    sys.stderr.write(f"{PROG}: {scanner.summary()}\n")
    return scanner.exit_code()


if __name__ == "__main__":
    # `scan ... | head` ends quietly, as other command-line tools do.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        sys.exit(130)
