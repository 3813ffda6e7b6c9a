"""Claude on Bedrock through InvokeModel end to end: the anthropic SDK's AnthropicBedrock
client (the door Claude Code uses with CLAUDE_CODE_USE_BEDROCK=1) through a real mitmdump
(12, and 11 under scripts/test) to the stand-in, which validates Anthropic's rule in
Bedrock's envelope and streams base64 chunks in an AWS event stream.

An MCP-style tool name with a dot (``mcp__github__create.issue``) breaks Anthropic's rule:
observe mode names it while the provider refuses it; fix mode sends an alias and gives the
app its own name back, in the answer and in the stream's base64, so a two-turn run (the
tool result goes back under the app's name) finishes; block mode answers with Bedrock's
ValidationException, which the SDK raises as BadRequestError. With a Bearer key (Bedrock API
keys) nothing is signed; with SigV4 credentials fix mode changes the request only with
toolnames_resign.
"""

from __future__ import annotations

import pytest

from tests.testkit import annotations
from tests.testkit.e2e import read_flows
from tests.testkit.sigv4 import SECRET
from tests.testkit.sigv4 import anthropic_bedrock
from tests.testkit.sigv4 import aws_env
from tests.testkit.sigv4 import boto3_bedrock
from tests.testkit.sigv4 import signing_mitmdump

pytestmark = pytest.mark.needs_sdk

CULPRIT = "mcp__github__create.issue"
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
SCHEMA = {"type": "object", "properties": {"title": {"type": "string"}}}
TOOLS = [
    {"name": "get_weather", "input_schema": SCHEMA},
    {"name": CULPRIT, "description": "Open an issue", "input_schema": SCHEMA},
]
ASK = [{"role": "user", "content": "Open an issue."}]
streams = pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])


def bedrock(url: str, signed: bool = False):
    import anthropic

    if signed:
        return anthropic_bedrock(url)
    return anthropic.AnthropicBedrock(
        api_key="test-bedrock-api-key", aws_region="us-east-1", base_url=url, max_retries=0
    )


def turn(client, messages: list, stream: bool):
    kwargs = {
        "model": MODEL,
        "max_tokens": 200,
        "messages": messages,
        "tools": TOOLS,
        "tool_choice": {"type": "tool", "name": CULPRIT},
    }
    if not stream:
        return client.messages.create(**kwargs)
    with client.messages.stream(**kwargs) as events:
        return events.get_final_message()


def two_turns(client, stream: bool) -> tuple[list[str], str]:
    """The tools the first answer calls, and the text of the second, once the tool result
    went back under the name the app knows."""
    first = turn(client, ASK, stream)
    uses = [b for b in first.content if b.type == "tool_use"]
    history = [
        *ASK,
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in uses]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": b.id, "content": "opened #1"} for b in uses
            ],
        },
    ]
    second = turn(client, history, stream)
    return [b.name for b in uses], "".join(b.text for b in second.content if b.type == "text")


def record_of(path) -> list[dict]:
    return [f.metadata["toolnames"] for f in read_flows(path)]


@streams
def test_observe_names_the_culprit_and_the_provider_refuses_it(
    mitmdump, mitmdump_binary, standin, stream, tmp_path
):
    import anthropic

    saved = tmp_path / "flagged.mitm"
    proxy = mitmdump("--set", f"toolnames_save={saved}", binary=mitmdump_binary)
    with pytest.raises(anthropic.BadRequestError, match="should match pattern"):
        turn(bedrock(proxy.url), ASK, stream)
    (received,) = standin.requests
    assert CULPRIT.encode() in received["body"]  # observe mode changed no byte
    proxy.wait_for_log("toolnames error")
    (line,) = annotations(proxy.log_text())
    assert "name-invalid-chars" in line and CULPRIT in line and "tools[1].name" in line
    (record,) = record_of(saved)
    assert record["api"] == "bedrock-invoke" and record["rule"] == "anthropic"
    # The provider's verdict, read from Bedrock's {"message"}, tied to the name toolnames named.
    assert record["rejected"]


@streams
def test_fix_mode_finishes_the_two_turn_run_under_the_apps_own_name(
    mitmdump, mitmdump_binary, standin, stream, tmp_path
):
    saved = tmp_path / "flagged.mitm"
    proxy = mitmdump(
        "--set", "toolnames_mode=fix", "--set", f"toolnames_save={saved}", binary=mitmdump_binary
    )
    called, text = two_turns(bedrock(proxy.url), stream)
    assert called == [CULPRIT]
    assert text == "done"
    first, second = standin.requests
    assert CULPRIT.encode() not in first["body"] and CULPRIT.encode() not in second["body"]
    proxy.wait_for_log("toolnames fixed", count=2)
    records = record_of(saved)
    assert [r["action"] for r in records] == ["fixed", "fixed"]
    assert records[0]["api"] == "bedrock-invoke"


