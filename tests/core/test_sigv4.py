"""AWS SigV4 in the core (toolnames_core/sigv4.py): reading a signature, and the signer held
byte for byte to botocore's SigV4Auth (canonical request, string to sign, signature) over
arbitrary paths, queries, headers and bodies."""

import datetime
import hashlib
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.testkit.sigv4 import KEY
from tests.testkit.sigv4 import SECRET
from tests.testkit.sigv4 import WHEN
from tests.testkit.sigv4 import Signer
from tests.testkit.sigv4 import botocore_signed
from toolnames_core import Credentials
from toolnames_core import Signed
from toolnames_core import credentials_from_environ
from toolnames_core import credentials_from_file
from toolnames_core import read_signature
from toolnames_core import resign_headers
from toolnames_core import verifies
from toolnames_core.sigv4 import canonical_request
from toolnames_core.sigv4 import signature
from toolnames_core.sigv4 import string_to_sign

pytest.importorskip("botocore")

HOST = "bedrock-runtime.us-east-1.amazonaws.com"
LATER = WHEN + datetime.timedelta(minutes=3)

# -- arbitrary requests ----------------------------------------------------------------------

_segment_chars = st.sampled_from(
    list("abcXYZ019-_.~!$&'()*+,;=:@") + ["%3A", "%2F", "%20", "%25", "%E2%82%AC"]
)
segment = st.one_of(
    st.lists(_segment_chars, min_size=0, max_size=6).map("".join),
    st.sampled_from([".", ".."]),
)
paths = st.lists(segment, min_size=0, max_size=5).map(lambda s: "/" + "/".join(s))
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
queries = st.lists(st.tuples(_text, st.one_of(st.none(), _text)), max_size=4).map(
    lambda pairs: "&".join(
        quote(k, safe="-_.~") + ("" if v is None else "=" + quote(v, safe="-_.~")) for k, v in pairs
    )
)
_names = st.sampled_from(
    [
        "content-type",
        "accept",
        "accept-encoding",
        "x-amz-target",
        "x-custom",
        "user-agent",
        "content-length",
        "x-amzn-bedrock-trace",
        "anthropic-version",
        "expect",
    ]
)
_values = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E) | st.just("\t"), max_size=12
)
headers = st.lists(st.tuples(_names, _values), max_size=6)
bodies = st.binary(max_size=200)
tokens = st.one_of(st.none(), st.just("FwoGZXIvYXdzEJr//////////wEaDtoken"))
content_hashes = st.sampled_from([None, "body", "UNSIGNED-PAYLOAD"])


def _request(method, path, query, extra, body, token, content_hash):
    pairs = [("Host", HOST), *extra]
    if content_hash == "body":
        pairs.append(("X-Amz-Content-SHA256", hashlib.sha256(body).hexdigest()))
    elif content_hash:
        pairs.append(("X-Amz-Content-SHA256", content_hash))
    url = f"https://{HOST}{path}" + (f"?{query}" if query else "")
    return botocore_signed(method, url, pairs, body, Signer(token=token))


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["POST", "GET", "put"]),
    paths,
    queries,
    headers,
    bodies,
    tokens,
    content_hashes,
)
def test_the_signer_makes_botocores_canonical_request_string_to_sign_and_signature(
    method, path, query, extra, body, token, content_hash
):
    request, seen = _request(method, path, query, extra, body, token, content_hash)
    pairs = list(request.headers.items())
    signed = read_signature([request.headers["Authorization"]], query)
    assert signed is not None and signed.readable
    assert (signed.access_key_id, signed.region, signed.service) == (KEY, "us-east-1", "bedrock")

    sent = request.headers.get("X-Amz-Content-SHA256") or hashlib.sha256(body).hexdigest()
    canonical = canonical_request(method, path, query, pairs, signed.signed_headers, sent)
    assert canonical == seen["canonical"]
    to_sign = string_to_sign(request.headers["X-Amz-Date"], "us-east-1", "bedrock", canonical)
    assert to_sign == seen["to_sign"]
    assert signature(SECRET, "us-east-1", "bedrock", to_sign) == seen["signature"]
    assert verifies(method, path, query, pairs, body, signed, Credentials(KEY, SECRET, token))

    # Signed again later, with the same signed headers, as botocore signs it then.
    new = resign_headers(method, path, query, pairs, body, signed, Credentials(KEY, SECRET), LATER)
    again, _ = _request(method, path, query, extra, body, token, content_hash)
    again_signed, _ = botocore_signed(
        method, again.url, list(again.headers.items()), body, Signer(token=token), LATER
    )
    assert new.headers["authorization"] == again_signed.headers["Authorization"]
    assert new.headers["x-amz-date"] == again_signed.headers["X-Amz-Date"]


