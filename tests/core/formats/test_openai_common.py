"""OpenAI's parallel-call wrapper (formats/openai_common.py): the calls inside it, and when a
call is the wrapper."""

import json

import pytest

from toolnames_core.formats.openai_common import PARALLEL_WRAPPERS
from toolnames_core.formats.openai_common import is_parallel_wrapper
from toolnames_core.formats.openai_common import unwrap_parallel
from toolnames_core.formats.openai_common import with_unwrapped
from toolnames_core.model import NameRef

WRAPPER = NameRef(
    "multi_tool_use.parallel", ("choices", 0, "message", "tool_calls", 0, "function", "name")
)
BASE = "choices[0].message.tool_calls[0].function.arguments.tool_uses"
USES = {
    "tool_uses": [
        {"recipient_name": "functions.get_weather", "parameters": {}},
        {"recipient_name": "get_time", "parameters": {}},  # no prefix: the name as it is
        {"parameters": {}},  # no recipient: nothing to read
        "not an object",
        {"recipient_name": 7},
    ]
}  # fmt: skip


@pytest.mark.parametrize("arguments", [USES, json.dumps(USES)], ids=["parsed", "json text"])
def test_the_calls_inside_a_wrapper_are_read_from_its_tool_uses(arguments):
    inner = unwrap_parallel(WRAPPER, arguments)
    assert [(c.name, c.path, c.kind) for c in inner] == [
        ("get_weather", f"{BASE}[0].recipient_name", "function"),
        ("get_time", f"{BASE}[1].recipient_name", "function"),
    ]


@pytest.mark.parametrize(
    "arguments", ["{not json", "[" * 100_000, "[]", {"tool_uses": {}}, None, 3, ""]
)
def test_arguments_that_hold_no_list_of_uses_give_no_calls(arguments):
    assert unwrap_parallel(WRAPPER, arguments) == []


def test_with_unwrapped_puts_a_wrappers_calls_after_it_and_reads_no_other_arguments():
    other = NameRef("lookup", ("x", "name"))
    found = with_unwrapped([(other, json.dumps(USES)), (WRAPPER, json.dumps(USES))])
    assert [c.name for c in found] == [
        "lookup",
        "multi_tool_use.parallel",
        "get_weather",
        "get_time",
    ]


@pytest.mark.parametrize("name", PARALLEL_WRAPPERS)
def test_a_wrapper_is_a_wrapper_unless_a_tool_of_its_name_was_offered(name):
    assert is_parallel_wrapper(name, {"get_weather"})
    assert not is_parallel_wrapper(name, {name})
    assert not is_parallel_wrapper("get_weather", set())
