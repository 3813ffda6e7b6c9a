"""AWS SigV4 on live flows: a request's signature read (``signed_by``), whether fix mode may
sign it again (``permission``), the changed request signed (``resign``), and what breaks
every signature before toolnames changes a byte (reverse mode's Host, anticomp's
Accept-Encoding), said once (``breakers``).

Credentials are read the way the AWS CLI reads them, from mitmproxy's environment: the
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN variables, else the shared
credentials file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials), profile AWS_PROFILE
else ``default``. They are read afresh for each request to sign (a file of rotated
credentials is picked up), held in a local variable until the request is signed, and never
put in a record, a comment, a log line or a saved flow.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from mitmproxy import http
from mitmproxy.proxy.mode_specs import ReverseMode

from toolnames_core import Credentials
from toolnames_core import Signed
from toolnames_core import credentials_from_environ
from toolnames_core import credentials_from_file
from toolnames_core import read_signature
from toolnames_core import resign_headers
from toolnames_core import verifies

__all__ = [
    "ANTICOMP",
    "REVERSE_HOST",
    "RESIGN_OFF",
    "Permission",
    "breakers",
    "load_credentials",
    "permission",
    "resign",
    "signed_by",
]

RESIGN_OFF = "toolnames_resign is off"
REVERSE_HOST = (
    "toolnames: a request signed with AWS SigV4 came through reverse mode, which rewrites its "
    "Host header to the upstream's; the signature covers Host, so the provider refuses every "
    "such request (HTTP 403 InvalidSignatureException), in every toolnames mode. Add --set "
    "keep_host_header=true, or use mitmproxy as a regular proxy (HTTPS_PROXY, with "
    "AWS_CA_BUNDLE for boto3)"
)
ANTICOMP = (
    "toolnames: a request signed with AWS SigV4 covers its Accept-Encoding header, which "
    "mitmproxy's anticomp option rewrites: the provider refuses every such request (HTTP 403 "
    "InvalidSignatureException), in every toolnames mode. Turn anticomp off for signed clients"
)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def signed_by(request: http.Request, authorization: list[bytes] | None = None) -> Signed | None:
    """The request's AWS SigV4 signature, if it carries one (``authorization``: the values
    of its Authorization fields, if the caller has read them already)."""
    if authorization is None:
        authorization = [v for k, v in request.headers.fields if k.lower() == b"authorization"]
    authorization = [_text(v) for v in authorization]
    path = request.path
    query = path.partition("?")[2] if "?" in path else ""
    if not authorization and not query:
        return None
    return read_signature(authorization, query)


def _pairs(request: http.Request) -> list[tuple[str, str]]:
    """The request's headers as sent; an HTTP/2 request's Host is its :authority."""
    pairs = [(_text(k), _text(v)) for k, v in request.headers.fields]
    if not any(k.lower() == "host" for k, _ in pairs):
        pairs.append(("host", request.host_header or ""))
    return pairs


def load_credentials(environ: Mapping[str, str]) -> tuple[Credentials | None, str]:
    """The credentials mitmproxy's environment holds, and where they were found (or looked
    for): words for a message, never a secret."""
    found = credentials_from_environ(environ)
    if found is not None:
        return found, "AWS_ACCESS_KEY_ID in mitmproxy's environment"
    named = environ.get("AWS_SHARED_CREDENTIALS_FILE") or "~/.aws/credentials"
    profile = environ.get("AWS_PROFILE") or "default"
    where = f"profile {profile!r} of {named}"
    try:
        text = Path(named).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None, f"no AWS_ACCESS_KEY_ID in mitmproxy's environment, nor {where}"
    found = credentials_from_file(text, profile)
    if found is None:
        return None, f"no AWS_ACCESS_KEY_ID in mitmproxy's environment, nor keys in {where}"
    return found, where


class Permission(NamedTuple):
    """Whether fix mode may sign the request again: the credentials to sign with, or why not."""

    credentials: Credentials | None
    refusal: str | None

    def __repr__(self) -> str:
        return f"Permission(signs={self.credentials is not None}, refusal={self.refusal!r})"


def permission(
    request: http.Request, signed: Signed, allowed: bool, environ: Mapping[str, str] = os.environ
) -> Permission:
    """Fix mode signs a changed request again only when the user allows it and mitmproxy holds
    the very access key the client signed with, whose secret makes the client's own signature:
    toolnames never speaks for another identity, nor signs what the client did not."""
    if not allowed:
        return Permission(None, RESIGN_OFF)
    if signed.presigned:
        return Permission(
            None, "its signature is in the URL (a presigned URL), which toolnames does not sign"
        )
    if not signed.readable:
        return Permission(None, f"toolnames cannot sign {signed.algorithm} requests")
    credentials, where = load_credentials(environ)
    if credentials is None:
        return Permission(None, f"toolnames found no AWS credentials to sign with ({where})")
    if credentials.access_key_id != signed.access_key_id:
        return Permission(
            None,
            f"the credentials toolnames found ({where}) are another access key's, and toolnames "
            "signs only as the client's own access key",
        )
    pairs = _pairs(request)
    if not any(k.lower() == "x-amz-date" for k, _ in pairs):
        return Permission(None, "its date is not in an X-Amz-Date header, which toolnames needs")
    path, _, query = request.path.partition("?")
    body = request.raw_content or b""
    if not verifies(request.method, path, query, pairs, body, signed, credentials):
        return Permission(
            None,
            f"the client's signature does not verify with the secret of that access key "
            f"({where}) over the request as mitmproxy received it, so toolnames does not sign it",
        )
    return Permission(credentials, None)


def resign(request: http.Request, signed: Signed, credentials: Credentials) -> list[str]:
    """Sign the request as it now is (after fix mode's changes) again; the names of the
    headers that changed."""
    path, _, query = request.path.partition("?")
    now = datetime.now(UTC)
    new = resign_headers(
        request.method,
        path,
        query,
        _pairs(request),
        request.raw_content or b"",
        signed,
        credentials,
        now,
    )
    for name, value in new.headers.items():
        request.headers[name] = value
    return sorted(new.headers)


def breakers(flow: http.HTTPFlow, signed: Signed, keep_host: bool, anticomp: bool) -> list[str]:
    """What in mitmproxy's own settings breaks this signature before toolnames sees the
    request: one line each, to say once."""
    lines = []
    reverse = isinstance(flow.client_conn.proxy_mode, ReverseMode)
    if reverse and not keep_host and signed.covers("host"):
        lines.append(REVERSE_HOST)
    if anticomp and signed.covers("accept-encoding"):
        lines.append(ANTICOMP)
    return lines
