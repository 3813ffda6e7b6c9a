"""Arbitrary inputs for the property tests: request bodies, answers and stream events of
every registered format, seeded from the SDK fixtures and mutated, and bytes cut anywhere."""

from __future__ import annotations

import copy
import json
import os
from typing import NamedTuple

from hypothesis import settings
from hypothesis import strategies as st

from standin import formats as standin_formats
from standin.shared import ProviderError
from tests.testkit.core import api_for
from tests.testkit.disk import SDK_DIR
from tests.testkit.streams import aws_chunk
from tests.testkit.streams import aws_event
from toolnames_core.formats import FORMATS
from toolnames_core.framings import AWS_EVENT_STREAM
from toolnames_core.framings import AWS_EVENT_STREAM_BASE64
from toolnames_core.framings import FRAMINGS
from toolnames_core.framings import NDJSON
from toolnames_core.streams import EventDecoder

__all__ = [
    "APIS",
    "CONTENT_TYPES",
    "EVENTS",
    "EVENT_SEEDS",
    "FAST",
    "NASTY_BODIES",
    "PATHS",
    "REQUESTS",
    "REQUEST_SEEDS",
    "RESPONSES",
    "RESPONSE_SEEDS",
    "SCALE",
    "SDK_FIXTURES",
    "SEED_DROPS",
    "SeedDrop",
    "STREAMING_APIS",
    "STREAM_TYPES",
    "TOOLISH_KEYS",
    "TOOLISH_STRINGS",
    "any_text",
    "cut",
    "encode",
    "examples",
    "json_values",
    "mutants",
    "names",
    "places",
    "replaced",
    "request_bodies",
    "response_bodies",
    "scalars",
    "sse_bytes",
    "toolish_objects",
]

APIS = sorted(FORMATS)
STREAMING_APIS = sorted(api for api, fmt in FORMATS.items() if fmt.stream_collector)

# Paths that reach each API, as its record gives them (WireFormat.example_paths); a format
# without one makes tests/core/test_properties.py fail, naming it.
PATHS: dict[str, list[str]] = {
    api: list(fmt.example_paths) for api, fmt in FORMATS.items() if fmt.example_paths
}

STREAM_TYPES = tuple(t for framing in FRAMINGS.values() for t in framing.content_types)
CONTENT_TYPES = ("application/json", *STREAM_TYPES, "text/plain", "")

# Keys and string values the adapters and collectors look for, so that generated objects
# often take their deeper branches instead of stopping at the first type check.
TOOLISH_KEYS = (
    "tools",
    "tool_choice",
    "messages",
    "contents",
    "toolConfig",
    "tool_config",
    "input",
    "functions",
    "function_call",
    "stream",
    "system",
    "type",
    "function",
    "custom",
    "name",
    "namespace",
    "role",
    "content",
    "parts",
    "functionCall",
    "function_call",
    "functionDeclarations",
    "function_declarations",
    "functionCallingConfig",
    "function_calling_config",
    "allowedFunctionNames",
    "allowed_function_names",
    "mode",
    "allowed_tools",
    "toolSpec",
    "toolUse",
    "tool_use",
    "toolChoice",
    "tool",
    "auto",
    "any",
    "tool_calls",
    "arguments",
    "recipient_name",
    "tool_uses",
    "index",
    "delta",
    "choices",
    "message",
    "candidates",
    "output",
    "item",
    "content_block",
    "contentBlockStart",
    "start",
    "additional_tools",
    "server_label",
    "call_id",
    "id",
)
TOOLISH_STRINGS = (
    "function",
    "custom",
    "tool",
    "tool_use",
    "auto",
    "any",
    "none",
    "required",
    "AUTO",
    "ANY",
    "NONE",
    "VALIDATED",
    "assistant",
    "user",
    "model",
    "allowed_tools",
    "function_call",
    "custom_tool_call",
    "function_call_output",
    "content_block_start",
    "response.output_item.added",
    "multi_tool_use.parallel",
    "functions.search_web",
    "search.web",
    "search_web",
    "web_search_preview",
    "mcp",
    "namespace",
    "",
)

# Strings of every kind: lone surrogates included (JSON can carry them as \ud800 escapes).
any_text = st.text(st.characters(exclude_categories=()), max_size=12)
names = st.one_of(st.sampled_from(TOOLISH_STRINGS), any_text)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**300), max_value=10**300),
    st.floats(allow_nan=True, allow_infinity=True),
    names,
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(TOOLISH_KEYS), any_text), children, max_size=5),
    ),
    max_leaves=25,
)
toolish_objects = st.dictionaries(st.sampled_from(TOOLISH_KEYS), json_values, max_size=6)

