"""
Cohere's chat v2 end to end: the cohere SDK's ``ClientV2`` through a real mitmdump in reverse
mode in front of the stand-in provider, streamed and not. Observe names the culprit and reads
Cohere's own 400 for it; block answers in Cohere's error shape, so the SDK raises its usual
BadRequestError; fix renames names Cohere rejects both ways. Two-turn fix runs (the tool
result goes back) are in test_renaming.py; the flow file it saves is scanned here too.
"""

import json

import pytest

from tests.testkit import CITY
from tests.testkit import PROMPT
from tests.testkit import WHOLE_AND_STREAMED
from tests.testkit import annotations
from tests.testkit import cohere_client
from tests.testkit import read_flows

# An MCP-style name: Cohere allows neither the dot nor the dash.
MCP = "github.create-issue"
PROVIDER_SAYS = (
    "invalid request: tool names can only contain certain characters (A-Za-z0-9_) and "
    f"can't begin with a digit (provided name: '{MCP}')."
)


def chat(proxy, stream: bool, **extra):
    kwargs = {
        "model": "command-a-03-2025",
        "messages": PROMPT,
        "tools": [
            {"type": "function", "function": {"name": MCP, "parameters": CITY}},
            {"type": "function", "function": {"name": "get_weather", "parameters": CITY}},
        ],
        "tool_choice": "REQUIRED",
        **extra,
    }
    client = cohere_client(proxy.url)
    if not stream:
        return client.chat(**kwargs)
    return list(client.chat_stream(**kwargs))


@pytest.mark.needs_sdk
@WHOLE_AND_STREAMED
def test_observe_names_the_culprit_and_reads_coheres_400_for_it(
    mitmdump, mitmdump_binary, standin, stream, tmp_path
):
    import cohere

    saved = tmp_path / "every.mitm"
    proxy = mitmdump("-w", str(saved), binary=mitmdump_binary)
    with pytest.raises(cohere.BadRequestError) as excinfo:
        chat(proxy, stream)

    assert excinfo.value.body["message"] == PROVIDER_SAYS
    (sent,) = standin.requests
    assert sent["path"] == "/v2/chat" and MCP.encode() in sent["body"]
    proxy.wait_for_log("toolnames error")
    proxy.stop()
    line = annotations(proxy.log_text())[0]
    assert line.startswith(f"toolnames error: name-invalid-chars: tools[0].function.name '{MCP}'")
    # Cohere's verdict is read and tied to the name toolnames named.
    (flow,) = read_flows(saved)
    record = flow.metadata["toolnames"]
    assert record["api"] == "cohere-chat" and record["rule"] == "cohere"
    codes = [f["code"] for f in record["findings"]]
    assert "provider-rejected" in codes and "rule-disagrees" not in codes


@pytest.mark.needs_sdk
@WHOLE_AND_STREAMED
def test_block_answers_in_coheres_shape_and_the_sdk_raises_bad_request(
    mitmdump, mitmdump_binary, standin, stream
):
    import cohere

    proxy = mitmdump("--set", "toolnames_mode=block", binary=mitmdump_binary)
    with pytest.raises(cohere.BadRequestError) as excinfo:
        chat(proxy, stream)

    assert standin.requests == []
    assert excinfo.value.status_code == 400
    assert set(excinfo.value.body) == {"id", "message"}
    assert excinfo.value.body["message"].startswith(f"toolnames: tools[0].function.name '{MCP}'")
    proxy.wait_for_log("toolnames blocked")


@pytest.mark.needs_sdk
def test_a_choice_cohere_does_not_take_is_said_and_the_request_goes_as_sent(
    mitmdump, mitmdump_binary, standin
):
    import cohere

    proxy = mitmdump(binary=mitmdump_binary)
    named = {"type": "function", "function": {"name": "get_weather"}}  # no such form in v2
    with pytest.raises(cohere.BadRequestError):
        chat(
            proxy,
            False,
            tools=[{"type": "function", "function": {"name": "get_weather"}}],
            tool_choice=named,
        )
    (sent,) = standin.requests
    assert json.loads(sent["body"])["tool_choice"] == named
    proxy.wait_for_log("toolnames error")
    line = annotations(proxy.log_text())[0]
    assert line.startswith("toolnames error: choice-malformed: tool_choice ")
    assert "no choice that names a tool" in line


@pytest.mark.needs_sdk
@WHOLE_AND_STREAMED
def test_fix_sends_an_alias_and_gives_the_app_its_own_name(
    mitmdump, mitmdump_binary, standin, stream
):
    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)
    # REQUIRED with the culprit offered first: the stand-in's model calls it.
    answer = chat(proxy, stream)
    if stream:
        names = [
            e.delta.message.tool_calls.function.name for e in answer if e.type == "tool-call-start"
        ]
    else:
        names = [c.function.name for c in answer.message.tool_calls]
    assert names == [MCP]
    (sent,) = standin.requests
    assert MCP.encode() not in sent["body"]
    alias = json.loads(sent["body"])["tools"][0]["function"]["name"]
    assert alias.startswith("github_create_issue_")
    proxy.wait_for_log("toolnames fixed")
    assert f"renamed {MCP!r} → {alias!r}" in proxy.log_text()
