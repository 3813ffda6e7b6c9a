"""Replacing one value inside JSON text (jsonsplice.py) while every other byte stays put."""

import json
import re

import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from toolnames_core.jsonsplice import replace_strings
from toolnames_core.jsonsplice import replace_values
from toolnames_core.jsonsplice import value_span


def assert_only_span_changed(text: str, where: tuple, new: object) -> str:
    start, end = value_span(text, where)
    out = replace_values(text, {where: new})
    assert out[:start] == text[:start]
    assert out[start:] == json.dumps(new) + text[end:]
    return out


@pytest.mark.parametrize(
    "text,where,value",
    [
        ('{"a": "x"}', ("a",), '"x"'),
        ('{"a": {"b": [1, {"c": "x"}]}}', ("a", "b", 1, "c"), '"x"'),
        ('{"a": {"b": [1, {"c": "x"}]}}', ("a", "b"), '[1, {"c": "x"}]'),
        ('[10, [20, 30], "x"]', (1, 1), "30"),
        ('  {"a" :\n\t[ true , null ,{ "b":"x" } ] }  ', ("a", 2, "b"), '"x"'),
        # Strings that hold brackets, commas and escaped quotes are skipped as strings.
        ('{"s": "]},\\"[{", "t": "x"}', ("t",), '"x"'),
        # Numbers in every JSON form, and the constants json.loads also accepts.
        ('{"n": [-0, 1.5e+3, 2E-2, 0.25], "t": "x"}', ("t",), '"x"'),
        ('{"n": [NaN, Infinity, -Infinity], "t": "x"}', ("t",), '"x"'),
        # An escaped member name is compared by its value, as json.loads reads it.
        ('{"na\\u006de": "x"}', ("name",), '"x"'),
        # The path () is the whole document, surrounding whitespace excluded.
        ('  {"a": 1} ', (), '{"a": 1}'),
    ],
)
def test_value_span_points_at_the_value_at_a_path(text, where, value):
    start, end = value_span(text, where)
    assert text[start:end] == value
    value_at = json.loads(text)
    for key in where:
        value_at = value_at[key]
    assert json.loads(text[start:end]) == value_at


@pytest.mark.parametrize(
    "text,where",
    [
        ('{"a": "x"}', ("b",)),
        ('{"a": []}', ("a", 0)),
        ('{"a": ["x"]}', ("a", 1)),
        ("{}", ("a",)),
    ],
)
def test_value_span_raises_key_error_for_a_path_that_is_not_there(text, where):
    with pytest.raises(KeyError):
        value_span(text, where)


def test_a_repeated_key_resolves_to_the_last_one_like_json_loads():
    text = '{"k": "first", "other": 1, "k": "last"}'
    out = assert_only_span_changed(text, ("k",), "new")
    assert out == '{"k": "first", "other": 1, "k": "new"}'
    assert json.loads(out)["k"] == "new"


def test_a_repeated_parent_key_is_followed_to_the_last_one_like_json_loads():
    text = '{"o": {"n": "a"}, "o": {"n": "b"}}'
    out = assert_only_span_changed(text, ("o", "n"), "new")
    assert out == '{"o": {"n": "a"}, "o": {"n": "new"}}'
    assert json.loads(out) == {"o": {"n": "new"}}


def test_whitespace_escapes_and_raw_unicode_outside_the_value_are_kept_byte_for_byte():
    text = (
        '{\r\n  "caf\\u00e9" :\t"\\u00e9t\\u00e9 \\/ \\"q\\"",\n'
        '  "raw": "déjà vu 😀",\n  "tool_choice" : {"function":{ "name" : "search.web" }}\n}\n'
    )
    out = assert_only_span_changed(text, ("tool_choice", "function", "name"), "search_web")
    assert out == text.replace('"search.web"', '"search_web"')


def test_the_new_value_is_written_as_json():
    text = '{"a": "x", "b": 2}'
    out = replace_values(text, {("a",): 'say "hi"\n'})
    assert out == '{"a": "say \\"hi\\"\\n", "b": 2}'
    assert json.loads(out)["a"] == 'say "hi"\n'


def test_several_values_are_replaced_at_once_whatever_their_order():
    text = '{"a": ["x", "y"], "b": {"c": "z"}}'
    replacements = {("b", "c"): "Z", ("a", 0): "X", ("a", 1): "Y"}
    out = replace_values(text, replacements)
    assert out == '{"a": ["X", "Y"], "b": {"c": "Z"}}'


