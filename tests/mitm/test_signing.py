"""AWS SigV4 on live flows (toolnames_mitm/signing.py, and the addon's use of it): fix mode
never breaks a signed request; with toolnames_resign and the client's own credentials it
signs what it changed; observe and block are unaffected; the credentials go nowhere."""

import hashlib
import json
import logging

import pytest
from mitmproxy import http
from mitmproxy.addons import anticomp
from mitmproxy.proxy.mode_specs import ProxyMode
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from harness.inprocess import running
from tests.testkit.e2e import read_flows
from tests.testkit.sigv4 import BEDROCK_HOST
from tests.testkit.sigv4 import KEY
from tests.testkit.sigv4 import OTHER_KEY
from tests.testkit.sigv4 import OTHER_SECRET
from tests.testkit.sigv4 import SECRET
from tests.testkit.sigv4 import Signer
from tests.testkit.sigv4 import signed_converse
from toolnames_core import Credentials
from toolnames_core import read_signature
from toolnames_core import verifies
from toolnames_mitm import signing

TOKEN = "IQoJb3JpZ2luX2VjEXAMPLEsessiontoken"
BAD = "github.create_issue"
CONVERSE = {
    "messages": [{"role": "user", "content": [{"text": "Open an issue"}]}],
    "toolConfig": {
        "tools": [{"toolSpec": {"name": BAD, "inputSchema": {"json": {"type": "object"}}}}],
        "toolChoice": {"tool": {"name": BAD}},
    },
}
DECLINED = "not fixed: the request is signed with AWS SigV4 (access key AKIDTESTNOTAKEY"


def signed_flow(
    body: dict = CONVERSE,
    *,
    token: str | None = None,
    key: str = KEY,
    secret: str = SECRET,
    extra=(),
) -> http.HTTPFlow:
    content = json.dumps(body).encode()
    path, headers = signed_converse(content, Signer(key, secret, token), extra)
    f = tflow.tflow(
        req=tutils.treq(
            method=b"POST", scheme=b"https", host=BEDROCK_HOST, port=443, path=path.encode()
        ),
        live=True,
    )
    f.request.headers = http.Headers([(k.encode(), v.encode()) for k, v in headers])
    f.request.raw_content = content
    return f


def verifies_now(f: http.HTTPFlow, secret: str = SECRET) -> bool:
    request = f.request
    pairs = [(k.decode(), v.decode()) for k, v in request.headers.fields]
    signed = read_signature([request.headers["authorization"]], "")
    return verifies(
        request.method,
        request.path,
        "",
        pairs,
        request.raw_content,
        signed,
        Credentials(signed.access_key_id, secret),
    )


def warnings(caplog) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "toolnames" and r.levelno >= logging.WARNING
    ]


