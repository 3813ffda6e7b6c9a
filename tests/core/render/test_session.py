"""The content view's text for one WebSocket message."""

from tests.core.sessions import shapes
from toolnames_core import codes
from toolnames_core import render_message
from toolnames_core.model import Finding
from toolnames_core.sessions import Session


def read(session: Session, index: int, from_client: bool, event: dict) -> None:
    session.receive(index, from_client, shapes.dumps(event))


def test_a_declaration_with_verdicts_and_its_findings():
    session = Session("openai-realtime", "openai")
    read(
        session,
        0,
        True,
        shapes.session_update([shapes.function_tool("ok"), shapes.function_tool("a.b")]),
    )
    text = render_message(session, 0, True)
    assert text.startswith("toolnames: OpenAI Realtime message 0 (client → provider) · rule openai")
    assert "Tools declared (session): 2" in text
    assert "✗ bad chars '.'" in text and "session.tools[1].name" in text
    assert "Tools in force: 2: a.b, ok" in text
    assert "error: name-invalid-chars at session.tools[1].name" in text


def test_calls_and_results_against_what_was_declared():
    session = Session("gemini-live", "gemini")
    read(session, 0, True, shapes.setup(["get_weather"]))
    read(session, 1, False, shapes.tool_call([("c1", "get_weather"), ("c2", "ghost")]))
    text = render_message(session, 1, False)
    assert "provider → client" in text and "Calls: 2" in text
    assert "declared" in text and "✗ never declared" in text
    read(session, 2, True, shapes.tool_response([("c2", "ghost")]))
    assert "Tool results: 1" in render_message(session, 2, True)


def test_a_message_naming_nothing_and_recorded_findings():
    session = Session("openai-realtime", "openai")
    read(session, 0, True, shapes.audio_append())
    text = render_message(session, 0, True)
    assert "declares, forces and calls no tools" in text and "Findings: none" in text
    recorded = [
        Finding(codes.NAME_EMPTY, "error", "session.tools[0].name", "as recorded", message_index=0)
    ]
    assert "as recorded" in render_message(session, 0, True, recorded)
    assert "Outcome:" not in render_message(session, 0, True, recorded)
    fixed = render_message(session, 0, True, recorded, "renamed 'a.b' → 'a_b_12345678'")
    assert "Outcome: fixed in fix mode: renamed 'a.b' → 'a_b_12345678'\n" in fixed
