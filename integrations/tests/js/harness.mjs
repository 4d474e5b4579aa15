// Drives calyx's OpenCode plugin or pi extension under node against a recording endpoint,
// feeding it the payloads captured from the real CLIs. Prints what reached the endpoint.
// Usage: node harness.mjs opencode|pi MODULE ENDPOINT_FILE FIXTURES_DIR
import http from "node:http";
import { writeFileSync, readdirSync, readFileSync } from "node:fs";

const [kind, modulePath, endpointFile, fixtures] = process.argv.slice(2);
const requests = [];
// OpenCode permissions whose approval request the plugin dropped before calyx answered.
const withdrawn = [];
// /mcp-hosted plays calyx's hosted-servers route: the MCP session it knows (null after the
// "restart" that follows the last tools/list page, so the next call meets a 404).
let hostedLive = null;
let hostedOpened = 0;
const sse = (...msgs) => "id: 0\ndata:\n\n" + msgs.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`).join("");
function hosted(req, res, msg) {
  if (req.headers["mcp-session-id"] && req.headers["mcp-session-id"] !== hostedLive) {
    res.statusCode = 404; return res.end("session not found");
  }
  const reply = (result) => ({ jsonrpc: "2.0", id: msg.id, result });
  if (msg.method === "initialize") {
    hostedLive = `hosted-${++hostedOpened}`;
    res.setHeader("Mcp-Session-Id", hostedLive);
    return res.end(JSON.stringify(reply({ protocolVersion: "2025-06-18", capabilities: { tools: { listChanged: true } }, serverInfo: { name: "calyx", version: "0" } })));
  }
  if (!req.headers["mcp-session-id"]) { res.statusCode = 400; return res.end("no session"); }
  if (msg.method === "notifications/initialized") { res.statusCode = 202; return res.end(); }
  res.setHeader("Content-Type", "text/event-stream");
  const echo = { name: "ev-echo", description: "Echoes back the input", inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] }, _meta: { ignored: true } };
  const sum = { name: "ev-get-sum", description: "Adds two numbers", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } };
  if (msg.method === "tools/list" && !msg.params?.cursor) return res.end(sse(reply({ tools: [echo], nextCursor: "p2" })));
  if (msg.method === "tools/list") { hostedLive = null; return res.end(sse(reply({ tools: [sum] }))); }
  if (msg.method === "tools/call" && msg.params?.name === "ev-echo") {
    const progress = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } };
    return res.end(sse(progress, reply({ content: [{ type: "text", text: `Echo: ${msg.params.arguments.message}` }] })));
  }
  if (msg.method === "tools/call" && msg.params?.name === "ev-fail") return res.end(sse(reply({ content: [{ type: "text", text: "boom" }], isError: true })));
  return res.end(sse({ jsonrpc: "2.0", id: msg.id, error: { code: -32602, message: `Unknown tool: ${msg.params?.name}` } }));
}
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const parsed = JSON.parse(body || "null");
    requests.push({ path: req.url, headers: req.headers, body: parsed });
    res.setHeader("Content-Type", "application/json");
    const perm = parsed && parsed.properties && parsed.properties.id;
    if (req.url === "/approval-request" && kind === "opencode" && perm === "per_1") {
      // Held like a human who has not answered yet: the dialog is answered in OpenCode instead.
      res.on("close", () => { if (!res.writableFinished) withdrawn.push(perm); });
    } else if (req.url === "/approval-request" && kind === "opencode") res.end(JSON.stringify({ reply: "reject", message: "no" }));
    else if (req.url === "/approval-request" && endpointMode === "refuses") { res.statusCode = 413; res.end("{}"); }
    else if (req.url === "/approval-request") res.end(JSON.stringify({ decision: "deny", reason: "no" }));
    else if (req.url === "/mcp-hosted") hosted(req, res, parsed);
    else if (req.url === "/mcp") res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "ok" }] } }));
    else res.end("{}");
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
// HARNESS_ENDPOINT=unreachable: the endpoint file names a port nothing listens on (calyx died);
// =missing: there is no endpoint file (calyx never ran). Both must block pi's call, at once
// (unless CALYX_PI_WHEN_UNREACHABLE=run).
const endpointMode = process.env.HARNESS_ENDPOINT || "ok";
if (endpointMode === "unreachable") {
  const dead = http.createServer();
  await new Promise((r) => dead.listen(0, "127.0.0.1", r));
  const port = dead.address().port;
  await new Promise((r) => dead.close(r));
  writeFileSync(endpointFile, JSON.stringify({ port, token: "t0k" }));
} else if (endpointMode !== "missing") {
  writeFileSync(endpointFile, JSON.stringify({ port: server.address().port, token: "t0k" }));
}
const outside = process.env.CALYX_SURFACE_ID === undefined;
const mod = await import(modulePath);
const results = {};
const files = readdirSync(fixtures).filter((f) => f.startsWith(kind + "-")).sort();
const load = (f) => JSON.parse(readFileSync(`${fixtures}/${f}`, "utf8")).payload;
const name = (f) => f.replace(/^[a-z]+-[0-9.]+-/, "").replace(/\.json$/, "");
if (kind === "opencode") {
  // OpenCode's SDK client, recording how the plugin answers permissions.
  const replies = [];
  results.replies = replies;
  const client = {
    _client: { post: async (o) => { replies.push({ url: o.url, path: o.path, body: o.body }); return { data: true }; } },
    postSessionIdPermissionsPermissionId: async (o) => { replies.push({ v1: o }); return { data: true }; },
  };
  const hooks = await mod.CalyxPlugin({ directory: "/home/dev/src/app", client });
  results.registered = Object.keys(hooks);
  if (!outside) {
    for (const f of files) {
      const n = name(f);
      const p = load(f);
      if (n.startsWith("event_")) await hooks.event({ event: p });
      else if (hooks[n]) await hooks[n](p.input, p.output);
    }
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    // A permission calyx answers (reject with a message): the plugin replies through the client.
    await hooks.event({ event: { type: "permission.asked", properties: { id: "per_2", sessionID: "ses_answer", permission: "bash", metadata: { command: "echo hi" } } } });
    await sleep(200);
    // A pending permission suppresses session.idle until it is replied to; answered in
    // OpenCode's own dialog, it is dropped from calyx.
    const sid = "ses_pending";
    await hooks.event({ event: { type: "permission.asked", properties: { id: "per_1", sessionID: sid, permission: "bash" } } });
    await sleep(200);
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: sid } } });
    await hooks.event({ event: { type: "permission.replied", properties: { requestID: "per_1", sessionID: sid, reply: "once" } } });
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: sid } } });
  }
} else {
  const handlers = {};
  const tools = {};
  const pi = { on: (n, f) => (handlers[n] ||= []).push(f), registerTool: (t) => { results.tool ||= t.name; tools[t.name] = t; } };
  mod.default(pi);
  results.registered = Object.keys(handlers);
  const ctx = { cwd: "/home/dev/src/app", hasUI: false, sessionManager: { getSessionId: () => "pi-sess" } };
  for (const f of files) {
    const p = load(f);
    const type = p.event && p.event.type;
    for (const h of handlers[type] || []) {
      // A handler still waiting after 20 s is reported rather than hanging the test.
      const late = new Promise((r) => setTimeout(() => r("still waiting after 20 s"), 20000).unref());
      const r = await Promise.race([h(p.event, ctx), late]);
      if (r !== undefined) results[type] = r;
    }
  }
  results.tools = Object.keys(tools);
  // HARNESS_CALL_HOSTED=1: the model uses calyx_mcp (list, a call, a failing and an unknown tool).
  if (tools.calyx_mcp && process.env.HARNESS_CALL_HOSTED) {
    const use = (params) => tools.calyx_mcp.execute("call_mcp", params, new AbortController().signal)
      .then((r) => r.content.map((c) => c.text).join("\n"), (e) => ({ error: String(e?.message ?? e) }));
    results.calyx_mcp = {
      list: await use({ tool: "list" }),
      echo: await use({ tool: "ev-echo", args: { message: "hi" } }),
      failed: await use({ tool: "ev-fail" }),
      unknown: await use({ tool: "nope" }),
    };
  }
}
await new Promise((r) => setTimeout(r, 300));
results.withdrawn = withdrawn;
server.closeAllConnections();
server.close();
console.log(JSON.stringify({ requests, results }));
process.exit(0);
