"""Both readers give one answer: properties over arbitrary JSON and bytes, for every format.

The comparisons need msgspec (the main venv has it; the mitmproxy 11 venv must not, so that
the standard reader alone is tested there too) and are skipped without it, saying so. What
holds either way (the standard reader's own behaviour, choosing a reader) runs everywhere.
"""

import json
import os
import typing
from types import UnionType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.testkit import SDK_DIR
from tests.testkit import api_for
from tests.testkit.arbitrary import APIS
from tests.testkit.arbitrary import CONTENT_TYPES
from tests.testkit.arbitrary import EVENT_SEEDS
from tests.testkit.arbitrary import EVENTS
from tests.testkit.arbitrary import REQUEST_SEEDS
from tests.testkit.arbitrary import REQUESTS
from tests.testkit.arbitrary import RESPONSE_SEEDS
from tests.testkit.arbitrary import RESPONSES
from tests.testkit.arbitrary import STREAMING_APIS
from tests.testkit.arbitrary import TOOLISH_KEYS
from tests.testkit.arbitrary import cut
from tests.testkit.arbitrary import encode
from tests.testkit.arbitrary import examples
from tests.testkit.arbitrary import json_values
from toolnames_core import readers
from toolnames_core.exchange import Exchange
from toolnames_core.formats import FORMATS
from toolnames_core.framings import AWS_EVENT_STREAM
from toolnames_core.rules import RULES

needs_msgspec = pytest.mark.skipif(
    readers.FAST is None, reason="msgspec is not installed: only the standard reader runs here"
)

# Bodies at the edge of what msgspec and json.loads agree on: most the fast reader must hand
# to json, in places no adapter reads (so msgspec alone would skip them) and in places it
# does; escaped keys it must match as json does.
DIGITS = b"9" * 5000  # past int()'s 4300-digit limit
EDGES = (
    b'{"model": "' + b"\xff" + b'", "tools": []}',  # not UTF-8, in a string msgspec skips
    b'{"model": "\xed\xa0\x80", "tools": []}',  # a UTF-8-encoded surrogate: json takes it
    b'{"model": ' + DIGITS + b', "tools": []}',
    b'{"tool_choice": ' + DIGITS + b', "tools": []}',
    b'{"model": NaN, "tools": [], "tool_choice": -Infinity}',
    b'{"model": "\\ud800", "tools": []}',
    b'{"model": 1e999, "tool_choice": 1e999, "tools": []}',
    b"\xef\xbb\xbf" + b'{"tools": [{"type": "function", "function": {"name": "a.b"}}]}',
    '{"tools": [{"name": "caf\u00e9"}]}'.encode("utf-16"),
    b'{"tools": [{"type": "function", "function": {"name": "a"}}], "tools": 3}',
    b'{"tools": 3, "tools": [{"type": "function", "function": {"name": "a.b"}}]}',
    b'{"tools": [{"type": "function", "function": {"name": "a"}}], "tools": [{"name": "b.c"}]}',
    b'{"model": ' + b"[" * 20_000 + b"]" * 20_000 + b', "tools": []}',
    b'{"messages": ' + b"[" * 900 + b"]" * 900 + b', "tools": []}',
    b'{"tools": [], "messages": [{"role": "assistant", "tool_calls": "x"}], "stream": true}',
    b'["tools"]',
    b"",
    b'{"t\\u006fols": [{"type": "function", "function": {"n\\u0061me": "a.b"}}]}',
    b'{"tools": [{"type": "function", "function": {"name": "a\\ud83d\\ude00"}}], "x\\ud800": 1}',
    b'{"tools": [{"type": "function", "function": {"name": "a b"}}], "\\u0000": 1}',
)


def outcome(api: str, rule: str, request: bytes, fix: bool, reader) -> Exchange:
    exchange = Exchange(FORMATS[api], RULES[rule], "api.example.com", reader)
    exchange.check_request(request, fix=fix)
    return exchange


def same_request(a: Exchange, b: Exchange) -> None:
    assert [f.to_dict() for f in a.findings] == [f.to_dict() for f in b.findings]
    assert a.view == b.view
    assert a.readable == b.readable
    assert a.fixes == b.fixes
    assert a.fix_skipped == b.fix_skipped
    assert a.new_body == b.new_body
    assert (a.restorer and a.restorer.aliases) == (b.restorer and b.restorer.aliases)


# -- what holds with or without msgspec ----------------------------------------------------------


