"""Replace values inside JSON text without re-serialising the rest.

Fix mode changes one name; every other byte the client sent stays as it was, so
signatures over the body, key order, whitespace and number formatting survive.

Two ways to find what to replace, with one result. ``replace_values`` walks the text from
the start along the paths (``value_spans``): exact for any path, but it reads past every
value on the way, the C scanner building (and dropping) each skipped schema, and steps in
Python through every member of every object on a path, so renaming every tool of a request
cost three times a ``json.loads`` of it. ``replace_strings`` is fix mode's: each path's value
is a string its caller read there, and it finds those strings by one search for their
member names instead (``_found_by_key``, where the proof that it finds exactly them is),
falling back to the walk wherever that proof does not hold. It takes and gives the body's
UTF-8 bytes, not text: the search reads them as they came, and only a body that is not
ASCII is decoded, to check that it is UTF-8.
"""

from __future__ import annotations

import json
import json.scanner
import re
from bisect import bisect_right
from dataclasses import dataclass
from json.decoder import scanstring
from json.encoder import encode_basestring_ascii
from operator import itemgetter
from typing import NamedTuple

from toolnames_core.model import JsonPath

# Fix mode's planned replacements: the string at each path, as its caller read it (old), and
# what goes there instead (new).
Replacements = dict[JsonPath, tuple[str, str]]

_WS = re.compile(r"[ \t\n\r]*")
_WS_CHARS = frozenset(" \t\n\r")
# json.loads also takes NaN, Infinity and -Infinity, so the splice must read past them too.
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")


def _ws(text: str, pos: int) -> int:
    # Most clients send compact JSON: no whitespace to skip, and no regex run to find so.
    if text[pos : pos + 1] not in _WS_CHARS:
        return pos
    return _WS.match(text, pos).end()


# json's own scanner (its C accelerator where built) reads a value at C speed; it returns where
# the value ends, which is all a skip needs. Fix mode only meets bodies json.loads has read.
_scan_once = json.scanner.make_scanner(json.JSONDecoder())
# Paths a recursive walk may follow; deeper ones (never a tool name's) are followed one by one.
_WALK_DEPTH = 64


def _skip_value(text: str, pos: int) -> int:
    """End of the JSON value starting at ``pos``."""
    try:
        return _scan_once(text, pos)[1]
    except (RecursionError, ValueError, StopIteration):
        # Nesting deeper than the C scanner recurses, or a number it will not convert
        # (over int's digit limit): skip it token by token instead.
        return _skip_tokens(text, pos)


def _skip_tokens(text: str, pos: int) -> int:
    """End of the JSON value starting at ``pos``; iterative, so depth cannot overflow the stack."""
    depth = 0
    while True:
        ch = text[pos]
        if ch == '"':
            pos = scanstring(text, pos + 1)[1]
        elif ch in "{[":
            depth += 1
            pos += 1
        elif ch in "}]":
            depth -= 1
            pos += 1
        elif ch in ",: \t\n\r":
            pos += 1
        else:
            m = _SCALAR.match(text, pos)
            if not m:
                raise ValueError(f"unexpected character at {pos}")
            pos = m.end()
        if depth == 0:
            return pos


def _child_span(text: str, pos: int, key: str | int) -> tuple[int, int]:
    """Span of member ``key`` of the object or array starting at ``pos``.

    For a repeated object key the last one wins, as it does for json.loads.
    """
    opener = text[pos]
    pos = _ws(text, pos + 1)
    found = None
    index = 0
    if text[pos] in "}]":
        raise KeyError(key)
    while True:
        if opener == "{":
            member, pos = scanstring(text, pos + 1)
            pos = _ws(text, _ws(text, pos) + 1)  # the colon
            match = member == key
        else:
            match = index == key
        end = _skip_value(text, pos)
        if match:
            found = (pos, end)
        pos = _ws(text, end)
        if text[pos] in "}]":
            break
        pos = _ws(text, pos + 1)  # the comma
        index += 1
    if found is None:
        raise KeyError(key)
    return found


