"""Reading a provider's rejection (rejections.py): every text below is a provider's own, from
the public source named beside it (docs/providers.md §20 lists them); the requests are ours,
built to hold the names and indexes the texts point at."""

import json

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from tests.testkit import keyed_bodies
from toolnames_core import bodies
from toolnames_core.formats import FORMATS
from toolnames_core.rejections import Rejection
from toolnames_core.rejections import read_rejections

PATTERN = "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."


def chat(*names: str, **extra) -> dict:
    return {
        "messages": extra.pop("messages", [{"role": "user", "content": "hi"}]),
        "tools": [{"type": "function", "function": {"name": n}} for n in names],
        **extra,
    }


def read(api: str, request: dict, answer: object, status: int = 400, sent=None) -> list:
    """What ``answer`` (a JSON value, or raw bytes) rejected in ``request``."""
    view, _ = bodies.read_request(json.dumps(request).encode(), FORMATS[api])
    content = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
    return read_rejections(FORMATS[api], status, content, view, sent)


def openai_error(message: str, param: str | None) -> dict:
    # OpenAI's error shape, as the issues below quote it whole.
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": "invalid_value"}}  # fmt: skip


# --- OpenAI Chat Completions, Azure, OpenAI-compatible servers --------------------------------


def test_openai_names_the_tool_in_param_and_text():
    # https://github.com/run-llama/llama_index/issues/16093
    said = f"Invalid 'tools[0].function.name': string does not match pattern. {PATTERN}"
    found = read("openai-chat", chat("Search Files"), openai_error(said, "tools[0].function.name"))
    assert found == [Rejection("tools[0].function.name", "Search Files", said, True, "tool")]


def test_openai_length_text_points_at_the_78th_tool():
    # https://github.com/mastra-ai/mastra/issues/6302
    said = (
        "Invalid 'tools[77].function.name': string too long. Expected a string with maximum "
        "length 64, but got a string with length 67 instead."
    )
    names = [f"tool_{i}" for i in range(77)] + ["x" * 67]
    (found,) = read("openai-chat", chat(*names), openai_error(said, "tools[77].function.name"))
    assert (found.path, found.name, found.tied) == ("tools[77].function.name", "x" * 67, True)


def test_openai_names_a_call_in_the_history():
    # https://github.com/mcp-use/mcp-use/pull/94
    said = f"Invalid 'messages[9].tool_calls[0].function.name': string does not match pattern. {PATTERN}"
    call = {"id": "c", "type": "function", "function": {"name": "$READFILE", "arguments": "{}"}}
    messages = [{"role": "user", "content": "hi"}] * 9 + [
        {"role": "assistant", "tool_calls": [call]}
    ]
    (found,) = read(
        "openai-chat",
        chat("ok", messages=messages),
        openai_error(said, "messages[9].tool_calls[0].function.name"),
    )
    assert (found.path, found.name, found.place) == (
        "messages[9].tool_calls[0].function.name",
        "$READFILE",
        "history",
    )


def test_azure_older_validator_quotes_the_value_and_a_dotted_path():
    # https://github.com/microsoft/semantic-kernel/issues/4447
    said = "'multi_tool_use.parallel' does not match '^[a-zA-Z0-9_-]{1,64}$' - 'messages.4.tool_calls.0.function.name'"
    call = {"id": "c", "type": "function", "function": {"name": "multi_tool_use.parallel"}}
    messages = [{"role": "user", "content": "hi"}] * 4 + [
        {"role": "assistant", "tool_calls": [call]}
    ]
    answer = {
        "error": {"message": said, "type": "invalid_request_error", "param": None, "code": None}
    }
    (found,) = read("openai-chat", chat("ok", messages=messages), answer)
    assert (found.path, found.name, found.provider_text) == (
        "messages[4].tool_calls[0].function.name",
        "multi_tool_use.parallel",
        said,
    )


def test_a_quoted_value_that_is_not_the_one_sent_there_is_not_tied():
    # The same Azure text against a request holding another name at that place.
    said = "'multi_tool_use.parallel' does not match '^[a-zA-Z0-9_-]{1,64}$' - 'messages.4.tool_calls.0.function.name'"
    call = {"id": "c", "type": "function", "function": {"name": "other_name"}}
    messages = [{"role": "user", "content": "hi"}] * 4 + [
        {"role": "assistant", "tool_calls": [call]}
    ]
    (found,) = read("openai-chat", chat("ok", messages=messages), {"error": {"message": said}})
    assert (found.tied, found.name) == (False, None)
    assert found.path == "messages.4.tool_calls.0.function.name"  # as the provider printed it


