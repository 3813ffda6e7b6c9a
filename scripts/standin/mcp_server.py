"""A stand-in MCP server: the real ``mcp`` SDK's MCPServer over Streamable HTTP under uvicorn,
serving the names MCP servers are born with (``github.create_issue``, ``search docs``, a
141-character name) beside a plain one. The SDK validates as it does for any server,
``Mcp-Name`` against ``params.name`` included, so what toolnames sends on is held to it.

    python -m standin.mcp_server --port 8931 [--json]   # http://127.0.0.1:8931/mcp
    python -m standin.mcp_server --port 8931 --sse      # the older HTTP+SSE transport, /sse
    python -m standin.mcp_server --stdio [--tool NAME]... [--record FILE]   # for a client
                                                        # that starts its servers (Claude Code)

Each tool answers ``<its name> ran with <arguments>``, so a caller can tell which one ran;
``--record FILE`` also appends one JSON line per call, ``{"name": …, "arguments": …}``, so a
test sees which tool a closed client called, under the server's own name. ``--tool``
serves the names given instead of NAMES.
Needs the ``mcp`` package (requirements/test.txt); the addon never imports this.
"""

from __future__ import annotations

import argparse
import json
import sys

__all__ = [
    "DOTTED",
    "LONG",
    "NAMES",
    "PATH",
    "PLAIN",
    "SPACED",
    "SSE_PATH",
    "build",
    "main",
    "server",
]

DOTTED = "github.create_issue"
SPACED = "search docs"
# Past MCP's 128, and far past the providers' 64 once a client prefixes it.
LONG = "mcp_tool_" + "x" * 132
PLAIN = "get_weather"
NAMES = (DOTTED, SPACED, LONG, PLAIN)
PATH = "/mcp"
# The older HTTP+SSE transport: the client GETs this stream and POSTs where its first event says.
SSE_PATH = "/sse"


def _tool(name: str, record: str | None):
    # ``text`` is optional: a model (the stand-in provider's) may call a tool with no arguments.
    def run(text: str = "") -> str:
        if record is not None:
            # One write per line, so lines of calls that run at once do not interleave.
            with open(record, "a", encoding="utf-8") as out:
                out.write(json.dumps({"name": name, "arguments": {"text": text}}) + "\n")
        return f"{name} ran with {json.dumps({'text': text})}"

    return run


def server(names: tuple[str, ...] = NAMES, record: str | None = None):
    """The MCPServer: every name in ``names`` a tool taking one string, ``text``; each call
    appended to the file ``record`` if given."""
    from mcp.server.mcpserver import MCPServer

    served = MCPServer("toolnames-standin")
    for name in names:
        served.add_tool(_tool(name, record), name=name, description=f"the tool {name}")
    return served


def build(json_response: bool = False, sse: bool = False):
    """The Starlette app serving it over Streamable HTTP at PATH, or (``sse``) over the
    older HTTP+SSE transport at SSE_PATH."""
    if sse:
        return server().sse_app()
    return server().streamable_http_app(streamable_http_path=PATH, json_response=json_response)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m standin.mcp_server", description=__doc__)
    parser.add_argument("--port", type=int)
    parser.add_argument("--json", action="store_true", help="answer JSON, not SSE")
    parser.add_argument("--sse", action="store_true", help="the older HTTP+SSE transport")
    parser.add_argument("--stdio", action="store_true", help="serve on stdin/stdout, no port")
    parser.add_argument("--tool", action="append", help="serve this name (repeatable)")
    parser.add_argument("--record", metavar="FILE", help="append each call to FILE (JSON lines)")
    args = parser.parse_args(argv)
    if args.stdio:
        server(tuple(args.tool or NAMES), args.record).run("stdio")
        return 0
    if args.port is None:
        parser.error("--port is required unless --stdio is given")
    import uvicorn

    uvicorn.run(build(args.json, args.sse), host="127.0.0.1", port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
