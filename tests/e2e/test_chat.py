"""
End to end: a real mitmdump with the addon, in reverse mode in front of the stand-in provider,
driven by the real openai SDK, by real Mastra (node) and by plain HTTP. Nothing is mocked.

Each test runs against every mitmdump of the `mitmdump_binary` fixture (mitmproxy 12, and 11
under scripts/test). The request is the one Mastra builds when a tool registered under the key
`search.web` is forced by that key: `tools` offers `search_web`, `tool_choice` names `search.web`.
"""

import json
import stat
import subprocess
from pathlib import Path

import pytest

from tests.testkit import annotations
from tests.testkit import mitmdump_read
from tests.testkit import post
from tests.testkit import read_flows
from tests.testkit import recording_client
from tests.testkit import toolnames_lines
from tests.testkit import wait_for_flows
from toolnames_core.names import quote_name

API_KEY = "sk-test-not-a-key"
# A Gemini-style credential in the query string (?key=), which saving must redact too.
QUERY_KEY = "AIza-test-not-a-key-0123456789"

WEATHER_PARAMETERS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}
# What @mastra/core 1.67.0 sends for tools: {"search.web": t} and toolChoice "search.web" (the seed).
MASTRA_SHAPED = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "system", "content": "Always call the weather tool."},
        {"role": "user", "content": "hi"},
    ],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "search_web",
                "description": "Get the weather for a city",
                "parameters": WEATHER_PARAMETERS,
            },
        }
    ],
    "tool_choice": {"type": "function", "function": {"name": "search.web"}},
}
STANDIN_NOT_FOUND = "Tool choice 'search.web' not found in 'tools' parameter."
FINDING = (
    "choice-not-in-tools: tool_choice.function.name 'search.web' (10 chars) names no offered "
    "tool; offered: 'search_web'"
)
# In observe mode the provider's 400 then confirms it, on the same line.
CONFIRMED = f"{FINDING}; the provider rejected it too"

MCP_KEY = "mcp:github-server.list_pull_requests_for_repository_with_label_filters"
# Mastra: ':' and '.' become '_', then the key is cut to 63 characters.
MCP_WIRE_NAME = "mcp_github-server_list_pull_requests_for_repository_with_label_"
# Mastra's regex works on UTF-16 code units: the emoji (a surrogate pair) becomes two underscores.
EMOJI_KEY = "search 🔍 web"
EMOJI_WIRE_NAME = "search____web"
TOOL_OUTPUT = {"forecast": "sunny", "city": "Paris", "tempC": 20}


def sdk_client(proxy):
    """An OpenAI client pointed at the proxy, and the list of request bodies it sends."""
    import openai

    http_client, sent = recording_client(openai)
    client = openai.OpenAI(
        base_url=proxy.url + "/v1", api_key=API_KEY, max_retries=0, http_client=http_client
    )
    return client, sent


def run_mastra(mastra_project: Path, base_url: str, key: str = "search.web") -> dict:
    """One agent turn of tests/e2e/mastra/forced_tool.cjs; its JSON result line."""
    result = subprocess.run(
        ["node", "forced_tool.cjs", base_url, key],
        cwd=mastra_project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = result.stdout.strip().splitlines()
    assert lines, f"forced_tool.cjs printed nothing (exit {result.returncode}):\n{result.stderr}"
    return json.loads(lines[-1])


def bodies(standin) -> list[dict]:
    return [json.loads(r["body"]) for r in standin.requests]


# -- openai SDK ---------------------------------------------------------------------------------


@pytest.mark.needs_sdk
def test_observe_forwards_the_sdk_bytes_unchanged_and_the_provider_rejects_them(
    mitmdump, mitmdump_binary, standin, level_printer
):
    import openai

    proxy = mitmdump("-s", str(level_printer), binary=mitmdump_binary)
    client, sent = sdk_client(proxy)

    with pytest.raises(openai.BadRequestError) as excinfo:
        client.chat.completions.create(**MASTRA_SHAPED)

    assert excinfo.value.body["message"] == STANDIN_NOT_FOUND
    assert excinfo.value.code is None  # the stand-in's error, not toolnames'
    assert len(sent) == 1
    assert [r["body"] for r in standin.requests] == sent
    line = f"POST 127.0.0.1/v1/chat/completions: toolnames error: {CONFIRMED}"
    log = proxy.wait_for_log(f"level: WARNING {line}")
    assert toolnames_lines(log) == [line]


@pytest.mark.needs_sdk
def test_fix_rewrites_only_the_choice_and_the_forced_call_succeeds(
    mitmdump, mitmdump_binary, standin
):
    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)
    client, sent = sdk_client(proxy)

    completion = client.chat.completions.create(**MASTRA_SHAPED)

    (call,) = completion.choices[0].message.tool_calls
    assert call.function.name == "search_web"
    assert json.loads(call.function.arguments) == {"city": "Paris"}
    (request_sent,) = sent
    (received,) = standin.requests
    assert request_sent.count(b'"search.web"') == 1
    assert received["body"] == request_sent.replace(b'"search.web"', b'"search_web"')
    assert json.loads(received["body"])["tool_choice"] == {
        "type": "function",
        "function": {"name": "search_web"},
    }
    proxy.wait_for_log("toolnames fixed")
    assert toolnames_lines(proxy.log_text()) == [
        "POST 127.0.0.1/v1/chat/completions: toolnames fixed tool_choice.function.name "
        "'search.web' → 'search_web' (mastra+openai-agents)"
    ]


