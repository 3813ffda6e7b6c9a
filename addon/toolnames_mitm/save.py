"""Saving flagged flows: a redacted copy, appended to a file only its owner can read."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote

from mitmproxy import http
from mitmproxy import io

__all__ = ["REDACTED", "FlaggedFlowWriter", "is_secret_name", "redacted_copy", "redacted_path"]

logger = logging.getLogger(__name__)

REDACTED = "REDACTED-by-toolnames"

# Words that make a header or query parameter name mean a credential. Gateways name their
# own (x-portkey-api-key, helicone-auth, ocp-apim-subscription-key, cf-aig-authorization…;
# tests/mitm/test_save.py lists them with their sources), so names are judged by meaning,
# not looked up in a list that is never complete.
SECRET_WORDS = frozenset(
    {
        "auth",
        "authorization",
        "authentication",
        "bearer",
        "cookie",
        "credential",
        "credentials",
        "jwt",
        "key",
        "passwd",
        "password",
        "secret",
        "sig",
        "signature",
        "token",
    }
)
# Words run together (apikey, accessToken, x-amz-security-token's "securitytoken").
SECRET_ENDINGS = ("apikey", "accesskey", "secretkey", "token", "secret", "password", "signature")
# Names with a credential word that carry none: a retry id, a handshake nonce, a cache key.
NOT_SECRET = frozenset({"idempotency-key", "sec-websocket-key", "cf-aig-cache-key"})
# A value in an HTTP authentication scheme is a credential whatever its header is called.
AUTH_SCHEMES = ("bearer ", "basic ", "digest ", "token ")
WORD_BREAKS = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


def is_secret_name(name: str) -> bool:
    """Whether a header or query parameter of this name carries a credential, by its words."""
    if name.lower() in NOT_SECRET:
        return False
    words = [w.lower() for w in WORD_BREAKS.split(name) if w]
    return any(w in SECRET_WORDS or w.endswith(SECRET_ENDINGS) for w in words)


def redacted_copy(flow: http.HTTPFlow) -> http.HTTPFlow:
    """A copy of ``flow`` without credentials; the live flow is left as it is."""
    copy = flow.copy()
    copy.id = flow.id  # the saved flow is the same flow, as mitmproxy's own save keeps it
    for message in (copy.request, copy.response):
        if message is None:
            continue
        _redact_headers(message.headers)
        if message.trailers is not None:
            _redact_headers(message.trailers)
    query = copy.request.query
    for name in list(query.keys()):
        if is_secret_name(name):
            query.set_all(name, [REDACTED] * len(query.get_all(name)))
    return copy


def _redact_headers(headers: http.Headers) -> None:
    for name in list(headers.keys()):
        values = headers.get_all(name)
        if is_secret_name(name) or any(v.lower().startswith(AUTH_SCHEMES) for v in values):
            headers.set_all(name, [REDACTED] * len(values))
        elif any(v.lstrip().startswith(("{", "[")) for v in values):
            # A JSON value can hold credentials by key: Portkey's x-portkey-config carries
            # whole gateway configs, api_key of each target included.
            headers.set_all(name, [_redacted_json(v) for v in values])


def _redacted_json(value: str) -> str:
    try:
        document = json.loads(value)
        redacted = _redact_keys(document)
    except ValueError:
        return value  # not JSON after all
    except RecursionError:
        return REDACTED  # too deep to look into, so not saved
    return value if redacted == document else json.dumps(redacted, separators=(",", ":"))


def _redact_keys(node: object) -> object:
    if isinstance(node, dict):
        return {k: REDACTED if is_secret_name(str(k)) else _redact_keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_redact_keys(v) for v in node]
    return node


def redacted_path(path: str) -> str:
    """A request path for a log line, with the values of credential parameters removed."""
    base, sep, query = path.partition("?")
    if not sep:
        return path
    parts = []
    for part in query.split("&"):
        name, eq, _ = part.partition("=")
        parts.append(f"{name}={REDACTED}" if eq and is_secret_name(unquote(name)) else part)
    return f"{base}?{'&'.join(parts)}"


class FlaggedFlowWriter:
    """Appends flows to ``path`` and flushes each, so a killed proxy loses nothing it saved."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        # The folder is the user's to make: a typo in it must fail, not save flows elsewhere.
        self.path = Path(path).expanduser()
        # Created 0600: saved traffic holds prompts and tool arguments even after redaction.
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & 0o077:
            # An existing file keeps its mode: it is the user's, but they should know.
            logger.warning(
                "toolnames_save file %s is readable or writable by others (mode %o); "
                "saved flows hold prompts and tool arguments: chmod 600 it",
                self.path,
                mode,
            )
        self.fo: BinaryIO = os.fdopen(fd, "ab")
        self.writer = io.FlowWriter(self.fo)

    def add(self, flow: http.HTTPFlow) -> None:
        self.writer.add(flow)
        self.fo.flush()

    def close(self) -> None:
        self.fo.close()
