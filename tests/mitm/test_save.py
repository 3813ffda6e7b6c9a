"""Saving flagged flows (save.py): a redacted copy, appended to a file only its owner reads."""

import gzip
import json
import os
import stat
import zlib

import pytest
from mitmproxy import http
from mitmproxy import io
from mitmproxy.io import tnetstring
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


def sending(content: bytes, headers: dict[str, str] | None = None) -> http.HTTPFlow:
    """An answered flow whose request sends `content`, its headers set first (a
    Content-Encoding among them encodes it)."""
    f = tflow.tflow(resp=True)
    for name, value in (headers or {}).items():
        f.request.headers[name] = value
    f.request.content = content
    return f


# Bodies that carry credentials by key, each with its public documentation.
RESPONSES_MCP = (
    # https://platform.openai.com/docs/guides/tools-connectors-mcp: a remote MCP server's
    # `headers` (an Authorization header) and a connector's OAuth `authorization`.
    b'{"model": "gpt-4.1", "input": "hi", "tools": [{"type": "mcp", "server_label": "gh", '
    b'"server_url": "https://mcp.example/sse", "headers": {"Authorization": "Bearer SECRET1"}, '
    b'"require_approval": "never"}, {"type": "mcp", "server_label": "drive", '
    b'"connector_id": "connector_googledrive", "authorization": "SECRET2"}]}'
)
ANTHROPIC_MCP = (
    # https://docs.anthropic.com/en/docs/agents-and-tools/mcp-connector
    b'{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"hi"}],'
    b'"mcp_servers":[{"type":"url","url":"https://mcp.example/sse","name":"ex",'
    b'"authorization_token":"SECRET1"}]}'
)


@pytest.mark.parametrize("body", [RESPONSES_MCP, ANTHROPIC_MCP], ids=["responses", "anthropic"])
def test_credentials_in_a_body_are_redacted_and_every_other_byte_kept(body):
    f = sending(body)
    copy = save.redacted_copy(f)
    saved = copy.request.content
    assert b"SECRET" not in saved
    # The same text around the values that went: nothing re-serialised.
    text = body.decode()
    for secret in ('"Bearer SECRET1"', '"SECRET1"', '"SECRET2"'):
        text = text.replace(secret, json.dumps(save.REDACTED))
    assert saved.decode() == text
    assert f.request.content == body  # the live flow keeps them


def test_numbers_under_credential_words_are_kept():
    # Gemini's usage: {"promptTokenCount": 12, "totalTokenCount": 20}; no credential is a number.
    answer = b'{"usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 20}, "token": null}'
    f = tflow.tflow(resp=True)
    f.response.content = answer
    assert save.redacted_copy(f).response.content == answer


def test_a_compressed_body_is_redacted_and_stays_compressed():
    f = sending(ANTHROPIC_MCP, {"content-encoding": "gzip"})  # encoded with gzip
    copy = save.redacted_copy(f)
    assert copy.request.headers["content-encoding"] == "gzip"
    assert b"SECRET" not in copy.request.content
    assert copy.request.raw_content != copy.request.content


def test_a_repeated_credential_key_loses_every_value():
    f = sending(b'{"tools": [], "api_key": "SECRET1", "api_key": "SECRET2"}')
    saved = save.redacted_copy(f).request.content
    assert b"SECRET" not in saved
    assert json.loads(saved) == {"tools": [], "api_key": save.REDACTED}


@pytest.mark.parametrize(
    "body",
    [b"not json, key=SECRET", b'{"broken": ', b"", '{"a": "\u00e9"}'.encode("latin-1")],
    ids=["text", "broken", "empty", "not UTF-8"],
)
def test_a_body_that_is_not_json_is_saved_as_it_came(body):
    f = sending(body)
    assert save.redacted_copy(f).request.content == body


def test_a_body_too_deep_to_walk_is_not_saved():
    deep = b'{"a":' * 50_000 + b'{"token":"SECRET"}' + b"}" * 50_000
    f = sending(deep)
    saved = save.redacted_copy(f).request.content
    assert b"SECRET" not in saved


def test_credentials_in_a_saved_sessions_messages_are_redacted():
    # A Realtime session.update may declare MCP tools with their headers.
    update = {
        "type": "session.update",
        "session": {
            "tools": [
                {"type": "mcp", "server_label": "gh", "headers": {"Authorization": "Bearer S1"}}
            ]
        },
    }
    f = tflow.twebsocketflow()
    f.websocket.messages[0].content = json.dumps(update).encode()
    copy = save.redacted_copy(f)
    assert b"Bearer S1" not in copy.websocket.messages[0].content
    assert b"Bearer S1" in f.websocket.messages[0].content


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


