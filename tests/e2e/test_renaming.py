"""
Fix mode makes the app work: apps whose tools carry names the provider rejects (MCP names such
as `github.create_issue`) run two turns through a real mitmdump in front of the stand-in
provider, which validates names as the providers do. Each app is an official SDK (openai chat
and Responses, anthropic and its AnthropicVertex, google-genai, boto3, cohere's ClientV2) or the Vercel AI SDK under node, streamed and
not. In fix mode the provider sees only names it accepts, the app gets its own names back and
runs its tool, and the second turn, whose history holds the call, is accepted too. In observe
mode the same app fails at the provider, which is why fix mode exists.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.testkit import CITY
from tests.testkit import annotations
from tests.testkit import anthropic_client
from tests.testkit import cohere_client
from tests.testkit import vertex_client
from tests.testkit.sigv4 import KEEP_HOST
from tests.testkit.sigv4 import aws_env
from tests.testkit.sigv4 import boto3_bedrock

PROMPT = "Open an issue about the weather in Paris."
# What the providers reject: a dotted MCP name (OpenAI, Anthropic, Bedrock) and, for Gemini,
# which accepts dots, a slash; a name of 70 characters, over every provider's 64.
DOTTED = "github.create_issue"
SLASHED = "github/create_issue"
LONG = "mcp__plugin_yelp-mcp-google_google__batch_modify_gmail_message_labels"


@dataclass
class App:
    """One SDK's two-turn agent loop: offer `name`, force a call to it, answer the call."""

    sdk: str
    invalid: str
    client: Callable[[str], Any]
    first: Callable[[Any, str, bool], tuple[list[str], Any]]
    second: Callable[[Any, str, bool, Any], str]
    # A client that signs with AWS SigV4 (boto3): reverse mode must keep the Host it signed,
    # and fix mode signs what it changed again with the same credentials in mitmdump's
    # environment (tests/e2e/test_signing.py has what happens without them).
    signs: bool = False

    def proxy_args(self, fix: bool) -> list[str]:
        if not self.signs:
            return []
        return [*KEEP_HOST, *(["--set", "toolnames_resign=true"] * fix)]

    def proxy_env(self) -> dict[str, str] | None:
        if not self.signs:
            return None
        return aws_env()


# -- openai: chat completions and Responses -----------------------------------------------------


def openai_client(url: str):
    import openai

    return openai.OpenAI(base_url=url + "/v1", api_key="sk-test-not-a-key", max_retries=0)


def chat_tools(name: str) -> list[dict]:
    return [{"type": "function", "function": {"name": name, "parameters": CITY}}]


def chat_call(client, messages: list, tools: list, choice, stream: bool) -> tuple[list, str]:
    """The calls ({id, name, arguments}) and text of one chat completion, streamed or not."""
    kwargs = {"model": "gpt-4o-mini", "messages": messages, "tools": tools, "tool_choice": choice}
    if not stream:
        message = client.chat.completions.create(**kwargs).choices[0].message
        calls = [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
            for c in message.tool_calls or []
        ]
        return calls, message.content or ""
    calls: dict[int, dict] = {}
    text = ""
    for chunk in client.chat.completions.create(**kwargs, stream=True):
        delta = chunk.choices[0].delta if chunk.choices else None
        text += (delta and delta.content) or ""
        for c in (delta and delta.tool_calls) or []:
            call = calls.setdefault(c.index, {"id": c.id, "name": "", "arguments": ""})
            call["name"] += (c.function and c.function.name) or ""
            call["arguments"] += (c.function and c.function.arguments) or ""
    return list(calls.values()), text


def chat_first(client, name: str, stream: bool):
    messages = [{"role": "user", "content": PROMPT}]
    choice = {"type": "function", "function": {"name": name}}
    calls, _ = chat_call(client, messages, chat_tools(name), choice, stream)
    return [c["name"] for c in calls], (messages, calls)


def chat_second(client, name: str, stream: bool, state) -> str:
    messages, calls = state
    assistant = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in calls
        ],
    }
    results = [{"role": "tool", "tool_call_id": c["id"], "content": '{"number": 7}'} for c in calls]
    _, text = chat_call(client, [*messages, assistant, *results], chat_tools(name), "auto", stream)
    return text


