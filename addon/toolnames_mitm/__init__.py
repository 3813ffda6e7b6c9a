"""Everything of toolnames that touches mitmproxy: flows in and out of the pure core
(``flows``), observe mode's deferred checks (``deferral``), saving (``save``), the
content view (``view``) and the report command's flows (``report``)."""

__all__ = ["deferral", "flows", "report", "save", "view"]
