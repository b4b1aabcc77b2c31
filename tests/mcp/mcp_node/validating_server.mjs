// An MCP server on the official TypeScript SDK whose `elicit` tool elicits the form it is given
// through `Server.elicitInput`, which validates the reply against the form's schema (ajv with
// ajv-formats), and returns the reply or the SDK's refusal.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const server = new Server(
  { name: "validating", version: "1.0.0" },
  { capabilities: { tools: {} } },
);
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "elicit",
      inputSchema: {
        type: "object",
        properties: { message: { type: "string" }, schema: { type: "object" } },
      },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { message, schema } = request.params.arguments;
  try {
    const reply = await server.elicitInput({ message, requestedSchema: schema });
    return { content: [{ type: "text", text: JSON.stringify(reply) }] };
  } catch (error) {
    return {
      content: [{ type: "text", text: `refused: ${error.code} ${error.message}` }],
      isError: true,
    };
  }
});
await server.connect(new StdioServerTransport());
