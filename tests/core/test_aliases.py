"""Fix mode's renaming (aliases.py, through the Exchange): names the rule rejects go out as
aliases, everywhere in the request, and come back as the app's own in the answer.

The peer bugs the issue lists each have a test here: a map shared between requests, an
alias that depends on tool order, a collapsed double underscore, a stream's start event
left unrestored, a stream failed over an unknown name, a map rebuilt from the answer, a
choice or history left unrenamed, a valid name renamed anyway.
"""

import itertools
import json
import re

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.testkit import RESPONSES_DIR
from tests.testkit import chat_answer
from tests.testkit import every_split
from tests.testkit import response_api
from tests.testkit import response_body
from toolnames_core import Exchange
from toolnames_core import bodies
from toolnames_core.aliases import AliasPlan
from toolnames_core.aliases import FragmentRestorer
from toolnames_core.aliases import Restorer
from toolnames_core.aliases import alias_for
from toolnames_core.aliases import plan_aliases
from toolnames_core.formats import FORMATS
from toolnames_core.framings import rewriter_for
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.rules import RULES
from toolnames_core.rules import valid_name_pattern
from toolnames_core.streams import StreamTap

OPENAI = RULES["openai"]
MCP_NAMES = [
    "github.create_issue",
    "calendar.respondToEvent",
    "mcp__plugin_yelp-mcp-google_google__batch_modify_gmail_message_labels_and_then_some",
    "$READFILE",
    "browser.tabs.open",
    "search web",
    "ünïcödé",
]


def fn(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def chat_request(tools, choice=None, history=()) -> bytes:
    messages: list = [{"role": "user", "content": "hi"}]
    for i, name in enumerate(history):
        call = {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "ok"},
        ]
    body: dict = {"model": "m", "messages": messages, "tools": [fn(n) for n in tools]}
    if choice:
        body["tool_choice"] = {"type": "function", "function": {"name": choice}}
    return json.dumps(body).encode()


def fixed(request: bytes, api: str = "openai-chat", rule: str = "openai") -> Exchange:
    exchange = Exchange(FORMATS[api], RULES[rule])
    exchange.check_request(request, fix=True)
    return exchange


# --- the alias --------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("name", MCP_NAMES + ["", "9lives", "a" * 300])
def test_an_alias_is_accepted_by_its_rule_and_the_same_every_time(name, rule):
    alias = alias_for(name, RULES[rule])
    assert valid_name_pattern(RULES[rule]).fullmatch(alias)
    assert alias == alias_for(name, RULES[rule])


def test_a_double_underscore_is_kept_as_it_is():
    assert alias_for("mcp__server__tool.x", OPENAI).startswith("mcp__server__tool_x_")


def test_names_that_differ_get_different_aliases_even_when_made_valid_alike():
    assert alias_for("a.b", OPENAI) != alias_for("a:b", OPENAI)


# --- the request ------------------------------------------------------------------------------


def test_every_place_a_rejected_name_occurs_is_renamed_and_nothing_else_changes():
    request = chat_request(
        ["github.create_issue", "ok_tool"], "github.create_issue", ["github.create_issue"]
    )
    exchange = fixed(request)
    alias = alias_for("github.create_issue", OPENAI)
    sent = json.loads(exchange.new_body)
    assert [t["function"]["name"] for t in sent["tools"]] == [alias, "ok_tool"]
    assert sent["tool_choice"]["function"]["name"] == alias
    assert sent["messages"][1]["tool_calls"][0]["function"]["name"] == alias
    assert exchange.new_body == request.replace(b"github.create_issue", alias.encode())
    assert {(f.path, f.rewrite) for f in exchange.fixes} == {
        ("tools[0].function.name", "alias"),
        ("tool_choice.function.name", "alias"),
        ("messages[1].tool_calls[0].function.name", "alias"),
    }


def test_legacy_functions_their_calls_and_named_results_are_renamed_together():
    request = json.dumps(
        {
            "model": "m",
            "functions": [{"name": "x.y", "parameters": {"type": "object"}}],
            "function_call": {"name": "x.y"},
            "messages": [
                {"role": "assistant", "function_call": {"name": "x.y", "arguments": "{}"}},
                {"role": "function", "name": "x.y", "content": "ok"},
                {"role": "tool", "name": "x.y", "tool_call_id": "c1", "content": "ok"},
            ],
        }
    ).encode()
    exchange = fixed(request)
    alias = alias_for("x.y", OPENAI)
    assert exchange.new_body == request.replace(b'"x.y"', f'"{alias}"'.encode())
    assert sorted(f.path for f in exchange.fixes) == [
        "function_call.name",
        "functions[0].name",
        "messages[0].function_call.name",
        "messages[1].name",
        "messages[2].name",
    ]