def test_openai_tool_choice_without_tools_is_the_choice():
    # https://github.com/dapr/dapr-agents/issues/248
    said = (
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
    )
    request = {"messages": [], "tool_choice": "required"}
    (found,) = read("openai-chat", request, openai_error(said, "tool_choice"))
    assert found == Rejection("tool_choice", None, said, True, "choice")


def test_vllm_wraps_pydantic_errors_in_its_message():
    # https://github.com/BerriAI/litellm/issues/6228 (the body as vLLM sent it)
    said = (
        "[{'type': 'value_error', 'loc': ('body',), 'msg': 'Value error, When using `tool_choice`, "
        "`tools` must be set.', 'input': {'messages': [{'role': 'user', 'content': 'Hello!'}], "
        "'model': 'mistralai/Mistral-Nemo-Instruct-2407', 'tools': None, 'tool_choice': 'auto'}, "
        "'ctx': {'error': ValueError('When using `tool_choice`, `tools` must be set.')}}]"
    )
    answer = {
        "object": "error",
        "message": said,
        "type": "BadRequestError",
        "param": None,
        "code": 400,
    }
    (found,) = read("openai-chat", {"messages": [], "tool_choice": "auto"}, answer)
    assert (found.path, found.tied, found.place) == ("tool_choice", True, "choice")


def test_vllm_names_the_choice_it_cannot_find():
    # https://github.com/vllm-project/vllm/pull/19239
    said = (
        "Invalid value for `function`: `do-something` in `tool_choice`! Correct usage: "
        '`{"type": "function", "function": {"name": "my_function"}}`'
    )
    request = chat(
        "do_something", tool_choice={"type": "function", "function": {"name": "do-something"}}
    )
    (found,) = read("openai-chat", request, {"object": "error", "message": said, "code": 400})
    assert found == Rejection("tool_choice.function.name", "do-something", said, True, "choice")


def test_vllm_says_the_named_choice_matches_no_tool():
    # vllm/entrypoints/openai/chat_completion/protocol.py, check_tool_usage:
    # https://github.com/vllm-project/vllm/blob/d5dba2d7b0ab9b98096560c69db7126b54b14d79/vllm/entrypoints/openai/chat_completion/protocol.py
    said = "The tool specified in `tool_choice` does not match any of the specified `tools`"
    request = chat(
        "search_web", tool_choice={"type": "function", "function": {"name": "search.web"}}
    )
    (found,) = read("openai-chat", request, {"object": "error", "message": said, "code": 400})
    assert (found.path, found.tied, found.place) == ("tool_choice", True, "choice")


