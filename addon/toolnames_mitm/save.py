"""Saving flagged flows: a redacted copy, appended to a file only its owner can read."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
from pathlib import Path
from urllib.parse import quote
from urllib.parse import unquote
from urllib.parse import unquote_plus

from mitmproxy import http
from mitmproxy.io import tnetstring

from toolnames_core import replace_values
from toolnames_mitm import flowfile

__all__ = [
    "REDACTED",
    "FlaggedFlowWriter",
    "UNSAVED_KEY",
    "UnusableFile",
    "bodies_left_out",
    "is_secret_name",
    "is_secret_param",
    "redacted_copy",
    "redacted_path",
    "redacted_url",
]

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


# OAuth's credentials whose names say nothing secret, in a query or a form only (a JSON
# "code" is a code interpreter's, a JSON-RPC error's): an MCP client's authorization code
# and its PKCE verifier, which together buy a token (RFC 6749 §4.1, RFC 7636 §4.5), the
# device code (RFC 8628 §3.4) and a JWT client or grant assertion (RFC 7523 §2.1, §2.2).
OAUTH_PARAMS = frozenset({"code", "code_verifier", "device_code", "assertion", "client_assertion"})


def is_secret_param(name: str) -> bool:
    """Whether a query or form parameter of this name carries a credential."""
    return is_secret_name(name) or name.lower() in OAUTH_PARAMS


def is_secret_name(name: str) -> bool:
    """Whether a header or query parameter of this name carries a credential, by its words."""
    if name.lower() in NOT_SECRET:
        return False
    words = [w.lower() for w in WORD_BREAKS.split(name) if w]
    return any(w in SECRET_WORDS or w.endswith(SECRET_ENDINGS) for w in words)


# The saved copy's metadata key for the bodies left out of it: {"request": why, ...}.
UNSAVED_KEY = "toolnames_save_left_out"


def bodies_left_out(saved: http.HTTPFlow) -> dict[str, str]:
    """Which bodies ``redacted_copy`` left out of the saved copy, and why."""
    return dict(saved.metadata.get(UNSAVED_KEY) or {})


def redacted_copy(flow: http.HTTPFlow) -> http.HTTPFlow:
    """A copy of ``flow`` without credentials; the live flow is left as it is."""
    copy = flow.copy()
    copy.id = flow.id  # the saved flow is the same flow, as mitmproxy's own save keeps it
    for message in (copy.request, copy.response):
        if message is None:
            continue
        _redact_headers(message.headers)
        _redact_subprotocols(message.headers)
        if message.trailers is not None:
            _redact_headers(message.trailers)
    query = copy.request.query
    for name in list(query.keys()):
        if is_secret_param(name):
            query.set_all(name, [REDACTED] * len(query.get_all(name)))
    unsaved = {}
    for part, message in (("request", copy.request), ("response", copy.response)):
        if message is not None and (why := _redact_body(message)) is not None:
            unsaved[part] = why
    if unsaved:
        # Said where a reader of the file looks (the addon logs it too, see bodies_left_out).
        copy.metadata[UNSAVED_KEY] = unsaved
    if copy.websocket is not None:
        for ws_message in copy.websocket.messages:
            redacted = _redacted_json_text(ws_message.content)
            if redacted is not None:
                ws_message.content = redacted
    return copy


# Bodies carry credentials too: an MCP server's token in the tools of a Responses API request
# (`authorization`, and `headers` of its own) or of a Realtime session, Anthropic's
# `mcp_servers[].authorization_token`. Any key whose name means a credential has its value
# replaced, wherever it sits; the rest of the body keeps every byte it was sent with.


# A body whose Content-Encoding does not decode is left out of the saved copy: saved as it
# came, its credentials would be there for anyone to decode (a gzip body with a bad CRC still
# inflates; a "gzip" body sent plain is plain). So is one compressed under no or another
# Content-Encoding, by its magic bytes: brotli has none, and is caught only when declared.
MAGIC = ((b"\x1f\x8b", "gzip"), (b"\x28\xb5\x2f\xfd", "zstd"))


def _redact_body(message: http.Message) -> str | None:
    """Redact the body in place; why it was left out instead, if it was."""
    if not message.raw_content:
        return None
    encoding = message.headers.get("content-encoding", "")
    try:
        content = message.get_content(strict=True)
    except ValueError as e:
        message.content = None
        return (
            f"its Content-Encoding ({encoding}) does not decode ({e}), so it could not be redacted"
        )
    for magic, kind in MAGIC:
        if content.startswith(magic):
            message.content = None
            return (
                f"it is {kind}-compressed under Content-Encoding {encoding or '(none)'}, so it "
                "could not be redacted"
            )
    content_type = message.headers.get("content-type", "").lower()
    if content_type.startswith("application/x-www-form-urlencoded"):
        redacted = _redacted_form(content)
    elif content_type.startswith("multipart/form-data"):
        redacted = _redacted_multipart(content, message.headers.get("content-type", ""))
    elif content_type.startswith("text/event-stream") or content.startswith((b"data:", b"event:")):
        redacted = _redacted_events(content)
    else:
        redacted = _redacted_json_text(content)
    if redacted is not None:
        message.content = redacted  # encoded again as the message's content-encoding says
    return None


def _redacted_form(content: bytes) -> bytes | None:
    """A form-encoded body with the value of every credential-named field, and the
    credentials of every URL value, replaced; None when it holds none."""
    parts = content.split(b"&")
    changed = False
    for i, part in enumerate(parts):
        name, eq, value = part.partition(b"=")
        if not eq:
            continue
        text = unquote_plus(value.decode("latin-1"))
        if is_secret_param(unquote_plus(name.decode("latin-1"))):
            parts[i] = name + b"=" + REDACTED.encode()
        elif (url := redacted_url(text)) != text:
            parts[i] = name + b"=" + quote(url, safe="").encode()
        else:
            continue
        changed = True
    return b"&".join(parts) if changed else None


MULTIPART_BOUNDARY = re.compile(r'boundary="?([^";]+)"?', re.IGNORECASE)
PART_NAME = re.compile(rb'\bname="([^"]*)"', re.IGNORECASE)


def _redacted_multipart(content: bytes, content_type: str) -> bytes | None:
    """A multipart form with the value of every credential-named field replaced, and every
    JSON field redacted as a body is; None when nothing changes."""
    found = MULTIPART_BOUNDARY.search(content_type)
    if found is None:
        return None
    delimiter = b"--" + found[1].strip().encode("latin-1")
    parts = content.split(delimiter)
    changed = False
    for i, part in enumerate(parts):
        head, blank, value = part.partition(b"\r\n\r\n")
        name = PART_NAME.search(head)
        if not blank or name is None:
            continue
        # The value runs to the CRLF before the next delimiter.
        end = b"\r\n" if value.endswith(b"\r\n") else b""
        value = value[: len(value) - len(end)]
        if is_secret_name(name[1].decode("latin-1")):
            replaced = REDACTED.encode()
        else:
            replaced = _redacted_json_text(value)
        if replaced is not None and replaced != value:
            parts[i] = head + blank + replaced + end
            changed = True
    return delimiter.join(parts) if changed else None


def _redacted_events(content: bytes) -> bytes | None:
    """An SSE stream with each JSON data line redacted as a body is; None when none changes."""
    lines = content.split(b"\n")
    changed = False
    for i, line in enumerate(lines):
        if not line.startswith(b"data:"):
            continue
        data = line[5:]
        end = b"\r" if data.endswith(b"\r") else b""
        body = data[: len(data) - len(end)]
        lead = body[: len(body) - len(body.lstrip())]
        redacted = _redacted_json_text(body.lstrip())
        if redacted is not None:
            lines[i] = b"data:" + lead + redacted + end
            changed = True
    return b"\n".join(lines) if changed else None


def _redacted_json_text(content: bytes | None) -> bytes | None:
    """The JSON text with every credential-named key's value replaced; None when it is not
    JSON or holds no such key."""
    if not content or content.lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        text = content.decode("utf-8")
        document = json.loads(text)
    except ValueError:
        return None
    except RecursionError:
        return json.dumps(REDACTED).encode()  # too deep to look into, so not saved
    paths = _secret_values(document)
    if not paths:
        return None
    try:
        spliced = replace_values(text, paths)
        # json.loads keeps the last of a repeated key: every occurrence must be gone.
        json.loads(spliced, object_pairs_hook=_all_redacted)
        return spliced.encode("utf-8")
    except (ValueError, KeyError, RecursionError):
        pass
    # Text the splice cannot place (a repeated key): the document, the same values replaced
    # (json.loads kept one of each repeated key), encoded again.
    for path, value in paths.items():
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = value
    try:
        return json.dumps(document, ensure_ascii=False).encode("utf-8")
    except RecursionError:
        return json.dumps(REDACTED).encode()  # too deep to look into, so not saved


def _may_hold_secret(value: object) -> bool:
    # A number is never a credential: Gemini's usage counts are named totalTokenCount.
    return isinstance(value, (str, dict, list)) and value != REDACTED


def _all_redacted(pairs: list[tuple[str, object]]) -> dict:
    for key, value in pairs:
        if is_secret_name(key) and _may_hold_secret(value):
            raise ValueError("a credential is left in the text")
        if isinstance(value, str) and redacted_url(value) != value:
            raise ValueError("a URL's credential is left in the text")
    return dict(pairs)


def _secret_values(document: object) -> dict[tuple, object]:
    """The path of every value to replace, and what replaces it: any value under a
    credential-named key, and any URL string with credentials (an MCP server's
    `server_url` or `url` with ?key=…, or user:password@), walked without recursion."""
    found: dict[tuple, object] = {}
    stack: list[tuple[tuple, object]] = [((), document)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if is_secret_name(str(key)):
                    if _may_hold_secret(value):
                        found[(*path, key)] = REDACTED
                else:
                    stack.append(((*path, key), value))
        elif isinstance(node, list):
            stack.extend(((*path, i), value) for i, value in enumerate(node))
        elif isinstance(node, str) and path and (url := redacted_url(node)) != node:
            found[path] = url
    return found


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
    if isinstance(node, str):
        return redacted_url(node)
    return node


# Browsers cannot set headers on a WebSocket, so OpenAI Realtime takes the key as a
# subprotocol: "Sec-WebSocket-Protocol: realtime, openai-insecure-api-key.<KEY>".
SECRET_SUBPROTOCOLS = ("openai-insecure-api-key.",)


def _redact_subprotocols(headers: http.Headers) -> None:
    values = headers.get_all("sec-websocket-protocol")
    if not values:
        return
    redacted = []
    for value in values:
        tokens = [t.strip() for t in value.split(",")]
        for i, token in enumerate(tokens):
            for prefix in SECRET_SUBPROTOCOLS:
                if token.lower().startswith(prefix):
                    tokens[i] = prefix + REDACTED
        redacted.append(", ".join(tokens))
    headers.set_all("sec-websocket-protocol", redacted)


def redacted_path(path: str) -> str:
    """A request path for a log line, with the values of credential parameters removed."""
    base, sep, query = path.partition("?")
    if not sep:
        return path
    return f"{base}?{_redacted_params(query)}"


def _redacted_params(query: str) -> str:
    parts = []
    for part in query.split("&"):
        name, eq, _ = part.partition("=")
        parts.append(f"{name}={REDACTED}" if eq and is_secret_param(unquote(name)) else part)
    return "&".join(parts)


SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*\Z")


def redacted_url(value: str) -> str:
    """``value`` if it is no URL or one without credentials; else the URL with its userinfo
    (user:password@, or a token as the user) and the values of its credential parameters, in
    the query or the fragment (OAuth's #access_token=), replaced."""
    if "://" not in value:
        return value
    rest, hashmark, fragment = value.partition("#")
    rest, mark, query = rest.partition("?")
    scheme, sep, after = rest.partition("://")
    if not SCHEME.match(scheme):
        return value
    netloc, slash, path = after.partition("/")
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    if mark:
        query = _redacted_params(query)
    if hashmark:
        fragment = _redacted_params(fragment)
    return f"{scheme}{sep}{netloc}{slash}{path}{mark}{query}{hashmark}{fragment}"


class UnusableFile(Exception):
    """A toolnames_save file that is there but holds no mitmproxy flows: never appended to."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FlaggedFlowWriter:
    """Appends flows to ``path``, each as one whole record.

    Before the first, the file is looked at (flowfile.py): a record cut by a kill or a full
    disk at its end is cut off, or every flow appended after it would be lost to each reader;
    a file damaged before its end is moved aside whole and a new one started. A write that
    fails (a full disk) is undone, so the file stays whole, and is said once; each flagged
    flow after it tries again, and the first that is saved says so.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        # The folder is the user's to make: a typo in it must fail, not save flows elsewhere.
        self.path = Path(path).expanduser()
        self.fd: int | None = self._open()
        try:
            self.end = self._whole_records()
            self._check_mode()
        except BaseException:
            self.close()
            raise
        self.failing: str | None = None  # why the last write failed, until one succeeds
        self.unsaved = 0

    def _open(self) -> int:
        # Created 0600: saved traffic holds prompts and tool arguments even after redaction.
        return os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)

    def _check_mode(self) -> None:
        assert self.fd is not None
        mode = stat.S_IMODE(os.fstat(self.fd).st_mode)
        if mode & 0o077:
            # An existing file keeps its mode: it is the user's, but they should know.
            logger.warning(
                "toolnames_save file %s is readable or writable by others (mode %o); "
                "saved flows hold prompts and tool arguments: chmod 600 it",
                self.path,
                mode,
            )

    def _whole_records(self) -> int:
        """Where the file's whole records end, once it holds nothing else: the offset the
        next record is appended at."""
        assert self.fd is not None
        if not stat.S_ISREG(os.fstat(self.fd).st_mode):
            return 0  # a pipe or a device: nothing to read back
        with open(self.path, "rb") as fo:
            found = flowfile.layout(fo)
        if found.damage is None:
            return found.size
        if found.cut_tail:
            os.ftruncate(self.fd, found.end)
            logger.warning(
                "toolnames_save: %s ended inside a flow record cut short by a kill or a full "
                "disk (%s): truncated it to its %d whole flow(s), %d byte(s) removed; saving "
                "appends after them",
                self.path,
                found.damage,
                found.flows,
                found.size - found.end,
            )
            return found.end
        if found.flows == 0 and found.resumes is None:
            raise UnusableFile(f"is not a mitmproxy flow file: {found.damage}")
        # Whole flows after the damage: truncating would lose them. The file goes aside as
        # it is (scripts/scan reads past the damage) and saving starts a new one.
        aside = self._aside()
        os.close(self.fd)
        self.fd = None
        os.rename(self.path, aside)
        self.fd = self._open()
        logger.warning(
            "toolnames_save: %s is damaged at byte %d, after %d whole flow(s) (%s), and whole "
            "flows follow that mitmdump -nr cannot reach: moved it as it is to %s (scripts/scan "
            "reads every whole flow in it); saving starts a new %s",
            self.path,
            found.end,
            found.flows,
            found.damage,
            aside,
            self.path,
        )
        return 0

    def _aside(self) -> Path:
        for n in range(1, 10_000):
            aside = self.path.with_name(f"{self.path.name}.damaged{'' if n == 1 else f'-{n}'}")
            if not aside.exists():
                return aside
        raise UnusableFile("is damaged, and no free name is left to move it aside")

    def add(self, flow: http.HTTPFlow) -> bool:
        """Append ``flow``; False when it could not be written (said once until one is)."""
        if self.fd is None:
            self.unsaved += 1
            return False
        data = tnetstring.dumps(flow.get_state())  # what mitmproxy's FlowWriter writes
        try:
            written = 0
            while written < len(data):
                written += os.write(self.fd, data[written:])
        except OSError as e:
            self._failed(e)
            return False
        self.end += len(data)
        if self.failing is not None:
            logger.warning(
                "toolnames_save: saving to %s again; %d flagged flow(s) were not saved "
                "while it failed (%s)",
                self.path,
                self.unsaved,
                self.failing,
            )
            self.failing, self.unsaved = None, 0
        return True

    def _failed(self, e: OSError) -> None:
        self.unsaved += 1
        try:
            # What was written of the record goes: the file ends with whole flows again.
            os.ftruncate(self.fd, self.end)
            stopped = None
        except OSError as undo:
            stopped = undo.strerror or str(undo)
            self.close()  # a cut record at its end, which the next start truncates
        if self.failing is not None:
            return
        self.failing = e.strerror or str(e)
        if stopped is None:
            then = (
                "it and each flagged flow after it are not saved while writing fails (the "
                "file keeps every flow saved before), and toolnames says when one is"
            )
        else:
            then = (
                f"saving stopped (the cut record could not be removed: {stopped}; the next "
                "start truncates it)"
            )
        logger.error(
            "toolnames_save: cannot write a flagged flow to %s (%s): %s",
            self.path,
            self.failing,
            then,
        )

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)
