"""The scan (scanner.run): every format found by its content and read, every exchange checked by
the addon's own code, an incomplete scan told apart from a verdict.
"""

import base64
import gzip
import json
import os
import subprocess
import zlib
from pathlib import Path

import pytest
from mitmproxy import http
from mitmproxy import io
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from harness.inprocess import running
from harness.mitmdump import ADDON_SCRIPT
from samples import recordings as samples
from scanner import cli
from scanner import run
from tests.testkit import BAD_CASE_FINDINGS
from tests.testkit import FORMAT_OF
from tests.testkit import SDK_DIR
from tests.testkit import WRITERS
from tests.testkit import bad_flows
from tests.testkit import big_flagged_flow
from tests.testkit import cut_file
from tests.testkit import exchange_for
from tests.testkit import measured_scan
from tests.testkit import run_scan
from tests.testkit import scan_found
from tests.testkit import scan_json


@pytest.mark.parametrize("name", WRITERS)
def test_every_format_reports_every_bad_case(capsys, recordings, name):
    code, rows, err = scan_json(capsys, recordings[name])

    assert scan_found(rows) == sorted(BAD_CASE_FINDINGS)
    assert code == 1
    assert {r["format"] for r in rows} == {FORMAT_OF[name]}
    assert "7 recorded exchanges, 6 LLM API calls checked: 7 errors, 0 warnings, 0 info" in err


def test_other_wire_formats_go_through_the_same_checks(capsys, tmp_path):
    body = json.loads((SDK_DIR / "anthropic-messages-tools.json").read_text())["body"]
    body["tools"][0]["name"] = "weather.get"
    flow = samples.chat_flow("anthropic", body, host="api.anthropic.com", path="/v1/messages")
    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "a.mitm", [flow]))

    assert [(r["api"], r["rule"], r["code"], r["path"]) for r in rows] == [
        ("anthropic-messages", "anthropic", "name-invalid-chars", "tools[0].name")
    ]


@pytest.mark.parametrize(
    "fixture, host, api, where",
    [
        (
            "anthropic-vertex-tool-choice-tool",
            "us-east5-aiplatform.googleapis.com",
            "anthropic-vertex",
            "tools[1].name",
        ),
        (
            "anthropic-vertex-count-tokens",
            "aiplatform.googleapis.com",
            "anthropic-vertex",
            "tools[1].name",
        ),
        (
            "anthropic-batches-two-requests",
            "api.anthropic.com",
            "anthropic-batches",
            "requests[1].params.tools[1].name",
        ),
    ],
)
def test_claude_on_vertex_and_batches_are_scanned_under_anthropics_rule(
    capsys, tmp_path, fixture, host, api, where
):
    sdk = json.loads((SDK_DIR / f"{fixture}.json").read_text())
    body = sdk["body"]
    tools = body["requests"][1]["params"]["tools"] if "requests" in body else body["tools"]
    tools[1]["name"] = "kb.search"
    flow = samples.chat_flow("anthropic", body, host=host, path=sdk["path"])
    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "a.mitm", [flow]))

    # Google's hosts give generateContent the Gemini rule; Claude's rawPredict gets Anthropic's.
    assert [(r["api"], r["rule"], r["code"], r["path"]) for r in rows] == [
        (api, "anthropic", "name-invalid-chars", where)
    ]


def _cohere_stream(name: str) -> bytes:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": ""}}
    events = [
        {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
        {"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": call}}},
        {"type": "tool-call-end", "index": 0},
        {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}},
    ]
    lines = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


@pytest.mark.parametrize("writer", [samples.write_flows, samples.write_har], ids=["mitm", "har"])
def test_cohere_v2_is_scanned_under_coheres_rule_with_its_streamed_calls(capsys, tmp_path, writer):
    # The cohere SDK's own request, with a dashed name (Cohere allows no dash) and a stream
    # calling a tool it never offered (its name in the tool-call-start event).
    sdk = json.loads((SDK_DIR / "cohere-chat-stream.json").read_text())
    body = sdk["body"]
    body["tools"][1]["function"]["name"] = "kb-search"
    flow = samples.chat_flow(
        "cohere",
        body,
        _cohere_stream("drop_tables"),
        content_type="text/event-stream",
        host="api.cohere.com",
        path=sdk["path"],
    )
    _, rows, _ = scan_json(capsys, writer(tmp_path / "a.file", [flow]))

    assert [(r["api"], r["rule"], r["code"], r["path"]) for r in rows] == [
        ("cohere-chat", "cohere", "name-invalid-chars", "tools[1].function.name"),
        (
            "cohere-chat",
            "cohere",
            "response-unknown-tool",
            "events[1].delta.message.tool_calls.function.name",
        ),
        # The recorded stream is a 200: Cohere took the name its rule rejects.
        ("cohere-chat", "cohere", "rule-disagrees", "tools[1].function.name"),
    ]


