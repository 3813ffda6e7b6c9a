// Two steps of a Vercel AI SDK app whose tools carry names the provider rejects, as MCP servers
// bring them (`github.create_issue`): the model calls a tool, the SDK runs it by the name it
// knows, and sends the call and its result back in the history of the second step.
//
//   node ai_sdk_tools.cjs BASE_URL API STREAM
//
// BASE_URL is the OpenAI base URL, e.g. http://127.0.0.1:8080/v1; API is "chat" (chat
// completions) or "responses"; STREAM is "stream" or "generate". The AI SDK sends tool names as
// the app wrote them, so without toolnames' fix mode the provider rejects the first request.
//
// Prints exactly one JSON line on stdout:
//   {"ok":true,"text":…,"toolCalls":[names per step],"executed":[{name,input}]}
//   {"ok":false,"error":message,"statusCode":…,"executed":[…]}
// and exits 0 when both steps succeeded, 1 when a request failed, 2 on a usage error.
'use strict';

const { generateText, streamText, tool, stepCountIs } = require('ai');
const { createOpenAI } = require('@ai-sdk/openai');
const { z } = require('zod');

const [baseUrl, api, mode] = process.argv.slice(2);
if (!baseUrl || !['chat', 'responses'].includes(api) || !['stream', 'generate'].includes(mode)) {
  process.stderr.write('usage: node ai_sdk_tools.cjs BASE_URL chat|responses stream|generate\n');
  process.exit(2);
}

// Which tool ran, under the name the app registered it with: proof that the answer's names
// came back as the app's own.
const executed = [];
const tools = {
  'github.create_issue': tool({
    description: 'Open an issue',
    inputSchema: z.object({ city: z.string() }),
    execute: async (input) => {
      executed.push({ name: 'github.create_issue', input });
      return { number: 7 };
    },
  }),
  get_weather: tool({
    description: 'Get the weather',
    inputSchema: z.object({ city: z.string() }),
    execute: async (input) => {
      executed.push({ name: 'get_weather', input });
      return { forecast: 'sunny' };
    },
  }),
};

async function main() {
  const openai = createOpenAI({ baseURL: baseUrl, apiKey: 'sk-test-not-a-key' });
  const model = api === 'chat' ? openai.chat('gpt-4o-mini') : openai.responses('gpt-4o-mini');
  const options = {
    model,
    tools,
    // The first step must call the tool with the rejected name; the second answers in text.
    prepareStep: ({ stepNumber }) =>
      stepNumber === 0
        ? { toolChoice: { type: 'tool', toolName: 'github.create_issue' } }
        : { toolChoice: 'auto' },
    stopWhen: stepCountIs(2),
    maxRetries: 0,
    prompt: 'Open an issue about the weather in Paris.',
  };
  let steps;
  let text;
  if (mode === 'stream') {
    let streamError;
    const result = streamText({ ...options, onError: ({ error }) => (streamError = error) });
    try {
      text = await result.text;
      steps = await result.steps;
    } catch (error) {
      throw streamError || error; // the provider's own error, not "No output generated"
    }
    if (streamError) throw streamError;
  } else {
    const result = await generateText(options);
    text = result.text;
    steps = result.steps;
  }
  const toolCalls = steps.map((s) => s.toolCalls.map((c) => c.toolName));
  console.log(JSON.stringify({ ok: true, text, toolCalls, executed }));
}

main().catch((error) => {
  const statusCode = error.statusCode ?? error.lastError?.statusCode ?? null;
  console.log(JSON.stringify({ ok: false, error: String(error.message || error), statusCode, executed }));
  process.exit(1);
});
