"""Claude on Vertex AI (formats/anthropic_vertex.py, docs/providers.md §5.1): which paths are
its own, the rule its names get on Google's hosts, the Messages reading of its body, the
block answer and the restoring of names in its answers."""

import json

import pytest

from toolnames_core import Exchange
from toolnames_core.formats import FORMATS
from toolnames_core.formats import format_for
from toolnames_core.formats.anthropic_vertex import FORMAT
from toolnames_core.formats.anthropic_vertex import read_request

BASE = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
BODY = {
    "anthropic_version": "vertex-2023-10-16",
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"name": "github.create_issue", "input_schema": {"type": "object"}}],
    "tool_choice": {"type": "tool", "name": "github.create_issue"},
}


@pytest.mark.parametrize(
    "path",
    [
        BASE + "claude-sonnet-4-5@20250929:rawPredict",
        BASE + "claude-opus-4-6:streamRawPredict",
        BASE + "count-tokens:rawPredict",
        BASE + "claude-sonnet-4-5%4020250929:rawPredict",
        "/vertex_ai/v1/projects/p/locations/global/publishers/anthropic/models/claude:rawPredict",
    ],
)
def test_anthropic_publisher_paths_are_its_own(path):
    assert format_for("POST", path) is FORMAT


def test_googles_own_models_stay_gemini():
    path = (
        "/v1/projects/p/locations/us-east5/publishers/google/models/gemini-2.5-pro:generateContent"
    )
    assert format_for("POST", path) is FORMATS["gemini"]


@pytest.mark.parametrize(
    "host",
    [
        "us-east5-aiplatform.googleapis.com",
        "aiplatform.googleapis.com",
        "aiplatform.eu.rep.googleapis.com",
    ],
)
def test_on_googles_hosts_the_names_get_anthropics_rule_not_geminis(host):
    exchange = Exchange.for_request("POST", BASE + "claude-x:rawPredict", host)
    assert exchange.format is FORMAT and exchange.rule.id == "anthropic"
    gemini = Exchange.for_request(
        "POST", BASE.replace("anthropic", "google") + "g:generateContent", host
    )
    assert gemini.rule.id == "gemini"


def test_the_body_is_read_as_a_messages_body_under_this_format():
    view = read_request(BODY)
    assert view.api == FORMAT.api
    assert [t.path for t in view.tools] == ["tools[0].name"]
    assert view.choices[0].names[0].path == "tool_choice.name"


def test_a_name_anthropic_rejects_is_found_fixed_and_given_back():
    exchange = Exchange.for_request(
        "POST", BASE + "claude-x:rawPredict", "aiplatform.googleapis.com"
    )
    exchange.check_request(json.dumps(BODY).encode(), fix=True)
    assert [f.code for f in exchange.request_findings] == ["name-invalid-chars"]
    sent = json.loads(exchange.new_body)
    alias = sent["tools"][0]["name"]
    assert alias != "github.create_issue" and sent["tool_choice"]["name"] == alias
    answer = {"content": [{"type": "tool_use", "id": "toolu_1", "name": alias, "input": {}}]}
    restored = json.loads(exchange.restore(json.dumps(answer).encode()))
    assert restored["content"][0]["name"] == "github.create_issue"


def test_block_answers_in_anthropics_error_shape():
    exchange = Exchange.for_request(
        "POST", BASE + "claude-x:rawPredict", "aiplatform.googleapis.com"
    )
    exchange.check_request(json.dumps(BODY).encode())
    answer = exchange.block_response()
    body = json.loads(answer.body)
    assert answer.status == 400
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"].startswith("toolnames: tools[0].name 'github.create_issue'")
