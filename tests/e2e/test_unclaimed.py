"""
Never silent (issue 21, item 7): a JSON POST that carries tools to a path no wire format
claims goes through a real mitmdump unchanged, and toolnames says once per host and path that
it did not check it, and notes so on each such flow; a request without tools stays quiet.
"""

import base64
import json

import pytest

from tests.testkit import post
from tests.testkit import read_flows
from tests.testkit import toolnames_lines

# Cohere's v1 chat: no format reads it (v2 is cohere-chat).
TOOLS = {
    "model": "command-r-plus",
    "message": "go",
    "tools": [{"name": "github.create_issue", "parameter_definitions": {}}],
}


@pytest.mark.parametrize("mode", ["observe", "fix", "block"])
def test_tools_to_a_path_no_format_claims_are_said_unchecked_once(
    mitmdump, mitmdump_binary, standin, tmp_path, mode
):
    every = tmp_path / "every.mitm"
    proxy = mitmdump("--set", f"toolnames_mode={mode}", "-w", str(every), binary=mitmdump_binary)
    answers = [
        post(proxy.url + "/v1/chat", TOOLS),
        post(proxy.url + "/v1/chat?x=1", TOOLS),
        post(proxy.url + "/v1/chat", {"model": "m", "messages": []}),
    ]
    got = [r["body"] for r in standin.requests[-3:]]
    proxy.stop()

    # In every mode, the provider got the bytes sent and the client the provider's answer.
    assert got[:2] == [json.dumps(TOOLS).encode()] * 2
    assert len({status for status, _, _ in answers}) == 1  # the stand-in's, never a block
    assert not any(b"toolnames" in body for _, _, body in answers)
    (line,) = toolnames_lines(proxy.log_text())
    assert "/v1/chat: toolnames did not check this request: it carries tools" in line
    flows = read_flows(every)
    assert len(flows) == 3
    for flow in flows[:2]:
        assert flow.comment == flow.metadata["toolnames_unchecked"]["reason"]
        assert flow.marked == ":grey_question:"
    assert "toolnames_unchecked" not in flows[2].metadata and not flows[2].comment


def test_tools_below_the_top_level_or_inside_a_carried_body_are_said_where_they_are(
    mitmdump, mitmdump_binary, standin
):
    # A gateway's wrapper, and Bedrock's count-tokens of a model no format reads (Llama's),
    # whose InvokeModel body carries its tools in base64.
    tools = [{"name": "github.create_issue", "input_schema": {"type": "object"}}]
    wrapped = {"request": {"params": {"model": "m", "tools": tools}}}
    inner = json.dumps({"messages": [], "tools": tools}).encode()
    counted = {"input": {"invokeModel": {"body": base64.b64encode(inner).decode()}}}
    proxy = mitmdump(binary=mitmdump_binary)
    post(proxy.url + "/llm/run", wrapped)
    post(proxy.url + "/llm/run", wrapped)
    post(proxy.url + "/model/meta.llama3-1-70b-instruct-v1:0/count-tokens", counted)
    got = [r["body"] for r in standin.requests[-3:]]
    proxy.stop()

    assert got == [json.dumps(wrapped).encode()] * 2 + [json.dumps(counted).encode()]
    first, second = toolnames_lines(proxy.log_text())  # once per host and path
    assert "/llm/run: toolnames did not check this request" in first
    assert '("request.params.tools")' in first
    assert "/count-tokens: toolnames did not check this request" in second
    assert '("input.invokeModel.body.tools")' in second
