// Runs the official OpenAI Node SDK against a Switchyard server (argv: base URL, key) and
// prints what it saw as one JSON object. Used by TestOfficialNodeSDK.
import OpenAI from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey, maxRetries: 2 });
const out = {};
const tools = [{ type: "function", function: { name: "get_weather", description: "Current weather of a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];

const chat = await client.chat.completions.create({ model: "openai/gpt-4o-mini", tools,
  messages: [{ role: "user", content: "Weather in Paris?" }] });
out.chatFinish = chat.choices[0].finish_reason;
out.chatCall = chat.choices[0].message.tool_calls?.[0]?.function;

const stream = await client.responses.create({ model: "openai/gpt-4o-mini", input: "Weather in Paris?", stream: true,
  tools: [{ type: "function", name: "get_weather", parameters: tools[0].function.parameters, strict: false }] });
out.responseEvents = [];
for await (const ev of stream) {
  out.responseEvents.push(ev.type);
  if (ev.type === "response.completed") out.responseOutput = ev.response.output;
}

const second = await client.responses.create({ model: "openai/gpt-4o-mini", input: [
  { role: "user", content: "Weather in Paris?" },
  { type: "function_call", call_id: "call_1", name: "get_weather", arguments: "{\"city\": \"Paris\"}" },
  { type: "function_call_output", call_id: "call_1", output: "18°C" }] });
out.outputText = second.output_text;

// The Node SDK asks base64 vectors by default and decodes them to numbers.
const emb = await client.embeddings.create({ model: "text-embedding-3-small", input: ["the cat sat", "dogs"] });
out.embeddings = emb.data.map((d) => Array.from(d.embedding));
out.embeddingsModel = emb.model;
out.embeddingsTokens = emb.usage.prompt_tokens;

async function failure(fn) {
  try { await fn(); return { ok: true }; } catch (e) {
    return { name: e.constructor.name, status: e.status, code: e.code ?? null, param: e.param ?? null, type: e.type ?? null, message: e.message };
  }
}
out.badModel = await failure(() => client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "hi" }] }));
out.badKey = await failure(() => new OpenAI({ baseURL: baseURL + "/v1", apiKey: "wrong", maxRetries: 2 }).chat.completions.create(
  { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }));
out.models = (await client.models.list()).data.length;

// The response cache (the server caches only requests that ask): the cache object goes in
// the body as LiteLLM's users send it; the second answer comes from the cache.
const cached = { model: "openai/gpt-4o-mini", tools, cache: { "use-cache": true, namespace: "node" },
  messages: [{ role: "user", content: "Weather in Lyon?" }] };
const c1 = await client.chat.completions.create(cached).withResponse();
await new Promise((r) => setTimeout(r, 200)); // the answer is kept in the background
const c2 = await client.chat.completions.create(cached).withResponse();
out.cache = [c1.response.headers.get("x-switchyard-cache"), c2.response.headers.get("x-switchyard-cache")];
out.cachedCall = c2.data.choices[0].message.tool_calls?.[0]?.function;
const s3 = await client.chat.completions.create({ ...cached, stream: true }).withResponse();
out.cacheStream = s3.response.headers.get("x-switchyard-cache");
out.cacheStreamArgs = "";
for await (const ch of s3.data) out.cacheStreamArgs += ch.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? "";

// Legacy completions (autocomplete tools).
const legacy = await client.completions.create({ model: "openai/gpt-4o-mini", prompt: "def add(a, b):", max_tokens: 16 });
out.legacy = { object: legacy.object, choices: legacy.choices.length, finish: legacy.choices[0].finish_reason };
console.log(JSON.stringify(out));
