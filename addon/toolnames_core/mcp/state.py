"""What toolnames remembers of MCP traffic between one request and the next: for each MCP
session, the tool names it listed; for each server, the aliases fix mode gave its names.

Both are names only, and bounded: sessions and servers are kept least recently used first
out, and a session that lists more names than a session may hold stops being judged on
its calls (said once, never guessed). A session ends with its DELETE (Streamable HTTP) or
when the server answers its id with 404, and its names go with it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from dataclasses import field

__all__ = [
    "MAX_NAMES",
    "MAX_PENDING",
    "MAX_SERVERS",
    "MAX_SESSIONS",
    "McpSession",
    "McpState",
    "SessionKey",
]

MAX_SESSIONS = 1024
MAX_SERVERS = 256
# More names than any server lists: past this a session's calls are not judged.
MAX_NAMES = 10_000
# tools/list requests whose answer is still to come on the session's stream (HTTP+SSE).
MAX_PENDING = 256

# (the server, as host:port and path, the Mcp-Session-Id or "" for a server without sessions)
SessionKey = tuple[str, str]


@dataclass(slots=True)
class McpSession:
    """One MCP session's tool names: the listing under way (``tools/list`` pages from the
    first, without a cursor) and the one complete before it."""

    listing: set[str] = field(default_factory=set)
    previous: set[str] = field(default_factory=set)
    # Some tools/list answer of this session was seen: its calls can be judged.
    listed: bool = False
    # The session listed more than MAX_NAMES names: its calls are no longer judged.
    overflow: bool = False
    # Said once per session: a call went unjudged because no listing was seen.
    told_unjudged: bool = False
    # The tools/list requests of this session not answered yet, by JSON-RPC id: the older
    # HTTP+SSE transport answers them on the session's GET stream, not in the POST's answer.
    pending: dict[str, bool] = field(default_factory=dict)
    # Names in the form of an alias that toolnames, having asked the server, could not send
    # back under a name of the server's, and why: asked once per session (lookup.py).
    unrestored: dict[str, str] = field(default_factory=dict)

    def expect(self, key: str, continued: bool) -> None:
        """A tools/list request went out (``continued``: with a cursor)."""
        if len(self.pending) >= MAX_PENDING:
            self.pending.pop(next(iter(self.pending)))  # the oldest, never answered
        self.pending[key] = continued

    def new_listing(self) -> None:
        """A tools/list without a cursor starts the listing again (after list_changed)."""
        if self.listing:
            self.previous = self.listing
        self.listing = set()

    def add(self, names: list[str]) -> None:
        self.listed = True
        if len(self.listing) + len(self.previous) + len(names) > MAX_NAMES:
            self.overflow = True
            self.listing, self.previous = set(), set()
            return
        self.listing.update(names)

    def knows(self, name: str) -> bool:
        return name in self.listing or name in self.previous


class McpState:
    """Every MCP session and server toolnames has seen, bounded."""

    def __init__(self) -> None:
        self.sessions: OrderedDict[SessionKey, McpSession] = OrderedDict()
        # server -> alias -> the server's own name, as fix mode listed it.
        self.aliases: OrderedDict[str, dict[str, str]] = OrderedDict()

    def session(self, key: SessionKey) -> McpSession:
        found = self.sessions.get(key)
        if found is None:
            found = self.sessions[key] = McpSession()
            if len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        else:
            self.sessions.move_to_end(key)
        return found

    def end(self, key: SessionKey) -> None:
        """The session ended: its names go."""
        self.sessions.pop(key, None)

    def learn(self, server: str, aliases: dict[str, str]) -> None:
        """Fix mode listed these aliases (alias -> name) for ``server``'s tools."""
        table = self.aliases.get(server)
        if table is None:
            table = self.aliases[server] = {}
            if len(self.aliases) > MAX_SERVERS:
                self.aliases.popitem(last=False)
        else:
            self.aliases.move_to_end(server)
        if len(table) + len(aliases) > MAX_NAMES:
            table.clear()  # a server renaming without end: start over
        table.update(aliases)

    def remember_unrestorable(self, key: SessionKey, name: str, why: str) -> None:
        """Kept with the session (and gone with it), at most MAX_PENDING names."""
        unrestored = self.session(key).unrestored
        if len(unrestored) >= MAX_PENDING:
            unrestored.pop(next(iter(unrestored)))
        unrestored[name] = why

    def unrestorable(self, key: SessionKey, name: str) -> str | None:
        """Why ``name`` was not restored in this session when the server was asked, if it was."""
        session = self.sessions.get(key)
        return session.unrestored.get(name) if session is not None else None

    def original(self, server: str, alias: str) -> str | None:
        """The server's own name for an alias fix mode listed, if it did."""
        table = self.aliases.get(server)
        return table.get(alias) if table else None