@pytest.mark.parametrize(
    "content, name, message",
    [
        (os.urandom(4096), "random.bin", "not a mitmproxy flow file, HAR file or cassette"),
        (
            b"\x00\x01garbage" * 100,
            "garbage.mitm",
            "not a readable mitmproxy flow file: not a tnetstring",
        ),
        (
            b'{"name": "toolnames", "version": "1"}',
            "package.json",
            "not a readable HAR file or JSON cassette: a JSON document with no log.entries",
        ),
        (b"", "empty.har", "not a readable HAR file or JSON cassette: not a JSON object"),
        (
            b"steps:\n- run: make\n",
            "ci.yaml",
            "not a readable cassette: YAML without an interactions list",
        ),
    ],
    ids=["random-bytes", "garbage-named-mitm", "json-not-har", "empty-har", "yaml-not-cassette"],
)
def test_exit_2_for_a_file_that_is_not_traffic(tmp_path, content, name, message):
    path = tmp_path / name
    path.write_bytes(content)

    result = run_scan(path)

    assert result.returncode == 2
    assert f"scan: {path}: {message}" in result.stderr
    assert "1 file (1 unreadable)" in result.stderr


@pytest.mark.parametrize(
    "name, message",
    [
        ("flows.mitm", r"truncated after 3 flows: the file ends inside flow 4 (it declares"),
        ("traffic.har", "truncated after 3 entries: the JSON ends inside log.entries[3]"),
        ("cassette.yaml", "truncated after 3 interactions: invalid YAML at line"),
    ],
)
def test_exit_2_for_a_truncated_file_still_reports_what_was_read(recordings, name, message):
    path = cut_file(recordings[name], 0.55)

    result = run_scan("--json", path)

    assert result.returncode == 2  # 2 wins over the error findings
    assert f"scan: {path}: {message}" in result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert {r["flow"] for r in rows} >= {0, 1, 2}
    assert "choice-not-in-tools" in {r["code"] for r in rows}


def test_a_bug_in_a_check_is_exit_2_not_a_finding(capsys, monkeypatch, recordings):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(run, "inspect_exchange", broken)

    code = cli.main([str(recordings["flows.mitm"])])

    assert code == 2
    assert (
        "flow 0: toolnames failed on this exchange: RuntimeError: boom" in capsys.readouterr().err
    )


def test_gzip_and_zhar_files_are_read_as_they_stream(capsys, tmp_path):
    flows = [samples.chat_flow("names", samples.bad_names_body())]
    (tmp_path / "f.mitm.gz").write_bytes(gzip.compress(samples.flow_bytes(flows)))
    # mitmproxy's `save.har x.zhar` writes zlib-compressed JSON.
    (tmp_path / "x.zhar").write_bytes(
        zlib.compress(json.dumps(samples.har_document(flows)).encode(), 9)
    )
    (tmp_path / "c.yaml.gz").write_bytes(gzip.compress(samples.cassette_text(flows).encode()))

    code, rows, err = scan_json(capsys, tmp_path)

    assert sorted({(Path(r["file"]).name, r["format"]) for r in rows}) == [
        ("c.yaml.gz", "cassette"),
        ("f.mitm.gz", "mitmproxy"),
        ("x.zhar", "har"),
    ]
    assert len(rows) == 9 and code == 1, err


