"""Whose name rule applies to a request (choose_rule): by host and API; which format a request
speaks is tests/core/formats/test_base.py's."""

from __future__ import annotations

import re
from typing import NamedTuple

import pytest

from tests.testkit import exchange_for
from toolnames_core import endpoints
from toolnames_core.endpoints import RuleOverride
from toolnames_core.endpoints import choose_rule
from toolnames_core.endpoints import parse_rule_override
from toolnames_core.formats import FORMATS
from toolnames_core.formats import format_for
from toolnames_core.rules import RULES


@pytest.mark.parametrize(
    "api, host, rule",
    [
        ("openai-chat", "api.openai.com", "openai"),
        ("openai-responses", "api.openai.com", "openai"),
        ("openai-chat", "myresource.openai.azure.com", "azure"),
        ("openai-responses", "myresource.openai.azure.com", "azure"),
        ("openai-chat", "myresource.cognitiveservices.azure.com", "azure"),
        ("openai-chat", "myproject.services.ai.azure.com", "azure"),
        # Cohere's compatibility API speaks Chat Completions under Cohere's rule (docs/providers.md §10).
        ("openai-chat", "api.cohere.ai", "cohere"),
        ("openai-chat", "api.cohere.com", "cohere"),
        ("openai-chat", "api.mistral.ai", "mistral"),
        ("openai-chat", "api.groq.com", "groq"),
        ("openai-chat", "api.deepseek.com", "deepseek"),
        ("openai-chat", "generativelanguage.googleapis.com", "gemini"),
        ("gemini", "generativelanguage.googleapis.com", "gemini"),
        ("gemini", "us-central1-aiplatform.googleapis.com", "gemini"),
        ("gemini", "aiplatform.googleapis.com", "gemini"),
        ("gemini", "aiplatform.eu.rep.googleapis.com", "gemini"),  # by its wire format
        ("anthropic-messages", "api.anthropic.com", "anthropic"),
        ("bedrock-converse", "bedrock-runtime.us-east-1.amazonaws.com", "bedrock"),
        ("bedrock-converse", "bedrock-runtime-fips.us-east-1.amazonaws.com", "bedrock"),
        # Unknown hosts get the rule of the wire format they speak.
        ("openai-chat", "openrouter.ai", "openai"),
        ("openai-chat", "localhost", "openai"),
        ("anthropic-messages", "127.0.0.1", "anthropic"),
        ("gemini", "gemini-proxy.internal", "gemini"),
        ("bedrock-converse", "bedrock.example.com", "bedrock"),
        # Hosts are matched whole and without regard to case.
        ("openai-chat", "API.COHERE.COM", "cohere"),
        ("openai-chat", "MyResource.OpenAI.Azure.com", "azure"),
        ("openai-chat", "openai.azure.com.example.net", "openai"),
        ("openai-chat", "notapi.cohere.com", "openai"),
    ],
)
def test_choose_rule_by_host(api, host, rule):
    assert choose_rule(FORMATS[api], host) is RULES[rule]


@pytest.mark.parametrize("fmt", FORMATS.values(), ids=list(FORMATS))
def test_an_unknown_host_gets_the_rule_of_its_format(fmt):
    assert choose_rule(fmt, "unknown.example") is RULES[fmt.rule]


class Source(NamedTuple):
    rule: str
    host_decides: bool


def test_the_rule_depends_on_the_api_as_well_as_the_host():
    # A format whose rule is its own on every host (Claude through Bedrock's InvokeModel is
    # Anthropic's, on the host where Converse gets Bedrock's) does not let the host decide.
    host = "bedrock-runtime.us-east-1.amazonaws.com"
    assert choose_rule(Source("bedrock", True), host).id == "bedrock"
    assert choose_rule(Source("anthropic", False), host).id == "anthropic"
    assert choose_rule(Source("anthropic", True), host).id == "bedrock"
    # The user's override still wins.
    override = (parse_rule_override("*=portable"),)
    assert choose_rule(Source("anthropic", False), host, override).id == "portable"


@pytest.mark.parametrize(
    "name, codes",
    [
        (
            "CurrentDate-get_current_date",
            ["name-invalid-chars"],
        ),  # docs/providers.md §10, langflow #5465
        ("1st_tool", ["name-invalid-start"]),
        ("search.web", ["name-invalid-chars"]),
        ("get_current_date", []),
        ("a" * 200, []),  # no Cohere length limit is known
    ],
)
@pytest.mark.parametrize("host", ["api.cohere.ai", "api.cohere.com"])
def test_cohere_compatibility_api_gets_the_cohere_rule(host, name, codes):
    rule = choose_rule(format_for("POST", "/compatibility/v1/chat/completions"), host).id
    body = f'{{"model": "command-a-03-2025", "tools": [{{"type": "function", "function": {{"name": "{name}"}}}}]}}'
    result = exchange_for(body.encode(), "openai-chat", rule)
    assert rule == "cohere"
    assert [f.code for f in result.findings] == codes


