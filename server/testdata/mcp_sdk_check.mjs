// The official MCP TypeScript SDK's client against Switchyard's /mcp (mcp_node_test.go):
// lists the aggregated tools, calls one, and prints what it saw as JSON.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
const client = new Client({ name: "switchyard-node-check", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const sum = await client.callTool({ name: "web-add", arguments: { a: 20, b: 22 } });
const failed = await client.callTool({ name: "web-fail", arguments: {} });
let unknown = "";
try {
  await client.callTool({ name: "web-nope", arguments: {} });
} catch (e) {
  unknown = String(e.message || e);
}
console.log(JSON.stringify({
  server: client.getServerVersion()?.name,
  tools: tools.map((t) => t.name).sort(),
  echoSchema: tools.find((t) => t.name === "docs-echo")?.inputSchema,
  sum: sum.content[0].text,
  failedIsError: failed.isError === true,
  unknown,
}));
await client.close();
