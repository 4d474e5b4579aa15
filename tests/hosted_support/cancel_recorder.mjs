// A hosted-server fixture on the official TypeScript SDK (the one server-everything is built
// on), for what server-everything cannot show: `slow` reports progress once and then waits
// until it is cancelled, appending "cancelled <requestId>" to $CALYX_CANCEL_RECORD when the
// client's notifications/cancelled arrives; `grow` adds a tool `grown-N`, which makes the SDK
// send notifications/tools/list_changed.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { appendFileSync } from "node:fs";

const record = process.env.CALYX_CANCEL_RECORD;
const server = new McpServer({ name: "cancel-recorder", version: "1.0.0" });
server.registerTool(
  "slow",
  { description: "Reports progress once, then waits until it is cancelled." },
  async (extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      await server.server.notification(
        { method: "notifications/progress", params: { progress: 1, total: 2, progressToken } },
        { relatedRequestId: extra.requestId },
      );
    }
    await new Promise((resolve) => {
      extra.signal.addEventListener("abort", () => {
        appendFileSync(record, `cancelled ${extra.requestId}\n`);
        resolve();
      });
    });
    return { content: [{ type: "text", text: "cancelled" }] };
  },
);
let grown = 0;
server.registerTool(
  "grow",
  { description: "Adds a tool, grown-N." },
  async () => {
    grown += 1;
    const name = `grown-${grown}`;
    server.registerTool(name, { description: "Added by grow." }, async () => ({
      content: [{ type: "text", text: name }],
    }));
    return { content: [{ type: "text", text: name }] };
  },
);
await server.connect(new StdioServerTransport());