@pytest.mark.needs_sdk
def test_block_answers_the_sdk_with_a_toolnames_error_and_sends_nothing(
    mitmdump, mitmdump_binary, standin
):
    import openai

    proxy = mitmdump("--set", "toolnames_mode=block", binary=mitmdump_binary)
    client, _ = sdk_client(proxy)

    with pytest.raises(openai.BadRequestError) as excinfo:
        client.chat.completions.create(**MASTRA_SHAPED)

    error = excinfo.value
    assert standin.requests == []
    assert error.status_code == 400
    assert error.code == "choice-not-in-tools"
    assert error.param == "tool_choice.function.name"
    assert error.body["message"].startswith("toolnames: tool_choice.function.name 'search.web'")
    assert "offered: 'search_web'" in error.body["message"]
    # openai 3.x prefixes the status to the provider's message.
    assert error.message == f"Error code: 400 - {error.body['message']}"
    proxy.wait_for_log("toolnames blocked")
    assert toolnames_lines(proxy.log_text()) == [
        f"POST 127.0.0.1/v1/chat/completions: toolnames blocked: {FINDING}"
    ]


@pytest.mark.needs_sdk
def test_the_saved_flow_names_the_sdk_that_sent_it(mitmdump, mitmdump_binary, standin, tmp_path):
    import platform

    import openai

    saved = tmp_path / "flagged.mitm"
    proxy = mitmdump("--set", f"toolnames_save={saved}", binary=mitmdump_binary)
    client, _ = sdk_client(proxy)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(**MASTRA_SHAPED)

    (flow,) = wait_for_flows(saved, 1)
    assert flow.metadata["toolnames"]["client"] == (
        f"openai Python SDK {openai.__version__} (CPython {platform.python_version()})"
    )


# -- Mastra -------------------------------------------------------------------------------------


def test_observe_lets_mastras_request_through_and_the_provider_rejects_it(
    mitmdump, mitmdump_binary, standin, mastra_project
):
    proxy = mitmdump(binary=mitmdump_binary)

    out = run_mastra(mastra_project, proxy.url + "/v1")

    assert out["ok"] is False
    assert out["error"] == STANDIN_NOT_FOUND
    assert out["statusCode"] == 400
    assert out["executed"] == []
    (sent,) = bodies(standin)
    assert [t["function"]["name"] for t in sent["tools"]] == ["search_web"]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "search.web"}}
    proxy.wait_for_log("choice-not-in-tools")
    assert annotations(proxy.log_text()) == [f"toolnames error: {CONFIRMED}"]


@pytest.mark.parametrize(
    "key, wire_name, rewrites",
    [
        # The OpenAI Agents SDK's rewrite gives search_web too; both agree, so it is no guess.
        pytest.param("search.web", "search_web", "mastra+openai-agents", id="dotted-key"),
        pytest.param(MCP_KEY, MCP_WIRE_NAME, "mastra", id="70-char-mcp-key-cut-to-63"),
        pytest.param(EMOJI_KEY, EMOJI_WIRE_NAME, "mastra", id="emoji-key-as-utf16"),
    ],
)
def test_fix_makes_mastras_forced_tool_call_run_end_to_end(
    mitmdump, mitmdump_binary, standin, mastra_project, key, wire_name, rewrites
):
    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)

    out = run_mastra(mastra_project, proxy.url + "/v1", key)

    assert out["ok"] is True, out
    assert out["toolCalls"] == [wire_name]
    assert out["executed"] == [{"city": "Paris"}]
    assert out["toolResults"] == [{"toolName": wire_name, "result": TOOL_OUTPUT}]
    assert out["text"] == "done"
    # Turn 1 forces the offered name; turn 2 carries the tool's result back to the provider.
    first, second = bodies(standin)
    assert [t["function"]["name"] for t in first["tools"]] == [wire_name]
    assert first["tool_choice"] == {"type": "function", "function": {"name": wire_name}}
    assistant, tool = second["messages"][-2:]
    (call,) = assistant["tool_calls"]
    assert call["function"]["name"] == wire_name
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == call["id"]
    assert json.loads(tool["content"]) == TOOL_OUTPUT
    proxy.wait_for_log("toolnames fixed")
    # Names are shown in one escaped form (the emoji key as \U0001f50d).
    fixed = (
        f"toolnames fixed tool_choice.function.name {quote_name(key)} → {quote_name(wire_name)} "
        f"({rewrites})"
    )
    # One line per flow. Turn 2 forces the key too, so it is fixed too; it is answered with text
    # although its choice still forces the tool, which the addon notes (response-ignored-choice).
    assert annotations(proxy.log_text()) == [fixed, f"{fixed} (+1 more)"]