def test_a_utf8_byte_order_mark_is_read_past_and_kept():
    # json.loads(bytes) accepts it (utf-8-sig), so fix mode meets it.
    text = '\ufeff{"a": "x"}'
    assert replace_values(text, {("a",): "y"}) == '\ufeff{"a": "y"}'


def test_deep_nesting_is_skipped_without_recursion():
    deep = "[" * 100_000 + "]" * 100_000
    text = '{"deep": ' + deep + ', "name": "x"}'
    out = assert_only_span_changed(text, ("name",), "y")
    assert out.endswith(', "name": "y"}')


def test_a_path_deeper_than_the_recursion_limit_is_followed():
    depth = 1_500
    text = "[" * depth + '"x"' + "]" * depth
    out = replace_values(text, {(0,) * depth: "y"})
    assert out == "[" * depth + '"y"' + "]" * depth


# Any JSON document, written with any of the separators clients use, and a path to one of its
# strings: the splice must agree with json.loads on where that string is.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


def _string_paths(value, where=()):
    if isinstance(value, str):
        yield where
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _string_paths(item, (*where, i))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_paths(item, (*where, key))


@settings(max_examples=300, deadline=None)
@given(
    doc=st.dictionaries(st.text(max_size=5), json_values, min_size=1, max_size=5),
    indent=st.sampled_from([None, 0, 2, "\t"]),
    separators=st.sampled_from([(", ", ": "), (",", ":"), (" , ", " : ")]),
    ensure_ascii=st.booleans(),
    new=st.text(),
    data=st.data(),
)
def test_replacing_any_string_changes_only_that_string(
    doc, indent, separators, ensure_ascii, new, data
):
    paths = list(_string_paths(doc))
    if not paths:
        return
    where = data.draw(st.sampled_from(paths))
    text = json.dumps(doc, indent=indent, separators=separators, ensure_ascii=ensure_ascii)
    out = assert_only_span_changed(text, where, new)
    expected = json.loads(text)
    target = expected
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = new
    assert json.loads(out) == expected


def test_many_values_are_found_in_one_pass_over_the_text(monkeypatch):
    # Fix mode renames every tool of a request: a pass per name read a 1,000-tool body 1,000
    # times over (a second per request at 100 tools). Count what is skipped, not the time.
    from toolnames_core import jsonsplice

    skipped = []
    real_skip = jsonsplice._skip_value

    def counting_skip(text, pos):
        end = real_skip(text, pos)
        skipped.append(end - pos)
        return end

    monkeypatch.setattr(jsonsplice, "_skip_value", counting_skip)
    tools = [{"function": {"name": f"t.{i}", "description": "d" * 50}} for i in range(300)]
    text = json.dumps({"messages": ["m" * 1000], "tools": tools, "tool_choice": "auto"})
    paths = {("tools", i, "function", "name"): f"t_{i}" for i in range(300)}

    out = replace_values(text, paths)

    assert [t["function"]["name"] for t in json.loads(out)["tools"]] == list(paths.values())
    assert sum(skipped) <= len(text)  # each byte at most once


# -- replace_strings: fix mode's search for the strings it renames -----------------------------

# Documents full of the member names and values a search could take for one another: names
# that are keys elsewhere, values repeated at other places, names spelt with escapes.
_NAMES = ["get.weather", "name", "a.b", "é.x", 'say "hi"', "", "\\u006e", "x"]
_KEYS = ["name", "type", "tool", "na\\me", "Name", "n-1"]
name_docs = st.recursive(
    st.none() | st.integers() | st.sampled_from(_NAMES),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(_KEYS), children, max_size=4)
    ),
    max_leaves=25,
)


def _member_strings(doc) -> dict[tuple, str]:
    """Each string of ``doc`` that is an object's member, by its path."""
    out = {}
    for where in _string_paths(doc):
        if where and isinstance(where[-1], str):
            value = doc
            for key in where:
                value = value[key]
            out[where] = value
    return out


def assert_as_the_walk(text: str, replacements: dict) -> str:
    out = replace_strings(text.encode(), replacements)
    walked = replace_values(text, {where: new for where, (_, new) in replacements.items()})
    assert out == walked.encode()
    return walked


