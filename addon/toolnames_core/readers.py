"""Readers: how a body's JSON text becomes the values the format adapters read.

The standard reader parses the body with ``json.loads``. The fast reader, there when
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
- nesting near the interpreter's recursion limit: both count depth with the interpreter's
  counter, json.loads with a few calls more on the way in, so msgspec is called a few
  levels deeper still (``DEPTH_MARGIN``) and refuses first; json then decides.

Integers of more than 4300 digits, which json.loads refuses (CVE-2020-10735's guard) and
msgspec skips, are read by the standard reader too, as floats, so both call such a body JSON.

A client resends its tools alike in every request. The fast reader decodes a large body's
members that offer them (``resent``: the format's ``offer_keys``) once for the same bytes:
the rest of the body is decoded with those members left as their bytes (``msgspec.Raw``),
and a member whose bytes are those of one decoded lately gets the value decoded then (shared:
adapters only read what a reader returns). At 100 tools, decoding them was half of the
decode of the body. Skipping their bytes to find where they end was most of the rest: where
they are a large share of the body and stand where they stood in the last one (as many bytes
from its start or from its end), they are not read at all, once proved to be the member
(``_resent_in_place``). The standard reader does the same: json.loads tells no member's
bytes, so tools found alike in two bodies running are read again once where they stand, to
learn their bytes (``_learn_resent``); at 100 tools it then parses some 4 kB of a 74 kB body.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["DEFAULT", "FAST", "READERS", "STANDARD", "Reader", "reader_named"]


@dataclass(slots=True)
class Reader:
    """One way of decoding JSON bodies; both take (bytes, shape) and raise what json.loads
    raises (ValueError, RecursionError) for what they cannot read."""

    name: str
    # How the start-up log line and the scanner describe it.
    description: str
    # (a whole body, the shape its adapter reads or None, and the top-level members of that
    # shape a client resends alike every request) -> the value; a body's encoding is
    # detected as json.loads(bytes) does.
    body: Callable[..., object]
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


def _standard_body(content: bytes, shape: object = None, resent: tuple[str, ...] = ()) -> object:
    if not resent or len(content) < _RESENT_FROM or b"\x00" in content[:4]:
        return loads(content)  # (a NUL in the first four bytes: json reads UTF-16 or 32)
    members = [(member, loads) for member in resent]
    found = _resent_in_place(content, loads, members, _REFUSED, _is_text_stand_in)
    if found is not None:
        body, member, kept = found
        body[member] = kept.value
        return body
    body = loads(content)
    if isinstance(body, dict):
        # A member nested too deep to compare or read again here is not learnt.
        with contextlib.suppress(RecursionError):
            _learn_resent(content, body, resent)
    return body


def _learn_resent(content: bytes, body: dict, resent: tuple[str, ...]) -> None:
    """Where the standard reader's resent members stand in ``content``, for the next body
    (``_resent_in_place``). json.loads tells no member's bytes: those of members kept
    already are looked for as bytes; a member that looks like the one the body before held
    (``_alike``: resent, most likely) and whose bytes are not kept is read again where it is
    found, once, to learn its bytes."""
    known = [kept for kept in _lately if kept.decode is loads]
    # Kept values found here, and those too small a share of this body to look for in place.
    settled = [
        kept.value
        for kept in known
        if _find_place(kept, content) or len(kept.raw) * _IN_PLACE_SHARE < len(content)
    ]
    for member in resent:
        value = body.get(member)
        if not isinstance(value, (list, dict)):
            continue
        resent_before = _alike(_json_last.get(member), value)
        _json_last[member] = value
        if resent_before and not any(_alike(value, other) for other in settled):
            found = _member_bytes(content, member, value)
            if found is not None and len(found[0]) <= _RESENT_UP_TO:
                raw, at = found
                # Where it was read: the place itself, not the first copy of its bytes.
                _keep(_DecodedLately(raw, loads, value, at, len(content) - at - len(raw)))


def _alike(one: object, other: object) -> bool:
    """Whether two values of a member look alike, told by their length and their ends, not
    compared whole (two lists of 50 tools took 26 us): whether to learn a member's bytes,
    never what a body holds, which the stand-in proves."""
    if type(one) is not type(other) or len(one) != len(other):
        return False
    if isinstance(one, list):
        return not one or (one[0] == other[0] and one[-1] == other[-1])
    return one == other


def _member_bytes(content: bytes, member: str, value: object) -> tuple[bytes, int] | None:
    """The bytes of the top-level ``member`` of ``content`` whose value is ``value``, and
    where they begin, as found by reading again from where its name is found; None where
    that finds none."""
    key = _member_keys.get(member)
    if key is None:
        key = _member_keys[member] = re.compile(
            re.escape(json.dumps(member).encode()) + rb"[ \t\n\r]*:[ \t\n\r]*"
        )
    for tried, match in enumerate(key.finditer(content)):
        if tried == _MEMBER_TRIES:
            break
        try:
            # From the value on only: SDKs send their tools after the conversation.
            text = content[match.end() :].decode("utf-8")
            found, end = _RAW_DECODER.raw_decode(text)
        except ValueError:  # UnicodeDecodeError is one
            continue
        if found == value:
            return text[:end].encode("utf-8"), match.end()
    return None


# The places a member's name is looked for (a message may quote it), and the decoder that
# reads a value from one (raw_decode tells where the value ends).
_MEMBER_TRIES = 4
_RAW_DECODER = json.JSONDecoder()
_member_keys: dict[str, re.Pattern[bytes]] = {}
# Each resent member's value in the last large body the standard reader read in whole.
_json_last: dict[str, object] = {}


def _standard_event(data: bytes, shape: object = None) -> object:
    # Events are UTF-8 in both framings: decoded here, json skips guessing the encoding.
    return loads(data.decode("utf-8"))


STANDARD = Reader("json", "the standard library's json", _standard_body, _standard_event)


# How many calls, each counted against the interpreter's recursion limit, the fast reader
# puts between itself and msgspec, so that msgspec refuses a body nested near the limit
# before json.loads would (json.loads enters its scanner through a counted call, and on
# Python 3.11 every Python frame on its way in counts too); json then decides. Measured:
# 1 leaves 2 levels to spare on Python 3.13, 4 leaves 3 on Python 3.11.
DEPTH_MARGIN = 1 if sys.version_info >= (3, 12) else 4


class _Deeper:
    """Calls ``inner`` through a call CPython counts against the recursion limit (the
    ``__call__`` of a Python class's instance)."""

    __slots__ = ("inner",)

    def __init__(self, inner: Callable[[bytes], object]) -> None:
        self.inner = inner

    def __call__(self, content: bytes) -> object:
        return self.inner(content)


def _deeper(decode: Callable[[bytes], object], levels: int) -> Callable[[bytes], object]:
    for _ in range(levels):
        decode = _Deeper(decode)
    return decode


def _fast_reader() -> Reader | None:
    try:
        # Optional: absent from mitmproxy's binary builds, and from many an install.
        import msgspec
    except ImportError:
        return None
    decoders: dict[object, Callable[[bytes], object]] = {}
    refused = (msgspec.DecodeError, RecursionError)  # ValidationError is a DecodeError

    def decoder(shape: object, levels: int = DEPTH_MARGIN) -> Callable[[bytes], object]:
        found = decoders.get((shape, levels))
        if found is None:
            found = decoders[(shape, levels)] = _deeper(msgspec.json.Decoder(shape).decode, levels)
        return found

    def with_raw(shape: object, resent: tuple[str, ...]) -> _Resending | None:
        """How to decode a body of ``shape`` with its members ``resent`` left as their
        bytes; None when ``shape`` declares none of them (or is no TypedDict)."""
        key = (shape, resent)
        found = resending.get(key, _UNMADE)
        if found is _UNMADE:
            found = resending[key] = _resending(shape, resent, msgspec.Raw)
        return found

    resending: dict[tuple, _Resending | None] = {}

    def decode(content: bytes, shape: object, resent: tuple[str, ...]) -> object:
        how = with_raw(shape, resent) if resent and len(content) >= _RESENT_FROM else None
        if how is None:
            return decoder(shape)(content)
        # A member is one level deeper in the body than in its own bytes: decoded one call
        # deeper, it is refused where it would be within the body.
        members = [(member, decoder(inner, DEPTH_MARGIN + 1)) for member, inner in how.members]
        outer = decoder(how.outer)
        found = _resent_in_place(content, outer, members, refused, _is_raw_stand_in)
        if found is None:
            body = outer(content)
            resent_member = None
        else:
            body, resent_member, kept = found
            body[resent_member] = kept.value
        for member, decode_member in members:
            raw = body.get(member) if member != resent_member else None
            if raw is not None:
                body[member] = _decoded_lately(bytes(raw), decode_member, content)
        return body

    # Each falls back to json in its own frame, as deep in the stack as the standard
    # reader's own function would call it: where json gives up on nesting depends on that.
    def body(content: bytes, shape: object = None, resent: tuple[str, ...] = ()) -> object:
        if shape is not None and (content.isascii() or _utf8(content)):
            try:
                return decode(content, shape, resent)
            except refused:
                pass
        return loads(content)

    def event(data: bytes, shape: object = None) -> object:
        if shape is not None and (data.isascii() or _utf8(data)):
            try:
                return decoder(shape)(data)
            except refused:
                pass
        return loads(data.decode("utf-8"))

    description = f"msgspec {msgspec.__version__}, decoding only the fields toolnames reads"
    return Reader("msgspec", description, body, event)


class _Resending(NamedTuple):
    """A shape with members a client resends: the shape with those members as their bytes,
    and each member's name and own shape."""

    outer: object
    members: tuple[tuple[str, object], ...]


def _resending(shape: object, resent: tuple[str, ...], raw: type) -> _Resending | None:
    if not typing.is_typeddict(shape):
        return None
    hints = typing.get_type_hints(shape)
    members = tuple((name, hints[name]) for name in resent if name in hints)
    if not members:
        return None
    required = shape.__required_keys__
    fields = {
        name: typing.Required[raw if name in resent else hint]
        if name in required
        else (raw if name in resent else hint)
        for name, hint in hints.items()
    }
    outer = typing.TypedDict(f"{shape.__name__}WithRaw", fields, total=False)
    return _Resending(outer, members)


@dataclass(slots=True, eq=False)  # told apart by identity: its value may be deep
class _DecodedLately:
    raw: bytes
    decode: Callable[[bytes], object]
    value: object
    # Where ``raw`` stood in the last body it was found in: how many bytes came before it
    # and after it. None while unknown; _NEVER once a body's bytes there proved to be no
    # member (then it is never looked for in place again).
    before: int | None = None
    after: int = 0


def _decoded_lately(raw: bytes, decode: Callable[[bytes], object], content: bytes) -> object:
    """``decode(raw)``, the value decoded before when these bytes were decoded so lately;
    where they stand in ``content`` is remembered for the next body (``_resent_in_place``)."""
    for at, kept in enumerate(_lately):
        if kept.decode is decode and kept.raw == raw:
            del _lately[at]  # the last one used, the last to go
            _lately.append(kept)
            _find_place(kept, content)
            return kept.value
    value = decode(raw)
    if len(raw) <= _RESENT_UP_TO:
        kept = _DecodedLately(raw, decode, value)
        _find_place(kept, content)
        _keep(kept)
    return value


def _find_place(kept: _DecodedLately, content: bytes) -> bool:
    """Remember where ``kept.raw`` first stands in ``content``, when it is a large enough
    share of bodies like it to be worth finding in place (``_resent_in_place``), a whole
    array or object, and was never proved to be no member where it stood; whether it was
    found."""
    raw, size = kept.raw, len(content)
    if kept.before == _NEVER or len(raw) * _IN_PLACE_SHARE < size or raw[:1] not in b"[{":
        return False
    probe = raw[:_PROBE]
    at = content.find(probe)
    while at >= 0 and not content.startswith(raw, at):
        at = content.find(probe, at + 1)
    if at < 0:
        return False
    kept.before, kept.after = at, size - at - len(raw)
    return True


def _keep(kept: _DecodedLately) -> None:
    if len(_lately) >= _MAX_LATELY:
        del _lately[0]
    _lately.append(kept)


def _resent_in_place(
    content: bytes,
    read: Callable[[bytes], object],
    members: list[tuple[str, object]],
    refused: tuple[type[BaseException], ...],
    stands_in: Callable[[object], bool],
) -> tuple[dict, str, _DecodedLately] | None:
    """The body read by ``read`` without reading again a resent member whose bytes stand
    where they stood in the body they were last found in (as many bytes before them, or as
    many after: a conversation grows on one side of its tools), with the member and what
    was kept of it (its value is the caller's to put in); None when none does.

    The bytes found are proved to be that member, not a copy of them elsewhere: the body
    is read with a stand-in in their place, which must come back as the member
    (``stands_in``). The stand-in is secret, so no body holds it but this one; the member's
    own bytes are a whole JSON array or object, read before; so the body reads as it would
    with them, and the member's value is the one read then. ``members``: each member that
    may be resent, with the function that reads its bytes (the kept ones read by it)."""
    size = len(content)
    for kept in reversed(_lately):
        names = [name for name, made in members if made is kept.decode]
        if not names or kept.before is None or kept.before < 0:
            continue
        length = len(kept.raw)
        if length * _IN_PLACE_SHARE < size:
            continue  # the body grew around them: copying it costs more than skipping them
        for at in (kept.before, size - length - kept.after):
            if at >= 0 and content.startswith(kept.raw, at):
                break
        else:
            continue
        view = memoryview(content)
        try:
            body = read(b"".join((view[:at], _STAND_IN, view[at + length :])))
        except refused:
            body = None
        member = None
        if isinstance(body, dict):
            member = next((name for name in names if stands_in(body.get(name))), None)
        if member is None:
            kept.before = _NEVER  # its bytes stood there, but not as a member
            return None
        _lately.remove(kept)
        _lately.append(kept)  # the last one used, the last to go
        return body, member, kept
    return None


def _is_raw_stand_in(found: object) -> bool:
    return found is not None and bytes(found) == _STAND_IN


def _is_text_stand_in(found: object) -> bool:
    return found == _STAND_IN_TEXT


_UNMADE = object()
# Bodies from this size have their resent members decoded once (the bench's 10-tool body,
# 9.3 kB, reads in 16.6 to 17.0 µs so against 17.7 to 20.1 µs whole; smaller ones were not
# measured to gain), each up to _RESENT_UP_TO kept, the last _MAX_LATELY used: as many
# clients' tools at once.
_RESENT_FROM = 8 * 1024
_RESENT_UP_TO = 1024 * 1024
_MAX_LATELY = 4
_lately: list[_DecodedLately] = []
# A member's bytes are looked for in place only where they are at least a quarter of the
# body: the body is copied around them (at 2 MB, 159 us), which costs less than skipping
# them (msgspec skips some 2 GB/s, a copy runs at 12 GB/s or more) only while they are a
# large part of it.
_IN_PLACE_SHARE = 4
_PROBE = 64  # the bytes a member's place is first looked for by
_NEVER = -1
# What decode() puts where a resent member's bytes stood, to prove they were the member: a
# JSON string no body holds, as its text is made anew with every start and never shown.
_STAND_IN = b'"toolnames-stand-in-' + secrets.token_hex(16).encode() + b'"'
_STAND_IN_TEXT = json.loads(_STAND_IN)
_REFUSED = (ValueError, RecursionError)  # what json.loads raises for what it cannot read


def _utf8(content: bytes) -> bool:
    # msgspec does not check the strings it skips; json.loads reads no body that is not UTF-8
    # (UTF-16 and UTF-32 bodies aside, which msgspec refuses anyway).
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


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
