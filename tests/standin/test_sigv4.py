"""The stand-in checks AWS SigV4 as an AWS service does (scripts/standin/sigv4.py): a request
boto3 signs with a test key is answered; any byte of what the signature covers changed, an
unknown key or an old date gets AWS's 403 in its rest-json shape."""

from __future__ import annotations

import datetime
import json

import pytest

from standin.sigv4 import KEYS
from standin.sigv4 import MISMATCH
from standin.sigv4 import UNRECOGNIZED
from tests.standin.wire import BEDROCK
from tests.standin.wire import bedrock_request
from tests.standin.wire import post
from tests.testkit.sigv4 import KEY
from tests.testkit.sigv4 import OTHER_KEY
from tests.testkit.sigv4 import OTHER_SECRET
from tests.testkit.sigv4 import SECRET
from tests.testkit.sigv4 import Signer
from tests.testkit.sigv4 import botocore_signed

pytest.importorskip("botocore")


def signed(provider, body: bytes, *, key=KEY, secret=SECRET, path=BEDROCK, extra=(), when=None):
    host = f"127.0.0.1:{provider.port}"
    headers = [("Host", host), ("Content-Type", "application/json"), *extra]
    request, _ = botocore_signed(
        "POST",
        f"http://{host}{path}",
        headers,
        body,
        Signer(key, secret),
        when or datetime.datetime.now(datetime.UTC),
    )
    return dict(request.headers.items())


def test_the_test_keys_are_the_ones_the_tests_sign_with():
    assert KEYS == {KEY: SECRET, OTHER_KEY: OTHER_SECRET}


@pytest.mark.parametrize("key, secret", [(KEY, SECRET), (OTHER_KEY, OTHER_SECRET)])
def test_a_request_signed_with_a_test_key_is_answered(provider, key, secret):
    body = json.dumps(bedrock_request()).encode()
    status, _, _ = post(
        provider, BEDROCK, raw=body, headers=signed(provider, body, key=key, secret=secret)
    )
    assert status == 200


@pytest.mark.parametrize("change", ["body", "signed-header", "host", "path", "secret"])
def test_a_change_to_what_the_signature_covers_gets_invalid_signature_exception(provider, change):
    body = json.dumps(bedrock_request()).encode()
    headers = signed(
        provider,
        body,
        secret="wrong" if change == "secret" else SECRET,
        extra=[("Accept-Encoding", "gzip")],
    )
    path = BEDROCK
    if change == "body":
        body = body.replace(b"get_weather", b"get_wether")
    elif change == "signed-header":
        headers["Accept-Encoding"] = "identity"
    elif change == "host":
        headers["Host"] = "bedrock-runtime.us-east-1.amazonaws.com"
    elif change == "path":
        path = BEDROCK.replace("converse", "converse-stream")
    status, answer_headers, content = post(provider, path, raw=body, headers=headers)
    assert status == 403
    assert answer_headers["x-amzn-errortype"] == "InvalidSignatureException"
    message = json.loads(content)["message"]
    assert message.startswith(MISMATCH)
    assert "The Canonical String for this request should have been\n'POST\n" in message
    # The path is signed encoded once more, as AWS's canonical string shows it.
    assert "/model/us.anthropic.claude-sonnet-4-v1%253A0/" in message


def test_an_unsigned_header_may_change(provider):
    body = json.dumps(bedrock_request()).encode()
    headers = signed(provider, body)
    headers["User-Agent"] = "another/1.0"  # botocore does not sign User-Agent
    assert post(provider, BEDROCK, raw=body, headers=headers)[0] == 200


def test_an_unknown_access_key_is_an_unrecognized_client(provider):
    body = json.dumps(bedrock_request()).encode()
    headers = signed(provider, body, key="AKIDUNKNOWN", secret="x")
    status, answer_headers, content = post(provider, BEDROCK, raw=body, headers=headers)
    assert status == 403
    assert answer_headers["x-amzn-errortype"] == "UnrecognizedClientException"
    assert json.loads(content) == {"message": UNRECOGNIZED}


def test_an_old_signature_has_expired(provider):
    body = json.dumps(bedrock_request()).encode()
    when = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=20)
    status, answer_headers, content = post(
        provider, BEDROCK, raw=body, headers=signed(provider, body, when=when)
    )
    assert status == 403 and answer_headers["x-amzn-errortype"] == "InvalidSignatureException"
    assert json.loads(content)["message"].startswith("Signature expired: ")


def test_a_bedrock_api_key_is_not_a_signature_to_check(provider):
    body = bedrock_request()
    status, _, _ = post(provider, BEDROCK, body, {"Authorization": "Bearer ABSKexample"})
    assert status == 200


def test_boto3_gets_the_error_as_aws_sends_it(provider):
    boto3 = pytest.importorskip("boto3")
    from botocore.config import Config
    from botocore.exceptions import ClientError

    def client(key, secret):
        return boto3.client(
            "bedrock-runtime",
            endpoint_url=provider.url,
            region_name="us-east-1",
            aws_access_key_id=key,
            aws_secret_access_key=secret,
            config=Config(retries={"max_attempts": 1}),
        )

    messages = [{"role": "user", "content": [{"text": "hi"}]}]
    assert client(KEY, SECRET).converse(modelId="m", messages=messages)["output"]
    for key, secret, code in [
        (KEY, "wrong", "InvalidSignatureException"),
        ("AKIDUNKNOWN", "x", "UnrecognizedClientException"),
    ]:
        with pytest.raises(ClientError) as raised:
            client(key, secret).converse(modelId="m", messages=messages)
        assert raised.value.response["Error"]["Code"] == code
        assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
