"""Everything of toolnames that touches mitmproxy: the HTTP addon (``addon``) and the
WebSocket one (``websockets``), flows in and out of the pure core (``flows``), observe
mode's deferred checks (``deferral``), the options (``options``), saving (``save``), the
content view (``view``) and the report command's flows (``report``)."""

__all__ = ["addon", "deferral", "flows", "options", "report", "save", "view", "websockets"]
