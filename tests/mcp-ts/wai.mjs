// What the TypeScript SDK clients of `wai serve` share: their command
// line (WAI_BINARY [wai serve flags…]), the stdio connection, and how they
// end: one JSON line of what the script saw on stdout, exit 1 on any
// failure with the error on stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

// drive starts `wai serve`, connects a client named name to it (prepare,
// when given, sets the client up before it connects, as notification
// handlers must be), runs session with the client and prints the object
// session returns.
export async function drive(script, name, session, prepare = () => {}) {
  const [bin, ...serveArgs] = process.argv.slice(2);
  if (!bin) {
    console.error(`usage: node ${script} WAI_BINARY [wai serve flags…]`);
    process.exit(2);
  }
  const transport = new StdioClientTransport({ command: bin, args: ["serve", ...serveArgs], env: process.env, stderr: "inherit" });
  const client = new Client({ name, version: "1.0.0" });
  prepare(client);
  try {
    await client.connect(transport);
    console.log(JSON.stringify(await session(client)));
    await client.close();
  } catch (err) {
    console.error(`mcp-ts: ${err?.stack ?? err}`);
    try { await client.close(); } catch {}
    process.exit(1);
  }
}

// text is a tool result's text content.
export function text(res) {
  return (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
}

// check fails the script with what when cond does not hold.
export function check(cond, what) {
  if (!cond) throw new Error(what);
}
