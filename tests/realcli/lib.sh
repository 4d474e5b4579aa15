# Shared by the tests/realcli/ scripts (sourced, not run). The CLIs they drive: claude codex
# opencode gemini pi copilot hermes kimi (Kimi runs as `python -m kimi_cli.cli` through
# realcli's wrapper: its `kimi` entry point is a deprecation stub, see ../shared/realcli/README.md).
#
# Outside the namespace:  rl_init NAME        -> ROOT, R (realcli.sh), CALYX, T (a fresh 0700 dir);
#                                                exits 0 with "SKIP" when ../shared/realcli is absent,
#                                                 1 when there is no calyx binary
#                         rl_install CLI LOG  -> install one CLI (0 = installed)
#                         rl_finish FAILED    -> remove $T when FAILED is 0 (REALCLI_KEEP=1 keeps it)
#                         rl_time CLI SECONDS -> record one CLI's run time for run.sh (REALCLI_TIMES)
# Inside `realcli.sh netns` (after `. env.sh`):
#                         c ARGS...           -> calyx
#                         rl_calyx_env DIR    -> a private runtime dir for the calyx server
#                         rl_pane SESSION     -> the pane id (%N) of a session's first pane
#                         rl_row PANE         -> that pane's agent row as "agent state", or "none"
#                         rl_pending_ids      -> ids of the approval requests calyx holds
#                         rl_mcp_status       -> HTTP status of an MCP initialize at calyx's /mcp
rl_init() {
  RL_NAME=$1
  ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  R=${REALCLI:-$(realpath "$ROOT/../shared/realcli/realcli.sh" 2>/dev/null)}
  CALYX=${CALYX_BIN:-$ROOT/target/debug/calyx}
  [ -x "$R" ] || { echo "$RL_NAME: SKIP: no ../shared/realcli/realcli.sh"; exit 0; }
  [ -x "$CALYX" ] || { echo "$RL_NAME: FAIL: no calyx binary at $CALYX"; exit 1; }
  T=$(mktemp -d "${REALCLI_TMP:-/tmp}/calyx-realcli.XXXXXX"); chmod 700 "$T"
  # `calyx setup` checks what it wrote with the real CLI, bounded in time; on a loaded 2-core
  # CI machine a CLI's start-up alone can pass those bounds, so they get four times as long.
  export CALYX_SETUP_TIMEOUT_SCALE=${CALYX_SETUP_TIMEOUT_SCALE:-4}
  export ROOT R CALYX T
}

rl_install() { timeout 600 "$R" install "$1" > "$2" 2>&1; }

c() { timeout 30 "$CALYX" "$@"; }

# The calyx server's socket and runtime files under DIR (its state and config stay under the
# throwaway HOME, where `calyx hook` will look for the endpoint file).
rl_calyx_env() { mkdir -p "$1" && chmod 700 "$1" && export XDG_RUNTIME_DIR=$1; }

rl_pane() {
  c list-panes --json -t "$1" 2>/dev/null | python3 -c '
import json, sys
panes = json.load(sys.stdin)
print(panes[0]["id"] if panes else "")' 2>/dev/null
}

# The ids of the approval requests calyx holds, one per line, oldest first.
rl_pending_ids() {
  c approvals --json --pending 2>/dev/null |
    python3 -c 'import json,sys; [print(p["id"]) for p in json.load(sys.stdin)["pending"]]' 2>/dev/null
}

rl_row() {
  c agents --json 2>/dev/null | python3 -c '
import json, sys
rows = [r for r in json.load(sys.stdin)["agents"] if r.get("pane") == sys.argv[1]]
print("%s %s" % (rows[0]["agent"], rows[0]["state"]) if rows else "none")' "$1" 2>/dev/null || echo none
}

# HTTP status of an MCP initialize POSTed to the calyx server's /mcp (reads the endpoint file
# under $HOME or $XDG_STATE_HOME): 200 when calyx serves MCP, 501 while it does not yet.
rl_mcp_status() {
  python3 - "${XDG_STATE_HOME:-$HOME/.local/state}/calyx/agent-endpoint.json" <<'PY' 2>/dev/null || echo 000
import json, sys, urllib.request, urllib.error
ep = json.load(open(sys.argv[1]))
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "realcli", "version": "1"}}})
req = urllib.request.Request("http://127.0.0.1:%d/mcp" % ep["port"], data=body.encode(), headers={
    "Authorization": "Bearer " + ep["token"], "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream"})
try:
    print(urllib.request.urlopen(req, timeout=5).status)
except urllib.error.HTTPError as e:
    print(e.code)
PY
}

# rl_finish FAILED: removes $T (several hundred MB with OpenCode's and Copilot's HOMEs) when
# nothing failed, unless REALCLI_KEEP=1; otherwise says where the logs are.
rl_finish() {
  if [ "$1" -eq 0 ] && [ -z "${REALCLI_KEEP:-}" ]; then rm -rf "$T"
  else echo "$RL_NAME: logs kept in $T"
  fi
}

# rl_time CLI SECONDS: appends "SCRIPT CLI SECONDS" to $REALCLI_TIMES when set (tests/realcli/run.sh
# adds them up per CLI and checks the whole run's time budget).
rl_time() {
  [ -z "${REALCLI_TIMES:-}" ] || echo "$(basename "$0" .sh) $1 $2" >> "$REALCLI_TIMES"
}
