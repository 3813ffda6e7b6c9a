"""The WebSocket side of toolnames (OpenAI Realtime, Gemini Live): one ``Session`` per
connection, each message checked as it passes, and a blocked message answered with an
error event towards the client, or a close.

The hooks are their own addon (``LiveSessions``) beside the HTTP one (addon.py), whose
options, store, log line and saving they share.

An event goes out through mitmproxy's public ``inject.websocket`` command. A close with a
code and a reason has no public API (``flow.kill()`` drops the TCP connection without a
close frame, and the client then sees 1006 and no reason), so ``close`` below is the one
place toolnames uses mitmproxy internals: it finds the connection's WebSocket layer and
feeds its client side a close frame, as if the client had sent it. The layer then does
what it does for any close: sends the close frame on to both sides (the client reads
the code and the reason), closes both connections and ends the flow. Tested on mitmproxy
11.0 and 12 (tests/mitm/test_sessions.py, tests/e2e/test_sessions.py).
"""

from __future__ import annotations

import logging
import os
import struct

from mitmproxy import ctx
from mitmproxy import http
from mitmproxy.proxy import layer as layer_
from mitmproxy.proxy.layers import websocket

from toolnames_core import Block
from toolnames_mitm import flows
from toolnames_mitm.addon import ToolNames
from toolnames_mitm.flows import Tracked

__all__ = ["LiveSessions", "answer", "close", "close_frame"]

logger = logging.getLogger(__name__)


class LiveSessions:
    """The WebSocket hooks, with the HTTP addon's options, store, log line and saving."""

    def __init__(self, toolnames: ToolNames) -> None:
        self.toolnames = toolnames

    def websocket_start(self, flow: http.HTTPFlow) -> None:
        tn = self.toolnames
        if not tn.watches(flow):
            return
        session = flows.session_for(flow, tn.overrides, tn.mode, tn.reader)
        if session is None or tn.shown_as_read_back(flow):
            return
        tn.tracked[flow] = Tracked(session=session)

    def websocket_message(self, flow: http.HTTPFlow) -> None:
        tracked = self.toolnames.tracked.get(flow)
        session = tracked.session if tracked is not None else None
        if session is None or flow.websocket is None:
            return
        index = len(flow.websocket.messages) - 1
        message = flow.websocket.messages[index]
        if message.injected:
            return  # toolnames' own error event, or another addon's message
        outcome = session.receive(index, message.from_client, message.content)
        if outcome.block is not None:
            message.drop()
            answer(flow, outcome.block)
        elif outcome.content is not None:
            message.content = outcome.content
        changed = outcome.block is not None or outcome.content is not None
        if not (outcome.findings or changed):
            return
        recorded = flows.recorded(flow, session, self.toolnames.mode)
        flows.mark(flow, recorded)
        side = "client" if message.from_client else "server"
        fixed = recorded.fixed_message(index)
        if fixed is not None:
            # One line, its worst outcome first: a renamed name's findings are what was fixed.
            self.toolnames.log(flow, f"message {index} ({side}): {fixed.comment()}")
            return
        for finding in outcome.findings:
            self.toolnames.log(
                flow,
                f"message {index} ({side}): toolnames {finding.severity}: {finding.code}: {finding.message}",
            )

    def websocket_end(self, flow: http.HTTPFlow) -> None:
        tracked = self.toolnames.tracked.pop(flow, None)
        if tracked is None:
            return
        if tracked.read_back:
            self.toolnames.save(flow, tracked.record)
            return
        session = tracked.session
        if session is None:
            return
        recorded = None
        if session.findings or session.fixes:
            recorded = flows.recorded(flow, session, self.toolnames.mode)
            flows.mark(flow, recorded)
        self.toolnames.save(flow, recorded)


def answer(flow: http.HTTPFlow, block: Block) -> None:
    """Answer the client of ``flow`` instead of forwarding its message."""
    if block.event is not None:
        ctx.master.commands.call("inject.websocket", flow, True, block.event, True)
    else:
        close(flow, block.close_code, block.close_reason)


def close_frame(code: int, reason: str) -> bytes:
    """A masked close frame, as a client sends one (RFC 6455 §5.5.1)."""
    payload = struct.pack("!H", code) + reason.encode("utf-8")
    if len(payload) > 125:
        raise ValueError("a close frame's payload is at most 125 bytes")
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x88, 0x80 | len(payload)]) + mask + masked


def _websocket_layer(flow: http.HTTPFlow) -> websocket.WebsocketLayer | None:
    proxyserver = ctx.master.addons.get("proxyserver")
    handler = getattr(proxyserver, "connections", {}).get(flow.client_conn.id)
    todo = [getattr(handler, "layer", None)]
    seen = set()
    while todo:
        found = todo.pop()
        if not isinstance(found, layer_.Layer) or id(found) in seen:
            continue
        seen.add(id(found))
        if isinstance(found, websocket.WebsocketLayer) and found.flow is flow:
            return found
        # Layers nest as child_layer, NextLayer.layer, and HttpLayer's streams by id.
        for value in vars(found).values():
            todo.extend(value.values() if isinstance(value, dict) else (value,))
    return None


def close(flow: http.HTTPFlow, code: int, reason: str) -> bool:
    """Close ``flow``'s WebSocket with ``code`` and ``reason``, from inside its message hook;
    False (and a log line) when the connection's layer cannot be found or fed."""
    try:
        client = getattr(_websocket_layer(flow), "client_ws", None)
        if client is not None:
            # Read right after the message being handled, in the same pass of the layer's loop.
            client.receive_data(close_frame(code, reason))
            return True
        problem = "its WebSocket layer was not found"
    except Exception as e:  # noqa: BLE001 (internals of another mitmproxy version: say so)
        problem = f"{type(e).__name__}: {e}"
    logger.warning(
        "toolnames could not close the WebSocket of %s with code %d (%s): %s; its message "
        "was not forwarded",
        flow.request.pretty_url,
        code,
        reason,
        problem,
    )
    return False
