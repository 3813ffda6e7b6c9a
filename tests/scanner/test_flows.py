"""mitmproxy flow files (scanner.flows)."""

import json

from mitmproxy import io as mitm_io
from mitmproxy.test import tflow

from harness.inprocess import running
from samples import recordings as samples
from scanner import cli
from tests.testkit import aws_chunk
from tests.testkit import scan_json


def test_non_http_flows_are_skipped_but_keep_the_flow_numbering(capsys, tmp_path):
    flows = [tflow.ttcpflow(), samples.chat_flow("names", samples.bad_names_body())]
    code, rows, err = scan_json(capsys, samples.write_flows(tmp_path / "mixed.mitm", flows))

    assert {r["flow"] for r in rows} == {1}
    assert "1 recorded exchange," in err


def test_a_flow_whose_request_body_was_streamed_through_is_reported_as_unread(capsys, tmp_path):
    flow = samples.chat_flow("streamed-request", samples.bad_names_body())
    flow.request.raw_content = None

    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "s.mitm", [flow]))

    assert [r["code"] for r in rows] == ["request-unreadable"]


def test_scan_runs_on_flows_written_by_mitmproxy_itself(tmp_path, capsys):
    # io.FlowWriter straight from tflow(): the shape mitmdump -w writes.
    flow = tflow.tflow(resp=True)
    flow.request.method = "POST"
    flow.request.path = "/v1/chat/completions"
    flow.request.text = json.dumps(samples.bad_names_body())
    # tflow's own answer is a 200 "message": read as the provider accepting the bad names, it
    # would (rightly) turn every finding into a rule-disagrees. Answer as OpenAI does instead.
    flow.response.status_code = 400
    flow.response.headers["content-type"] = "application/json"
    flow.response.text = json.dumps(samples.provider_rejection(samples.bad_names_body()))
    with open(tmp_path / "raw.flows", "wb") as f:
        mitm_io.FlowWriter(f).add(flow)

    _, rows, _ = scan_json(capsys, tmp_path / "raw.flows")

    assert sorted((r["path"], r["code"]) for r in rows) == [
        ("tools[0].function.name", "name-invalid-chars"),
        ("tools[0].function.name", "provider-rejected"),
        ("tools[1].function.name", "name-too-long"),
        ("tools[2].function.name", "name-invalid-chars"),
    ]


def saved_stream(request_body: dict, metadata: dict | None = None):
    """A streamed answer as mitmproxy saves it: status and headers, no body."""
    flow = samples.chat_flow("stream", request_body, b"", content_type="text/event-stream")
    flow.response.raw_content = None
    if metadata is not None:
        flow.metadata["toolnames"] = metadata
    return flow


def test_a_saved_stream_is_judged_by_what_the_live_addon_recorded(capsys, tmp_path):
    # toolnames_save keeps a flow flagged only for its streamed answer, without the stream.
    body = {"messages": [], "tools": [{"type": "function", "function": {"name": "search_web"}}]}
    unknown_call = {
        "code": "response-unknown-tool",
        "severity": "error",
        "path": "choices[0].delta.tool_calls[0].function.name",
        "message": "the answer calls 'delete_all' (10 chars), a tool the request never offered",
    }
    record = {"api": "openai-chat", "rule": "openai", "mode": "observe", "action": "observed"}
    flow = saved_stream(body, {**record, "findings": [unknown_call]})

    code, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "s.mitm", [flow]))

    assert [(r["code"], r["severity"]) for r in rows] == [("response-unknown-tool", "error")]
    assert code == 1  # an error: the scan fails as the live run flagged it


def test_a_saved_stream_without_a_record_is_said_to_be_unchecked(capsys, tmp_path):
    body = {"messages": [], "tools": [{"type": "function", "function": {"name": "search_web"}}]}

    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "s.mitm", [saved_stream(body)]))

    assert [(r["code"], r["severity"]) for r in rows] == [("response-unreadable", "warning")]
    assert "store_streamed_bodies" in rows[0]["message"]


def test_a_fix_declined_in_flight_is_shown_with_its_reason(capsys, tmp_path):
    body = samples.weather_request_body()
    body["tools"] = [
        {"type": "function", "function": {"name": "Search_Web"}},
        {"type": "function", "function": {"name": "search_web"}},
    ]
    body["tool_choice"] = {"type": "function", "function": {"name": "Search.Web"}}
    flow = samples.chat_flow("ambiguous", body)
    flow.live = True
    with running(toolnames_mode="fix") as (tctx, tn):
        tn.request(flow)
    flow.live = False
    assert flow.metadata["toolnames"]["action"] == "observed"
    path = samples.write_flows(tmp_path / "declined.mitm", [flow])

    cli.main([str(path)])
    out, _ = capsys.readouterr()

    assert (
        "not fixed: 'Search.Web' could be 'Search_Web' (mastra) or 'search_web' (openai-agents)"
        in out
    )


