import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from toolnames_core.names import char_label
from toolnames_core.names import describe_name
from toolnames_core.names import escape_text
from toolnames_core.names import quote_name


@pytest.mark.parametrize(
    "name,expected",
    [
        ("search.web", "'search.web' (10 chars)"),
        ("", "'' (0 chars)"),
        ("it's", "'it\\'s' (4 chars)"),
        ("a" * 100, "'" + "a" * 80 + "…' (100 chars)"),
    ],
)
def test_describe_name_shows_the_value_and_its_full_length(name, expected):
    assert describe_name(name) == expected


@pytest.mark.parametrize(
    "name,quoted,labels",
    [
        # A bidi override that makes the name read 'searchbew' on screen.
        ("search\u202eweb", r"'search\u202eweb'", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("search\u200bweb", r"'search\u200bweb'", "U+200B ZERO WIDTH SPACE"),
        ("get\nweather\t", r"'get\nweather\t'", "U+000A LINE FEED, U+0009 CHARACTER TABULATION"),
        ("e\u0301cho", r"'e\u0301cho'", "U+0301 COMBINING ACUTE ACCENT"),
        # A Cyrillic 'а' that looks like the Latin one.
        ("se\u0430rch", r"'se\u0430rch'", "U+0430 CYRILLIC SMALL LETTER A"),
        ("nb\u00a0sp", r"'nb\u00a0sp'", "U+00A0 NO-BREAK SPACE"),
        ("lone\ud800", r"'lone\ud800'", "U+D800 <lone surrogate>"),
        ("emoji\U0001f600", r"'emoji\U0001f600'", "U+1F600 GRINNING FACE"),
        ("c1\x85", r"'c1\u0085'", "U+0085 <control>"),
    ],
)
def test_a_name_outside_printable_ascii_is_escaped_and_each_character_named(name, quoted, labels):
    assert quote_name(name) == quoted
    assert describe_name(name) == f"{quoted} ({len(name)} chars; {labels})"


def test_many_unusual_characters_are_named_up_to_four():
    text = describe_name("\u200b\u200c\u200d\u2060\u202e\u202d")
    assert text.count("U+") == 4 and text.endswith("and 2 more)")


def test_char_label_names_unassigned_code_points():
    assert char_label("\u0378") == "U+0378 <unassigned>"


def test_escape_text_keeps_letters_and_escapes_what_hides_or_reorders_text():
    assert escape_text("Grüße\u202e\u200b\n") == "Grüße\\u202e\\u200b\\n"


@settings(max_examples=200)
@given(st.text())
def test_a_quoted_name_is_one_line_of_printable_ascii_and_reads_back(name):
    quoted = quote_name(name[:80])
    assert quoted.isascii() and quoted.isprintable()
    # Every escape is one Python reads back: the form is unambiguous.
    assert eval(quoted) == name[:80]  # noqa: S307 - a quoted literal built by the test
    for c in name:
        assert char_label(c).startswith(f"U+{ord(c):04X} ")
