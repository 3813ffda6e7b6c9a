"""(e) An MCP server's tools/list page of 1,000 tools through the MCP hooks, in process: the
whole flow (request, responseheaders, response, the SSE answer through its tap), observe and
fix (every fifth name aliased), against json.loads of the same answer."""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass

from mitmproxy import http
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from benchmark.cpu import time_interleaved
from harness.inprocess import running
from harness.load import progress

__all__ = ["TOOLS", "McpRow", "bench_mcp", "listing", "listing_flow"]

TOOLS = 1000
LIST = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'


def listing(tools: int = TOOLS) -> bytes:
    """A tools/list answer as a server writes one: names, descriptions, schemas; every fifth
    name dotted, as MCP servers name their tools and providers reject."""
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "tools": [
                    {
                        "name": f"github.tool_{i}" if i % 5 == 0 else f"tool_{i}",
                        "description": f"Does thing number {i} to the repository. " * 3,
                        "inputSchema": {
                            "type": "object",
                            "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
                            "required": ["q"],
                        },
                    }
                    for i in range(tools)
                ]
            },
        }
    ).encode()


def listing_flow(sse: bool) -> tuple[http.HTTPFlow, bytes, str]:
    request = tutils.treq(method=b"POST", scheme=b"http", host="127.0.0.1", port=8931, path=b"/mcp")
    request.headers["mcp-session-id"] = "bench"
    request.headers["accept"] = "application/json, text/event-stream"
    request.content = LIST
    answer = listing()
    content_type = "application/json"
    if sse:
        answer = b"event: message\r\ndata: " + answer + b"\r\n\r\n"
        content_type = "text/event-stream"
    return tflow.tflow(req=request, live=True), answer, content_type


@dataclass
class McpRow:
    answer: str  # JSON or SSE
    size: int
    samples: dict[str, list[float]]

    def best(self, name: str) -> float:
        return min(self.samples[name])

    def ratio(self, name: str) -> float:
        return self.best(name) / self.best("json.loads")


def _timed(mode: str, sse: bool, min_time: float, repeats: int) -> dict[str, list[float]]:
    with running(toolnames_mode=mode) as (tctx, tn):
        mcp = tctx.master.addons.get("mcptraffic")
        flow, answer, content_type = listing_flow(sse)

        def whole_flow() -> None:
            # A new flow each time, as far as the hooks can tell.
            tn.tracked.pop(flow, None)
            flow.metadata.clear()
            flow.response = None
            flow.request.content = LIST
            mcp.request(flow)
            flow.response = http.Response.make(200, answer, {"content-type": content_type})
            mcp.responseheaders(flow)
            if callable(flow.response.stream):
                stream = flow.response.stream
                flow.response.content = b"".join([*stream(answer), *stream(b"")])
            mcp.response(flow)

        whole_flow()
        fixes = len(flow.metadata["toolnames"].get("fixes", []))
        if fixes != (TOOLS // 5 if mode == "fix" else 0):
            raise SystemExit(f"MCP bench: {mode} mode made {fixes} fixes")
        gc.collect()
        body = answer.split(b"data: ", 1)[-1] if sse else answer
        fns = {"json.loads": lambda: json.loads(body), mode: whole_flow}
        return time_interleaved(fns, min_time, repeats)


def bench_mcp(quick: bool) -> list[McpRow]:
    min_time, repeats = (0.01, 3) if quick else (0.04, 7)
    rows = []
    for sse in (False, True):
        observe = _timed("observe", sse, min_time, repeats)
        fix = _timed("fix", sse, min_time, repeats)
        samples = {
            "json.loads": [
                min(a, b) for a, b in zip(observe["json.loads"], fix["json.loads"], strict=True)
            ],
            "observe": observe["observe"],
            "fix": fix["fix"],
        }
        row = McpRow("SSE" if sse else "JSON", len(listing_flow(sse)[1]), samples)
        progress(
            f"(e) tools/list {TOOLS} tools, {row.answer}: json.loads {row.best('json.loads') * 1e3:.2f} ms"
            f"   observe {row.ratio('observe'):.2f}x   fix {row.ratio('fix'):.2f}x"
        )
        rows.append(row)
    return rows
