// calyx's OpenCode plugin: reports this OpenCode session's state to calyx, the terminal
// multiplexer it runs in. Written by `calyx setup`; `calyx setup --uninstall` removes it.
// Outside a calyx pane (no CALYX_SURFACE_ID / CALYX_SESSION_ID), or inside a herdr pane, it
// registers nothing.
import { readFileSync, statSync } from "node:fs";

const ENDPOINT_FILE = __CALYX_ENDPOINT_FILE__;
const KIND = "opencode";
const EVENT_TIMEOUT_MS = 2000;
// A permission waits for a human in calyx's panel: the server gives up at 570 s (answering
// nothing), and this is the safety net above it.
const APPROVAL_TIMEOUT_MS = 585000;
const REPLIES = new Set(["once", "always", "reject"]);
// Bus events calyx's state machine reads; the rest (message deltas...) would only be noise.
const BUS_EVENTS = new Set([
  "session.created", "session.deleted", "session.status", "session.idle", "session.compacted",
  "permission.asked", "permission.updated", "permission.replied",
]);

let cached = { mtimeMs: -1, value: null };
// The endpoint file, re-read only when its modification time changes (a restarted server may
// move to another port or token).
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

function headers(ep) {
  const h = { "Content-Type": "application/json", Authorization: `Bearer ${ep.token}`, "X-Calyx-Agent-Kind": KIND };
  if (process.env.CALYX_SURFACE_ID) h["X-Calyx-Surface-ID"] = process.env.CALYX_SURFACE_ID;
  if (process.env.CALYX_SESSION_ID) h["X-Calyx-Session-ID"] = process.env.CALYX_SESSION_ID;
  return h;
}

function json(value) {
  const seen = new WeakSet();
  return JSON.stringify(value, (k, v) => {
    if (typeof v === "bigint") return String(v);
    if (v && typeof v === "object") { if (seen.has(v)) return undefined; seen.add(v); }
    return v;
  });
}

// Posts to calyx; resolves to the response text, or null on any failure (calyx not running,
// stale endpoint, timeout, aborted): calyx's absence must never disturb OpenCode.
async function post(path, body, timeoutMs, abort) {
  const ep = endpoint();
  if (!ep) return null;
  const timeout = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(`http://127.0.0.1:${ep.port}${path}`, {
      method: "POST", headers: headers(ep), body: json(body),
      signal: abort ? AbortSignal.any([abort, timeout]) : timeout,
    });
    return res.ok ? await res.text() : null;
  } catch {
    return null;
  }
}

// The session id arrives under four spellings depending on the event.
function sessionOf(ev) {
  const p = (ev && ev.properties) || {};
  for (const o of [ev, p, p.info]) {
    if (!o) continue;
    for (const k of ["sessionID", "session_id", "sessionId"]) if (typeof o[k] === "string") return o[k];
  }
  return p.info && (p.info.projectID || p.info.slug) && typeof p.info.id === "string" ? p.info.id : null;
}

// Answers a permission through OpenCode's own server, as its TUI does. OpenCode 1.18.33's
// `POST /permission/{requestID}/reply` ({reply, message}) carries a reject's message to the
// model; the plugin's v1 client has no method for it, so it is called through the client's
// transport, falling back to the v1 `postSessionIdPermissionsPermissionId` (no message).
async function reply(client, sid, id, answer) {
  const body = { reply: answer.reply };
  if (answer.reply === "reject" && typeof answer.message === "string") body.message = answer.message;
  try {
    const res = await client._client.post({
      url: "/permission/{requestID}/reply", path: { requestID: id }, body,
      headers: { "Content-Type": "application/json" },
    });
    if (res && !res.error) return;
  } catch {}
  try {
    await client.postSessionIdPermissionsPermissionId({
      path: { id: sid, permissionID: id }, body: { response: answer.reply },
    });
  } catch {}
}

export const CalyxPlugin = async ({ directory, client }) => {
  const env = process.env;
  if ((!env.CALYX_SURFACE_ID && !env.CALYX_SESSION_ID) || env.HERDR_PANE_ID) return {};
  // Sessions with an unanswered permission.asked: their session.idle must not overwrite the
  // blocked row with idle (OpenCode can send idle before the reply).
  const pending = new Set();
  // permission id -> AbortController of its request held by calyx: answering in OpenCode's own
  // dialog first aborts it, which withdraws it from calyx's panel.
  const held = new Map();
  // Holds the permission in calyx's panel; only a human's answer there (or a rule the human set)
  // replies. Silence, expiry or an unreachable calyx replies nothing: OpenCode's dialog stays.
  const ask = async (event, sid) => {
    const id = event.properties && event.properties.id;
    if (typeof id !== "string" || !sid || held.has(id)) return;
    const abort = new AbortController();
    held.set(id, abort);
    const text = await post("/approval-request", event, APPROVAL_TIMEOUT_MS, abort.signal);
    held.delete(id);
    if (!text || abort.signal.aborted) return;
    let answer;
    try { answer = JSON.parse(text); } catch { return; }
    if (answer && REPLIES.has(answer.reply)) await reply(client, sid, id, answer);
  };
  const send = (payload) => { void post("/agent-event", payload, EVENT_TIMEOUT_MS); };
  const hook = (name) => async (input, output) => { send({ hook: name, input, output, directory }); };
  return {
    event: async ({ event }) => {
      const type = event && event.type;
      if (!BUS_EVENTS.has(type)) return;
      const sid = sessionOf(event);
      if (type === "permission.asked" || type === "permission.updated") {
        if (sid) pending.add(sid);
        // The approval request carries the state too (the row shows blocked). Not awaited: the
        // bus must not stall while a human decides. (OpenCode 1.18.33 has no permission.ask
        // hook whose return value decides; see fixtures/payloads.)
        void ask(event, sid);
        return;
      } else if (type === "permission.replied") {
        if (sid) pending.delete(sid);
        const p = event.properties || {};
        const abort = held.get(p.requestID || p.permissionID || p.id);
        if (abort) abort.abort();
      } else if (type === "session.idle" && sid && pending.has(sid)) {
        return;
      }
      send(event);
    },
    "chat.message": hook("chat.message"),
    "tool.execute.before": hook("tool.execute.before"),
    "tool.execute.after": hook("tool.execute.after"),
  };
};