def _start(text: str) -> int:
    # json.loads(bytes) reads a UTF-8 byte order mark as utf-8-sig: keep it, and start after it.
    return _ws(text, 1 if text.startswith("\ufeff") else 0)


def value_span(text: str, where: JsonPath) -> tuple[int, int]:
    start = _start(text)
    span = (start, _skip_value(text, start))
    for key in where:
        span = _child_span(text, span[0], key)
    return span


class _Target:
    """A node of the paths being looked for: the path that ends here, and the deeper ones."""

    __slots__ = ("children", "path", "under")

    def __init__(self) -> None:
        self.children: dict[str | int, _Target] = {}
        self.path: JsonPath | None = None
        self.under: list[JsonPath] = []  # every path through this node, for repeated keys


def _targets(paths: list[JsonPath]) -> _Target:
    root = _Target()
    for where in paths:
        node = root
        node.under.append(where)
        for key in where:
            node = node.children.setdefault(key, _Target())
            node.under.append(where)
        node.path = where
    return root


def _walk(text: str, pos: int, node: _Target, spans: dict) -> int:
    """Record the span of each path in ``node`` within the value at ``pos``; its end."""
    if text[pos] not in "{[" or not node.children:
        return _skip_value(text, pos)
    opener = text[pos]
    pos = _ws(text, pos + 1)
    if text[pos] in "}]":
        return pos + 1
    index = 0
    while True:
        if opener == "{":
            key, pos = scanstring(text, pos + 1)
            pos = _ws(text, _ws(text, pos) + 1)  # the colon
        else:
            key = index
        child = node.children.get(key)
        if child is None:
            end = _skip_value(text, pos)
        else:
            # A repeated key: the last one wins, as for json.loads, even where it lacks a path.
            for where in child.under:
                spans.pop(where, None)
            end = _walk(text, pos, child, spans)
            if child.path is not None:
                spans[child.path] = (pos, end)
        pos = _ws(text, end)
        if text[pos] in "}]":
            return pos + 1
        pos = _ws(text, pos + 1)  # the comma
        index += 1


def value_spans(text: str, paths: list[JsonPath]) -> dict[JsonPath, tuple[int, int]]:
    """The span of the value at each path, read in one pass over the text (fix mode renames
    every tool of a request: one pass per name would read a large body once per tool)."""
    short = [where for where in paths if len(where) <= _WALK_DEPTH]
    spans: dict[JsonPath, tuple[int, int]] = {}
    if short:
        _walk(text, _start(text), _targets(short), spans)
    for where in paths:
        if len(where) > _WALK_DEPTH:
            spans[where] = value_span(text, where)
        elif where not in spans:
            raise KeyError(where)
    return spans


def replace_values(text: str, replacements: dict[JsonPath, object]) -> str:
    """``text`` with the value at each path replaced by the JSON encoding of its new value."""
    spans = value_spans(text, list(replacements))
    pieces = []
    done = 0
    for where, (start, end) in sorted(spans.items(), key=lambda item: item[1]):
        if start < done:
            raise ValueError(f"the value at {where} lies inside another value being replaced")
        pieces += [text[done:start], json.dumps(replacements[where])]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


# -- fix mode's replacements: strings found by their member names ----------------------------

# Member names the search below can find by their spelling alone: characters that have no
# other escape than \\u00XX, none of which may follow a string's closing quote.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")
# What follows a member name before its string value.
_COLON = re.compile(rb'[ \t\n\r]*:[ \t\n\r]*"')
# What _COLON's match looks at before it gives up: the byte after this match decides.
_UP_TO_VALUE = re.compile(rb"[ \t\n\r]*(?::[ \t\n\r]*)?")
# What makes a string's bytes other than its value: an escape, or a control character,
# which the decoder refuses. The same in an old value: JSON never holds it as its bytes.
_NOT_RAW = re.compile(rb"[\\\x00-\x1f]").search
_NOT_RAW_STR = re.compile(r"[\\\x00-\x1f]").search
# The rest of a string from just after its opening quote, its closing quote included, when
# its escapes pair up; possessive, so a long string is read once.
_STRING_REST = re.compile(rb'[^"\\]*+(?:\\.[^"\\]*+)*+"')

