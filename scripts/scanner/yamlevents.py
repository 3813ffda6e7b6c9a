"""YAML, one event at a time, to plain values: what scripts/scan's cassette reader stands on.

The events come from libyaml through PyYAML (as vcrpy reads cassettes) when PyYAML has its C
extension, else from ruamel.yaml's pure-Python parser (mitmproxy depends on ruamel.yaml, so
it is always there), about twenty-five times slower. The two emit the same events and one
builder turns them into values, so the parser never changes what a scan reports.

Never ruamel.yaml's own C parser (ruamel.yaml.clib): its libyaml is older and refuses a ':'
inside a flow collection, as in vcrpy's `headers: {Date: [Thu, 01 Jan 2026 00:00:00 GMT]}`.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from collections.abc import Callable
from typing import BinaryIO
from typing import NamedTuple

from ruamel import yaml as ruamel_yaml
from ruamel.yaml import events as ruamel_events

from scanner.recorded import ReadFailure
from scanner.recorded import shorten

try:
    import yaml as pyyaml
    from yaml import events as pyyaml_events
    from yaml import parser as pyyaml_parser
except ImportError:  # PyYAML is optional: ruamel.yaml reads cassettes then
    pyyaml = pyyaml_events = pyyaml_parser = None

__all__ = [
    "EventKinds",
    "EventSource",
    "PARSERS",
    "ValueBuilder",
    "best_parser",
    "open_events",
    "slow_parser_note",
    "yaml_failure",
]

PARSERS = ("pyyaml", "ruamel")


def _pyyaml_c_loader():
    # A PyYAML built without libyaml has no CSafeLoader; __with_libyaml__ says which.
    if pyyaml is None or not getattr(pyyaml, "__with_libyaml__", False):
        return None
    return getattr(pyyaml, "CSafeLoader", None)


def best_parser() -> str:
    return "pyyaml" if _pyyaml_c_loader() is not None else "ruamel"


def slow_parser_note() -> str | None:
    """What to tell a user once per scan when cassettes will be read slowly, else None."""
    if _pyyaml_c_loader() is not None:
        return None
    missing = "PyYAML is not installed" if pyyaml is None else "PyYAML has no libyaml"
    return (
        f"YAML cassettes are read slowly, about 1 to 2 MB/s ({missing}, so ruamel.yaml parses "
        "them in pure Python); `pip install pyyaml` (its wheels include libyaml) reads them "
        "over twenty times faster"
    )


class EventKinds(NamedTuple):
    """One parser's event classes: the builder compares types, not names, for speed."""

    scalar: type
    alias: type
    sequence_start: type
    sequence_end: type
    mapping_start: type
    mapping_end: type
    stream_end: type


def _kinds(module) -> EventKinds:
    return EventKinds(
        module.ScalarEvent,
        module.AliasEvent,
        module.SequenceStartEvent,
        module.SequenceEndEvent,
        module.MappingStartEvent,
        module.MappingEndEvent,
        module.StreamEndEvent,
    )


class EventSource(NamedTuple):
    """``get()`` returns the next event, None after the last; ``errors`` are what it raises
    on bad YAML; ``at_end(error)`` tells whether an error was met where the input ends;
    ``parser`` is one of PARSERS."""

    get: Callable[[], object]
    kinds: EventKinds
    errors: tuple[type[Exception], ...]
    at_end: Callable[[Exception], bool]
    parser: str


# UTF-8 continuation bytes: what a chunk holds less them is how many characters it holds.
_CONTINUATION = bytes(range(0x80, 0xC0))


class _CountingInput:
    """What libyaml reads, counted in characters (as its marks count), so that an error at
    the very end of the input is known for what it is: a cut file. ruamel.yaml says so in
    its messages ("but found '<stream end>'"); libyaml only says what it expected."""

    def __init__(self, fo: BinaryIO) -> None:
        self.fo = fo
        self.chars = 0
        self.started = False
        self.ended = False

    def read(self, size: int = -1) -> bytes:
        chunk = self.fo.read(size)
        if not chunk:
            self.ended = True
        elif not self.started:
            self.started = True
            # libyaml does not count a byte order mark.
            self.chars -= chunk.startswith(codecs.BOM_UTF8)
        self.chars += len(chunk.translate(None, _CONTINUATION))
        return chunk

    def at_end(self, e: Exception) -> bool:
        # Parser errors only, where ruamel.yaml says "<stream end>": a scanner error at the end
        # (a key cut short) is worded alike by both and reported as it always was.
        mark = getattr(e, "problem_mark", None)
        return (
            isinstance(e, pyyaml_parser.ParserError)
            and self.ended
            and mark is not None
            and mark.index >= self.chars
        )


