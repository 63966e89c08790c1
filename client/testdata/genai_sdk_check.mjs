// Drives a Switchyard server with Google's official GenAI SDK (npm @google/genai), as
// Gemini CLI does: node genai_sdk_check.mjs <base URL> <key>. Prints one JSON object.
import { GoogleGenAI, Type } from '@google/genai';

const [base, key] = process.argv.slice(2);
const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: base } });
const model = 'openai/gpt-4o-mini';
const tools = [{
  functionDeclarations: [{
    name: 'get_weather', description: 'Current weather of a city',
    parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
  }],
}];
const question = { role: 'user', parts: [{ text: 'Weather in Paris?' }] };
const out = {};

// generateContent: the model calls the function.
const first = await ai.models.generateContent({ model, contents: [question], config: { tools, systemInstruction: 'Be brief.', maxOutputTokens: 256 } });
out.calls = first.functionCalls;
out.finish = first.candidates[0].finishReason;
out.usage = first.usageMetadata;
out.modelVersion = first.modelVersion;
out.responseId = first.responseId;

// generateContentStream: the same call, streamed (alt=sse).
const stream = await ai.models.generateContentStream({ model, contents: [question], config: { tools } });
out.streamCalls = [];
out.streamChunks = 0;
for await (const chunk of stream) {
  out.streamChunks++;
  if (chunk.functionCalls) out.streamCalls.push(...chunk.functionCalls);
  if (chunk.candidates?.[0]?.finishReason) out.streamFinish = chunk.candidates[0].finishReason;
}

// The function's response goes back; the model answers.
const call = first.candidates[0].content;
const answer = await ai.models.generateContent({
  model, config: { tools },
  contents: [question, call, { role: 'user', parts: [{ functionResponse: { id: first.functionCalls[0].id, name: 'get_weather', response: { output: 'sunny' } } }] }],
});
out.text = answer.text;

// countTokens: more text, more tokens.
const short = await ai.models.countTokens({ model, contents: 'Weather in Paris?' });
const long = await ai.models.countTokens({ model, contents: 'Weather in Paris? '.repeat(50) });
out.tokens = [short.totalTokens, long.totalTokens];

// The SDK's ApiError for a bad request and a wrong key.
const fail = async (f) => { try { await f(); return null; } catch (e) { return { name: e.constructor.name, status: e.status, message: e.message }; } };
out.badRequest = await fail(() => ai.models.generateContent({ model, contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/tiff', data: 'AAAA' } }] }] }));
out.badKey = await fail(() => new GoogleGenAI({ apiKey: 'wrong', httpOptions: { baseUrl: base } }).models.generateContent({ model, contents: 'hi' }));

// The model list, through the SDK's pager.
const names = [];
for await (const m of await ai.models.list({ config: { pageSize: 2 } })) names.push(m.name);
out.models = names;

console.log(JSON.stringify(out));
