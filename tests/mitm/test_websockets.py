"""The WebSocket addon (toolnames_mitm/websockets.py): sessions checked message by message,
and a blocked message answered with the injected error event, or with a close with a
code and a reason through mitmproxy's own WebSocket layer (driven here event by event,
as the proxy server drives it, on mitmproxy 11 and 12 alike)."""

import contextlib
import json
import logging
import os
import struct

import pytest
from mitmproxy import http
from mitmproxy.proxy import commands
from mitmproxy.proxy import context
from mitmproxy.proxy import events
from mitmproxy.proxy import layer
from mitmproxy.proxy.layers import websocket
from mitmproxy.test import taddons
from mitmproxy.test import tflow

from harness.inprocess import running
from tests.testkit import read_flows
from toolnames_core import FlowRecord
from toolnames_core import readers
from toolnames_core.sessions import Block
from toolnames_mitm import report
from toolnames_mitm import websockets


def client_frame(opcode: int, payload: bytes) -> bytes:
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + masked


def unmask(frame: bytes) -> tuple[int, bytes]:
    assert frame[1] & 0x80
    length, mask = frame[1] & 0x7F, frame[2:6]
    return frame[0], bytes(b ^ mask[i % 4] for i, b in enumerate(frame[6 : 6 + length]))


def test_close_frame_is_a_masked_client_close():
    opcode, payload = unmask(websockets.close_frame(1007, "toolnames: é"))
    assert opcode == 0x88
    assert struct.unpack("!H", payload[:2]) == (1007,)
    assert payload[2:].decode() == "toolnames: é"
    with pytest.raises(ValueError):
        websockets.close_frame(1007, "x" * 124)


class Handler:
    """What the proxy server keeps per client connection: its layer stack."""

    def __init__(self, top: layer.Layer) -> None:
        self.layer = top


@pytest.fixture
def live_layer(monkeypatch):
    """A started WebSocket layer under a NextLayer, found through a stand-in proxyserver."""
    flow = tflow.twebsocketflow(messages=False)
    with taddons.context() as tctx:
        ctx = context.Context(flow.client_conn, tctx.options)
        ctx.server = flow.server_conn
        ws = websocket.WebsocketLayer(ctx, flow)
        top = layer.NextLayer(ctx)
        top.layer = ws
        proxyserver = type("P", (), {"connections": {flow.client_conn.id: Handler(top)}})()
        monkeypatch.setattr(
            tctx.master.addons, "get", lambda name: proxyserver if name == "proxyserver" else None
        )
        (start,) = ws.handle_event(events.Start())
        list(ws.handle_event(events.HookCompleted(start)))
        yield flow, ws


def test_close_from_inside_the_message_hook_closes_both_sides_with_the_code(live_layer):
    flow, ws = live_layer
    (hook,) = ws.handle_event(
        events.DataReceived(flow.client_conn, client_frame(0x1, b'{"setup": {}}'))
    )
    assert isinstance(hook, websocket.WebsocketMessageHook)
    # What the addon does in the hook: drop the message, close.
    flow.websocket.messages[-1].drop()
    assert websockets.close(flow, 1007, "toolnames: bad name")
    after = list(ws.handle_event(events.HookCompleted(hook)))
    sent = [c for c in after if isinstance(c, commands.SendData)]
    to_client = [c.data for c in sent if c.connection is flow.client_conn]
    to_server = [c.data for c in sent if c.connection is flow.server_conn]
    payload = struct.pack("!H", 1007) + b"toolnames: bad name"
    assert to_client == [bytes([0x88, len(payload)]) + payload]
    # The server gets the close, never the message.
    assert len(to_server) == 1 and unmask(to_server[0]) == (0x88, to_client[0][2:])
    assert any(isinstance(c, websocket.WebsocketEndHook) for c in after)
    assert (flow.websocket.close_code, flow.websocket.close_reason) == (1007, "toolnames: bad name")


def test_close_without_a_live_layer_says_so(caplog):
    flow = tflow.twebsocketflow()
    with taddons.context():
        caplog.set_level(logging.WARNING)
        assert not websockets.close(flow, 1007, "toolnames: x")
    assert "could not close the WebSocket" in caplog.text


def test_close_on_internals_it_does_not_know_logs_and_never_raises(monkeypatch, caplog):
    flow = tflow.twebsocketflow()
    with taddons.context() as tctx:
        monkeypatch.setattr(tctx.master.addons, "get", lambda name: 42)  # not a proxyserver
        caplog.set_level(logging.WARNING)
        assert not websockets.close(flow, 1007, "toolnames: x")

        def broken(name):
            raise RuntimeError("changed")

        monkeypatch.setattr(tctx.master.addons, "get", broken)
        assert not websockets.close(flow, 1007, "toolnames: x")
    assert "RuntimeError: changed" in caplog.text