# Backslashes looked at one by one before the escape check searches instead.
_FEW_BACKSLASHES = 16


class _KeySearch:
    """The search for a set of member names, and for the escapes that could spell one of
    their characters otherwise."""

    __slots__ = ("escape", "longest", "quoted", "search")

    def __init__(self, keys: frozenset[str]) -> None:
        names = "|".join(map(re.escape, sorted(keys)))
        # One name, the common case: bytes.find skips through the text faster than a regular
        # expression's search (measured: 2.4 times fewer instructions).
        self.quoted = f'"{next(iter(keys))}"'.encode() if len(keys) == 1 else None
        self.search = re.compile(f'"(?:{names})"'.encode()).search
        # The longest match, in bytes: the keys are ASCII (_PLAIN_KEY), quoted.
        self.longest = max(map(len, keys), default=0) + 2
        codes = "|".join(sorted({f"{ord(c):02x}" for key in keys for c in key}))
        self.escape = re.compile(f"\\\\u00(?:{codes})".encode(), re.IGNORECASE)

    def escape_at(self, body: bytes, start: int = 0, stop: int | None = None) -> int:
        """Where the first ``\\u00XX`` escape of one of the names' characters begins in
        ``body``, from ``start`` on and before ``stop``; -1 if there is none."""
        # A body of tools holds few backslashes: finding each (memchr) and looking at it took
        # a fifth of the time of one search for "\\u00" through 74 kB. A conversation holds
        # thousands: past the first few, the expression searches (its search for the backslash
        # alone took 0.65 to 0.9 of the time of one search for "\\u00" there).
        if stop is None:
            stop = len(body)
        find = body.find
        at = find(b"\\", start, stop)
        for _ in range(_FEW_BACKSLASHES):
            if at < 0:
                return -1
            if self.escape.match(body, at):
                return at
            at = find(b"\\", at + 1, stop)
        if at < 0:
            return -1
        found = self.escape.search(body, at, stop + _ESCAPE_SIZE - 1)
        return -1 if found is None else found.start()

    def members(self, body: bytes, start: int = 0, stop: int | None = None) -> list[int]:
        """Where each quoted name in ``body`` ends (some of them values, or inside strings),
        of those found searching from ``start`` on that begin before ``stop``."""
        if stop is None:
            stop = len(body)
        out = []
        if self.quoted is not None:
            find = body.find
            quoted = self.quoted
            size = len(quoted)
            end = stop + size - 1  # find's end: a match lies wholly before it
            at = find(quoted, start, end)
            while at >= 0:
                at += size
                out.append(at)
                at = find(quoted, at, end)
            return out
        search = self.search
        end = stop + self.longest - 1
        match = search(body, start, end)
        while match is not None and match.start() < stop:
            at = match.end()
            out.append(at)
            match = search(body, at, end)
        return out

    def next_member(self, body: bytes, start: int) -> int:
        """Where the first quoted name found searching ``body`` from ``start`` on ends; -1 if
        there is none."""
        if self.quoted is not None:
            at = body.find(self.quoted, start)
            return at if at < 0 else at + len(self.quoted)
        match = self.search(body, start)
        return -1 if match is None else match.end()

    def scan(self, body: bytes) -> _Found | None:
        """``members(body)``, and how they were found; None where ``body`` holds an escape of
        one of the names' characters (``escape_at``). A large body is searched only where it
        differs from one searched before (``_Scanned``)."""
        if not _REMEMBERED_FROM <= len(body) <= _REMEMBERED_UP_TO:
            if self.escape_at(body) >= 0:
                return None
            members = self.members(body)
            return _Found(members, None, None, 0, 0, len(members), 0)
        before, shared = None, 0
        for scanned in _scanned:
            if scanned.search is self:
                common = shared_prefix(body, scanned.body)
                if common > shared:
                    before, shared = scanned, common
                    if shared == len(body):
                        break  # nothing of body past the bytes both begin with
        if before is not None and len(before.body) == shared == len(body):
            # The same body again (a client's retry): found as before. It becomes the last
            # one searched, and the other body kept stays, for its conversation's next turn.
            _scanned.remove(before)
            _scanned.append(before)
            if before.escape >= 0:
                return None
            members = before.members
            return _Found(members, before, before, len(members), shared, len(members), 0)
        if before is None:
            escape = self.escape_at(body)
            members = self.members(body)
            head, tail_at, moved = 0, len(members), 0
        else:
            escape, members, head, tail_at, moved = self._past(body, before, shared)
        if len(_scanned) >= _MAX_SCANNED:
            del _scanned[0]
        scanned = _Scanned(body, self, members, escape)
        _scanned.append(scanned)
        if escape >= 0:
            return None
        return _Found(members, scanned, before, head, shared, tail_at, moved)

    def _past(
        self, body: bytes, before: _Scanned, shared: int
    ) -> tuple[int, list[int], int, int, int]:
        """``escape_at(body)`` and ``members(body)``, where ``body`` begins with the first
        ``shared`` bytes of ``before.body``: body is searched only between those and the bytes
        both end with (its tail), from where a match not wholly in what both begin with
        could begin, then in its tail until its search meets old's (see _Scanned). Then how
        many of its first members are old's first ones, from which of its members on they
        are old's last ones, moved, and by how many bytes (``_Found``)."""
        old = before.body
        moved = len(body) - len(old)  # where a byte of old's tail is in body, less where in old
        # A conversation's new round comes before what it resends after its messages: its
        # tools and options.
        tail = len(body) - shared_suffix(body, old, min(len(body), len(old)) - shared)
        old_tail = tail - moved

        escape = before.escape
        if escape < 0 or escape + _ESCAPE_SIZE > shared:
            # Old's first escape is not in the bytes both begin with, so none of old's is.
            escape = self.escape_at(body, max(0, shared - _ESCAPE_SIZE + 1), tail)
            if escape < 0 and before.escape >= 0:
                if before.escape >= old_tail:
                    escape = before.escape + moved  # old's first, in the tail both share
                else:
                    escape = self.escape_at(body, tail)  # what old's tail holds is not known

        old_members = before.members
        members = old_members[: bisect_right(old_members, shared)]
        head = len(members)
        at = max(members[-1] if members else 0, shared - self.longest + 1)
        between = self.members(body, at, tail)
        members += between
        # The search is now past every match that begins before the tail, at ``at``.
        at = max(between[-1] if between else at, tail)
        while bisect_right(old_members, at - moved) < len(old_members):
            # The search at ``at`` in body is where it would be at ``at - moved`` in old's
            # tail: once it ends a match there where old's search ended one, both go on
            # alike, and old's matches after it are body's, moved.
            at = self.next_member(body, at)
            if at < 0:
                break
            members.append(at)
            found = bisect_right(old_members, at - moved)
            if found and old_members[found - 1] == at - moved:
                rest = old_members[found:]
                members += rest if moved == 0 else [end + moved for end in rest]
                # From this match on (it lies in the tail), body's are old's, moved.
                return escape, members, head, len(members) - len(rest) - 1, moved
        # Else old's search found none past ``at - moved``: nor is there one in its tail there,
        # which is body's from ``at`` on.
        return escape, members, head, len(members), moved


