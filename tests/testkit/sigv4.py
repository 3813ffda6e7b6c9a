"""Requests signed by botocore's own SigV4Auth, as boto3 signs them: the reference the core's
signer is held to, and what the addon tests send. botocore is imported when a helper runs,
so a module of tests that needs it skips with ``pytest.importorskip("botocore")``; only
``signed_converse`` signs without it (the mitmproxy 11 venv has no SDKs), with the core's
signer, which tests/core/test_sigv4.py holds to botocore's byte for byte."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from unittest import mock

__all__ = [
    "BEDROCK_HOST",
    "KEY",
    "OTHER_KEY",
    "OTHER_SECRET",
    "SECRET",
    "WHEN",
    "botocore_signed",
    "core_signed",
    "signed_converse",
]

# The stand-in's test key (scripts/standin/sigv4.py knows its secret) and another one.
KEY = "AKIDTESTNOTAKEY"
SECRET = "test-not-a-secret"
OTHER_KEY = "AKIDOTHERTESTKEY"
OTHER_SECRET = "other-test-not-a-secret"
BEDROCK_HOST = "bedrock-runtime.us-east-1.amazonaws.com"
WHEN = datetime.datetime(2026, 12, 2, 15, 4, 5, tzinfo=datetime.UTC)


def botocore_signed(
    method: str,
    url: str,
    headers: Sequence[tuple[str, str]],
    body: bytes,
    *,
    key: str = KEY,
    secret: str = SECRET,
    token: str | None = None,
    service: str = "bedrock",
    region: str = "us-east-1",
    when: datetime.datetime = WHEN,
):
    """(the AWSRequest botocore signed, what it computed on the way: canonical request,
    string to sign, signature): headers in order, repeats kept."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    request = AWSRequest(method=method, url=url, data=body)
    for name, value in headers:
        request.headers[name] = value  # HTTPHeaders appends: a repeated name stays repeated
    auth = SigV4Auth(Credentials(key, secret, token), service, region)
    seen = {}

    def kept(name, method):
        def run(*args):
            seen[name] = method(*args)
            return seen[name]

        return run

    auth.canonical_request = kept("canonical", auth.canonical_request)
    auth.string_to_sign = kept("to_sign", auth.string_to_sign)
    auth.signature = kept("signature", auth.signature)
    with mock.patch("botocore.auth.get_current_datetime", return_value=when.replace(tzinfo=None)):
        auth.add_auth(request)
    return request, seen


def signed_converse(
    body: bytes, *, key: str = KEY, secret: str = SECRET, token: str | None = None, extra=()
) -> tuple[str, list[tuple[str, str]]]:
    """(path, headers) of a Bedrock Converse request as boto3 signs it."""
    path = "/model/anthropic.claude-3-haiku/converse"
    headers = [
        ("Host", BEDROCK_HOST),
        ("Content-Type", "application/json"),
        ("User-Agent", "Boto3/1.44.8 md/Botocore#1.44.8 ua/2.1 os/linux lang/python#3.13.0"),
        *extra,
    ]
    try:
        import botocore  # noqa: F401
    except ImportError:
        return path, core_signed(path, headers, body, key=key, secret=secret, token=token)
    request, _ = botocore_signed(
        "POST",
        f"https://{BEDROCK_HOST}{path}",
        headers,
        body,
        key=key,
        secret=secret,
        token=token,
        when=datetime.datetime.now(datetime.UTC),
    )
    return path, list(request.headers.items())


def core_signed(
    path: str,
    headers: Sequence[tuple[str, str]],
    body: bytes,
    *,
    key: str = KEY,
    secret: str = SECRET,
    token: str | None = None,
    method: str = "POST",
    service: str = "bedrock",
) -> list[tuple[str, str]]:
    """The headers botocore would send, signed by the core's signer: every header but
    User-Agent signed, X-Amz-Date and the session token added first, as botocore does."""
    from toolnames_core import Credentials
    from toolnames_core import Signed
    from toolnames_core import resign_headers

    when = datetime.datetime.now(datetime.UTC)
    pairs = [*headers, ("X-Amz-Date", when.strftime("%Y%m%dT%H%M%SZ"))]
    if token:
        pairs.append(("X-Amz-Security-Token", token))
    names = tuple(sorted({k.lower() for k, _ in pairs} - {"user-agent"}))
    day = when.strftime("%Y%m%d")
    scope = Signed("AWS4-HMAC-SHA256", key, day, "us-east-1", service, names, False)
    path, _, query = path.partition("?")
    credentials = Credentials(key, secret, token)
    new = resign_headers(method, path, query, pairs, body, scope, credentials, when)
    return [*pairs, ("Authorization", new.headers["authorization"])]
