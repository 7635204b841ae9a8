// Drives `wai serve` over stdio with the official MCP TypeScript SDK: lists
// the tools, writes a file, reads it back and runs a command on it. Prints
// one JSON line describing what it saw; exits 1 on any failure.
//
// usage: node client.mjs WAI_BINARY [wai serve flags…]
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { check, drive, text } from "./wai.mjs";

const logs = [];
await drive("client.mjs", "wai-ts-test", async (client) => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  for (const want of ["shell_execute", "read_file", "write_file"]) {
    check(names.includes(want), `tools/list lacks ${want}: ${names.join(", ")}`);
  }
  const shell = tools.find((t) => t.name === "shell_execute");
  check(shell.inputSchema?.type === "object", "shell_execute has no object input schema");

  let res = await client.callTool({ name: "write_file", arguments: { file_path: "hello.py", content: "print('hi from ts')\n" } });
  check(!res.isError, `write_file failed: ${text(res)}`);
  // write_file links the file it wrote, and the workspace is readable as
  // MCP resources.
  const link = (res.content ?? []).find((c) => c.type === "resource_link");
  check(link?.uri === "wai://workspace/hello.py", `write_file: no resource_link: ${JSON.stringify(res.content)}`);
  const { resources } = await client.listResources();
  check(resources.some((r) => r.uri === "wai://workspace/hello.py"), `resources/list: ${JSON.stringify(resources)}`);
  const rr = await client.readResource({ uri: "wai://workspace/hello.py" });
  check(rr.contents[0]?.text?.includes("hi from ts"), `resources/read: ${JSON.stringify(rr)}`);
  res = await client.callTool({ name: "read_file", arguments: { file_path: "hello.py" } });
  check(!res.isError && text(res).includes("hi from ts"), `read_file: ${text(res)}`);
  const read = text(res);
  res = await client.callTool({ name: "shell_execute", arguments: { command: ["cat", "hello.py"] } });
  check(!res.isError && text(res).includes("hi from ts"), `shell_execute: ${text(res)}`);
  const sc = res.structuredContent ?? {};
  check(sc.exit_code === 0, `shell_execute structured content: ${JSON.stringify(sc)}`);
  // Params the schema refuses come back as a tool result the model reads
  // (isError with the explanation), not as a JSON-RPC error (SEP-1303).
  res = await client.callTool({ name: "shell_execute", arguments: { command: 5 } });
  check(res.isError && text(res).includes("command"), `invalid params: want an isError result, got ${JSON.stringify(res)}`);
  res = await client.callTool({ name: "shell_execute", arguments: { command: ["id", "-u"] } });
  check(!res.isError, `id -u: ${text(res)}`);

  const uid = (res.structuredContent ?? {}).stdout?.trim();

  // Policy decisions reach the client as log notifications at the level
  // it set, and nothing below it.
  await client.setLoggingLevel("warning");
  res = await client.callTool({ name: "shell_execute", arguments: { command: ["rm", "-rf", "/"] } });
  check(res.isError, `rm -rf / was not refused: ${text(res)}`);
  for (let i = 0; i < 100 && !logs.some((l) => l.data?.event === "policy.decision"); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const deny = logs.find((l) => l.data?.event === "policy.decision");
  check(deny?.level === "warning" && deny.data.decision === "deny", `no policy deny logged at warning: ${JSON.stringify(logs)}`);
  check(!logs.some((l) => ["debug", "info", "notice"].includes(l.level)), `log below the level set: ${JSON.stringify(logs)}`);

  return { tools: names, read, uid };
}, (client) => client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logs.push(n.params); }));
