"""Everything of toolnames that touches mitmproxy: flows in and out of the pure core
(``flows``), observe mode's deferred checks (``deferral``), the options (``options``),
saving (``save``), the content view (``view``) and the report command's flows (``report``)."""

__all__ = ["deferral", "flows", "options", "report", "save", "view"]