@settings(max_examples=500, deadline=None)
@given(
    doc=st.dictionaries(st.sampled_from(_KEYS), name_docs, min_size=1, max_size=5),
    indent=st.sampled_from([None, 2]),
    separators=st.sampled_from([(",", ":"), (", ", ": "), (" , ", " : ")]),
    ensure_ascii=st.booleans(),
    one_new_each=st.booleans(),
    data=st.data(),
)
def test_the_search_replaces_exactly_what_the_walk_does(
    doc, indent, separators, ensure_ascii, one_new_each, data
):
    strings = _member_strings(doc)
    if not strings:
        return
    chosen = data.draw(st.lists(st.sampled_from(sorted(strings, key=repr)), unique=True))
    text = json.dumps(doc, indent=indent, separators=separators, ensure_ascii=ensure_ascii)
    replacements = {
        where: (strings[where], f"{strings[where]}_1" if one_new_each else data.draw(st.text()))
        for where in chosen
    }
    assert_as_the_walk(text, replacements)


@pytest.mark.parametrize(
    "text",
    [
        # A repeated member: json.loads keeps the last one, the search would see both.
        '{"f": {"name": "a.b", "name": "a.b"}}',
        '{"f": {"name": "a.b"}, "f": {"name": "a.b"}}',
        # The member name spelt with an escape, which the search does not look for.
        '{"f": {"na\\u006de": "a.b"}, "g": {"name": "a.b"}}',
        '{"f": {"name": "a.b"}, "g": {"nam\\u0065": "c"}}',
        # Names and values inside strings, behind escaped quotes and escaped backslashes.
        '{"s": "{\\"name\\":\\"a.b\\"}", "f": {"name": "a.b"}}',
        '{"x\\"name": "a.b", "f": {"name": "a.b"}}',
        '{"x\\\\": 1, "f": {"name": "a.b"}}',
        # The same string as a value at a member not being renamed, and as a member name.
        '{"f": {"name": "a.b"}, "g": {"name": "a.b"}, "a.b": {"name": "a.b"}}',
        # Whitespace everywhere JSON allows it.
        '{ "f" : { "name"\n:\t"a.b" } , "g":{"name" :"z"}}',
    ],
)
def test_the_search_gives_the_walks_answer_where_it_cannot_prove_its_own(text):
    assert_as_the_walk(text, {("f", "name"): ("a.b", "a_b_1")})


@pytest.mark.parametrize("backslashes", [0, 1, 15, 16, 17, 40])
@pytest.mark.parametrize("name", ["na\\u006de", "na\\u006De", "nam\\u0065"])
def test_an_escaped_member_name_is_seen_behind_any_number_of_backslashes(backslashes, name):
    # The escape check looks at the first backslashes one by one, then searches: an escape
    # must be seen in either part, or the search would rename the member at "g".
    lines = "\\n" * backslashes
    text = '{"s": "' + lines + '", "f": {"' + name + '": "a.b"}, "g": {"name": "a.b"}}'
    out = assert_as_the_walk(text, {("f", "name"): ("a.b", "a_b_1")})
    assert json.loads(out)["f"] == {"name": "a_b_1"}
    assert json.loads(out)["g"] == {"name": "a.b"}


def test_one_old_name_sent_as_two_new_ones_is_left_to_the_walk():
    text = '{"a": {"name": "x"}, "b": {"name": "x"}}'
    out = assert_as_the_walk(text, {("a", "name"): ("x", "y"), ("b", "name"): ("x", "z")})
    assert out == '{"a": {"name": "y"}, "b": {"name": "z"}}'


def test_an_sdk_body_is_renamed_by_one_search_without_the_walk(monkeypatch):
    # Fix mode renames every tool of an agent's request: the walk read past every schema in
    # Python, at three times the cost of a json.loads of the body.
    from toolnames_core import jsonsplice

    def no_walk(*args):
        raise AssertionError("walked")

    monkeypatch.setattr(jsonsplice, "replace_values", no_walk)
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    tools = [
        {"type": "function", "function": {"name": f"t.{i}", "parameters": schema}}
        for i in range(300)
    ]
    calls = [{"type": "function", "function": {"name": "t.1", "arguments": '{"name":"t.1"}'}}]
    body = {"messages": [{"role": "assistant", "tool_calls": calls}], "tools": tools}
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    replacements = {("tools", i, "function", "name"): (f"t.{i}", f"t_{i}") for i in range(300)}
    replacements[("messages", 0, "tool_calls", 0, "function", "name")] = ("t.1", "t_1")

    out = json.loads(replace_strings(text.encode(), replacements))

    assert [t["function"]["name"] for t in out["tools"]] == [f"t_{i}" for i in range(300)]
    assert out["messages"][0]["tool_calls"][0]["function"] == {
        "name": "t_1",
        "arguments": '{"name":"t.1"}',
    }


