"""What every adapter is made of (formats/base.py), the explicit list of adapters, and the
lookup of a request's format (format_for), read from the records."""

import json
import pkgutil

import pytest

from tests.testkit import SDK_DIR
from toolnames_core import formats
from toolnames_core.formats import FORMATS
from toolnames_core.formats import format_for
from toolnames_core.formats import format_named
from toolnames_core.formats.base import BlockResponse
from toolnames_core.formats.base import read_once
from toolnames_core.model import Finding
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.rules import RULES

# The modules in formats/ that are no adapter: what the adapters share.
SHARED = {"base", "openai_common"}


def test_every_adapter_module_is_in_the_table_once():
    adapters = {m.name for m in pkgutil.iter_modules(formats.__path__)} - SHARED
    assert {FORMATS[api].read_request.__module__.rsplit(".", 1)[1] for api in FORMATS} == adapters
    assert len(FORMATS) == len(adapters)


def test_a_block_answer_is_a_named_record():
    answer = BlockResponse(400, {"content-type": "application/json"}, b"{}")
    assert answer.status == 400 and answer.body == b"{}"


# -- how a request is recognised: format_for, from the records' own paths ----------------------

EXAMPLES = [(path, fmt) for fmt in FORMATS.values() for path in fmt.example_paths]


@pytest.mark.parametrize("path, fmt", EXAMPLES, ids=[f"{f.api}:{p}" for p, f in EXAMPLES])
def test_every_example_path_of_a_format_reaches_that_format_and_only_it(path, fmt):
    assert format_for("POST", path) is fmt
    assert [other.api for other in FORMATS.values() if other.matches("POST", path)] == [fmt.api]


@pytest.mark.parametrize("fmt", FORMATS.values(), ids=list(FORMATS))
def test_every_format_gives_example_paths_a_rule_a_path_text_and_methods(fmt):
    assert fmt.example_paths and fmt.path_text and fmt.methods
    assert fmt.rule in RULES
    assert format_named(fmt.api) is fmt


SDK_FIXTURES = sorted(SDK_DIR.glob("*.json"))


@pytest.mark.parametrize("fixture", SDK_FIXTURES, ids=[f.stem for f in SDK_FIXTURES])
def test_paths_the_sdks_send_reach_the_format_the_fixture_is_named_after(fixture):
    # Fixtures are named <api>-<case>.json, captured from the official SDKs.
    data = json.loads(fixture.read_text(encoding="utf-8"))
    path = data["path"] + (f"?{data['query']}" if data.get("query") else "")
    (expected,) = [api for api in FORMATS if fixture.stem.startswith(api)]
    assert format_for(data["method"], path) is FORMATS[expected]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/completions",
        "/v1/embeddings",
        "/v1/models",
        "/v1/models?next=/v1/chat/completions",
        "/v1/chat/completions/chatcmpl-123",  # updating a stored completion
        "/v1/responses/resp_123/cancel",
        # Vertex AI: other publishers' rawPredict bodies are not Anthropic's, and another verb
        "/v1/projects/p/locations/us-central1/publishers/mistralai/models/mistral-large:rawPredict",
        "/v1/projects/p/locations/us-central1/publishers/meta/models/llama:streamRawPredict",
        "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-x:predict",
        "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-x:rawPredict/more",
        "/v1/chat",  # Cohere v1 (v2 and its OpenAI-compatible API are read)
        "/api/generate",  # Ollama's generate takes no tools
        "/v1beta/models/gemini-2.5-flash:countTokens",
        "/v1beta/models/gemini-2.5-flash:embedContent",
        # InvokeModel of models whose bodies are not Anthropic's (Llama, Nova, Mistral).
        "/model/meta.llama3-70b-instruct-v1:0/invoke",
        "/model/amazon.nova-pro-v1%3A0/invoke-with-response-stream",
        "/model/mistral.mistral-large-2402-v1:0/invoke",
        "/model/anthropic.claude-v2/invoke/extra",
        "/model/x/converse/extra",
        "/converse",
        "/",
        "",
    ],
)
def test_no_format_claims_other_endpoints(path):
    assert format_for("POST", path) is None