def test_the_standard_reader_reads_integers_too_long_for_int():
    # json.loads refuses them; msgspec skips them: both call such a body JSON.
    body = readers.STANDARD.body(b'{"model": ' + DIGITS + b', "n": 1}', None)
    assert body == {"model": float("inf"), "n": 1}
    event = readers.STANDARD.event(b'{"n": -' + DIGITS + b"}", None)
    assert event == {"n": float("-inf")}
    with pytest.raises(ValueError, match="Expecting value"):
        readers.STANDARD.body(b'{"model": }', None)


def test_the_standard_reader_is_json_loads():
    content = (SDK_DIR / sorted(p.name for p in SDK_DIR.glob("*.json"))[0]).read_bytes()
    assert readers.STANDARD.body(content, None) == json.loads(content)
    with pytest.raises(UnicodeDecodeError):
        readers.STANDARD.event(b'{"a": "\xff"}', None)


@pytest.mark.skipif(
    os.environ.get("TOOLNAMES_EXPECT_MSGSPEC") != "1", reason="a run that does not ask for msgspec"
)
def test_a_run_meant_for_msgspec_has_it():
    # scripts/test's run of mitmproxy 11 with msgspec added: without it, every comparison of
    # the two readers would be skipped and the run would pass having checked nothing.
    assert readers.FAST is not None


def test_auto_is_the_fast_reader_when_there_is_one():
    assert readers.reader_named("auto") is (readers.FAST or readers.STANDARD)
    assert readers.reader_named("json") is readers.STANDARD
    assert ([readers.FAST] if readers.FAST else []) + [readers.STANDARD] == readers.READERS
    with pytest.raises(ValueError, match="unknown reader 'orjson'"):
        readers.reader_named("orjson")


def test_msgspec_is_named_only_when_it_can_be_imported():
    try:
        import msgspec  # noqa: F401
    except ImportError:
        assert readers.FAST is None
        with pytest.raises(ValueError, match="uv tool install mitmproxy --with msgspec"):
            readers.reader_named("msgspec")
    else:
        assert readers.reader_named("msgspec") is readers.FAST
        assert readers.FAST.description.startswith("msgspec ")


def test_every_format_declares_its_shapes():
    # A format without shapes is read whole by the fast reader too: correct, but not faster.
    assert all(fmt.shapes is not None for fmt in FORMATS.values())


# -- the fast reader skips what no adapter reads ------------------------------------------------------


def sdk_requests() -> list[tuple[str, bytes]]:
    found = []
    for fixture in sorted(SDK_DIR.glob("*.json")):
        case = json.loads(fixture.read_text())
        api = api_for("POST", case["path"])
        if api in FORMATS and isinstance(case.get("body"), dict):
            found.append((api, json.dumps(case["body"]).encode()))
    return found


@needs_msgspec
@pytest.mark.parametrize(("api", "content"), sdk_requests())
def test_the_fast_reader_decodes_real_requests_itself(api, content):
    # Were it to hand every body to json, the comparisons below would prove nothing.
    decoded = readers.FAST.body(content, FORMATS[api].shapes.request)
    assert decoded != json.loads(content)
    assert "model" not in decoded  # no adapter reads it: skipped
    same_request(
        outcome(api, "portable", content, True, readers.FAST),
        outcome(api, "portable", content, True, readers.STANDARD),
    )


@needs_msgspec
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("content", EDGES)
def test_bodies_at_the_edge_of_what_the_decoders_agree_on_get_one_answer(api, content):
    for fix in (False, True):
        same_request(
            outcome(api, "openai", content, fix, readers.FAST),
            outcome(api, "openai", content, fix, readers.STANDARD),
        )


# Past the size from which the fast reader decodes the members that offer tools once for
# the same bytes (readers.py); test_a_large_bodys_tools_are_decoded_once checks it is.
LARGE = 16 * 1024


def large(content: bytes) -> bytes:
    """``content``, an object, grown past LARGE by a member no adapter reads, put first."""
    if not content.startswith(b"{"):
        return content
    rest = content[1:].lstrip()
    return b'{"padding": "' + b"x" * LARGE + (b'"' if rest.startswith(b"}") else b'", ') + rest


def nested(depth: int) -> bytes:
    return b'{"model": ' + b"[" * depth + b"]" * depth + b', "tools": [{"name": "a.b"}]}'


