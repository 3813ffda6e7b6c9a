"""A request that carries tools to a path no format claims: found by the formats' own offer
keys, and said why it was not checked."""

import base64
import json

import pytest

from tests.testkit import SDK_DIR
from tests.testkit import api_for
from toolnames_core.formats import FORMATS
from toolnames_core.readers import READERS
from toolnames_core.unclaimed import MAX_CONTAINERS
from toolnames_core.unclaimed import OFFER_KEYS
from toolnames_core.unclaimed import offered_keys
from toolnames_core.unclaimed import unchecked_text

SDK_FIXTURES = sorted(SDK_DIR.glob("*.json"))


def test_the_offer_keys_are_every_formats_own():
    assert set(OFFER_KEYS) == {key for fmt in FORMATS.values() for key in fmt.offer_keys}
    assert {"tools", "functions", "toolConfig"} <= set(OFFER_KEYS)


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
@pytest.mark.parametrize("fixture", SDK_FIXTURES, ids=[f.stem for f in SDK_FIXTURES])
def test_a_body_an_sdk_sent_carries_tools_exactly_when_its_adapter_reads_tools(fixture, reader):
    # The oracle is the format's adapter: the same body sent to a path no format claims
    # is said to carry tools if and only if, at its own path, it offers some.
    case = json.loads(fixture.read_text(encoding="utf-8"))
    if not isinstance(case.get("body"), dict):
        pytest.fail(f"{fixture.name} has no JSON object body")
    fmt = FORMATS[api_for("POST", case["path"])]
    content = json.dumps(case["body"]).encode()
    keys = offered_keys(content, reader)
    # Another format's key may be there too (Gemini's toolConfig is its choice, Bedrock's
    # offer): any offer key says the body carries tools.
    assert bool(set(keys) & set(fmt.offer_keys)) == bool(fmt.read_request(case["body"]).tools)


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
@pytest.mark.parametrize(
    "content",
    [
        b'{"messages": [{"role": "user", "content": "hi"}]}',
        b'{"tools": []}',  # offers nothing
        b'{"tools": null, "functions": {}}',
        b'{"messages": [{"role": "user", "content": "list the \\"tools\\" you have"}]}',
        b'{"input": {"tools": ["a"]}}',  # words, not tools, below the top level
        b'{"a": {"b": {"c": {"d": {"e": {"tools": [{"name": "a"}]}}}}}}',  # too deep to look
        b'{"input": {"invokeModel": {"body": "not base64!"}}}',
        b'[{"tools": [{"name": "a"}]}]',
        b'{"tools": [{"name": "a"}]',  # cut short
        b"tools=a",
        b"",
        b'"tools"',
    ],
)
def test_a_body_that_offers_no_tools_carries_none(content, reader):
    assert offered_keys(content, reader) == ()


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_every_offer_key_at_the_top_level_is_named_in_the_order_of_the_formats(reader):
    body = {key: [{"name": "a"}] for key in reversed(OFFER_KEYS)}
    assert offered_keys(json.dumps(body).encode(), reader) == OFFER_KEYS


def test_the_text_names_what_was_carried_where_and_what_toolnames_reads():
    text = unchecked_text("post", "/v1/chat?api_key=secret", ("tools", "toolConfig"))
    assert text.startswith("toolnames did not check this request")
    assert '("tools", "toolConfig")' in text
    assert "POST /v1/chat " in text and "secret" not in text
    for fmt in FORMATS.values():
        assert fmt.path_text in text


def carried(body: dict) -> dict:
    encoded = base64.b64encode(json.dumps(body).encode()).decode()
    return {"input": {"invokeModel": {"body": encoded}}}


TOOLS = [{"name": "a.b", "input_schema": {}}]


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
@pytest.mark.parametrize(
    "body, where",
    [
        ({"params": {"tools": TOOLS}}, ("params.tools",)),
        ({"request": {"body": {"toolConfig": {"tools": TOOLS}}}}, ("request.body.toolConfig",)),
        ({"batch": [{"id": 1}, {"params": {"functions": TOOLS}}]}, ("batch[1].params.functions",)),
        ({"a": {"b": {"c": {"d": {"tools": TOOLS}}}}}, ("a.b.c.d.tools",)),
        # Bedrock's count-tokens of a model toolnames does not read: inside the base64.
        (carried({"tools": TOOLS}), ("input.invokeModel.body.tools",)),
        (carried({"params": {"tools": TOOLS}}), ("input.invokeModel.body.params.tools",)),
    ],
    ids=["params", "body-toolconfig", "batch-entry", "depth-4", "base64", "base64-nested"],
)
def test_tools_below_the_top_level_are_found_where_they_sit(body, where, reader):
    assert offered_keys(json.dumps(body).encode(), reader) == where


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_the_search_below_the_top_opens_a_bounded_number_of_containers(reader):
    # Tools past the budget of containers are not looked for: a huge body costs its parse.
    many = {f"k{i}": {"x": 1} for i in range(MAX_CONTAINERS)}
    late = {**many, "z": {"tools": TOOLS}}
    assert offered_keys(json.dumps(late).encode(), reader) == ()
    early = {"z": {"tools": TOOLS}, **many}
    assert offered_keys(json.dumps(early).encode(), reader) == ("z.tools",)


def test_the_text_names_the_paths_below_the_top():
    text = unchecked_text("POST", "/llm/run", ("request.params.tools",))
    assert '("request.params.tools")' in text