def test_a_poisoned_history_is_repaired_even_without_a_bad_tool():
    exchange = fixed(chat_request(["read_file"], history=["$READFILE"]))
    assert exchange.new_body is not None
    assert b"$READFILE" not in exchange.new_body


def test_a_valid_name_is_never_renamed():
    exchange = fixed(chat_request(["search_web", "mcp__server__tool"], "search_web"))
    assert exchange.new_body is None and exchange.fixes == []


def test_aliases_do_not_depend_on_the_order_of_the_tools():
    names = ["a.b", "c.d", "ok", "e f"]
    seen = set()
    for order in itertools.permutations(names):
        exchange = fixed(chat_request(list(order)))
        seen.add(frozenset(exchange.restorer.aliases.items()))
    assert len(seen) == 1


def test_a_name_offered_twice_is_reported_not_renamed():
    exchange = fixed(chat_request(["a.b", "a.b"]))
    assert exchange.new_body is None
    assert [s.reason for s in exchange.fix_skipped] == [
        "is offered 2 times; no alias can tell them apart"
    ]


def test_a_choice_that_names_no_offered_tool_is_left_for_choice_not_in_tools():
    exchange = fixed(chat_request(["a_b"], "x.y"))
    assert b'"x.y"' in (exchange.new_body or chat_request(["a_b"], "x.y"))
    assert "choice-not-in-tools" in [f.code for f in exchange.findings]


def test_the_mastra_choice_fix_and_renaming_combine():
    exchange = fixed(chat_request(["search_web", "github.create_issue"], "search.web"))
    sent = json.loads(exchange.new_body)
    assert sent["tool_choice"]["function"]["name"] == "search_web"
    assert sent["tools"][1]["function"]["name"] == alias_for("github.create_issue", OPENAI)


def test_observe_and_block_never_rename():
    exchange = Exchange(FORMATS["openai-chat"], RULES["openai"])
    exchange.check_request(chat_request(["a.b"]))
    assert exchange.new_body is None and exchange.restorer is None


# --- the answer -------------------------------------------------------------------------------


def test_the_answer_gets_the_apps_names_back_and_is_judged_by_them():
    exchange = fixed(chat_request(["github.create_issue", "ok"]))
    alias = alias_for("github.create_issue", OPENAI)
    answer = chat_answer(alias, "ok")
    restored = exchange.restore(answer)
    assert restored == answer.replace(alias.encode(), b"github.create_issue")
    assert exchange.check_response(200, "application/json", answer) == []
    assert exchange.restored == 1


def test_each_flow_restores_with_its_own_map():
    first = fixed(chat_request(["a.b"]))
    second = fixed(chat_request(["c.d"]))
    alias_a = alias_for("a.b", OPENAI)
    # The second flow never offered a.b: its alias in its answer is not its to restore.
    assert second.restore(chat_answer(alias_a)) is None
    assert first.restore(chat_answer(alias_a)) == chat_answer("a.b")


def test_a_call_to_a_name_in_no_map_passes_unchanged_and_is_flagged():
    exchange = fixed(chat_request(["a.b"]))
    edited = alias_for("a.b", OPENAI) + "x"
    answer = chat_answer(edited)
    assert exchange.restore(answer) is None
    findings = exchange.check_response(200, "application/json", answer)
    assert [f.code for f in findings] == ["response-unknown-tool"]


def test_arguments_that_mention_an_alias_are_not_touched():
    exchange = fixed(chat_request(["a.b"]))
    alias = alias_for("a.b", OPENAI)
    answer = json.dumps(
        {"choices": [{"message": {"content": f'use "name": "{alias}"', "tool_calls": []}}]}
    ).encode()
    assert exchange.restore(answer) is None


# --- every format, streamed and not -----------------------------------------------------------

FIXTURES = sorted(
    p.name for p in RESPONSES_DIR.iterdir() if p.suffix in (".json", ".sse", ".jsonl")
)


