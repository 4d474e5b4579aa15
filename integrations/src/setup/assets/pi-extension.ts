// calyx's pi extension (plain JavaScript, which pi loads as TypeScript): reports this pi session's state to calyx, the terminal multiplexer it
// runs in, gates every tool call through calyx's approval inbox, and gives the model one tool,
// `calyx`, that dispatches to calyx's MCP tools (one tool rather than one per MCP tool, because
// pi puts every tool's description into every prompt), and a second, `calyx_mcp`, that does the
// same for the tools of the MCP servers the user has calyx host (what other CLIs reach through
// their `calyx-mcp` MCP entry; pi has no MCP client). Written by `calyx setup`;
// `calyx setup --uninstall` removes it. Outside a calyx pane, or inside a herdr pane, it
// registers nothing: a gate with no calyx behind it would block every tool call.
import { readFileSync, statSync } from "node:fs";
import { endianness } from "node:os";

const ENDPOINT_FILE = __CALYX_ENDPOINT_FILE__;
const KIND = "pi";
// `[mcp] host_servers` in calyx's config.toml when setup wrote this file: off, no calyx_mcp.
const HOST_SERVERS = __CALYX_HOST_SERVERS__;
const HOSTED = "/mcp-hosted";
// calyx puts no time limit on a hosted tool call (the server's own answer ends it, or pi's
// abort); this only bounds a call whose answer never comes.
const HOSTED_CALL_TIMEOUT_MS = 3600000;
const EVENT_TIMEOUT_MS = 2000;
// Inside the server's 570 s approval expiry plus margin; see calyx's hook timeouts.
const APPROVAL_TIMEOUT_MS = 585000;
const EVENTS = ["session_start", "input", "agent_start", "turn_start", "tool_execution_end",
  "agent_end", "session_compact", "session_shutdown"];

let cached = { mtimeMs: -1, value: null };
function endpoint() {
  try {
    const st = statSync(ENDPOINT_FILE);
    if (st.mtimeMs !== cached.mtimeMs) {
      cached = { mtimeMs: st.mtimeMs, value: JSON.parse(readFileSync(ENDPOINT_FILE, "utf8")) };
    }
    const ep = cached.value;
    return ep && ep.port && ep.token ? ep : null;
  } catch {
    return null;
  }
}

function json(value) {
  const seen = new WeakSet();
  return JSON.stringify(value, (k, v) => {
    if (typeof v === "bigint") return String(v);
    if (typeof v === "function") return undefined;
    if (v && typeof v === "object") { if (seen.has(v)) return undefined; seen.add(v); }
    return v;
  });
}

// Who listens on the endpoint's port (Linux: /proc/net/tcp*, which give each listening
// socket's owner uid): a server that died leaves its endpoint file, another local user may then
// bind the port, and the token must not be sent there. A listener bound to exactly 127.0.0.1
// decides; else the wildcards do. "ours", "foreign", "none", or "unknown" (no /proc tables).
function hexLoopback() {
  const b = endianness() === "LE" ? [1, 0, 0, 127] : [127, 0, 0, 1];
  return b.map((x) => x.toString(16).padStart(2, "0")).join("").toUpperCase();
}
function listenerOwner(port) {
  if (typeof process.getuid !== "function") return "unknown";
  const uid = process.getuid();
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const lo = hexLoopback();
  const found = [];
  let read = false;
  for (const [file, exactAddr] of [["/proc/net/tcp", lo], ["/proc/net/tcp6", "0000000000000000FFFF0000" + lo]]) {
    let text;
    try { text = readFileSync(file, "utf8"); read = true; } catch { continue; }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 8 || f[3] !== "0A") continue;
      const [addr, p] = f[1].split(":");
      if (p !== hexPort) continue;
      const exact = addr === exactAddr;
      if (exact || /^0+$/.test(addr)) found.push({ exact, uid: Number(f[7]) });
    }
  }
  if (!read) return "unknown";
  const exact = found.filter((l) => l.exact);
  const deciding = exact.length ? exact : found;
  if (!deciding.length) return "none";
  return deciding.every((l) => l.uid === uid) ? "ours" : "foreign";
}

