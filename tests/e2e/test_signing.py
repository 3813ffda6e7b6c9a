"""Signed requests end to end: boto3's Bedrock client (Converse and ConverseStream) signs
with AWS SigV4 and goes through a real mitmdump (12 and 11, reverse mode keeping the Host it
signed) to the stand-in, which checks every signature as AWS does. Observe mode passes every
valid signature; fix mode without toolnames_resign never causes a 403 and says why it left
the request alone (the provider's own name error comes back); with toolnames_resign and the
same credentials in mitmdump's environment the app gets its own tool names back; with
another key it declines. The secret is in no log line and no saved flow.

The anthropic SDK's AnthropicBedrock client speaks InvokeModel: its signature, which covers
every header but Connection (Accept-Encoding included), survives mitmdump and toolnames in
every mode (the stand-in checks it before it validates the body), and mitmproxy's anticomp,
which rewrites Accept-Encoding, breaks it and is said once. Its names, signed and not, are
tests/e2e/test_bedrock_invoke.py's.
"""

from __future__ import annotations

import pytest

from tests.testkit import annotations
from tests.testkit.e2e import read_flows
from tests.testkit.sigv4 import OTHER_KEY
from tests.testkit.sigv4 import OTHER_SECRET
from tests.testkit.sigv4 import SECRET
from tests.testkit.sigv4 import anthropic_bedrock
from tests.testkit.sigv4 import aws_env
from tests.testkit.sigv4 import boto3_bedrock
from tests.testkit.sigv4 import signing_mitmdump

pytestmark = pytest.mark.needs_sdk

DOTTED = "github.create_issue"
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def converse(url: str, name: str, stream: bool) -> list[str] | str:
    """The tools the answer calls, or the error code boto3 raised."""
    from botocore.exceptions import ClientError

    kwargs = {
        "modelId": "anthropic.claude-3-haiku",
        "messages": [{"role": "user", "content": [{"text": "Open an issue."}]}],
        "toolConfig": {
            "tools": [{"toolSpec": {"name": name, "inputSchema": {"json": CITY}}}],
            "toolChoice": {"tool": {"name": name}},
        },
    }
    pytest.importorskip("boto3")
    bedrock = boto3_bedrock(url)
    try:
        if not stream:
            content = bedrock.converse(**kwargs)["output"]["message"]["content"]
            return [b["toolUse"]["name"] for b in content if "toolUse" in b]
        events = bedrock.converse_stream(**kwargs)["stream"]
        return [
            e["contentBlockStart"]["start"]["toolUse"]["name"]
            for e in events
            if "contentBlockStart" in e
        ]
    except ClientError as e:
        return e.response["Error"]["Code"]


def saved_record(path) -> dict:
    (flow,) = read_flows(path)
    return flow.metadata["toolnames"]


streams = pytest.mark.parametrize("stream", [False, True], ids=["converse", "converse-stream"])


@streams
def test_observe_mode_passes_every_valid_signature(mitmdump, mitmdump_binary, standin, stream):
    proxy = signing_mitmdump(mitmdump, mitmdump_binary)
    assert converse(proxy.url, "get_weather", stream) == ["get_weather"]
    # The provider's own verdict on the name, not a signature error.
    assert converse(proxy.url, DOTTED, stream) == "ValidationException"
    assert len(standin.requests) == 2


@streams
def test_fix_mode_without_resign_leaves_the_request_as_signed_and_says_why(
    mitmdump, mitmdump_binary, standin, stream, tmp_path
):
    saved = tmp_path / "flagged.mitm"
    proxy = signing_mitmdump(
        mitmdump, mitmdump_binary, "--set", f"toolnames_save={saved}", mode="fix"
    )
    assert converse(proxy.url, DOTTED, stream) == "ValidationException"
    (received,) = standin.requests
    assert DOTTED.encode() in received["body"]  # as the client signed it
    proxy.wait_for_log("toolnames error")
    (line,) = annotations(proxy.log_text())
    assert "not fixed: the request is signed with AWS SigV4 (access key AKIDTESTNOTAKEY" in line
    assert "toolnames_resign is off" in line and "--set toolnames_resign=true" in line
    record = saved_record(saved)
    assert record["action"] == "observed"
    assert record["signed"]["declined"] == "toolnames_resign is off"
    assert record["rejected"]  # the provider's rejection, tied to the name


