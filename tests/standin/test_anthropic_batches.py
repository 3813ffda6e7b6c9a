"""Anthropic's Message Batches in the stand-in (standin.anthropic_batches): the envelope is
checked at once, each params only later (as Anthropic does), and the SDK's batches client."""

from __future__ import annotations

import json

import pytest

from tests.standin.wire import EMPTY
from tests.standin.wire import anthropic_error
from tests.standin.wire import anthropic_request
from tests.standin.wire import assert_rejected_like_the_provider
from tests.standin.wire import post

BATCHES = "/v1/messages/batches"


def test_a_bad_tool_name_is_not_refused_when_the_batch_is_created(provider):
    params = anthropic_request(tools={"mcp:search": EMPTY})
    status, _, content = post(
        provider, BATCHES, {"requests": [{"custom_id": "a", "params": params}]}
    )
    batch = json.loads(content)
    assert status == 200
    assert batch["type"] == "message_batch" and batch["processing_status"] == "in_progress"
    assert batch["request_counts"]["processing"] == 1


@pytest.mark.parametrize(
    "body, message",
    [
        ({}, "requests: Field required"),
        ({"requests": [{"params": {}}]}, "requests.0.custom_id: Field required"),
        ({"requests": [{"custom_id": "a"}]}, "requests.0.params: Field required"),
        (
            {"requests": [{"custom_id": "a", "params": {}}, {"custom_id": "a", "params": {}}]},
            "requests.1.custom_id: custom_id must be unique",
        ),
    ],
)
def test_the_envelope_is_checked_at_once(provider, body, message):
    assert_rejected_like_the_provider(provider, BATCHES, body, anthropic_error(message))


@pytest.mark.needs_sdk
def test_the_sdks_batches_client_runs_against_it(anthropic_client):
    batch = anthropic_client.messages.batches.create(
        requests=[{"custom_id": "a", "params": anthropic_request()}]
    )
    assert batch.id.startswith("msgbatch_") and batch.processing_status == "in_progress"
