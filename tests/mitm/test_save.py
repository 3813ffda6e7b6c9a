"""Saving flagged flows (save.py): a redacted copy, appended to a file only its owner reads."""

import json
import os
import stat

import pytest
from mitmproxy import http
from mitmproxy import io
from mitmproxy.test import tflow

from toolnames_mitm import save

# Headers that carry a credential, as providers and gateways document them.
CREDENTIAL_HEADERS = [
    # OpenAI, OpenRouter, LiteLLM, Bedrock API keys, Portkey's provider auth: a bearer token.
    ("Authorization", "https://openrouter.ai/docs/api-reference/authentication"),
    ("Proxy-Authorization", "https://www.rfc-editor.org/rfc/rfc9110#section-11.7.2"),
    ("x-api-key", "https://docs.anthropic.com/en/api/getting-started"),
    ("x-goog-api-key", "https://ai.google.dev/api"),
    # Azure OpenAI, as the openai SDK's AzureOpenAI client sends its key.
    ("api-key", "https://github.com/openai/openai-python/blob/main/src/openai/lib/azure.py"),
    (
        "Ocp-Apim-Subscription-Key",
        "https://learn.microsoft.com/en-us/azure/ai-services/authentication",
    ),
    ("x-portkey-api-key", "https://portkey.ai/docs/api-reference/inference-api/headers"),
    ("x-portkey-virtual-key", "https://portkey.ai/docs/api-reference/inference-api/headers"),
    ("Helicone-Auth", "https://docs.helicone.ai/helicone-headers/header-directory"),
    (
        "cf-aig-authorization",
        "https://developers.cloudflare.com/ai-gateway/configuration/authentication/",
    ),
    (
        "x-litellm-api-key",
        "https://github.com/BerriAI/litellm/blob/main/litellm/proxy/pass_through_endpoints/common_utils.py",
    ),
    (
        "X-Amz-Security-Token",
        "https://docs.aws.amazon.com/STS/latest/APIReference/CommonParameters.html",
    ),
    ("Cookie", "https://www.rfc-editor.org/rfc/rfc6265#section-5.4"),
    ("Set-Cookie", "https://www.rfc-editor.org/rfc/rfc6265#section-4.1"),
]
# Query parameters that carry one.
CREDENTIAL_PARAMETERS = [
    ("key", "https://ai.google.dev/gemini-api/docs/api-key"),
    (
        "subscription-key",
        "https://learn.microsoft.com/en-us/training/modules/publish-manage-apis-with-azure-api-management/6-call-an-api-with-a-subscription-key",
    ),
    (
        "X-Amz-Signature",
        "https://docs.aws.amazon.com/STS/latest/APIReference/CommonParameters.html",
    ),
    (
        "X-Amz-Credential",
        "https://docs.aws.amazon.com/STS/latest/APIReference/CommonParameters.html",
    ),
    (
        "X-Amz-Security-Token",
        "https://docs.aws.amazon.com/STS/latest/APIReference/CommonParameters.html",
    ),
    ("sig", None),  # Azure shared access signatures
    ("access_token", "https://www.rfc-editor.org/rfc/rfc6750#section-2.3"),
    ("api_key", None),
    ("api-key", None),
    ("apiKey", None),
    ("token", None),
    ("client_secret", None),
]
# Headers that look near one and carry none; kept, as they tell what sent the request.
KEPT_HEADERS = [
    "content-type",
    "content-length",
    "user-agent",
    "x-request-id",
    "anthropic-version",
    "anthropic-beta",
    "x-stainless-lang",
    "x-stainless-retry-count",
    # An organization or project id selects what a key bills; it authenticates nothing.
    "openai-organization",
    "openai-project",
    "x-amz-date",
    "x-amz-content-sha256",
    "x-portkey-provider",
    "HTTP-Referer",
    "X-Title",
    "idempotency-key",
    "keep-alive",
    "www-authenticate",
    "x-ratelimit-remaining-tokens",
    "anthropic-ratelimit-input-tokens-remaining",
]


@pytest.mark.parametrize("name,source", CREDENTIAL_HEADERS, ids=[n for n, _ in CREDENTIAL_HEADERS])
def test_every_documented_credential_header_is_redacted(name, source):
    assert save.is_secret_name(name) and save.is_secret_name(name.lower())


@pytest.mark.parametrize(
    "name,source", CREDENTIAL_PARAMETERS, ids=[n for n, _ in CREDENTIAL_PARAMETERS]
)
def test_every_credential_query_parameter_is_redacted(name, source):
    assert save.is_secret_name(name)


@pytest.mark.parametrize("name", KEPT_HEADERS)
def test_headers_that_carry_no_credential_are_kept(name):
    assert not save.is_secret_name(name)


