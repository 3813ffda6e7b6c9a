"""(e) an MCP tools/list page (benchmark.mcp)."""

import json

from benchmark.mcp import TOOLS
from benchmark.mcp import bench_mcp
from benchmark.mcp import listing
from benchmark.mcp import listing_flow
from benchmark.report import report_mcp


def test_the_listing_has_a_thousand_tools_every_fifth_dotted():
    tools = json.loads(listing())["result"]["tools"]
    assert len(tools) == TOOLS == 1000
    assert sum("." in t["name"] for t in tools) == 200


def test_the_sse_answer_is_one_event_of_the_same_listing():
    _, answer, content_type = listing_flow(sse=True)
    assert content_type == "text/event-stream"
    assert answer.endswith(b"\r\n\r\n") and json.loads(answer.split(b"data: ", 1)[1]) == json.loads(
        listing()
    )


def test_a_quick_run_times_observe_and_fix_for_json_and_sse():
    rows = bench_mcp(quick=True)
    assert [r.answer for r in rows] == ["JSON", "SSE"]
    for row in rows:
        assert set(row.samples) == {"json.loads", "observe", "fix"}
        assert row.ratio("observe") > 0 and row.ratio("fix") > 0
    assert "tools/list, 1,000 tools, SSE" in report_mcp(rows).text