def nested_in_tools(depth: int) -> bytes:
    # Inside the tools of a large body: they are decoded on their own, one level shallower.
    arrays = b"[" * depth + b"]" * depth
    return large(b'{"tools": [{"name": "a.b", "input_schema": ' + arrays + b"}]}")


@needs_msgspec
@pytest.mark.parametrize("body", [nested, nested_in_tools])
def test_nesting_at_the_recursion_limit_is_read_alike(body):
    # Both decoders count depth with the interpreter's C recursion counter: where json.loads
    # stops, msgspec stops too, in a key no adapter reads as much as in one it does.
    low, high = 1, 1_000_000
    while low < high:  # json.loads's deepest array here
        depth = (low + high + 1) // 2
        try:
            json.loads(body(depth))
            low = depth
        except RecursionError:
            high = depth - 1
    for depth in (low - 1, low, low + 1, low + 2):
        for api in APIS:
            same_request(
                outcome(api, "openai", body(depth), True, readers.FAST),
                outcome(api, "openai", body(depth), True, readers.STANDARD),
            )


def _chat(tools: list[str], question: str) -> bytes:
    # Each tool named as chat completions names one and as Messages and Responses do, with
    # a description no adapter reads: each format's adapter reads its own name.
    functions = [
        {
            "type": "function",
            "name": f"{name}!",
            "function": {"name": name, "description": "d" * 200},
        }
        for name in tools
    ]
    messages = [{"role": "user", "content": question}]
    return json.dumps({"messages": messages, "tools": functions}).encode()


@needs_msgspec
def test_a_large_bodys_tools_are_decoded_once_for_the_same_bytes():
    # A client resends its tools alike every request: decoded once, shared by the requests
    # that send those bytes; other bytes, or the same read by another format, decoded anew.
    tools = [f"tool.{i}" for i in range(100)]
    first, again = _chat(tools, "hi"), _chat(tools, "and now?")
    assert len(first) > LARGE
    shape, resent = FORMATS["openai-chat"].shapes.request, FORMATS["openai-chat"].offer_keys
    one = readers.FAST.body(first, shape, resent)
    two = readers.FAST.body(again, shape, resent)
    assert two["tools"] is one["tools"] and two is not one
    other = readers.FAST.body(_chat([*tools[:-1], "tool.x"], "hi"), shape, resent)
    assert other["tools"] is not one["tools"]
    assert [t["function"]["name"] for t in other["tools"]][-2:] == ["tool.98", "tool.x"]
    for api in ("openai-chat", "anthropic-messages", "openai-responses"):
        for body in (first, again):
            same_request(
                outcome(api, "openai", body, True, readers.FAST),
                outcome(api, "openai", body, True, readers.STANDARD),
            )


def _padded(value: object) -> object | None:
    """A member offering tools, grown by a key no adapter reads to most of a large body;
    None for a value that has nowhere to put it."""
    if isinstance(value, dict):
        return {**value, "padding": "p" * LARGE}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [{**value[0], "padding": "p" * LARGE}, *value[1:]]
    return None


def _offering(api: str) -> list[tuple[bytes, bytes, bytes, bytes]]:
    """Each seed body of ``api`` whose member offering tools can be grown, as (the member's
    key, the bytes before its value, its value, the bytes after it): a large body."""
    found = []
    for seed in REQUEST_SEEDS[api]:
        for key in FORMATS[api].offer_keys:
            value = _padded(seed.get(key))
            if value is not None:
                rest = encode({k: v for k, v in seed.items() if k != key}, True)
                member = encode(key, True) + b": "
                before = b"{" + member if rest == b"{}" else rest[:-1] + b", " + member
                found.append((member, before, encode(value, True), b"}"))
    return found


APIS_OFFERING = [api for api in APIS if _offering(api)]


@st.composite
def resent_around(draw, api: str) -> tuple[bytes, bytes]:
    """A large body, and another with its member offering tools byte for byte, as many bytes
    from its start or its end as in the first; what stands around them may make them that
    member, another, a copy of it, or no JSON at all."""
    member, before, tools, after = draw(st.sampled_from(_offering(api)))
    other = b'"' + bytes(reversed(member[1:-3])) + b'": '  # a key of the same length
    heads = [
        before,
        before.replace(b"{", b'{"messages": [{"role": "user", "content": "and now?"}], ', 1),
        b"{" + other,
        b"{" + member + b"[], " + other,
        b'{"messages": [',
        b"[",
        b'{"a": "',
        b"",
    ]
    tails = [
        after,
        b', "stream": true}',
        b", " + member + b"[]}",
        b"]}",
        b"], " + member + b"[]}",
        b"}]",
        b", ",
        b"",
    ]
    head, tail = draw(st.sampled_from(heads)), draw(st.sampled_from(tails))
    if draw(st.booleans()):  # as many bytes before them: spaces, where JSON allows them
        head = head[: len(before)] + b" " * (len(before) - len(head))
    else:
        tail = b" " * (len(after) - len(tail)) + tail[-len(after) :]
    return before + tools + after, head + tools + tail


