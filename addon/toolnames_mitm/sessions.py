"""Answering a blocked WebSocket message: an error event towards the client, or a close.

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

from toolnames_core.sessions import Block

__all__ = ["answer", "close", "close_frame"]

logger = logging.getLogger(__name__)


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