def ws_session_flow(path: str, events: list[tuple[bool, dict]], host: str = "api.openai.com"):
    from mitmproxy import websocket
    from wsproto.frame_protocol import Opcode

    flow = tflow.twebsocketflow()
    flow.request.host = flow.request.headers["host"] = host
    flow.request.path = path
    flow.websocket.messages = [
        websocket.WebSocketMessage(Opcode.TEXT, from_client, json.dumps(e).encode())
        for from_client, e in events
    ]
    return flow


def test_websocket_sessions_in_a_flow_file_are_checked_message_by_message(capsys, tmp_path):
    realtime = ws_session_flow(
        "/v1/realtime?model=gpt-realtime",
        [
            (
                True,
                {
                    "type": "session.update",
                    "session": {"tools": [{"type": "function", "name": "a.b"}]},
                },
            ),
            (
                False,
                {
                    "type": "response.output_item.added",
                    "item": {"type": "function_call", "name": "zz", "call_id": "c"},
                },
            ),
        ],
    )
    # A message an addon injected is not the provider's: never read.
    injected = ws_session_flow(
        "/v1/realtime",
        [
            (
                False,
                {
                    "type": "response.output_item.added",
                    "item": {"type": "function_call", "name": "injected", "call_id": "i"},
                },
            )
        ],
    )
    injected.websocket.messages[0].injected = True
    realtime.websocket.messages += injected.websocket.messages
    live = ws_session_flow(
        "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=k",
        [
            (True, {"setup": {"tools": [{"functionDeclarations": [{"name": "get_time"}]}]}}),
            (False, {"toolCall": {"functionCalls": [{"id": "1", "name": "ghost"}]}}),
        ],
        host="generativelanguage.googleapis.com",
    )
    other = ws_session_flow("/socket", [(True, {"type": "session.update"})])
    code, rows, err = scan_json(
        capsys, samples.write_flows(tmp_path / "ws.mitm", [realtime, live, other])
    )
    assert code == 1
    assert [(r["flow"], r["api"], r["code"], r["path"]) for r in rows] == [
        (0, "openai-realtime", "name-invalid-chars", "messages[0].session.tools[0].name"),
        (0, "openai-realtime", "response-unknown-tool", "messages[1].item.name"),
        (1, "gemini-live", "response-unknown-tool", "messages[1].toolCall.functionCalls[0].name"),
    ]
    assert "3 recorded exchanges, 2 LLM API calls checked" in err


def test_a_fixed_session_is_judged_by_its_record(capsys, tmp_path):
    with running(toolnames_mode="fix") as (tctx, tn):
        live = tctx.master.addons.get("livesessions")
        flow = ws_session_flow("/v1/realtime", [])
        live.websocket_start(flow)
        from mitmproxy import websocket
        from wsproto.frame_protocol import Opcode

        update = {
            "type": "session.update",
            "session": {"tools": [{"type": "function", "name": "a.b"}]},
        }
        flow.websocket.messages.append(
            websocket.WebSocketMessage(Opcode.TEXT, True, json.dumps(update).encode())
        )
        live.websocket_message(flow)
        live.websocket_end(flow)
    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "fixed.mitm", [flow]))
    # The message holds the alias now; the record, the app's own name.
    assert [(r["code"], r["path"]) for r in rows] == [
        ("name-invalid-chars", "messages[0].session.tools[0].name")
    ]
    assert "'a.b'" in rows[0]["message"]