def test_a_cut_gzip_file_reports_the_flows_before_the_cut(capsys, tmp_path):
    flows = [samples.chat_flow(f"names-{i}", samples.bad_names_body()) for i in range(40)]
    path = tmp_path / "f.mitm.gz"
    data = gzip.compress(samples.flow_bytes(flows), compresslevel=1)
    path.write_bytes(data[: len(data) * 3 // 4])

    code, rows, err = scan_json(capsys, path)

    assert code == 2
    assert "truncated after" in err and "Compressed file ended" in err
    assert len({r["flow"] for r in rows}) >= 10


def test_a_flow_fixed_in_flight_reports_what_the_app_sent_from_its_record(capsys, tmp_path):
    flow = samples.chat_flow("mastra", samples.mastra_choice_mismatch_body())
    flow.live = True  # as toolnames_save writes it: rewritten on its way to the provider
    with running(toolnames_mode="fix") as (tctx, tn):
        tn.request(flow)
    flow.live = False
    assert flow.metadata["toolnames"]["action"] == "fixed"
    # Its body is the fixed one: checked again, it would look clean.
    path = samples.write_flows(tmp_path / "fixed.mitm", [flow])
    assert "choice-not-in-tools" not in str(
        exchange_for(flow.request.content, "openai-chat", "openai").findings
    )

    code, rows, _ = scan_json(capsys, path)

    assert [(r["api"], r["rule"], r["code"], r["path"]) for r in rows] == [
        ("openai-chat", "openai", "choice-not-in-tools", "tool_choice.function.name")
    ]
    assert "'search.web'" in rows[0]["message"]
    assert code == 1


def test_a_recorded_200_for_names_the_rule_rejects_says_the_rule_disagrees(tmp_path, capsys):
    # The provider accepted what the rule rejects (a gateway with a laxer rule, say): each
    # name finding gets its rule-disagrees beside it, as a warning.
    flow = samples.chat_flow(
        "lax", samples.bad_names_body(), samples.completion(("get_weather", "{}"))
    )
    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "lax.mitm", [flow]))

    disagreements = [(r["path"], r["severity"]) for r in rows if r["code"] == "rule-disagrees"]
    assert sorted(disagreements) == [
        ("tools[0].function.name", "warning"),
        ("tools[1].function.name", "warning"),
        ("tools[2].function.name", "warning"),
    ]


# -- mitmdump itself, and memory ------------------------------------------------------------


