"""
End to end, format by format: a real mitmdump with the addon, in reverse mode in front of the
stand-in provider, which validates like the real providers. Nothing is mocked.

- Anthropic Messages through the real `anthropic` SDK, and the OpenAI Responses API through the
  `openai` SDK's Responses client: observe, block and fix, with the SDK's own error types.
- Gemini and Bedrock Converse through plain HTTP (google-genai and boto3 are not installed):
  credentials never reach a saved flow, block answers in the provider's own error shape.
- Which rule is checked: set for the provider's host, and for every host (a gateway).

Each test runs against every mitmdump of the `mitmdump_binary` fixture (mitmproxy 12, and 11
under scripts/test). In reverse mode mitmproxy sets the Host header to the upstream's before the
addon sees the request, so the host in log lines and rule patterns is the provider's.
"""

import json
import urllib.parse

import pytest

from tests.testkit import annotations
from tests.testkit import mitmdump_read
from tests.testkit import post
from tests.testkit import recording_client
from tests.testkit import toolnames_lines
from tests.testkit import wait_for_flows
from tests.testkit.sigv4 import Signer
from tests.testkit.sigv4 import core_signed

REDACTED = "REDACTED-by-toolnames"

CITY_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
# The offered tool is search_web; the choice names the key the user wrote, search.web, as
# Mastra sends it (fix mode maps it back with the Mastra and OpenAI Agents rewrites).
FIXED = "toolnames fixed {path} 'search.web' → 'search_web' (mastra+openai-agents)"


def header_values(record: dict, name: str) -> list[str]:
    """The values of a header in a request the stand-in recorded, by case-insensitive name."""
    return [v for k, v in record["headers"] if k.lower() == name]


# -- Anthropic Messages, the anthropic SDK ------------------------------------------------------

ANTHROPIC_TOOL = {
    "name": "search_web",
    "description": "Search the web",
    "input_schema": CITY_SCHEMA,
}
ANTHROPIC_CASES = {
    # (tools, tool_choice, the finding's code and path, the stand-in's error message)
    "choice-names-no-offered-tool": (
        [ANTHROPIC_TOOL],
        {"type": "tool", "name": "search.web"},
        "choice-not-in-tools",
        "tool_choice.name",
        "Tool 'search.web' not found in provided tools",
    ),
    "tool-name-with-a-dot": (
        [{**ANTHROPIC_TOOL, "name": "search.web"}],
        {"type": "tool", "name": "search.web"},
        "name-invalid-chars",
        "tools[0].name",
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
    ),
}


def anthropic_client(proxy):
    import anthropic

    http_client, sent = recording_client(anthropic)
    client = anthropic.Anthropic(
        base_url=proxy.url, api_key="test-not-a-key", max_retries=0, http_client=http_client
    )
    return client, sent


def anthropic_create(client, tools: list, tool_choice: dict):
    return client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=64,
        messages=[{"role": "user", "content": "Search the weather in Paris"}],
        tools=tools,
        tool_choice=tool_choice,
    )


@pytest.mark.needs_sdk
@pytest.mark.parametrize("case", sorted(ANTHROPIC_CASES))
def test_anthropic_observe_forwards_the_exact_bytes_and_logs_a_warning_with_the_code(
    mitmdump, mitmdump_binary, standin, level_printer, case
):
    import anthropic

    tools, choice, code, path, provider_message = ANTHROPIC_CASES[case]
    proxy = mitmdump("-s", str(level_printer), binary=mitmdump_binary)
    client, sent = anthropic_client(proxy)

    with pytest.raises(anthropic.BadRequestError) as excinfo:
        anthropic_create(client, tools, choice)

    assert excinfo.value.status_code == 400
    assert excinfo.value.body["error"]["message"] == provider_message
    assert len(sent) == 1
    assert [r["body"] for r in standin.requests] == sent
    prefix = f"level: WARNING POST 127.0.0.1/v1/messages: toolnames error: {code}: {path} "
    proxy.wait_for_log(prefix)
    assert annotations(proxy.log_text())[0].startswith(f"toolnames error: {code}: {path} ")
    assert len(toolnames_lines(proxy.log_text())) == 1


