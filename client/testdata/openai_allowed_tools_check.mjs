// Runs the official OpenAI Node SDK's allowed_tools tool choice against a Switchyard server
// (argv: base URL, key): on chat completions and on the Responses API, and a Responses
// request forcing a custom tool. Prints what it saw as one JSON object (an error's status
// and message in place of an answer). Used by TestAllowedToolsNodeSDK.
import OpenAI from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey, maxRetries: 0 });
const parameters = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const names = ["get_weather", "get_time", "get_news"];
const out = {};
async function attempt(name, fn) {
  try { out[name] = await fn(); } catch (e) { out[name] = { status: e.status ?? null, error: e.message }; }
}
await attempt("chat", async () => {
  const c = await client.chat.completions.create({ model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "Weather in Paris?" }],
    tools: names.map((name) => ({ type: "function", function: { name, parameters } })),
    tool_choice: { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "get_weather" } }] } } });
  return { finish: c.choices[0].finish_reason, call: c.choices[0].message.tool_calls?.[0]?.function?.name ?? null };
});
await attempt("responses", async () => {
  const allowed = { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "get_weather" }, { type: "function", name: "get_news" }] };
  const r = await client.responses.create({ model: "openai/gpt-4o-mini", input: "Weather in Paris?",
    tools: names.map((name) => ({ type: "function", name, parameters, strict: false })), tool_choice: allowed });
  return { status: r.status, call: r.output.find((i) => i.type === "function_call")?.name ?? null, toolChoice: r.tool_choice };
});
await attempt("custom", async () => {
  const r = await client.responses.create({ model: "openai/gpt-4o-mini", input: "Weather in Paris?",
    tools: [{ type: "function", name: "get_weather", parameters, strict: false }, { type: "custom", name: "apply_patch", description: "Edit files." }],
    tool_choice: { type: "custom", name: "apply_patch" } });
  return { status: r.status, toolChoice: r.tool_choice };
});
console.log(JSON.stringify(out));