@pytest.mark.e2e
def test_mitmdump_reads_the_same_files_and_logs_the_findings_as_warnings(tmp_path, mitmdump_binary):
    path = samples.write_flows(tmp_path / "bad.mitm", bad_flows())

    result = subprocess.run(
        [
            str(mitmdump_binary),
            "-nr",
            str(path),
            "-s",
            str(ADDON_SCRIPT),
            "--flow-detail",
            "0",
            "--set",
            "termlog_verbosity=warn",
            "--set",
            f"confdir={tmp_path / 'confdir'}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )

    lines = [line for line in (result.stdout + result.stderr).splitlines() if "toolnames" in line]
    assert result.returncode == 0, result.stdout + result.stderr
    assert [line.split(": toolnames ", 1)[1].split(":")[:2] for line in lines] == [
        ["error", " choice-not-in-tools"],
        ["error", " name-invalid-chars"],
        ["error", " response-unknown-tool"],
        ["error", " response-unknown-tool"],
        ["error", " response-unknown-tool"],
    ]


def test_memory_stays_bounded_while_scanning_a_large_flow_file(tmp_path):
    # ~200 MB of flows, each a 110 KB request with a bad name and a hallucinated call: written
    # by repeating one flow's bytes, which takes a fraction of a second.
    one = samples.flow_bytes([big_flagged_flow()])
    count = 200 * 1024 * 1024 // len(one)
    path = tmp_path / "big.mitm"
    with open(path, "wb") as f:
        for _ in range(count):
            f.write(one)
    size_mb = path.stat().st_size / 2**20

    scan = measured_scan(path, tmp_path)

    assert scan.code == 1, scan.stderr
    summary = f"{count} recorded exchanges, {count} LLM API calls checked: {2 * count} errors"
    assert summary in scan.stderr
    assert size_mb > 190
    assert scan.peak_mb < 150, f"peak RSS {scan.peak_mb:.0f} MB while scanning {size_mb:.0f} MB"


@pytest.mark.parametrize("writer", ["flows.mitm", "traffic.har"])
def test_tools_sent_to_a_path_no_format_is_at_are_said_not_checked_once_per_host_and_path(
    capsys, tmp_path, writer
):
    tools = [{"name": "get_weather", "input_schema": {"type": "object"}}]
    # OpenAI's Assistants API takes tools at the top level; toolnames reads no format there.
    top = samples.chat_flow("assistant", {"model": "m", "tools": tools}, path="/v1/assistants")
    nested = samples.chat_flow(
        "gateway", {"request": {"params": {"tools": tools}}}, path="/llm/run"
    )
    quiet = samples.chat_flow("embed", {"input": "hi", "model": "e"}, path="/v1/embeddings")
    flows = [top, top, nested, nested, quiet]
    code, rows, err = scan_json(capsys, WRITERS[writer](tmp_path / writer, flows))

    assert rows == [] and code == 0
    said = [line for line in err.splitlines() if "toolnames did not check this request" in line]
    assert len(said) == 2  # once per host and path, not once per request
    assert "/v1/assistants" in said[0] and '("tools")' in said[0]
    assert "/llm/run" in said[1] and '("request.params.tools")' in said[1]
    assert "4 requests with tools not checked" in err


def _invoke_model_body(tools: list) -> None:
    tools[1]["name"] = "kb.search"
    # Within Anthropic's 128, beyond Converse's 64: no finding.
    tools.append({"name": "t" * 100, "input_schema": {"type": "object"}})


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize(
    "fixture, api, where",
    [
        ("bedrock-invoke-tools", "bedrock-invoke", "tools[1].name"),
        (
            "bedrock-count-tokens-invoke-body",
            "bedrock-count-tokens",
            "input.invokeModel.body.tools[1].name",
        ),
    ],
)
def test_claude_on_bedrock_is_scanned_under_anthropics_rule_inside_count_tokens_base64_too(
    capsys, tmp_path, writer, fixture, api, where
):
    sdk = json.loads((SDK_DIR / f"{fixture}.json").read_text())
    body = sdk["body"]
    if "input" in body:  # count-tokens: the InvokeModel body, in base64
        carried = body["input"]["invokeModel"]
        inner = json.loads(base64.b64decode(carried["body"]))
        _invoke_model_body(inner["tools"])
        carried["body"] = base64.b64encode(json.dumps(inner).encode()).decode()
    else:
        _invoke_model_body(body["tools"])
    host = "bedrock-runtime.us-east-1.amazonaws.com"
    flow = samples.chat_flow("bedrock", body, host=host, path=sdk["path"])
    _, rows, _ = scan_json(capsys, WRITERS[writer](tmp_path / writer, [flow]))

    # The host's own rule is Converse's (bedrock, 64): Claude's formats keep Anthropic's.
    assert [(r["api"], r["rule"], r["code"], r["path"]) for r in rows] == [
        (api, "anthropic", "name-invalid-chars", where)
    ]


def _ollama_stream(*names: str) -> bytes:
    # Ollama's NDJSON: the calls whole in one line, then the done line.
    head = {"model": "qwen3:8b", "created_at": "2026-02-02T00:00:00Z"}
    calls = [{"function": {"name": name, "arguments": {}}} for name in names]
    lines = [
        {
            **head,
            "message": {"role": "assistant", "content": "", "tool_calls": calls},
            "done": False,
        },
        {**head, "message": {"role": "assistant", "content": ""}, "done": True},
    ]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


@pytest.mark.parametrize("writer", WRITERS)
def test_ollama_is_scanned_under_its_rule_with_its_ndjson_calls_and_its_port(
    capsys, tmp_path, writer
):
    # The ollama client's own request on a host the table does not know, with a dotted name
    # (Ollama takes any) and a name offered twice, answered by an NDJSON stream that calls a
    # tool never offered; then Chat Completions to Ollama's port with a forced choice, which
    # Ollama ignores: the port decides the rule, as it does live.
    sdk = json.loads((SDK_DIR / "ollama-stream.json").read_text())
    body = sdk["body"]
    body["tools"][1]["function"]["name"] = "kb.search"
    body["tools"].append(body["tools"][0])
    native = samples.chat_flow(
        "ollama",
        # As the client sends it: compact, raw UTF-8 (its "°C" unescaped). A \u escape in the
        # body breaks the cassette that mitmproxy 11's ruamel.yaml 0.18.6 writes, not the scan.
        json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode(),
        _ollama_stream("get_weather", "drop_tables"),
        content_type="application/x-ndjson",
        host="gpu-box.internal",
        path=sdk["path"],
    )
    chat = {
        "model": "qwen3:8b",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "get_weather"}}],
        "tool_choice": "required",
    }
    compatible = samples.chat_flow("ollama-openai", chat, host="localhost")
    compatible.request.port = 11434
    _, rows, _ = scan_json(capsys, WRITERS[writer](tmp_path / writer, [native, compatible]))

    assert [(r["api"], r["rule"], r["code"], r["path"]) for r in rows] == [
        ("ollama", "ollama", "name-duplicate", "tools[2].function.name"),
        (
            "ollama",
            "ollama",
            "response-unknown-tool",
            "events[0].message.tool_calls[1].function.name",
        ),
        ("openai-chat", "ollama", "choice-ignored", "tool_choice"),
    ]


