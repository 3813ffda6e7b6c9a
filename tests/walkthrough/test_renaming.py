"""The demo's renaming part (walkthrough.renaming)."""

import json

import pytest

from standin import StandinProvider
from walkthrough import renaming


def test_the_ai_sdk_app_is_left_out_with_a_reason_when_its_modules_are_missing(
    monkeypatch, tmp_path
):
    monkeypatch.setattr(renaming, "MASTRA_DIR", tmp_path)

    assert renaming.ai_sdk_available() == "tests/e2e/mastra/node_modules/ai is not set up"


def test_offered_names_are_read_from_a_chat_request_and_nothing_else():
    body = {"tools": [{"type": "function", "function": {"name": "a_b"}}]}

    assert renaming.offered_names(json.dumps(body).encode()) == ["a_b"]
    assert renaming.offered_names(b"not json") == []
    assert renaming.offered_names(b'{"messages": []}') == []


def test_without_toolnames_the_provider_rejects_the_apps_name():
    missing = renaming.ai_sdk_available()
    if missing:
        pytest.skip(missing)  # scripts/test installs node_modules, so CI runs it
    with StandinProvider() as provider:
        out = renaming.run_ai_sdk(provider.url)

    assert out["ok"] is False
    assert renaming.REJECTED in out["error"]