def responses_call(client, input_items: list, name: str, choice, stream: bool) -> tuple[list, str]:
    """The function_call output items (as dicts) and the text of one Responses call."""
    tools = [{"type": "function", "name": name, "parameters": CITY, "strict": False}]
    kwargs = {"model": "gpt-4o-mini", "input": input_items, "tools": tools, "tool_choice": choice}
    if stream:
        response = None
        for event in client.responses.create(**kwargs, stream=True):
            if event.type == "response.completed":
                response = event.response
        assert response is not None, "the stream had no response.completed event"
    else:
        response = client.responses.create(**kwargs)
    calls = [item.model_dump() for item in response.output if item.type == "function_call"]
    return calls, response.output_text


def responses_first(client, name: str, stream: bool):
    items = [{"role": "user", "content": PROMPT}]
    calls, _ = responses_call(client, items, name, {"type": "function", "name": name}, stream)
    return [c["name"] for c in calls], (items, calls)


def responses_second(client, name: str, stream: bool, state) -> str:
    items, calls = state
    history = [
        *items,
        *({k: c[k] for k in ("type", "call_id", "name", "arguments")} for c in calls),
        *({"type": "function_call_output", "call_id": c["call_id"], "output": "7"} for c in calls),
    ]
    _, text = responses_call(client, history, name, "auto", stream)
    return text


# -- anthropic ----------------------------------------------------------------------------------


def anthropic_call(client, messages: list, name: str, choice: dict, stream: bool):
    kwargs = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "messages": messages,
        "tools": [{"name": name, "input_schema": CITY}],
        "tool_choice": choice,
    }
    if not stream:
        return client.messages.create(**kwargs)
    with client.messages.stream(**kwargs) as events:
        return events.get_final_message()


def anthropic_first(client, name: str, stream: bool):
    messages = [{"role": "user", "content": PROMPT}]
    message = anthropic_call(client, messages, name, {"type": "tool", "name": name}, stream)
    uses = [b for b in message.content if b.type == "tool_use"]
    return [b.name for b in uses], (messages, message)


def anthropic_second(client, name: str, stream: bool, state) -> str:
    messages, message = state
    results = [
        {"type": "tool_result", "tool_use_id": b.id, "content": "7"}
        for b in message.content
        if b.type == "tool_use"
    ]
    history = [
        *messages,
        {"role": "assistant", "content": [b.model_dump() for b in message.content]},
        {"role": "user", "content": results},
    ]
    answer = anthropic_call(client, history, name, {"type": "auto"}, stream)
    return "".join(b.text for b in answer.content if b.type == "text")


# -- google-genai -------------------------------------------------------------------------------


def gemini_client(url: str):
    from google import genai

    return genai.Client(api_key="test-not-a-key", http_options={"base_url": url})


def gemini_call(client, contents: list, name: str, mode: str, stream: bool):
    from google.genai import types

    config = types.GenerateContentConfig(
        tools=[
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(name=name, parameters_json_schema=CITY)
                ]
            )
        ],
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=mode, allowed_function_names=[name] if mode == "ANY" else None
            )
        ),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    kwargs = {"model": "gemini-2.5-flash", "contents": contents, "config": config}
    if not stream:
        response = client.models.generate_content(**kwargs)
        return list(response.function_calls or []), response.text or ""
    calls, text = [], ""
    for chunk in client.models.generate_content_stream(**kwargs):
        calls += chunk.function_calls or []
        text += chunk.text or ""
    return calls, text


def gemini_first(client, name: str, stream: bool):
    from google.genai import types

    contents = [types.Content(role="user", parts=[types.Part(text=PROMPT)])]
    calls, _ = gemini_call(client, contents, name, "ANY", stream)
    return [c.name for c in calls], (contents, calls)


def gemini_second(client, name: str, stream: bool, state) -> str:
    from google.genai import types

    contents, calls = state
    history = [
        *contents,
        types.Content(role="model", parts=[types.Part(function_call=c) for c in calls]),
        types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(name=c.name, response={"number": 7})
                for c in calls
            ],
        ),
    ]
    _, text = gemini_call(client, history, name, "AUTO", stream)
    return text


# -- boto3, Bedrock Converse --------------------------------------------------------------------


def bedrock_call(client, messages: list, name: str, choice: dict, stream: bool) -> list[dict]:
    """The content blocks of the answer, assembled from the stream's events when streamed."""
    tool = {"toolSpec": {"name": name, "inputSchema": {"json": CITY}}}
    kwargs = {
        "modelId": "anthropic.claude-3-haiku",
        "messages": messages,
        "toolConfig": {"tools": [tool], "toolChoice": choice},
    }
    if not stream:
        return client.converse(**kwargs)["output"]["message"]["content"]
    blocks: dict[int, dict] = {}
    for event in client.converse_stream(**kwargs)["stream"]:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"]["toolUse"]
            blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            block = blocks.setdefault(delta["contentBlockIndex"], {"text": ""})
            if "toolUse" in delta["delta"]:
                block["toolUse"]["input"] += delta["delta"]["toolUse"]["input"]
            else:
                block["text"] += delta["delta"].get("text", "")
    for block in blocks.values():
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"] or "{}")
    return list(blocks.values())