def test_answer_injects_an_error_event_or_closes(monkeypatch):
    flow = tflow.twebsocketflow()
    calls = []
    with taddons.context() as tctx:
        monkeypatch.setattr(tctx.master.commands, "call", lambda *a: calls.append(a))
        websockets.answer(flow, Block(event=b'{"type": "error"}'))
        assert calls == [("inject.websocket", flow, True, b'{"type": "error"}', True)]
        closed = []
        monkeypatch.setattr(websockets, "close", lambda *a: closed.append(a))
        websockets.answer(flow, Block(close_code=1007, close_reason="toolnames: x"))
        assert closed == [(flow, 1007, "toolnames: x")]


# -- the hooks, on OpenAI Realtime and Gemini Live sessions ---------------------------------


@contextlib.contextmanager
def live_sessions(**options):
    """The WebSocket addon beside the HTTP one, configured as mitmdump configures them."""
    with running(**options) as (tctx, tn):
        yield tctx, tctx.master.addons.get("livesessions")


REALTIME_PATH = "/v1/realtime?model=gpt-realtime"
LIVE_PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=sk-live-secret"


def ws_flow(host: str, path: str) -> http.HTTPFlow:
    f = tflow.twebsocketflow()
    f.websocket.messages = []  # tflow's come with three of their own
    f.request.host = f.request.headers["host"] = host
    f.request.path = path
    return f


def ws_send(tn, f: http.HTTPFlow, from_client: bool, event: dict, injected: bool = False):
    from mitmproxy import websocket as mitm_websocket
    from wsproto.frame_protocol import Opcode

    message = mitm_websocket.WebSocketMessage(
        Opcode.TEXT, from_client, json.dumps(event).encode(), injected=injected
    )
    f.websocket.messages.append(message)
    tn.websocket_message(f)
    return message


def realtime_update(*names: str) -> dict:
    tools = [{"type": "function", "name": n, "parameters": {}} for n in names]
    return {
        "type": "session.update",
        "event_id": "evt_1",
        "session": {"type": "realtime", "tools": tools},
    }


def test_observe_marks_comments_and_logs_a_session_with_message_indices(caplog):
    caplog.set_level(logging.WARNING)
    with live_sessions() as (tctx, tn):
        f = ws_flow("api.openai.com", REALTIME_PATH)
        tn.websocket_start(f)
        ws_send(tn, f, True, {"type": "input_audio_buffer.append", "audio": "AAAA"})
        sent = ws_send(tn, f, True, realtime_update("search.web"))
        ws_send(
            tn,
            f,
            False,
            {
                "type": "response.output_item.added",
                "item": {"type": "function_call", "name": "ghost", "call_id": "c1"},
            },
        )
        tn.websocket_end(f)
    assert (
        not sent.dropped and json.loads(sent.content)["session"]["tools"][0]["name"] == "search.web"
    )
    meta = f.metadata["toolnames"]
    assert (
        meta["api"] == "openai-realtime"
        and meta["rule"] == "openai"
        and meta["action"] == "observed"
    )
    assert [(x["message_index"], x["code"]) for x in meta["findings"]] == [
        (1, "name-invalid-chars"),
        (2, "response-unknown-tool"),
    ]
    assert f.marked == ":warning:" and f.comment.startswith("toolnames error: name-invalid-chars")
    assert "message 1 (client): toolnames error: name-invalid-chars" in caplog.text
    assert "message 2 (server): toolnames error: response-unknown-tool" in caplog.text
    assert FlowRecord.from_metadata(meta).findings[1].message_index == 2
    assert f not in tn.toolnames.tracked  # gone with the connection


@pytest.mark.parametrize("reader", [r.name for r in readers.READERS])
def test_a_session_reads_its_messages_with_the_reader_toolnames_reader_names(reader):
    with live_sessions(toolnames_reader=reader) as (tctx, tn):
        f = ws_flow("api.openai.com", REALTIME_PATH)
        tn.websocket_start(f)
        assert tn.toolnames.tracked[f].session.reader.name == reader


def test_block_drops_the_message_and_injects_realtimes_error_event(monkeypatch):
    with live_sessions(toolnames_mode="block") as (tctx, tn):
        injected = []
        monkeypatch.setattr(tctx.master.commands, "call", lambda *a: injected.append(a))
        f = ws_flow(
            "myres.openai.azure.com",
            "/openai/realtime?api-version=2025-04-01-preview&deployment=rt",
        )
        tn.websocket_start(f)
        sent = ws_send(tn, f, True, realtime_update("x" * 65))
        # toolnames' own event passes through the hook too, and is left alone.
        ws_send(
            tn, f, False, {"type": "error", "error": {"message": "toolnames: …"}}, injected=True
        )
    assert sent.dropped
    ((command, flow_, to_client, data, is_text),) = injected
    assert (command, flow_, to_client, is_text) == ("inject.websocket", f, True, True)
    error = json.loads(data)["error"]
    assert error["code"] == "name-too-long" and error["param"] == "session.tools[0].name"
    assert error["message"].startswith("toolnames: ") and "azure" in error["message"]
    assert f.metadata["toolnames"]["action"] == "blocked" and f.marked == ":no_entry:"
    assert len(f.metadata["toolnames"]["findings"]) == 1


