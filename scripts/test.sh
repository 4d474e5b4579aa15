#!/usr/bin/env bash
# Every test: the cargo workspace (unit, snapshot, property, PTY end-to-end, HTTP), then a real
# agent CLI in a calyx pane through ../shared/realcli (skipped, saying why, where it cannot run).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --locked
# The secret-store tests again inside dbus-run-session with gnome-keyring unlocked.
bash scripts/test-secret-service.sh
# suite.sh, approvals.sh, mcp_headers.sh, hosted_mcp.sh and resume.sh, timed per CLI; fails
# over the 20-minute budget.
bash tests/realcli/run.sh
bash scripts/mcp-conformance.sh
# calyx as an MCP client: the conformance suite's core and backcompat client scenarios (OAuth).
bash scripts/mcp-conformance-client.sh