def test_mistral_names_the_function_without_a_path():
    # https://github.com/Kochava-Studios/witsy/pull/164 (text); Mistral's error shape:
    # https://github.com/langchain-ai/langchain/pull/24668
    name = "add_newam_task_with_due_date___8c498bee-e833-49a9-8a88-0ab59fa26cb8"
    said = f"Function name was {name} but must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64."
    answer = {
        "object": "error",
        "message": said,
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    (found,) = read("openai-chat", chat("ok", name), answer)
    assert found == Rejection("tools[1].function.name", name, said, True, "tool")


def test_cohere_names_the_tool_it_rejects():
    # https://github.com/langflow-ai/langflow/issues/5465
    said = (
        "invalid request: tool names can only contain certain characters (A-Za-z0-9_) and can't "
        "begin with a digit (provided name: 'CurrentDate-get_current_date')."
    )
    (found,) = read("openai-chat", chat("CurrentDate-get_current_date"), {"message": said})
    assert (found.path, found.name) == ("tools[0].function.name", "CurrentDate-get_current_date")


def test_openrouter_carries_the_upstream_error_in_metadata_raw():
    # https://github.com/xinnan-tech/xiaozhi-esp32-server/issues/1465
    said = f"Invalid 'tools[8].function.name': string does not match pattern. {PATTERN}"
    upstream = openai_error(said, "tools[8].function.name")
    answer = {
        "error": {
            "message": "Provider returned error",
            "code": 400,
            "metadata": {"raw": json.dumps(upstream), "provider_name": "OpenAI"},
        }
    }
    names = [f"t{i}" for i in range(8)] + ["self.checkout"]
    (found,) = read("openai-chat", chat(*names), answer)
    assert (found.path, found.name) == ("tools[8].function.name", "self.checkout")


def test_lm_studio_rejects_the_object_choice():
    # https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/670
    said = "Invalid tool_choice type: 'object'. Supported string values: none, auto, required"
    request = chat(
        "get_weather", tool_choice={"type": "function", "function": {"name": "get_weather"}}
    )
    (found,) = read("openai-chat", request, {"error": said})
    assert (found.path, found.name, found.place) == ("tool_choice", None, "choice")


def test_llama_cpp_rejects_a_choice_in_plain_text():
    # common_chat_tool_choice_parse_oaicompat() throws "Invalid tool_choice: <value>":
    # https://github.com/ggml-org/llama.cpp/blob/85c9a5042b0693d4932d4e485377c516aafd1b30/common/chat.cpp
    said = b"Invalid tool_choice: multiply"
    # A bare name is no choice OpenAI's format knows: nothing in the view to tie it to.
    found = read("openai-chat", chat("multiply", tool_choice="multiply"), said)
    assert found == [Rejection("", None, said.decode(), False)]
    auto = read("openai-chat", chat("multiply", tool_choice="auto"), said)
    assert auto == [Rejection("tool_choice", None, said.decode(), True, "choice")]


def test_groq_rejecting_the_models_call_is_recorded_untied():
    # https://github.com/mastra-ai/mastra/issues/9688
    said = "Tool call validation failed: tool call validation failed: attempted to call tool 'listFiles' which was not in request.tools"
    answer = {"error": {"message": said, "type": "invalid_request_error"}}
    assert read("openai-chat", chat("list_files"), answer) == [Rejection("", None, said, False)]


# --- OpenAI Responses ---------------------------------------------------------------------------


def test_responses_names_a_top_level_tool():
    # https://github.com/openai/openai-dotnet/issues/441 and https://github.com/justrach/codegraff/issues/930
    said = f"Invalid 'tools[0].name': string does not match pattern. {PATTERN}"
    request = {"input": "hi", "tools": [{"type": "function", "name": "fs.read"}]}
    (found,) = read("openai-responses", request, openai_error(said, "tools[0].name"))
    assert (found.path, found.name, found.place) == ("tools[0].name", "fs.read", "tool")


def test_responses_names_a_call_in_the_input():
    # https://github.com/earendil-works/pi/issues/3108
    said = "Invalid 'input[226].name': empty string. Expected a string with minimum length 1"
    call = {"type": "function_call", "call_id": "c", "name": "", "arguments": "{}"}
    request = {"input": [{"role": "user", "content": "hi"}] * 226 + [call], "tools": []}
    (found,) = read("openai-responses", request, openai_error(said, "input[226].name"))
    assert (found.path, found.name, found.place) == ("input[226].name", "", "history")


def test_responses_choice_not_found_names_the_entry_not_just_the_param():
    # https://github.com/vercel/ai/blob/3e443371a6dc19e1123c412bafa968caaef7f2a2/packages/openai/src/responses/__fixtures__/openai-allowed-tools-web-search-error.1.json
    answer = {"error": {"message": "Tool choice 'web_search' not found in 'tools' parameter.", "type": "invalid_request_error", "param": "tool_choice", "code": None}}  # fmt: skip
    request = {
        "input": "hi",
        "tools": [{"type": "function", "name": "get_weather"}],
        "tool_choice": {"type": "function", "name": "web_search"},
    }
    (found,) = read("openai-responses", request, answer)
    assert (found.path, found.name, found.place) == ("tool_choice.name", "web_search", "choice")


# --- Anthropic Messages -------------------------------------------------------------------------


def anthropic_error(message: str) -> dict:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def test_anthropic_prints_a_pydantic_location_with_a_union_tag():
    # https://github.com/home-assistant/core/issues/147760
    said = "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
    request = {"messages": [], "tools": [{"name": "HassTurnOn.light", "input_schema": {}}]}
    (found,) = read("anthropic-messages", request, anthropic_error(said))
    assert found == Rejection("tools[0].name", "HassTurnOn.light", said, True, "tool")


def test_anthropic_length_text():
    # https://github.com/anthropics/claude-code/issues/96152
    said = "tools.18.custom.name: String should have at most 128 characters"
    tools = [{"name": f"t{i}", "input_schema": {}} for i in range(18)] + [{"name": "m" * 130}]
    (found,) = read("anthropic-messages", {"messages": [], "tools": tools}, anthropic_error(said))
    assert (found.path, found.name) == ("tools[18].name", "m" * 130)


def test_anthropic_duplicates_are_tied_to_the_one_name_offered_twice():
    # https://github.com/anthropics/claude-code/issues/10687
    said = "tools: Tool names must be unique."
    tools = [{"name": n, "input_schema": {}} for n in ("read", "write", "read")]
    (found,) = read("anthropic-messages", {"messages": [], "tools": tools}, anthropic_error(said))
    assert found == Rejection("tools[2].name", "read", said, True, "tool")


def test_a_duplicate_text_without_a_duplicate_in_the_request_is_not_tied():
    said = "tools: Tool names must be unique."  # as above
    tools = [{"name": n, "input_schema": {}} for n in ("read", "write")]
    (found,) = read("anthropic-messages", {"messages": [], "tools": tools}, anthropic_error(said))
    assert found == Rejection("", None, said, False)


def test_anthropic_tool_reference_name_is_recorded_untied_at_the_providers_path():
    # https://github.com/kenneth-liao/ai-launchpad/issues/6
    said = "messages.10.content.1.tool_result.content.0.tool_reference.tool_name: String should have at most 64 characters"
    (found,) = read("anthropic-messages", {"messages": [], "tools": []}, anthropic_error(said))
    assert found == Rejection(
        "messages.10.content.1.tool_result.content.0.tool_reference.tool_name", None, said, False
    )


# --- Gemini -------------------------------------------------------------------------------------

GEMINI_RULE = (
    "Invalid function name. Must start with a letter or an underscore. Must be alphameric "
    "(a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a maximum length of 64."
)


def gemini(*names: str) -> dict:
    return {"contents": [], "tools": [{"functionDeclarations": [{"name": n} for n in names]}]}


def test_gemini_lists_each_bad_declaration_on_its_own_line():
    # https://github.com/google-gemini/gemini-cli/issues/6704 (the body Gemini sent, inside gemini-cli's)
    lines = [
        f"* GenerateContentRequest.tools[0].function_declarations[{i}].name: {GEMINI_RULE}"
        for i in (37, 39, 40)
    ]
    answer = {
        "error": {"code": 400, "message": "\n".join(lines) + "\n", "status": "INVALID_ARGUMENT"}
    }
    names = [f"f{i}" for i in range(41)]
    for i in (37, 39, 40):
        names[i] = f"{i}_starts_with_a_digit"
    found = read("gemini", gemini(*names), answer)
    assert [(r.path, r.name) for r in found] == [
        (f"tools[0].functionDeclarations[{i}].name", f"{i}_starts_with_a_digit")
        for i in (37, 39, 40)
    ]
    assert found[0].provider_text == lines[0]  # each its own line of the message


def test_gemini_proto_variant_in_an_array_is_read_once():
    # https://github.com/google-gemini/gemini-cli/issues/7878
    said = (
        "The GenerateContentRequest proto is invalid:\n  * tools[0].function_declarations[12].name: "
        "[FIELD_INVALID] Invalid function name. Must start with a letter or an underscore. Must be "
        "a-z, A-Z, 0-9, or contain underscores, dots and dashes, with a maximum length of 64."
    )
    error = {"code": 400, "message": said, "errors": [{"message": said, "domain": "global", "reason": "badRequest"}], "status": "INVALID_ARGUMENT"}  # fmt: skip
    names = [f"f{i}" for i in range(12)] + ["mcp:server:tool"]
    (found,) = read("gemini", gemini(*names), [{"error": error}])
    assert (found.path, found.name) == ("tools[0].functionDeclarations[12].name", "mcp:server:tool")


def test_gemini_duplicate_names_the_declaration():
    # https://github.com/smarter-sh/smarter/issues/537
    answer = {"error": {"code": 400, "message": "Duplicate function declaration found: get_current_weather", "status": "INVALID_ARGUMENT"}}  # fmt: skip
    (found,) = read("gemini", gemini("get_current_weather", "x", "get_current_weather"), answer)
    assert (found.path, found.name) == (
        "tools[0].functionDeclarations[2].name",
        "get_current_weather",
    )


def test_gemini_function_response_name_in_the_history():
    # https://github.com/ollama/ollama/issues/14214 (Gemini's text, passed on by Ollama)
    said = "* GenerateContentRequest.contents[2].parts[0].function_response.name: Name cannot be empty."
    answer = {"StatusCode": 400, "Status": "400 Bad Request", "error": said}
    contents = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "", "response": {}}}]},
    ]
    (found,) = read("gemini", {**gemini("lookup"), "contents": contents}, answer)
    assert (found.path, found.name, found.place) == (
        "contents[2].parts[0].functionResponse.name",
        "",
        "history",
    )


