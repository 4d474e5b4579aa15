#!/usr/bin/env bash
# Every test: the cargo workspace (unit, snapshot, property, PTY end-to-end, HTTP), then a real
# agent CLI in a calyx pane through ../shared/realcli (skipped, saying why, where it cannot run).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --locked
bash tests/realcli/claude_session.sh rows
bash tests/realcli/approvals.sh
bash tests/realcli/setup_checks.sh
bash tests/realcli/mcp_headers.sh
bash tests/realcli/claude_session.sh mcp
bash scripts/mcp-conformance.sh