// MCP session ids calyx gave, per route ("/mcp", "/mcp-hosted").
const mcpSessions = {};

// Posts to calyx; the response text, or null on any failure.
async function post(path, body, timeoutMs) {
  const res = await send(path, body, timeoutMs);
  return res && res.ok ? res.text : null;
}

// Posts to calyx; {ok, status, text}, or null when calyx cannot be reached at all (or `signal`,
// pi's abort of the tool call, fired). `extra`: more request headers.
async function send(path, body, timeoutMs, signal, extra) {
  const ep = endpoint();
  if (!ep) return null;
  if (listenerOwner(ep.port) === "foreign") return null;
  const h = {
    "Content-Type": "application/json", Accept: "application/json, text/event-stream",
    Authorization: `Bearer ${ep.token}`, "X-Calyx-Agent-Kind": KIND,
  };
  if (process.env.CALYX_SURFACE_ID) h["X-Calyx-Surface-ID"] = process.env.CALYX_SURFACE_ID;
  if (process.env.CALYX_SESSION_ID) h["X-Calyx-Session-ID"] = process.env.CALYX_SESSION_ID;
  Object.assign(h, extra);
  const mcp = path === "/mcp" || path === HOSTED;
  if (mcp && mcpSessions[path]) h["Mcp-Session-Id"] = mcpSessions[path];
  const timeout = AbortSignal.timeout(timeoutMs);
  const abort = signal instanceof AbortSignal && typeof AbortSignal.any === "function"
    ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    const res = await fetch(`http://127.0.0.1:${ep.port}${path}`, {
      method: "POST", headers: h, body: json(body), signal: abort,
    });
    if (mcp) mcpSessions[path] = res.headers.get("mcp-session-id") || mcpSessions[path];
    return { ok: res.ok, status: res.status, text: await res.text() };
  } catch {
    return null;
  }
}

// pi's events carry no session id or directory: both come from ctx.
function payload(event, ctx) {
  let sessionId;
  try { sessionId = ctx?.sessionManager?.getSessionId?.(); } catch { sessionId = undefined; }
  return { event, ctx: { cwd: ctx?.cwd, hasUI: ctx?.hasUI, sessionId } };
}

// The gate payload for one tool_call: `{hook_event_name, tool_name, tool_input, ...}`.
function permissionRequest(event, ctx) {
  const p = payload(event, ctx);
  return {
    hook_event_name: "PermissionRequest",
    tool_name: event?.toolName,
    tool_input: event?.input ?? {},
    tool_call_id: event?.toolCallId,
    session_id: p.ctx.sessionId,
    cwd: p.ctx.cwd,
  };
}

let rpcId = 0;
async function rpc(method, params) {
  const text = await post("/mcp", { jsonrpc: "2.0", id: ++rpcId, method, params }, 60000);
  if (text === null) throw new Error("calyx is not reachable");
  const line = text.split("\n").find((l) => l.startsWith("data:"));
  const msg = JSON.parse(line ? line.slice(5) : text);
  if (msg.error) throw new Error(msg.error.message || "calyx error");
  return msg.result;
}

// The JSON-RPC answer with this id in a response body: plain JSON, or an SSE stream whose data
// lines may carry notifications (progress) and empty priming events before the answer.
function rpcAnswer(text, id) {
  const body = text.trimStart();
  const candidates = body.startsWith("{") ? [body]
    : body.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim());
  for (const c of candidates) {
    if (!c) continue;
    try {
      const msg = JSON.parse(c);
      if (msg && msg.id === id) return msg;
    } catch { /* not JSON: not the answer */ }
  }
  return null;
}

