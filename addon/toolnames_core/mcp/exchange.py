"""One HTTP request of MCP traffic and its answer: what the client sent (its calls, its
headers), what the server listed, and what fix mode changed on the way.

    state = McpState()                       # one per proxy: every session's listed names
    exchange = McpExchange(state, "127.0.0.1:8000", session_id, "openai")
    exchange.check_request(messages, body, fix=True)   # calls judged; exchange.new_body
    new = exchange.check_answer(200, "application/json", answer, fix=True)
    stream = exchange.stream(fix=True)       # an SSE answer, chunk by chunk, split anywhere

A ``tools/list`` answer is matched to its request by JSON-RPC id (the requests of the
same POST); each listed name is weighed (``checks.py``) and remembered for its session
(``state.py``). Fix mode lists each name the chosen rule rejects under the alias LLM
renaming gives it (``aliases.alias_for``: a function of the name and the rule alone), and
a ``tools/call`` of such an alias goes to the server under the server's own name, in
``params.name`` and in ``Mcp-Name``. Every other byte stays: names are spliced in place.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable

from toolnames_core import codes
from toolnames_core.aliases import ALIAS_REWRITE
from toolnames_core.aliases import DIGEST_LEN
from toolnames_core.aliases import alias_for
from toolnames_core.encodings import READABLE
from toolnames_core.encodings import StreamDecoder
from toolnames_core.encodings import stream_coding
from toolnames_core.findings import malformed
from toolnames_core.framings import MAX_EVENT_BYTES
from toolnames_core.jsonsplice import Replacements
from toolnames_core.jsonsplice import replace_strings
from toolnames_core.mcp.checks import accepted
from toolnames_core.mcp.checks import listed_findings
from toolnames_core.mcp.lookup import looks_like_alias
from toolnames_core.mcp.messages import Message
from toolnames_core.mcp.messages import header_value
from toolnames_core.mcp.messages import is_mcp_request
from toolnames_core.mcp.messages import parse_header_name
from toolnames_core.mcp.messages import read_messages
from toolnames_core.mcp.messages import sse_events
from toolnames_core.mcp.state import McpState
from toolnames_core.model import Finding
from toolnames_core.model import Fix
from toolnames_core.model import JsonPath
from toolnames_core.model import SkippedFix
from toolnames_core.model import format_path
from toolnames_core.names import quote_name
from toolnames_core.rules import RULES
from toolnames_core.rules import valid_name_pattern
from toolnames_core.sigv4 import Signed

__all__ = [
    "API",
    "UNALIAS_REWRITE",
    "McpExchange",
    "McpStream",
    "endpoint_server",
    "endpoint_session",
    "inspect_mcp",
    "mcp_server",
]

API = "mcp"
# A tools/call of an alias fix mode listed, sent to the server under the server's name.
UNALIAS_REWRITE = "unalias"
# How many listed names a call-unlisted message shows.
SHOWN_NAMES = 8


# The HTTP+SSE transport's first event: ``event: endpoint`` with the URL to POST to.
_ENDPOINT_EVENT = re.compile(rb"(?m)^event: ?endpoint\r?$")
_SESSION_PARAM = re.compile(r"[?&](?:session_id|sessionId)=([^&#]*)")


def endpoint_session(url: bytes | str) -> str:
    """The session an HTTP+SSE endpoint URL names (``?session_id=`` in the Python SDK,
    ``?sessionId=`` in the TypeScript one); "" when it names none."""
    text = url.decode("utf-8", "replace") if isinstance(url, bytes) else url
    found = _SESSION_PARAM.search(text)
    return urllib.parse.unquote(found[1]) if found else ""


def mcp_server(authority: str, path: str) -> str:
    """The MCP server a request goes to: its host:port and the path it is served at, without
    the query (a gateway serves several servers on one host, each its own sessions and
    names; HTTP+SSE's POSTs carry the session in the query)."""
    return authority + urllib.parse.urlsplit(path or "/").path


def endpoint_server(server: str, url: bytes | str) -> str:
    """The server an HTTP+SSE stream's endpoint event sends the client's POSTs to: its
    URL, relative (as the SDKs send it) or not, resolved against the stream's path, on the
    stream's host:port (the POSTs' sessions are the stream's)."""
    text = url.decode("utf-8", "replace") if isinstance(url, bytes) else url
    authority, slash, path = server.partition("/")
    target = urllib.parse.urljoin(slash + path, text.strip())
    return mcp_server(authority, urllib.parse.urlsplit(target).path)


def _id_key(value: object) -> str:
    # JSON-RPC ids are strings or numbers, and 1 is not "1". (Whatever json.loads read,
    # json.dumps writes: it nests no deeper than json.loads does.)
    return json.dumps(value, sort_keys=True)


class McpExchange:
    """One MCP request and its answer. ``server``: host:port and path (``mcp_server``),
    ``session_id``: the request's
    Mcp-Session-Id ("" when it has none: a stateless server's traffic is one session)."""

    api = API
    blocked = False  # MCP traffic is never blocked
    rejections = ()

    def __init__(
        self,
        state: McpState,
        server: str,
        session_id: str,
        rule: str,
        *,
        method_header: str = "",
        name_header: str = "",
    ) -> None:
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}; known rules: {', '.join(RULES)}")
        self.state = state
        self.server = server
        self.key = (server, session_id)
        self.rule = rule
        self.method_header = method_header
        self.name_header = name_header
        # The requests of this POST by id: their method, and whether a tools/list continues.
        self.pending: dict[str, tuple[str, bool]] = {}
        self.request_findings: list[Finding] = []
        self.response_findings: list[Finding] = []
        self.fixes: list[Fix] = []
        self.fix_skipped: list[SkippedFix] = []
        # The request as fix mode sent it on, and the Mcp-Name header it sent.
        self.new_body: bytes | None = None
        self.new_name_header: str | None = None
        # Names a tools/list answer listed (the server's own, in order).
        self.listed: list[str] = []
        # Whether fix mode changes this exchange's answer (set by check_request).
        self.fixing = False
        # The client's Accept-Encoding when fix mode asked for identity instead; the SSE
        # answer's Content-Length when fix mode sent it on without it.
        self.accept_encoding_sent: str | None = None
        self.length_dropped: str | None = None
        # The request's AWS SigV4 signature (set by the caller), why fix mode left the
        # exchange as it came because of it, and whether fix mode signed the request again.
        self.signed: Signed | None = None
        self.signed_declined: str | None = None
        self.resigned = False
        # Names in the form of an alias that toolnames could not send back under the
        # server's name, and why (lookup.py).
        self.unrestored: dict[str, str] = {}

    @property
    def findings(self) -> list[Finding]:
        return [*self.request_findings, *self.response_findings]

    # -- the request ---------------------------------------------------------------------

    def end_session(self) -> None:
        """The client ended its session (DELETE): its names go."""
        self.state.end(self.key)

    def check_request(self, messages: list[Message], content: bytes, fix: bool = False) -> None:
        """Judge the calls of a request's messages; ``fix``: send aliases under the
        server's names (``new_body``, ``new_name_header``)."""
        self.fixing = fix
        replacements: Replacements = {}
        for message in messages:
            method = message.method
            single = method is not None and len(messages) == 1
            if single and self.method_header and self.method_header != method:
                self._header_mismatch("Mcp-Method", self.method_header, method)
            if message.is_request:
                params = message.value.get("params")
                cursor = isinstance(params, dict) and params.get("cursor") is not None
                self.pending[_id_key(message.id)] = (method, cursor)
                if method == "tools/list":
                    self.state.session(self.key).expect(_id_key(message.id), cursor)
            if method == "tools/call":
                self._call(message, len(messages) == 1, fix, replacements)
        if replacements:
            try:
                self.new_body = replace_strings(content, replacements)
            except (UnicodeDecodeError, ValueError, KeyError, IndexError) as e:
                # The request goes on as the client sent it, header included.
                self.fix_skipped += [
                    SkippedFix(format_path(where), name, f"was sent as it was: {e}")
                    for where, (_, name) in replacements.items()
                ]
                self.fixes = []
                self.new_name_header = None

    def _header_mismatch(self, header: str, sent: str, body: str) -> None:
        self.request_findings.append(
            Finding(
                codes.MCP_HEADER_MISMATCH,
                "error",
                header,
                f"the {header} header {quote_name(sent)} does not match the body's "
                f"{quote_name(body)}; servers of the 2026-07-28 revision answer 400 "
                "(-32020, header mismatch)",
            )
        )

    def _call(
        self,
        message: Message,
        alone: bool,
        fix: bool,
        replacements: Replacements,
    ) -> None:
        params = message.value.get("params")
        if not isinstance(params, dict) or not isinstance(params.get("name"), str):
            self.request_findings.append(
                malformed(
                    (*message.where, "params", "name"),
                    "a tool name (a string)",
                    params.get("name") if isinstance(params, dict) else params,
                )
            )
            return
        name = params["name"]
        where = (*message.where, "params", "name")
        path = format_path(where)
        if alone and self.name_header:
            header_name = parse_header_name(self.name_header)
            if header_name != name:
                self._header_mismatch("Mcp-Name", header_name, name)
        self._judge_call(name, path)
        original = self.state.original(self.server, name)
        if fix and original is None and name in self.unrestored:
            why = self.unrestored[name]
            self.fix_skipped.append(SkippedFix(path, name, f"was sent as it came: {why}"))
            self.request_findings.append(
                Finding(
                    codes.MCP_ALIAS_UNRESTORED,
                    "warning",
                    path,
                    f"tools/call of {quote_name(name)}, in the form of an alias fix mode "
                    f"lists, was not restored to a name of the server's: {why}",
                )
            )
        if fix and original is not None:
            replacements[where] = (name, original)
            self.fixes.append(Fix(where, name, original, UNALIAS_REWRITE))
            if alone and self.name_header and parse_header_name(self.name_header) == name:
                self.new_name_header = header_value(original)
                self.fixes.append(Fix(("Mcp-Name",), name, original, UNALIAS_REWRITE))

    def _judge_call(self, name: str, path: str) -> None:
        session = self.state.session(self.key)
        if session.overflow:
            return
        if not session.listed:
            if not session.told_unjudged:
                session.told_unjudged = True
                self.request_findings.append(
                    Finding(
                        codes.MCP_CALL_UNLISTED,
                        "info",
                        path,
                        f"tools/call of {quote_name(name)} not judged: toolnames saw no "
                        "tools/list answer of this MCP session (it came before toolnames "
                        "did, or the client kept an earlier one); said once per session",
                    )
                )
            return
        if session.knows(name):
            return
        listed = sorted(session.listing | session.previous)
        shown = ", ".join(quote_name(n) for n in listed[:SHOWN_NAMES])
        more = f" (+{len(listed) - SHOWN_NAMES} more)" if len(listed) > SHOWN_NAMES else ""
        self.request_findings.append(
            Finding(
                codes.MCP_CALL_UNLISTED,
                "warning",
                path,
                f"tools/call of {quote_name(name)}, which this MCP session never listed; "
                f"listed: {shown or 'none'}{more}",
            )
        )

    # -- the answer ----------------------------------------------------------------------

    def check_status(self, status: int | None) -> None:
        """A 404 to a request with a session id: the server ended the session."""
        if status == 404 and self.key[1]:
            self.state.end(self.key)

    def check_answer(
        self, status: int | None, content_type: str, content: bytes, fix: bool = False
    ) -> bytes | None:
        """Judge a whole answer (JSON, or SSE read whole); the answer as fix mode sends it
        on, or None when it stays as it came."""
        self.check_status(status)
        if status is None or not 200 <= status < 300 or not self.pending:
            return None
        if status == 202 or not content.strip():
            # Accepted: the answers come on the session's stream (HTTP+SSE), read there.
            return None
        if "text/event-stream" in content_type.lower():
            stream = self.stream(fix)
            out = stream(content) + stream(b"")
            return out if out != content else None
        messages = read_messages(content)
        if messages is None:
            if self.awaits_listing():
                self.unreadable("the answer is not JSON-RPC 2.0")
            return None
        replacements = self.judge_answers(messages, (), fix)
        if not replacements:
            return None
        return self._spliced(content, replacements)

    def stream(
        self, fix: bool = False, sniff: bool = False, content_encoding: str = ""
    ) -> McpStream | None:
        """A tap for an SSE answer (or the GET stream's server messages); ``sniff``: a GET
        stream that may be no MCP at all, told by its first event; ``content_encoding``: its
        header. None when no decoder reads that encoding (several codings, an unknown one)."""
        coding = stream_coding(content_encoding)
        if coding is not None and coding not in READABLE:
            return None
        return McpStream(self, fix, sniff, coding)

    def answer_encoding(self, accept_encoding: str) -> str | None:
        """The Accept-Encoding to send instead of the client's, or None to leave it: fix mode
        splices names into a tools/list answer, which a compressed stream would hide."""
        if not self.fixing or not self.awaits_listing():
            return None
        if accept_encoding.strip().lower() == "identity":
            return None
        self.accept_encoding_sent = accept_encoding
        return "identity"

    def awaits_listing(self) -> bool:
        """Whether this request asked for tools/list: its answer lists names."""
        return any(method == "tools/list" for method, _ in self.pending.values())

    def answer_unread(self, why: str) -> None:
        """The answer cannot be read; said when it would list names."""
        if self.awaits_listing():
            self.unreadable(why)

    def unreadable(self, why: str) -> None:
        self.response_findings.append(
            Finding(
                codes.RESPONSE_UNREADABLE,
                "warning",
                "",
                f"the tool names the MCP server listed were not checked: {why}",
            )
        )

    def _spliced(self, content: bytes, replacements: Replacements) -> bytes | None:
        try:
            return replace_strings(content, replacements)
        except (UnicodeDecodeError, ValueError, KeyError, IndexError) as e:
            self.keep_as_sent(replacements, str(e))
            return None

    def keep_as_sent(self, replacements: Replacements, why: str) -> None:
        """The answer could not be changed: it goes on as it came, and the record says so."""
        prefix = set(replacements)
        self.fixes = [f for f in self.fixes if f.where not in prefix]
        self.fix_skipped += [
            SkippedFix(format_path(where), alias, f"was not listed: {why}")
            for where, (_, alias) in replacements.items()
        ]

    def judge_answers(self, messages: list[Message], prefix: JsonPath, fix: bool) -> Replacements:
        """Judge the answers among ``messages``; the renames fix mode makes, by path
        (relative to the messages' own text): (the name as listed, its alias), as
        ``replace_strings`` takes them."""
        replacements: Replacements = {}
        for message in messages:
            if not message.is_response:
                continue
            key = _id_key(message.id)
            asked = self.pending.get(key)
            # Answered on the session's stream, as HTTP+SSE answers: matched by id there.
            continued = self.state.session(self.key).pending.pop(key, None)
            if asked is None and continued is not None:
                asked = ("tools/list", continued)
            if asked is None or asked[0] != "tools/list":
                continue
            result = message.value.get("result")
            if not isinstance(result, dict):
                continue  # an error answer lists nothing
            replacements.update(self._listing(message, result, asked[1], prefix, fix))
        return replacements

    def _listing(
        self, message: Message, result: dict, continued: bool, prefix: JsonPath, fix: bool
    ) -> Replacements:
        tools = result.get("tools")
        where = (*message.where, "result", "tools")
        if not isinstance(tools, list):
            self.response_findings.append(malformed((*prefix, *where), "an array", tools))
            return {}
        session = self.state.session(self.key)
        if not continued:
            session.new_listing()
        rule = RULES[self.rule]
        valid = valid_name_pattern(rule).fullmatch
        names: list[str] = []
        seen: set[str] = set()
        places: list[tuple[JsonPath, str]] = []
        for i, tool in enumerate(tools):
            at = (*where, i, "name")
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str):
                shown_at = (*prefix, *where, i) if not isinstance(tool, dict) else (*prefix, *at)
                value = tool if not isinstance(tool, dict) else name
                expected = "an object" if not isinstance(tool, dict) else "a tool name (a string)"
                self.response_findings.append(malformed(shown_at, expected, value))
                continue
            if name in session.listing or name in seen:
                self.response_findings.append(
                    Finding(
                        codes.MCP_NAME_DUPLICATE,
                        "warning",
                        format_path((*prefix, *at)),
                        f"MCP tool name {quote_name(name)} is listed twice in one tools/list "
                        "(pages included); MCP names must be unique per server, and clients "
                        "keep one of them or drop both",
                    )
                )
            if not accepted(name):
                self.response_findings += listed_findings(name, format_path((*prefix, *at)), rule)
            names.append(name)
            seen.add(name)
            places.append((at, name))
        self.listed += names
        renames: Replacements = {}
        aliases: dict[str, str] = {}
        if fix:
            taken = {n for n in names if valid(n)} | session.listing
            for at, name in places:
                if valid(name):
                    continue
                alias = self._alias_of(name, taken, aliases)
                if alias is None:
                    self.fix_skipped.append(
                        SkippedFix(
                            format_path((*prefix, *at)),
                            name,
                            f"would be listed as "
                            f"{quote_name(alias_for(name, rule, digest_len=2 * DIGEST_LEN))}, "
                            "a name already listed",
                        )
                    )
                    continue
                aliases[alias] = name
                renames[at] = (name, alias)
                self.fixes.append(Fix((*prefix, *at), name, alias, ALIAS_REWRITE))
            if aliases:
                self.state.learn(self.server, aliases)
        session.add(names + list(aliases))
        return renames

    def _alias_of(self, name: str, taken: set[str], aliases: dict[str, str]) -> str | None:
        """The alias fix mode lists ``name`` under, given the names ``taken`` by other tools
        and the ``aliases`` given so far; None when both forms are taken. The listing and the
        lookup (``learn_listing``) both ask here, so they agree."""
        rule = RULES[self.rule]
        for digest_len in (DIGEST_LEN, 2 * DIGEST_LEN):
            alias = alias_for(name, rule, digest_len=digest_len)
            if not self._clashes(alias, name, taken, aliases):
                return alias
        return None

    def _clashes(self, alias: str, name: str, taken: set[str], aliases: dict[str, str]) -> bool:
        """Whether ``alias`` is a name listed for another tool (an earlier page's alias of
        the same name is the same tool listed twice)."""
        if aliases.get(alias, name) != name:
            return True
        return alias in taken and self.state.original(self.server, alias) != name

    # -- restoring an alias with nothing remembered (lookup.py) --------------------------

    def to_restore(self, messages: list[Message]) -> list[str]:
        """The names this request's ``tools/call``s use that have the form of an alias but
        that toolnames cannot send back: it has no listing of this server that gave them
        (the glue then asks the server, and ``learn_listing`` or ``not_restored`` follows)."""
        rule = RULES[self.rule]
        session = self.state.sessions.get(self.key)
        wanted: list[str] = []
        for message in messages:
            params = message.value.get("params") if message.method == "tools/call" else None
            name = params.get("name") if isinstance(params, dict) else None
            if not isinstance(name, str) or name in wanted:
                continue
            if self.state.original(self.server, name) is not None:
                continue
            if session is not None and session.knows(name):
                continue  # the server's own name, listed in this session
            if looks_like_alias(name, rule):
                known = self.state.unrestorable(self.key, name)
                if self.signed is not None:
                    # Its signature covers the call: toolnames sends no request of its own
                    # under it (the client's key signs the call again, not a new request).
                    self.unrestored[name] = (
                        "toolnames has no listing of this server that gave it, and asks "
                        "no server for one on behalf of a request signed with AWS SigV4"
                    )
                elif known is not None:
                    self.unrestored[name] = known
                else:
                    wanted.append(name)
        return wanted

    def learn_listing(self, names: list[str]) -> dict[str, str]:
        """The server's whole listing, as toolnames' own tools/list got it: the aliases fix
        mode lists for it (alias -> name), as the listing would have given them, learned for
        this server, and the names for this session's calls."""
        valid = valid_name_pattern(RULES[self.rule]).fullmatch
        taken = {n for n in names if valid(n)}
        aliases: dict[str, str] = {}
        for name in dict.fromkeys(names):
            if not valid(name):
                alias = self._alias_of(name, taken, aliases)
                if alias is not None:
                    aliases[alias] = name
        if aliases:
            self.state.learn(self.server, aliases)
        session = self.state.session(self.key)
        session.new_listing()
        session.add([*names, *aliases])
        return aliases

    def not_restored(self, name: str, why: str) -> None:
        """The server was asked and ``name`` still has no server name: its calls go on as
        they came, and say why (remembered for the session, so it is asked once)."""
        self.state.remember_unrestorable(self.key, name, why)
        self.unrestored[name] = why


