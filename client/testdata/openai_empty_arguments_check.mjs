// Runs the official OpenAI Node SDK's runTools helper against a Switchyard server whose
// OpenAI-compatible model calls a function without parameters with arguments "" (argv:
// base URL, key): the helper parses the arguments and calls the function, whole and
// streamed. Prints what it saw as one JSON object (an error's message in place of an
// answer). Used by TestEmptyArgumentsNodeSDK.
import OpenAI from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey, maxRetries: 0 });
// runTools: chat.completions.runTools from openai@5, beta.chat.completions before.
const helpers = client.chat.completions.runTools ? client.chat.completions : client.beta.chat.completions;
const out = {};
for (const stream of [false, true]) {
  const got = { args: [] };
  try {
    const runner = helpers.runTools({ model: "openai/gpt-4o-mini", stream, messages: [{ role: "user", content: "What time is it?" }],
      tools: [{ type: "function", function: { name: "now", parameters: { type: "object", properties: {} }, parse: JSON.parse,
        function: (args) => { got.args.push(args); return "noon"; } } }] });
    got.final = await runner.finalContent();
  } catch (e) { got.error = e.message; }
  out[stream ? "stream" : "whole"] = got;
}
console.log(JSON.stringify(out));
