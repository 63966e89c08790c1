// Runs the official OpenAI Node SDK against a Switchyard server serving a Gemini model
// (argv: base URL, key): a json_schema response format beside tools — as an OpenAI Agents
// SDK agent with tools and an output type asks — on chat completions (whole and through the
// stream helper) and on the Responses API. Prints what it saw as one JSON object (an
// error's status and message in place of an answer). Used by
// TestGeminiStructuredOutputWithToolsNodeSDK.
import OpenAI from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey, maxRetries: 0 });
const model = "gemini/gemini-2.5-flash";
const schema = { type: "object", properties: { city: { type: "string" }, temp: { type: "number" } }, required: ["city", "temp"], additionalProperties: false };
const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const messages = [{ role: "user", content: "Weather in Paris?" }];
const chatTools = [{ type: "function", function: { name: "lookup", parameters } }];
const response_format = { type: "json_schema", json_schema: { name: "weather", strict: true, schema } };
const out = {};
async function attempt(name, fn) {
  try { out[name] = await fn(); } catch (e) { out[name] = { status: e.status ?? null, error: e.message }; }
}
await attempt("chat", async () => {
  const c = await client.chat.completions.create({ model, messages, tools: chatTools, response_format });
  return { content: c.choices[0].message.content, finish: c.choices[0].finish_reason, calls: c.choices[0].message.tool_calls?.length ?? 0 };
});
await attempt("stream", async () => {
  // The stream helper: chat.completions.stream from openai@5, beta.chat.completions before.
  const helpers = client.chat.completions.stream ? client.chat.completions : client.beta.chat.completions;
  const f = await helpers.stream({ model, messages, tools: chatTools, response_format }).finalChatCompletion();
  return { content: f.choices[0].message.content, finish: f.choices[0].finish_reason, calls: f.choices[0].message.tool_calls?.length ?? 0 };
});
await attempt("responses", async () => {
  const r = await client.responses.create({ model, input: "Weather in Paris?", tools: [{ type: "function", name: "lookup", parameters, strict: false }],
    text: { format: { type: "json_schema", name: "weather", strict: true, schema } } });
  return { text: r.output_text, status: r.status, types: r.output.map((i) => i.type) };
});
console.log(JSON.stringify(out));