# The body as it comes, bytes: with a byte order mark, a member repeated (json.loads keeps the
# last), a member name spelt with an escape, or bytes that are not UTF-8 (a stray byte, a
# surrogate encoded, which json.loads takes and UTF-8 does not).
_NOT_UTF8 = [b"\xff", b"\xc3", b"\xed\xa0\x80"]


@settings(max_examples=500, deadline=None)
@given(
    doc=st.dictionaries(st.sampled_from(_KEYS), name_docs, min_size=1, max_size=5),
    separators=st.sampled_from([(",", ":"), (", ", ": ")]),
    ensure_ascii=st.booleans(),
    repeated=st.sampled_from(_NAMES + [None]),
    escaped=st.booleans(),
    bom=st.booleans(),
    not_utf8=st.sampled_from(_NOT_UTF8 + [None]),
    data=st.data(),
)
def test_a_body_is_renamed_as_the_walk_renames_its_text(
    doc, separators, ensure_ascii, repeated, escaped, bom, not_utf8, data
):
    text = json.dumps(doc, separators=separators, ensure_ascii=ensure_ascii)
    if repeated is not None:
        text = text[:-1] + f', "name": {json.dumps(repeated, ensure_ascii=ensure_ascii)}}}'
    if escaped:
        text = text.replace('"name":', '"\\u006eame":', 1)
    strings = _member_strings(json.loads(text))
    places = st.sampled_from(sorted(strings, key=repr)) if strings else st.nothing()
    chosen = data.draw(st.lists(places, unique=True))
    replacements = {where: (strings[where], data.draw(st.text())) for where in chosen}
    body = b"\xef\xbb\xbf" * bom + text.encode()
    if not_utf8 is not None:
        at = data.draw(st.integers(0, len(body)))
        body = body[:at] + not_utf8 + body[at:]
    new_values = {where: new for where, (_, new) in replacements.items()}

    try:
        walked = replace_values(body.decode("utf-8"), new_values).encode("utf-8")
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            replace_strings(body, replacements)
        return
    assert replace_strings(body, replacements) == walked


# -- a large body is searched only past what it shares with one searched before -------------

# Pieces of text full of what the search looks for: quoted names, escapes that spell a name's
# character, backslashes, quotes and names cut short.
_PIECES = ['"name"', '"id"', "\\u006e", "\\u0049", "\\\\", "\\", '"', "name", "na", ":", "x" * 7]


def _members(found) -> list[int] | None:
    """The members ``_KeySearch.scan`` found; None for a body it cannot search."""
    return None if found is None else found.members


def _scan_fresh(search, body: bytes) -> list[int] | None:
    escape = search.escape_at(body)
    return None if escape >= 0 else search.members(body)


@settings(max_examples=500, deadline=None)
@given(
    keys=st.sampled_from([frozenset({"name"}), frozenset({"name", "id"})]),
    first=st.lists(st.sampled_from(_PIECES), max_size=30),
    middles=st.lists(st.lists(st.sampled_from(_PIECES), max_size=8), min_size=1, max_size=4),
    data=st.data(),
)
def test_a_body_searched_where_it_differs_is_found_as_searched_whole(keys, first, middles, data):
    from toolnames_core import jsonsplice

    search = jsonsplice._key_search(keys)
    bodies = ["".join(first).encode()]
    for middle in middles:
        # Each next body keeps a beginning and an end of one sent before (a conversation a
        # round longer before its tools, the same one asked otherwise, or another one), cut
        # anywhere, even inside a match; the end may repeat bytes of the beginning.
        before = data.draw(st.sampled_from(bodies))
        cut = data.draw(st.integers(0, len(before)))
        rest = data.draw(st.integers(0, len(before)))
        bodies.append(before[:cut] + "".join(middle).encode() + before[rest:])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonsplice, "_REMEMBERED_FROM", 0)
        patch.setattr(jsonsplice, "_SHARED_BLOCK", 4)
        patch.setattr(jsonsplice, "_scanned", [])
        for body in bodies:
            assert _members(search.scan(body)) == _scan_fresh(search, body)