@pytest.mark.needs_sdk
@pytest.mark.parametrize("case", sorted(ANTHROPIC_CASES))
def test_anthropic_block_raises_the_sdks_bad_request_error_and_sends_nothing(
    mitmdump, mitmdump_binary, standin, case
):
    import anthropic

    tools, choice, code, path, _ = ANTHROPIC_CASES[case]
    proxy = mitmdump("--set", "toolnames_mode=block", binary=mitmdump_binary)
    client, _ = anthropic_client(proxy)

    with pytest.raises(anthropic.BadRequestError) as excinfo:
        anthropic_create(client, tools, choice)

    error = excinfo.value
    assert standin.requests == []
    assert error.status_code == 400
    assert error.body["type"] == "error"
    assert error.body["error"]["type"] == "invalid_request_error"
    assert error.body["error"]["message"].startswith(f"toolnames: {path} 'search.web'")
    assert "toolnames: " in str(error)
    proxy.wait_for_log("toolnames blocked")
    (line,) = annotations(proxy.log_text())
    assert line.startswith(f"toolnames blocked: {code}: {path} ")


@pytest.mark.needs_sdk
def test_anthropic_fix_points_the_choice_at_the_offered_tool_and_the_sdk_gets_the_tool_use(
    mitmdump, mitmdump_binary, standin
):
    tools, choice, *_ = ANTHROPIC_CASES["choice-names-no-offered-tool"]
    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)
    client, sent = anthropic_client(proxy)

    message = anthropic_create(client, tools, choice)

    (block,) = message.content
    assert block.type == "tool_use"
    assert block.name == "search_web"
    assert block.input == {"city": "Paris"}
    (request_sent,) = sent
    (received,) = standin.requests
    assert request_sent.count(b'"search.web"') == 1
    assert received["body"] == request_sent.replace(b'"search.web"', b'"search_web"')
    proxy.wait_for_log("toolnames fixed")
    assert annotations(proxy.log_text()) == [FIXED.format(path="tool_choice.name")]


# -- OpenAI Responses, the openai SDK -----------------------------------------------------------

RESPONSES_TOOL = {
    "type": "function",
    "name": "search_web",
    "description": "Search the web",
    "parameters": CITY_SCHEMA,
    "strict": False,
}
RESPONSES_CHOICES = {
    # (tool_choice naming search.web while search_web is offered, the path of that name)
    "function": ({"type": "function", "name": "search.web"}, "tool_choice.name"),
    "allowed-tools": (
        {
            "type": "allowed_tools",
            "mode": "required",
            "tools": [{"type": "function", "name": "search.web"}],
        },
        "tool_choice.tools[0].name",
    ),
}
NOT_FOUND = "Tool choice '{}' not found in 'tools' parameter."


def openai_client(proxy):
    import openai

    http_client, sent = recording_client(openai)
    client = openai.OpenAI(
        base_url=proxy.url + "/v1",
        api_key="sk-test-not-a-key",
        max_retries=0,
        http_client=http_client,
    )
    return client, sent


def responses_create(client, tool_choice: dict):
    return client.responses.create(
        model="gpt-4.1",
        input="Search the weather in Paris",
        tools=[RESPONSES_TOOL],
        tool_choice=tool_choice,
    )


@pytest.mark.needs_sdk
@pytest.mark.parametrize("shape", sorted(RESPONSES_CHOICES))
def test_responses_observe_forwards_the_exact_bytes_and_logs_a_warning_with_the_code(
    mitmdump, mitmdump_binary, standin, level_printer, shape
):
    import openai

    choice, path = RESPONSES_CHOICES[shape]
    proxy = mitmdump("-s", str(level_printer), binary=mitmdump_binary)
    client, sent = openai_client(proxy)

    with pytest.raises(openai.BadRequestError) as excinfo:
        responses_create(client, choice)

    assert excinfo.value.body["message"] == NOT_FOUND.format("search.web")
    assert excinfo.value.code is None  # the stand-in's error, not toolnames'
    assert len(sent) == 1
    assert [r["body"] for r in standin.requests] == sent
    line = (
        f"POST 127.0.0.1/v1/responses: toolnames error: choice-not-in-tools: {path} "
        "'search.web' (10 chars) names no offered tool; offered: 'search_web'; "
        "the provider rejected it too"
    )
    log = proxy.wait_for_log(f"level: WARNING {line}")
    assert toolnames_lines(log) == [line]