def test_block_closes_a_gemini_live_session(monkeypatch):
    closed = []
    monkeypatch.setattr(websockets, "close", lambda *a: closed.append(a))
    with live_sessions(toolnames_mode="block") as (tctx, tn):
        f = ws_flow("generativelanguage.googleapis.com", LIVE_PATH)
        tn.websocket_start(f)
        sent = ws_send(
            tn,
            f,
            True,
            {"setup": {"model": "m", "tools": [{"functionDeclarations": [{"name": "9lives"}]}]}},
        )
    assert sent.dropped
    ((flow_, code, reason),) = closed
    assert flow_ is f and code == 1007 and reason.startswith("toolnames: setup.tools[0]")


def test_fix_renames_out_and_restores_back_and_records_each_message(caplog):
    with live_sessions(toolnames_mode="fix") as (tctx, tn):
        caplog.set_level(logging.WARNING)
        f = ws_flow("api.openai.com", REALTIME_PATH)
        tn.websocket_start(f)
        sent = ws_send(tn, f, True, realtime_update("github.create_issue"))
        alias = json.loads(sent.content)["session"]["tools"][0]["name"]
        back = ws_send(
            tn,
            f,
            False,
            {
                "type": "response.function_call_arguments.done",
                "name": alias,
                "call_id": "c1",
                "arguments": "{}",
            },
        )
        tn.websocket_end(f)
    assert alias.startswith("github_create_issue_")
    assert json.loads(back.content)["name"] == "github.create_issue"
    meta = f.metadata["toolnames"]
    assert meta["action"] == "fixed" and meta["restored"] == 1
    assert meta["fixes"] == [
        {
            "path": "session.tools[0].name",
            "from": "github.create_issue",
            "to": alias,
            "rewrite": "alias",
            "message_index": 0,
        }
    ]
    assert f.marked == ":hammer_and_wrench:"
    # One outcome for the renamed message, said once: no error line beside the fix.
    lines = [r.getMessage() for r in caplog.records if ": toolnames " in r.getMessage()]
    assert len(lines) == 1
    assert lines[0].endswith(
        f"message 0 (client): toolnames fixed renamed 'github.create_issue' → '{alias}'"
    )


def test_a_websocket_that_is_no_llm_session_is_left_alone():
    with live_sessions() as (tctx, tn):
        f = ws_flow("example.com", "/socket")
        tn.websocket_start(f)
        ws_send(tn, f, True, realtime_update("a.b"))
        tn.websocket_end(f)
    assert "toolnames" not in f.metadata and f not in tn.toolnames.tracked


def test_a_saved_session_holds_no_credential_and_reads_back_as_recorded(tmp_path, caplog):
    path = tmp_path / "flagged.mitm"
    with live_sessions(toolnames_save=str(path)) as (tctx, tn):
        f = ws_flow("generativelanguage.googleapis.com", LIVE_PATH)
        f.request.headers["sec-websocket-protocol"] = (
            "realtime, openai-insecure-api-key.sk-secret, openai-beta.realtime-v1"
        )
        f.request.headers["x-goog-api-key"] = "secret-goog"
        tn.websocket_start(f)
        ws_send(
            tn, f, True, {"setup": {"tools": [{"functionDeclarations": [{"name": "fs/read"}]}]}}
        )
        tn.websocket_end(f)
    (saved,) = read_flows(path)
    assert saved.request.headers["sec-websocket-protocol"] == (
        "realtime, openai-insecure-api-key.REDACTED-by-toolnames, openai-beta.realtime-v1"
    )
    assert saved.request.query["key"] == "REDACTED-by-toolnames"
    assert saved.request.headers["x-goog-api-key"] == "REDACTED-by-toolnames"
    assert len(saved.websocket.messages) == 1
    assert f.metadata["toolnames"]["saved"] is True
    assert saved.metadata["toolnames"]["findings"][0]["message_index"] == 0
    assert "secret" not in str(saved.get_state())
    assert f.request.query["key"] == "sk-live-secret"  # the live flow keeps it
    # Read back: shown as recorded, not checked again.
    caplog.set_level(logging.WARNING)
    with live_sessions() as (tctx, tn):
        saved.live = False
        tn.websocket_start(saved)
        for _ in range(len(saved.websocket.messages)):
            tn.websocket_message(saved)
        tn.websocket_end(saved)
    assert "toolnames error: name-invalid-chars" in caplog.text
    assert "sk-live-secret" not in caplog.text


def test_the_report_counts_a_flagged_session_by_code_and_host():
    with live_sessions() as (tctx, tn):
        f = ws_flow("api.openai.com", REALTIME_PATH)
        tn.websocket_start(f)
        ws_send(tn, f, True, realtime_update("a.b", "c.d"))
        tn.websocket_end(f)
        summary = report.run([f])
    assert summary["by_code"] == {"name-invalid-chars": 2}
    assert summary["outcomes"]["flagged"] == 1
    assert summary["by_host"]["api.openai.com"]["findings"] == 2