def test_a_path_asked_again_gets_the_same_answer_whatever_its_query(monkeypatch):
    monkeypatch.setattr(formats, "_spoken", {})
    for fmt in FORMATS.values():
        for path in fmt.example_paths:
            bare = path.partition("?")[0]
            for asked in (path, f"{bare}?key=one", f"{bare}?key=two", path):
                assert format_for("POST", asked) is fmt
                assert format_for("GET", asked) is (fmt if "GET" in fmt.methods else None)
    # What is remembered is the path without its query: an API key in it is never kept.
    assert not any("?" in path for _, path in formats._spoken)
    assert format_for("POST", "/v1/chat/completions/") is FORMATS["openai-chat"]
    assert format_for("POST", "/v1/chat/completions/x") is None


def test_paths_remembered_are_bounded(monkeypatch):
    monkeypatch.setattr(formats, "_spoken", {})
    for i in range(formats._MAX_SPOKEN + 10):
        assert format_for("POST", f"/v1/things/{i}") is None
    assert len(formats._spoken) <= formats._MAX_SPOKEN
    assert format_for("POST", "/v1/chat/completions") is FORMATS["openai-chat"]


@pytest.mark.parametrize("fmt", FORMATS.values(), ids=list(FORMATS))
def test_a_format_reads_only_its_methods(fmt):
    others = [
        m for m in ("GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH") if m not in fmt.methods
    ]
    assert others
    for method in others:
        assert format_for(method, fmt.example_paths[0]) is None
        assert not fmt.matches(method, fmt.example_paths[0])


def test_the_method_is_matched_whatever_its_case():
    (path, fmt), *_ = EXAMPLES
    assert format_for("post", path) is fmt and fmt.matches("post", path)


def test_an_unknown_format_id_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown API 'nope'; known APIs: openai-chat"):
        format_named("nope")


def test_the_same_tools_again_are_read_once_and_shared_as_they_were_read():
    # The fast reader hands the same decoded tools again for the same bytes: a format's
    # reader of its tools runs once for them (issue 25), and every view gets what it added.
    calls = []

    def read(tools, view, suffix=""):
        calls.append(tools)
        view.tools_given = True
        for i, name in enumerate(tools):
            view.tools.append(NameRef(name + suffix, ("tools", i)))
        view.problems.append(Finding("tool-malformed", "warning", "tools", f"{len(tools)}"))
        return len(tools)

    tools = ["a", "b", *"cdefgh"]  # eight: fewer are read each time (below)
    views = [RequestView("api") for _ in range(7)]
    assert read_once(read, tools, views[0]) == read_once(read, tools, views[1]) == 8
    assert calls == [tools] and views[1] == views[0] and views[1].tools_given
    assert views[1].tools[0] is views[0].tools[0]
    # Another value (even an equal one), other arguments, another reader or another API:
    # read as it is.
    read_once(read, list(tools), views[2])
    read_once(read, tools, views[3], "!")
    read_once(read, tools, views[6], "?")
    read_once(lambda tools, view: read(tools, view, "?"), tools, views[4])
    other_api = RequestView("other")
    read_once(read, tools, other_api)
    assert len(calls) == 6 and other_api.api == "other"
    assert [t.name for t in views[3].tools][:2] == ["a!", "b!"]
    assert [t.name for t in views[4].tools] == [t.name for t in views[6].tools]
    assert [t.name for t in views[6].tools][:2] == ["a?", "b?"]
    # Added after what the view holds, which stays.
    views[5].tools.append(NameRef("first", ("x",)))
    read_once(read, tools, views[5])
    assert [t.name for t in views[5].tools][:3] == ["first", "a", "b"]
    # A few tools are read each time: keeping them costs more than reading them.
    few, short = RequestView("api"), tools[:7]
    read_once(read, short, few)
    read_once(read, short, few)  # the same list again
    assert calls[-2:] == [short] * 2 and len(few.tools) == 14


def test_the_tools_read_lately_are_kept_by_when_they_were_last_used(monkeypatch):
    from toolnames_core.formats import base

    # A client whose tools are read every request keeps them, whatever others come between.
    monkeypatch.setattr(base, "_read_lately", [])
    calls = []

    def read(tools, view):
        calls.append(tools)

    lists = [[i] * base._READ_ONCE_FROM for i in range(base._MAX_READ_LATELY + 1)]
    for tools in lists[:-1]:
        read_once(read, tools, RequestView("api"))
    read_once(read, lists[0], RequestView("api"))  # used again: now the last used
    read_once(read, lists[-1], RequestView("api"))  # one more: the least lately used goes
    assert calls == lists
    read_once(read, lists[0], RequestView("api"))
    assert calls == lists  # kept
    read_once(read, lists[1], RequestView("api"))
    assert calls == [*lists, lists[1]]  # gone, read again
