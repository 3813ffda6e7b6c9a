"""What the OpenAI adapters share (formats/openai_common.py): the function-object reader, with
its parameters, and the parallel-call wrapper: the calls inside it, and when a call is the
wrapper."""

import json
import operator

import pytest

from toolnames_core import codes
from toolnames_core.findings import malformed
from toolnames_core.formats.openai_common import PARALLEL_WRAPPERS
from toolnames_core.formats.openai_common import FunctionObjects
from toolnames_core.formats.openai_common import function_name
from toolnames_core.formats.openai_common import is_parallel_wrapper
from toolnames_core.formats.openai_common import read_function_calls
from toolnames_core.formats.openai_common import read_function_tools
from toolnames_core.formats.openai_common import unwrap_parallel
from toolnames_core.formats.openai_common import with_unwrapped
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView


def _other(where, kind):
    return malformed(where, '"function" or "custom"', kind)


EMPTY = Finding(codes.TOOLS_EMPTY, "error", "tools", "tools is an empty array")
STRICT = FunctionObjects(("function", "custom"), default=None, other=_other, empty=EMPTY)
LENIENT = FunctionObjects(("function",), default="function", other=None)
OBJECTS = [
    {"type": "function", "function": {"name": "get_weather"}},
    {"type": "custom", "custom": {"name": "run_sql"}},
    {"function": {"name": "no_type"}},
    {"type": "web_search", "function": {"name": "other_type"}},
    {"type": "function", "function": {"name": 7}},
    {"type": "function", "function": "get_weather"},
    {"type": "custom"},
    "get_weather",
    None,
    [],
]


def _read(obj, objects):
    view = RequestView("test")
    ref = function_name(obj, ("tools", 0), view, objects)
    return ref, [(p.code, p.path, p.message) for p in view.problems]


def test_the_parameters_decide_the_type_and_the_empty_list():
    assert _read(OBJECTS[1], STRICT)[0] == NameRef(
        "run_sql", ("tools", 0, "custom", "name"), "custom"
    )
    assert _read(OBJECTS[1], LENIENT) == (
        None,
        [
            (
                codes.TOOL_MALFORMED,
                "tools[0].function",
                "tools[0].function is null, expected an object",
            )
        ],
    )
    # No type: the default's, or the finding when the format wants one said.
    assert _read(OBJECTS[2], LENIENT)[0] == NameRef("no_type", ("tools", 0, "function", "name"))
    assert _read(OBJECTS[2], STRICT) == (
        None,
        [
            (
                codes.TOOL_MALFORMED,
                "tools[0].type",
                'tools[0].type is null, expected "function" or "custom"',
            )
        ],
    )
    # Another type: the finding, or read as of the default type when `other` is None.
    assert _read(OBJECTS[3], STRICT)[0] is None
    assert _read(OBJECTS[3], LENIENT)[0] == NameRef("other_type", ("tools", 0, "function", "name"))
    for objects, problems in ((STRICT, [EMPTY]), (LENIENT, [])):
        view = RequestView("test")
        read_function_tools([], view, objects)
        assert (view.tools_given, view.problems) == (True, problems)


def test_a_name_missing_or_not_a_string_is_said_where():
    assert _read(OBJECTS[4], LENIENT)[1] == [
        (
            codes.TOOL_MALFORMED,
            "tools[0].function.name",
            "tools[0].function.name is a number, expected a string",
        )
    ]
    assert _read(OBJECTS[5], LENIENT)[1] == [
        (
            codes.TOOL_MALFORMED,
            "tools[0].function",
            "tools[0].function is a string, expected an object",
        )
    ]
    assert _read(OBJECTS[7], STRICT)[1] == [
        (codes.TOOL_MALFORMED, "tools[0]", "tools[0] is a string, expected an object")
    ]


@pytest.mark.parametrize("objects", [STRICT, LENIENT], ids=["strict", "lenient"])
def test_reading_a_list_gives_each_objects_name_or_finding_in_order(objects):
    """The lists' loop settles well-formed objects itself (a fast path): it must read each one
    as function_name does, in tools and in a history message's calls alike."""
    expected = RequestView("test")
    refs = [function_name(obj, ("tools", i), expected, objects) for i, obj in enumerate(OBJECTS)]
    tools = RequestView("test")
    read_function_tools(OBJECTS, tools, objects)
    assert (tools.tools, tools.problems) == ([r for r in refs if r], expected.problems)
    assert len(tools.tools) >= 2 and len(tools.problems) >= 5

    history = RequestView("test")
    where = ("messages", 1, "tool_calls")
    read_function_calls(OBJECTS, where, history, objects)
    assert [r.where[:3] for r in history.history] == [where] * len(tools.tools)
    assert [r.where[3:] for r in history.history] == [r.where[1:] for r in tools.tools]
    read_function_calls({"not": "a list"}, where, history, objects)
    assert history.problems[-1].path == "messages[1].tool_calls"


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


def test_the_same_list_of_tools_again_is_read_once_and_its_refs_are_never_changed():
    # The fast reader hands the same list again for the same bytes of tools (readers.py):
    # its names and findings are read once (issue 25), for any views, as they read it.
    tools = list(OBJECTS)
    first, second = RequestView("test"), RequestView("test")
    read_function_tools(tools, first, STRICT)
    read_function_tools(tools, second, STRICT)
    assert second.tools == first.tools and len(first.tools) == 2
    assert all(map(operator.is_, second.tools, first.tools))
    assert second.problems == first.problems and len(first.problems) == 8
    # A view moved under a prefix (a carried body) moves its own refs, not the shared ones.
    kept, moved = RequestView("test"), RequestView("test")
    read_function_tools(tools, kept, LENIENT)  # another format's reading: read as that one
    assert [ref.name for ref in kept.tools] == ["get_weather", "no_type", "other_type"]
    read_function_tools(tools, moved, LENIENT)
    assert moved.tools[0] is kept.tools[0]
    moved.move_under(("body",))
    assert moved.tools[0].where == ("body", "tools", 0, "function", "name")
    assert kept.tools[0].where == ("tools", 0, "function", "name")
    # Another list, even of the same objects, is read as it is.
    other = RequestView("test")
    read_function_tools([OBJECTS[1], *tools], other, LENIENT)
    assert [ref.where[1] for ref in other.tools] == [1, 3, 4]
