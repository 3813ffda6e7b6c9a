"""Each provider's name rule (rules.py), one row per behaviour, and what its messages say."""

import pytest

from toolnames_core.rules import ADVISED_RULES
from toolnames_core.rules import PROVIDER_RULES
from toolnames_core.rules import RULES
from toolnames_core.rules import name_violations
from toolnames_core.rules import rule_named

EMPTY = "name-empty"
LONG = "name-too-long"
CHARS = "name-invalid-chars"
START = "name-invalid-start"

# (rule, name, the codes name_violations must return, in its order). Limits and character
# sets are the ones docs/providers.md quotes for each provider.
VIOLATIONS = [
    # OpenAI: a-zA-Z0-9_- and at most 64; any allowed character may come first.
    ("openai", "get_weather", []),
    ("openai", "get-weather-2", []),
    ("openai", "9lives", []),
    ("openai", "-dash-first", []),
    ("openai", "a" * 64, []),
    ("openai", "a" * 65, [LONG]),
    ("openai", "", [EMPTY]),
    ("openai", "search.web", [CHARS]),
    ("openai", "mcp:server", [CHARS]),
    ("openai", "get weather", [CHARS]),
    ("openai", "héllo", [CHARS]),
    ("openai", "tool😀", [CHARS]),
    ("openai", "a" * 64 + ".", [LONG, CHARS]),
    ("azure", "a" * 64, []),
    ("azure", "a" * 65, [LONG]),
    ("azure", "search.web", [CHARS]),
    # Anthropic allows 128.
    ("anthropic", "a" * 128, []),
    ("anthropic", "a" * 129, [LONG]),
    ("anthropic", "search.web", [CHARS]),
    ("anthropic", "9lives", []),
    # Gemini allows dots and colons, but the first character must be a letter or underscore.
    ("gemini", "search.web", []),
    ("gemini", "mcp:server.tool-1", []),
    ("gemini", "_private", []),
    ("gemini", "9lives", [START]),
    ("gemini", "-dash-first", [START]),
    ("gemini", ".dot-first", [START]),
    ("gemini", "a" * 65, [LONG]),
    ("gemini", "a/b", [CHARS]),
    # A first character that is itself invalid is reported once, as an invalid character.
    ("gemini", "/ab", [CHARS]),
    ("gemini", "9" + "a" * 64 + "/", [LONG, CHARS, START]),
    ("bedrock", "a" * 64, []),
    ("bedrock", "a" * 65, [LONG]),
    ("bedrock", "search.web", [CHARS]),
    ("mistral", "a" * 65, [LONG]),
    ("mistral", "search.web", [CHARS]),
    ("groq", "a" * 65, [LONG]),
    ("groq", "search.web", [CHARS]),
    ("deepseek", "a" * 65, [LONG]),
    ("deepseek", "search.web", [CHARS]),
    # Cohere: no hyphen, no digit first, and no length limit found.
    ("cohere", "get_weather", []),
    ("cohere", "a" * 500, []),
    ("cohere", "get-weather", [CHARS]),
    ("cohere", "9lives", [START]),
    ("cohere", "", [EMPTY]),
    ("ollama", "github.create_issue", []),
    ("ollama", "a b/" * 100, []),
    ("ollama", "", [EMPTY]),
    # Portable: what every provider above accepts.
    ("portable", "get_weather", []),
    ("portable", "_private", []),
    ("portable", "a" * 64, []),
    ("portable", "a" * 65, [LONG]),
    ("portable", "get-weather", [CHARS]),
    ("portable", "9lives", [START]),
    ("portable", "9" + "-" * 70, [LONG, CHARS, START]),
    ("portable", "", [EMPTY]),
]


@pytest.mark.parametrize("rule,name,codes", VIOLATIONS)
def test_name_violations_returns_each_broken_part_of_the_rule(rule, name, codes):
    assert [code for code, _ in name_violations(name, RULES[rule])] == codes


def test_the_violation_table_covers_every_rule_and_every_code():
    assert {rule for rule, _, _ in VIOLATIONS} == set(RULES)
    assert {code for _, _, codes in VIOLATIONS for code in codes} == {EMPTY, LONG, CHARS, START}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_rule_cites_its_section_of_providers_md(rule):
    assert RULES[rule].id == rule
    assert RULES[rule].source.startswith("docs/providers.md §")


