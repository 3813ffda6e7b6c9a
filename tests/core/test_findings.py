"""The finding makers adapters and sessions share (findings.py)."""

import pytest

from toolnames_core.findings import bad_choice
from toolnames_core.findings import malformed
from toolnames_core.findings import shown
from toolnames_core.findings import type_name


@pytest.mark.parametrize(
    "value,name",
    [({}, "an object"), ([], "an array"), ("", "a string"), (True, "a boolean"), (1, "a number"),
     (1.5, "a number"), (None, "null")],
)  # fmt: skip
def test_a_json_type_is_named_as_a_json_user_would(value, name):
    assert type_name(value) == name


def test_malformed_and_bad_choice_say_where_what_and_what_was_expected():
    finding = malformed(("tools", 0), "an object", [1])
    assert (finding.code, finding.path) == ("tool-malformed", "tools[0]")
    assert finding.message == "tools[0] is an array, expected an object"
    choice = bad_choice(("tool_choice",), {"type": "tool"}, "expected a name")
    assert choice.code == "choice-malformed"
    assert choice.message == 'tool_choice {"type": "tool"}: expected a name'


def test_shown_never_raises_even_on_deep_nesting():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert shown(deep) == "an array"
    assert len(shown("x" * 1000)) == 120