@pytest.mark.needs_sdk
@pytest.mark.parametrize("shape", sorted(RESPONSES_CHOICES))
def test_responses_block_raises_the_sdks_bad_request_error_and_sends_nothing(
    mitmdump, mitmdump_binary, standin, shape
):
    import openai

    choice, path = RESPONSES_CHOICES[shape]
    proxy = mitmdump("--set", "toolnames_mode=block", binary=mitmdump_binary)
    client, _ = openai_client(proxy)

    with pytest.raises(openai.BadRequestError) as excinfo:
        responses_create(client, choice)

    error = excinfo.value
    assert standin.requests == []
    assert error.status_code == 400
    assert error.code == "choice-not-in-tools"
    assert error.param == path
    assert error.body["message"].startswith(f"toolnames: {path} 'search.web'")
    proxy.wait_for_log("toolnames blocked")
    (line,) = annotations(proxy.log_text())
    assert line.startswith(f"toolnames blocked: choice-not-in-tools: {path} ")


@pytest.mark.needs_sdk
@pytest.mark.parametrize("shape", sorted(RESPONSES_CHOICES))
def test_responses_fix_points_the_choice_at_the_offered_tool_and_the_sdk_gets_the_call(
    mitmdump, mitmdump_binary, standin, shape
):
    choice, path = RESPONSES_CHOICES[shape]
    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)
    client, sent = openai_client(proxy)

    response = responses_create(client, choice)

    (call,) = response.output
    assert call.type == "function_call"
    assert call.name == "search_web"
    assert json.loads(call.arguments) == {"city": "Paris"}
    (request_sent,) = sent
    (received,) = standin.requests
    assert request_sent.count(b'"search.web"') == 1
    assert received["body"] == request_sent.replace(b'"search.web"', b'"search_web"')
    proxy.wait_for_log("toolnames fixed")
    assert annotations(proxy.log_text()) == [FIXED.format(path=path)]


@pytest.mark.needs_sdk
@pytest.mark.parametrize("mode", ["observe", "block"])
def test_responses_builtin_choice_without_that_tool_is_flagged_and_blocked(
    mitmdump, mitmdump_binary, standin, mode
):
    import openai

    proxy = mitmdump("--set", f"toolnames_mode={mode}", binary=mitmdump_binary)
    client, _ = openai_client(proxy)

    with pytest.raises(openai.BadRequestError) as excinfo:
        responses_create(client, {"type": "web_search_preview"})

    message = excinfo.value.body["message"]
    if mode == "observe":
        assert message == NOT_FOUND.format("web_search_preview")
        assert len(standin.requests) == 1
    else:
        assert standin.requests == []
        assert excinfo.value.code == "choice-not-in-tools"
        assert message.startswith("toolnames: tool_choice.type 'web_search_preview'")
    verb = "error" if mode == "observe" else "blocked"
    proxy.wait_for_log(f"toolnames {verb}")
    (line,) = annotations(proxy.log_text())
    assert line.startswith(f"toolnames {verb}: choice-not-in-tools: tool_choice.type ")


# -- Gemini, plain HTTP -------------------------------------------------------------------------

# Obviously fake, and shaped unlike a real key (AIza + 35 characters), so no scanner trips on it.
GEMINI_KEY = "fake-gemini-key"
GEMINI_HEADER_KEY = "fake-gemini-header-key"
GEMINI_PATH = "/v1beta/models/gemini-2.5-flash:generateContent"
GEMINI_BODY = {
    "contents": [{"role": "user", "parts": [{"text": "Search the weather in Paris"}]}],
    "tools": [{"functionDeclarations": [{"name": "search_web", "parameters": CITY_SCHEMA}]}],
    "toolConfig": {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["search.web"]}
    },
}
GEMINI_ALLOWED_PATH = "toolConfig.functionCallingConfig.allowedFunctionNames[0]"
# Where the key travels: the query (?key=), as the REST docs show it, the SDKs' header, or both.
GEMINI_CREDENTIALS = {"query": (True, False), "header": (False, True), "both": (True, True)}


