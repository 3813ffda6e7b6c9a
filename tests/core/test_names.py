import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.testkit import UNUSUAL_NAMES
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


@pytest.mark.parametrize("name,quoted,labels", UNUSUAL_NAMES)
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