@pytest.mark.parametrize(
    "rule,name,code,expected",
    [
        (
            "openai",
            "a" * 65,
            LONG,
            "is over the 64 characters allowed by rule openai (a-zA-Z0-9_-, max 64)",
        ),
        (
            "anthropic",
            "b" * 130,
            LONG,
            "is over the 128 characters allowed by rule anthropic (a-zA-Z0-9_-, max 128)",
        ),
        (
            "openai",
            "search.web",
            CHARS,
            "contains '.', outside rule openai (a-zA-Z0-9_-, max 64)",
        ),
        (
            "gemini",
            "9lives",
            START,
            "starts with '9'; rule gemini (a-zA-Z0-9_.:-, first a-zA-Z_, max 64) needs a first "
            "character in a-zA-Z_",
        ),
        (
            "cohere",
            "",
            EMPTY,
            "is empty; rule cohere (A-Za-z0-9_, first A-Za-z_) needs at least one character",
        ),
    ],
)
def test_each_reason_names_the_length_or_character_and_the_rule(rule, name, code, expected):
    assert dict(name_violations(name, RULES[rule]))[code] == expected


def test_invalid_characters_are_listed_once_each_sorted_and_at_most_eight():
    ((code, reason),) = name_violations("a.b.c:d/e", RULES["openai"])
    assert code == CHARS
    assert reason.startswith("contains '.', '/', ':', outside")
    ((_, reason),) = name_violations("!#$%&()*+,;", RULES["openai"])
    assert reason.startswith("contains '!', '#', '$', '%', '&', '(', ')', '*', outside")
    assert "'+'" not in reason


def test_invalid_characters_are_shown_escaped_so_the_reason_stays_one_line():
    ((_, reason),) = name_violations("get\nweather\u200b", RULES["openai"])
    assert "\n" not in reason and "\u200b" not in reason
    assert r"'\n'" in reason and r"'\u200b'" in reason


def test_a_rule_is_found_by_its_id_and_an_unknown_one_is_a_clear_error():
    assert rule_named("anthropic") is RULES["anthropic"]
    with pytest.raises(ValueError, match="unknown rule 'nope'; known rules: openai, azure"):
        rule_named("nope")


def test_what_a_name_breaks_is_remembered_per_rule_not_per_id():
    # name_violations remembers its answers (fix mode asks about the same names with every
    # request): another rule, even of the same id, must get its own answer.
    import dataclasses

    rule = RULES["openai"]
    short = dataclasses.replace(rule, max_len=3)
    assert name_violations("abcd", rule) == []
    assert [c for c, _ in name_violations("abcd", short)] == ["name-too-long"]
    assert name_violations("abcd", rule) == []
    # The answer is the caller's to keep: changing it changes no later answer.
    name_violations("abcd", short).clear()
    assert name_violations("abcd", short)


def test_a_rule_of_the_same_id_with_other_characters_gets_its_own_patterns():
    # The compiled character patterns are shared by what they are made of, never by the id
    # alone: a rule allowing dots must not inherit openai's pattern (nor the reverse).
    import dataclasses

    rule = RULES["openai"]
    dotted = dataclasses.replace(rule, chars="." + rule.chars)
    assert [c for c, _ in name_violations("a.b", rule)] == ["name-invalid-chars"]
    assert name_violations("a.b", dotted) == []
    assert [c for c, _ in name_violations("a.b", rule)] == ["name-invalid-chars"]


def test_ollamas_rule_limits_no_name_and_is_never_advice():
    ollama = RULES["ollama"]
    for name in ("github.create_issue", "x" * 1000, "a b/c:d", "é🙂", "\n"):
        assert name_violations(name, ollama) == []
    assert [code for code, _ in name_violations("", ollama)] == ["name-empty"]
    # A rule that rejects nothing would be every name's "rule that accepts it", and the empty
    # name's "rule that rejects it": it is neither advice nor a provider that rejects names.
    assert "ollama" not in ADVISED_RULES
    assert ollama not in PROVIDER_RULES
    assert set(ADVISED_RULES) == {r for r, rule in RULES.items() if rule.enforced}
