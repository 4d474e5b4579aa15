#!/usr/bin/env bash
# A real Claude Code session (../shared/realcli, driven offline by its fake model server) in a
# calyx pane, with the hooks and MCP entry `calyx setup` wrote. Two checks:
#   rows  the agent row moves working -> blocked (its permission request, held by calyx) ->
#         idle (approved with `calyx approve`) -> done (/exit)
#   mcp   Claude calls calyx's pane_list through calyx-ipc and calyx's answer reaches the model
# Usage: tests/realcli/claude_session.sh rows|mcp   (after `cargo build`; CALYX_BIN overrides)
# Prints "realcli claude MODE: PASS" or FAIL lines, or "SKIP: reason" when Claude cannot be installed.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
MODE=${1:-rows}
case $MODE in
  rows) PROMPT="SCENARIO:basic write marker" ;;
  mcp) PROMPT="SCENARIO:mcp:pane_list list the panes" ;;
  *) echo "usage: $0 rows|mcp" >&2; exit 2 ;;
esac
rl_init "realcli claude $MODE"
P=18401
if ! rl_install claude "$T/install.log"; then
  echo "$RL_NAME: SKIP: install failed: $(tail -n 3 "$T/install.log" | tr '\n' ' ')"
  exit 0
fi
"$R" prepare claude "$T/home" "$T/project" $P > "$T/env.sh"
"$R" cmd claude tui "$PROMPT" > "$T/argv"
mkdir -p "$T/config/calyx" "$T/run" && chmod 700 "$T/run"
echo 'remain_on_exit = true' > "$T/config/calyx/config.toml"
cat > "$T/inner.sh" <<'INNER'
set -uo pipefail
. "$T/env.sh"
export XDG_RUNTIME_DIR=$T/run XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config
"$R" fake claude $P "$T/fake.jsonl" > "$T/fake.out" 2>&1 & FAKE=$!
"$R" waitport $P 20
c() { "$CALYX" "$@"; }
fail() { echo "$RL_NAME: FAIL: $*"; c capture -t agent 2>/dev/null | tail -n 20; c agents explain agent 2>/dev/null; c kill-server; kill $FAKE; exit 1; }
state() { c agents --json 2>/dev/null | python3 -c 'import json,sys; a=json.load(sys.stdin)["agents"]; print(a[0]["state"] if a else "none")'; }
wait_state() { for _ in $(seq 150); do s=$(state); [ "$s" = "$1" ] && return 0; sleep 0.2; done; return 1; }
# The server first (setup needs its endpoint), then calyx's own config writing, then Claude.
c new -d -s setup -x 160 -y 45 -- sleep 600 || fail "server did not start"
c setup --yes --agent claude-code > "$T/setup.out" 2>&1 || fail "calyx setup: $(cat "$T/setup.out")"
mapfile -t A < "$T/argv"
c new -d -s agent -x 160 -y 45 -c "$T/project" -- timeout --foreground 180 "${A[@]}" || fail "no agent pane"
if [ "$MODE" = rows ]; then
seen_working=no
for _ in $(seq 300); do
  s=$(state)
  [ "$s" = working ] && seen_working=yes
  [ "$s" = blocked ] && break
  sleep 0.1
done
# A fast turn can pass through working between two polls: the row's own history says so too.
c agents explain agent 2>/dev/null | grep -q -- "-> working" && seen_working=yes
[ "$seen_working" = yes ] || fail "row never went working (last: $(state))"
# Claude asks before running Bash; the hook told calyx at once, so the row is blocked.
[ "$(state)" = blocked ] || fail "row did not go blocked at the permission dialog (last: $(state))"
# calyx holds the request (Claude waits for its hook before any dialog): answer it from calyx.
id=$(c approvals --json --pending | python3 -c 'import json,sys; p=json.load(sys.stdin)["pending"]; print(p[0]["id"] if p else "")')
[ -n "$id" ] || fail "no pending approval for the permission request"
c approve "$id" || fail "calyx approve $id"
wait_state idle || fail "row did not settle idle after the approval (last: $(state))"
[ -f "$T/project/marker.txt" ] || fail "the tool did not run"
else
# Claude asks permission for the MCP call too: approve every held request until the model got
# calyx's answer (the fake model's request log shows the tool result).
for _ in $(seq 300); do
  for id in $(c approvals --json --pending 2>/dev/null | python3 -c 'import json,sys; [print(p["id"]) for p in json.load(sys.stdin)["pending"]]' 2>/dev/null); do
    c approve "$id" >/dev/null 2>&1
  done
  grep -q 'window_name' "$T/fake.jsonl" 2>/dev/null && break
  sleep 0.2
done
grep -q 'pane_list' "$T/fake.jsonl" || fail "the model never called pane_list"
grep -q 'window_name' "$T/fake.jsonl" || fail "calyx's pane_list answer did not reach the model"
wait_state idle || fail "row did not settle idle (last: $(state))"
fi
c send-keys -t agent "/exit" Enter
sleep 0.5; c send-keys -t agent Enter
wait_state done || fail "row did not go done after /exit (last: $(state))"
c kill-server; kill $FAKE 2>/dev/null
case $MODE in
  rows) what="working -> blocked -> idle -> done" ;;
  mcp) what="pane_list answered through calyx-ipc" ;;
esac
echo "$RL_NAME: PASS ($what, $(c --version 2>/dev/null), claude $("$R" version claude))"
INNER
MODE=$MODE RL_NAME=$RL_NAME T=$T R=$R P=$P CALYX=$CALYX "$R" netns -- bash "$T/inner.sh"