def bedrock_first(client, name: str, stream: bool):
    messages = [{"role": "user", "content": [{"text": PROMPT}]}]
    content = bedrock_call(client, messages, name, {"tool": {"name": name}}, stream)
    return [b["toolUse"]["name"] for b in content if "toolUse" in b], (messages, content)


def bedrock_second(client, name: str, stream: bool, state) -> str:
    messages, content = state
    results = [
        {"toolResult": {"toolUseId": b["toolUse"]["toolUseId"], "content": [{"text": "7"}]}}
        for b in content
        if "toolUse" in b
    ]
    history = [
        *messages,
        {"role": "assistant", "content": content},
        {"role": "user", "content": results},
    ]
    answer = bedrock_call(client, history, name, {"auto": {}}, stream)
    return "".join(b.get("text", "") for b in answer)


# -- cohere: ClientV2, Cohere's chat v2 ---------------------------------------------------------


def cohere_call(client, messages: list, name: str, stream: bool, choice: str | None):
    """(tool calls as plain dicts, text) of one turn, read from the answer or the stream."""
    kwargs = {
        "model": "command-a-03-2025",
        "messages": messages,
        "tools": [{"type": "function", "function": {"name": name, "parameters": CITY}}],
    }
    if choice:
        kwargs["tool_choice"] = choice
    if not stream:
        message = client.chat(**kwargs).message
        calls = [
            {"id": c.id, "type": "function", "function": dict(c.function)}
            for c in message.tool_calls or []
        ]
        return calls, "".join(item.text for item in message.content or [])
    calls, text = [], ""
    for event in client.chat_stream(**kwargs):
        if event.type == "tool-call-start":
            call = event.delta.message.tool_calls
            calls.append(
                {"id": call.id, "type": "function", "function": {"name": call.function.name}}
            )
            calls[-1]["function"]["arguments"] = ""
        elif event.type == "tool-call-delta":
            calls[-1]["function"]["arguments"] += event.delta.message.tool_calls.function.arguments
        elif event.type == "content-delta":
            text += event.delta.message.content.text
    return calls, text


def cohere_first(client, name: str, stream: bool):
    # Cohere has no named choice: one tool offered and REQUIRED force it.
    messages = [{"role": "user", "content": PROMPT}]
    calls, _ = cohere_call(client, messages, name, stream, "REQUIRED")
    return [c["function"]["name"] for c in calls], (messages, calls)


def cohere_second(client, name: str, stream: bool, state) -> str:
    messages, calls = state
    history = [
        *messages,
        {"role": "assistant", "tool_plan": "I will call it.", "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": "7"} for c in calls),
    ]
    return cohere_call(client, history, name, stream, None)[1]


APPS = [
    App("openai-chat", DOTTED, openai_client, chat_first, chat_second),
    App("openai-chat", LONG, openai_client, chat_first, chat_second),
    App("openai-responses", DOTTED, openai_client, responses_first, responses_second),
    App("anthropic", DOTTED, anthropic_client, anthropic_first, anthropic_second),
    App("anthropic-vertex", DOTTED, vertex_client, anthropic_first, anthropic_second),
    App("google-genai", SLASHED, gemini_client, gemini_first, gemini_second),
    App("boto3-bedrock", DOTTED, boto3_bedrock, bedrock_first, bedrock_second, signs=True),
    App("cohere", DOTTED, cohere_client, cohere_first, cohere_second),
]
APP_IDS = [f"{app.sdk}-{'long' if app.invalid == LONG else 'mcp'}" for app in APPS]


