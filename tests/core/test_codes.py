"""The finding catalogue (codes.py): one spelling of each code, the same list as docs/findings.md."""

import re
from pathlib import Path

from toolnames_core import codes

FINDINGS = Path(__file__).resolve().parents[2] / "docs" / "findings.md"


def test_every_code_constant_is_in_the_catalogue_and_named_after_its_code():
    constants = {
        name: value for name, value in vars(codes).items() if name.isupper() and name != "CATALOGUE"
    }
    assert set(constants.values()) == set(codes.CATALOGUE)
    for name, value in constants.items():
        assert value == name.lower().replace("_", "-")


def test_the_findings_table_of_the_docs_lists_exactly_the_catalogue():
    table = re.findall(
        r"^\| `([a-z]+(?:-[a-z]+)+)` \| (?:error|warning|info)",
        FINDINGS.read_text(encoding="utf-8"),
        re.M,
    )
    assert sorted(table) == sorted(codes.CATALOGUE)


# The provider's verdict is read from its answer, though it is about the request's names.
VERDICT_CODES = {codes.PROVIDER_REJECTED, codes.RULE_DISAGREES}
# What an MCP server's tools/list answer lists.
LISTING_CODES = {codes.MCP_NAME_INVALID, codes.MCP_NAME_REJECTED, codes.MCP_NAME_DUPLICATE}


def test_each_code_says_which_message_it_is_about():
    for code, info in codes.CATALOGUE.items():
        answer = code.startswith("response-") or code in VERDICT_CODES | LISTING_CODES
        assert info.side == ("response" if answer else "request")
        assert info.meaning
