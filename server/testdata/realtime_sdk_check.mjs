// Drives /v1/realtime with the official OpenAI Node SDK's OpenAIRealtimeWS (npm "openai"
// over the "ws" package), as a voice agent built on it does: argv base URL, key, model.
// Prints one JSON object with what it saw.
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';

const [base, key, model] = process.argv.slice(2);
const out = { events: [], errors: [] };

function session(apiKey) {
  return new Promise((resolve) => {
    const client = new OpenAI({ baseURL: base, apiKey });
    const rt = new OpenAIRealtimeWS({ model }, client);
    const seen = { events: [], errors: [] };
    rt.on('event', (e) => seen.events.push(e.type));
    rt.on('session.created', (e) => { seen.instructions = e.session.instructions; });
    rt.on('error', (e) => seen.errors.push(String(e.message)));
    rt.socket.on('open', () => {
      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] } });
      rt.send({ type: 'response.create' });
    });
    rt.on('response.done', (e) => {
      seen.usage = e.response.usage;
      rt.close({ code: 1000, reason: 'done' });
    });
    rt.socket.on('close', (code) => {
      seen.code = code;
      resolve(seen);
    });
    setTimeout(() => { seen.errors.push('timed out'); resolve(seen); }, 30000);
  });
}

const good = await session(key);
const bad = await session('sy-wrong-key');
// A browser's way in: the backend mints an ephemeral client secret with the SDK, the page
// opens its session with the secret alone.
const minted = {};
try {
  const cs = await new OpenAI({ baseURL: base, apiKey: key }).realtime.clientSecrets.create({
    expires_after: { anchor: 'created_at', seconds: 60 },
    session: { type: 'realtime', model, instructions: 'Be brief.' },
  });
  minted.prefix = cs.value.slice(0, 3);
  minted.expiresAt = cs.expires_at;
  minted.model = cs.session.model;
  minted.session = await session(cs.value);
} catch (e) {
  minted.error = String(e);
}
console.log(JSON.stringify({ good, bad, minted }));
process.exit(0);