def test_a_match_the_old_search_stepped_over_is_not_taken_for_one_of_its_own():
    from toolnames_core import jsonsplice

    # Old's search found "name" at 1 and 11; the body's, sharing old's first byte and its
    # end from byte 6 on, finds it at 2 and then none: the one at 2 is old's 6, which old's
    # search stepped over.
    old, body = b'{"name"name"name"', b'{Z"name"name"'
    search = jsonsplice._key_search(frozenset({"name"}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonsplice, "_REMEMBERED_FROM", 0)
        patch.setattr(jsonsplice, "_scanned", [])
        assert _members(search.scan(old)) == [7, 17]
        assert _members(search.scan(body)) == [8] == search.members(body)


@settings(max_examples=300, deadline=None)
@given(
    keys=st.sampled_from([frozenset({"name"}), frozenset({"name", "id"})]),
    pieces=st.lists(st.sampled_from(_PIECES), max_size=20),
    stop=st.integers(0, 200),
)
def test_members_before_a_stop_are_those_of_the_whole_search_that_begin_before_it(
    keys, pieces, stop
):
    from toolnames_core import jsonsplice

    body = "".join(pieces).encode()
    whole = re.finditer(b'"(?:' + b"|".join(k.encode() for k in keys) + b')"', body)
    search = jsonsplice._key_search(keys)
    assert search.members(body, 0, stop) == [m.end() for m in whole if m.start() < stop]


@settings(max_examples=300, deadline=None)
@given(
    body=st.binary(max_size=40),
    other=st.binary(max_size=40),
    cut=st.integers(0, 40),
    block=st.sampled_from([1, 3, 4, 64 * 1024]),
)
def test_shared_prefix_is_how_many_bytes_two_bodies_begin_with_alike(body, other, cut, block):
    from toolnames_core import jsonsplice

    other = body[:cut] + other
    alike = 0
    while alike < min(len(body), len(other)) and body[alike] == other[alike]:
        alike += 1
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonsplice, "_SHARED_BLOCK", block)
        assert jsonsplice.shared_prefix(body, other) == alike


@settings(max_examples=300, deadline=None)
@given(
    body=st.binary(max_size=40),
    other=st.binary(max_size=40),
    cut=st.integers(0, 40),
    most=st.integers(0, 40),
    block=st.sampled_from([1, 3, 4, 64 * 1024]),
)
def test_shared_suffix_is_how_many_bytes_two_bodies_end_with_alike(body, other, cut, most, block):
    from toolnames_core import jsonsplice

    other += body[len(body) - cut :] if cut else b""
    most = min(most, len(body), len(other))
    alike = 0
    while alike < most and body[-1 - alike] == other[-1 - alike]:
        alike += 1
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonsplice, "_SHARED_BLOCK", block)
        assert jsonsplice.shared_suffix(body, other, most) == alike


def _chat_turns(rounds: int) -> list[dict]:
    messages = [{"role": "system", "content": "Be brief. " * 50}]
    for i in range(rounds):
        call = {"id": f"c{i}", "type": "function"}
        call["function"] = {"name": "get.weather", "arguments": json.dumps({"city": f"C{i}"})}
        messages.append({"role": "user", "content": f"And city {i}? " * 80})
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": "Sunny. " * 120})
    return messages


def _conversation(messages: list[dict]) -> bytes:
    tools = [{"type": "function", "function": {"name": "get.weather", "parameters": {}}}]
    body = {"messages": messages, "model": "gpt-4o", "tools": tools}
    return json.dumps(body, separators=(",", ":")).encode()


def _renames(body: bytes) -> dict:
    return {
        where: ("get.weather", "get_weather")
        for where, value in _member_strings(json.loads(body)).items()
        if value == "get.weather" and where[-1] == "name"
    }


@pytest.mark.parametrize("where", [None, "earlier", "new round"])
def test_a_conversation_growing_past_the_remembered_size_is_renamed_as_the_walk_does(where):
    from toolnames_core import jsonsplice

    # Each request resends the last one and a round more, as a chat client does: its search
    # goes on from what it shares with the one before, where an escaped member name (which
    # the search cannot see) must still send the body to the walk.
    messages = _chat_turns(60)
    bodies = [_conversation(messages[: 1 + 3 * rounds]) for rounds in range(50, 61)]
    spelt = b'"tool_calls":[{"id":"c55","type":"function","function":{"n\\u0061me"'
    if where is not None:
        at = 30 if where == "earlier" else 55
        plain = spelt.replace(b"c55", f"c{at}".encode()).replace(b"n\\u0061me", b"name")
        escaped = spelt.replace(b"c55", f"c{at}".encode())
        bodies = [b.replace(plain, escaped) for b in bodies]
    assert len(bodies[0]) > jsonsplice._REMEMBERED_FROM  # remembered
    for body in bodies:
        assert_as_the_walk(body.decode(), _renames(body))


