// The TypeScript MCP SDK's client (@modelcontextprotocol/sdk) over Streamable HTTP or the
// older HTTP+SSE transport: lists the server's tools and calls each, or the names given.
//
//   node mcp_client.cjs URL [streamable|sse] [NAME...]
//
// Prints exactly one JSON line on stdout:
//   {"ok":true,"names":[…],"tools":[tool without its name…],"calls":{name:[isError,content]}}
//   {"ok":false,"error":message}
// and exits 0 when it got that far, 1 when it failed, 2 on a usage error.
'use strict';

const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { SSEClientTransport } = require('@modelcontextprotocol/sdk/client/sse.js');

const [url, kind = 'streamable', ...asked] = process.argv.slice(2);
if (!url) {
  process.stderr.write('usage: node mcp_client.cjs URL [streamable|sse] [NAME...]\n');
  process.exit(2);
}

async function main() {
  const transport =
    kind === 'sse' ? new SSEClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: 'toolnames-e2e', version: '1.0.0' });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  const calls = {};
  for (const name of asked.length ? asked : names) {
    try {
      const result = await client.callTool({ name, arguments: { text: 'Paris' } });
      calls[name] = [Boolean(result.isError), result.content];
    } catch (e) {
      calls[name] = ['raised', String(e && e.message)];
    }
  }
  await client.close();
  const shown = tools.map(({ name, ...rest }) => rest);
  process.stdout.write(JSON.stringify({ ok: true, names, tools: shown, calls }) + '\n');
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ ok: false, error: String(e && e.stack) }) + '\n');
  process.exit(1);
});
