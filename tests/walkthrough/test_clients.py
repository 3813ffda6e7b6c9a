"""The demo's clients (walkthrough.clients)."""

import json

import pytest

from standin import StandinProvider
from walkthrough import clients


def test_clip_keeps_one_line_and_marks_what_it_cut():
    assert clients.clip("a\n  b\tc") == "a b c"
    assert clients.clip("x" * 20, width=10) == "x" * 9 + "…"


def test_an_sdk_error_is_told_by_the_providers_message():
    class BadRequest(Exception):
        body = {"message": "Tool choice 'search.web' not found in 'tools' parameter."}

    assert clients.sdk_error_text(BadRequest("Error code: 400")) == BadRequest.body["message"]
    assert clients.sdk_error_text(ValueError("plain")) == "plain"


def test_mastra_is_left_out_with_a_reason_when_its_modules_are_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(clients, "MASTRA_DIR", tmp_path)

    assert "node_modules is not set up" in clients.mastra_available()


def test_the_request_is_the_one_mastra_builds():
    offered = [t["function"]["name"] for t in clients.SDK_REQUEST["tools"]]

    assert offered == [clients.WIRE_NAME]
    assert clients.SDK_REQUEST["tool_choice"]["function"]["name"] == clients.KEY


@pytest.mark.needs_sdk
def test_the_sdk_client_sends_the_request_and_hears_the_providers_rejection():
    with StandinProvider() as provider:
        outcome = clients.run_sdk(provider.url)
        received = [r["body"] for r in provider.requests]

    assert outcome.completion is None
    assert "not found in 'tools' parameter" in clients.sdk_error_text(outcome.error)
    assert received == outcome.sent
    assert json.loads(outcome.sent[0])["tool_choice"]["function"]["name"] == clients.KEY
