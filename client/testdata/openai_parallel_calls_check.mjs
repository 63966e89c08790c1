// Runs the official OpenAI Node SDK's responses.stream() helper against a Switchyard server
// whose model makes two parallel function calls (argv: base URL, key) and prints what it saw
// as one JSON object. Used by TestParallelCallsStreamThroughTheNodeSDK: the events' order
// (type and output_index), each call's arguments as the helper accumulated them from the
// deltas (the snapshot of its last delta), its function_call_arguments.done, and the calls
// of finalResponse().
import OpenAI from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey, maxRetries: 0 });
const parameters = { type: "object", properties: {} };
const tools = [
  { type: "function", name: "get_weather", parameters, strict: false },
  { type: "function", name: "get_time", parameters, strict: false },
];
const out = { events: [], snapshots: {}, done: {} };
const stream = client.responses.stream({ model: "openai/gpt-4o-mini", input: "Weather and time in Paris?", tools, parallel_tool_calls: true });
stream.on("event", (e) => { out.events.push([e.type, e.output_index ?? null]); });
stream.on("response.function_call_arguments.delta", (e) => { out.snapshots[e.output_index] = e.snapshot ?? null; });
stream.on("response.function_call_arguments.done", (e) => { out.done[e.output_index] = e.arguments; });
const response = await stream.finalResponse();
out.calls = response.output.map((it) => ({ type: it.type, call_id: it.call_id, name: it.name, arguments: it.arguments, status: it.status }));
console.log(JSON.stringify(out));
