"""AWS Signature Version 4: knowing a signed request, and signing a changed one again.

A SigV4 signature covers the request's method, path, query, the headers it lists
(``SignedHeaders``) and the hash of its body, so fix mode must change none of them unless it
signs the request again (``toolnames_resign``). This module reads a signature
(``read_signature``: the ``Authorization: AWS4-HMAC-SHA256 …`` header, or a presigned URL's
``X-Amz-Signature``) into a ``Signed`` record, and computes the canonical request, string to
sign and signature the way AWS documents them
(https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html) and botocore's
``SigV4Auth`` implements them, with the standard library only (hmac, hashlib).

Bytes in, values out: the headers come as ``(name, value)`` pairs, the credentials as a
``Credentials`` record whose repr hides the secret; nothing here reads the environment or a
file (the glue does, toolnames_mitm/signing.py). A record of the signature never holds the
signature itself, nor a secret.
"""

from __future__ import annotations

import configparser
import hashlib
import hmac
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from urllib.parse import quote
from urllib.parse import unquote

__all__ = [
    "ALGORITHM",
    "AMZ_DATE",
    "Credentials",
    "Resigned",
    "Signed",
    "canonical_path",
    "canonical_query",
    "canonical_request",
    "credentials_from_environ",
    "credentials_from_file",
    "read_signature",
    "resign_headers",
    "signature",
    "signing_key",
    "string_to_sign",
    "verifies",
]

ALGORITHM = "AWS4-HMAC-SHA256"
# The timestamp format of X-Amz-Date.
AMZ_DATE = "%Y%m%dT%H%M%SZ"
# Any Authorization scheme of the AWS4 family (SigV4a's AWS4-ECDSA-P256-SHA256 too) is a
# signature: what toolnames cannot sign again it still must not break.
_FAMILY = "AWS4-"
_UNRESERVED = "-_.~"
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class Signed:
    """A request's SigV4 signature as toolnames records it: who signed, for what, over which
    headers. The signature's value is kept for checking only: never in repr or the record."""

    algorithm: str
    access_key_id: str
    date: str  # YYYYMMDD of the credential scope
    region: str
    service: str
    signed_headers: tuple[str, ...]
    presigned: bool  # the signature is in the URL's query (X-Amz-Signature)
    value: str = field(default="", repr=False, compare=False)

    @property
    def readable(self) -> bool:
        """Whether the credential scope and header list could be read: a signature of
        another algorithm, or a malformed one, is still a signature nothing may break."""
        return self.algorithm == ALGORITHM and bool(self.access_key_id and self.signed_headers)

    def covers(self, header: str) -> bool:
        """Whether the signature covers header ``header`` (any header, when unreadable)."""
        return not self.readable or header.lower() in self.signed_headers

    @property
    def scope_text(self) -> str:
        """``access key AKID…, service bedrock, region us-east-1``, for messages."""
        if not self.readable:
            return f"{self.algorithm}, whose credential scope toolnames cannot read"
        return f"access key {self.access_key_id}, service {self.service}, region {self.region}"

    def to_dict(self) -> dict:
        return {
            "algorithm": self.algorithm,
            "access_key_id": self.access_key_id,
            "date": self.date,
            "region": self.region,
            "service": self.service,
            "signed_headers": list(self.signed_headers),
            "presigned": self.presigned,
        }

    @classmethod
    def from_dict(cls, item: object) -> Signed | None:
        if not isinstance(item, dict):
            return None
        keys = ("algorithm", "access_key_id", "date", "region", "service")
        texts = [item.get(k) for k in keys]
        headers = item.get("signed_headers")
        presigned = item.get("presigned")
        if not all(isinstance(t, str) for t in texts) or not isinstance(presigned, bool):
            return None
        if not isinstance(headers, list) or not all(isinstance(h, str) for h in headers):
            return None
        return cls(*texts, tuple(headers), presigned)