def test_a_body_remembered_is_searched_again_only_where_it_differs(monkeypatch):
    from toolnames_core import jsonsplice

    monkeypatch.setattr(jsonsplice, "_scanned", [])
    searched = []
    members, next_member = jsonsplice._KeySearch.members, jsonsplice._KeySearch.next_member

    def searched_between(self, body, start=0, stop=None):
        searched.append((start, stop))
        return members(self, body, start, stop)

    def searched_on(self, body, start):
        searched.append((start, "next"))
        return next_member(self, body, start)

    monkeypatch.setattr(jsonsplice._KeySearch, "members", searched_between)
    monkeypatch.setattr(jsonsplice._KeySearch, "next_member", searched_on)
    messages = _chat_turns(60)
    shorter, longer = _conversation(messages[:-3]), _conversation(messages)
    shared = jsonsplice.shared_prefix(longer, shorter)
    assert shared > 0.9 * len(shorter)
    # The new round comes before the tools, which end both.
    tail = len(longer) - jsonsplice.shared_suffix(longer, shorter, len(shorter) - shared)
    assert longer[tail:].startswith(b"],") and longer.endswith(shorter[-len(longer) + tail :])

    for body in (shorter, longer, longer):
        assert_as_the_walk(body.decode(), _renames(body))

    # Searched whole; then from where a match not wholly in the bytes both begin with could
    # begin, to the bytes both end with, where one step finds the tools' "name" where the
    # search through the shorter body found it; the same body again, not at all.
    quoted = len(b'"name"')
    assert searched == [(0, None), (shared - quoted + 1, tail), (tail, "next")]
    assert [s.body for s in jsonsplice._scanned] == [shorter, longer]
    small = _conversation(messages[:4])
    assert len(small) < jsonsplice._REMEMBERED_FROM
    assert_as_the_walk(small.decode(), _renames(small))
    assert [s.body for s in jsonsplice._scanned] == [shorter, longer]  # a small one is not kept
    assert len(jsonsplice._scanned) == jsonsplice._MAX_SCANNED
    # Nor a very large one: it would be held.
    monkeypatch.setattr(jsonsplice, "_REMEMBERED_UP_TO", len(shorter) - 1)
    assert_as_the_walk(shorter.decode(), _renames(shorter))
    assert [s.body for s in jsonsplice._scanned] == [shorter, longer]


def test_a_retry_keeps_the_other_conversation_remembered(monkeypatch):
    from toolnames_core import jsonsplice

    monkeypatch.setattr(jsonsplice, "_scanned", [])
    first, other = _chat_turns(40), _chat_turns(41)[1:]  # two conversations
    first_body, other_body = _conversation(first), _conversation(other)
    for body in (other_body, first_body, first_body):  # the last one a retry
        assert_as_the_walk(body.decode(), _renames(body))
    assert [s.body for s in jsonsplice._scanned] == [other_body, first_body]

    # The other conversation's next turn is searched only where it differs from its last.
    starts = []
    members = jsonsplice._KeySearch.members

    def searched_between(self, body, start=0, stop=None):
        starts.append(start)
        return members(self, body, start, stop)

    monkeypatch.setattr(jsonsplice._KeySearch, "members", searched_between)
    longer = _conversation(other + _chat_turns(42)[-3:])
    assert_as_the_walk(longer.decode(), _renames(longer))
    assert starts == [jsonsplice.shared_prefix(longer, other_body) - len(b'"name"') + 1]


# -- what was read at a remembered body's members is taken where the next reads alike -------

