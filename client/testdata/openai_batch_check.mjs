// Runs a batch with the official OpenAI Node SDK against a Switchyard server (argv: base
// URL, key) and prints what it saw as one JSON object. Used by TestOfficialNodeSDKBatches.
// The SDK sends the file part of its upload form before the purpose.
import OpenAI, { toFile } from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey, maxRetries: 2 });
const out = {};
const lines = ["Paris", "Oslo", "Lima"].map((city, i) => JSON.stringify({ custom_id: `city-${i}`, method: "POST",
  url: "/v1/chat/completions", body: { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: `Weather in ${city}?` }] } }));
const file = await client.files.create({ file: await toFile(Buffer.from(lines.join("\n") + "\n"), "cities.jsonl"), purpose: "batch" });
out.file = { purpose: file.purpose, filename: file.filename, bytes: file.bytes };

let batch = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h",
  metadata: { suite: "node" } });
out.created = batch.status;
const deadline = Date.now() + 10000;
while (!["completed", "failed", "expired", "cancelled"].includes(batch.status) && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 20));
  batch = await client.batches.retrieve(batch.id);
}
out.status = batch.status;
out.counts = batch.request_counts;
const content = await client.files.content(batch.output_file_id);
out.output = (await content.text()).trim().split("\n").map((l) => JSON.parse(l)).map((l) => ({
  custom_id: l.custom_id, status: l.response.status_code, finish: l.response.body.choices[0].finish_reason }));
const listed = [];
for await (const b of client.batches.list({ limit: 1 })) listed.push(b.id);
out.listed = listed.length;

try {
  await client.files.create({ file: await toFile(Buffer.from("{}\n"), "x.jsonl"), purpose: "fine-tune" });
  out.badPurpose = "accepted";
} catch (e) {
  out.badPurpose = { status: e.status, param: e.param };
}
console.log(JSON.stringify(out));