@pytest.mark.needs_sdk
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("app", APPS, ids=APP_IDS)
def test_fix_mode_runs_two_turns_with_names_the_provider_rejects(
    mitmdump, mitmdump_binary, standin, app: App, stream: bool
):
    proxy = mitmdump(
        "--set",
        "toolnames_mode=fix",
        *app.proxy_args(fix=True),
        binary=mitmdump_binary,
        env=app.proxy_env(),
    )
    client = app.client(proxy.url)

    called, state = app.first(client, app.invalid, stream)
    text = app.second(client, app.invalid, stream, state)

    assert called == [app.invalid]
    assert text == "done"
    first, second = standin.requests
    for received in (first, second):
        # The provider saw only an alias, in the tools, the choice and the history.
        assert app.invalid.encode() not in received["body"]
        assert json.dumps(app.invalid)[1:-1].encode() not in received["body"]
    # One line per flow, logged when that flow is done: wait for both.
    proxy.wait_for_log("toolnames fixed", count=2)
    fixed = [line for line in annotations(proxy.log_text()) if line.startswith("toolnames fixed")]
    assert len(fixed) == 2
    assert all(f"renamed {app.invalid!r} → " in line for line in fixed)


@pytest.mark.needs_sdk
@pytest.mark.parametrize("app", APPS, ids=APP_IDS)
def test_observe_mode_leaves_the_app_failing_at_the_provider(mitmdump, mitmdump_binary, app: App):
    proxy = mitmdump(*app.proxy_args(fix=False), binary=mitmdump_binary)
    client = app.client(proxy.url)

    with pytest.raises(Exception) as excinfo:
        app.first(client, app.invalid, False)

    assert "400" in str(excinfo.value) or "ValidationException" in str(excinfo.value)
    assert not [line for line in annotations(proxy.log_text()) if "fixed" in line]


# -- the Vercel AI SDK under node -----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["generate", "stream"])
@pytest.mark.parametrize("api", ["chat", "responses"])
def test_the_vercel_ai_sdk_runs_its_mcp_named_tool_only_in_fix_mode(
    mitmdump, mitmdump_binary, standin, mastra_project, api: str, mode: str
):
    def run(proxy) -> dict:
        script = mastra_project / "ai_sdk_tools.cjs"
        result = subprocess.run(
            ["node", str(script), proxy.url + "/v1", api, mode],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=mastra_project,
        )
        return json.loads(result.stdout.strip().splitlines()[-1])

    observed = run(mitmdump(binary=mitmdump_binary))
    fixed = run(mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary))

    assert observed["ok"] is False
    assert "tools[0]" in observed["error"] and observed["executed"] == []
    assert fixed["ok"] is True, fixed
    assert fixed["toolCalls"] == [[DOTTED], []]
    assert fixed["executed"] == [{"name": DOTTED, "input": {"city": "Paris"}}]
    assert fixed["text"] == "done"


@pytest.mark.needs_sdk
def test_a_streamed_parallel_wrapper_gives_the_app_its_own_recipient_names(
    mitmdump, mitmdump_binary, standin
):
    """OpenAI's multi_tool_use.parallel, streamed: its arguments, a JSON text split over many
    deltas, name the call inside as functions.<alias>; the app must get its own name."""
    import openai

    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)
    client = openai_client(proxy.url)
    stream = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": PROMPT}],
        tools=chat_tools(DOTTED),
        stream=True,
        extra_headers={"x-standin-call": "multi_tool_use.parallel"},
    )
    name, arguments = "", ""
    for chunk in stream:
        for call in chunk.choices[0].delta.tool_calls or []:
            name += call.function.name or ""
            arguments += call.function.arguments or ""
    assert isinstance(client, openai.OpenAI) and name == "multi_tool_use.parallel"
    assert json.loads(arguments) == {
        "tool_uses": [{"recipient_name": f"functions.{DOTTED}", "parameters": {}}]
    }
    proxy.wait_for_log("toolnames fixed")
    proxy.stop()
    (line,) = annotations(proxy.log_text())
    assert "restored 1 name(s) in the answer" in line


@pytest.mark.needs_sdk
def test_a_streamed_responses_parallel_wrapper_gives_the_app_its_own_names_in_every_delta(
    mitmdump, mitmdump_binary, standin
):
    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)
    client = openai_client(proxy.url)
    tool = {"type": "function", "name": DOTTED, "parameters": CITY}
    stream = client.responses.create(
        model="gpt-4o-mini",
        input=PROMPT,
        tools=[tool],
        stream=True,
        extra_headers={"x-standin-call": "multi_tool_use.parallel"},
    )
    deltas, done = "", None
    for event in stream:
        if event.type == "response.function_call_arguments.delta":
            deltas += event.delta
        elif event.type == "response.output_item.done":
            done = event.item.arguments
    for arguments in (deltas, done):
        (use,) = json.loads(arguments)["tool_uses"]
        assert use["recipient_name"] == f"functions.{DOTTED}"
    proxy.stop()
