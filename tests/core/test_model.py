"""The plain data the adapters, checks and fixes share (model.py)."""

import pytest

from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import SkippedFix
from toolnames_core.model import count_text
from toolnames_core.model import format_path
from toolnames_core.model import tool_set


@pytest.mark.parametrize(
    "where,path",
    [
        (("tools", 3, "function", "name"), "tools[3].function.name"),
        (
            ("contents", 0, "parts", 1, "functionCall", "name"),
            "contents[0].parts[1].functionCall.name",
        ),
        ((0, "name"), "[0].name"),
        ((), ""),
    ],
)
def test_a_path_is_printed_as_providers_print_it(where, path):
    assert format_path(where) == path


@pytest.mark.parametrize(
    "severities,text",
    [
        ([], "none"),
        (["error"], "1 error"),
        (["warning", "error", "error", "info"], "2 errors, 1 warning, 1 info"),
    ],
)
def test_count_text_names_each_severity_once_worst_first(severities, text):
    assert count_text(severities) == text


def test_a_finding_and_a_skipped_fix_become_the_dicts_flow_metadata_holds():
    finding = Finding("name-empty", "error", "tools[0].name", "empty", "openai")
    assert finding.to_dict() == {
        "code": "name-empty",
        "severity": "error",
        "path": "tools[0].name",
        "message": "empty",
        "rule": "openai",
    }
    assert "rule" not in Finding("request-unreadable", "warning", "", "x").to_dict()
    assert SkippedFix("p", "n", "why").to_dict() == {"path": "p", "name": "n", "reason": "why"}


def test_built_in_tools_are_offered_apart_from_functions():
    view = RequestView(
        "openai-responses",
        tools=[
            NameRef("search", ("tools", 0, "name")),
            NameRef("web_search", ("tools", 1), "builtin"),
        ],
    )
    assert view.offered_names == {"search"}
    assert view.offered_builtins == {"web_search"}


def test_a_path_rendered_again_is_rendered_alike(monkeypatch):
    from toolnames_core import model

    monkeypatch.setattr(model, "_MAX_SHOWN_PATHS", 2)
    monkeypatch.setattr(model, "_shown_paths", {})
    paths = [("tools", i, "function", "name") for i in range(5)]
    for _ in range(2):
        assert [format_path(w) for w in paths] == [f"tools[{i}].function.name" for i in range(5)]
    assert len(model._shown_paths) <= 2  # bounded


def test_the_same_tools_are_one_tool_set_and_any_other_place_kind_or_namespace_another(
    monkeypatch,
):
    from toolnames_core import model

    monkeypatch.setattr(model, "_tool_sets", {})
    monkeypatch.setattr(model, "_tools_held", 0)

    def tools(*refs: tuple) -> list[NameRef]:
        return [NameRef(name, where, kind, space) for name, where, kind, space in refs]

    one = ("a", ("tools", 0), "function", None)
    known = tool_set(tools(one))
    known.remember(("check", "openai"), rule := object(), ("made",))
    assert tool_set(tools(one)) is known  # new refs, the same tools
    assert known.remembered(("check", "openai"), rule) == ("made",)
    assert known.remembered(("check", "openai"), object()) is None  # another rule, same id
    for other in (
        ("a", ("tools", 1), "function", None),
        ("a", ("tools", 0), "builtin", None),
        ("a", ("tools", 0), "function", "space"),
    ):
        fresh = tool_set(tools(other))
        assert fresh is not known and not fresh.derived
        assert tool_set(tools(other)) is fresh


def test_the_very_refs_of_the_last_tool_set_are_that_tool_set_without_a_step_per_tool(
    monkeypatch,
):
    from toolnames_core import model

    # An adapter shares the refs it read between requests that sent the same tools
    # (formats/base.py read_once): they are the last tool set, told without its tuples.
    made = []
    tool_set_of = model._tool_set_of
    monkeypatch.setattr(model, "_tool_set_of", lambda refs: made.append(refs) or tool_set_of(refs))
    size = model._LAST_TOOL_SET_FROM  # fewer: their tuples cost less than the check
    refs = [NameRef(f"t{i}", ("tools", i)) for i in range(size)]
    names = tuple(f"t{i}" for i in range(size))
    known = tool_set(refs)
    assert tool_set(list(refs)) is known and len(made) == 1
    # Other refs, one of them another object or one more: made (the same tools found again).
    again = [*refs[:-1], NameRef(f"t{size - 1}", ("tools", size - 1))]
    assert tool_set(again) is known and len(made) == 2
    assert tool_set([*again, NameRef("x", ("tools", size))]).names == (*names, "x")
    assert tool_set(again[:-1]).names == names[:-1] and len(made) == 4
    assert tool_set(again[:-1]).names == names[:-1] and len(made) == 5  # a few: made again


def test_tool_sets_are_bounded_by_the_tools_they_hold(monkeypatch):
    from toolnames_core import model

    monkeypatch.setattr(model, "_tool_sets", {})
    monkeypatch.setattr(model, "_tools_held", 0)
    monkeypatch.setattr(model, "_MAX_TOOLS_HELD", 10)
    for i in range(20):
        tool_set([NameRef(f"t{i}.{j}", ("tools", j)) for j in range(4)])
        assert model._tools_held == sum(len(t.names) for t in model._tool_sets.values()) <= 10
    tool_set([NameRef(f"t{j}", ("tools", j)) for j in range(12)])  # more than it holds: kept
    assert list(model._tool_sets) == [tuple(f"t{j}" for j in range(12))]