def aliased_fixture(name: str):
    """A fixture answer as the provider sends it when the request's tools went out renamed:
    each called name replaced by its alias (the fixture's names stand for the app's)."""
    api = response_api(name)
    content_type, original = response_body(RESPONSES_DIR / name)
    calls, _ = bodies.read_response_calls(FORMATS[api], content_type, original)
    aliases = {alias_for(c.name, RULES["portable"]): c.name for c in calls}
    to_alias = Restorer({app: alias for alias, app in aliases.items()})  # the other way
    sent = rewriter_for(FORMATS[api].framing, to_alias)
    sent = to_alias(original) if content_type == "application/json" else sent(original) + sent(b"")
    return api, content_type, original, sent, aliases


@pytest.mark.parametrize("name", FIXTURES)
def test_every_format_gets_every_name_back_and_every_other_byte_as_sent(name):
    api, content_type, original, sent, aliases = aliased_fixture(name)
    assert sent != original
    exchange = Exchange(FORMATS[api], RULES["portable"])
    exchange.check_request(b"{}")
    exchange.restorer = Restorer(aliases)
    if content_type == "application/json":
        assert exchange.restore(sent) == original
    else:
        tap = exchange.stream_tap()
        assert tap(sent) + tap(b"") == original
    assert exchange.restored >= len(aliases)


@pytest.mark.parametrize("name", [n for n in FIXTURES if not n.endswith(".json")])
def test_every_stream_split_anywhere_comes_out_exactly_as_the_app_expects(name):
    api, content_type, original, sent, aliases = aliased_fixture(name)
    for pieces in every_split(sent):
        tap = StreamTap(FORMATS[api], Restorer(aliases))
        assert b"".join(tap(piece) for piece in [*pieces, b""]) == original


def test_a_stream_goes_on_when_restoring_fails():
    def broken(data: bytes) -> bytes:
        raise RuntimeError("bug")

    tap = StreamTap(FORMATS["openai-chat"], broken)
    chunks = [b'data: {"a": 1}\n\n', b'data: {"b": 2}\n\n']
    assert b"".join(tap(c) for c in [*chunks, b""]) == b"".join(chunks)
    assert "RuntimeError" in tap.problem().message


# --- properties -------------------------------------------------------------------------------

names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=80)


@settings(max_examples=200, deadline=None)
@given(names, st.sampled_from([" ", "", "\n  "]))
def test_a_restorer_gives_back_a_name_under_name_keys_only_written_as_json_writes_it(app, space):
    # Written out with json.dumps, as the restorer's fast paths must match, in every place a
    # name is put back, and in keys that only end in "name", where it must not be.
    alias = "app_tool_0c1d2e3f"
    sep = f":{space}"
    arguments = json.dumps(
        {"tool_uses": [{"recipient_name": f"functions.{alias}"}, {"username": alias}]}
    )
    body = (
        f'{{"name"{sep}"{alias}","recipient_name"{sep}"functions.{alias}",'
        f'"username"{sep}"{alias}","display_name":"{alias}","arguments":{json.dumps(arguments)}}}'
    ).encode()
    as_json = json.dumps(app)[1:-1]
    want_arguments = arguments.replace(f'"functions.{alias}"', f'"functions.{as_json}"', 1)
    want = (
        f'{{"name"{sep}"{as_json}","recipient_name"{sep}"functions.{as_json}",'
        f'"username"{sep}"{alias}","display_name":"{alias}",'
        f'"arguments":{json.dumps(want_arguments)}}}'
    ).encode()
    restorer = Restorer({alias: app})
    assert restorer(body) == want
    assert restorer.restored == 3


class AlternationRestorer:
    """The oracle: how a Restorer found aliases until it looked each value up in a dict, by a
    pattern of the aliases themselves (longest first), and how it wrote the app's name back."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases
        names = "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True))
        alias = b"(functions\\.)?(" + names.encode() + b")"
        self.pattern = re.compile(
            rb'name(?:(?:(?<="name)|(?<="recipient_name))("\s*:\s*")' + alias + rb'(")'
            rb'|(?<=\\"recipient_name)(\\"\s*:\s*\\")' + alias + rb'(\\"))'
        )

    def _original(self, match: re.Match) -> bytes:
        escaped = match[1] is None
        colon, prefix, alias, after = match.groups()[4:] if escaped else match.groups()[:4]
        app = self.aliases[alias.decode()]
        text = json.dumps(app)[1:-1]
        if escaped:
            text = json.dumps(text)[1:-1]
        return b"name" + colon + (prefix or b"") + text.encode() + after

    def __call__(self, data: bytes) -> bytes:
        return self.pattern.sub(self._original, data)


def assert_restores_as_the_pattern(aliases: dict[str, str], event: bytes) -> None:
    """A Restorer gives ``event`` back as the oracle does, and counts the names it restored as
    the oracle's pattern matches them; so does one told where ``name`` first occurs (a
    stream's restore, which has searched for it already)."""
    restorer = Restorer(aliases)
    oracle = AlternationRestorer(aliases)

    assert restorer(event) == oracle(event)
    assert restorer.restored == len(oracle.pattern.findall(event))
    at = event.find(b"name")
    if at != -1:
        told = Restorer(aliases)
        assert told.restore_from(event, at) == oracle(event)
        assert told.restored == restorer.restored