def test_dashes_pass_the_rule_openai_gets_on_the_same_body():
    body = (
        b'{"tools": [{"type": "function", "function": {"name": "CurrentDate-get_current_date"}}]}'
    )
    assert (
        exchange_for(
            body, "openai-chat", choose_rule(FORMATS["openai-chat"], "api.openai.com").id
        ).findings
        == []
    )


# -- overrides -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "specs, api, host, rule",
    [
        (["openrouter.ai=anthropic"], "openai-chat", "openrouter.ai", "anthropic"),
        (["openrouter.ai=anthropic"], "openai-chat", "api.openai.com", "openai"),
        (["*=portable"], "openai-chat", "api.openai.com", "portable"),
        (["*=portable"], "openai-chat", "myresource.openai.azure.com", "portable"),
        (["*=portable"], "gemini", "generativelanguage.googleapis.com", "portable"),
        (["*=portable"], "bedrock-converse", "bedrock-runtime.us-east-1.amazonaws.com", "portable"),
        (["*.example.com=cohere"], "openai-chat", "llm.example.com", "cohere"),
        (["*.example.com=cohere"], "openai-chat", "example.com", "openai"),
        (["llm-?.corp=mistral"], "openai-chat", "llm-7.corp", "mistral"),
        (["llm-[ab].corp=groq"], "openai-chat", "llm-b.corp", "groq"),
        (["llm-[ab].corp=groq"], "openai-chat", "llm-c.corp", "openai"),
        # The first matching override wins, and any override beats the built-in host table.
        (["api.openai.com=anthropic", "*=portable"], "openai-chat", "api.openai.com", "anthropic"),
        (["api.openai.com=anthropic", "*=portable"], "openai-chat", "api.cohere.com", "portable"),
        (["*=portable", "api.openai.com=anthropic"], "openai-chat", "api.openai.com", "portable"),
        (["*.openai.azure.com=openai"], "openai-chat", "x.openai.azure.com", "openai"),
        # Patterns and rules are case-insensitive, and spaces around them are ignored.
        ([" API.Example.COM = OpenAI "], "openai-chat", "api.example.com", "openai"),
        (["api.example.com=cohere"], "openai-chat", "API.EXAMPLE.COM", "cohere"),
    ],
)
def test_overrides(specs, api, host, rule):
    overrides = tuple(parse_rule_override(s) for s in specs)
    assert choose_rule(FORMATS[api], host, overrides).id == rule


def test_parse_rule_override_normalises():
    assert parse_rule_override(" OpenRouter.AI = Anthropic ") == RuleOverride(
        "openrouter.ai", "anthropic"
    )


@pytest.mark.parametrize(
    "spec, error",
    [
        ("openrouter.ai", "expected HOST_PATTERN=RULE, got 'openrouter.ai'"),
        ("", "expected HOST_PATTERN=RULE, got ''"),
        ("=anthropic", "expected HOST_PATTERN=RULE"),
        ("openrouter.ai=", "expected HOST_PATTERN=RULE"),
        (" = ", "expected HOST_PATTERN=RULE"),
        ("openrouter.ai=claude", "unknown rule 'claude'; known rules: openai, azure, anthropic"),
        ("a=b=c", "unknown rule 'b=c'"),
    ],
)
def test_parse_rule_override_errors(spec, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        parse_rule_override(spec)


def test_unknown_rule_error_lists_every_rule():
    with pytest.raises(ValueError) as e:
        parse_rule_override("x=nope")
    for rule in RULES:
        assert rule in str(e.value)


def test_endpoints_exposes_the_rule_table_the_addon_lists():
    assert endpoints.RULES is RULES


@pytest.mark.parametrize(
    ("api", "port", "rule"),
    [
        ("openai-chat", 11434, "ollama"),
        ("openai-responses", 11434, "ollama"),
        ("anthropic-messages", 11434, "ollama"),
        ("openai-chat", 11435, "openai"),
        ("openai-chat", None, "openai"),
        ("ollama", 8080, "ollama"),
    ],
)
def test_ollamas_default_port_makes_the_host_known_to_be_ollama(api, port, rule):
    assert choose_rule(FORMATS[api], "localhost", (), port).id == rule


def test_an_ollama_elsewhere_is_named_by_an_override_with_its_port():
    override = (parse_rule_override("gpu-box:8000=ollama"),)
    assert choose_rule(FORMATS["openai-chat"], "gpu-box", override, 8000).id == "ollama"
    assert choose_rule(FORMATS["openai-chat"], "gpu-box", override, 8001).id == "openai"