@dataclass(slots=True, eq=False)  # one body's search, told apart by identity
class _Scanned:
    """A large body as ``_KeySearch.scan`` searched it, kept for the next: a chat client
    resends its conversation a round longer every turn, so a request begins with all but the
    last round of the one before and ends with the same tools and options. Searching a 2 MB
    conversation twice cost a fifth of fix mode's flow, and 100 tools after a new question
    a tenth of its samples in mitmdump (issue 25).

    Each search is for bytes of a fixed length at most (a quoted name; an escape,
    ``_ESCAPE_SIZE``), and finds matches left to right, each after the one before. A match
    lying wholly in the bytes two bodies begin with is in both, so the new body is searched
    from where one that does not could begin. Where both end alike, from the same place on
    the search finds the same matches: once the new body's search ends a match where the
    old one's ended one, the old one's matches after it are the new body's, moved by the
    difference in length."""

    body: bytes
    search: _KeySearch
    members: list[int]  # where each quoted name ends, in order
    escape: int  # where the first escape of a name's character begins; -1 if none
    # What ``_found_by_key`` read at each member for the names ``read_for`` (``_Reads``):
    # the next body's members where both begin and end alike are read alike.
    read_for: _Names | None = None
    reads: _Reads | None = None
    # What ``replace_strings`` made of the body for the names ``made_for`` (``_Made``): the
    # next body takes the bytes of it made of the bytes both begin and end with.
    made_for: _Names | None = None
    made: _Made | None = None