@pytest.fixture
def no_aws(monkeypatch, tmp_path):
    """mitmproxy's environment without AWS credentials (nor a credentials file)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    return monkeypatch


def test_a_signed_request_is_recorded_with_its_scope_but_never_its_signature():
    f = signed_flow(token=TOKEN)
    signed = signing.signed_by(f.request)
    assert (signed.access_key_id, signed.service, signed.region) == (KEY, "bedrock", "us-east-1")
    assert "x-amz-security-token" in signed.signed_headers
    assert signing.signed_by(tflow.tflow().request) is None
    with running(toolnames_mode="observe") as (_, tn):
        tn.request(f)
    meta = f.metadata["toolnames"]
    assert meta["signed"]["access_key_id"] == KEY
    assert meta["signed"]["service"] == "bedrock" and meta["signed"]["region"] == "us-east-1"
    assert signed.value not in json.dumps(meta) and TOKEN not in json.dumps(meta)


@pytest.mark.parametrize("options", [{}, {"toolnames_resign": True}])
def test_fix_mode_leaves_a_signed_request_as_sent_and_says_why_where_the_user_looks(
    options, no_aws, caplog
):
    f = signed_flow(extra=[("Accept-Encoding", "gzip, deflate, br")])
    sent = f.request.raw_content
    headers = f.request.headers.copy()
    with running(toolnames_mode="fix", **options) as (_, tn):
        tn.request(f)
        f.response = http.Response.make(400, b'{"message": "1 validation error detected"}')
        tn.response(f)
    assert f.request.raw_content == sent
    assert f.request.headers == headers  # Accept-Encoding too
    assert verifies_now(f)
    meta = f.metadata["toolnames"]
    assert meta["action"] == "observed" and "fixes" not in meta
    why = "toolnames_resign is off" if not options else "toolnames found no AWS credentials"
    assert meta["signed"]["declined"].startswith(why)
    assert {s["reason"] for s in meta["fix_skipped"]} == {
        "was left as sent: the request is signed with AWS SigV4"
    }
    assert DECLINED in f.comment and why in f.comment
    assert "--set toolnames_resign=true" in f.comment and "Authorization: Bearer" in f.comment
    (line,) = [w for w in warnings(caplog) if "toolnames error" in w]
    assert f.comment in line


def test_observe_and_block_mode_treat_a_signed_request_as_they_always_did():
    f = signed_flow()
    sent = f.request.raw_content
    with running(toolnames_mode="observe") as (_, tn):
        tn.request(f)
    assert f.request.raw_content == sent and f.response is None
    f = signed_flow()
    with running(toolnames_mode="block") as (_, tn):
        tn.request(f)
    assert f.response is not None and f.response.status_code == 400
    assert f.metadata["toolnames"]["action"] == "blocked"


def test_a_bedrock_api_key_request_is_fixed_as_before():
    f = signed_flow()
    f.request.headers["authorization"] = "Bearer ABSKQmVkcm9ja0FQSUtleS1example"
    with running(toolnames_mode="fix") as (_, tn):
        tn.request(f)
    assert BAD.encode() not in f.request.raw_content
    meta = f.metadata["toolnames"]
    assert meta["action"] == "fixed" and "signed" not in meta


@pytest.mark.parametrize("token", [None, TOKEN])
def test_fix_mode_signs_what_it_changed_with_the_clients_own_credentials(
    token, no_aws, caplog, tmp_path
):
    no_aws.setenv("AWS_ACCESS_KEY_ID", KEY)
    no_aws.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    if token:
        no_aws.setenv("AWS_SESSION_TOKEN", token)
    # Accept-Encoding signed, as the anthropic SDK's Bedrock client signs every header.
    f = signed_flow(token=token, extra=[("Accept-Encoding", "gzip")])
    before = f.request.headers["x-amz-date"]
    saved = tmp_path / "saved.mitm"
    with running(toolnames_mode="fix", toolnames_resign=True, toolnames_save=str(saved)) as (_, tn):
        tn.request(f)
        assert BAD.encode() not in f.request.raw_content
        assert f.request.headers["accept-encoding"] == "identity"
        assert verifies_now(f)
        assert f.request.headers["x-amz-date"] >= before
        if token:
            assert f.request.headers["x-amz-security-token"] == token
        f.response = http.Response.make(200, b'{"output": {"message": {"content": []}}}')
        tn.response(f)
    meta = f.metadata["toolnames"]
    assert meta["action"] == "fixed" and meta["signed"]["resigned"] is True
    assert "signed it again with AWS SigV4 (access key AKIDTESTNOTAKEY" in f.comment
    # The secret and the token are nowhere: not in the log, the flow's record, the saved file.
    text = caplog.text + json.dumps(meta) + f.comment
    data = saved.read_bytes()
    for secret in [SECRET, *([token] if token else [])]:
        assert secret not in text and secret.encode() not in data
    (saved_flow,) = read_flows(saved)
    assert saved_flow.metadata["toolnames"]["signed"]["resigned"] is True


def test_a_signed_body_hash_header_is_updated_with_the_body(no_aws):
    no_aws.setenv("AWS_ACCESS_KEY_ID", KEY)
    no_aws.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    body = json.dumps(CONVERSE).encode()
    f = signed_flow(extra=[("X-Amz-Content-SHA256", hashlib.sha256(body).hexdigest())])
    with running(toolnames_mode="fix", toolnames_resign=True) as (_, tn):
        tn.request(f)
    assert (
        "x-amz-content-sha256"
        in read_signature([f.request.headers["authorization"]], "").signed_headers
    )
    assert (
        f.request.headers["x-amz-content-sha256"]
        == hashlib.sha256(f.request.raw_content).hexdigest()
    )
    assert verifies_now(f)


def test_a_credentials_file_profile_signs_too(no_aws, tmp_path):
    path = tmp_path / "credentials"
    path.write_text(
        f"[default]\naws_access_key_id = {OTHER_KEY}\naws_secret_access_key = {OTHER_SECRET}\n"
        f"[work]\naws_access_key_id = {KEY}\naws_secret_access_key = {SECRET}\n"
    )
    no_aws.setenv("AWS_SHARED_CREDENTIALS_FILE", str(path))
    f = signed_flow()
    with running(toolnames_mode="fix", toolnames_resign=True) as (_, tn):
        tn.request(f)
    assert "another access key" in f.metadata["toolnames"]["signed"]["declined"]
    assert OTHER_KEY not in f.comment
    no_aws.setenv("AWS_PROFILE", "work")
    f = signed_flow()
    with running(toolnames_mode="fix", toolnames_resign=True) as (_, tn):
        tn.request(f)
    assert f.metadata["toolnames"]["signed"]["resigned"] is True and verifies_now(f)


@pytest.mark.parametrize(
    "change, why",
    [
        ("other-key", "are another access key's"),
        ("bad-signature", "the client's signature does not verify"),
        ("presigned", "presigned URL"),
        ("no-date", "X-Amz-Date"),
    ],
)
def test_fix_mode_declines_to_sign_when_it_cannot_speak_for_the_client(change, why, no_aws):
    no_aws.setenv("AWS_ACCESS_KEY_ID", OTHER_KEY if change == "other-key" else KEY)
    no_aws.setenv("AWS_SECRET_ACCESS_KEY", OTHER_SECRET if change == "other-key" else SECRET)
    f = signed_flow(secret="not-the-secret" if change == "bad-signature" else SECRET)
    if change == "presigned":
        del f.request.headers["authorization"]
        f.request.path += (
            "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDTESTNOTAKEY%2F20261202%2F"
            "us-east-1%2Fbedrock%2Faws4_request&X-Amz-SignedHeaders=host&X-Amz-Signature=ab12"
        )
    if change == "no-date":
        del f.request.headers["x-amz-date"]
    sent = f.request.raw_content
    with running(toolnames_mode="fix", toolnames_resign=True) as (_, tn):
        tn.request(f)
    assert f.request.raw_content == sent
    assert why in f.metadata["toolnames"]["signed"]["declined"]
    assert why in f.comment


def test_reverse_mode_without_keep_host_header_is_said_once_for_signed_requests(caplog):
    with running(toolnames_mode="observe") as (tctx, tn):
        # Declared by mitmproxy's proxyserver addon, which the test master lacks.
        tctx.options.add_option("keep_host_header", bool, False, "")
        for _ in range(3):
            f = signed_flow()
            f.client_conn.proxy_mode = ProxyMode.parse("reverse:https://" + BEDROCK_HOST)
            tn.request(f)
        said = [w for w in warnings(caplog) if "reverse mode" in w]
        assert said == [signing.REVERSE_HOST]
        assert "--set keep_host_header=true" in said[0]
        tctx.options.keep_host_header = True
        caplog.clear()
        tn.said.clear()
        f = signed_flow()
        f.client_conn.proxy_mode = ProxyMode.parse("reverse:https://" + BEDROCK_HOST)
        tn.request(f)
        assert not [w for w in warnings(caplog) if "reverse mode" in w]


def test_anticomp_with_a_signed_accept_encoding_is_said_once(caplog):
    with running(anticomp.AntiComp(), toolnames_mode="observe", anticomp=True) as (_, tn):
        tn.request(signed_flow(extra=[("Accept-Encoding", "gzip")]))
        tn.request(signed_flow(extra=[("Accept-Encoding", "gzip")]))
        tn.request(signed_flow())  # Accept-Encoding not signed: nothing to say
    assert [w for w in warnings(caplog) if "anticomp" in w] == [signing.ANTICOMP]


def test_a_signed_request_toolnames_does_not_read_is_warned_about_too(caplog):
    with running(toolnames_mode="observe") as (tctx, tn):
        tctx.options.add_option("keep_host_header", bool, False, "")
        f = signed_flow()
        f.request.path = "/model/anthropic.claude-3-haiku/invoke-with-some-new-path"
        f.client_conn.proxy_mode = ProxyMode.parse("reverse:https://" + BEDROCK_HOST)
        tn.request(f)
    assert [w for w in warnings(caplog) if "reverse mode" in w] == [signing.REVERSE_HOST]