@pytest.mark.parametrize("api", APIS_OFFERING)
@examples(30)
@given(data=st.data(), fix=st.booleans())
def test_tools_resent_in_place_read_as_json_reads_them_whatever_stands_around(api, data, fix):
    # The second body's tools stand where the first's did: each reader looks for them
    # there, and must prove them the member they seem before it reads them unread. Without
    # msgspec, the standard reader alone.
    first, second = data.draw(resent_around(api))
    readers._lately.clear()
    shape, resent = FORMATS[api].shapes.request, FORMATS[api].offer_keys
    # Sent twice, the json reader learns where they are; then the other, then the first.
    for body in (first, first, second, first):
        if readers.FAST is not None:
            same_request(
                outcome(api, "openai", body, fix, readers.FAST),
                outcome(api, "openai", body, fix, readers.STANDARD),
            )
        assert _as_read(readers.STANDARD, body, shape, resent) == _as_read(readers.loads, body)


def _as_read(reader, *args) -> object:
    """What ``reader`` reads of a body, or what it says when it cannot."""
    read = getattr(reader, "body", reader)
    try:
        return read(*args)
    except (ValueError, RecursionError) as e:
        return repr(e)


@needs_msgspec
def test_tools_resent_where_they_stood_are_not_decoded_again(monkeypatch):
    # A conversation grows on one side of its tools: they stand as many bytes from the
    # other end, and are taken as decoded before, unread, once proved the member.
    monkeypatch.setattr(readers, "_lately", [])
    decoded = []
    lately = readers._decoded_lately
    monkeypatch.setattr(
        readers, "_decoded_lately", lambda raw, *rest: decoded.append(raw) or lately(raw, *rest)
    )
    shape, resent = FORMATS["openai-chat"].shapes.request, FORMATS["openai-chat"].offer_keys
    tools = json.loads(_chat([f"tool.{i}" for i in range(100)], ""))["tools"]

    def body(question: str, tools_first: bool = False) -> bytes:
        messages = [{"role": "user", "content": question}]
        if tools_first:
            return json.dumps({"tools": tools, "messages": messages}).encode()
        return json.dumps({"messages": messages, "tools": tools}).encode()

    first = readers.FAST.body(body("hi"), shape, resent)
    assert len(decoded) == 1
    grown = body("hi" * 500)  # the tools as many bytes from the end
    whole = readers.FAST.body(grown, shape)  # nothing resent: all of it decoded
    assert readers.FAST.body(grown, shape, resent) == whole
    assert readers.FAST.body(grown, shape, resent)["tools"] is first["tools"]
    assert len(decoded) == 1
    assert readers.FAST.body(body("hi", True), shape, resent)["tools"] is first["tools"]
    assert len(decoded) == 2  # found again, now first: where they stand is learnt anew
    grown = body("hi" * 500, True)  # as many bytes from the start
    assert readers.FAST.body(grown, shape, resent) == readers.FAST.body(grown, shape)
    assert readers.FAST.body(grown, shape, resent)["tools"] is first["tools"]
    assert len(decoded) == 2
    # Grown to four times the tools and more, copying the body around them would cost more
    # than skipping them: read as before.
    assert readers.FAST.body(body("hi" * 60_000, True), shape, resent)["tools"] is first["tools"]
    assert len(decoded) == 3