@dataclass(frozen=True, slots=True)
class Credentials:
    """AWS credentials; the secret and the session token never show in a repr."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    session_token: str | None = field(default=None, repr=False)


class Resigned:
    """The headers a re-signed request sends instead of its own: name (lower-case) -> value."""

    __slots__ = ("headers",)

    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers

    def __repr__(self) -> str:
        return f"Resigned({sorted(self.headers)})"


def _scope(credential: str) -> tuple[str, str, str, str] | None:
    parts = credential.split("/")
    if len(parts) != 5 or parts[4] != "aws4_request" or not all(parts):
        return None
    return parts[0], parts[1], parts[2], parts[3]


def _unread(algorithm: str, presigned: bool) -> Signed:
    return Signed(algorithm, "", "", "", "", (), presigned)


def _parse_authorization(value: str) -> Signed | None:
    text = value.strip()
    if not text.upper().startswith(_FAMILY):
        return None
    algorithm, _, rest = text.partition(" ")
    fields: dict[str, str] = {}
    for part in rest.split(","):
        key, sep, item = part.strip().partition("=")
        if sep:
            fields[key.strip()] = item.strip()
    scope = _scope(fields.get("Credential", ""))
    headers = fields.get("SignedHeaders", "")
    if algorithm != ALGORITHM or scope is None or not headers or not fields.get("Signature"):
        return _unread(algorithm, False)
    return Signed(algorithm, *scope, tuple(headers.split(";")), False, fields["Signature"])


def _parse_query(query: str) -> Signed | None:
    params: dict[str, str] = {}
    for item in query.split("&"):
        key, _, value = item.partition("=")
        params.setdefault(unquote(key), unquote(value))
    if "X-Amz-Signature" not in params:
        return None
    algorithm = params.get("X-Amz-Algorithm", "")
    scope = _scope(params.get("X-Amz-Credential", ""))
    headers = params.get("X-Amz-SignedHeaders", "")
    if algorithm != ALGORITHM or scope is None or not headers:
        return _unread(algorithm or "X-Amz-Signature", True)
    return Signed(algorithm, *scope, tuple(headers.split(";")), True, params["X-Amz-Signature"])


def read_signature(authorization: Sequence[str], query: str) -> Signed | None:
    """The request's SigV4 signature, from its Authorization header values or its query
    string (a presigned URL); None if it carries none (a Bedrock API key is ``Bearer``)."""
    for value in authorization:
        found = _parse_authorization(value)
        if found is not None:
            return found
    if "amz-signature" in query.lower():
        return _parse_query(query)
    return None


# -- the canonical request, as AWS and botocore make it ---------------------------------------


def _remove_dot_segments(path: str) -> str:
    # RFC 3986 §5.2.4, and AWS removes empty segments too (botocore.utils.remove_dot_segments).
    out: list[str] = []
    for segment in path.split("/"):
        if segment and segment != ".":
            if segment == "..":
                if out:
                    out.pop()
            else:
                out.append(segment)
    first = "/" if path.startswith("/") else ""
    last = "/" if path.endswith("/") and out else ""
    return first + "/".join(out) + last


def canonical_path(path: str) -> str:
    """The path as sent, dot segments removed, then URI-encoded once more: every service but
    S3 encodes it twice (a model id's ``%3A`` is signed as ``%253A``)."""
    return quote(_remove_dot_segments(path) or "/", safe="/~")


def _encode(text: str) -> str:
    return quote(text, safe=_UNRESERVED)


def canonical_query(query: str, drop: str = "") -> str:
    """Each parameter decoded and URI-encoded again (RFC 3986's unreserved characters kept),
    sorted by name, then value; ``drop``: a parameter left out (a presigned URL's signature)."""
    if not query:
        return ""
    pairs = []
    for item in query.split("&"):
        key, _, value = item.partition("=")
        if drop and unquote(key) == drop:
            continue
        pairs.append((_encode(unquote(key)), _encode(unquote(value))))
    return "&".join(f"{k}={v}" for k, v in sorted(pairs))


def _values(headers: Sequence[tuple[str, str]], name: str) -> list[str]:
    return [value for key, value in headers if key.lower() == name]


def canonical_request(
    method: str,
    path: str,
    query: str,
    headers: Sequence[tuple[str, str]],
    signed_headers: Sequence[str],
    payload_hash: str,
    drop: str = "",
) -> str:
    """The canonical request: each signed header ``name:value`` with its values' runs of
    white space made one space and repeated fields joined by commas (Trimall)."""
    lines = [method.upper(), canonical_path(path), canonical_query(query, drop)]
    for name in signed_headers:
        joined = ",".join(" ".join(v.split()) for v in _values(headers, name))
        lines.append(f"{name}:{joined}")
    return "\n".join([*lines, "", ";".join(signed_headers), payload_hash])


def string_to_sign(amz_date: str, region: str, service: str, canonical: str) -> str:
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    digest = hashlib.sha256(canonical.encode("utf-8", "surrogateescape")).hexdigest()
    return f"{ALGORITHM}\n{amz_date}\n{scope}\n{digest}"


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = _hmac(f"AWS4{secret}".encode(), date)
    return _hmac(_hmac(_hmac(key, region), service), "aws4_request")


def signature(secret: str, region: str, service: str, to_sign: str) -> str:
    """The hex signature of a string to sign (its second line is the X-Amz-Date)."""
    date = to_sign.split("\n", 2)[1][:8]
    key = signing_key(secret, date, region, service)
    return hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


def _payload_hash(headers: Sequence[tuple[str, str]], body: bytes) -> str:
    # A client that sends X-Amz-Content-SHA256 signs its value (botocore: UNSIGNED-PAYLOAD
    # for some operations); else the body's hash.
    sent = _values(headers, "x-amz-content-sha256")
    return sent[0] if sent else hashlib.sha256(body).hexdigest()


def verifies(
    method: str,
    path: str,
    query: str,
    headers: Sequence[tuple[str, str]],
    body: bytes,
    signed: Signed,
    credentials: Credentials,
) -> bool:
    """Whether ``signed`` is the signature ``credentials`` give this request, as it is now."""
    if not signed.readable or signed.presigned:
        return False
    dates = _values(headers, "x-amz-date")
    if not dates:
        return False
    canonical = canonical_request(
        method, path, query, headers, signed.signed_headers, _payload_hash(headers, body)
    )
    to_sign = string_to_sign(dates[0], signed.region, signed.service, canonical)
    expected = signature(credentials.secret_access_key, signed.region, signed.service, to_sign)
    return hmac.compare_digest(expected, signed.value)


def resign_headers(
    method: str,
    path: str,
    query: str,
    headers: Sequence[tuple[str, str]],
    body: bytes,
    signed: Signed,
    credentials: Credentials,
    now: datetime,
) -> Resigned:
    """The headers that sign the request as it is now (``headers`` and ``body`` as they will
    be sent) with the client's service, region and signed-header set: a fresh X-Amz-Date, an
    X-Amz-Content-SHA256 that holds a body hash updated, the session token left as sent."""
    amz_date = now.strftime(AMZ_DATE)
    new = {"x-amz-date": amz_date}
    sent = _values(headers, "x-amz-content-sha256")
    payload = hashlib.sha256(body).hexdigest()
    if sent and not (len(sent[0]) == 64 and set(sent[0]) <= _HEX):
        payload = sent[0]  # UNSIGNED-PAYLOAD and its kin stay as they are
    elif sent:
        new["x-amz-content-sha256"] = payload
    current = [(k, new.get(k.lower(), v)) for k, v in headers]
    canonical = canonical_request(method, path, query, current, signed.signed_headers, payload)
    to_sign = string_to_sign(amz_date, signed.region, signed.service, canonical)
    value = signature(credentials.secret_access_key, signed.region, signed.service, to_sign)
    new["authorization"] = (
        f"{ALGORITHM} Credential={credentials.access_key_id}/{amz_date[:8]}/{signed.region}/"
        f"{signed.service}/aws4_request, SignedHeaders={';'.join(signed.signed_headers)}, "
        f"Signature={value}"
    )
    return Resigned(new)


# -- credentials, the way the AWS CLI finds them ---------------------------------------------


def credentials_from_environ(environ: Mapping[str, str]) -> Credentials | None:
    """AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), if both are set."""
    key = environ.get("AWS_ACCESS_KEY_ID", "")
    secret = environ.get("AWS_SECRET_ACCESS_KEY", "")
    if not (key and secret):
        return None
    return Credentials(key, secret, environ.get("AWS_SESSION_TOKEN") or None)


def credentials_from_file(text: str, profile: str) -> Credentials | None:
    """A profile of the shared credentials file (INI: aws_access_key_id,
    aws_secret_access_key, aws_session_token), if it holds a key and its secret."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if not parser.has_section(profile):
        return None
    section = parser[profile]
    key = section.get("aws_access_key_id", "").strip()
    secret = section.get("aws_secret_access_key", "").strip()
    if not (key and secret):
        return None
    return Credentials(key, secret, section.get("aws_session_token", "").strip() or None)