@streams
def test_block_mode_answers_with_bedrocks_validation_error(
    mitmdump, mitmdump_binary, standin, stream
):
    import anthropic

    proxy = mitmdump("--set", "toolnames_mode=block", binary=mitmdump_binary)
    with pytest.raises(anthropic.BadRequestError) as raised:
        turn(bedrock(proxy.url), ASK, stream)
    assert CULPRIT in str(raised.value)
    assert raised.value.response.headers["x-amzn-errortype"].startswith("ValidationException")
    assert standin.requests == []


@streams
def test_a_sigv4_signed_client_is_renamed_only_with_resign(
    mitmdump, mitmdump_binary, standin, stream
):
    import anthropic

    proxy = signing_mitmdump(mitmdump, mitmdump_binary, mode="fix")
    with pytest.raises(anthropic.BadRequestError, match="should match pattern"):
        turn(bedrock(proxy.url, signed=True), ASK, stream)  # left as signed: no 403
    proxy.wait_for_log("toolnames error")
    assert "not fixed: the request is signed with AWS SigV4" in proxy.log_text()
    proxy.stop()
    standin.reset()
    resigning = signing_mitmdump(mitmdump, mitmdump_binary, mode="fix", resign=True, env=aws_env())
    called, text = two_turns(bedrock(resigning.url, signed=True), stream)
    assert (called, text) == ([CULPRIT], "done")
    assert SECRET not in resigning.log_text()


# -- token counting: boto3's count_tokens, its InvokeModel body in base64, SigV4-signed -------


def count_tokens(url: str, names: tuple[str, ...] = ("get_weather", CULPRIT)) -> int | str:
    """The input tokens boto3's count_tokens got, or the error code it raised. The body is
    InvokeModel's, which boto3 sends in base64 at input.invokeModel.body."""
    import json

    from botocore.exceptions import ClientError

    client = boto3_bedrock(url)
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 100,
        "messages": ASK,
        "tools": [{"name": n, "input_schema": SCHEMA} for n in names],
    }
    try:
        answer = client.count_tokens(
            modelId="anthropic.claude-sonnet-4-5-20250929-v1:0",
            input={"invokeModel": {"body": json.dumps(body)}},
        )
    except ClientError as e:
        return e.response["Error"]["Code"]
    return answer["inputTokens"]


def counted_body(received: dict) -> bytes:
    import base64
    import json

    return base64.b64decode(json.loads(received["body"])["input"]["invokeModel"]["body"])


def test_count_tokens_observe_names_the_culprit_inside_the_base64(
    mitmdump, mitmdump_binary, standin, tmp_path
):
    saved = tmp_path / "flagged.mitm"
    proxy = signing_mitmdump(mitmdump, mitmdump_binary, "--set", f"toolnames_save={saved}")
    assert count_tokens(proxy.url) == "ValidationException"  # the provider's, not a 403
    (received,) = standin.requests
    assert CULPRIT.encode() in counted_body(received)
    proxy.wait_for_log("toolnames error")
    (line,) = annotations(proxy.log_text())
    assert "name-invalid-chars" in line and "input.invokeModel.body.tools[1].name" in line
    (record,) = record_of(saved)
    assert record["api"] == "bedrock-count-tokens" and record["rule"] == "anthropic"
    assert record["rejected"]  # Bedrock's verdict, tied to the name inside the base64


def test_count_tokens_fix_mode_leaves_a_signed_request_as_signed_without_resign(
    mitmdump, mitmdump_binary, standin
):
    proxy = signing_mitmdump(mitmdump, mitmdump_binary, mode="fix")
    assert count_tokens(proxy.url) == "ValidationException"
    (received,) = standin.requests
    assert CULPRIT.encode() in counted_body(received)
    proxy.wait_for_log("toolnames error")
    assert "not fixed: the request is signed with AWS SigV4" in proxy.log_text()


def test_count_tokens_fix_mode_renames_inside_the_base64_and_signs_again_with_resign(
    mitmdump, mitmdump_binary, standin, tmp_path
):
    saved = tmp_path / "flagged.mitm"
    proxy = signing_mitmdump(
        mitmdump,
        mitmdump_binary,
        "--set",
        f"toolnames_save={saved}",
        mode="fix",
        resign=True,
        env=aws_env(),
    )
    assert isinstance(count_tokens(proxy.url), int)
    (received,) = standin.requests
    inner = counted_body(received)
    assert CULPRIT.encode() not in inner and b"get_weather" in inner
    proxy.wait_for_log("toolnames fixed")
    (record,) = record_of(saved)
    assert record["action"] == "fixed"
    assert [f["path"] for f in record["fixes"]] == ["input.invokeModel.body.tools[1].name"]
    assert SECRET not in proxy.log_text()


def test_count_tokens_block_mode_answers_with_bedrocks_validation_error(
    mitmdump, mitmdump_binary, standin
):
    proxy = signing_mitmdump(mitmdump, mitmdump_binary, mode="block")
    assert count_tokens(proxy.url) == "ValidationException"
    assert standin.requests == []
    assert count_tokens(proxy.url, ("get_weather",)) > 0  # a clean one goes through
