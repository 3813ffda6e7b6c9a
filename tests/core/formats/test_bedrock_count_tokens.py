"""Token counting for Claude on Bedrock (formats/bedrock_count_tokens.py): the InvokeModel
body travels in base64 at input.invokeModel.body; it is read as InvokeModel's, pathed from
the top of the body sent, renamed inside the base64 in fix mode, and a string that is not
base64 is said, not raised."""

from __future__ import annotations

import base64
import json

import pytest

from tests.testkit import exchange_for
from toolnames_core import codes
from toolnames_core import rejections
from toolnames_core.endpoints import choose_rule
from toolnames_core.exchange import Exchange
from toolnames_core.formats import FORMATS
from toolnames_core.formats import bedrock_converse
from toolnames_core.formats import bedrock_count_tokens
from toolnames_core.formats import bedrock_invoke
from toolnames_core.formats import format_for
from toolnames_core.rules import RULES
from toolnames_core.sigv4 import read_signature

API = bedrock_count_tokens.API
CULPRIT = "mcp__github__create.issue"
PATH = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens"


def invoke_body(*names: str, **extra) -> dict:
    return {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": n, "input_schema": {"type": "object"}} for n in names],
        **extra,
    }


def sent(inner: dict | bytes, **outer) -> bytes:
    raw = inner if isinstance(inner, bytes) else json.dumps(inner).encode()
    body = {"input": {"invokeModel": {"body": base64.b64encode(raw).decode()}}, **outer}
    return json.dumps(body).encode()


def carried(content: bytes) -> dict:
    return json.loads(base64.b64decode(json.loads(content)["input"]["invokeModel"]["body"]))


def analyse(content: bytes, fix: bool = False) -> Exchange:
    return exchange_for(content, API, "anthropic", fix=fix)


def test_registered_after_invoke_with_its_reading_and_bedrocks_errors():
    fmt = FORMATS[API]
    assert fmt is bedrock_count_tokens.FORMAT
    assert fmt.shapes is bedrock_invoke.FORMAT.shapes
    assert fmt.block_response is bedrock_converse.block_response
    assert fmt.framing is None and fmt.carried is bedrock_count_tokens.CARRIED


@pytest.mark.parametrize(
    "path",
    [
        PATH,  # boto3 escapes ':'
        "/model/anthropic.claude-haiku-4-5-20251001-v1:0/count-tokens",
        "/gateway/model/us.anthropic.claude-v1%3a0/count-tokens/",
    ],
)
def test_every_spelling_of_a_claude_model_id_reaches_count_tokens(path):
    assert format_for("POST", path) is bedrock_count_tokens.FORMAT


def test_another_models_count_tokens_and_invoke_are_not_this_format():
    assert format_for("POST", "/model/amazon.nova-pro-v1:0/count-tokens") is None
    assert format_for("POST", PATH.replace("count-tokens", "invoke")) is bedrock_invoke.FORMAT


def test_the_rule_is_anthropics_on_bedrocks_host():
    host = "bedrock-runtime.us-east-1.amazonaws.com"
    assert choose_rule(bedrock_count_tokens.FORMAT, host).id == "anthropic"


def test_a_bad_name_inside_the_base64_is_named_at_its_path_from_the_top():
    found = analyse(sent(invoke_body("ok", CULPRIT))).request_findings
    assert [(f.code, f.path) for f in found] == [
        (codes.NAME_INVALID_CHARS, "input.invokeModel.body.tools[1].name")
    ]
    assert found[0].message.startswith("input.invokeModel.body.tools[1].name ")


def test_a_body_without_tools_inside_is_quiet():
    exchange = analyse(sent({"anthropic_version": "x", "messages": []}))
    assert exchange.request_findings == [] and exchange.readable


