"""Which wire format a request speaks (detect_api) and whose name rule applies (choose_rule)."""

from __future__ import annotations

import json
import re

import pytest

from tests.testkit import SDK_DIR
from tests.testkit import exchange_for
from toolnames_core import endpoints
from toolnames_core.endpoints import RuleOverride
from toolnames_core.endpoints import choose_rule
from toolnames_core.endpoints import detect_api
from toolnames_core.endpoints import parse_rule_override
from toolnames_core.rules import RULES

APIS = ("openai-chat", "openai-responses", "anthropic-messages", "gemini", "bedrock-converse")


@pytest.mark.parametrize(
    "path, api",
    [
        # OpenAI and everything that speaks Chat Completions (docs/providers.md §2, §8-§13).
        ("/v1/chat/completions", "openai-chat"),
        ("/v1/chat/completions/", "openai-chat"),
        ("/api/v1/chat/completions", "openai-chat"),  # OpenRouter
        ("/openai/v1/chat/completions", "openai-chat"),  # Groq, and the Azure v1 API
        ("/compatibility/v1/chat/completions", "openai-chat"),  # Cohere's compatibility API
        ("/v1beta/openai/chat/completions", "openai-chat"),  # Gemini's OpenAI-compatible endpoint
        # Azure (docs/providers.md §4): deployment-based URLs with api-version, and the v1 API.
        ("/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", "openai-chat"),
        (
            "/openai/deployments/my-deploy/chat/completions?api-version=2025-04-01-preview&x=1",
            "openai-chat",
        ),
        ("/openai/v1/chat/completions?api-version=preview", "openai-chat"),
        ("/v1/responses", "openai-responses"),
        ("/openai/v1/responses", "openai-responses"),
        ("/openai/deployments/gpt-4o/responses?api-version=2025-03-01-preview", "openai-responses"),
        ("/v1/messages", "anthropic-messages"),
        ("/v1/messages?beta=true", "anthropic-messages"),
        # Gemini API and Vertex AI (docs/providers.md §6), as google-genai sends them.
        ("/v1beta/models/gemini-2.5-flash:generateContent", "gemini"),
        ("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "gemini"),
        ("/v1/models/gemini-2.5-flash:generateContent", "gemini"),
        ("/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-test", "gemini"),
        ("/v1beta/tunedModels/my-model:generateContent", "gemini"),
        (
            "/v1beta1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
            "gemini",
        ),
        (
            "/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
            "gemini",
        ),
        ("/v1/projects/p/locations/us-central1/endpoints/1234567890:generateContent", "gemini"),
        # Bedrock Converse (docs/providers.md §7). boto3 escapes ':' and '/' of model ids and ARNs.
        ("/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse", "bedrock-converse"),
        ("/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream", "bedrock-converse"),
        ("/model/us.anthropic.claude-3-7-sonnet-20250219-v1:0/converse", "bedrock-converse"),
        (
            "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2F"
            "us.anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
            "bedrock-converse",
        ),
    ],
)
def test_detect_api_knows_every_path_form(path, api):
    assert detect_api("POST", path) == api


SDK_FIXTURES = sorted(SDK_DIR.glob("*.json"))


@pytest.mark.parametrize("fixture", SDK_FIXTURES, ids=[f.stem for f in SDK_FIXTURES])
def test_paths_the_sdks_send_are_detected(fixture):
    # Fixtures are named <api>-<case>.json, captured from the official SDKs.
    data = json.loads(fixture.read_text(encoding="utf-8"))
    path = data["path"] + (f"?{data['query']}" if data.get("query") else "")
    (expected,) = [api for api in APIS if fixture.stem.startswith(api)]
    assert detect_api(data["method"], path) == expected


@pytest.mark.parametrize(
    "path",
    [
        "/v1/completions",
        "/v1/embeddings",
        "/v1/models",
        "/v1/models?next=/v1/chat/completions",
        "/v1/chat/completions/chatcmpl-123",  # updating a stored completion
        "/v1/responses/resp_123/cancel",
        "/v1/messages/count_tokens",
        "/v1/messages/batches",
        "/v2/chat",  # Cohere's own API (only its OpenAI-compatible one is read)
        "/api/chat",  # Ollama
        "/v1beta/models/gemini-2.5-flash:countTokens",
        "/v1beta/models/gemini-2.5-flash:embedContent",
        "/model/anthropic.claude-v2/invoke",
        "/model/anthropic.claude-v2/invoke-with-response-stream",
        "/model/x/converse/extra",
        "/converse",
        "/",
        "",
    ],
)
def test_detect_api_ignores_other_endpoints(path):
    assert detect_api("POST", path) is None


@pytest.mark.parametrize("method", ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize(
    "path",
    [
        "/v1/chat/completions",
        "/v1/responses",
        "/v1/messages",
        "/v1beta/models/m:generateContent",
        "/model/m/converse",
    ],
)
def test_detect_api_only_reads_posts(method, path):
    assert detect_api(method, path) is None


def test_detect_api_method_is_case_insensitive():
    assert detect_api("post", "/v1/chat/completions") == "openai-chat"


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
    assert choose_rule(api, host) == rule


@pytest.mark.parametrize("api", APIS)
def test_every_detected_api_has_a_default_rule(api):
    assert choose_rule(api, "unknown.example") in RULES


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
    rule = choose_rule(detect_api("POST", "/compatibility/v1/chat/completions"), host)
    body = f'{{"model": "command-a-03-2025", "tools": [{{"type": "function", "function": {{"name": "{name}"}}}}]}}'
    result = exchange_for(body.encode(), "openai-chat", rule)
    assert rule == "cohere"
    assert [f.code for f in result.findings] == codes


def test_dashes_pass_the_rule_openai_gets_on_the_same_body():
    body = (
        b'{"tools": [{"type": "function", "function": {"name": "CurrentDate-get_current_date"}}]}'
    )
    assert (
        exchange_for(body, "openai-chat", choose_rule("openai-chat", "api.openai.com")).findings
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
    assert choose_rule(api, host, overrides) == rule


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
