"""The entry, addon/toolnames.py, as mitmdump -s loads it: its addons registered and
configured, and working. What they do is tested with their modules (tests/mitm/)."""

import json
from pathlib import Path

from mitmproxy import hooks
from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from toolnames_mitm.addon import ToolNames
from toolnames_mitm.mcp import McpTraffic
from toolnames_mitm.websockets import LiveSessions

ADDON_SCRIPT = Path(__file__).resolve().parent.parent / "addon" / "toolnames.py"
# A named choice of a tool that is not offered: blocked in block mode.
MASTRA = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "search_web", "parameters": {}}}],
    "tool_choice": {"type": "function", "function": {"name": "search.web"}},
}


def test_the_script_registers_the_http_websocket_and_mcp_addons_sharing_one_state():
    with taddons.context() as tctx:
        script = tctx.script(str(ADDON_SCRIPT))
        tn, live, mcp = script.addons
        assert isinstance(tn, ToolNames) and isinstance(live, LiveSessions)
        assert isinstance(mcp, McpTraffic)
        assert live.toolnames is tn and mcp.tool_names is tn
        assert tctx.master.addons.get("livesessions") is live
        assert tctx.master.addons.get("mcptraffic") is mcp


def test_the_addon_script_loads_configures_and_blocks():
    with taddons.context() as tctx:
        # Loading the script registers its addon and configures every option, as mitmdump -s does.
        tn = tctx.script(str(ADDON_SCRIPT)).addons[0]
        assert tn.max_body == 32 * 1024 * 1024
        # What mitmproxy does for a script's addon when an option changes (taddons'
        # configure() only reaches addons in the master's chain).
        tctx.options.update(toolnames_mode="block")
        tctx.master.addons.invoke_addon_sync(tn, hooks.ConfigureHook({"toolnames_mode"}))
        f = tflow.tflow(req=tutils.treq(method=b"POST", path=b"/v1/chat/completions"))
        f.request.text = json.dumps(MASTRA)
        tn.request(f)
    assert f.response.status_code == 400
