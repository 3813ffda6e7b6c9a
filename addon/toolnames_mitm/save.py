"""Saving flagged flows: a redacted copy, appended to a file only its owner can read."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import BinaryIO
from urllib.parse import unquote

from mitmproxy import http
from mitmproxy import io

__all__ = ["REDACTED", "FlaggedFlowWriter", "redacted_copy", "redacted_path"]

logger = logging.getLogger(__name__)

REDACTED = "REDACTED-by-toolnames"

# Where providers and gateways put credentials (docs/providers.md; AWS SigV4 and session tokens too).
SECRET_HEADERS = (
    "authorization",
    "proxy-authorization",
    "api-key",
    "x-api-key",
    "x-goog-api-key",
    "x-amz-security-token",
    "cookie",
    "set-cookie",
)
SECRET_QUERY = frozenset(
    {
        "key",
        "api_key",
        "api-key",
        "apikey",
        "access_token",
        "token",
        "sig",
        "x-amz-security-token",
        "x-amz-signature",
        "x-amz-credential",
    }
)


def redacted_copy(flow: http.HTTPFlow) -> http.HTTPFlow:
    """A copy of ``flow`` without credentials; the live flow is left as it is."""
    copy = flow.copy()
    copy.id = flow.id  # the saved flow is the same flow, as mitmproxy's own save keeps it
    for message in (copy.request, copy.response):
        if message is None:
            continue
        for name in SECRET_HEADERS:
            values = message.headers.get_all(name)
            if values:
                message.headers.set_all(name, [REDACTED] * len(values))
    query = copy.request.query
    for name in list(query.keys()):
        if name.lower() in SECRET_QUERY:
            query.set_all(name, [REDACTED] * len(query.get_all(name)))
    return copy


def redacted_path(path: str) -> str:
    """A request path for a log line, with the values of credential parameters removed."""
    base, sep, query = path.partition("?")
    if not sep:
        return path
    parts = []
    for part in query.split("&"):
        name, eq, _ = part.partition("=")
        parts.append(f"{name}={REDACTED}" if eq and unquote(name).lower() in SECRET_QUERY else part)
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