# Messages whose texts begin alike and differ in a name, its spelling, its spacing or its
# kind: where two bodies part inside a value, that value is read again.
_MESSAGES = [
    '{"name":"a.b"}',
    '{"name":"a.bc"}',
    '{"name":"a.b","x":1}',
    '{"name" : "c.d"}',
    '{"name":  "c.d" }',
    '{"name":"c\\u002ed"}',
    '{"name":"a\\"b"}',
    '{"name":"a\\"bc"}',
    '{"name":1}',
    '{"name":{"name":"a.b"}}',
    '{"name" :[]}',
    '{"name" :"a.b"}',
    '{"x":"\\"name\\":\\"a.b\\""}',
    '{"name":"x"}',
]
_OLDS = ["a.b", "a.bc", "c.d", 'a"b', "x"]


@settings(max_examples=400, deadline=None)
@given(
    turns=st.lists(
        st.tuples(
            st.lists(st.sampled_from(_MESSAGES), max_size=6),
            st.lists(st.sampled_from(_MESSAGES[:4]), max_size=3),  # its tools
            st.sets(st.sampled_from(_OLDS), min_size=1),  # the names renamed
        ),
        min_size=1,
        max_size=5,
    ),
)
# Two bodies that part inside an escaped value: it is read again, to its end.
@example(
    turns=[([_MESSAGES[6]], [_MESSAGES[6]], {'a"b'}), ([_MESSAGES[7]], [_MESSAGES[6]], {'a"b'})]
)
# The tools both end with, moved in the second; the third parts from it inside their value.
@example(
    turns=[
        ([_MESSAGES[-1]], [_MESSAGES[0]], {"a.b"}),
        ([_MESSAGES[-1]] * 2, [_MESSAGES[0]], {"a.b"}),
        ([_MESSAGES[-1]] * 2, [_MESSAGES[1], _MESSAGES[0]], {"a.b"}),
    ]
)
def test_what_a_body_reads_where_it_begins_and_ends_as_the_one_before_is_what_it_would_read(
    turns,
):
    from toolnames_core import jsonsplice

    # Each request after the first keeps what one before held and adds, drops or changes
    # messages, most often the same tools after them, other names renamed or the same.
    # Whatever was read of the bodies searched before, each finds and reads what a search
    # of it alone would, member by member, and is renamed as the walk renames it.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonsplice, "_REMEMBERED_FROM", 0)
        patch.setattr(jsonsplice, "_SHARED_BLOCK", 4)
        patch.setattr(jsonsplice, "_scanned", [])
        for messages, tools, olds in turns + turns[::-1]:
            text = '{"messages":[' + ",".join(messages) + '],"tools":[' + ",".join(tools) + "]}"
            body = text.encode()
            replacements = {
                where: (value, value.upper() + "!")
                for where, value in _member_strings(json.loads(text)).items()
                if value in olds and where[-1] == "name"
            }
            names = jsonsplice._names(frozenset(replacements.values()))
            # Renamed after what was read and made of the bodies before it, ...
            assert_as_the_walk(text, replacements)
            searched = jsonsplice._scanned[-1]
            read = searched.reads
            if searched.made is not None:
                assert_made_as_renamed(body, searched.made, names)
            kept = jsonsplice._scanned
            # ... it reads what it would alone.
            patch.setattr(jsonsplice, "_scanned", [])
            jsonsplice._found_by_key(body, replacements, names)
            alone = jsonsplice._scanned[-1].reads
            assert (read and read.spans) == (alone and alone.spans)
            patch.setattr(jsonsplice, "_scanned", kept)
            assert_as_the_walk(text, replacements)  # and the same body again: a retry


def assert_made_as_renamed(body: bytes, made, names) -> None:
    """What ``replace_strings`` kept of a renamed body says where each new name is in it,
    as the next body's renaming takes it: the bytes between the spans where they were,
    moved by the shift before the next span, each new name in its place."""
    assert len(made.shifts) == len(made.spans) + 1
    done = 0
    for (start, end, old), shift, after in zip(
        made.spans, made.shifts[:-1], made.shifts[1:], strict=True
    ):
        assert made.out[done + shift : start + shift] == body[done:start]
        token = names.tokens[old]
        assert made.out[start + shift : end + after] == token
        done = end
    assert made.out[done + made.shifts[-1] :] == body[done:]


