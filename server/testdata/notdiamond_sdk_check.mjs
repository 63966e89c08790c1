// Drives Switchyard with Not Diamond's official TypeScript SDK (npm notdiamond): create a
// preference, select under it with the SDK's own request body (it always adds timeout),
// report feedback, and select with a cost tradeoff and prices. Prints one JSON object.
// Usage: node --import ./register.mjs check.mjs <base URL> <key>
import { NotDiamond } from 'notdiamond';

const [apiUrl, apiKey] = process.argv.slice(2);
const nd = new NotDiamond({ apiKey, apiUrl });
const llmProviders = [
  { provider: 'openai', model: 'gpt-4o', inputPrice: 2.5, outputPrice: 10, contextLength: 128000 },
  { provider: 'openai', model: 'gpt-4o-mini', inputPrice: 0.15, outputPrice: 0.6, contextLength: 128000 },
  { provider: 'acme', model: 'support-ft', isCustom: true },
];
const messages = [{ role: 'user', content: 'How do I reset my password?' }];

const preferenceId = await nd.createPreferenceId();
const selected = await nd.modelSelect({ messages, llmProviders, preferenceId });
const feedback = await nd.feedback({
  sessionId: selected.session_id, provider: { provider: 'acme', model: 'support-ft' }, feedback: { accuracy: 1 },
});
const cheap = await nd.modelSelect({ messages, llmProviders: llmProviders.slice(0, 2), tradeoff: 'cost', default: 'openai/gpt-4o' });
const bad = await nd.modelSelect({ messages, llmProviders, tradeoff: 'quality' });
console.log(JSON.stringify({ preferenceId, selected, feedback, cheap, bad }));