class _Found(NamedTuple):
    """A body's members as ``_KeySearch.scan`` found them: with what it kept of the body
    (``scanned``; None for a body it does not keep), and the body searched before it, when
    it was searched only where the two differ. Its first ``head`` members are ``before``'s
    first ones, lying in the ``shared`` bytes both begin with; from index ``tail_at`` on
    they are ``before``'s last ones, in the bytes both end with, ``moved`` bytes further."""

    members: list[int]
    scanned: _Scanned | None
    before: _Scanned | None
    head: int
    shared: int
    tail_at: int
    moved: int


class _Reads(NamedTuple):
    """What ``_found_by_key`` read at each member of a body: the span it found there (the
    value's, and its old value) or None, and how far the reads up to it looked, the furthest
    byte each read looked at, past it (``reach``: never less along the list). A read looks
    only at the bytes from its member on: one within the bytes two bodies begin with, or
    with its member in the bytes both end with, reads the same in both."""

    spans: list[tuple[int, int, str] | None]
    reach: list[int]
    # How many of the first and of the last reads were taken from the body before's.
    head: int = 0
    tail: int = 0


class _Made(NamedTuple):
    """A body as ``replace_strings`` renamed it: the new bytes, the spans replaced (their
    old value's bytes and value), and before each span and after the last, how much longer
    the new bytes are up to there (``shifts[k]``: what the first k replacements added)."""

    out: bytes
    spans: list[tuple[int, int, str]]
    shifts: list[int]


# The bodies remembered, the last _MAX_SCANNED of these sizes. A smaller one costs less to
# search than to compare: measured over the bench's requests asked four ways, searched whole
# against searched where they differ, 16.5 kB 19 against 35 us, 23.7 kB 34 against 37 us,
# 34.6 kB 49 against 37 us. Each is held until two others come, with what it was renamed to
# (at most 32 MB, two bodies of 8 MB and their renamed bytes; toolnames_max_body reads up to
# 32 MB), where mitmdump lets a flow go once it is done.
_REMEMBERED_FROM = 32 * 1024
_REMEMBERED_UP_TO = 8 * 1024 * 1024
_MAX_SCANNED = 2
_scanned: list[_Scanned] = []
_ESCAPE_SIZE = len(b"\\u0061")
# Two bodies are compared a block at a time, memcmp each: few Python steps for megabytes.
_SHARED_BLOCK = 64 * 1024


def shared_prefix(body: bytes, other: bytes) -> int:
    """How many bytes ``body`` and ``other`` begin with alike."""
    size = min(len(body), len(other))
    view = memoryview(other)
    starts = body.startswith
    at = 0
    while at + _SHARED_BLOCK < size and starts(view[at : at + _SHARED_BLOCK], at):
        at += _SHARED_BLOCK
    # Alike up to ``low``; up to ``high``, to be found.
    low, high = at, min(at + _SHARED_BLOCK, size)
    if starts(view[low:high], low):
        return high
    while high - low > 1:  # alike up to low, not up to high
        middle = (low + high) // 2
        if starts(view[low:middle], low):
            low = middle
        else:
            high = middle
    return low


