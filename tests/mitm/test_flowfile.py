"""A flow file read for its framing (flowfile.py): whole records, a cut tail, damage with
whole flows after it."""

import pytest
from mitmproxy.io import tnetstring
from mitmproxy.test import tflow

from toolnames_mitm import flowfile


def records(n: int) -> list[bytes]:
    return [tnetstring.dumps(tflow.tflow(resp=True).get_state()) for _ in range(n)]


def test_a_whole_file_has_no_damage():
    data = b"".join(records(3))
    assert flowfile.layout_of(data, len(data)) == flowfile.Layout(
        3, len(data), len(data), None, None
    )


def test_an_empty_file_is_whole(tmp_path):
    path = tmp_path / "empty.mitm"
    path.write_bytes(b"")
    with open(path, "rb") as fo:
        assert flowfile.layout(fo).damage is None


@pytest.mark.parametrize("keep", [1, 3, 5, 9, 100, 700, -2, -1])
def test_a_record_cut_anywhere_is_a_cut_tail_after_the_whole_ones(keep):
    whole = records(2)
    last = records(1)[0]
    data = b"".join(whole) + last[:keep]
    found = flowfile.layout_of(data, len(data))
    assert found.cut_tail, found
    assert (found.flows, found.end) == (2, len(b"".join(whole)))


def test_a_cut_record_with_flows_written_after_it_is_not_a_cut_tail():
    first, cut, after, more = records(4)
    data = first + cut[: len(cut) // 2] + after + more
    found = flowfile.layout_of(data, len(data))
    assert found.flows == 1 and found.end == len(first) and not found.cut_tail
    assert found.resumes == len(first) + len(cut) // 2


def test_a_cut_records_digits_running_into_the_next_length_are_told_apart():
    # The cut keeps "...12" and the next record starts "1688:": "121688:" holds the start.
    first, after = records(2)
    data = first[:-3] + b"12" + after
    assert flowfile.next_record(data, 1, len(data)) == len(first) - 1


def test_a_file_of_something_else_is_not_cut():
    data = b"12:30 meeting notes, nothing like a flow\n"
    found = flowfile.layout_of(data, len(data))
    assert (found.flows, found.cut, found.resumes) == (0, False, None)


def test_the_layout_of_an_open_file(tmp_path):
    path = tmp_path / "f.mitm"
    path.write_bytes(b"".join(records(2)) + b"99999:")
    with open(path, "rb") as fo:
        found = flowfile.layout(fo)
    assert found.flows == 2 and found.cut_tail