# Aliases as rules make them (a rule may allow dots), and one that starts as a prefix does.
restorer_aliases = st.dictionaries(
    st.one_of(st.from_regex(r"[A-Za-z0-9_.:-]{1,12}", fullmatch=True), st.just("functions.x")),
    names,
    min_size=1,
    max_size=5,
)
# The bytes of events in pieces: keys and values where names go, the quotes, escapes and
# separators around them, in any order, so that text no JSON encoder writes is read too.
RESTORER_PIECES = [
    b'"name":"',
    b'"name" : "',
    b'"recipient_name":"',
    b'\\"recipient_name\\":\\"',
    b'\\"recipient_name\\": \\"',
    b'"username":"',
    b'":"',
    b'\\":\\"',
    b"name",
    b"functions.",
    b'"',
    b'\\"',
    b'",',
    b'"}',
    b"\\",
    b" ",
    b":",
    b"x",
    "é".encode(),
    b"\xff",
]


@settings(max_examples=500, deadline=None)
@given(restorer_aliases, st.data())
def test_a_restorer_finds_and_writes_exactly_what_a_pattern_of_its_aliases_did(aliases, data):
    pieces = st.sampled_from(RESTORER_PIECES + [a.encode() for a in aliases])
    event = b"".join(data.draw(st.lists(pieces, max_size=40)))

    assert_restores_as_the_pattern(aliases, event)


@pytest.mark.parametrize(
    ("aliases", "event"),
    [
        # functions. before an alias, and as the start of an alias itself.
        ({"x": "a.x"}, b'{"recipient_name":"functions.x","name":"functions.x"}'),
        ({"functions.x": "a.x"}, b'{"recipient_name":"functions.x","name":"functions.x"}'),
        ({"x": "a.x", "functions.x": "b.x"}, b'{"name":"functions.x"}'),
        # A value that is no alias, and a name after it that the search must still find.
        ({"x": "a.x"}, b'{"name":"name":"x"}'),
        # The one name of an event, compact: whole, after functions., and each way it is no
        # value the pattern reads (empty, escaped, unterminated, at the very start).
        ({"x": "a.x"}, b'{"name":"x"}'),
        ({"x": "a.x"}, b'{"name":"functions.x"}'),
        ({"functions.": "a.x"}, b'{"name":"functions."}'),
        ({"x": "a.x"}, b'{"name":""}'),
        ({"x": "a.x"}, b'{"name":"x\\"}'),
        ({"x": "a.x"}, b'{"name":"x\\"","y":1}'),
        ({"x": "a.x"}, b'{"name":"x'),
        ({"x": "a.x"}, b'name":"x"'),
        ({"x": "a.x"}, b'{"name":"\xff"}'),
        ({"x": "a.x"}, b'{"name":"y","name":"x","name":"x\\"","name":"x'),
        ({"x": "a.x"}, b'"args":"{\\"recipient_name\\":\\"x\\",\\"recipient_name\\": \\"y\\"}"'),
    ],
)
def test_a_restorer_matches_a_pattern_of_its_aliases_where_they_differ_most(aliases, event):
    assert_restores_as_the_pattern(aliases, event)


@settings(max_examples=200, deadline=None)
@given(st.lists(names, min_size=1, max_size=6, unique=True), st.data())
def test_restoring_after_renaming_gives_back_the_apps_names_and_every_other_byte(tools, data):
    request = chat_request(tools)
    exchange = fixed(request)
    called = data.draw(st.lists(st.sampled_from(tools), min_size=1, max_size=4))
    if exchange.new_body is None:
        return  # every name valid (or only duplicates): nothing renamed
    sent = json.loads(exchange.new_body)
    sent_names = [t["function"]["name"] for t in sent["tools"]]
    assert all(valid_name_pattern(OPENAI).fullmatch(n) for n in sent_names)
    by_app = dict(zip(tools, sent_names, strict=True))
    answer_sent = chat_answer(*(by_app[n] for n in called))
    restored = exchange.restore(answer_sent) or answer_sent
    assert json.loads(restored) == json.loads(chat_answer(*called))
    # Outside the names, the request went out byte for byte as the client sent it.
    assert json.dumps(sent["messages"]) == json.dumps(json.loads(request)["messages"])