# Bodies no generator is likely to hit, each of which once needed care somewhere.
NASTY_BODIES = (
    b"",
    b"{",
    b"null",
    b"[]",
    b'"tools"',
    b"\xef\xbb\xbf{}",  # a UTF-8 byte order mark
    b'{"tools": NaN, "tool_choice": -Infinity}',
    b'{"tools": [' + b"9" * 5000 + b"]}",  # past the int-to-str digit limit
    b'{"tools": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"messages": ' + b"[" * 2_000 + b"]" * 2_000 + b', "tools": []}',
    b'{"tools": [], "tools": {}}',
    b'{"tools": [{"type": "function", "function": {"name": "\\ud800"}}]}',
    b'{"tools": [{"type": "function", "function": {"name": "a\\u0000b"}}]}',
    '{"tools": [{"name": "caf\u00e9"}]}'.encode("utf-16"),
    b'{"tools": [{"name": "\xff\xfe"}]}',  # not UTF-8
)


def encode(value: object, ascii_only: bool) -> bytes:
    text = json.dumps(value, ensure_ascii=ascii_only, allow_nan=True)
    # Lone surrogates cannot be UTF-8: sent raw, they make a body that is not UTF-8.
    return text.encode("utf-8", "surrogatepass")


request_bodies = st.one_of(
    st.builds(encode, json_values, st.booleans()),
    st.builds(encode, toolish_objects, st.booleans()),
    st.binary(max_size=300),
    st.sampled_from(NASTY_BODIES),
)


@st.composite
def cut(draw, data: bytes) -> list[bytes]:
    """``data`` cut at arbitrary offsets (empty pieces included)."""
    offsets = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    pieces, start = [], 0
    for offset in offsets:
        pieces.append(data[start:offset])
        start = offset
    return [*pieces, data[start:]]


def sse_bytes(value: object, newline: bytes) -> bytes:
    return b"data: " + encode(value, True) + newline + newline


@st.composite
def response_bodies(draw) -> bytes:
    """Arbitrary bytes, or streams that are nearly right: events with arbitrary payloads."""
    kind = draw(
        st.sampled_from(
            ("bytes", "json", "sse", "aws", "aws-corrupt", "aws-chunks", "aws-bad-base64")
        )
    )
    if kind == "bytes":
        return draw(st.binary(max_size=400))
    if kind == "json":
        return encode(draw(st.one_of(json_values, toolish_objects)), draw(st.booleans()))
    events = draw(st.lists(st.one_of(toolish_objects, json_values), max_size=5))
    if kind == "sse":
        newline = draw(st.sampled_from((b"\n", b"\r\n", b"\r")))
        noise = draw(st.sampled_from((b"", b": ping\n\n", b"event: x\n", b"data: [DONE]\n\n")))
        return noise + b"".join(sse_bytes(e, newline) for e in events)
    if kind == "aws-chunks":
        return b"".join(aws_chunk(e) for e in events if _aws_encodable(e))
    if kind == "aws-bad-base64":
        # Bedrock InvokeModel's chunks, one of them not base64 (or no bytes at all).
        bad = draw(st.sampled_from(({"bytes": "not base64!"}, {"bytes": "eyJ"}, {"p": "x"})))
        good = [aws_chunk(e) for e in events if _aws_encodable(e)]
        at = draw(st.integers(0, len(good)))
        return b"".join([*good[:at], aws_event("chunk", bad), *good[at:]])
    raw = b"".join(
        aws_event(
            draw(st.sampled_from(("messageStart", "contentBlockStart", "contentBlockDelta", "x"))),
            e if isinstance(e, dict) else {"value": e},
        )
        for e in events
        if _aws_encodable(e)
    )
    if kind == "aws-corrupt" and raw:
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + bytes([raw[at] ^ draw(st.integers(1, 255))]) + raw[at + 1 :]
    return raw


def _aws_encodable(value: object) -> bool:
    # streamkit writes JSON with json.dumps: lone surrogates are fine there, NaN too.
    try:
        json.dumps(value).encode()
    except (ValueError, UnicodeEncodeError):
        return False
    return True


# --- seeds: real bodies and events, mutated -----------------------------------------------------------
#
# Arbitrary values rarely get past an adapter's first type check. Real request bodies (the SDK
# fixtures) and real stream events (the stand-in provider's, for the same requests), with a few
# subtrees replaced by arbitrary values, reach every branch with a wrong type at every depth.

SDK_FIXTURES = SDK_DIR


class SeedDrop(NamedTuple):
    """A fixture that gave no seed, and why: the property tests name these when a format
    is left without seeds (tests/core/test_properties.py)."""

    fixture: str
    reason: str