def open_events(fo: BinaryIO, parser: str | None = None) -> EventSource:
    """The events of ``fo``, read as they are needed (the file is never held whole).

    ``parser``: one of PARSERS (the tests compare them), None for best_parser().
    """
    parser = parser or best_parser()
    if parser == "pyyaml":
        loader = _pyyaml_c_loader()
        if loader is None:
            raise RuntimeError("PyYAML with libyaml is not available")
        # libyaml's parser, reading fo in chunks; CSafeLoader's constructor is never used.
        counted = _CountingInput(fo)
        return EventSource(
            loader(counted).get_event,
            _kinds(pyyaml_events),
            (pyyaml.YAMLError,),
            counted.at_end,
            parser,
        )
    if parser not in PARSERS:
        raise ValueError(f"unknown YAML parser {parser!r}")
    events = iter(ruamel_yaml.YAML(typ="safe", pure=True).parse(fo))
    return EventSource(
        lambda: next(events, None),
        _kinds(ruamel_events),
        (ruamel_yaml.YAMLError,),
        lambda e: False,  # its messages say when it met the end (yaml_failure reads them)
        parser,
    )


def yaml_failure(e: Exception, at_end: bool = False) -> ReadFailure:
    """A parser's error as the scan reports it (both parsers word their errors alike);
    ``at_end``: it was met where the input ends, so the file is taken as cut."""
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
    truncated = at_end or "end of stream" in problem or "stream end" in problem
    return ReadFailure(shorten(text), truncated=truncated)


_YAML_INT = re.compile(r"[-+]?[0-9]+$")
_YAML_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")
_NULLS = frozenset(("", "~", "null", "Null", "NULL"))
_TRUES = frozenset(("true", "True", "TRUE"))
_FALSES = frozenset(("false", "False", "FALSE"))
_TYPED = (":int", ":null", ":bool", ":float")
# Plain scalars repeat (keys, header names, methods): their values are remembered, up to a
# bound so that a file of distinct short scalars cannot grow the table without end.
_MEMO_LIMIT = 4096
_MEMO_LENGTH = 64


def _plain(value: str) -> object:
    if value in _NULLS:
        return None
    if value in _TRUES:
        return True
    if value in _FALSES:
        return False
    if _YAML_INT.match(value):
        return int(value)
    if _YAML_FLOAT.match(value):
        return float(value)
    return value


def _tagged(tag: str, value: str) -> object:
    if tag.endswith(":binary"):
        try:
            return base64.b64decode(value)
        except (binascii.Error, ValueError):
            return value
    if not tag.endswith(_TYPED):
        return value  # !!str, !!python/unicode and any other tag: the text
    return _plain(value)


class ValueBuilder:
    """Builds one node's value from the events, anchors and aliases included.

    Scalars are resolved as a YAML 1.1 safe loader would for what cassettes hold: null,
    booleans, integers, floats, !!binary as bytes, text otherwise. Most events are scalars
    inside a mapping or a sequence: the loops below handle those without a call per event
    (the cost per event is what sets the speed of a scan).
    """

    def __init__(self, source: EventSource) -> None:
        self.get = source.get
        self.kinds = source.kinds
        self.anchors: dict[str, object] = {}
        self.memo: dict[str, object] = {}

    def pull(self):
        event = self.get()
        if event is None:
            raise ReadFailure("the YAML ends early", truncated=True)
        return event

    def value(self, event) -> object:
        kinds = self.kinds
        kind = type(event)
        if kind is kinds.scalar:
            return self._scalar(event)
        if kind is kinds.mapping_start:
            value: object = self._mapping()
        elif kind is kinds.sequence_start:
            value = self._sequence()
        elif kind is kinds.alias:
            if event.anchor not in self.anchors:
                raise ReadFailure(f"undefined YAML alias {event.anchor!r}")
            return self.anchors[event.anchor]
        elif event is None:
            raise ReadFailure("the YAML ends early", truncated=True)
        else:
            raise ReadFailure(f"unexpected YAML event {kind.__name__}")
        if event.anchor:
            self.anchors[event.anchor] = value
        return value

    def _mapping(self) -> dict:
        get, scalar, end = self.get, self.kinds.scalar, self.kinds.mapping_end
        out: dict = {}
        while True:
            event = get()
            kind = type(event)
            if kind is scalar:
                key = self._scalar(event)
            elif kind is end:
                return out
            else:
                key = self.value(event)
            if not isinstance(key, (str, int, float, bool, bytes, type(None))):
                key = repr(key)
            event = get()
            out[key] = self._scalar(event) if type(event) is scalar else self.value(event)

    def _sequence(self) -> list:
        get, scalar, end = self.get, self.kinds.scalar, self.kinds.sequence_end
        out: list = []
        while True:
            event = get()
            kind = type(event)
            if kind is scalar:
                out.append(self._scalar(event))
            elif kind is end:
                return out
            else:
                out.append(self.value(event))

    def _scalar(self, event) -> object:
        tag, value = event.tag, event.value
        if tag:
            resolved = _tagged(str(tag), value)
        elif event.style:
            resolved = value  # quoted or block text (libyaml says '' for plain, ruamel None)
        else:
            memo = self.memo
            if value in memo:
                resolved = memo[value]
            else:
                resolved = _plain(value)
                if len(value) <= _MEMO_LENGTH and len(memo) < _MEMO_LIMIT:
                    memo[value] = resolved
        if event.anchor:
            self.anchors[event.anchor] = resolved
        return resolved
