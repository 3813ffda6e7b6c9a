"""The addon inside mitmproxy's test master, configured as mitmdump configures it: for the
tests and for the benchmark's CPU figures, which must measure the very same thing."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from mitmproxy import hooks
from mitmproxy.test import taddons

from toolnames_mitm import LiveSessions
from toolnames_mitm import McpTraffic
from toolnames_mitm import ToolNames

__all__ = ["running"]


@contextlib.contextmanager
def running(*others: object, **options: object) -> Iterator[tuple[taddons.context, ToolNames]]:
    """The addon (with ``others`` after it) configured as mitmproxy does at startup, then with
    ``options``; yields (tctx, addon) and runs the addon's done hook on the way out. Its
    WebSocket hooks are ``tctx.master.addons.get("livesessions")``, its MCP hooks
    ``tctx.master.addons.get("mcptraffic")``, as in the script."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    tn = ToolNames()
    try:
        with taddons.context(tn, LiveSessions(tn), McpTraffic(tn), *others) as tctx:
            # mitmproxy configures every option once at startup; taddons.context does not.
            tctx.master.addons.invoke_addon_sync(tn, hooks.ConfigureHook(set(tctx.options.keys())))
            if options:
                tctx.configure(tn, **options)
            try:
                yield tctx, tn
            finally:
                tn.done()
    finally:
        # The test master's log handler outlives its closed event loop; a second context in
        # the same process would fail on the first log line without this.
        for handler in set(root.handlers) - set(handlers):
            root.removeHandler(handler)