function hostedFailure(res) {
  if (res.status === 404) {
    return "calyx does not serve hosted MCP servers here (HTTP 404 on /mcp-hosted): hosting is off " +
      "([mcp] host_servers = false in calyx's config.toml) or this calyx is older than the extension.";
  }
  return `calyx answered HTTP ${res.status} on /mcp-hosted: ${res.text.slice(0, 300)}`;
}

// One request to /mcp-hosted: the answer's result, or an Error (`expired` set on a 404, which
// is also what a restarted calyx answers for a session it no longer knows).
async function hostedRequest(method, params, timeoutMs, signal) {
  const id = ++rpcId;
  const res = await send(HOSTED, { jsonrpc: "2.0", id, method, params }, timeoutMs, signal,
    hostedHeaders());
  if (!res) throw new Error(signal?.aborted ? "cancelled" : "calyx is not reachable");
  if (!res.ok) throw Object.assign(new Error(hostedFailure(res)), { expired: res.status === 404 });
  const msg = rpcAnswer(res.text, id);
  if (!msg) throw new Error("calyx's answer on /mcp-hosted could not be read");
  if (msg.error) throw new Error(msg.error.message || "calyx error");
  return msg.result;
}

// The hosted route's MCP session, opened once (initialize, then notifications/initialized) and
// shared by concurrent calls; a failed open is retried by the next call. Requests after
// initialize carry the negotiated version in MCP-Protocol-Version, as Streamable HTTP asks.
let hostedSession = null;
let hostedVersion = null;
function hostedHeaders() {
  return hostedVersion ? { "MCP-Protocol-Version": hostedVersion } : {};
}
function openHosted() {
  hostedSession ||= (async () => {
    mcpSessions[HOSTED] = null;
    hostedVersion = null;
    const result = await hostedRequest("initialize", { protocolVersion: "2025-06-18",
      capabilities: {}, clientInfo: { name: "calyx-pi-extension", version: "1" } }, 10000);
    hostedVersion = typeof result?.protocolVersion === "string" ? result.protocolVersion : null;
    await send(HOSTED, { jsonrpc: "2.0", method: "notifications/initialized" }, 10000, undefined,
      hostedHeaders());
  })().catch((e) => { hostedSession = null; throw e; });
  return hostedSession;
}

// A request on the hosted route's session; a 404 (calyx restarted and forgot the session) opens
// a new session and tries once more.
async function hostedRpc(method, params, timeoutMs, signal) {
  for (let attempt = 0; ; attempt++) {
    const session = openHosted();
    await session;
    try {
      return await hostedRequest(method, params, timeoutMs, signal);
    } catch (e) {
      if (!e.expired || attempt > 0) throw e;
      if (hostedSession === session) hostedSession = null;
    }
  }
}

