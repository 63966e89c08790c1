// Drives transcription sessions of /v1/realtime with the official OpenAI Node SDK (npm
// "openai" over the "ws" package): its realtime WebSocket clients (GA, and the beta one
// offering the beta protocol) with onURL adding intent=transcription, as the SDK's users
// open a transcription session; a key, a GA client secret minted with
// realtime.clientSecrets (session type transcription) and a beta one minted with
// beta.realtime.transcriptionSessions. argv: base URL, key, transcription model. Prints one
// JSON object with what each session saw.
import OpenAI from 'openai';
import WebSocket from 'ws';
import { OpenAIRealtimeWebSocket } from 'openai/realtime/websocket';
import { OpenAIRealtimeWebSocket as BetaRealtimeWebSocket } from 'openai/beta/realtime/websocket';

globalThis.WebSocket = WebSocket; // node 20 has none of its own

const [base, key, model] = process.argv.slice(2);

function transcribe(Client, apiKey) {
  return new Promise((resolve) => {
    const client = new OpenAI({ baseURL: base, apiKey });
    const seen = { events: [], errors: [] };
    const rt = new Client({ model, onURL: (url) => url.searchParams.set('intent', 'transcription') }, client);
    rt.on('event', (e) => {
      seen.events.push(e.type);
      if (e.type === 'session.created' || e.type === 'transcription_session.created') {
        seen.model = e.session.audio?.input?.transcription?.model ?? e.session.input_audio_transcription?.model;
        rt.send({ type: 'input_audio_buffer.commit' });
      }
      if (e.type === 'conversation.item.input_audio_transcription.completed') {
        seen.transcript = e.transcript;
        rt.close({ code: 1000, reason: 'done' });
      }
    });
    rt.on('error', (e) => seen.errors.push(String(e.message)));
    rt.socket.addEventListener('close', (e) => {
      seen.code = e.code;
      resolve(seen);
    });
    setTimeout(() => { seen.errors.push('timed out'); resolve(seen); }, 30000);
  });
}

const out = {};
out.key = await transcribe(OpenAIRealtimeWebSocket, key);
try {
  const cs = await new OpenAI({ baseURL: base, apiKey: key }).realtime.clientSecrets.create({
    session: { type: 'transcription', audio: { input: { transcription: { model, language: 'en' } } } },
  });
  out.ga = { type: cs.session.type, session: await transcribe(OpenAIRealtimeWebSocket, cs.value) };
} catch (e) {
  out.ga = { error: String(e) };
}
try {
  const ts = await new OpenAI({ baseURL: base, apiKey: key }).beta.realtime.transcriptionSessions.create({
    input_audio_transcription: { model },
    client_secret: { expires_at: { anchor: 'created_at', seconds: 60 } },
  });
  out.beta = { prefix: ts.client_secret.value.slice(0, 3), session: await transcribe(BetaRealtimeWebSocket, ts.client_secret.value) };
} catch (e) {
  out.beta = { error: String(e) };
}
console.log(JSON.stringify(out));
process.exit(0);
