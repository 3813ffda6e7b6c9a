"""Anthropic's Message Batches (formats/anthropic_batches.py): each request's params read as a
Messages body and checked alone, findings and fixes pathed inside it, the 200 of the create
call no verdict on the names."""

import json

from tests.testkit import sdk_fixture
from toolnames_core import Exchange
from toolnames_core.formats.anthropic_batches import read_request

TOOL = {"name": "github.create_issue", "input_schema": {"type": "object"}}


def params(*tools, **extra) -> dict:
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": list(tools),
        **extra,
    }


def batch(*bodies) -> bytes:
    requests = [{"custom_id": f"r{i}", "params": p} for i, p in enumerate(bodies)]
    return json.dumps({"requests": requests}).encode()


def checked(content: bytes, fix: bool = False) -> Exchange:
    exchange = Exchange.for_request("POST", "/v1/messages/batches", "api.anthropic.com")
    exchange.check_request(content, fix=fix)
    return exchange


def test_the_sdks_batch_is_read_whole_and_clean():
    body = sdk_fixture("anthropic-batches-two-requests")["body"]
    view = read_request(body)
    assert [t.path for t in view.tools] == [
        "requests[0].params.tools[0].name",
        "requests[0].params.tools[1].name",
        "requests[1].params.tools[0].name",
        "requests[1].params.tools[1].name",
    ]
    assert view.choices[0].names[0].path == "requests[1].params.tool_choice.name"
    assert checked(json.dumps(body).encode()).request_findings == []


def test_findings_are_pathed_inside_the_request_that_holds_them():
    exchange = checked(batch(params({**TOOL, "name": "ok"}), params(TOOL)))
    (finding,) = exchange.request_findings
    assert finding.code == "name-invalid-chars"
    assert finding.path == "requests[1].params.tools[0].name"
    assert finding.message.startswith("requests[1].params.tools[0].name 'github.create_issue'")


def test_each_request_is_checked_alone():
    ok = {**TOOL, "name": "lookup"}
    # One tool in two requests is no duplicate; a choice may name only its own request's tools.
    exchange = checked(
        batch(params(ok), params(ok, tool_choice={"type": "tool", "name": "lookup"}))
    )
    assert exchange.request_findings == []
    exchange = checked(
        batch(
            params(ok),
            params({**ok, "name": "other"}, tool_choice={"type": "tool", "name": "lookup"}),
        )
    )
    assert [(f.code, f.path) for f in exchange.request_findings] == [
        ("choice-not-in-tools", "requests[1].params.tool_choice.name")
    ]
    exchange = checked(batch(params(ok, ok)))
    assert [(f.code, f.path) for f in exchange.request_findings] == [
        ("name-duplicate", "requests[0].params.tools[1].name")
    ]


def test_fix_mode_renames_inside_every_params():
    choice = {"type": "tool", "name": TOOL["name"]}
    exchange = checked(batch(params(TOOL, tool_choice=choice), params(TOOL)), fix=True)
    sent = json.loads(exchange.new_body)
    names = [r["params"]["tools"][0]["name"] for r in sent["requests"]]
    assert names[0] == names[1] != TOOL["name"]
    assert sent["requests"][0]["params"]["tool_choice"]["name"] == names[0]
    assert sorted(f.path for f in exchange.fixes) == [
        "requests[0].params.tool_choice.name",
        "requests[0].params.tools[0].name",
        "requests[1].params.tools[0].name",
    ]


def test_shapes_it_cannot_read_are_reported_at_their_path():
    # (a batch none of whose requests holds a tools key is not read at all)
    content = json.dumps({"requests": [5, {"custom_id": "x"}, {"params": {"tools": []}}]}).encode()
    assert [f.path for f in checked(content).request_findings] == [
        "requests[0]",
        "requests[1].params",
    ]
    content = b'{"requests": {"tools": []}}'
    assert [f.path for f in checked(content).request_findings] == ["requests"]


def test_the_created_batch_is_no_verdict_on_the_names():
    # Anthropic validates the params when the batch is processed: a 200 is not acceptance.
    exchange = checked(batch(params(TOOL)))
    answer = {"id": "msgbatch_1", "type": "message_batch", "processing_status": "in_progress"}
    findings = exchange.check_response(200, "application/json", json.dumps(answer).encode())
    assert [f.code for f in findings] == []
