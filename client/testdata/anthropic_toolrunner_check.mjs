// Runs the official Anthropic Node SDK's tool runner against a Switchyard server (argv:
// base URL, key): it runs on message threads, continuing each with only its new messages.
// Prints the final message and the statuses the SDK met as one JSON object. Used by
// TestReview22bAnthropicNodeToolRunner.
import Anthropic from "@anthropic-ai/sdk";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";

const [baseURL, apiKey] = process.argv.slice(2);
const statuses = [];
const client = new Anthropic({ baseURL, apiKey, maxRetries: 0,
  fetch: async (url, init) => { const r = await fetch(url, init); statuses.push(r.status); return r; } });
const runner = client.beta.messages.toolRunner({ model: "openai/gpt-4o-mini", max_tokens: 256,
  messages: [{ role: "user", content: "Weather in Paris?" }],
  tools: [betaTool({ name: "get_weather", description: "Current weather of a city",
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, run: async () => "18°C" })] });
const final = await runner.runUntilDone();
console.log(JSON.stringify({ content: final.content, statuses }));
