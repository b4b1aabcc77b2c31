// Calls ask_user_question over Streamable HTTP with the official TypeScript SDK, then closes
// the client with a plain close() (no terminateSession): the case of a client that goes away.
// Usage: node http_close.mjs '<json config>'; config: {url, arguments}. Prints one JSON object
// per line; reads stdin: the first line says "close now", the end of stdin "exit now", so
// the process (and its sockets) outlives the close() until the test has looked.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const config = JSON.parse(process.argv[2]);
const say = (entry) => process.stdout.write(JSON.stringify(entry) + "\n");
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const client = new Client({ name: "dsh-node-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(config.url));
await client.connect(transport);
const call = client
  .callTool({ name: "ask_user_question", arguments: config.arguments })
  .then(
    (result) => ({ result }),
    (error) => ({ error: String(error?.message) }),
  );
say({ calling: true, session: transport.sessionId ?? null });
await lines.next();
await client.close();
say({ closed: true, call: await call });
while (!(await lines.next()).done);
say({ done: true });