def test_a_remembered_bodys_reads_are_taken_where_the_next_body_reads_alike(monkeypatch):
    from toolnames_core import jsonsplice

    # The same conversation asked another way (the bytes both begin with, then a question,
    # then the same round and tools), then a round longer: only the names between are read.
    monkeypatch.setattr(jsonsplice, "_scanned", [])
    read = []

    class Colon:  # spaced JSON: every name's value is read through its match
        def match(self, body, at):
            read.append(at)
            return colon.match(body, at)

    colon = jsonsplice._COLON
    monkeypatch.setattr(jsonsplice, "_COLON", Colon())
    turns = _chat_turns(41)
    asked = [*turns[:-6], {"role": "user", "content": "Otherwise? " * 90}, *turns[-5:-3]]
    conversations = [turns[:-3], asked, turns]
    tools = [{"type": "function", "function": {"name": "get.weather", "parameters": {}}}]
    bodies = [json.dumps({"messages": m, "tools": tools}).encode() for m in conversations]
    spans, counts = [], []
    for body in bodies:
        read.clear()
        assert_as_the_walk(body.decode(), _renames(body))
        spans.append(jsonsplice._scanned[-1].reads.spans)
        counts.append(len(read))
    # Every name read in the first; in the second, none (its question holds no name); in the
    # third, the new round's call.
    assert counts == [len(spans[0]), 0, 1]
    assert len(spans[2]) == len(spans[0]) + 1
    for before, after, body, old in zip(
        spans[:-1], spans[1:], bodies[1:], bodies[:-1], strict=True
    ):
        moved = len(body) - len(old)
        assert after[-1] == (before[-1][0] + moved, before[-1][1] + moved, "get.weather")
        assert after[0] is before[0]  # a call in the messages both begin with


def test_a_remembered_bodys_renamed_bytes_are_taken_where_the_next_body_reads_alike(
    monkeypatch,
):
    from toolnames_core import jsonsplice

    # The same conversation asked another way, then a round longer, then the same again (a
    # retry): each is renamed as the walk renames it, and only the renamed places between
    # the bytes it shares with the one before are put in anew.
    monkeypatch.setattr(jsonsplice, "_scanned", [])
    put = []

    class Tokens(dict):
        def __getitem__(self, old):
            put.append(old)
            return dict.__getitem__(self, old)

    pairs = frozenset({("get.weather", "get_weather")})
    names = jsonsplice._names(pairs)
    names = names._replace(tokens=Tokens(names.tokens))
    monkeypatch.setitem(jsonsplice._names_made, pairs, names)
    turns = _chat_turns(41)
    asked = [*turns[:-6], {"role": "user", "content": "Otherwise? " * 90}, *turns[-5:-3]]
    tools = [
        {"type": "function", "function": {"name": "get.weather", "parameters": {}}},
        {"type": "function", "function": {"name": "get.time", "parameters": {}}},
    ]
    bodies = [
        json.dumps({"messages": m, "tools": tools}, separators=(",", ":")).encode()
        for m in (turns[:-3], asked, turns, turns)
    ]
    counts, renamed = [], []
    for body in bodies:
        put.clear()
        assert_as_the_walk(body.decode(), _renames(body))
        counts.append(len(put))
        made = jsonsplice._scanned[-1].made
        assert_made_as_renamed(body, made, names)
        renamed.append(len(made.spans))
    assert renamed == [41, 41, 42, 42]  # each round's call, and the tool
    # All in the first; none in the second (its question holds no name: what it begins and
    # ends with as the first is taken); the new round's call in the third; none in a retry.
    assert counts == [41, 0, 1, 0]


def test_what_was_made_for_other_names_is_never_taken(monkeypatch):
    from toolnames_core import jsonsplice

    # A body renamed one way, then read for other names the search could not prove (one
    # place of two asked: the walk renames it), then a round longer the other way: the
    # reads for those names are taken, never the bytes made for the first ones.
    monkeypatch.setattr(jsonsplice, "_REMEMBERED_FROM", 0)
    monkeypatch.setattr(jsonsplice, "_scanned", [])
    first = '{"messages":[{"name":"a.b"}],"tools":[{"name":"a.b"}]}'
    longer = '{"messages":[{"name":"a.b"},{"name":"c"}],"tools":[{"name":"a.b"}]}'
    both = {("messages", 0, "name"): ("a.b", "A_B"), ("tools", 0, "name"): ("a.b", "A_B")}
    assert_as_the_walk(first, dict.fromkeys(both, ("a.b", "X")))
    assert_as_the_walk(first, {("tools", 0, "name"): ("a.b", "A_B")})
    assert jsonsplice._scanned[-1].read_for is not jsonsplice._scanned[-1].made_for
    assert assert_as_the_walk(longer, both).count("A_B") == 2