// Every published hosted tool: name, description and input schema, all pages.
async function hostedTools(signal) {
  const tools = [];
  let cursor;
  for (let page = 0; page < 100; page++) {
    const result = await hostedRpc("tools/list", cursor ? { cursor } : {}, 60000, signal);
    for (const t of result?.tools ?? []) {
      tools.push({ name: t.name, description: t.description ?? "", inputSchema: t.inputSchema ?? {} });
    }
    cursor = result?.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

// A tools/call result as text for the model: its content (text, or the item as JSON), else
// its structured content.
function resultText(result) {
  if (Array.isArray(result?.content) && result.content.length) {
    return result.content.map((c) => c.text ?? json(c)).join("\n");
  }
  return json(result?.structuredContent ?? result);
}

export default function (pi) {
  const env = process.env;
  if ((!env.CALYX_SURFACE_ID && !env.CALYX_SESSION_ID) || env.HERDR_PANE_ID) return;
  for (const name of EVENTS) {
    pi.on(name, async (event, ctx) => {
      const sent = post("/agent-event", payload(event, ctx), EVENT_TIMEOUT_MS);
      // pi exits as soon as its session_shutdown handlers return: wait for that one (2 s at
      // most), or the row never hears the session end. Every other event is fire and forget.
      if (name === "session_shutdown") await sent;
      if (name === "session_start") {
        // Binds this pane to an MCP session, so calyx's tools know who is calling.
        void rpc("initialize", { protocolVersion: "2025-06-18", capabilities: {},
          clientInfo: { name: "calyx-pi-extension", version: "1" } }).catch(() => undefined);
      }
    });
  }
  // pi has no permission prompt of its own: this is the only gate. It posts the same
  // PermissionRequest shape Claude Code's hook does, so scripts can use the route alike.
  // No answer must never run a tool unasked: a calyx that cannot be reached (never ran, died
  // while the call waited, or its port is held by another user) blocks the call with a reason,
  // unless the user chose otherwise with CALYX_PI_WHEN_UNREACHABLE=run.
  pi.on("tool_call", async (event, ctx) => {
    const res = await send("/approval-request", permissionRequest(event, ctx), APPROVAL_TIMEOUT_MS);
    if (!res) {
      if (env.CALYX_PI_WHEN_UNREACHABLE === "run") return undefined;
      return { block: true, reason: "calyx could not be reached to approve this tool call, so it was blocked " +
        "(set CALYX_PI_WHEN_UNREACHABLE=run to let pi run tools when calyx is gone)." };
    }
    // calyx is there but refused the request (a tool input over its 1 MiB limit, say): no human
    // can answer it, so the call is blocked rather than run unasked.
    if (!res.ok) {
      return { block: true, reason: `calyx could not hold this tool call for approval (HTTP ${res.status}).` };
    }
    const text = res.text;
    // An empty or unreadable 2xx is no decision: calyx answers a held call with JSON.
    if (!text) return { block: true, reason: "calyx gave no decision for this tool call." };
    let answer;
    try { answer = JSON.parse(text); } catch {
      return { block: true, reason: "calyx's answer could not be read, so the call was blocked." };
    }
    if (answer && (answer.decision === "deny" || answer.decision === "block" || answer.block === true)) {
      return { block: true, reason: answer.reason || "Denied in calyx." };
    }
    return undefined;
  });
  pi.registerTool({
    name: "calyx",
    label: "calyx",
    description: "Use calyx, the terminal multiplexer this session runs in (panes, other agents, " +
      "command history). Pass {tool, args}; tool \"list\" returns the available tools and their arguments.",
    parameters: {
      type: "object",
      properties: { tool: { type: "string" }, args: { type: "object" } },
      required: ["tool"],
    },
    async execute(_id, params) {
      const result = params.tool === "list"
        ? await rpc("tools/list", {})
        : await rpc("tools/call", { name: params.tool, arguments: params.args || {} });
      const text = Array.isArray(result?.content)
        ? result.content.map((c) => c.text ?? json(c)).join("\n")
        : json(result);
      return { content: [{ type: "text", text }], details: {} };
    },
  });
  if (!HOST_SERVERS) return;
  pi.registerTool({
    name: "calyx_mcp",
    label: "calyx_mcp",
    description: "Use the tools of the MCP servers the user added to calyx (`calyx mcp add`). Pass " +
      "{tool, args}; tool \"list\" returns their names, descriptions and input schemas.",
    parameters: {
      type: "object",
      properties: { tool: { type: "string" }, args: { type: "object" } },
      required: ["tool"],
    },
    async execute(_id, params, signal) {
      if (params.tool === "list") {
        const tools = await hostedTools(signal);
        const text = tools.length ? json(tools)
          : "No hosted MCP tools are published: the user adds servers with `calyx mcp add` or prefix M.";
        return { content: [{ type: "text", text }], details: {} };
      }
      const result = await hostedRpc("tools/call", { name: params.tool, arguments: params.args || {} },
        HOSTED_CALL_TIMEOUT_MS, signal);
      const text = resultText(result);
      // pi marks a tool result as an error when execute throws.
      if (result?.isError) throw new Error(text);
      return { content: [{ type: "text", text }], details: {} };
    },
  });
}