def shared_suffix(body: bytes, other: bytes, most: int) -> int:
    """How many bytes ``body`` and ``other`` end with alike, at most ``most``."""
    moved = len(body) - len(other)
    view = memoryview(other)
    starts = body.startswith
    least = len(other) - most
    # ``other`` and ``body`` are alike from ``at`` (in other) on.
    at = len(other)
    while at - _SHARED_BLOCK > least and starts(
        view[at - _SHARED_BLOCK : at], at - _SHARED_BLOCK + moved
    ):
        at -= _SHARED_BLOCK
    low, high = max(at - _SHARED_BLOCK, least), at  # alike from high on; from low, to be found
    if starts(view[low:high], low + moved):
        return len(other) - low
    while high - low > 1:  # alike from high on, not from low
        middle = (low + high) // 2
        if starts(view[middle:high], middle + moved):
            high = middle
        else:
            low = middle
    return len(other) - high


_key_searches: dict[frozenset[str], _KeySearch] = {}
_MAX_KEY_SEARCHES = 64


def _key_search(keys: frozenset[str]) -> _KeySearch:
    found = _key_searches.get(keys)
    if found is None:
        if len(_key_searches) >= _MAX_KEY_SEARCHES:
            _key_searches.clear()
        found = _key_searches[keys] = _KeySearch(keys)
    return found


class _Names(NamedTuple):
    """What a set of (old, new) pairs asks of every body it renames, made once for the same
    pairs: fix mode renames the same names in every request of a conversation (the tools are
    resent each turn), and making this cost a fifth of a splice at 100 tools (issue 25)."""

    new_for: dict[str, str]  # each old value's new one
    raw_old: dict[bytes, str]  # the old values JSON may hold as their bytes, by those bytes
    tokens: dict[str, bytes]  # each old value's new one as JSON writes it


def _names(pairs: frozenset[tuple[str, str]]) -> _Names | None:
    """The names of ``pairs``; None if an old value has two new ones (a match does not know
    its path, so it could not tell which)."""
    found = _names_made.get(pairs)
    if found is None:
        new_for = dict(pairs)
        if len(new_for) != len(pairs):
            return None
        # A string whose bytes up to the next quote are an old value's holds no escape, so
        # that quote ends it, and its value is that old one. Not an old value with a
        # backslash or a control character, which JSON only holds escaped; one with a lone
        # surrogate gets bytes (surrogatepass) that no UTF-8 text holds.
        try:
            raw_old = {old.encode(): old for old in new_for}
        except UnicodeEncodeError:
            raw_old = {old.encode("utf-8", "surrogatepass"): old for old in new_for}
        if _NOT_RAW_STR("".join(new_for)):
            raw_old = {raw: old for raw, old in raw_old.items() if not _NOT_RAW(raw)}
        # What json.dumps(new) returns for a string, without its Python steps on the way.
        tokens = {old: encode_basestring_ascii(new).encode() for old, new in new_for.items()}
        if len(_names_made) >= _MAX_NAMES_MADE:
            _names_made.clear()
        found = _names_made[pairs] = _Names(new_for, raw_old, tokens)
    return found


_names_made: dict[frozenset[tuple[str, str]], _Names] = {}
_MAX_NAMES_MADE = 64


class _Located(NamedTuple):
    """What ``_found_by_key`` found in a body: the span and old value of each string to
    replace, in the order of the text, with how its members were found and read."""

    spans: list[tuple[int, int, str]]
    found: _Found
    reads: _Reads


