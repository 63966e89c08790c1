// Runs the official OpenAI Node SDK's stream helpers against a Switchyard server whose
// Claude thinks (argv: base URL, key) and prints what it saw as one JSON object. Used by
// TestOfficialNodeSDKReasoning: a tool loop on chat completions through
// chat.completions.stream().finalChatCompletion(), the message sent back as the helper
// assembled it; and one on /v1/responses through responses.stream().finalResponse(), its
// output sent back as input.
import OpenAI from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey, maxRetries: 0 });
const model = "anthropic/claude-sonnet-4-5";
const parameters = { type: "object", properties: { city: { type: "string" } } };
const out = {};

const messages = [{ role: "user", content: "Weather in Paris?" }];
const tools = [{ type: "function", function: { name: "get_weather", parameters } }];
const chatStream = client.beta.chat.completions.stream({ model, reasoning_effort: "high", tools, messages });
let reasoning = "";
chatStream.on("chunk", (ck) => { reasoning += ck.choices[0]?.delta?.reasoning_content ?? ""; });
const first = (await chatStream.finalChatCompletion()).choices[0].message;
out.chatReasoning = reasoning;
out.chatBlocks = first.thinking_blocks ?? null;
messages.push(first, { role: "tool", tool_call_id: first.tool_calls[0].id, content: "sunny" });
out.chatAnswer = (await client.chat.completions.create({ model, reasoning_effort: "high", tools, messages })).choices[0].message.content;

const input = [{ role: "user", content: "Weather in Paris?" }];
const rtools = [{ type: "function", name: "get_weather", parameters, strict: false }];
const rstream = client.responses.stream({ model, reasoning: { effort: "high" }, tools: rtools, input });
const response = await rstream.finalResponse();
out.responseOutput = response.output.map((it) => ({ type: it.type, summary: it.summary?.[0]?.text, encrypted: it.encrypted_content }));
const call = response.output.find((it) => it.type === "function_call");
input.push(...response.output, { type: "function_call_output", call_id: call.call_id, output: "sunny" });
out.responseAnswer = (await client.responses.create({ model, reasoning: { effort: "high" }, tools: rtools, input })).output_text;

console.log(JSON.stringify(out));
