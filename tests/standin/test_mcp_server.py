"""The stand-in MCP server (scripts/standin/mcp_server.py): the real SDK's server with the
names MCP servers are born with, each tool saying that it ran."""

import re

import pytest

from standin import mcp_server

pytestmark = pytest.mark.needs_sdk


def test_the_names_are_the_ones_the_providers_reject_and_a_plain_one():
    assert len(mcp_server.LONG) == 141
    mcp_rule = re.compile(r"[A-Za-z0-9_.-]{1,128}")
    assert mcp_rule.fullmatch(mcp_server.DOTTED)  # valid MCP, rejected by the providers
    assert not mcp_rule.fullmatch(mcp_server.SPACED)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", mcp_server.PLAIN)


async def test_it_lists_every_name_and_each_tool_says_it_ran():
    pytest.importorskip("mcp")
    from mcp import Client

    async with Client(mcp_server.server()) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == list(mcp_server.NAMES)
        result = await client.call_tool(mcp_server.DOTTED, {"text": "Paris"})
    assert result.content[0].text == 'github.create_issue ran with {"text": "Paris"}'


def test_the_app_serves_at_its_path():
    pytest.importorskip("mcp")
    app = mcp_server.build(json_response=True)
    assert any(getattr(route, "path", None) == mcp_server.PATH for route in app.routes)