def test_the_json_reader_learns_where_resent_tools_stand_and_then_reads_around_them(
    monkeypatch,
):
    # json.loads tells no member's bytes: tools sent again alike are read again, once, where
    # they are found, to learn them; from then on the body around them is all json reads.
    monkeypatch.setattr(readers, "_lately", [])
    monkeypatch.setattr(readers, "_json_last", {})
    read = []
    loads = readers.loads
    monkeypatch.setattr(readers, "loads", lambda text: read.append(len(text)) or loads(text))
    shape, resent = FORMATS["openai-chat"].shapes.request, FORMATS["openai-chat"].offer_keys
    tools = json.loads(_chat([f"tool.{i}" for i in range(100)], ""))["tools"]

    def body(question: str) -> bytes:
        messages = [{"role": "user", "content": question}]
        return json.dumps({"messages": messages, "tools": tools, "stream": True}).encode()

    def standard(content: bytes) -> object:
        return readers.STANDARD.body(content, shape, resent)

    first = standard(body("hi"))
    assert not readers._lately  # read once: nothing to learn (a client may change them)
    assert standard(body("hi")) == first and readers._lately[-1].raw == json.dumps(tools).encode()
    read.clear()
    grown = body("hi" * 500)  # as many bytes from the end
    assert standard(grown) == json.loads(grown)
    assert standard(grown)["tools"] is readers._lately[-1].value
    assert max(read) < len(grown) // 10  # the body with a stand-in for its tools
    other = body("hi").replace(b"tool.1", b"tool.x")  # other tools: read whole, not kept
    read.clear()
    assert standard(other) == json.loads(other) and read == [len(other)]
    assert standard(json.dumps([tools]).encode()) == [tools]  # no object: json's answer


@needs_msgspec
@pytest.mark.parametrize(
    "elsewhere",
    [
        lambda body: body.replace(b'"tools": ', b'"xools": ', 1),  # another member
        lambda body: b"[" + body[1:],  # no JSON: decoded with the stand-in, still none
    ],
)
def test_tools_found_where_they_stood_but_as_no_member_are_never_looked_for_there_again(
    monkeypatch, elsewhere
):
    monkeypatch.setattr(readers, "_lately", [])
    shape, resent = FORMATS["openai-chat"].shapes.request, FORMATS["openai-chat"].offer_keys
    body = _chat([f"tool.{i}" for i in range(100)], "hi")
    tools = readers.FAST.body(body, shape, resent)["tools"]
    moved = elsewhere(body)

    def read(content: bytes, resent: tuple[str, ...] = ()) -> object:
        try:
            return readers.FAST.body(content, shape, resent)
        except ValueError as e:  # no JSON: as json.loads says
            return str(e)

    assert read(moved, resent) == read(moved)
    assert readers._lately[-1].before == readers._NEVER
    assert readers.FAST.body(body, shape, resent)["tools"] is tools  # still read, unread no more


# -- properties: any body, any answer, streamed or not -------------------------------------------


@st.composite
def duplicated_keys(draw, api: str) -> bytes:
    """A real body with one of its keys (or a key an adapter reads) given again, before or
    after, with any value: json.loads keeps the last, whatever its type."""
    seed = draw(st.sampled_from(REQUEST_SEEDS[api]))
    text = encode(seed, True)
    key = json.dumps(draw(st.sampled_from(sorted(seed) + list(TOOLISH_KEYS)))).encode()
    member = key + b": " + encode(draw(json_values), True)
    if draw(st.booleans()):
        return text[:-1] + b", " + member + b"}"
    return b"{" + member + b", " + text[1:]


@st.composite
def not_utf8(draw, api: str) -> bytes:
    """A real body with a byte that cannot be UTF-8 put in one of its strings: msgspec does
    not look at the strings it skips, json refuses the body."""
    text = encode(draw(st.sampled_from(REQUEST_SEEDS[api])), True)
    quotes = [i for i, byte in enumerate(text) if byte == ord('"')]
    at = draw(st.sampled_from(quotes)) + 1
    return text[:at] + bytes([draw(st.integers(0x80, 0xFF))]) + text[at:]


def odd_requests(api: str) -> st.SearchStrategy[bytes]:
    if not REQUEST_SEEDS[api]:
        return REQUESTS[api]
    return st.one_of(REQUESTS[api], duplicated_keys(api), not_utf8(api))


@needs_msgspec
@pytest.mark.parametrize("api", APIS)
@examples(30)
@given(data=st.data(), rule=st.sampled_from(sorted(RULES)), fix=st.booleans())
def test_both_readers_find_fix_and_rename_the_same_in_any_request(api, data, rule, fix):
    request = data.draw(odd_requests(api))
    same_request(
        outcome(api, rule, request, fix, readers.FAST),
        outcome(api, rule, request, fix, readers.STANDARD),
    )


