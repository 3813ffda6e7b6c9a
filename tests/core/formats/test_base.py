"""What every adapter is made of (formats/base.py), and the explicit list of adapters."""

import pkgutil

import pytest

from toolnames_core import formats
from toolnames_core.formats import FORMATS
from toolnames_core.formats.base import BlockResponse
from toolnames_core.formats.base import bad_choice
from toolnames_core.formats.base import malformed
from toolnames_core.formats.base import shown
from toolnames_core.formats.base import type_name


def test_every_adapter_module_is_in_the_table_once():
    adapters = {m.name for m in pkgutil.iter_modules(formats.__path__)} - {"base"}
    assert {FORMATS[api].read_request.__module__.rsplit(".", 1)[1] for api in FORMATS} == adapters
    assert len(FORMATS) == len(adapters)


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


def test_a_block_answer_is_a_named_record():
    answer = BlockResponse(400, {"content-type": "application/json"}, b"{}")
    assert answer.status == 400 and answer.body == b"{}"