@pytest.mark.parametrize("where", sorted(GEMINI_CREDENTIALS))
def test_gemini_key_never_reaches_the_saved_flow_but_reaches_the_provider(
    mitmdump, mitmdump_binary, mitmproxy_confdir, standin, tmp_path, where
):
    in_query, in_header = GEMINI_CREDENTIALS[where]
    query = f"?key={GEMINI_KEY}" if in_query else ""
    headers = {"x-goog-api-key": GEMINI_HEADER_KEY} if in_header else {}
    secrets = [GEMINI_KEY] * in_query + [GEMINI_HEADER_KEY] * in_header
    saved = tmp_path / "flagged.mitm"
    proxy = mitmdump("--set", f"toolnames_save={saved}", binary=mitmdump_binary)

    status, _, _ = post(proxy.url + GEMINI_PATH + query, GEMINI_BODY, headers)

    assert status == 400  # the stand-in, like Gemini, rejects the undeclared name
    # Redaction never touches the live flow: the provider got the credentials.
    (received,) = standin.requests
    assert received["path"] == GEMINI_PATH + query
    assert header_values(received, "x-goog-api-key") == list(headers.values())
    (flow,) = wait_for_flows(saved, 1)
    data = saved.read_bytes()
    assert [s for s in secrets if s.encode() in data] == []
    (finding,) = flow.metadata["toolnames"]["findings"]
    assert finding["code"] == "choice-not-in-tools"
    assert finding["path"] == GEMINI_ALLOWED_PATH
    assert flow.marked == ":warning:"
    assert flow.request.query.get_all("key") == [REDACTED] * in_query
    assert flow.request.headers.get_all("x-goog-api-key") == [REDACTED] * in_header
    proxy.stop()
    output = mitmdump_read(mitmdump_binary, mitmproxy_confdir, saved, "--set", "flow_detail=3")
    assert GEMINI_PATH in output
    assert REDACTED in output
    assert [s for s in secrets if s in output] == []


def test_gemini_block_answers_in_googles_error_shape(mitmdump, mitmdump_binary, standin):
    proxy = mitmdump("--set", "toolnames_mode=block", binary=mitmdump_binary)

    status, headers, body = post(proxy.url + GEMINI_PATH + f"?key={GEMINI_KEY}", GEMINI_BODY)

    assert standin.requests == []
    assert status == 400
    assert headers["content-type"].startswith("application/json")
    error = json.loads(body)
    assert list(error) == ["error"]
    assert error["error"]["code"] == 400
    assert error["error"]["status"] == "INVALID_ARGUMENT"
    assert error["error"]["message"].startswith(f"toolnames: {GEMINI_ALLOWED_PATH} 'search.web'")
    proxy.wait_for_log("toolnames blocked")
    (line,) = annotations(proxy.log_text())
    assert line.startswith(f"toolnames blocked: choice-not-in-tools: {GEMINI_ALLOWED_PATH} ")


# -- Bedrock Converse, plain HTTP ---------------------------------------------------------------

BEDROCK_PATH = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
LONG_NAME = "search_" + "w" * 58  # 65 characters: one over Bedrock's 64
BEDROCK_BODY = {
    "messages": [{"role": "user", "content": [{"text": "Search the weather in Paris"}]}],
    "toolConfig": {
        "tools": [{"toolSpec": {"name": LONG_NAME, "inputSchema": {"json": CITY_SCHEMA}}}]
    },
}
# Bedrock's rule is checked by the stand-in only behind a valid signature (as AWS does): the
# request is signed with the stand-in's test key, for the Host the stand-in will see.
BEDROCK_TOKEN = "test-session-token-not-a-credential"


def bedrock_headers(proxy_url: str) -> dict[str, str]:
    host = urllib.parse.urlsplit(proxy_url).netloc
    body = json.dumps(BEDROCK_BODY).encode()
    pairs = core_signed(
        BEDROCK_PATH,
        [("Host", host), ("Content-Type", "application/json")],
        body,
        Signer(token=BEDROCK_TOKEN),
    )
    return dict(pairs)


BEDROCK_TOOL_PATH = "toolConfig.tools[0].toolSpec.name"


