#!/usr/bin/env bash
# Real Claude Code and Codex sessions (../shared/realcli, offline fake model) in calyx panes run
# a shell command that needs approval. Approved from calyx, the command runs (its marker file
# appears); denied with a message, it does not, and the message reaches the model.
# Usage: tests/realcli/approvals.sh [claude] [codex]   (after `cargo build`)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
R=${REALCLI:-$(realpath "$ROOT/../shared/realcli/realcli.sh" 2>/dev/null)}
CALYX=${CALYX_BIN:-$ROOT/target/debug/calyx}
[ -x "$R" ] || { echo "realcli approvals: SKIP: no ../shared/realcli/realcli.sh"; exit 0; }
CLIS=("$@"); [ ${#CLIS[@]} -gt 0 ] || CLIS=(claude codex)
passed=0; failed=0

run_one() { # CLI KIND PORT MODE(allow|deny)
  local cli=$1 kind=$2 P=$3 mode=$4
  local T; T=$(mktemp -d /tmp/calyx-realcli-appr.XXXXXX); chmod 700 "$T"
  "$R" prepare "$cli" "$T/home" "$T/project" "$P" > "$T/env.sh"
  "$R" cmd "$cli" tui "SCENARIO:perm write marker" > "$T/argv"
  mkdir -p "$T/run" && chmod 700 "$T/run"
  cat > "$T/inner.sh" <<'INNER'
set -uo pipefail
. "$T/env.sh"
export XDG_RUNTIME_DIR=$T/run XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config
"$R" fake "$CLI" "$P" "$T/fake.jsonl" > "$T/fake.out" 2>&1 & FAKE=$!
"$R" waitport "$P" 20
c() { "$CALYX" "$@"; }
bye() { c kill-server >/dev/null 2>&1; kill $FAKE 2>/dev/null; }
fail() { echo "FAIL: $*"; c capture -t agent 2>/dev/null | tail -n 25; c approvals 2>/dev/null; bye; exit 1; }
c new -d -s setup -x 160 -y 45 -- sleep 600 || fail "server did not start"
c setup --yes --agent "$KIND" > "$T/setup.out" 2>&1 || fail "calyx setup: $(cat "$T/setup.out")"
mapfile -t A < "$T/argv"
c new -d -s agent -x 160 -y 45 -c "$T/project" -- timeout --foreground 180 "${A[@]}" || fail "no agent pane"
id=""
for _ in $(seq 300); do
  id=$(c approvals --json --pending 2>/dev/null | python3 -c 'import json,sys; p=json.load(sys.stdin)["pending"]; print(p[0]["id"] if p else "")')
  [ -n "$id" ] && break
  # Codex asks to trust the directory or hooks on first start in some versions: accept.
  c capture -t agent 2>/dev/null | grep -qiE "trust this|Do you trust" && c send-keys -t agent Enter
  sleep 0.2
done
[ -n "$id" ] || fail "no approval request reached calyx"
c approvals --json --pending | grep -q 'marker' || fail "the request does not show the real command"
if [ "$MODE" = allow ]; then
  c approve "$id" || fail "approve"
  for _ in $(seq 100); do [ -f "$T/project/marker.txt" ] && break; sleep 0.2; done
  [ -f "$T/project/marker.txt" ] || fail "approved, but the command did not run"
else
  c deny "$id" -m "calyx-e2e-denied: use the staging db" || fail "deny"
  for _ in $(seq 100); do grep -q "calyx-e2e-denied" "$T/fake.jsonl" 2>/dev/null && break; sleep 0.2; done
  grep -q "calyx-e2e-denied" "$T/fake.jsonl" || fail "denied, but the message did not reach the model"
  [ ! -f "$T/project/marker.txt" ] || fail "denied, but the command ran"
fi
bye
echo OK
INNER
  local out
  out=$(T=$T R=$R P=$P CLI=$cli KIND=$kind MODE=$mode CALYX=$CALYX timeout 300 "$R" netns -- bash "$T/inner.sh" 2>&1)
  if [ "$(echo "$out" | tail -n 1)" = OK ]; then
    echo "realcli approvals $cli $mode: PASS"; passed=$((passed+1))
  else
    echo "realcli approvals $cli $mode: FAIL"; echo "$out" | sed 's/^/    /' | tail -n 40; failed=$((failed+1))
  fi
}

for cli in "${CLIS[@]}"; do
  case $cli in
    claude) kind=claude-code; port=18401 ;;
    codex) kind=codex; port=18402 ;;
    *) echo "realcli approvals $cli: SKIP: not a gated CLI here"; continue ;;
  esac
  if ! "$R" install "$cli" > /tmp/calyx-realcli-install-$cli.log 2>&1; then
    echo "realcli approvals $cli: SKIP: install failed: $(tail -n 2 /tmp/calyx-realcli-install-$cli.log | tr '\n' ' ')"
    continue
  fi
  run_one "$cli" "$kind" "$port" allow
  run_one "$cli" "$kind" "$port" deny
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