# --- Bedrock Converse ---------------------------------------------------------------------------


def bedrock(*names: str, messages=()) -> dict:
    tools = [{"toolSpec": {"name": n, "inputSchema": {"json": {}}}} for n in names]
    return {"messages": list(messages), "toolConfig": {"tools": tools}}


def test_bedrock_counts_members_from_one_and_quotes_the_value():
    # https://github.com/aws-samples/remote-swe-agents/pull/457
    said = "1 validation error detected: Value 'Complete Session' at 'toolConfig.tools.22.member.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
    names = [f"t{i}" for i in range(21)] + ["Complete Session", "t22"]
    (found,) = read("bedrock-converse", bedrock(*names), {"message": said})
    assert (found.path, found.name) == ("toolConfig.tools[21].toolSpec.name", "Complete Session")


def test_bedrock_two_constraints_on_one_empty_name_are_one_rejection():
    # https://github.com/BerriAI/litellm/issues/24668
    said = "2 validation errors detected: Value '' at 'toolConfig.tools.1.member.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+; Value '' at 'toolConfig.tools.1.member.toolSpec.name' failed to satisfy constraint: Member must have length greater than or equal to 1"
    (found,) = read("bedrock-converse", bedrock("", "ok"), {"message": said})
    assert (found.path, found.name, found.tied) == ("toolConfig.tools[0].toolSpec.name", "", True)


