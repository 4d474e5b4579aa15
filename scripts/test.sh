#!/usr/bin/env bash
# Every test: the cargo workspace (unit, snapshot, property, PTY end-to-end, HTTP), then a real
# agent CLI in a calyx pane through ../shared/realcli (skipped, saying why, where it cannot run).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --locked
bash tests/realcli/suite.sh
bash tests/realcli/approvals.sh
bash tests/realcli/mcp_headers.sh
bash scripts/mcp-conformance.sh