def _seeds() -> tuple[
    dict[str, list[dict]], dict[str, list[dict]], dict[str, list[bytes]], list[SeedDrop]
]:
    requests: dict[str, list[dict]] = {api: [] for api in APIS}
    events: dict[str, list[dict]] = {api: [] for api in APIS}
    responses: dict[str, list[bytes]] = {api: [] for api in APIS}
    drops: list[SeedDrop] = []
    for fixture in sorted(SDK_FIXTURES.glob("*.json")):
        # A fixture that is not JSON, or has no path, is a broken fixture: the error stops
        # the test kit's import (and so the run) instead of leaving a format unseeded.
        case = json.loads(fixture.read_text())
        api = api_for("POST", case["path"])
        if api not in requests or not isinstance(case.get("body"), dict):
            drops.append(SeedDrop(fixture.name, f"no JSON object body for a format ({api})"))
            continue
        requests[api].append(case["body"])
        found = standin_formats.route(case["path"])
        if found is None:
            drops.append(SeedDrop(fixture.name, f"the stand-in serves no {case['path']}"))
            continue
        fmt = found.format
        try:
            turn = fmt.decide(case["body"], case["path"], b"", "search_web,drop_tables")
            stream = b"".join(fmt.events(turn, case["body"], "alt=sse"))
            responses[api] += [stream, json.dumps(fmt.render(turn, case["body"])).encode()]
        except ProviderError as e:
            # The stand-in refuses the request as the provider would: no answer to seed from.
            # Any other exception is a bug in the stand-in or here, and is not caught.
            drops.append(SeedDrop(fixture.name, f"the stand-in answers {e.status}: {e}"))
            continue
        if FORMATS[api].framing is None:
            continue  # a format that never streams (Anthropic's batches) has no events
        decoder = EventDecoder(FORMATS[api].framing)
        events[api] += [*decoder.feed(stream), *decoder.close()]
    return requests, events, responses, drops


REQUEST_SEEDS, EVENT_SEEDS, RESPONSE_SEEDS, SEED_DROPS = _seeds()


def places(value: object, prefix: tuple = ()):
    """Every path in a JSON value, the value's own () first."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from places(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from places(child, (*prefix, i))


def replaced(value: object, path: tuple, new: object) -> object:
    """``value`` (changed in place) with ``new`` at ``path``; ``new`` itself for ()."""
    if not path:
        return new
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return value


@st.composite
def mutants(draw, seeds: list) -> object:
    """A seed with one to three subtrees replaced by arbitrary JSON values."""
    value = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(places(value))))
        value = replaced(value, path, draw(json_values))
    return value


def _requests(api: str) -> st.SearchStrategy[bytes]:
    options = [request_bodies]
    if REQUEST_SEEDS[api]:
        options.append(st.builds(encode, mutants(REQUEST_SEEDS[api]), st.booleans()))
        options.append(st.builds(encode, st.sampled_from(REQUEST_SEEDS[api]), st.booleans()))
    return st.one_of(options)


def _events(api: str) -> st.SearchStrategy[dict]:
    options = [toolish_objects, st.dictionaries(any_text, json_values, max_size=4)]
    if EVENT_SEEDS[api]:
        options.append(mutants(EVENT_SEEDS[api]).filter(lambda e: isinstance(e, dict)))
    return st.one_of(options)


@st.composite
def _responses(draw, api: str) -> bytes:
    """Generic response bytes, or this format's real streams and bodies, mutated or whole."""
    kind = draw(st.sampled_from(("generic", "events", "seed")))
    if kind == "generic" or not EVENT_SEEDS[api]:
        return draw(response_bodies())
    if kind == "events":
        events = draw(st.lists(_events(api), max_size=8))
        if FORMATS[api].framing is AWS_EVENT_STREAM:
            return b"".join(
                aws_event(*next(iter(e.items()))) if len(e) == 1 else aws_event("x", e)
                for e in events
                if _aws_encodable(e)
            )
        if FORMATS[api].framing is AWS_EVENT_STREAM_BASE64:
            return b"".join(aws_chunk(e) for e in events if _aws_encodable(e))
        if FORMATS[api].framing is NDJSON:
            return b"".join(json.dumps(e).encode() + b"\n" for e in events)
        return b"".join(sse_bytes(e, b"\n") for e in events)
    raw = draw(st.sampled_from(RESPONSE_SEEDS[api]))
    if raw and draw(st.booleans()):
        at = draw(st.integers(0, len(raw) - 1))
        raw = raw[:at] + draw(st.binary(max_size=3)) + raw[at + 1 :]
    return raw


REQUESTS = {api: _requests(api) for api in APIS}
EVENTS = {api: _events(api) for api in APIS}
RESPONSES = {api: _responses(api) for api in APIS}


# Sized for the normal suite (a few seconds per format); TOOLNAMES_PROPERTY_SCALE=20 digs deeper.
SCALE = max(1, int(os.environ.get("TOOLNAMES_PROPERTY_SCALE", "1")))


def examples(n: int, **kwargs) -> settings:
    # No health check is suppressed: one that fires (a strategy that filters most draws, data
    # too slow or too large to make) means the property ran on fewer or smaller examples than
    # it says, and should fail. The deadline is off: an example's time depends on its body
    # (up to 200 kB) and the machine's load, and a time limit is not what these test.
    return settings(max_examples=n * SCALE, deadline=None, **kwargs)


FAST = examples(30)