def test_a_cut_record_with_flows_saved_after_it_is_reported_and_the_flows_after_it_read(
    capsys, tmp_path
):
    # A kill or a full disk cut flow 2; a later run appended flows 3 and 4 after it. The scan
    # stopped at the cut, and never read flows 3 and 4.
    flows = [
        samples.chat_flow(
            "names", samples.bad_names_body(), samples.rejected("x", None), status=400
        )
        for _ in range(4)
    ]
    records = [samples.flow_bytes([f]) for f in flows]
    path = tmp_path / "damaged.mitm"
    cut = records[1][: len(records[1]) // 2]
    path.write_bytes(records[0] + cut + records[2] + records[3])

    code, rows, err = scan_json(capsys, path)

    assert code == 2  # incomplete: part of the file could not be read
    assert {r["flow"] for r in rows} == {0, 2, 3}  # every whole flow, numbered as they were
    start = len(records[0])
    assert (
        f"damaged.mitm: flows[1] skipped: bytes {start} to {start + len(cut)} are not a whole "
        "flow record (one cut short, by a kill or a full disk, with flows written after it); "
        f"read on from byte {start + len(cut)}, where whole flows start again"
    ) in err
    assert "Traceback" not in err


def mcp_flow(message: dict, answer: dict | None = None, **headers: str):
    from mitmproxy import http
    from mitmproxy.test import tutils

    flow = tflow.tflow(
        req=tutils.treq(method=b"POST", host="127.0.0.1", port=8931, path=b"/mcp"), live=False
    )
    flow.request.content = json.dumps(message).encode()
    for name, value in {"mcp-session-id": "s1", **headers}.items():
        flow.request.headers[name] = value
    if answer is not None:
        flow.response = http.Response.make(
            200, json.dumps(answer).encode(), {"content-type": "application/json"}
        )
    return flow


def test_mcp_flows_are_found_by_content_and_judged_in_order(capsys, tmp_path):
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "github.create_issue"}]}}
    flows = [
        mcp_flow({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, listing),
        mcp_flow(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "rm_rf"}},
            {"jsonrpc": "2.0", "id": 2, "result": {}},
            **{"mcp-name": "other"},
        ),
    ]
    code, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "mcp.mitm", flows))
    assert [(r["flow"], r["api"], r["code"]) for r in rows] == [
        (0, "mcp", "mcp-name-rejected"),
        (1, "mcp", "mcp-header-mismatch"),
        (1, "mcp", "mcp-call-unlisted"),
    ]
    assert code == 1  # the header mismatch is an error


def test_mcp_rule_chooses_the_rule_listed_names_are_held_to(capsys, tmp_path):
    long = "a" * 100  # over OpenAI's 64, within Anthropic's 128
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": long}]}}
    path = samples.write_flows(
        tmp_path / "mcp.mitm",
        [mcp_flow({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, listing)],
    )
    _, rows, _ = scan_json(capsys, path)
    assert [(r["code"], r["severity"]) for r in rows] == [("mcp-name-rejected", "warning")]
    _, rows, _ = scan_json(capsys, "--mcp-rule", "anthropic", path)
    assert [(r["code"], r["severity"]) for r in rows] == [("mcp-name-rejected", "info")]


def test_mcp_servers_at_two_paths_of_one_host_are_judged_apart(capsys, tmp_path):
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "get_weather"}]}}
    github = mcp_flow({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, listing)
    github.request.path = "/github/mcp"
    call = mcp_flow(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_weather"}},
        {"jsonrpc": "2.0", "id": 2, "result": {}},
    )
    call.request.path = "/jira/mcp"
    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "mcp.mitm", [github, call]))
    assert [(r["flow"], r["code"]) for r in rows] == [(1, "mcp-call-unlisted")]


def test_a_fixed_mcp_flow_is_reported_as_the_live_addon_recorded_it(capsys, tmp_path):
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "github.create_issue"}]}}
    flow = mcp_flow({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, listing)
    flow.live = True
    with running(toolnames_mode="fix") as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        flow.response, answer = None, flow.response
        mcp.request(flow)
        flow.response = answer
        mcp.response(flow)
    assert flow.metadata["toolnames"]["action"] == "fixed"
    _, rows, _ = scan_json(capsys, samples.write_flows(tmp_path / "fixed.mitm", [flow]))
    assert [r["code"] for r in rows] == ["mcp-name-rejected"]


def test_a_recorded_invoke_model_stream_is_read_inside_its_base64_chunks(capsys, tmp_path):
    # Claude on Bedrock through InvokeModel, saved with its body (store_streamed_bodies): the
    # call to a tool never offered sits base64-encoded in a chunk of the AWS event stream.
    flow = tflow.tflow(resp=True)
    flow.request.method = "POST"
    flow.request.host = "bedrock-runtime.us-east-1.amazonaws.com"
    flow.request.path = (
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream"
    )
    flow.request.text = json.dumps(
        {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "a" * 100, "input_schema": {"type": "object"}}],
        }
    )
    start = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "t", "name": "drop_tables", "input": {}},
    }
    flow.response.status_code = 200
    flow.response.headers["content-type"] = "application/vnd.amazon.eventstream"
    flow.response.content = aws_chunk({"type": "message_start", "message": {}}) + aws_chunk(start)
    with open(tmp_path / "invoke.flows", "wb") as f:
        mitm_io.FlowWriter(f).add(flow)

    _, rows, _ = scan_json(capsys, tmp_path / "invoke.flows")

    # A 100-character name is no finding under Anthropic's rule (Converse's 64 would be).
    assert [(r["code"], r["path"]) for r in rows] == [
        ("response-unknown-tool", "events[1].content_block.name")
    ]
