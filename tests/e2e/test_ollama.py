"""
Ollama's native API end to end: the real ``ollama`` client (``Client(host=...)``) through a
real mitmdump (12, and 11 under scripts/test) in reverse mode in front of the stand-in, which
streams NDJSON as Ollama does. Observe names a call to a tool never offered and changes no
byte; under Ollama's own rule no name is an error and fix mode sends the request as it came;
under a rule the user names (``toolnames_rule``) block answers in Ollama's error shape, so the
client raises its usual ResponseError, and fix mode renames both ways over two turns.
"""

import pytest

from tests.testkit import annotations

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
DOTTED = "github.create_issue"
TOOLS = [{"type": "function", "function": {"name": DOTTED, "parameters": CITY}}]
PROMPT = [{"role": "user", "content": "Open an issue about the weather in Paris."}]


def client(proxy, call: str = ""):
    import ollama

    return ollama.Client(host=proxy.url, headers={"x-standin-call": call} if call else {})


def chat(c, messages, stream: bool):
    answer = c.chat(model="qwen3:8b", messages=messages, tools=TOOLS, stream=stream)
    parts = list(answer) if stream else [answer]
    assert parts[-1].done
    calls = [call for p in parts for call in p.message.tool_calls or ()]
    return calls, "".join(p.message.content or "" for p in parts)


@pytest.mark.needs_sdk
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_observe_names_a_call_to_a_tool_never_offered_and_changes_nothing(
    mitmdump, mitmdump_binary, standin, stream
):
    proxy = mitmdump(binary=mitmdump_binary)
    calls, _ = chat(client(proxy, "drop_tables"), PROMPT, stream)
    assert [c.function.name for c in calls] == ["drop_tables"]
    (sent,) = standin.requests
    assert DOTTED.encode() in sent["body"]  # Ollama's rule: the dot is no error
    proxy.wait_for_log("toolnames error")
    (line,) = annotations(proxy.log_text())
    assert line.startswith("toolnames error: response-unknown-tool: ")
    assert "'drop_tables'" in line and "name-invalid-chars" not in proxy.log_text()


@pytest.mark.needs_sdk
def test_fix_mode_under_ollamas_rule_sends_the_request_as_it_came(
    mitmdump, mitmdump_binary, standin
):
    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)
    calls, _ = chat(client(proxy, DOTTED), PROMPT, True)
    assert [c.function.name for c in calls] == [DOTTED]
    (sent,) = standin.requests
    assert b'"name":"github.create_issue"' in sent["body"].replace(b" ", b"")
    assert "toolnames fixed" not in proxy.log_text()


@pytest.mark.needs_sdk
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_block_under_a_named_rule_answers_as_ollama_and_the_client_raises_response_error(
    mitmdump, mitmdump_binary, standin, stream
):
    import ollama

    proxy = mitmdump(
        "--set",
        "toolnames_mode=block",
        "--set",
        "toolnames_rule=127.0.0.1=portable",
        binary=mitmdump_binary,
    )
    with pytest.raises(ollama.ResponseError) as excinfo:
        chat(client(proxy), PROMPT, stream)
    assert standin.requests == []
    assert excinfo.value.status_code == 400
    assert excinfo.value.error.startswith("toolnames: tools[0].function.name ")
    proxy.wait_for_log("toolnames blocked")


@pytest.mark.needs_sdk
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_fix_under_a_named_rule_renames_both_ways_over_two_turns(
    mitmdump, mitmdump_binary, standin, stream
):
    proxy = mitmdump(
        "--set",
        "toolnames_mode=fix",
        "--set",
        "toolnames_rule=127.0.0.1=portable",
        binary=mitmdump_binary,
    )
    from toolnames_core import rule_named
    from toolnames_core.aliases import alias_for

    # The stand-in's model calls what it is told: the name the provider was sent.
    alias = alias_for(DOTTED, rule_named("portable"))
    calls, _ = chat(client(proxy, alias), PROMPT, stream)
    assert [c.function.name for c in calls] == [DOTTED]  # the app's own name, given back
    # The second turn: the call and its result go back under the app's name, and are sent
    # under the alias; the model then answers with text.
    history = [
        *PROMPT,
        {"role": "assistant", "content": "", "tool_calls": [{"function": calls[0].function}]},
        {"role": "tool", "tool_name": DOTTED, "content": "issue #1 opened"},
    ]
    calls, text = chat(client(proxy), history, stream)
    assert calls == [] and text == "done"
    first, second = standin.requests
    for sent in (first, second):
        assert DOTTED.encode() not in sent["body"] and alias.encode() in sent["body"]
    assert second["body"].count(alias.encode()) == 3  # the tool, the call, the result
    proxy.wait_for_log("toolnames fixed")