def test_credentials_inside_a_json_header_value_are_redacted_by_key():
    # https://www.portkey.ai/docs/product/ai-gateway/configs: a config object, sent in the
    # x-portkey-config header, names each target's provider and api_key.
    config = {
        "strategy": {"mode": "fallback"},
        "targets": [
            {"provider": "openai", "api_key": "sk-secret"},
            {"provider": "anthropic", "apiKey": "sk-ant-secret", "override_params": {"model": "m"}},
        ],
    }
    f = tflow.tflow()
    f.request.headers["x-portkey-config"] = json.dumps(config)
    f.request.headers["x-portkey-metadata"] = '{"_user": "u1"}'
    f.request.headers["x-other"] = "{not json"
    copy = save.redacted_copy(f)
    saved = json.loads(copy.request.headers["x-portkey-config"])
    assert [t["provider"] for t in saved["targets"]] == ["openai", "anthropic"]
    assert "secret" not in copy.request.headers["x-portkey-config"]
    assert saved["targets"][1]["override_params"] == {"model": "m"}
    # Nothing to redact: the value is kept byte for byte.
    assert copy.request.headers["x-portkey-metadata"] == '{"_user": "u1"}'
    assert copy.request.headers["x-other"] == "{not json"


def test_a_json_header_value_too_deep_to_read_is_not_saved():
    f = tflow.tflow()
    f.request.headers["x-deep"] = "[" * 100_000 + "]" * 100_000
    f.request.headers["x-deep-object"] = '{"a":' * 5_000 + "1" + "}" * 5_000
    copy = save.redacted_copy(f)
    assert copy.request.headers["x-deep"] == save.REDACTED
    assert copy.request.headers["x-deep-object"] == save.REDACTED


def test_requests_responses_and_trailers_lose_every_credential_and_keep_the_rest():
    f = tflow.tflow(resp=True)
    f.request.path = "/v1/chat/completions?api-version=2024-10-21&subscription-key=s3cret&sig=s1g"
    for name, _ in CREDENTIAL_HEADERS:
        f.request.headers.add(name, f"secret-{name}")
    for name in KEPT_HEADERS:
        f.request.headers[name] = f"kept-{name}"
    # Any header whose value is in an authentication scheme, whatever it is called.
    f.request.headers["x-my-gateway"] = "Bearer sk-secret"
    f.request.trailers = http.Headers(((b"x-goog-api-key", b"secret"), (b"grpc-status", b"0")))
    f.response.headers["set-cookie"] = "session=secret"
    f.response.headers.add("set-cookie", "other=secret")
    f.response.trailers = http.Headers(((b"x-amz-security-token", b"secret"),))

    copy = save.redacted_copy(f)

    for message in (copy.request, copy.response):
        for headers in (message.headers, message.trailers or http.Headers()):
            for name, value in headers.items(multi=True):
                assert "secret" not in value.lower(), (name, value)
    for name in KEPT_HEADERS:
        assert copy.request.headers[name] == f"kept-{name}"
    assert copy.request.trailers["grpc-status"] == "0"
    assert copy.response.headers.get_all("set-cookie") == [save.REDACTED] * 2
    assert copy.request.query["api-version"] == "2024-10-21"
    assert "s3cret" not in copy.request.url and "s1g" not in copy.request.url
    # The live flow keeps all of it.
    assert f.request.headers["x-portkey-api-key"] == "secret-x-portkey-api-key"
    assert f.request.trailers["x-goog-api-key"] == "secret"


def test_a_log_path_keeps_its_parameters_but_not_their_secrets():
    path = "/v1beta/models/g:generateContent?alt=sse&key=AIzaSECRET&API_KEY=x"
    assert save.redacted_path(path) == (
        f"/v1beta/models/g:generateContent?alt=sse&key={save.REDACTED}&API_KEY={save.REDACTED}"
    )
    assert save.redacted_path("/v1/messages") == "/v1/messages"


def test_a_redacted_copy_is_the_same_flow_without_credentials_and_the_live_flow_keeps_them():
    f = tflow.tflow(resp=True)
    f.request.headers["authorization"] = "Bearer sk-secret"
    f.request.query["key"] = "AIzaSECRET"
    copy = save.redacted_copy(f)
    assert copy.id == f.id
    assert copy.request.headers["authorization"] == save.REDACTED
    assert copy.request.query["key"] == save.REDACTED
    assert f.request.headers["authorization"] == "Bearer sk-secret"


def test_the_writer_appends_readable_flows_to_an_owner_only_file(tmp_path):
    target = tmp_path / "flagged.mitm"
    for _ in range(2):
        writer = save.FlaggedFlowWriter(str(target))
        writer.add(tflow.tflow(resp=True))
        writer.close()
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    with open(target, "rb") as f:
        assert len(list(io.FlowReader(f).stream())) == 2
