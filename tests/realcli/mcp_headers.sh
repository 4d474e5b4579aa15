#!/usr/bin/env bash
# Does each real CLI send the MCP headers `calyx setup` wrote, with the identity variables expanded
# from its environment? calyx's entries are written against a capturing HTTP server that stands in
# for calyx's endpoint (no calyx server), then each CLI is made to connect to calyx-ipc: Claude,
# Gemini and OpenCode by `mcp list`, Hermes and Kimi by `mcp test calyx-ipc`, Codex and Copilot (whose
# listing does not connect) by one headless turn against their fake model. Checked on the first
# request to /mcp: `Authorization: Bearer TOKEN`, `X-Calyx-Surface-ID`/`X-Calyx-Session-ID` equal
# to CALYX_SURFACE_ID/CALYX_SESSION_ID, `X-Calyx-Agent-Kind` = KIND (absent for Claude Code).
# Kimi's MCP client (fastmcp) expands no environment variables in headers, so calyx writes it no
# identity headers: for Kimi only the bearer and the agent kind are checked, and the identity
# headers must be absent (not sent as unexpanded `${...}` text).
# MCPH_UNSET=1: the variables unset (a plain terminal); prints what each CLI sends in their place.
# The stand-in also keeps the hook payloads `calyx hook` posts to it (Codex's and Copilot's headless
# turns): save_payloads.py saves the shapes fixtures/payloads/ does not cover, as suite.sh does.
# Usage: tests/realcli/mcp_headers.sh [CLI...]   Prints one line per CLI, then "N passed, M failed".
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"
declare -A KIND=([claude]=claude-code [codex]=codex [opencode]=opencode [gemini]=gemini [pi]=pi
                 [copilot]=copilot [hermes]=hermes [kimi]=kimi)
declare -A PORT=([claude]=18401 [codex]=18402 [opencode]=18403 [gemini]=18404 [pi]=18405
                 [copilot]=18406 [hermes]=18407 [kimi]=18408)
MCP_PORT=41830
TOKEN=$(printf 'c4%.0s' $(seq 32))

if [ "${1:-}" = --inner ]; then
  . "$D/env.sh"
  rl_calyx_env "$D/run"
  mkdir -p "$HOME/.local/state/calyx"
  echo "{\"port\":$MCP_PORT,\"token\":\"$TOKEN\"}" > "$HOME/.local/state/calyx/agent-endpoint.json"
  chmod 600 "$HOME/.local/state/calyx/agent-endpoint.json"
  python3 -B - "$MCP_PORT" "$D/requests.jsonl" "$D/payloads.jsonl" > "$D/capture.out" 2>&1 <<'PY' & CAP=$!
import http.server, json, sys
HOOKS = {"/agent-event": 204, "/approval-request": 200}
class H(http.server.BaseHTTPRequestHandler):
    def handle_one(self):
        n = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(n)
        headers = {k.lower(): v for k, v in self.headers.items()}
        with open(sys.argv[2], "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path, "headers": headers}) + "\n")
        route = self.path.split("?")[0]
        if route in HOOKS:
            # A hook payload (`calyx hook` posts here too): kept as calyx's CALYX_CAPTURE_PAYLOADS
            # would, for save_payloads.py; answered as calyx answers "no decision".
            try:
                payload = json.loads(body or b"null")
            except ValueError:
                payload = None
            with open(sys.argv[3], "a") as f:
                f.write(json.dumps({"cli": headers.get("x-calyx-agent-kind", "claude-code"),
                                    "route": route.strip("/"), "event": None, "payload": payload}) + "\n")
            self.send_response(HOOKS[route]); self.send_header("content-length", "0"); self.end_headers()
            return
        self.send_response(501); self.send_header("content-type", "application/json"); self.end_headers()
        self.wfile.write(b'{"error":"not yet"}')
    do_POST = do_GET = do_DELETE = handle_one
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
  trap 'kill $CAP $FAKE 2>/dev/null' EXIT
  FAKE=""
  "$R" waitport "$MCP_PORT" 10 || { echo "capture server did not start" > "$D/error"; exit 0; }
  timeout 60 "$CALYX" setup --yes --agent "${KIND[$CLI]}" > "$D/setup.out" 2>&1 || { echo "calyx setup failed" > "$D/error"; exit 0; }
  # Setup's own check that the CLI loads the config (`claude mcp get`, `gemini mcp list`) may
  # connect to the stand-in, from no pane: only the requests of the run below count.
  : > "$D/requests.jsonl"
  export CALYX_SURFACE_ID=surface-$CLI CALYX_SESSION_ID=session-$CLI
  [ -z "${MCPH_UNSET:-}" ] || unset CALYX_SURFACE_ID CALYX_SESSION_ID
  cd "$D/project"
  case "$CLI" in
    hermes|kimi) timeout 60 "$CLI" mcp test calyx-ipc ;;
    codex|copilot)
      "$R" fake "$CLI" "${PORT[$CLI]}" "$D/fake.jsonl" > "$D/fake.out" 2>&1 & FAKE=$!
      "$R" waitport "${PORT[$CLI]}" 20
      mapfile -t A < "$D/argv"
      timeout 90 "${A[@]}" ;;
    *) timeout 60 "$CLI" mcp list ;;
  esac < /dev/null > "$D/cli.out" 2>&1
  exit 0
