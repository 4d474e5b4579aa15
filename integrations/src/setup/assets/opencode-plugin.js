// calyx's OpenCode plugin: reports this OpenCode session's state to calyx, the terminal
// multiplexer it runs in. Written by `calyx setup`; `calyx setup --uninstall` removes it.
// Outside a calyx pane (no CALYX_SURFACE_ID / CALYX_SESSION_ID), or inside a herdr pane, it
// registers nothing.
import { readFileSync, statSync } from "node:fs";

const ENDPOINT_FILE = __CALYX_ENDPOINT_FILE__;
const KIND = "opencode";
const EVENT_TIMEOUT_MS = 2000;
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
// stale endpoint, timeout): calyx's absence must never disturb OpenCode.
async function post(path, body, timeoutMs) {
  const ep = endpoint();
  if (!ep) return null;
  try {
    const res = await fetch(`http://127.0.0.1:${ep.port}${path}`, {
      method: "POST", headers: headers(ep), body: json(body), signal: AbortSignal.timeout(timeoutMs),
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

export const CalyxPlugin = async ({ directory }) => {
  const env = process.env;
  if ((!env.CALYX_SURFACE_ID && !env.CALYX_SESSION_ID) || env.HERDR_PANE_ID) return {};
  // Sessions with an unanswered permission.asked: their session.idle must not overwrite the
  // blocked row with idle (OpenCode can send idle before the reply).
  const pending = new Set();
  const send = (payload) => { void post("/agent-event", payload, EVENT_TIMEOUT_MS); };
  const hook = (name) => async (input, output) => { send({ hook: name, input, output, directory }); };
  return {
    event: async ({ event }) => {
      const type = event && event.type;
      if (!BUS_EVENTS.has(type)) return;
      const sid = sessionOf(event);
      if (type === "permission.asked" || type === "permission.updated") {
        if (sid) pending.add(sid);
        // TODO(approvals): answer here: POST the event to /approval-request and pass calyx's
        // decision to client.postSessionIdPermissionsPermissionId({path: {id: sid,
        // permissionID: event.properties.id}, body: {response: "once"|"always"|"reject"}})
        // (OpenCode 1.18.33 has no permission.ask hook; see fixtures/payloads).
      } else if (type === "permission.replied") {
        if (sid) pending.delete(sid);
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