def test_bedrock_observe_flags_a_too_long_name_and_saves_it_without_credentials(
    mitmdump, mitmdump_binary, standin, tmp_path
):
    saved = tmp_path / "flagged.mitm"
    # keep_host_header: reverse mode would otherwise send the Host the signature does not cover.
    proxy = mitmdump(
        "--set",
        f"toolnames_save={saved}",
        "--set",
        "keep_host_header=true",
        binary=mitmdump_binary,
    )
    sent = bedrock_headers(proxy.url)
    signature = sent["Authorization"].rpartition("Signature=")[2]

    status, headers, body = post(proxy.url + BEDROCK_PATH, BEDROCK_BODY, sent)

    # The stand-in, like Bedrock, rejects the name.
    assert status == 400
    assert headers["x-amzn-errortype"] == "ValidationException"
    assert "Member must have length less than or equal to 64" in json.loads(body)["message"]
    (received,) = standin.requests
    # Redaction never touches the live flow.
    for name in ("authorization", "x-amz-security-token"):
        assert header_values(received, name) == [sent[name.title()]]
    (flow,) = wait_for_flows(saved, 1)
    data = saved.read_bytes()
    assert signature.encode() not in data
    assert BEDROCK_TOKEN.encode() not in data
    assert flow.request.headers["authorization"] == REDACTED
    assert flow.request.headers["x-amz-security-token"] == REDACTED
    predicted, confirmed = flow.metadata["toolnames"]["findings"]
    assert (predicted["code"], predicted["path"]) == ("name-too-long", BEDROCK_TOOL_PATH)
    assert predicted["rule"] == "bedrock"
    assert (confirmed["code"], confirmed["path"]) == ("provider-rejected", BEDROCK_TOOL_PATH)
    assert confirmed["message"].endswith("; toolnames had predicted it (name-too-long)")
    proxy.wait_for_log("toolnames error")
    (line,) = annotations(proxy.log_text())
    assert line.startswith(f"toolnames error: name-too-long: {BEDROCK_TOOL_PATH} ")
    assert line.endswith("; the provider rejected it too")


def test_bedrock_block_answers_with_a_validation_exception(mitmdump, mitmdump_binary, standin):
    proxy = mitmdump("--set", "toolnames_mode=block", binary=mitmdump_binary)

    status, headers, body = post(proxy.url + BEDROCK_PATH, BEDROCK_BODY, bedrock_headers(proxy.url))

    assert standin.requests == []
    assert status == 400
    # botocore reads the error code up to the first ':' of this header.
    assert headers["x-amzn-errortype"].startswith("ValidationException")
    error = json.loads(body)
    assert list(error) == ["message"]
    assert error["message"].startswith(f"toolnames: {BEDROCK_TOOL_PATH} '{LONG_NAME}'")
    proxy.wait_for_log("toolnames blocked")
    (line,) = annotations(proxy.log_text())
    assert line.startswith(f"toolnames blocked: name-too-long: {BEDROCK_TOOL_PATH} ")


# -- Fix mode, Gemini and Bedrock -----------------------------------------------------------------

FIX_CASES = {
    # (path, body forcing search.web while search_web is offered, where the name sits,
    #  where the call's name and arguments are in the answer)
    "gemini": (
        GEMINI_PATH + f"?key={GEMINI_KEY}",
        GEMINI_BODY,
        GEMINI_ALLOWED_PATH,
        lambda answer: answer["candidates"][0]["content"]["parts"][0]["functionCall"],
        "args",
    ),
    "bedrock-converse": (
        BEDROCK_PATH,
        {
            **BEDROCK_BODY,
            "toolConfig": {
                "tools": [
                    {"toolSpec": {"name": "search_web", "inputSchema": {"json": CITY_SCHEMA}}}
                ],
                "toolChoice": {"tool": {"name": "search.web"}},
            },
        },
        "toolConfig.toolChoice.tool.name",
        lambda answer: answer["output"]["message"]["content"][0]["toolUse"],
        "input",
    ),
}


@pytest.mark.parametrize("api", sorted(FIX_CASES))
def test_fix_points_the_forced_name_at_the_offered_tool_and_the_provider_calls_it(
    mitmdump, mitmdump_binary, standin, api
):
    path, body, name_path, call_of, arguments_key = FIX_CASES[api]
    proxy = mitmdump("--set", "toolnames_mode=fix", binary=mitmdump_binary)

    status, _, answer = post(proxy.url + path, body)

    assert status == 200, answer
    call = call_of(json.loads(answer))
    assert call["name"] == "search_web"
    assert call[arguments_key] == {"city": "Paris"}
    (received,) = standin.requests
    sent = json.dumps(body).encode()
    assert received["body"] == sent.replace(b'"search.web"', b'"search_web"')
    proxy.wait_for_log("toolnames fixed")
    assert annotations(proxy.log_text()) == [FIXED.format(path=name_path)]


# -- Which rule is checked ----------------------------------------------------------------------


def chat_body(tool_name: str) -> dict:
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": tool_name, "parameters": CITY_SCHEMA}}],
    }


