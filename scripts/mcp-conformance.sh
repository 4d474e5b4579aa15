#!/usr/bin/env bash
# Runs the official MCP conformance suite (../shared/mcp/conformance.sh, Node 22 from npm)
# against calyx's /mcp served by examples/mcp_conformance_server.rs with the fake backend.
# usage: scripts/mcp-conformance.sh [SCENARIO ...]   (default: the fixture-free server scenarios)
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=${MCP_CONFORMANCE_SCRIPT:-../shared/mcp/conformance.sh}
[ $# -gt 0 ] || set -- server-initialize ping tools-list server-sse-multiple-streams dns-rebinding-protection
cargo build --quiet --example mcp_conformance_server
out=$(mktemp); fifo=$(mktemp -u); mkfifo "$fifo"
# The server lives while the fifo's writer (fd 3) stays open.
target/debug/examples/mcp_conformance_server <"$fifo" >"$out" &
pid=$!
exec 3>"$fifo"
trap 'exec 3>&-; wait "$pid" 2>/dev/null; rm -f "$out" "$fifo"' EXIT
for _ in $(seq 100); do grep -q '^TOKEN ' "$out" && break; sleep 0.1; done
url=$(sed -n 's/^URL //p' "$out"); token=$(sed -n 's/^TOKEN //p' "$out")
[ -n "$token" ] || { echo "mcp-conformance: server did not start" >&2; exit 2; }
MCP_TOKEN=$token "$SUITE" "$url" "$@"
