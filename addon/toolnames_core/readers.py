"""Readers: how a body's JSON text becomes the values the format adapters read.

The standard reader parses the whole body with ``json.loads``. The fast reader, there when
``msgspec`` can be imported (a pip-, pipx- or uv-installed mitmproxy with it added; never
in mitmproxy's binary builds), decodes a body into the shape its format's adapter declares
(``formats.base.Shapes``: TypedDicts naming only the keys the adapter reads) and skips
everything else (descriptions, schemas, message text) in C. The adapters get plain dicts
either way, holding every key they look at, so they run unchanged on both.

The fast reader never gives a different answer: wherever it cannot decide the way
``json.loads`` would, it hands that body to the standard reader. That is

- a value of a type the shape does not declare (``"tools": 3``), duplicate keys whose
  values disagree in type, a document that is not an object: msgspec refuses, json decides;
- JSON that msgspec refuses and json takes (NaN, Infinity, ``\\ud800`` escapes, a byte
  order mark, UTF-16): json decides;
- bytes that are not strict UTF-8: msgspec does not check the strings it skips, json.loads
  does (with surrogatepass), so such a body goes to json before msgspec sees it;
- nesting past the interpreter's recursion limit: both count depth the same way, so both
  fail alike (msgspec's RecursionError goes to json, which raises its own).

Integers of more than 4300 digits, which json.loads refuses (CVE-2020-10735's guard) and
msgspec skips, are read by the standard reader too, as floats, so both call such a body JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["DEFAULT", "FAST", "READERS", "STANDARD", "Reader", "reader_named"]


@dataclass(slots=True)
class Reader:
    """One way of decoding JSON bodies; both take (bytes, shape) and raise what json.loads
    raises (ValueError, RecursionError) for what they cannot read."""

    name: str
    # How the start-up log line and the scanner describe it.
    description: str
    # (a whole body, the shape its adapter reads, or None) -> the value; a body's encoding
    # is detected as json.loads(bytes) does.
    body: Callable[[bytes, object], object]
    # (one stream event's data, the shape) -> the value; events are UTF-8, decoded strictly.
    event: Callable[[bytes, object], object]


def _long_int(digits: str) -> object:
    # Past sys.get_int_max_str_digits, int() refuses; a float reads it in linear time.
    try:
        return int(digits)
    except ValueError:
        return float(digits)


def loads(text: bytes | str) -> object:
    """json.loads, which also reads integers too long for int(): as msgspec does, such a
    body is JSON."""
    try:
        return json.loads(text)
    except ValueError as e:
        if "integer string conversion" not in str(e):
            raise
    return json.loads(text, parse_int=_long_int)


def _standard_body(content: bytes, shape: object = None) -> object:
    return loads(content)


def _standard_event(data: bytes, shape: object = None) -> object:
    # Events are UTF-8 in both framings: decoded here, json skips guessing the encoding.
    return loads(data.decode("utf-8"))


STANDARD = Reader("json", "the standard library's json", _standard_body, _standard_event)


def _fast_reader() -> Reader | None:
    try:
        # Optional: absent from mitmproxy's binary builds, and from many an install.
        import msgspec
    except ImportError:
        return None
    decoders: dict[object, Callable[[bytes], object]] = {}
    refused = (msgspec.DecodeError, RecursionError)  # ValidationError is a DecodeError

    def decode(content: bytes, shape: object, standard: Callable[[bytes], object]) -> object:
        if shape is None:
            return standard(content)
        if not content.isascii():
            try:
                content.decode("utf-8")
            except UnicodeDecodeError:
                return standard(content)
        decoder = decoders.get(shape)
        if decoder is None:
            decoder = decoders[shape] = msgspec.json.Decoder(shape).decode
        try:
            return decoder(content)
        except refused:
            return standard(content)

    return Reader(
        "msgspec",
        f"msgspec {msgspec.__version__}, decoding only the fields toolnames reads",
        lambda content, shape=None: decode(content, shape, _standard_body),
        lambda data, shape=None: decode(data, shape, _standard_event),
    )


FAST = _fast_reader()
# The explicit list; the fast one first, when it is there.
READERS: list[Reader] = [FAST, STANDARD] if FAST else [STANDARD]
DEFAULT = READERS[0]


def reader_named(name: str) -> Reader:
    """``auto`` (the fast reader when there is one), ``json`` or ``msgspec``."""
    if name == "auto":
        return DEFAULT
    for reader in READERS:
        if reader.name == name:
            return reader
    if name == "msgspec":
        raise ValueError(
            "msgspec cannot be imported here; add it to mitmproxy's environment "
            "(pipx inject mitmproxy msgspec, or uv tool install mitmproxy --with msgspec)"
        )
    raise ValueError(f"unknown reader {name!r}; readers: auto, json, msgspec")