def test_fix_mode_renames_inside_the_base64_and_records_each_change():
    inner = invoke_body("ok", CULPRIT, tool_choice={"type": "tool", "name": CULPRIT})
    inner["messages"].append(
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": CULPRIT}]}
    )
    content = sent(inner, extra={"kept": "as sent"})
    exchange = analyse(content, fix=True)
    alias = exchange.fixes[0].new
    assert [f.path for f in exchange.fixes] == [
        "input.invokeModel.body.tools[1].name",
        "input.invokeModel.body.tool_choice.name",
        "input.invokeModel.body.messages[1].content[0].name",
    ]
    assert {f.old for f in exchange.fixes} == {CULPRIT}
    renamed = carried(exchange.new_body)
    assert renamed["tools"][1]["name"] == renamed["tool_choice"]["name"] == alias
    assert renamed["messages"][1]["content"][0]["name"] == alias
    # Only the names changed inside the base64, and nothing outside it.
    assert json.dumps(renamed) == json.dumps(inner).replace(CULPRIT, alias)
    assert json.loads(exchange.new_body)["extra"] == {"kept": "as sent"}
    assert analyse(exchange.new_body).request_findings == []


def test_fix_mode_leaves_a_signed_request_as_sent_when_it_may_not_sign_again():
    exchange = Exchange(FORMATS[API], RULES["anthropic"])
    exchange.signed = read_signature(
        [
            "AWS4-HMAC-SHA256 Credential=AKIDTESTNOTAKEY/20261202/us-east-1/bedrock/aws4_request, "
            "SignedHeaders=content-type;host;x-amz-date, Signature=00"
        ],
        "",
    )
    exchange.check_request(sent(invoke_body(CULPRIT)), fix=True)
    assert exchange.new_body is None and exchange.fixes == []
    (finding,) = exchange.request_findings
    assert "not fixed: the request is signed with AWS SigV4" in finding.message


@pytest.mark.parametrize(
    "content, said",
    [
        (b'{"input": {"invokeModel": {"body": "not base64!"}}}', "is not base64"),
        (b'{"input": {"invokeModel": {"body": 12}}}', "is a number, not a base64 string"),
        (sent(b"not json"), "decoded from base64, is not JSON"),
        (sent(b"[1]"), "decoded from base64, is an array, not a JSON object"),
        (sent(b"\xff\xfe{"), "decoded from base64, is not JSON"),
    ],
    ids=["not-base64", "not-a-string", "not-json", "not-an-object", "not-utf8"],
)
def test_a_carried_body_that_cannot_be_read_is_a_clear_finding(content, said):
    exchange = analyse(content, fix=True)
    (finding,) = exchange.request_findings
    assert finding.code == codes.REQUEST_UNREADABLE and said in finding.message
    assert "input.invokeModel.body" in finding.message
    assert not exchange.readable and exchange.new_body is None


def test_the_converse_form_with_tools_is_said_to_be_unread_and_without_them_is_quiet():
    converse = {"messages": [], "toolConfig": {"tools": [{"toolSpec": {"name": "a.b"}}]}}
    (finding,) = analyse(json.dumps({"input": {"converse": converse}}).encode()).request_findings
    assert finding.code == codes.REQUEST_UNREADABLE
    assert "input.converse.toolConfig" in finding.message and "not checked" in finding.message
    quiet = analyse(json.dumps({"input": {"converse": {"messages": []}}}).encode())
    assert quiet.request_findings == []


def test_the_anthropic_validators_text_is_tied_to_the_name_inside_the_base64():
    exchange = analyse(sent(invoke_body("ok", CULPRIT)))
    text = "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
    found = rejections.read_rejections(
        bedrock_count_tokens.FORMAT, 400, json.dumps({"message": text}).encode(), exchange.view
    )
    assert [(r.path, r.name, r.tied) for r in found] == [
        ("input.invokeModel.body.tools[1].name", CULPRIT, True)
    ]


def test_the_block_answer_is_bedrocks_validation_error():
    answer = analyse(sent(invoke_body(CULPRIT))).block_response()
    assert answer.status == 400
    assert answer.headers["x-amzn-ErrorType"].split(":")[0] == "ValidationException"
    assert "input.invokeModel.body.tools[0].name" in json.loads(answer.body)["message"]


def test_the_answer_names_no_tool():
    exchange = analyse(sent(invoke_body("ok")))
    assert exchange.check_response(200, "application/json", b'{"inputTokens": 12}') == []
