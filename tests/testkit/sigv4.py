"""Requests signed by botocore's own SigV4Auth, as boto3 signs them: the reference the core's
signer is held to, and what the addon tests send. botocore is imported when a helper runs,
so a module of tests that needs it skips with ``pytest.importorskip("botocore")``; only
``signed_converse`` signs without it (the mitmproxy 11 venv has no SDKs), with the core's
signer, which tests/core/test_sigv4.py holds to botocore's byte for byte. A Signer is who signs
for what, the one argument list of every signing helper. End to end, the signed clients (boto3's
and the anthropic SDK's AnthropicBedrock) and the mitmdump they go through (signing_mitmdump:
keeping the Host, with none of the test machine's AWS credentials) are here too."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any
from unittest import mock

__all__ = [
    "BEDROCK_HOST",
    "KEEP_HOST",
    "KEY",
    "NO_AWS",
    "OTHER_KEY",
    "OTHER_SECRET",
    "SECRET",
    "WHEN",
    "Signer",
    "anthropic_bedrock",
    "aws_env",
    "boto3_bedrock",
    "botocore_signed",
    "core_signed",
    "signed_converse",
    "signing_mitmdump",
]

# The stand-in's test key (scripts/standin/sigv4.py knows its secret) and another one.
KEY = "AKIDTESTNOTAKEY"
SECRET = "test-not-a-secret"
OTHER_KEY = "AKIDOTHERTESTKEY"
OTHER_SECRET = "other-test-not-a-secret"
BEDROCK_HOST = "bedrock-runtime.us-east-1.amazonaws.com"
WHEN = datetime.datetime(2026, 12, 2, 15, 4, 5, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Signer:
    """Who signs and for what: the credentials and the scope every signing helper here takes
    (botocore's and the core's alike)."""

    key: str = KEY
    secret: str = SECRET
    token: str | None = None
    service: str = "bedrock"
    region: str = "us-east-1"


def botocore_signed(
    method: str,
    url: str,
    headers: Sequence[tuple[str, str]],
    body: bytes,
    signer: Signer = Signer(),
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
    credentials = Credentials(signer.key, signer.secret, signer.token)
    auth = SigV4Auth(credentials, signer.service, signer.region)
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
    body: bytes, signer: Signer = Signer(), extra=()
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
        return path, core_signed(path, headers, body, signer)
    url = f"https://{BEDROCK_HOST}{path}"
    request, _ = botocore_signed(
        "POST", url, headers, body, signer, datetime.datetime.now(datetime.UTC)
    )
    return path, list(request.headers.items())


def core_signed(
    path: str,
    headers: Sequence[tuple[str, str]],
    body: bytes,
    signer: Signer = Signer(),
    method: str = "POST",
) -> list[tuple[str, str]]:
    """The headers botocore would send, signed by the core's signer: every header but
    User-Agent signed, X-Amz-Date and the session token added first, as botocore does."""
    from toolnames_core import Credentials
    from toolnames_core import Signed
    from toolnames_core import resign_headers

    when = datetime.datetime.now(datetime.UTC)
    pairs = [*headers, ("X-Amz-Date", when.strftime("%Y%m%dT%H%M%SZ"))]
    if signer.token:
        pairs.append(("X-Amz-Security-Token", signer.token))
    names = tuple(sorted({k.lower() for k, _ in pairs} - {"user-agent"}))
    day = when.strftime("%Y%m%d")
    scope = Signed("AWS4-HMAC-SHA256", signer.key, day, signer.region, signer.service, names, False)
    path, _, query = path.partition("?")
    credentials = Credentials(signer.key, signer.secret, signer.token)
    new = resign_headers(method, path, query, pairs, body, scope, credentials, when)
    return [*pairs, ("Authorization", new.headers["authorization"])]


# -- a signed client end to end ----------------------------------------------------------------

# Reverse mode must keep the Host the client signed.
KEEP_HOST = ("--set", "keep_host_header=true")
# No credentials of the test machine's own reach mitmdump: empty values are none.
NO_AWS = MappingProxyType(
    {
        "AWS_ACCESS_KEY_ID": "",
        "AWS_SECRET_ACCESS_KEY": "",
        "AWS_SESSION_TOKEN": "",
        "AWS_PROFILE": "",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
    }
)


def aws_env(key: str = KEY, secret: str = SECRET) -> dict[str, str]:
    """mitmdump's environment with these credentials (what fix mode signs again with) and
    none of the test machine's own."""
    return {**NO_AWS, "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret}


def signing_mitmdump(
    mitmdump: Callable[..., Any],
    binary,
    *args: str,
    mode: str = "observe",
    resign: bool = False,
    env: Mapping[str, str] = NO_AWS,
):
    """A real mitmdump (the ``mitmdump`` fixture's factory) for a signed client: in `mode`,
    keeping the Host, toolnames_resign on if `resign`, with `env` (NO_AWS, or aws_env())."""
    resigning = ("--set", "toolnames_resign=true") if resign else ()
    return mitmdump(
        "--set",
        f"toolnames_mode={mode}",
        *resigning,
        *KEEP_HOST,
        *args,
        binary=binary,
        env=dict(env),
    )


def boto3_bedrock(url: str):
    """boto3's bedrock-runtime client at `url`, signing with the test key, trying once."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "bedrock-runtime",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id=KEY,
        aws_secret_access_key=SECRET,
        config=Config(retries={"max_attempts": 1}),
    )


def anthropic_bedrock(url: str):
    """The anthropic SDK's AnthropicBedrock client at `url`, signing with the test key, trying
    once."""
    import anthropic

    return anthropic.AnthropicBedrock(
        aws_access_key=KEY,
        aws_secret_key=SECRET,
        aws_region="us-east-1",
        base_url=url,
        max_retries=0,
    )