# -- MCP ---------------------------------------------------------------------------------------

# 100 characters: within MCP's 128 and Anthropic's, beyond OpenAI's 64 (toolnames_mcp_rule's default).
MCP_LONG = "list_" + "x" * 95


def _mcp_flow(message: dict, answer: dict | None, sse: bool = False, **headers: str):
    flow = tflow.tflow(
        req=tutils.treq(method=b"POST", host="127.0.0.1", port=8931, path=b"/mcp"), live=False
    )
    flow.request.content = json.dumps(message).encode()
    flow.request.headers["accept"] = "application/json, text/event-stream"
    flow.request.headers["authorization"] = samples.FAKE_AUTHORIZATION
    for name, value in {"mcp-session-id": "s1", "mcp-protocol-version": "2025-11-25"}.items():
        flow.request.headers[name] = value
    for name, value in headers.items():
        flow.request.headers[name.replace("_", "-")] = value
    if answer is not None:
        body = json.dumps(answer)
        if sse:
            body = f"event: message\ndata: {body}\n\n"
        content_type = "text/event-stream" if sse else "application/json"
        flow.response = http.Response.make(200, body.encode(), {"content-type": content_type})
    return flow


def _listing(id_: int, names: list[str], cursor: str | None = None) -> dict:
    result: dict = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
    if cursor:
        result["nextCursor"] = cursor
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def _call(id_: int, name: str) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": name}}


def mcp_session_flows() -> list:
    """A session as recorded: two tools/list pages (the second an SSE answer), a call of an
    unlisted name, one whose Mcp-Name disagrees with params.name, and a plain call."""
    done = {"jsonrpc": "2.0", "id": 0, "result": {"content": []}}
    return [
        _mcp_flow(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            _listing(1, ["github.create_issue", "search docs", MCP_LONG], cursor="p2"),
        ),
        _mcp_flow(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "p2"}},
            _listing(2, ["get_weather", "search docs"]),
            sse=True,
        ),
        _mcp_flow(_call(3, "delete_everything"), {**done, "id": 3}, sse=True),
        _mcp_flow(_call(4, "get_weather"), {**done, "id": 4}, mcp_name="github.create_issue"),
        _mcp_flow(_call(5, "get_weather"), {**done, "id": 5}, mcp_name="get_weather"),
    ]


def _addon_findings(flows: list, **options) -> list[tuple]:
    """What the addon itself records on the same flows, read back from a flow file as
    mitmdump does (-nr): the one answer the scanner must give."""
    found = []
    with running(**options) as (tctx, _):
        mcp = tctx.master.addons.get("mcptraffic")
        for index, original in enumerate(flows):
            flow = original.copy()
            answer, flow.response = flow.response, None
            mcp.request(flow)
            flow.response = answer
            mcp.responseheaders(flow)
            mcp.response(flow)
            meta = flow.metadata.get("toolnames") or {}
            found += [
                (index, f["severity"], f["code"], f["path"], f["message"])
                for f in meta.get("findings", [])
            ]
    return sorted(found)


def _scanned(rows: list[dict]) -> list[tuple]:
    return sorted((r["flow"], r["severity"], r["code"], r["path"], r["message"]) for r in rows)


@pytest.mark.parametrize("name", WRITERS)
def test_recorded_mcp_traffic_is_found_with_the_live_addons_findings(capsys, tmp_path, name):
    flows = mcp_session_flows()
    code, rows, err = scan_json(capsys, WRITERS[name](tmp_path / name, flows))

    assert _scanned(rows) == _addon_findings(flows)
    found = {(r["flow"], r["code"]) for r in rows}
    assert {
        (0, "mcp-name-rejected"),  # the dot, the space, the 100 characters
        (0, "mcp-name-invalid"),  # the space
        (1, "mcp-name-duplicate"),  # "search docs" again, on the SSE page
        (2, "mcp-call-unlisted"),  # from an SSE answer's session
        (3, "mcp-header-mismatch"),  # Mcp-Name survives the recording
    } <= found
    assert not any(r["flow"] == 4 for r in rows)  # a plain call of a listed name
    assert {r["api"] for r in rows} == {"mcp"} and {r["rule"] for r in rows} == {"openai"}
    assert code == 1
    # Said apart from LLM API calls in the summary.
    assert "5 recorded exchanges, 0 LLM API calls and 5 MCP exchanges checked: 1 error" in err


