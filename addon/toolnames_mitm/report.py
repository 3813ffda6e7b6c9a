"""``toolnames.report``: the flows' side of the report; the summary itself is the core's."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence

from mitmproxy import exceptions
from mitmproxy import flow
from mitmproxy import http
from mitmproxy.log import ALERT

from toolnames_core import FlowEntry
from toolnames_core import format_summary
from toolnames_core import summarize
from toolnames_mitm.flows import META_KEY
from toolnames_mitm.flows import host

__all__ = ["entries", "run"]

logger = logging.getLogger(__name__)


def entries(flows: Sequence[flow.Flow]) -> list[FlowEntry]:
    return [
        FlowEntry(
            f.id,
            host(f.request),
            f.request.method,
            f.request.path,
            f.metadata.get(META_KEY),
        )
        for f in flows
        if isinstance(f, http.HTTPFlow)
    ]


def run(flows: Sequence[flow.Flow], path: str = "") -> dict:
    """Log the summary of ``flows`` at ALERT level; with a path, also write it as JSON."""
    summary = summarize(entries(flows), selected=len(flows))
    logger.log(ALERT, format_summary(summary))
    if path:
        target = os.path.expanduser(path)
        try:
            with open(target, "w", encoding="utf-8") as f:
                json.dump(summary, f, indent=2, ensure_ascii=False)
                f.write("\n")
        except OSError as e:
            raise exceptions.CommandError(f"Cannot write the toolnames report: {e}") from e
        logger.log(ALERT, "toolnames report written to %s", target)
    return summary