@needs_msgspec
@pytest.mark.parametrize("api", APIS)
@examples(30)
@given(data=st.data(), rule=st.sampled_from(sorted(RULES)), fix=st.booleans())
def test_both_readers_find_fix_and_rename_the_same_in_any_large_request(api, data, rule, fix):
    # A large body's tools are decoded apart from the rest, and once for the same bytes.
    request = large(data.draw(odd_requests(api)))
    for _ in range(2):  # decoded, then found decoded
        same_request(
            outcome(api, rule, request, fix, readers.FAST),
            outcome(api, rule, request, fix, readers.STANDARD),
        )


@needs_msgspec
@pytest.mark.parametrize("api", APIS)
@examples(30)
@given(
    data=st.data(),
    content_type=st.sampled_from(CONTENT_TYPES),
    status=st.sampled_from((200, 200, 201, 400, 422)),
    fix=st.booleans(),
)
def test_both_readers_judge_any_answer_alike(api, data, content_type, status, fix):
    request, response = data.draw(REQUESTS[api]), data.draw(RESPONSES[api])
    fast, standard = (
        outcome(api, "openai", request, fix, reader) for reader in (readers.FAST, readers.STANDARD)
    )
    found = [
        ex.check_response(status, content_type, response)
        for ex in (fast, standard)  # a whole body, streamed or not
    ]
    assert [f.to_dict() for f in found[0]] == [f.to_dict() for f in found[1]]
    assert fast.response_calls == standard.response_calls
    assert fast.restore(response) == standard.restore(response)


@needs_msgspec
@pytest.mark.parametrize("api", STREAMING_APIS)
@examples(30)
@given(data=st.data(), fix=st.booleans(), complete=st.booleans())
def test_both_readers_read_any_stream_alike_however_cut(api, data, fix, complete):
    request, response = data.draw(REQUESTS[api]), data.draw(RESPONSES[api])
    pieces = data.draw(cut(response))
    results = []
    for reader in (readers.FAST, readers.STANDARD):
        exchange = outcome(api, "openai", request, fix, reader)
        tap = exchange.stream_tap()
        sent = [tap(piece) for piece in pieces] + [tap(b"")]  # restored names included
        found = exchange.check_stream(200, tap, complete)
        results.append((sent, [f.to_dict() for f in found], exchange.response_calls, tap.events))
    assert results[0] == results[1]


# -- every key an adapter reads is in its shape ------------------------------------------------------
#
# The comparisons above need a body that takes a branch with a key the shape forgot. This
# does not: each adapter runs on json.loads's value with every object traced, and each key
# it asks for (found or not), and each object it uses whole (len, items, json.dumps), is
# looked up in the shape along the same path. A key the shape lacks would be absent from
# the fast reader's object; an object used whole must be declared Any, to arrive whole.

WHOLE = object()


