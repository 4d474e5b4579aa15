#!/usr/bin/env bash
# Drives a live calyx server's /mcp with the official MCP tooling (both installed from npm on
# first use, Node 22 by the conformance runner):
#   1. the conformance suite (../shared/mcp/conformance.sh) with the fixture-free server scenarios;
#   2. the MCP inspector CLI (../shared/mcp/inspector.sh) as a real client: tools/list must list
#      calyx's tools, and tools/call pane_list must answer with the server's own pane.
# The server is a real `calyx` (target/debug/calyx, CALYX_BIN overrides) with a private runtime,
# state and config dir, started by `calyx new -d`, so it is the same server users run.
# usage: scripts/mcp-conformance.sh [SCENARIO ...]   (default: the fixture-free server scenarios)
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=${MCP_CONFORMANCE_SCRIPT:-../shared/mcp/conformance.sh}
INSPECTOR=${MCP_INSPECTOR_SCRIPT:-../shared/mcp/inspector.sh}
CALYX=${CALYX_BIN:-$PWD/target/debug/calyx}
[ $# -gt 0 ] || set -- server-initialize ping tools-list server-sse-multiple-streams dns-rebinding-protection server-sse-polling
[ -x "$CALYX" ] || cargo build --quiet
# Without the shared tooling or npm the checks cannot run: say so (a failure where CI requires
# them, as .ci/run does with CALYX_REQUIRE_NODE).
for need in "$SUITE" "$INSPECTOR"; do
  if [ ! -x "$need" ] || ! command -v npm >/dev/null; then
    echo "mcp conformance: SKIP: needs $need and npm"
    [ -z "${CALYX_REQUIRE_NODE:-}" ] || exit 1
    exit 0
  fi
done

dir=$(mktemp -d /tmp/calyx-mcp-live.XXXXXX); chmod 700 "$dir"
export XDG_RUNTIME_DIR=$dir/run XDG_STATE_HOME=$dir/state XDG_CONFIG_HOME=$dir/config
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
trap '"$CALYX" kill-server >/dev/null 2>&1; rm -rf "$dir"' EXIT
"$CALYX" new -d -s conformance -- sleep 3600
ep=$XDG_STATE_HOME/calyx/agent-endpoint.json
for _ in $(seq 100); do [ -s "$ep" ] && break; sleep 0.1; done
port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$ep")
token=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$ep")
url=http://127.0.0.1:$port/mcp

MCP_TOKEN=$token "$SUITE" "$url" "$@"

# The inspector CLI as a real client of the same live server.
auth="Authorization: Bearer $token"
list=$("$INSPECTOR" "$url" --transport http --method tools/list --header "$auth")
for tool in pane_list pane_read agent_wait pane_run terminal_list_commands send_message; do
  grep -q "\"$tool\"" <<< "$list" || { echo "mcp inspector: tools/list lacks $tool" >&2; exit 1; }
done
call=$("$INSPECTOR" "$url" --transport http --method tools/call --tool-name pane_list --header "$auth")
grep -q '"session": *"conformance"' <<< "$call" ||
  { echo "mcp inspector: pane_list did not return the server's pane: $call" >&2; exit 1; }
echo "mcp inspector: PASS (tools/list lists calyx's tools; tools/call pane_list answers with pane %1 of session conformance)"