def _found_by_key(body: bytes, replacements: Replacements, names: _Names) -> _Located | None:
    """The byte span and old value of each string to replace in ``body``, JSON in UTF-8,
    found by one search for the member names the paths end in; None where this cannot prove
    it found exactly the paths' values.

    The proof, for text that is valid JSON. Found ``"name"``, then ``:`` and ``"``: the
    second quote follows a letter, digit, ``_`` or ``-``, so it is not escaped and ends a
    string; the first one began it (no such character may follow a string's end outside a
    string) or sits, escaped, inside it. Either way the string is a member name ending in
    ``name``, and the one after the colon its string value, which the decoder reads: each
    match is a different member's value. Without a ``\\u00XX`` escape of one of the names'
    characters anywhere in the text, a member name has one spelling, so every path's value
    (a string of its caller's, the value of a member named by the path's last key) is among
    the matches holding an old value (its value is its caller's old one). So when those
    matches are exactly as many as the paths, they are the paths' values, each holding its
    path's old value; any other match (a repeated member, which json.loads reads as its last
    one, or an old value at a member no path leads to) makes one more, and the walk decides.
    Counting them by old value would say no more. Each old value must have one new one,
    since a match does not know its path.

    The text is searched as its UTF-8 bytes: each byte of a character beyond ASCII is above
    0x7f, so an ASCII pattern matches the bytes where it matches the text.
    """
    if () in replacements:
        return None
    # In C rather than a Python step per place: a request may rename thousands.
    keys = set(map(itemgetter(-1), replacements))
    if not all(type(key) is str and _PLAIN_KEY.fullmatch(key) for key in keys):
        return None
    found = _key_search(frozenset(keys)).scan(body)
    if found is None:
        return None
    reads = _read_values(body, found, names)
    if reads is None:
        return None
    if found.scanned is not None:
        found.scanned.read_for, found.scanned.reads = names, reads
    spans = list(filter(None, reads.spans))
    if len(spans) != len(replacements):
        return None
    return _Located(spans, found, reads)


def _read_values(body: bytes, found: _Found, names: _Names) -> _Reads | None:
    """What is read at each of ``found``'s members (``_Reads``); None where a read finds
    ``body`` no JSON, or cannot tell. Where ``body`` was searched as the one before it was,
    where both begin alike and end alike, what was read there is taken (moved, at the end),
    for the same names."""
    members = found.members
    before = found.before
    kept = before.reads if before is not None and before.read_for is names else None
    if kept is None:
        start, stop, spans, reach = 0, len(members), [], []
    else:
        # The reads that looked only at the bytes both begin with.
        start = bisect_right(kept.reach, found.shared, 0, found.head)
        stop = found.tail_at
        spans, reach = kept.spans[:start], kept.reach[:start]
    new_for, raw_old = names.new_for, names.raw_old
    append, reached = spans.append, reach.append
    startswith = body.startswith
    find = body.find
    furthest = reach[-1] if reach else 0
    for end in members[start:stop]:
        if startswith(b':"', end):  # compact JSON, as SDKs send it
            at = end + 1  # the value's opening quote
        else:
            colon = _COLON.match(body, end)
            if colon is None:
                # A string value, or a member whose value is no string: the colon's match
                # looked up to the byte it stopped at.
                append(None)
                looked = _UP_TO_VALUE.match(body, end).end() + 1
                furthest = max(furthest, looked)
                reached(furthest)
                continue
            at = colon.end() - 1
        close = find(b'"', at + 1)
        if close < 0:
            return None  # an unterminated string: not JSON
        looked = close + 1
        old = raw_old.get(body[at + 1 : close])
        if old is not None:
            append((at, looked, old))
        elif _NOT_RAW(body, at + 1, close):
            # An escape (the value may end at a later quote), or a string the decoder
            # refuses: read it as the decoder does.
            rest = _STRING_REST.match(body, at + 1)
            if rest is None:
                return None
            looked = rest.end()
            try:
                value = scanstring(body[at + 1 : looked].decode("utf-8"), 0)[0]
            except ValueError:
                return None
            append((at, looked, value) if value in new_for else None)
        else:
            append(None)  # its value is its bytes, and no old value's
        if looked > furthest:
            furthest = looked
        reached(furthest)
    if stop < len(members):
        # The rest are the members of the bytes both end with: each read looked only at
        # those, ``moved`` bytes further here. How far they looked is told no nearer than
        # it was there, moved (an earlier read of the old body may have looked further).
        first = len(before.members) - (len(members) - stop)
        moved = found.moved
        tail = kept.spans[first:]
        spans += tail if moved == 0 else [s and (s[0] + moved, s[1] + moved, s[2]) for s in tail]
        beyond = bisect_right(kept.reach, furthest - moved, first)
        reach += [furthest] * (beyond - first)
        tail_reach = kept.reach[beyond:]
        reach += tail_reach if moved == 0 else [r + moved for r in tail_reach]
    return _Reads(spans, reach, start, len(members) - stop)


