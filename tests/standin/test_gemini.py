"""Gemini generateContent in the stand-in (standin.gemini): the provider's error texts, SSE and
JSON-array streams.
"""

from __future__ import annotations

import json

import pytest

from tests.standin.wire import EMPTY
from tests.standin.wire import GEMINI
from tests.standin.wire import GEMINI_RULE
from tests.standin.wire import GEMINI_STREAM
from tests.standin.wire import WEATHER
from tests.standin.wire import assert_rejected_like_the_provider
from tests.standin.wire import gemini_answer
from tests.standin.wire import gemini_error
from tests.standin.wire import gemini_request
from tests.standin.wire import post
from tests.standin.wire import sse

VALIDATION_CASES = {
    # §6 observed texts (plus one invented, clearly marked)
    "gemini-name-leading-digit": (
        GEMINI,
        gemini_request(tools={"get_weather": WEATHER, "1st_tool": EMPTY}),
        gemini_error(
            f"* GenerateContentRequest.tools[0].function_declarations[1].name: {GEMINI_RULE}\n"
        ),
    ),
    "gemini-every-bad-name-is-listed": (
        GEMINI,
        gemini_request(tools={"a b": EMPTY, "ok": EMPTY, "z" * 65: EMPTY}),
        gemini_error(
            f"* GenerateContentRequest.tools[0].function_declarations[0].name: {GEMINI_RULE}\n"
            f"* GenerateContentRequest.tools[0].function_declarations[2].name: {GEMINI_RULE}\n"
        ),
    ),
    "gemini-duplicate-declaration": (
        GEMINI,
        {
            "contents": [],
            "tools": [{"functionDeclarations": [{"name": "get_current_weather"}]}] * 2,
        },
        gemini_error("Duplicate function declaration found: get_current_weather"),
    ),
    "gemini-allowed-name-not-declared": (
        GEMINI,
        {
            **gemini_request(),
            "toolConfig": {
                "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["my.tool"]}
            },
        },
        gemini_error(
            "[standin-invented] * GenerateContentRequest.tool_config.function_calling_config."
            "allowed_function_names[0]: 'my.tool' does not match any function declaration.\n"
        ),
    ),
}


@pytest.mark.parametrize("case", VALIDATION_CASES)
def test_invalid_request_gets_the_providers_error(provider, case):
    assert_rejected_like_the_provider(provider, *VALIDATION_CASES[case])


def test_gemini_sse_stream_sends_one_chunk_per_event(provider):
    status, headers, content = post(
        provider, GEMINI_STREAM + "?alt=sse", gemini_request(choice="named")
    )
    assert status == 200 and headers["content-type"] == "text/event-stream"
    assert content.endswith(b"\r\n\r\n")
    chunks = [json.loads(d) for _, d in sse(content)]
    assert gemini_answer(chunks[-1]) == [("lookup", {})]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"


def test_gemini_stream_without_alt_sse_is_a_json_array(provider):
    status, headers, content = post(provider, GEMINI_STREAM, gemini_request())
    assert status == 200 and headers["content-type"] == "application/json"
    chunks = json.loads(content)
    assert "".join(gemini_answer(c) for c in chunks) == "hello"
