"""The request side's bookkeeping: each body is parsed, or scanned, once per exchange."""

import json

import pytest

from toolnames_core import analysis

TOOLS_BODY = json.dumps(
    {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "search_web"}}],
        "tool_choice": {"type": "function", "function": {"name": "search_web"}},
    }
).encode()
# Large enough for the verdict to be remembered rather than found again by a second scan.
PROSE_BODY = json.dumps({"messages": [{"role": "user", "content": "word " * 10_000}]}).encode()


def fresh(body: bytes) -> bytes:
    """Equal bytes in a new object (bytes(b) is b itself): the handoff goes by identity."""
    return bytes(bytearray(body))


@pytest.fixture
def counted(monkeypatch):
    seen = {"loads": [], "scans": []}
    real_loads, real_scan = analysis.json.loads, analysis._TOOL_KEY_START

    class CountingPattern:
        def search(self, content, pos=0):
            if pos == 0:  # a scan starts; later calls go on from a false start
                seen["scans"].append(content)
            return real_scan.search(content, pos)

    def loads(content, *args, **kwargs):
        seen["loads"].append(content)
        return real_loads(content, *args, **kwargs)

    monkeypatch.setattr(analysis.json, "loads", loads)
    monkeypatch.setattr(analysis, "_TOOL_KEY_START", CountingPattern())
    return seen


def test_a_body_with_tools_is_parsed_once_for_its_request_and_its_response(counted):
    body = fresh(TOOLS_BODY)
    assert not analysis.skip_request(body, "openai-chat")
    analysis.analyse_request(body, "openai-chat", "openai", scanned=True)
    findings = analysis.analyse_response(body, "openai-chat", [], complete=True)
    assert [f.code for f in findings] == ["response-ignored-choice"]
    assert counted["loads"].count(body) == 1
    assert counted["scans"].count(body) == 1


def test_a_large_body_without_tools_is_scanned_once_and_never_parsed(counted):
    body = fresh(PROSE_BODY)
    assert analysis.skip_request(body, "openai-chat")
    assert analysis.analyse_response(body, "openai-chat", [], complete=True) == []
    assert counted["scans"].count(body) == 1
    assert counted["loads"].count(body) == 0


def test_a_body_that_was_replaced_in_between_is_read_again(counted):
    body = fresh(TOOLS_BODY)
    analysis.analyse_request(body, "openai-chat", "openai")
    other = fresh(TOOLS_BODY)  # equal bytes, another object: e.g. set by another addon
    findings = analysis.analyse_response(other, "openai-chat", [], complete=True)
    assert [f.code for f in findings] == ["response-ignored-choice"]
    assert counted["loads"].count(body) == 2  # equal bytes compare equal: both parses


TOOL_KEYS = [
    "tools", "tool_choice", "functions", "function_call", "tool_calls", "custom_tool_call",
    "additional_tools", "toolConfig", "tool_config", "functionCall", "functionResponse",
    "function_response", "toolUse", "toolResult", "tool_use", "tool_result",
    "function_call_output",
]  # fmt: skip


@pytest.mark.parametrize("key", TOOL_KEYS)
def test_a_body_with_any_tool_key_anywhere_is_read(key):
    # Behind strings that start like a tool key but are not one.
    prose = {"content": ["toolbox", "tool", "functional", "function", "custom_tool_calls"]}
    body = json.dumps({"messages": [prose, {"nested": {key: None}}]}).encode()
    assert not analysis.nothing_to_check(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"messages": [{"role": "user", "content": "tool"}]}',
        b'{"messages": [{"content": "toolbox functions"}], "toolsy": 1, "function": 2}',
        b'{"content": "\\"tools\\" in a string"}',
    ],
)
def test_a_body_without_tool_keys_has_nothing_to_check(body):
    assert analysis.nothing_to_check(body)
