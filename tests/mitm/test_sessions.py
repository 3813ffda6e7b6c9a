"""Answering a blocked WebSocket message: the injected error event, and the close with a
code and a reason through mitmproxy's own WebSocket layer (driven here event by event,
as the proxy server drives it, on mitmproxy 11 and 12 alike)."""

import logging
import os
import struct

import pytest
from mitmproxy.proxy import commands
from mitmproxy.proxy import context
from mitmproxy.proxy import events
from mitmproxy.proxy import layer
from mitmproxy.proxy.layers import websocket
from mitmproxy.test import taddons
from mitmproxy.test import tflow

from toolnames_core.sessions import Block
from toolnames_mitm import sessions


def client_frame(opcode: int, payload: bytes) -> bytes:
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + masked


def unmask(frame: bytes) -> tuple[int, bytes]:
    assert frame[1] & 0x80
    length, mask = frame[1] & 0x7F, frame[2:6]
    return frame[0], bytes(b ^ mask[i % 4] for i, b in enumerate(frame[6 : 6 + length]))


def test_close_frame_is_a_masked_client_close():
    opcode, payload = unmask(sessions.close_frame(1007, "toolnames: é"))
    assert opcode == 0x88
    assert struct.unpack("!H", payload[:2]) == (1007,)
    assert payload[2:].decode() == "toolnames: é"
    with pytest.raises(ValueError):
        sessions.close_frame(1007, "x" * 124)


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
    assert sessions.close(flow, 1007, "toolnames: bad name")
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
        assert not sessions.close(flow, 1007, "toolnames: x")
    assert "could not close the WebSocket" in caplog.text


def test_close_on_internals_it_does_not_know_logs_and_never_raises(monkeypatch, caplog):
    flow = tflow.twebsocketflow()
    with taddons.context() as tctx:
        monkeypatch.setattr(tctx.master.addons, "get", lambda name: 42)  # not a proxyserver
        caplog.set_level(logging.WARNING)
        assert not sessions.close(flow, 1007, "toolnames: x")

        def broken(name):
            raise RuntimeError("changed")

        monkeypatch.setattr(tctx.master.addons, "get", broken)
        assert not sessions.close(flow, 1007, "toolnames: x")
    assert "RuntimeError: changed" in caplog.text


def test_answer_injects_an_error_event_or_closes(monkeypatch):
    flow = tflow.twebsocketflow()
    calls = []
    with taddons.context() as tctx:
        monkeypatch.setattr(tctx.master.commands, "call", lambda *a: calls.append(a))
        sessions.answer(flow, Block(event=b'{"type": "error"}'))
        assert calls == [("inject.websocket", flow, True, b'{"type": "error"}', True)]
        closed = []
        monkeypatch.setattr(sessions, "close", lambda *a: closed.append(a))
        sessions.answer(flow, Block(close_code=1007, close_reason="toolnames: x"))
        assert closed == [(flow, 1007, "toolnames: x")]
