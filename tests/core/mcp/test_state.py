"""What toolnames remembers of MCP traffic (mcp/state.py): names only, bounded, dropped
with the session."""

from toolnames_core.mcp import McpState
from toolnames_core.mcp import state as state_module


def test_a_session_knows_the_names_of_its_listing_and_the_one_before():
    session = McpState().session(("h:1", "s"))
    session.add(["a", "b"])
    session.new_listing()
    session.add(["c"])
    assert session.knows("a") and session.knows("c") and not session.knows("d")
    session.new_listing()
    session.add(["d"])
    assert not session.knows("a")  # two listings ago


def test_sessions_are_kept_least_recently_used_first_out(monkeypatch):
    monkeypatch.setattr(state_module, "MAX_SESSIONS", 2)
    state = McpState()
    state.session(("h", "1")).add(["a"])
    state.session(("h", "2"))
    state.session(("h", "1"))  # used again
    state.session(("h", "3"))
    assert set(state.sessions) == {("h", "1"), ("h", "3")}


def test_a_session_that_ends_is_forgotten():
    state = McpState()
    state.session(("h", "1")).add(["a"])
    state.end(("h", "1"))
    state.end(("h", "never"))
    assert not state.session(("h", "1")).listed


def test_a_session_listing_more_names_than_it_may_hold_stops_being_judged(monkeypatch):
    monkeypatch.setattr(state_module, "MAX_NAMES", 3)
    session = McpState().session(("h", ""))
    session.add(["a", "b"])
    session.add(["c", "d"])
    assert session.overflow and not session.listing


def test_aliases_are_per_server_and_bounded(monkeypatch):
    monkeypatch.setattr(state_module, "MAX_SERVERS", 1)
    state = McpState()
    state.learn("one", {"a_1": "a.1"})
    assert state.original("one", "a_1") == "a.1"
    assert state.original("two", "a_1") is None
    state.learn("two", {"b_1": "b.1"})
    assert state.original("one", "a_1") is None