@pytest.mark.parametrize("name", WRITERS)
def test_mcp_rule_option_holds_listed_names_to_another_rule_as_the_addons(capsys, tmp_path, name):
    flows = mcp_session_flows()[:1]
    path = WRITERS[name](tmp_path / name, flows)
    _, default, _ = scan_json(capsys, path)
    _, anthropic, _ = scan_json(capsys, "--mcp-rule", "anthropic", path)

    def long_name(rows):
        return [r["severity"] for r in rows if r["path"] == "result.tools[2].name"]

    assert long_name(default) == ["warning"]  # OpenAI's 64 characters
    assert long_name(anthropic) == ["info"]  # Anthropic takes 128: only other providers reject it
    assert {r["rule"] for r in anthropic} == {"anthropic"}
    assert _scanned(anthropic) == _addon_findings(flows, toolnames_mcp_rule="anthropic")


def test_mcp_flows_the_addon_saves_lose_credentials_keep_mcp_headers_and_scan_the_same(
    capsys, tmp_path
):
    # Live, through the hooks as mitmdump runs them (an SSE answer streamed through the tap),
    # with toolnames_save: only flagged flows are saved, each a redacted copy.
    flows = mcp_session_flows()
    flows[2].request.content = json.dumps(
        {
            **json.loads(flows[2].request.content),
            "params": {"name": "delete_everything", "arguments": {"api_key": "sk-argument-secret"}},
        }
    ).encode()
    # An MCP client's OAuth token exchange through the same proxy (RFC 6749 section 4.1.3,
    # PKCE's code_verifier): neither MCP nor an LLM call, so never flagged, never saved.
    token = tflow.tflow(live=True)
    token.request.method, token.request.path = "POST", "/token"
    token.request.headers["content-type"] = "application/x-www-form-urlencoded"
    token.request.content = (
        b"grant_type=authorization_code&code=oauth-code-secret&code_verifier=pkce-secret"
    )
    token.response = http.Response.make(
        200,
        b'{"access_token": "at-secret", "token_type": "Bearer"}',
        {"content-type": "application/json"},
    )
    path = tmp_path / "flagged.mitm"
    found = []
    with running(toolnames_save=str(path)) as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        for flow in [*flows, token]:
            flow.live = True
            flow.request.headers["cookie"] = "session=cookie-secret"
            answer, flow.response = flow.response, None
            tn.request(flow)
            mcp.request(flow)
            flow.response = answer
            flow.response.headers["set-cookie"] = "session=set-cookie-secret; HttpOnly"
            tn.responseheaders(flow)
            mcp.responseheaders(flow)
            if callable(flow.response.stream):
                tap = flow.response.stream
                flow.response.content = b"".join([*tap(flow.response.content), *tap(b"")])
            tn.response(flow)
            mcp.response(flow)
            meta = flow.metadata.get("toolnames") or {}
            found += [
                (f["severity"], f["code"], f["path"], f["message"])
                for f in meta.get("findings", [])
            ]
    assert {f[1] for f in found} >= {
        "mcp-name-duplicate",
        "mcp-call-unlisted",
        "mcp-header-mismatch",
    }
    saved_bytes = path.read_bytes()
    secrets = ("sk-test-not-a-key", "cookie-secret", "set-cookie-secret", "sk-argument-secret")
    for secret in (*secrets, "oauth-code-secret", "pkce-secret", "at-secret"):
        assert secret.encode() not in saved_bytes
    with open(path, "rb") as fo:
        saved = list(io.FlowReader(fo).stream())
    assert len(saved) == 4  # neither the plain call nor the token exchange is flagged
    for flow in saved:
        assert flow.request.headers["mcp-session-id"] == "s1"
        assert flow.request.headers["mcp-protocol-version"] == "2025-11-25"
    assert saved[3].request.headers["mcp-name"] == "github.create_issue"

    _, rows, _ = scan_json(capsys, path)
    assert sorted((r["severity"], r["code"], r["path"], r["message"]) for r in rows) == sorted(
        found
    )
    assert "mcp-header-mismatch" in {r["code"] for r in rows}