def saved_records(n: int) -> list[bytes]:
    return [tnetstring.dumps(tflow.tflow(resp=True).get_state()) for _ in range(n)]


def read_back(path) -> list:
    with open(path, "rb") as f:
        return list(io.FlowReader(f).stream())


def save_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("toolnames_save")]


@pytest.mark.parametrize("keep", [1, 4, 50, -1], ids=["length", "key", "middle", "last byte"])
def test_a_record_cut_at_the_end_is_truncated_before_flows_are_appended(tmp_path, caplog, keep):
    # A kill or a full disk while a record was written: appended after it, every later flow
    # was lost to mitmdump -nr, which stopped with "Invalid data format".
    target = tmp_path / "flagged.mitm"
    whole = saved_records(2)
    target.write_bytes(b"".join(whole) + saved_records(1)[0][:keep])
    target.chmod(0o600)
    writer = save.FlaggedFlowWriter(target)
    assert writer.add(tflow.tflow(resp=True))
    writer.close()
    assert len(read_back(target)) == 3
    (line,) = save_lines(caplog)
    assert f"{target} ended inside a flow record cut short" in line
    assert "truncated it to its 2 whole flow(s)" in line


def test_a_file_damaged_before_its_end_is_moved_aside_whole_and_a_new_one_started(tmp_path, caplog):
    # A cut record with flows appended after it (as toolnames did before): truncating would
    # lose those flows, so the file goes aside as it is.
    target = tmp_path / "flagged.mitm"
    first, cut, after = saved_records(3)
    damaged = first + cut[:300] + after
    target.write_bytes(damaged)
    writer = save.FlaggedFlowWriter(target)
    writer.add(tflow.tflow(resp=True))
    writer.close()
    assert len(read_back(target)) == 1
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert (tmp_path / "flagged.mitm.damaged").read_bytes() == damaged
    (line,) = save_lines(caplog)
    assert f"moved it as it is to {tmp_path / 'flagged.mitm.damaged'}" in line
    # Again: the first name is taken, the next one is used.
    target.write_bytes(damaged)
    save.FlaggedFlowWriter(target).close()
    assert (tmp_path / "flagged.mitm.damaged-2").read_bytes() == damaged