fi

rl_init "realcli mcp-headers"
passed=0 failed=0
for CLI in ${*:-claude codex opencode gemini pi copilot hermes kimi}; do
  [ -n "${KIND[$CLI]:-}" ] || { echo "realcli mcp-headers: unknown CLI '$CLI'"; failed=$((failed + 1)); continue; }
  if [ "$CLI" = pi ]; then echo "realcli mcp-headers pi: SKIP: pi has no MCP client"; continue; fi
  D=$T/$CLI; mkdir -p "$D"; t0=$SECONDS
  if ! rl_install "$CLI" "$D/install.log"; then
    echo "realcli mcp-headers $CLI: SKIP: not installable: $(tail -n 2 "$D/install.log" | tr '\n' ' ')"; continue
  fi
  "$R" prepare "$CLI" "$D/home" "$D/project" "${PORT[$CLI]}" > "$D/env.sh"
  "$R" cmd "$CLI" headless "SCENARIO:basic write marker" > "$D/argv" 2> /dev/null
  CLI=$CLI D=$D MCPH_UNSET=${MCPH_UNSET:-} MCP_PORT=$MCP_PORT TOKEN=$TOKEN timeout 180 "$R" netns -- bash "$HERE/mcp_headers.sh" --inner
  touch "$D/requests.jsonl"
  verdict=$(MCPH_UNSET=${MCPH_UNSET:-} python3 - "$D/requests.jsonl" "$CLI" "${KIND[$CLI]}" "$TOKEN" "$(cat "$D/error" 2>/dev/null)" <<'PY'
import json, os, sys
path, cli, kind, token, error = sys.argv[1:]
if error:
    print("FAIL (%s)" % error); sys.exit()
reqs = [json.loads(l) for l in open(path) if l.strip()]
mcp = [r for r in reqs if r["path"].split("?")[0] == "/mcp"]
if not mcp:
    print("FAIL (no request reached /mcp; paths seen: %s)" % sorted({r["path"] for r in reqs})); sys.exit()
h = mcp[0]["headers"]
want = {"authorization": "Bearer " + token, "x-calyx-surface-id": "surface-" + cli,
        "x-calyx-session-id": "session-" + cli}
if kind != "claude-code":
    want["x-calyx-agent-kind"] = kind
if kind == "kimi":  # no identity headers: Kimi cannot expand them (see the top of this file)
    for k in ("x-calyx-surface-id", "x-calyx-session-id"):
        want.pop(k)
        if k in h:
            want[k] = None
if os.environ.get("MCPH_UNSET"):  # variables unset: report what is sent in their place
    for k in ("x-calyx-surface-id", "x-calyx-session-id"):
        want.pop(k)
    print("PASS (unset variables sent as surface=%r session=%r by %s)" % (
        h.get("x-calyx-surface-id"), h.get("x-calyx-session-id"), h.get("user-agent", "-")))
    sys.exit()
bad = ["%s=%r (want %r)" % (k, h.get(k), v) for k, v in want.items() if h.get(k) != v]
if kind == "claude-code" and "x-calyx-agent-kind" in h:
    bad.append("x-calyx-agent-kind present")
ua = h.get("user-agent", "-")
if bad:
    print("FAIL (%s; user-agent %s)" % ("; ".join(bad), ua))
else:
    print("PASS (%d request(s) to /mcp, first %s by %s: bearer, %s%s)" % (
        len(mcp), mcp[0]["method"], ua, "no identity headers (none written)" if kind == "kimi" else "surface, session",
        "" if kind == "claude-code" else ", agent kind"))
PY
)
  echo "realcli mcp-headers $CLI: $verdict"
  python3 "$HERE/save_payloads.py" --source tests/realcli/mcp_headers.sh "$CLI" "$("$R" version "$CLI")" \
    "$D" "$ROOT/fixtures/payloads" | sed 's/^realcli /realcli mcp-headers /'
  rl_time "$CLI" $((SECONDS - t0))
  case "$verdict" in PASS*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
done
rl_finish "$failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