class Traced(dict):
    """A JSON object that notes each key asked of it, at its path in the document."""

    __slots__ = ("path", "log")

    def _note(self, key):
        self.log.append((self.path, key))

    def get(self, key, default=None):
        self._note(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self._note(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self._note(key)
        return super().__contains__(key)

    def __len__(self):
        self._note(WHOLE)
        return super().__len__()

    def items(self):
        self._note(WHOLE)
        return super().items()

    def keys(self):
        self._note(WHOLE)
        return super().keys()

    def values(self):
        self._note(WHOLE)
        return super().values()

    def __iter__(self):
        self._note(WHOLE)
        return super().__iter__()


def traced(value: object, log: list, path: tuple = ()) -> object:
    if isinstance(value, dict):
        out = Traced({k: traced(v, log, (*path, k)) for k, v in value.items()})
        out.path, out.log = path, log
        return out
    if isinstance(value, list):
        return [traced(v, log, (*path, "[]")) for v in value]
    return value


def shape_allows(shape: object, path: tuple, key: object) -> bool:
    """Whether the fast reader's object at ``path`` holds ``key`` whenever json's does
    (``WHOLE``: all of it), or refuses the body (so json reads it)."""

    def member(t: object, kind: str) -> object | None:
        # The union member msgspec decodes a JSON object ("dict") or array ("list") into.
        options = typing.get_args(t) if typing.get_origin(t) in (typing.Union, UnionType) else (t,)
        for option in options:
            if option is typing.Any:
                return option
            if kind == "dict" and typing.is_typeddict(option):
                return option
            if kind == "list" and typing.get_origin(option) is list:
                return option
        return None

    t = shape
    for step in (*path, key):
        t = member(t, "list" if step == "[]" else "dict")
        if t is None or t is typing.Any:
            return True  # refused (json decides), or decoded whole
        if step == "[]":
            (t,) = typing.get_args(t)
        elif step is WHOLE:
            return False
        else:
            hints = typing.get_type_hints(t)
            if step not in hints:
                return False
            t = hints[step]
    return True


def unread_keys(shape: object, log: list) -> list:
    return sorted(
        {
            f"{'.'.join(map(str, path))}: {'(whole)' if key is WHOLE else key}"
            for path, key in log
            if not shape_allows(shape, path, key)
        }
    )


def check_request_shape(api: str, value: object) -> None:
    if not isinstance(value, dict):
        return
    log: list = []
    FORMATS[api].read_request(traced(value, log))
    assert unread_keys(FORMATS[api].shapes.request, log) == []


def check_answer_shape(api: str, value: object) -> None:
    fmt, log = FORMATS[api], []
    parts = value if isinstance(value, list) else [value]
    for part in parts:
        if isinstance(part, dict):
            fmt.read_calls(traced(part, log))
    assert unread_keys(fmt.shapes.response, log) == []


def check_event_shape(api: str, events: list) -> None:
    fmt, log = FORMATS[api], []
    collector = fmt.stream_collector()
    for event in events:
        if fmt.framing is AWS_EVENT_STREAM:
            # The collector gets {<:event-type>: payload}; the payload is what is decoded.
            ((kind, payload),) = event.items() if len(event) == 1 else (("x", event),)
            collector.event({kind: traced(payload, log)})
        else:
            collector.event(traced(event, log))
    collector.calls()
    assert unread_keys(fmt.shapes.event, log) == []


def loaded(content: bytes) -> object:
    try:
        value = json.loads(content)
        traced(value, [])  # too deep to trace: no adapter reads that deep anyway
    except (ValueError, RecursionError):
        return None
    return value


@needs_msgspec
@pytest.mark.parametrize("api", APIS)
def test_every_key_the_adapters_read_of_real_traffic_is_in_their_shapes(api):
    for body in REQUEST_SEEDS[api]:
        check_request_shape(api, body)
    for raw in RESPONSE_SEEDS[api]:
        check_answer_shape(api, loaded(raw))
    if FORMATS[api].stream_collector:
        check_event_shape(api, EVENT_SEEDS[api])


@needs_msgspec
@pytest.mark.parametrize("api", APIS)
@examples(40)
@given(data=st.data())
def test_every_key_the_adapters_read_of_any_body_is_in_their_shapes(api, data):
    check_request_shape(api, loaded(data.draw(REQUESTS[api])))
    check_answer_shape(api, loaded(data.draw(RESPONSES[api])))
    if FORMATS[api].stream_collector:
        check_event_shape(api, data.draw(st.lists(EVENTS[api], max_size=6)))


def test_the_shape_check_sees_a_forgotten_key():
    class Named(typing.TypedDict, total=False):
        name: typing.Any

    class Body(typing.TypedDict, total=False):
        tools: list[Named] | None

    log: list = []
    body = traced({"tools": [{"name": "a", "type": "function"}], "n": {"a": 1}}, log)
    body["tools"][0].get("name")
    body["tools"][0].get("type")
    len(body["tools"][0])
    body.get("n")
    assert unread_keys(Body, log) == [": n", "tools.[]: (whole)", "tools.[]: type"]


@needs_msgspec
def test_the_tools_decoded_lately_are_kept_by_when_they_were_last_used(monkeypatch):
    # A client whose tools come with every request keeps them decoded, whatever other
    # clients' tools come between.
    monkeypatch.setattr(readers, "_lately", [])
    shape, resent = FORMATS["openai-chat"].shapes.request, FORMATS["openai-chat"].offer_keys
    bodies = [
        _chat([f"c{n}.t{i}.{'d' * 200}" for i in range(40)], "hi")
        for n in range(readers._MAX_LATELY + 1)
    ]

    def tools(body):
        return readers.FAST.body(body, shape, resent)["tools"]

    first = [tools(body) for body in bodies[:-1]]
    assert tools(bodies[0]) is first[0]  # used again: now the last used
    tools(bodies[-1])  # one more: the least lately used goes
    assert tools(bodies[0]) is first[0]
    assert tools(bodies[1]) is not first[1] and tools(bodies[1]) == first[1]