def test_block_stops_mastras_request_before_the_provider(
    mitmdump, mitmdump_binary, standin, mastra_project
):
    proxy = mitmdump("--set", "toolnames_mode=block", binary=mitmdump_binary)

    out = run_mastra(mastra_project, proxy.url + "/v1")

    assert out["ok"] is False
    assert out["error"].startswith("toolnames: tool_choice.function.name 'search.web'")
    assert out["statusCode"] == 400
    assert out["executed"] == []
    assert standin.requests == []
    proxy.wait_for_log("toolnames blocked")
    assert annotations(proxy.log_text()) == [f"toolnames blocked: {FINDING}"]


# -- saving -------------------------------------------------------------------------------------


# Gateways' own credential headers (their sources: tests/mitm/test_save.py).
GATEWAY_HEADERS = {
    name: f"gateway-secret-{i}"
    for i, name in enumerate(
        [
            "x-portkey-api-key",
            "x-portkey-virtual-key",
            "Helicone-Auth",
            "Ocp-Apim-Subscription-Key",
            "cf-aig-authorization",
            "x-litellm-api-key",
        ]
    )
}


def post_with_credentials(proxy) -> int:
    status, _, _ = post(
        f"{proxy.url}/v1/chat/completions?key={QUERY_KEY}",
        MASTRA_SHAPED,
        {"Authorization": f"Bearer {API_KEY}", **GATEWAY_HEADERS},
    )
    return status


@pytest.fixture
def saved_flow(mitmdump, mitmdump_binary, standin, tmp_path):
    """A flagged flow saved by a live mitmdump (observe mode): (file, live log)."""
    path = tmp_path / "flagged.mitm"
    proxy = mitmdump("--set", f"toolnames_save={path}", binary=mitmdump_binary)
    assert post_with_credentials(proxy) == 400
    proxy.wait_for_log("choice-not-in-tools")
    proxy.stop()  # runs the addon's done hook: the file is complete
    return path, proxy.log_text()


def test_saved_flow_holds_the_flagged_exchange_without_credentials(saved_flow):
    path, _ = saved_flow

    data = path.read_bytes()
    assert API_KEY.encode() not in data
    assert QUERY_KEY.encode() not in data
    assert b"gateway-secret" not in data
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    (flow,) = read_flows(path)
    assert flow.request.headers["authorization"] == "REDACTED-by-toolnames"
    for name in GATEWAY_HEADERS:
        assert flow.request.headers[name] == "REDACTED-by-toolnames"
    assert flow.request.query["key"] == "REDACTED-by-toolnames"
    assert json.loads(flow.request.content) == MASTRA_SHAPED
    assert flow.response.status_code == 400
    assert json.loads(flow.response.content)["error"]["message"] == STANDIN_NOT_FOUND
    found = [f["code"] for f in flow.metadata["toolnames"]["findings"]]
    assert found == ["choice-not-in-tools", "provider-rejected"]
    assert flow.marked
    assert flow.comment == f"toolnames error: {CONFIRMED}"


def test_saved_flow_is_readable_by_mitmdump(saved_flow, mitmdump_binary, mitmproxy_confdir):
    path, _ = saved_flow

    # flow_detail=3: the URL in full, headers and bodies.
    output = mitmdump_read(mitmdump_binary, mitmproxy_confdir, path, "--set", "flow_detail=3")

    assert "POST http://127.0.0.1:" in output
    assert "/v1/chat/completions?key=REDACTED-by-toolnames\n" in output
    assert "Authorization: REDACTED-by-toolnames\n" in output
    assert '"name": "search.web"' in output
    assert "<< 400 Bad Request" in output
    assert "not found in 'tools' parameter." in output
    assert API_KEY not in output and QUERY_KEY not in output


def test_saved_flow_read_back_through_the_addon_shows_the_same_annotations(
    saved_flow, mitmdump_binary, mitmproxy_confdir
):
    path, live_log = saved_flow

    output = mitmdump_read(mitmdump_binary, mitmproxy_confdir, path, "-s", "addon/toolnames.py")

    (line,) = toolnames_lines(live_log)
    assert line.endswith(f": toolnames error: {CONFIRMED}")
    assert QUERY_KEY not in line  # the addon's line shows the path with the key redacted
    assert toolnames_lines(output) == [line]