@settings(max_examples=100, deadline=None)
@given(paths, headers, bodies, bodies, st.sampled_from([None, "body"]))
def test_a_changed_body_signed_again_verifies_and_the_old_signature_does_not(
    path, extra, body, changed, content_hash
):
    request, _ = _request("POST", path, "", extra, body, None, content_hash)
    pairs = list(request.headers.items())
    signed = read_signature([request.headers["Authorization"]], "")
    credentials = Credentials(KEY, SECRET)
    new = resign_headers("POST", path, "", pairs, changed, signed, credentials, LATER)
    if content_hash:
        assert new.headers["x-amz-content-sha256"] == hashlib.sha256(changed).hexdigest()
    else:
        assert "x-amz-content-sha256" not in new.headers
    sent = [(k, new.headers.get(k.lower(), v)) for k, v in pairs]
    resigned = read_signature([new.headers["authorization"]], "")
    assert verifies("POST", path, "", sent, changed, resigned, credentials)
    assert not verifies("POST", path, "", sent, changed, resigned, Credentials(KEY, "other"))
    if changed != body and not content_hash:
        assert not verifies("POST", path, "", pairs, changed, signed, credentials)


# -- reading a signature -----------------------------------------------------------------------


def test_a_signature_is_read_from_boto3s_authorization_header_without_its_value_in_the_record():
    request, _ = _request("POST", "/model/m/converse", "", [], b"{}", "tok", None)
    signed = read_signature([request.headers["Authorization"]], "")
    assert signed.signed_headers == ("host", "x-amz-date", "x-amz-security-token")
    assert signed.value and signed.value in request.headers["Authorization"]
    record = signed.to_dict()
    assert record == {
        "algorithm": "AWS4-HMAC-SHA256",
        "access_key_id": KEY,
        "date": "20261202",
        "region": "us-east-1",
        "service": "bedrock",
        "signed_headers": ["host", "x-amz-date", "x-amz-security-token"],
        "presigned": False,
    }
    assert signed.value not in repr(signed) and signed.value not in str(record)
    assert Signed.from_dict(record) == signed


def test_a_presigned_url_is_a_signature_in_the_query():
    from botocore.auth import SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials as BotoCredentials

    request = AWSRequest(method="POST", url=f"https://{HOST}/model/m/converse", data=b"{}")
    SigV4QueryAuth(BotoCredentials(KEY, SECRET), "bedrock", "us-east-1").add_auth(request)
    query = request.url.split("?", 1)[1]
    signed = read_signature([], query)
    assert signed.presigned and signed.readable
    assert (signed.access_key_id, signed.service, signed.region) == (KEY, "bedrock", "us-east-1")
    assert signed.signed_headers == ("host",)


@pytest.mark.parametrize(
    "authorization",
    [
        "AWS4-ECDSA-P256-SHA256 Credential=AKID/20261202/bedrock/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature=3045",
        "AWS4-HMAC-SHA256 Credential=AKID/20261202/us-east-1/bedrock, Signature=ab",
        "AWS4-HMAC-SHA256",
    ],
)
def test_a_signature_toolnames_cannot_read_still_counts_as_signed_and_covers_every_header(
    authorization,
):
    signed = read_signature([authorization], "")
    assert signed is not None and not signed.readable
    assert signed.covers("content-type") and signed.covers("accept-encoding")
    assert not verifies("POST", "/", "", [("x-amz-date", "x")], b"", signed, Credentials("a", "b"))


@pytest.mark.parametrize(
    "authorization, query",
    [
        (["Bearer ABSKQmVkcm9ja0FQSUtleS1example"], ""),
        ([], ""),
        ([], "alt=sse&key=AIza"),
        (["Basic dXNlcjpwYXNz"], "X-Amz-Date=20261202T000000Z"),
    ],
)
def test_a_request_without_a_sigv4_signature_is_not_signed(authorization, query):
    assert read_signature(authorization, query) is None


# -- credentials --------------------------------------------------------------------------------


def test_credentials_come_from_the_environment_with_the_session_token():
    found = credentials_from_environ(
        {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_SESSION_TOKEN": "tok"}
    )
    assert found == Credentials(KEY, SECRET, "tok")
    assert SECRET not in repr(found) and "tok" not in repr(found)
    assert credentials_from_environ({"AWS_ACCESS_KEY_ID": KEY}) is None


def test_credentials_come_from_a_profile_of_the_shared_credentials_file():
    text = (
        "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s1\n\n"
        f"[work]\naws_access_key_id={KEY}\naws_secret_access_key={SECRET}\n"
        "aws_session_token = tok%en\n"
    )
    assert credentials_from_file(text, "default") == Credentials("AKIDDEFAULT", "s1")
    assert credentials_from_file(text, "work") == Credentials(KEY, SECRET, "tok%en")
    assert credentials_from_file(text, "missing") is None
    assert credentials_from_file("not an [ini", "default") is None
    assert credentials_from_file("[default]\naws_access_key_id = A\n", "default") is None
