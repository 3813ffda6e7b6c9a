"""The known client rewrites (rewrites.py), checked against values worked out by hand.

Mastra's expected values follow Agent.formatTools() in @mastra/core 1.67.0 (docs/providers.md
§16); test_mastra_rewrite_matches_the_real_format_tools
runs that very function under node when tests/e2e/mastra is installed. The OpenAI Agents SDK
values follow transform_string_function_style(), with the sha1 suffix computed here.
"""

import hashlib
import json
import subprocess

import pytest

from toolnames_core.rewrites import REWRITES
from toolnames_core.rewrites import mastra
from toolnames_core.rewrites import openai_agents

EMOJI = "\U0001f600"  # one code point, two UTF-16 code units

MASTRA = [
    # Keys that are already valid are sent as they are.
    ("get_weather", "get_weather"),
    ("weather-EU", "weather-EU"),
    ("_private", "_private"),
    ("a" * 63, "a" * 63),
    # Every character outside a-zA-Z0-9_- becomes one underscore.
    ("search.web", "search_web"),
    ("search web", "search_web"),
    ("mcp:server/tool", "mcp_server_tool"),
    ("a..b", "a__b"),
    # A first character that is not a letter or underscore gets an underscore in front.
    ("9lives", "_9lives"),
    ("-dash", "_-dash"),
    # ...unless the rewrite already made it an underscore.
    (".hidden", "_hidden"),
    # The prefix comes before the cut to 63, so a 63-character key starting with a digit
    # loses its last character.
    ("1" + "a" * 61 + "z", "_1" + "a" * 61),
    # A valid 64-character key is cut to 63, one short of the providers' 64.
    ("a" * 63 + "z", "a" * 63),
    ("a" * 100, "a" * 63),
    # A non-ASCII character in the BMP is one UTF-16 code unit: one underscore.
    ("héllo", "h_llo"),
    ("ß", "_"),
    ("b" * 62 + "é", "b" * 62 + "_"),
    # An emoji is two UTF-16 code units to JavaScript's regex: two underscores.
    ("a" + EMOJI + "b", "a__b"),
    (EMOJI, "__"),
    (EMOJI + "a" * 62, "__" + "a" * 61),
    # 62 letters and an emoji are 63 code points but 64 UTF-16 units: over 63, so cut.
    ("a" * 62 + EMOJI, "a" * 62 + "_"),
    ("a" * 61 + EMOJI, "a" * 61 + "__"),
    # A lone surrogate is one code unit, so one underscore.
    ("a\ud800b", "a_b"),
]


@pytest.mark.parametrize("key,expected", MASTRA)
def test_mastra_rewrite_follows_format_tools(key, expected):
    assert mastra(key) == expected


def test_mastra_rewrite_of_an_empty_key_is_none():
    # formatTools throws a TypeError on key[0] of "": there is nothing it would send.
    assert mastra("") is None


@pytest.mark.parametrize("key,expected", MASTRA)
def test_mastra_output_is_a_valid_openai_name_of_at_most_63(key, expected):
    out = mastra(key)
    assert len(out) <= 63
    assert all(c.isascii() and (c.isalnum() or c in "_-") for c in out)


def test_mastra_rewrite_matches_the_real_format_tools(mastra_project):
    """Differential check against @mastra/core's own Agent.prototype.formatTools."""
    script = """
const { Agent } = require('@mastra/core/agent');
const out = [];
for (const key of JSON.parse(process.argv[1])) {
  const tools = { [key]: { id: 't' } };
  const self = { name: 'probe', logger: { trackException() {} } };
  out.push(Object.keys(Agent.prototype.formatTools.call(self, tools))[0]);
}
console.log(JSON.stringify(out));
"""
    keys = [key for key, _ in MASTRA if "\ud800" not in key]  # json.dumps cannot carry it raw
    run = subprocess.run(
        ["node", "-e", script, json.dumps(keys)],
        cwd=mastra_project,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(run.stdout) == [mastra(key) for key in keys]


def _sha8(name: str) -> str:
    return hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]


LONG_SPACED = "Fetch The Weather " + "x" * 60  # 78 characters
LONG_DOTTED = "a" * 54 + "." * 20  # the cut lands on underscores, which are stripped
LONG_SYMBOLS = "." * 70  # nothing is left of the stem: the SDK falls back to "tool"
LONG_ACCENTED = "é" * 70  # the hash is over the name's UTF-8 bytes, not the rewritten one

AGENTS = [
    ("get_weather", "get_weather"),
    # Whitespace and everything outside a-zA-Z0-9_ (hyphens included) becomes "_".
    ("get weather", "get_weather"),
    ("tab\there\nnow", "tab_here_now"),
    ("get-weather", "get_weather"),
    ("search.web", "search_web"),
    ("héllo", "h_llo"),
    # Python's regex sees code points, so an emoji is one underscore (Mastra makes two).
    ("a" + EMOJI + "b", "a_b"),
    # The result is lower-cased.
    ("GetWeather", "getweather"),
    ("Get Weather", "get_weather"),
    # At most 64 is kept whole.
    ("A" * 64, "a" * 64),
    # Over 64: a stem of at most 55, right-stripped of "_", plus "_" and 8 hex of sha1(name).
    ("a" * 65, "a" * 55 + "_" + _sha8("a" * 65)),
    (LONG_SPACED, "fetch_the_weather_" + "x" * 37 + "_" + _sha8(LONG_SPACED)),
    (LONG_DOTTED, "a" * 54 + "_" + _sha8(LONG_DOTTED)),
    (LONG_SYMBOLS, "tool_" + _sha8(LONG_SYMBOLS)),
    (LONG_ACCENTED, "tool_" + _sha8(LONG_ACCENTED)),
    # A lone surrogate is rewritten like any other character while no hash is needed.
    ("a\ud800", "a_"),
]


@pytest.mark.parametrize("name,expected", AGENTS)
def test_openai_agents_rewrite_follows_transform_string_function_style(name, expected):
    assert openai_agents(name) == expected


def test_openai_agents_long_form_is_exactly_64_characters_when_the_stem_is_full():
    assert len(openai_agents("a" * 65)) == 64
    assert len(openai_agents(LONG_SPACED)) == 64


@pytest.mark.parametrize(
    "name",
    [
        "",
        # The SDK cannot hash a lone surrogate (it raises UnicodeEncodeError): no answer.
        "\ud800" + "a" * 70,
    ],
)
def test_openai_agents_rewrite_gives_none_where_the_sdk_sends_nothing_usable(name):
    assert openai_agents(name) is None


def test_rewrites_are_tried_in_a_fixed_order_with_their_sources():
    assert [(r.id, r.apply) for r in REWRITES] == [
        ("mastra", mastra),
        ("openai-agents", openai_agents),
    ]
    assert all(r.source for r in REWRITES)