# Flagged under every rule (choice-without-tools): tool_choice "required" with no tools.
SENTINEL = {
    **{k: v for k, v in chat_body("get_weather").items() if k != "tools"},
    "tool_choice": "required",
}


def lines_after_sentinel(proxy) -> list[str]:
    """
    The addon's lines once a flagged request sent last has been logged. A line is logged when its
    flow completes, so a line for an earlier request would already be there: without this, an
    absent line could just be a late one.
    """
    post(proxy.url + "/v1/chat/completions", SENTINEL)
    proxy.wait_for_log("choice-without-tools")
    lines = annotations(proxy.log_text())
    assert lines[-1].startswith("toolnames error: choice-without-tools: ")
    return lines[:-1]


# Another loopback address than the proxy's own, so the two hosts can be told apart.
UPSTREAM_HOST = "127.0.0.2"


@pytest.fixture
def upstream_standin():
    """A stand-in provider on 127.0.0.2, while mitmdump listens on 127.0.0.1."""
    from standin import StandinProvider

    try:
        provider = StandinProvider(host=UPSTREAM_HOST).start()
    except OSError as e:  # 127.0.0.0/8 is all loopback on Linux, not on every system
        pytest.skip(f"cannot listen on {UPSTREAM_HOST}: {e}")
    try:
        yield provider
    finally:
        provider.stop()


@pytest.mark.parametrize(
    "rule_option, expected",
    [
        pytest.param(None, [], id="openai-rule-by-default"),
        pytest.param(f"{UPSTREAM_HOST}=portable", ["name-invalid-chars"], id="rule-for-upstream"),
        # In reverse mode mitmproxy sets the Host header to the upstream before the request
        # hook: the host a rule is chosen by is the provider's, not the proxy's.
        pytest.param("127.0.0.1=portable", [], id="rule-for-proxy-address-does-not-apply"),
    ],
)
def test_rule_set_for_the_providers_host_flags_a_dashed_name_the_openai_rule_allows(
    mitmdump, mitmdump_binary, upstream_standin, rule_option, expected
):
    args = ("--set", f"toolnames_rule={rule_option}") if rule_option else ()
    proxy = mitmdump(*args, upstream=upstream_standin.url, binary=mitmdump_binary)

    status, _, _ = post(proxy.url + "/v1/chat/completions", chat_body("get-weather"))

    assert status == 200  # the stand-in checks OpenAI's rule, which allows the dash
    assert len(upstream_standin.requests) == 1
    lines = lines_after_sentinel(proxy)
    assert [line.split(": ")[1] for line in lines] == expected
    if expected:
        (line,) = toolnames_lines(proxy.log_text())[:-1]
        assert line.startswith(f"POST {UPSTREAM_HOST}/v1/chat/completions: ")
        assert "'get-weather'" in line
        assert "outside rule portable" in line


@pytest.mark.parametrize(
    "rule_option, expected",
    [
        pytest.param(None, ["name-too-long"], id="openai-rule-by-default"),
        pytest.param("*=anthropic", ["provider-rejected"], id="anthropic-rule-for-every-host"),
    ],
)
def test_gateway_rule_accepts_a_100_char_name_that_the_openai_rule_rejects(
    mitmdump, mitmdump_binary, standin, rule_option, expected
):
    """
    A gateway (LiteLLM, OpenRouter) speaks chat completions but forwards to Anthropic, whose rule
    allows 128 characters: with `*=anthropic` toolnames predicts nothing. The stand-in behind
    the proxy validates as OpenAI itself does and rejects the name either way, so with the
    anthropic rule toolnames hears a rejection it did not predict: the provider's verdict, and
    a warning that its rule for this host disagrees (issue 15's drift check).
    """
    args = ("--set", f"toolnames_rule={rule_option}") if rule_option else ()
    proxy = mitmdump(*args, binary=mitmdump_binary)
    name = "n" * 100

    status, _, body = post(proxy.url + "/v1/chat/completions", chat_body(name))

    assert status == 400
    assert json.loads(body)["error"]["code"] == "string_above_max_length"
    lines = lines_after_sentinel(proxy)
    assert [line.split(": ")[1] for line in lines] == expected
    if expected == ["name-too-long"]:
        assert "is over the 64 characters allowed by rule openai" in lines[0]
        assert lines[0].endswith("; the provider rejected it too")
    elif expected:
        assert "toolnames had not predicted it (+1 more)" in lines[0]  # and rule-disagrees
