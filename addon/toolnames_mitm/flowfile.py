"""A mitmproxy flow file as a run of records, read for its framing only: how many whole
records it starts with, what is wrong where they stop, and where whole records start again.

A flow file is tnetstrings back to back, one per flow: ``<length>:<payload>}``. A record cut
by a kill or a full disk declares more bytes than it holds, so a flow appended after it is
read as the rest of it, and every reader (mitmdump -nr, mitmproxy's FlowReader) stops there.
toolnames_save looks before it appends (save.py); scripts/scan reads past the damage with it.
"""

from __future__ import annotations

import mmap
import os
import re
from typing import BinaryIO
from typing import NamedTuple

from mitmproxy.io import tnetstring

__all__ = ["Layout", "is_flow_record", "layout", "layout_of", "next_record"]

# A length prefix: up to 12 digits, as mitmproxy's tnetstring reader allows.
LENGTH = re.compile(rb"([0-9]{1,12}):")
DIGITS = re.compile(rb"[0-9]{1,12}:")
DICT = ord("}")


class Layout(NamedTuple):
    """What a flow file holds, by its framing."""

    flows: int  # whole records from the start of the file
    end: int  # where the last of them ends: where the damage starts, if there is any
    size: int
    damage: str | None  # what is wrong at ``end``; None when the file is whole
    resumes: int | None  # where whole flow records start again after the damage, if they do
    cut: bool = False  # the damage is a flow record cut short

    @property
    def cut_tail(self) -> bool:
        """Damaged only at its end, by a record cut short: what a kill or a full disk leaves."""
        return self.cut and self.resumes is None


def is_flow_record(data: bytes) -> bool:
    """Whether ``data`` is one whole tnetstring holding a flow's state."""
    try:
        loaded = tnetstring.loads(data)
    except Exception:  # noqa: BLE001 - whatever a damaged record makes the parser raise
        return False
    return isinstance(loaded, dict) and "type" in loaded and "version" in loaded


def layout(fo: BinaryIO) -> Layout:
    """The layout of the flow file open as ``fo`` (a regular file, read from its start)."""
    size = os.fstat(fo.fileno()).st_size
    if size == 0:
        return Layout(0, 0, 0, None, None)
    with mmap.mmap(fo.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return layout_of(data, size)


def layout_of(data: bytes | mmap.mmap, size: int) -> Layout:
    pos = flows = 0
    last = 0
    damage = None
    cut = False
    while pos < size:
        m = LENGTH.match(data, pos)
        if m is None:
            head = data[pos : pos + 13]
            if head.isdigit() and pos + len(head) == size:
                damage, cut = "the file ends inside a record's length", True
            else:
                damage = f"no flow record starts at byte {pos} ({bytes(data[pos : pos + 8])!r}…)"
            break
        stop = m.end() + int(m[1]) + 1
        if stop > size:
            damage = f"a record declares {stop - pos} bytes and only {size - pos} remain"
            # Cut short if what is there begins as a flow's state does: its first key.
            rest = data[m.end() : m.end() + 13]
            cut = (
                not rest
                or bool(LENGTH.match(rest))
                or (rest.isdigit() and m.end() + len(rest) == size)
            )
            break
        if data[stop - 1] != DICT:
            damage = "a record does not end where its length says"
            break
        flows += 1
        last, pos = pos, stop
    else:
        # Every record is framed whole: the last one, written last, must also parse whole.
        if is_flow_record(data[last:size]):
            return Layout(flows, size, size, None, None)
        flows, pos = flows - 1, last
        damage = "the last record is not a whole flow"
    return Layout(flows, pos, size, damage, next_record(data, pos + 1, size), cut)


def next_record(data: bytes | mmap.mmap, start: int, size: int) -> int | None:
    """Where the first whole flow record at or after ``start`` begins; None if none does."""
    for m in DIGITS.finditer(data, start):
        colon = m.end() - 1
        # The cut record's last digits may run into the next record's length prefix.
        for begin in range(m.start(), colon):
            stop = colon + 1 + int(data[begin:colon]) + 1
            if stop <= size and data[stop - 1] == DICT and is_flow_record(data[begin:stop]):
                return begin
    return None