def replace_strings(body: bytes, replacements: Replacements) -> bytes:
    """``body``, JSON in UTF-8, with the string at each path, ``old`` as its caller read it,
    replaced by the JSON encoding of ``new``: ``replace_values(body.decode(), {where: new})``
    in UTF-8, byte for byte, found by one search where it can be (``_found_by_key``), by the
    walk where not. UnicodeDecodeError when ``body`` is not UTF-8."""
    if not body.isascii():
        body.decode("utf-8")  # the check only: the search reads the bytes
    names = _names(frozenset(replacements.values()))
    located = None if names is None else _found_by_key(body, replacements, names)
    if located is None:
        new_values = {where: new for where, (_, new) in replacements.items()}
        return replace_values(body.decode("utf-8"), new_values).encode("utf-8")
    scanned = located.found.scanned
    if scanned is None:  # a body not kept for the next (too small or too large)
        tokens = names.tokens
        # The pieces between are views, not copies: join copies each byte once, not twice.
        view = memoryview(body)
        pieces = []
        append = pieces.append
        done = 0
        for start, end, old in located.spans:  # in the order of the text, none inside another
            append(view[done:start])
            append(tokens[old])
            done = end
        append(view[done:])
        return b"".join(pieces)
    out, made = _renamed(body, located, names)
    scanned.made_for, scanned.made = names, made
    return out


def _renamed(body: bytes, located: _Located, names: _Names) -> tuple[bytes, _Made]:
    """``body`` renamed at ``located``'s spans, and what was made of it for the next body.
    Where it begins and ends as the body before it (``_Found``), and its reads there were
    taken from that one's, the bytes made of those are taken from what was made of it: at
    100 tools, the step per renamed place was half of the splice (issue 25)."""
    spans, found, reads = located
    tokens = names.tokens
    view = memoryview(body)
    before = found.before
    made = before.made if before is not None and before.made_for is names else None
    if made is None:
        head = tail = 0
        pieces, done, end_at = [], 0, len(body)
        shifts = [0]
    else:
        # Its first ``head`` replacements are the first ones of the body before, its last
        # ``tail`` that body's last ones, moved (the reads taken from it, less those that
        # found no string to replace).
        head = reads.head - reads.spans[: reads.head].count(None)
        tail = reads.tail - reads.spans[len(reads.spans) - reads.tail :].count(None)
        old_spans, old_shifts = made.spans, made.shifts
        # The bytes both begin with, up to the first replacement of either that is not one
        # of the head: made of the same bytes, so the same there.
        done = found.shared
        if head < len(spans):
            done = min(done, spans[head][0])
        if head < len(old_spans):
            done = min(done, old_spans[head][0])
        out_view = memoryview(made.out)
        pieces = [out_view[: done + old_shifts[head]]]
        shifts = old_shifts[: head + 1]
        # From the tail's first replacement on, the body is the one before's, moved.
        end_at = spans[len(spans) - tail][0] if tail else len(body)
    append = pieces.append
    shift = shifts[-1]
    for start, end, old in spans[head : len(spans) - tail]:
        token = tokens[old]
        append(view[done:start])
        append(token)
        done = end
        shift += len(token) - (end - start)
        shifts.append(shift)
    append(view[done:end_at])
    if tail:
        first = len(old_spans) - tail
        append(out_view[end_at - found.moved + old_shifts[first] :])
        # The tail's shifts are the body before's, plus what this body's other
        # replacements add more than that one's.
        more = shift - old_shifts[first]
        rest = old_shifts[first + 1 :]
        shifts += rest if more == 0 else map(more.__add__, rest)
    out = b"".join(pieces)
    return out, _Made(out, spans, shifts)
