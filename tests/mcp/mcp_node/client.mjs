// Drives `dsh-ask mcp` with the official TypeScript MCP SDK client, one scenario per run.
// Usage: node client.mjs '<json config>'; config: {command, args, env, cwd, scenario, log,
// timeoutMs}. Prints one JSON object per line on stdout; the last one has "done": true.
import { readFileSync, existsSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const config = JSON.parse(process.argv[2]);
const say = (entry) => process.stdout.write(JSON.stringify(entry) + "\n");
const PKG_ARGS = {
  questions: [
    {
      id: "pkg",
      question: "Which package manager?",
      options: [{ label: "pnpm" }, { label: "npm" }],
    },
  ],
};

function logged(event) {
  if (!existsSync(config.log)) return false;
  return readFileSync(config.log, "utf8")
    .split("\n")
    .filter(Boolean)
    .some((line) => JSON.parse(line).event === event);
}

async function until(event) {
  while (!logged(event)) await new Promise((done) => setTimeout(done, 50));
}

function failure(error) {
  return { error: { name: error?.name, code: error?.code, message: String(error?.message) } };
}

const transport = new StdioClientTransport({
  command: config.command,
  args: config.args,
  env: config.env,
  cwd: config.cwd,
  stderr: "inherit",
});
const client = new Client({ name: "dsh-node-test", version: "1.0.0" });
await client.connect(transport);
say({ server: client.getServerVersion() });

const scenario = config.scenario;
if (scenario === "list") {
  const listed = await client.listTools();
  say({ tools: listed.tools });
} else if (scenario === "call") {
  say({ result: await client.callTool({ name: "ask_user_question", arguments: PKG_ARGS }) });
} else if (scenario === "invalid") {
  say({ result: await client.callTool({ name: "ask_user_question", arguments: { questions: [] } }) });
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
    say({ unknown: "answered" });
  } catch (error) {
    say({ unknown: failure(error) });
  }
} else if (scenario === "cancel") {
  const controller = new AbortController();
  const call = client
    .callTool({ name: "ask_user_question", arguments: PKG_ARGS }, undefined, {
      signal: controller.signal,
    })
    .then((result) => ({ result }), failure);
  await until("asked");
  controller.abort("the test cancels");
  say({ cancelled: await call });
  await until("withdrawn");
  say({ withdrawn: true });
  say({ after: await client.callTool({ name: "ask_user_question", arguments: PKG_ARGS }) });
} else if (scenario === "wait") {
  // A client whose request timeout is shorter than the human takes: only progress keeps it.
  const progress = [];
  const started = Date.now();
  const outcome = await client
    .callTool({ name: "ask_user_question", arguments: PKG_ARGS }, undefined, {
      timeout: config.timeoutMs,
      resetTimeoutOnProgress: config.reset,
      onprogress: (update) => progress.push(update),
    })
    .then((result) => ({ result }), failure);
  say({ ...outcome, progress, seconds: (Date.now() - started) / 1000 });
} else {
  throw new Error(`unknown scenario ${scenario}`);
}
await client.close();
say({ done: true });
