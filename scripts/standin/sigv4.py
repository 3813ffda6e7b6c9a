"""AWS Signature Version 4, checked as an AWS service checks it, for the stand-in provider.

A request with ``Authorization: AWS4-HMAC-SHA256 …`` is verified the way AWS documents it
(https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html): the canonical
request (method; the path as received, dot segments and empty segments removed, URI-encoded
once more; the query decoded, encoded again and sorted; each signed header ``name:value``
with runs of white space made one space; the signed-header list; the SHA-256 of the body as
received), the string to sign and the HMAC chain, with the secret the stand-in holds for a
test access key (``KEYS``). Written on its own, from the documentation: toolnames' signer
(addon/toolnames_core/sigv4.py) is checked against it end to end and against botocore in
the unit tests, so one mistake shared by both would have to be botocore's too.

Answers, as AWS gives them (rest-json: ``x-amzn-ErrorType`` and ``{"message": …}``):
- a signature that does not match: 403 InvalidSignatureException, "The request signature we
  calculated does not match the signature you provided. …" with the canonical string and the
  string to sign AWS expected (observed: BerriAI/litellm #14763, a Bedrock converse-stream
  answer; aws/aws-sdk-js-v3 #810 shows the header);
- an access key the stand-in does not know: 403 UnrecognizedClientException, "The security
  token included in the request is invalid." (observed: vercel/ai #4163 on Bedrock,
  anthropics/anthropic-sdk-typescript #537 with its 403);
- an X-Amz-Date more than 5 minutes from the stand-in's clock: 403 InvalidSignatureException,
  "Signature expired: … is now earlier than … (… - 5 min.)" (modeled on the same text AWS
  services answer; the stand-in does not check a future date).

A request without an AWS4 Authorization header (a Bedrock API key is ``Bearer``) is not
checked here.
"""

from __future__ import annotations

import calendar
import hashlib
import hmac
import time
from collections.abc import Sequence
from urllib.parse import quote
from urllib.parse import unquote

from standin.shared import ProviderError

__all__ = ["KEYS", "SKEW", "check"]

# The test access keys the stand-in knows, and their secrets (test values, not credentials).
KEYS = {
    "AKIDTESTNOTAKEY": "test-not-a-secret",
    "AKIDOTHERTESTKEY": "other-test-not-a-secret",
}
SKEW = 5 * 60
MISMATCH = (
    "The request signature we calculated does not match the signature you provided. Check "
    "your AWS Secret Access Key and signing method. Consult the service documentation for "
    "details."
)
UNRECOGNIZED = "The security token included in the request is invalid."


def _error(kind: str, message: str) -> ProviderError:
    return ProviderError(403, {"message": message}, [("x-amzn-ErrorType", kind)])


def _path(raw: str) -> str:
    kept: list[str] = []
    for segment in raw.split("/"):
        if segment == "..":
            if kept:
                kept.pop()
        elif segment not in ("", "."):
            kept.append(segment)
    path = "/" + "/".join(kept)
    if raw.endswith("/") and kept:
        path += "/"
    return quote(path, safe="/~")


def _query(raw: str) -> str:
    if not raw:
        return ""
    items = []
    for part in raw.split("&"):
        name, _, value = part.partition("=")
        items.append((quote(unquote(name), safe="-_.~"), quote(unquote(value), safe="-_.~")))
    return "&".join(f"{n}={v}" for n, v in sorted(items))


def _sign(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def check(
    method: str, path: str, query: str, headers: Sequence[tuple[str, str]], body: bytes
) -> ProviderError | None:
    """The error AWS would answer for this request's SigV4 signature; None if it holds (or
    the request carries none)."""
    authorization = next((v for k, v in headers if k.lower() == "authorization"), "")
    if not authorization.startswith("AWS4-HMAC-SHA256 "):
        return None
    fields = {}
    for part in authorization[len("AWS4-HMAC-SHA256 ") :].split(","):
        name, _, value = part.strip().partition("=")
        fields[name] = value
    scope = fields.get("Credential", "").split("/")
    signed = fields.get("SignedHeaders", "")
    if len(scope) != 5 or not signed or not fields.get("Signature"):
        # Modeled: AWS names the missing part; the stand-in says what it needs.
        return _error(
            "IncompleteSignatureException",
            "[standin-modeled] Authorization header requires Credential, SignedHeaders and "
            "Signature parameters.",
        )
    key, date, region, service, _ = scope
    secret = KEYS.get(key)
    if secret is None:
        return _error("UnrecognizedClientException", UNRECOGNIZED)
    amz_date = next((v for k, v in headers if k.lower() == "x-amz-date"), "")
    try:
        when = calendar.timegm(time.strptime(amz_date, "%Y%m%dT%H%M%SZ"))
    except ValueError:
        when = None
    if when is not None and when < time.time() - SKEW:
        now = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        earliest = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() - SKEW))
        return _error(
            "InvalidSignatureException",
            f"Signature expired: {amz_date} is now earlier than {earliest} ({now} - 5 min.)",
        )
    lines = [method, _path(path), _query(query)]
    for name in signed.split(";"):
        values = [" ".join(v.split()) for k, v in headers if k.lower() == name]
        lines.append(f"{name}:{','.join(values)}")
    canonical = "\n".join([*lines, "", signed, hashlib.sha256(body).hexdigest()])
    to_sign = "\n".join(
        [
            "AWS4-HMAC-SHA256",
            amz_date,
            f"{date}/{region}/{service}/aws4_request",
            hashlib.sha256(canonical.encode("utf-8")).hexdigest(),
        ]
    )
    signing = _sign(f"AWS4{secret}".encode(), date)
    for part in (region, service, "aws4_request"):
        signing = _sign(signing, part)
    expected = hmac.new(signing, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()
    if amz_date[:8] == date and hmac.compare_digest(expected, fields["Signature"]):
        return None
    return _error(
        "InvalidSignatureException",
        f"{MISMATCH}\n\nThe Canonical String for this request should have been\n'{canonical}'"
        f"\n\nThe String-to-Sign should have been\n'{to_sign}'\n",
    )
