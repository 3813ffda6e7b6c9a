// One Mastra agent turn that forces a tool by the key it was registered under (the seed's probe).
//
//   node forced_tool.cjs BASE_URL [TOOL_KEY]
//
// BASE_URL is the OpenAI-compatible base URL Mastra talks to, e.g. http://127.0.0.1:8080/v1
// (default: $TOOLNAMES_BASE_URL). TOOL_KEY is the key the tool is registered under and the name
// toolChoice forces (default: $TOOLNAMES_TOOL_KEY, else "search.web"). Mastra rewrites the key
// in `tools` (search.web -> search_web) but sends toolChoice as given, so the request names a
// tool it does not offer.
//
// Prints exactly one JSON line on stdout:
//   {"ok":true,"key":…,"text":…,"toolCalls":[names],"toolResults":[{toolName,result}],"executed":[inputs]}
//   {"ok":false,"key":…,"error":message,"statusCode":…,"executed":[inputs]}
// and exits 0 when the turn succeeded, 1 when it failed, 2 on a usage error.
'use strict';

// Offline: this script must talk to nothing but BASE_URL (Mastra's usage telemetry is opt-out).
process.env.MASTRA_TELEMETRY_DISABLED = process.env.MASTRA_TELEMETRY_DISABLED || '1';

const { Agent } = require('@mastra/core/agent');
const { createTool } = require('@mastra/core/tools');
const { noopLogger } = require('@mastra/core/logger');
const { z } = require('zod');

const baseUrl = process.argv[2] || process.env.TOOLNAMES_BASE_URL;
const key = process.argv[3] || process.env.TOOLNAMES_TOOL_KEY || 'search.web';
if (!baseUrl) {
  process.stderr.write('usage: node forced_tool.cjs BASE_URL [TOOL_KEY]\n');
  process.exit(2);
}

// What execute() was called with: proof that the forced call ran end to end.
const executed = [];

const weatherTool = createTool({
  id: 'get-weather',
  description: 'Get the weather for a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async function (input) {
    executed.push(input);
    return { forecast: 'sunny', city: input.city, tempC: 20 };
  },
});

const agent = new Agent({
  name: 'forced',
  instructions: 'Always call the weather tool.',
  model: { id: 'openai/gpt-4o-mini', url: baseUrl, apiKey: 'sk-test-not-a-key' },
  tools: { [key]: weatherTool },
});
// Mastra logs provider errors to the console; the JSON line below carries them instead.
agent.__setLogger(noopLogger);

function print(result) {
  process.stdout.write(JSON.stringify({ key: key, ...result, executed: executed }) + '\n');
}

function failure(error) {
  return {
    ok: false,
    error: String((error && error.message) || error),
    statusCode: (error && (error.statusCode || (error.cause && error.cause.statusCode))) || null,
  };
}

agent
  .generate('hi', { toolChoice: { type: 'tool', toolName: key } })
  .then(function (result) {
    if (result.error) {
      print(failure(result.error));
      process.exitCode = 1;
      return;
    }
    print({
      ok: true,
      text: result.text,
      toolCalls: (result.toolCalls || []).map(function (c) { return c.payload.toolName; }),
      toolResults: (result.toolResults || []).map(function (r) {
        return { toolName: r.payload.toolName, result: r.payload.result };
      }),
    });
  })
  .catch(function (error) {
    print(failure(error));
    process.exitCode = 1;
  });