def test_the_same_request_renamed_again_is_renamed_alike():
    # Aliases and fixes are remembered between requests: a request
    # sent again must come out as the first time, and another set of names its own way.
    request = chat_request(["a.b", "c.d"], "a.b", ["c.d"])
    first = fixed(request)
    again = fixed(request)
    assert again.new_body == first.new_body
    assert again.fixes == first.fixes
    assert again.restorer.aliases == first.restorer.aliases
    other = fixed(chat_request(["a.b", "e.f"]))
    assert other.restorer.aliases == {
        alias_for("a.b", OPENAI): "a.b",
        alias_for("e.f", OPENAI): "e.f",
    }


def plan(request: bytes, rule: str = "openai", keep: set = frozenset()) -> AliasPlan:
    view, _ = bodies.read_request(request, FORMATS["openai-chat"])
    return plan_aliases(view, RULES[rule], keep)


def test_what_the_tools_decide_is_made_once_and_never_served_stale():
    # The tools' aliases and fixes are remembered for the same tools (model.tool_set): the
    # same tools under another rule, at other places, or with a history that names a tool
    # they do not offer (which takes part in every alias) must be planned as made afresh.
    tools = ["a.b", "c.d"]
    first = plan(chat_request(tools, history=["a.b"]))
    assert [f.path for f in first.fixes] == [
        "tools[0].function.name",
        "tools[1].function.name",
        "messages[1].tool_calls[0].function.name",
    ]
    first.fixes.clear()  # a caller may change what it got; the next plan is its own
    first.aliases.clear()
    again = plan(chat_request(tools, history=["a.b"]))
    assert [f.new for f in again.fixes] == [alias_for(n, OPENAI) for n in ["a.b", "c.d", "a.b"]]
    assert again.aliases == {alias_for(n, OPENAI): n for n in tools}
    # The history sends, as a valid name of its own, what "a.b" would be aliased to.
    taken = alias_for("a.b", OPENAI)
    clash = plan(chat_request(tools, history=[taken]))
    assert clash.fixes[0].new == alias_for("a.b", OPENAI, digest_len=16)
    assert [f.path for f in clash.fixes] == ["tools[0].function.name", "tools[1].function.name"]
    assert plan(chat_request(tools, history=["a.b"]), "gemini").fixes == []  # dots are fine
    assert plan(chat_request(tools), "cohere").fixes[0].new == alias_for("a.b", RULES["cohere"])
    legacy = json.dumps({"functions": [{"name": n} for n in tools]}).encode()
    assert [f.path for f in plan(legacy).fixes] == ["functions[0].name", "functions[1].name"]
    twice = plan(chat_request(["a.b", "a.b"]))
    assert (twice.fixes, [s.name for s in twice.skipped]) == ([], ["a.b"])
    twice.skipped.clear()
    assert [s.name for s in plan(chat_request(["a.b", "a.b"])).skipped] == ["a.b"]


def test_a_place_another_fix_rewrites_is_not_aliased_even_when_its_tools_are_known():
    view = RequestView("openai-chat", tools=[NameRef("a.b", ("tools", 0, "function", "name"))])
    assert len(plan_aliases(view, OPENAI).fixes) == 1
    assert plan_aliases(view, OPENAI, {("tools", 0, "function", "name")}).fixes == []


def test_a_wrappers_arguments_are_ambiguous_only_where_a_recipient_name_may_go_on():
    names = FragmentRestorer(Restorer({"github_create_issue_e877a647": "github.create_issue"}))
    whole = '{"tool_uses":[{"recipient_name":"functions.github_create_issue_e877a647"}]}'
    assert names.restore(whole) == whole.replace(
        "github_create_issue_e877a647", "github.create_issue"
    )
    assert names.restorer.restored == 1
    start, end = whole.index('"recipient_name"'), whole.index('"}') + 1
    for cut in range(len(whole)):
        head = whole[:cut]
        # Inside the tag or its value, or right after a quote that may begin a tag: wait.
        waits = start < cut < end or head.endswith('"')
        assert names.ambiguous(head) is waits, head