def test_bedrock_history_name_without_its_value():
    # https://github.com/vercel/ai/blob/063230aca74480e4bc2d26558d65ddba82719b29/packages/amazon-bedrock/src/__fixtures__/bedrock-invalid-tool-name-validation-error.json
    said = "1 validation error detected: Value at 'messages.2.member.content.1.member.toolUse.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+"
    messages = [
        {"role": "user", "content": [{"text": "hi"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t", "name": "fs.read", "input": {}}}],
        },
    ]
    (found,) = read("bedrock-converse", bedrock("fs_read", messages=messages), {"message": said})
    assert (found.path, found.name, found.place) == (
        "messages[1].content[0].toolUse.name",
        "fs.read",
        "history",
    )


def test_bedrock_length_constraint():
    # https://github.com/awslabs/mcp/issues/3181
    name = "awslabs_cloudwatch_get_telemetry_evaluation_status_for_organization"
    said = f"1 validation error detected: Value '{name}' at 'toolConfig.tools.38.member.toolSpec.name' failed to satisfy constraint: Member must have length less than or equal to 64"
    names = [f"t{i}" for i in range(37)] + [name]
    (found,) = read("bedrock-converse", bedrock(*names), {"message": said})
    assert (found.path, found.name) == ("toolConfig.tools[37].toolSpec.name", name)


# --- not about names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        # Context length: https://github.com/chathub-dev/chathub/issues/126
        {"error": {"message": "This model's maximum context length is 4097 tokens. However, your messages resulted in 4294 tokens. Please reduce the length of the messages.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}},
        # Ollama, a model without tools: https://github.com/heshengtao/super-agent-party/issues/142
        {"error": {"message": "registry.ollama.ai/library/deepseek-r1:latest does not support tools", "type": "api_error", "param": None, "code": None}},
        # Mistral, a tool call id: https://github.com/langchain-ai/langchain/pull/24668
        {"object": "error", "message": "Tool call id was abc123 but must be a-z, A-Z, 0-9, with a length of 9.", "type": "invalid_request_error", "param": None, "code": None},
        # Mistral, a schema: https://github.com/vercel/ai/issues/6330
        {"detail": [{"type": "extra_forbidden", "loc": ["body", "tools", "list[Tool]", 0, "function", "type"], "msg": "Extra inputs are not permitted", "input": "function"}]},
        # Anthropic's tool_use id, through OpenRouter: https://github.com/tailcallhq/forgecode/issues/1142
        {"message": "Provider returned error", "metadata": {"raw": "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.5.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'\"}}", "provider_name": "Google"}},
        # Bedrock, no tools at all: https://github.com/Portkey-AI/gateway/issues/1124
        {"message": "1 validation error detected: Value at 'toolConfig.tools' failed to satisfy constraint: Member must have length greater than or equal to 1"},
        # Bedrock, a schema: https://github.com/kirodotdev/Kiro/issues/11026
        {"message": "The value at toolConfig.tools.26.toolSpec.inputSchema.json.type must be one of the following: object."},
        # vLLM started without a tool parser: https://github.com/openai/openai-agents-python/issues/2129
        {"object": "error", "message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', "type": "BadRequestError", "param": None, "code": 400},
        # toolnames' own block answer, read back from a saved flow.
        {"error": {"message": "toolnames: tools[0].function.name 'a.b' (3 chars) contains '.'", "param": "tools[0].function.name"}},
    ],
)  # fmt: skip
def test_rejections_about_something_else_are_not_name_rejections(answer):
    assert read("openai-chat", chat("a.b", "get_weather"), answer) == []


@pytest.mark.parametrize("status", [200, 401, 403, 404, 429, 500, 503, None])
def test_only_a_400_or_422_is_read_as_a_rejection(status):
    said = f"Invalid 'tools[0].function.name': string does not match pattern. {PATTERN}"  # as above
    answer = openai_error(said, "tools[0].function.name")
    assert read("openai-chat", chat("a.b"), answer, status=status) == []
    assert len(read("openai-chat", chat("a.b"), answer, status=422)) == 1


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff\xfe not text", b"<html>Bad Request</html>", b"[[[[" * 100, b'{"error": 3}'],
)
def test_bodies_that_say_nothing_of_names_are_no_rejection(content):
    assert read("openai-chat", chat("a.b"), content) == []


def test_fix_mode_aliases_are_judged_as_sent():
    # The provider judged the alias fix mode sent at tools[0]; the text is OpenAI's, as above.
    said = f"Invalid 'tools[0].function.name': string does not match pattern. {PATTERN}"
    sent = {("tools", 0, "function", "name"): "github_create_issue_e877a647"}
    (found,) = read(
        "openai-chat",
        chat("github.create_issue"),
        openai_error(said, "tools[0].function.name"),
        sent=sent,
    )
    assert found.name == "github_create_issue_e877a647"


ERROR_KEYS = ["error", "message", "Message", "param", "detail", "loc", "msg", "errors", "details", "fieldViolations", "field", "description", "metadata", "raw"]  # fmt: skip
ERROR_TEXTS = [
    "tools[0].function.name",
    "tools.0.custom.name",
    "toolConfig.tools.1.member.toolSpec.name",
    "tool_choice",
    f"Invalid 'tools[0].function.name': string does not match pattern. {PATTERN}",
    "Value at 'toolConfig.tools.1.member.toolSpec.name' failed to satisfy constraint: Member must satisfy regular expression pattern: [",
    "* GenerateContentRequest.tools[0].function_declarations[0].name: Invalid function name.",
    "tools: Tool names must be unique.",
    "Tool choice 'a.b' not found in 'tools' parameter.",
    '{"error": {"message": "Tool names must be unique."}}',
]


@given(
    answer=keyed_bodies(ERROR_KEYS, ERROR_TEXTS),
    api=st.sampled_from(["openai-chat", "anthropic-messages", "gemini", "bedrock-converse"]),
)
@settings(max_examples=300, deadline=None)
def test_whatever_an_error_body_holds_reading_it_never_raises(answer, api):
    requests = {
        "openai-chat": chat(
            "a.b", "a.b", tool_choice={"type": "function", "function": {"name": "x"}}
        ),
        "anthropic-messages": {"messages": [], "tools": [{"name": "a.b"}, {"name": "a.b"}]},
        "gemini": gemini("a.b", "1x"),
        "bedrock-converse": bedrock("a.b", ""),
    }
    for rejection in read(api, requests[api], answer):
        assert isinstance(rejection.provider_text, str) and len(rejection.provider_text) <= 300
        assert rejection.tied or rejection.name is None  # no guess