@streams
def test_fix_mode_with_resign_and_the_clients_credentials_gives_the_app_its_names(
    mitmdump, mitmdump_binary, standin, stream, tmp_path
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
    assert converse(proxy.url, DOTTED, stream) == [DOTTED]
    (received,) = standin.requests
    assert DOTTED.encode() not in received["body"]
    proxy.wait_for_log("toolnames fixed")
    (line,) = annotations(proxy.log_text())
    assert "signed it again with AWS SigV4 (access key AKIDTESTNOTAKEY" in line
    record = saved_record(saved)
    assert record["action"] == "fixed" and record["signed"]["resigned"] is True
    # The secret went nowhere: not the log, not the saved file.
    assert SECRET not in proxy.log_text()
    assert SECRET.encode() not in saved.read_bytes()


@streams
def test_fix_mode_with_resign_declines_another_access_key(
    mitmdump, mitmdump_binary, standin, stream
):
    proxy = signing_mitmdump(
        mitmdump, mitmdump_binary, mode="fix", resign=True, env=aws_env(OTHER_KEY, OTHER_SECRET)
    )
    assert converse(proxy.url, DOTTED, stream) == "ValidationException"
    (received,) = standin.requests
    assert DOTTED.encode() in received["body"]
    proxy.wait_for_log("toolnames error")
    (line,) = annotations(proxy.log_text())
    assert "are another access key's" in line
    assert OTHER_SECRET not in proxy.log_text() and OTHER_KEY not in line


def anthropic_bedrock_error(url: str) -> str:
    """The class of the error the AnthropicBedrock client got (the name breaks Anthropic's
    rule: a 400 once the signature holds, a 403 when it does not)."""
    anthropic = pytest.importorskip("anthropic")
    client = anthropic_bedrock(url)
    try:
        client.messages.create(
            model="anthropic.claude-3-haiku",
            max_tokens=10,
            messages=[{"role": "user", "content": "Open an issue."}],
            tools=[{"name": DOTTED, "input_schema": CITY}],
        )
    except anthropic.APIStatusError as e:
        return type(e).__name__
    return "answered"


@pytest.mark.parametrize("mode", ["observe", "fix", "block"])
def test_the_anthropic_bedrock_clients_signature_survives_every_mode(
    mitmdump, mitmdump_binary, standin, mode
):
    proxy = signing_mitmdump(mitmdump, mitmdump_binary, mode=mode, resign=True)
    # Observe passes the request on; fix mode without the client's credentials leaves it as
    # signed: the stand-in's verdict on the name, not a 403. Block mode answers itself.
    assert anthropic_bedrock_error(proxy.url) == "BadRequestError"
    if mode == "block":
        assert standin.requests == []
        return
    (received,) = standin.requests
    signed = dict(received["headers"])["Authorization"]
    assert "accept-encoding" in signed and "content-length" in signed
    assert DOTTED.encode() in received["body"]


def test_anticomp_breaks_a_signed_accept_encoding_and_toolnames_says_so_once(
    mitmdump, mitmdump_binary, standin
):
    proxy = signing_mitmdump(mitmdump, mitmdump_binary, "--set", "anticomp=true")
    assert anthropic_bedrock_error(proxy.url) == "PermissionDeniedError"
    assert anthropic_bedrock_error(proxy.url) == "PermissionDeniedError"
    proxy.wait_for_log("anticomp")
    said = [line for line in proxy.log_text().splitlines() if "anticomp option" in line]
    assert len(said) == 1 and "Turn anticomp off for signed clients" in said[0]


def test_the_anthropic_bedrock_client_is_not_signed_for_with_another_key(
    mitmdump, mitmdump_binary, standin
):
    proxy = signing_mitmdump(
        mitmdump, mitmdump_binary, mode="fix", resign=True, env=aws_env(OTHER_KEY, OTHER_SECRET)
    )
    # Left as signed: the provider's own verdict on the name, never a 403.
    assert anthropic_bedrock_error(proxy.url) == "BadRequestError"
    (received,) = standin.requests
    assert DOTTED.encode() in received["body"]
    proxy.wait_for_log("toolnames error")
    (line,) = annotations(proxy.log_text())
    assert "not fixed: the request is signed with AWS SigV4 (access key AKIDTESTNOTAKEY" in line
    assert "are another access key's" in line and OTHER_SECRET not in proxy.log_text()