class McpStream:
    """An SSE answer read as it goes by, split anywhere: each event's JSON-RPC message is
    judged as it completes. Observing, every chunk goes on at once; fixing, an event goes on
    once complete (a tools/list answer with aliases in place), only an unfinished event is
    held back, and one over MAX_EVENT_BYTES goes on as it came, unread."""

    def __init__(
        self, exchange: McpExchange, fix: bool, sniff: bool = False, coding: str | None = None
    ) -> None:
        self.exchange = exchange
        # Whether listings are judged for fix mode's aliases, and whether the stream goes on
        # changed (``fix``): not so a compressed stream that may be no MCP.
        self.judge_fix = fix
        self.fix = fix
        # Why fix mode's aliases go unlisted in this stream, if they do.
        self.kept: str | None = None
        # A content-encoded stream is read through a decoder, as LLM streams are. Fixing,
        # the client gets it decoded, its Content-Encoding dropped (``decodes``: names are
        # spliced in the decoded events); a GET stream not yet known to be MCP is never
        # decoded for the client (nothing not understood is changed): it goes on as it
        # came, and a listing on it keeps its names, saying so.
        if coding is not None and coding not in READABLE:
            raise ValueError(f"no incremental decoder for {coding!r}")
        self.content = StreamDecoder(coding) if coding is not None else None
        self.told_failure = False
        # Called with an event's number, and the findings and fixes it brought, when it
        # brought some: a GET stream lasts as long as its session, so what it carries is
        # said as it passes (the glue logs and marks it), not when it ends.
        self.on_event: Callable[[int, list[Finding], list[Fix]], None] | None = None
        # Something was said as it passed: the stream's end need not say it again.
        self.said = False
        if self.content is not None and fix and sniff:
            self.fix = False
            self.kept = (
                f"the stream came compressed with {coding}, and toolnames decompresses no "
                "stream for the client before it knows the stream is MCP"
            )
        # A GET stream not yet known to be MCP: its first event tells (an HTTP+SSE endpoint
        # or a JSON-RPC message); any other stream goes on untouched and unread.
        self.sniff = sniff
        self.buffer = b""
        self.events = 0
        self.broken = False
        self.ended = False

    @property
    def decodes(self) -> bool:
        """Whether the client gets the stream decoded (the glue drops Content-Encoding)."""
        return self.content is not None and self.fix

    def pieces(self, chunk: bytes) -> list[bytes]:
        """The tap as mitmproxy's ``response.stream``: what goes on for ``chunk``, as a list.
        An event not yet whole is held back in fix mode, and an empty piece sent on would
        end an HTTP/1.1 chunked body (its last chunk is the empty one): none is sent."""
        out = self(chunk)
        return [out] if out else []

    def __call__(self, chunk: bytes) -> bytes:
        if self.content is None:
            return self._plain(chunk)
        if self.content.failure is not None:
            return b"" if self.decodes else chunk  # nothing more can be decoded
        out = [self._plain(piece) for piece in self.content.feed(chunk) if piece]
        if self.content.failure is not None and not self.told_failure:
            self.told_failure = True
            self.broken = True
            self.exchange.unreadable(
                f"toolnames stopped reading the stream: {self.content.failure}"
            )
        elif not chunk:
            out.append(self._plain(b""))
        return b"".join(out) if self.decodes else chunk

    def _plain(self, chunk: bytes) -> bytes:
        """``chunk`` of the stream as events (decoded, if it came encoded)."""
        if self.broken or self.ended:
            return chunk
        final = not chunk
        # find, not in: docs/performance.md
        if not final and chunk.find(b"\n") == -1 and chunk.find(b"\r") == -1:
            self.buffer += chunk  # no line ends: no event completes
            if len(self.buffer) > MAX_EVENT_BYTES:
                return self._give_up(b"" if self.fix else chunk)
            return b"" if self.fix else chunk
        data = self.buffer + chunk
        events, used = sse_events(data, final)
        self.buffer = data[used:]
        out = [self._event(raw, spans) for raw, spans in events]
        if self.broken:
            # Read no further (no MCP stream): what is held goes on with the rest as it came.
            out.append(self.buffer)
            self.buffer = b""
            return b"".join(out) if self.fix else chunk
        if final:
            self.ended = True
        if len(self.buffer) > MAX_EVENT_BYTES:
            return self._give_up(b"".join(out) if self.fix else chunk)
        return b"".join(out) if self.fix else chunk

    def _give_up(self, done: bytes) -> bytes:
        """An event too large to hold: the stream goes on as it came from here."""
        self.broken = True
        held, self.buffer = self.buffer, b""
        self.exchange.unreadable(f"an SSE event is over {MAX_EVENT_BYTES} bytes")
        return done + held if self.fix else done

    def _event(self, raw: bytes, spans: tuple) -> bytes:
        index = self.events
        self.events += 1
        if not spans:
            return raw
        data = b"\n".join(raw[s:e] for s, e in spans)
        # The literal first (memchr): the expression looks at every byte of a long event.
        if raw.find(b"endpoint") != -1 and _ENDPOINT_EVENT.search(raw):
            # HTTP+SSE: the URL the client is to POST to names the session.
            self.sniff = False
            server = endpoint_server(self.exchange.server, data)
            self.exchange.server = server
            self.exchange.key = (server, endpoint_session(data))
            return raw
        messages = read_messages(data)
        if self.sniff:
            self.sniff = False
            if messages is None:
                self.broken = True  # no MCP stream: it goes on as it comes, unread
                return raw
        if messages is None:
            return raw
        exchange = self.exchange
        before = (len(exchange.response_findings), len(exchange.fixes), len(exchange.fix_skipped))
        try:
            return self._judged(raw, spans, data, index, messages)
        finally:
            if self.on_event is not None:
                findings, fixes, skipped = before
                new_findings = exchange.response_findings[findings:]
                new_fixes = exchange.fixes[fixes:]
                if new_findings or new_fixes or len(exchange.fix_skipped) > skipped:
                    self.said = True
                    self.on_event(index, new_findings, new_fixes)

    def _judged(
        self, raw: bytes, spans: tuple, data: bytes, index: int, messages: list[Message]
    ) -> bytes:
        replacements = self.exchange.judge_answers(messages, ("event", index), self.judge_fix)
        if not replacements:
            return raw
        why = self.kept
        if why is None:
            try:
                pieces = replace_strings(data, replacements).split(b"\n")
                if len(pieces) != len(spans):
                    raise ValueError("the event's data lines changed in number")
            except (UnicodeDecodeError, ValueError, KeyError, IndexError) as e:
                why = str(e)
            else:
                out = []
                done = 0
                for (start, end), piece in zip(spans, pieces, strict=True):
                    out += [raw[done:start], piece]
                    done = end
                out.append(raw[done:])
                return b"".join(out)
        # The event goes on as it came; its places, by the path from the stream's start.
        self.exchange.keep_as_sent(
            {("event", index, *where): pair for where, pair in replacements.items()}, why
        )
        return raw


def inspect_mcp(
    state: McpState,
    server: str,
    request_content: bytes | None,
    response_status: int | None = None,
    response_content_type: str = "",
    response_content: bytes | None = None,
    *,
    rule: str = "openai",
    session_id: str = "",
    method_header: str = "",
    name_header: str = "",
) -> McpExchange | None:
    """Everything the live addon checks, for one recorded MCP request and its answer, in
    observe mode; None when the request is no MCP. ``state`` carries the sessions' listings
    from one recorded exchange to the next, in the order they happened (the scanner's)."""
    if not request_content:
        return None
    messages = is_mcp_request(request_content)
    if messages is None:
        return None
    exchange = McpExchange(
        state,
        server,
        session_id,
        rule,
        method_header=method_header,
        name_header=name_header,
    )
    exchange.check_request(messages, request_content)
    if response_content is not None:
        exchange.check_answer(response_status, response_content_type, response_content)
    else:
        exchange.check_status(response_status)
    return exchange
