"""What a listed MCP name is worth (mcp/checks.py): MCP's own rule, and the providers'."""

import pytest

from toolnames_core import codes
from toolnames_core.mcp import listed_findings
from toolnames_core.mcp import rejecting_rules
from toolnames_core.rules import RULES

OPENAI = RULES["openai"]


def test_a_plain_name_has_no_finding():
    assert listed_findings("get_weather", "p", OPENAI) == []


def test_a_dotted_name_is_valid_mcp_and_rejected_by_every_provider_but_gemini():
    (finding,) = listed_findings("github.create_issue", "p", OPENAI)
    assert finding.code == codes.MCP_NAME_REJECTED and finding.severity == "warning"
    ids = [rule.id for rule in rejecting_rules("github.create_issue")]
    assert "gemini" not in ids and {"openai", "anthropic", "bedrock"} <= set(ids)
    assert "portable" not in ids  # no provider
    assert "'.'" in finding.message and "openai" in finding.message


@pytest.mark.parametrize(
    ("name", "why"),
    [("search docs", "' '"), ("x" * 141, "128"), ("", "empty"), ("a/b", "'/'")],
)
def test_names_outside_mcps_rule_are_said_so(name, why):
    found = listed_findings(name, "p", OPENAI)
    assert [f.code for f in found] == [codes.MCP_NAME_INVALID, codes.MCP_NAME_REJECTED]
    assert why in found[0].message and found[0].rule == "mcp"


def test_a_name_only_other_providers_reject_is_information_under_the_chosen_rule():
    # Cohere has no dash; the chosen rule (openai) takes it.
    (finding,) = listed_findings("get-weather", "p", OPENAI)
    assert finding.severity == "info" and "cohere" in finding.message
    (finding,) = listed_findings("get-weather", "p", RULES["cohere"])
    assert finding.severity == "warning"


def test_a_65_character_name_is_rejected_where_the_limit_is_64():
    (finding,) = listed_findings("a" * 65, "p", OPENAI)
    assert "anthropic" not in finding.message.split(":")[0]  # Anthropic takes 128
    assert "64" in finding.message