def test_a_file_that_holds_no_flows_is_never_appended_to(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_bytes(b"my notes, not flows\n")
    with pytest.raises(save.UnusableFile, match="is not a mitmproxy flow file"):
        save.FlaggedFlowWriter(target)
    assert target.read_bytes() == b"my notes, not flows\n"


class FullDisk:
    """os.write as on a full disk: ``room`` bytes fit, then ENOSPC."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.real = os.write

    def __call__(self, fd: int, data: bytes) -> int:
        if self.room <= 0:
            raise OSError(28, "No space left on device")
        n = self.real(fd, data[: self.room])
        self.room -= n
        return n


def test_a_full_disk_is_said_once_leaves_the_file_whole_and_saving_resumes(
    tmp_path, caplog, monkeypatch
):
    target = tmp_path / "flagged.mitm"
    writer = save.FlaggedFlowWriter(target)
    assert writer.add(tflow.tflow(resp=True))
    full = FullDisk(room=500)  # the next record is cut after 500 bytes
    monkeypatch.setattr(save.os, "write", full)
    assert [writer.add(tflow.tflow(resp=True)) for _ in range(5)] == [False] * 5
    (line,) = save_lines(caplog)
    assert line.startswith(f"toolnames_save: cannot write a flagged flow to {target} (No space")
    assert len(read_back(target)) == 1  # what was written of the cut record went
    full.room = 10**9  # space again
    assert writer.add(tflow.tflow(resp=True))
    writer.close()
    assert len(read_back(target)) == 2
    assert save_lines(caplog)[1:] == [
        f"toolnames_save: saving to {target} again; 5 flagged flow(s) were not saved while it "
        "failed (No space left on device)"
    ]


def test_a_write_that_cannot_be_undone_stops_saving_in_the_same_line(tmp_path, caplog, monkeypatch):
    target = tmp_path / "flagged.mitm"
    writer = save.FlaggedFlowWriter(target)
    monkeypatch.setattr(save.os, "write", FullDisk(room=100))

    def no_truncate(fd, length):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(save.os, "ftruncate", no_truncate)
    assert not writer.add(tflow.tflow(resp=True))
    assert not writer.add(tflow.tflow(resp=True))
    writer.close()
    (line,) = save_lines(caplog)
    assert "saving stopped (the cut record could not be removed: Input/output error" in line
    monkeypatch.undo()
    # The next start truncates the cut record.
    save.FlaggedFlowWriter(target).close()
    assert target.stat().st_size == 0


# Credentials in URLs inside bodies: an MCP server's URL may carry its key in the query or
# userinfo (https://platform.openai.com/docs/guides/tools-connectors-mcp: `server_url`;
# https://docs.anthropic.com/en/docs/agents-and-tools/mcp-connector: `mcp_servers[].url`).
URL_KEYS = (
    b'{"model":"gpt-4.1","input":"hi","tools":[{"type":"mcp","server_label":"gh",'
    b'"server_url":"https://mcp.example/sse?team=a&api_key=SECRET1&key=SECRET2"},'
    b'{"type":"mcp","server_label":"u","server_url":"https://me:SECRET3@mcp.example/sse"}],'
    b'"mcp_servers":[{"type":"url","url":"https://SECRET4@mcp.example/x#access_token=SECRET5",'
    b'"name":"ex"}],"metadata":{"links":["wss://mcp.example/ws?token=SECRET6"]}}'
)


def test_credentials_in_urls_inside_a_body_are_redacted_and_every_other_byte_kept():
    f = sending(URL_KEYS)
    saved = save.redacted_copy(f).request.content
    assert b"SECRET" not in saved
    expected = URL_KEYS
    for secret in (b"SECRET1", b"SECRET2", b"SECRET5", b"SECRET6"):
        expected = expected.replace(secret, save.REDACTED.encode())
    expected = expected.replace(b"me:SECRET3@", b"REDACTED-by-toolnames@")
    expected = expected.replace(b"SECRET4@", b"REDACTED-by-toolnames@")
    assert saved == expected
    assert save.bodies_left_out(save.redacted_copy(f)) == {}


@pytest.mark.parametrize(
    "value",
    [
        "https://mcp.example/sse?team=a&page=2",
        "https://mcp.example/a@b",  # an @ in the path is no userinfo
        "urn:example:key=1",
        "see https://x.example/?key=1 for the docs",  # prose, not a URL
        "mailto:me@example.com",
    ],
)
def test_urls_without_credentials_are_kept(value):
    assert save.redacted_url(value) == value


def test_a_url_in_a_json_header_value_loses_its_credentials():
    f = tflow.tflow()
    f.request.headers["x-mcp-config"] = '{"url": "https://mcp.example/?api_key=SECRET"}'
    assert "SECRET" not in save.redacted_copy(f).request.headers["x-mcp-config"]


def gzip_with_bad_crc(data: bytes) -> bytes:
    packed = bytearray(gzip.compress(data))
    packed[-8] ^= 0xFF  # the CRC32 of the trailer
    return bytes(packed)


def test_a_gzip_body_with_a_bad_crc_is_left_out_though_its_text_is_recoverable():
    raw = gzip_with_bad_crc(ANTHROPIC_MCP)
    # What anyone holding the file could do: inflate it past its 10-byte header, ignoring the
    # trailer.
    assert zlib.decompressobj(-zlib.MAX_WBITS).decompress(raw[10:]) == ANTHROPIC_MCP
    f = tflow.tflow(resp=True)
    f.request.headers["content-encoding"] = "gzip"
    f.request.raw_content = raw
    copy = save.redacted_copy(f)
    assert copy.request.raw_content is None
    (why,) = save.bodies_left_out(copy).values()
    assert why.startswith("its Content-Encoding (gzip) does not decode (")
    assert f.request.raw_content == raw  # the live flow keeps it


@pytest.mark.parametrize(
    "encoding,raw,why",
    [
        ("gzip", ANTHROPIC_MCP, "its Content-Encoding (gzip) does not decode"),
        ("br", gzip.compress(ANTHROPIC_MCP), "its Content-Encoding (br) does not decode"),
        ("x-custom", ANTHROPIC_MCP, "its Content-Encoding (x-custom) does not decode"),
        (None, gzip.compress(ANTHROPIC_MCP), "it is gzip-compressed under Content-Encoding (none)"),
    ],
    ids=["gzip that is plain", "br that is gzip", "unknown", "gzip with none declared"],
)
def test_a_body_whose_content_encoding_lies_is_left_out_and_the_copy_says_so(encoding, raw, why):
    f = tflow.tflow(resp=True)
    if encoding:
        f.request.headers["content-encoding"] = encoding
    f.request.raw_content = raw
    copy = save.redacted_copy(f)
    assert copy.request.raw_content is None
    assert save.bodies_left_out(copy)["request"].startswith(why)
    assert copy.metadata[save.UNSAVED_KEY] == save.bodies_left_out(copy)
    assert copy.response.content == f.response.content  # the answer decodes: it is kept


def test_a_form_encoded_body_loses_its_credentials():
    body = (
        b"grant_type=refresh_token&refresh_token=SECRET1&client_id=app&client_secret=SECRET2"
        b"&callback=https%3A%2F%2Fme%3ASECRET3%40hooks.example%2Fcb&note=a+b"
    )
    f = sending(body, {"content-type": "application/x-www-form-urlencoded"})
    saved = save.redacted_copy(f).request.content
    assert b"SECRET" not in saved
    assert saved.startswith(b"grant_type=refresh_token&refresh_token=REDACTED-by-toolnames&")
    assert b"client_id=app&" in saved and saved.endswith(b"&note=a+b")


def test_an_mcp_clients_oauth_exchange_loses_its_code_and_verifier():
    # MCP's authorization: the code the redirect carries, and the token request with the
    # PKCE verifier; names that say nothing secret, and a JSON "code" stays a code.
    body = (
        b"grant_type=authorization_code&code=SECRET1&code_verifier=SECRET2&client_id=app"
        b"&redirect_uri=http%3A%2F%2F127.0.0.1%3A3000%2Fcallback"
    )
    f = sending(body, {"content-type": "application/x-www-form-urlencoded"})
    f.request.path = "/callback?code=SECRET3&state=xyz"
    copy = save.redacted_copy(f)
    assert b"SECRET" not in copy.request.content and "SECRET" not in copy.request.path
    assert copy.request.content.startswith(b"grant_type=authorization_code&code=REDACTED")
    assert b"client_id=app&redirect_uri=" in copy.request.content
    assert copy.request.query["state"] == "xyz"
    assert "SECRET" not in save.redacted_path("/cb?code=SECRET4&state=s")
    json_code = sending(
        b'{"type": "code", "code": "print(1)"}', {"content-type": "application/json"}
    )
    assert save.redacted_copy(json_code).request.content == json_code.request.content


def test_a_stream_loses_the_credentials_in_its_events():
    # The Responses API echoes the request's tools, server_url included, in its events.
    created = {
        "type": "response.created",
        "response": {"tools": [{"type": "mcp", "server_url": "https://mcp.example/?key=SECRET"}]},
    }
    stream = (
        b"event: response.created\r\ndata: " + json.dumps(created).encode() + b"\r\n\r\n"
        b'event: response.completed\r\ndata: {"type": "response.completed"}\r\n\r\n'
    )
    f = tflow.tflow(resp=True)
    f.response.headers["content-type"] = "text/event-stream"
    f.response.content = stream
    saved = save.redacted_copy(f).response.content
    assert b"SECRET" not in saved
    assert saved == stream.replace(b"SECRET", save.REDACTED.encode())


def test_a_multipart_form_loses_its_credential_fields_and_keeps_its_file():
    # A transcription upload (multipart/form-data, as the openai SDK sends audio) with a key
    # field a gateway takes, and a JSON field holding an MCP server's URL.
    audio = b"RIFF\x00\x01binary api_key=not-a-field"
    body = (
        b"--b0undary\r\n"
        b'Content-Disposition: form-data; name="api_key"\r\n\r\nSECRET1\r\n'
        b"--b0undary\r\n"
        b'Content-Disposition: form-data; name="file"; filename="a.wav"\r\n'
        b"Content-Type: audio/wav\r\n\r\n" + audio + b"\r\n"
        b"--b0undary\r\n"
        b'Content-Disposition: form-data; name="config"\r\n\r\n'
        b'{"url": "https://mcp.example/?key=SECRET2"}\r\n'
        b"--b0undary--\r\n"
    )
    f = sending(body, {"content-type": "multipart/form-data; boundary=b0undary"})
    saved = save.redacted_copy(f).request.content
    assert b"SECRET" not in saved
    assert saved == body.replace(b"SECRET1", save.REDACTED.encode()).replace(
        b"SECRET2", save.REDACTED.encode()
    )
    assert audio in saved
