"""scripts/scan's reader for YAML cassettes (vcrpy, pytest-recording, Ruby VCR, betamax).

cassette_exchange also serves JSON cassettes (jsonfiles.py).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator
from typing import BinaryIO

from ruamel.yaml import YAML
from ruamel.yaml import events as yaml_events
from ruamel.yaml.error import YAMLError

from scanner.recorded import ReadFailure
from scanner.recorded import RecordedExchange
from scanner.recorded import RecordProblem
from scanner.recorded import convert_record
from scanner.recorded import decode_body
from scanner.recorded import header_map
from scanner.recorded import response_body
from scanner.recorded import shorten
from scanner.recorded import split_url
from scanner.recorded import text_bytes

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
    ex = RecordedExchange(index, method, *split_url(uri))
    if method.upper() != "POST":
        return ex
    raw = _cassette_body(request.get("body"))
    if raw is not None:
        ce = header_map(request.get("headers")).get("content-encoding")
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
    return ReadFailure(shorten(text), truncated=truncated)


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

    def records(self) -> Iterator[RecordedExchange | RecordProblem | None]:
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
            yield convert_record(cassette_exchange, item, index)
