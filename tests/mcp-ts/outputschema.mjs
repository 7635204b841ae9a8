// Drives `wai serve` over stdio with the official MCP TypeScript SDK and
// calls every bundled tool. The SDK itself validates each result's
// structuredContent against the tool's outputSchema from tools/list (and
// throws when it does not match, or when a successful call of such a tool
// has none), so a call that returns is a call whose structured content
// matched. Prints one JSON line describing what it saw; exits 1 on any
// failure.
//
// usage: node outputschema.mjs WAI_BINARY [wai serve flags…]
import { check, drive, text } from "./wai.mjs";

const calls = [
  ["write_file", { file_path: "data/words.txt", content: "alpha beta\ngamma\n" }, true],
  ["read_file", { file_path: "data/words.txt" }, true],
  ["edit_file", { file_path: "data/words.txt", old_string: "gamma", new_string: "delta" }, true],
  ["ls", { path: "data" }, true],
  ["glob", { pattern: "**/*.txt" }, true],
  ["grep", { pattern: "del+ta" }, true],
  ["shell_execute", { command: ["cat", "data/words.txt"] }, true],
  ["shell_execute", { command: ["sh", "-c", "exit 3"] }, false],
  ["evaluate_python", {
    code: "words = vfs_reads['data/words.txt'].split()\ncount = len(words)\ncount * 10",
    mode: "statements",
    reads: [{ path: "data/words.txt" }],
    writes: [{ path: "out/count.txt", content: "count={count} first={words[0]}" }],
  }, true],
  ["evaluate_python", { code: "1/0" }, false],
  ["read_file", { file_path: "out/count.txt" }, true],
  ["podman_shell", { action: "exec", command: "echo hi" }, true],
  ["job_start", { command: ["sh", "-c", "echo started; sleep 30"] }, true],
  ["job_status", { id: "$last-job-id" }, true],
  ["job_list", {}, true],
  ["job_cancel", { id: "$last-job-id" }, true],
  ["rm", { path: "out" }, true],
];

await drive("outputschema.mjs", "wai-ts-outputschema", async (client) => {
  const { tools } = await client.listTools();
  const withSchema = tools.filter((t) => t.outputSchema?.type === "object").map((t) => t.name).sort();
  const called = new Set();
  const seen = {};
  let countFile = "";
  let jobId = "";
  for (const [name, given, ok] of calls) {
    if (!tools.some((t) => t.name === name)) continue;
    // "$last-job-id" stands for the id the last job_start answered.
    const args = Object.fromEntries(Object.entries(given).map(([k, v]) => [k, v === "$last-job-id" ? jobId : v]));
    const res = await client.callTool({ name, arguments: args });
    if (name === "job_start" && res.structuredContent) jobId = res.structuredContent.id;
    check(!res.isError === ok, `${name} ${JSON.stringify(args)}: isError ${res.isError}: ${text(res)}`);
    if (res.structuredContent) called.add(name);
    if (ok && !(name in seen)) seen[name] = res.structuredContent;
    if (name === "read_file" && args.file_path === "out/count.txt") countFile = text(res);
  }
  const py = seen["evaluate_python"] ?? {};
  return {
    tools: tools.map((t) => t.name).sort(),
    with_schema: withSchema,
    structured: [...called].sort(),
    count_file: countFile,
    python_value: py.value_repr ?? null,
  };
});
