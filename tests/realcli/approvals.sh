#!/usr/bin/env bash
# Approvals with every real CLI the harness installs (../shared/realcli, offline fake model),
# each in its interactive TUI in a calyx pane, after `calyx setup --yes --agent KIND` into a
# throwaway HOME. What each step checks is what docs/integrations.md ("Approvals") promises:
#   allow     approved from calyx (`calyx approve ID`; for Claude Code a real `y` pressed in a
#             real attached client), the command runs (its marker file appears)
#   deny      denied with a message (`calyx deny ID -m ...`): the command does not run and the
#             fake model's request log shows the message reached the model
#   plain-deny  denied without a message (`calyx deny ID`): the command does not run and what
#             the model got is calyx's default reason, "Denied by the user in calyx."
#   always    `a` pressed in a real attached client (calyx's rule for this tool in this pane):
#             a second identical call in the same session is not asked: calyx's rule answers it
#             (Claude Code, Codex, pi, Copilot), or OpenCode's own "always" does not even ask
#   pane      Claude Code: answered in Claude's own dialog while calyx holds the hook: the request
#             leaves calyx's queue at once, recorded as withdrawn, never answered twice
#   dialog    Gemini, Hermes and Kimi without the opt-in: calyx holds nothing, the CLI's own
#             dialog shows and the row is blocked (Kimi: working, as it fires no hook for its
#             approval panel)
#   step      Gemini, Hermes and Kimi with `[approvals] deny_gates`: `calyx approve` steps aside
#             and the CLI's own dialog opens (row blocked; Kimi: working)
# Kimi (kimi-cli 1.52.0) is deny-only: its PreToolUse hook can deny (`permissionDecision: "deny"`
# with a reason, which reaches the model) but an allow is ignored, so Kimi's own approval panel
# ("requesting approval") still asks; that is what `step` shows: approving in calyx answers the
# hook with nothing (steps aside), the panel opens, and Enter there runs the command.
# One line per CLI per step: PASS, FAIL, or SKIP with the reason; exits 1 if a CLI that installed
# failed. The hook payloads calyx received are compared with fixtures/payloads/ by shape and the
# new ones saved into fixtures/payloads/new/ (save_payloads.py), as suite.sh does. Usage: tests/realcli/approvals.sh [claude codex opencode gemini pi copilot hermes kimi]
# (after `cargo build`; CALYX_BIN overrides the binary; REALCLI_KEEP=1 keeps the logs).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
rl_init "realcli approvals"
declare -A KIND=([claude]=claude-code [codex]=codex [opencode]=opencode [gemini]=gemini
                 [pi]=pi [copilot]=copilot [hermes]=hermes [kimi]=kimi)
declare -A PORT=([claude]=18401 [codex]=18402 [opencode]=18403 [gemini]=18404 [pi]=18405
                 [copilot]=18406 [hermes]=18407 [kimi]=18408)
declare -A STEPS=([claude]="allow deny plain-deny always pane" [codex]="allow deny plain-deny always"
                  [opencode]="allow deny plain-deny always" [gemini]="dialog deny plain-deny step"
                  [pi]="allow deny plain-deny always" [copilot]="allow deny plain-deny always"
                  [hermes]="dialog deny plain-deny step" [kimi]="dialog deny plain-deny step")
# Steps that do not apply, and why (printed as SKIP lines).
declare -A SKIPS=(
  [gemini]="always:Gemini's hook cannot allow, so an always rule in calyx only stops calyx asking (Gemini still asks)"
  [hermes]="always:Hermes's hook cannot allow, so an always rule in calyx only stops calyx asking (Hermes still asks for dangerous commands)"
  [kimi]="always:Kimi's PreToolUse allow is ignored (its approval panel still asks), so an always rule in calyx only stops calyx asking")
failed=0

# The steps of one CLI, inside one network namespace, one calyx server, one fake model.
cat > "$T/inner.sh" <<'INNER'
set -uo pipefail
source "$ROOT/tests/realcli/lib.sh"
. "$D/env.sh"
# calyx's state and config stay under the throwaway HOME (OpenCode reads XDG_CONFIG_HOME too).
rl_calyx_env "$D/run"
export CALYX_CAPTURE_PAYLOADS=$D/payloads.jsonl
CONF=${XDG_CONFIG_HOME:-$HOME/.config}/calyx
"$R" fake "$CLI" "$P" "$D/fake.jsonl" > "$D/fake.out" 2>&1 & FAKE=$!
"$R" waitport "$P" 20
tm() { tmux -S "$D/tmux.sock" -f /dev/null "$@"; }
bye() { tm kill-server 2>/dev/null; c kill-server >/dev/null 2>&1; kill $FAKE 2>/dev/null; }
say() { echo "STEP $1 $2"; }
# Prints the screen of session $1 and calyx's approvals to the log, for a failed step.
dump() { { echo "--- $1"; c capture -t "$1"; c approvals; c agents; } >> "$D/steps.log" 2>&1; }
server() { # (re)starts calyx with the given config.toml text
  # --forget: a plain kill-server keeps the sessions' records, and a saved name (`setup`, the
  # steps' sessions) refuses `calyx new -s` until it is restored or forgotten.
  c kill-server --forget >/dev/null 2>&1
  mkdir -p "$CONF"; printf '%s\n' "$1" > "$CONF/config.toml"
  # The old server may still be going away: retry until a new one answers.
  for _ in 1 2 3 4 5; do
    c new -d -s setup -x 160 -y 45 -- sleep 900 2> "$D/server-start.err" && return 0
    sleep 1
  done
  echo "calyx server did not start: $(tail -n 2 "$D/server-start.err" | tr '\n' ' ')"
  return 1
}
pending_id() { rl_pending_ids | head -n 1; } # the id of the first pending request, or nothing
recent_of() { # the recorded state of request $1 ("withdrawn", "allow", ...)
  c approvals --json 2>/dev/null | python3 -c '
import json, sys
r = [x for x in json.load(sys.stdin)["recent"] if str(x["id"]) == sys.argv[1]]
print(r[-1]["state"] + " by " + r[-1]["by"] if r else "none")' "$1" 2>/dev/null
}
# Whether session $1's screen matches the extended regex $2 (read whole first: under pipefail a
# `grep -q` that stops reading early could fail the pipeline).
on_screen() { grep -qiE "$2" <<< "$(c capture -t "$1" 2>/dev/null)"; }
row() { rl_row "$(rl_pane "$1")" | cut -d' ' -f2; }
# Starts the CLI's TUI in session $1 with prompt $2.
start() {
  rm -f "$D/project/marker.txt"
  # Hermes takes no prompt on its TUI command line: typed below.
  mapfile -t A < <("$R" cmd "$CLI" tui "$2" 2>/dev/null)
  c new -d -s "$1" -x 160 -y 45 -c "$D/project" -- timeout --foreground 200 "${A[@]}" || return 1
  local greet=""
  case $CLI in hermes) greet="Welcome to Hermes" ;; kimi) greet="Welcome to Kimi" ;; esac
  if [ -n "$greet" ]; then
    for _ in $(seq 150); do on_screen "$1" "$greet" && break; sleep 0.2; done
    sleep 1; c send-keys -t "$1" "$2"; sleep 0.5; c send-keys -t "$1" Enter
  fi
}
wait_pending() { # id of the request calyx holds for session $1, within 60 s
  local id=""
  for _ in $(seq 300); do
    id=$(pending_id); [ -n "$id" ] && break
    # Codex may ask to trust the directory on first start: accept.
    on_screen "$1" "trust this|Do you trust" && c send-keys -t "$1" Enter
    sleep 0.2
  done
  echo "$id"
}
wait_marker() { for _ in $(seq $((${1:-20} * 5))); do [ -f "$D/project/marker.txt" ] && return 0; sleep 0.2; done; return 1; }
wait_fake() { for _ in $(seq 100); do grep -q -- "$1" "$D/fake.jsonl" 2>/dev/null && return 0; sleep 0.2; done; return 1; }
wait_screen() { for _ in $(seq $((${3:-30} * 5))); do on_screen "$1" "$2" && return 0; sleep 0.2; done; return 1; }
wait_row() { for _ in $(seq 100); do [ "$(row "$1")" = "$2" ] && return 0; sleep 0.2; done; return 1; }
PERM="SCENARIO:perm write marker"
[ "$CLI" = hermes ] && PERM="SCENARIO:danger write marker"
# The CLI's own permission dialog (Gemini's confirmation, Hermes's dangerous-command prompt).
DIALOG="Allow execution"
[ "$CLI" = hermes ] && DIALOG="Dangerous Command"
[ "$CLI" = kimi ] && DIALOG="requesting approval"
# The row while the CLI's own dialog is open: blocked, except for Kimi, whose approval panel
# fires no hook (kimi-cli 1.52.0 has no PermissionRequest or Notification for it).
AT_DIALOG=blocked
[ "$CLI" = kimi ] && AT_DIALOG=working
# Gemini, Hermes and Kimi hold nothing unless the user opted in.
GATE_ON=""
case $CLI in gemini|hermes|kimi) GATE_ON="[approvals]
deny_gates = [\"$CLI\"]" ;; esac

server "" || { echo "STEP all FAIL calyx server did not start"; bye; exit 1; }
c setup --yes --agent "$KIND" > "$D/setup.out" 2>&1 || { echo "STEP all FAIL calyx setup: $(tail -n 3 "$D/setup.out")"; bye; exit 1; }

step_allow() {
  start s-allow "$PERM" || return 1
  local id; id=$(wait_pending s-allow)
  [ -n "$id" ] || { echo "no approval request reached calyx"; dump s-allow; return 1; }
  c approvals --json --pending > "$D/pending.json"
  grep -q marker "$D/pending.json" || { echo "the request does not show the real command"; return 1; }
  if [ "$CLI" = claude ]; then
    # A real key in a real client: calyx attached in a tmux pane, `y` typed into it.
    tm new-session -d -x 160 -y 45 "$CALYX attach -t s-allow"
    wait_tm "approval" || { echo "the attached client shows no approval panel"; tm capture-pane -p >> "$D/steps.log"; return 1; }
    tm send-keys y
  else
    c approve "$id" >/dev/null || { echo "calyx approve $id failed"; return 1; }
  fi
  wait_marker 30 || { echo "approved, but the command did not run"; dump s-allow; return 1; }
  [ "$(recent_of "$id")" = "allow by human" ] || { echo "recorded as $(recent_of "$id")"; return 1; }
  c kill -t s-allow >/dev/null 2>&1; tm kill-server 2>/dev/null; true
}
wait_tm() { for _ in $(seq 100); do grep -q "$1" <<< "$(tm capture-pane -p 2>/dev/null)" && return 0; sleep 0.2; done; return 1; }

step_deny() {
  local msg="calyx-e2e-denied-$CLI: use the staging db"
  [ -n "$GATE_ON" ] && { server "$GATE_ON" || return 1; }
  start s-deny "$PERM" || return 1
  local id; id=$(wait_pending s-deny)
  [ -n "$id" ] || { echo "no approval request reached calyx"; dump s-deny; return 1; }
  c deny "$id" -m "$msg" >/dev/null || { echo "calyx deny $id failed"; return 1; }
  wait_fake "calyx-e2e-denied-$CLI" || { echo "denied, but the message did not reach the model"; dump s-deny; return 1; }
  [ ! -f "$D/project/marker.txt" ] || { echo "denied, but the command ran"; return 1; }
  c kill -t s-deny >/dev/null 2>&1; true
}

step_plain-deny() { # denied with no message: calyx's default reason is what the model gets
  local reason="Denied by the user in calyx."
  [ -n "$GATE_ON" ] && { server "$GATE_ON" || return 1; }
  local before; before=$(grep -cF -- "$reason" "$D/fake.jsonl" 2>/dev/null)
  start s-plain-deny "$PERM" || return 1
  local id; id=$(wait_pending s-plain-deny)
  [ -n "$id" ] || { echo "no approval request reached calyx"; dump s-plain-deny; return 1; }
  c deny "$id" >/dev/null || { echo "calyx deny $id failed"; return 1; }
  local got=no
  for _ in $(seq 100); do
    [ "$(grep -cF -- "$reason" "$D/fake.jsonl" 2>/dev/null)" -gt "${before:-0}" ] && { got=yes; break; }
    sleep 0.2
  done
  [ $got = yes ] || { echo "denied, but the model never got calyx's reason ($reason)"; dump s-plain-deny; return 1; }
  [ ! -f "$D/project/marker.txt" ] || { echo "denied, but the command ran"; return 1; }
  [ "$(recent_of "$id")" = "deny by human" ] || { echo "recorded as $(recent_of "$id")"; return 1; }
  # What the CLI passed to the model, for the log line (the tool result holding the reason).
  echo "the model got: $(python3 - "$D/fake.jsonl" "$reason" <<'PY'
import json, sys
def texts(v):
    if isinstance(v, str):
        try:  # the fake logs some tool results as JSON text
            inner = json.loads(v)
        except ValueError:
            inner = None
        if isinstance(inner, (list, dict, str)) and inner != v:
            yield from texts(inner)
        else:
            yield v
    elif isinstance(v, list):
        for x in v:
            yield from texts(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from texts(x)
for line in reversed(open(sys.argv[1]).read().splitlines()):
    if sys.argv[2] in line:
        got = [t for t in texts(json.loads(line).get("tool_result")) if sys.argv[2] in t]
        print(json.dumps(got[0][:160]) if got else "the reason, elsewhere in the request than the tool result")
        break
PY
)"
  c kill -t s-plain-deny >/dev/null 2>&1; true
}

step_always() {
  start s-always "$PERM" || return 1
  local id; id=$(wait_pending s-always)
  [ -n "$id" ] || { echo "no approval request reached calyx"; dump s-always; return 1; }
  tm new-session -d -x 160 -y 45 "$CALYX attach -t s-always"
  wait_tm "approval" || { echo "the attached client shows no approval panel"; return 1; }
  # calyx's rule: always this tool in this pane. Claude Code's only suggestion here
  # (addDirectories for the session) does not stop 2.1.197 asking for the same command again.
  tm send-keys a
  wait_marker 30 || { echo "allowed always, but the command did not run"; dump s-always; return 1; }
  [ "$(recent_of "$id")" = "allow (always) by human" ] || { echo "recorded as $(recent_of "$id")"; return 1; }
  tm kill-server 2>/dev/null
  sleep 2; rm -f "$D/project/marker.txt"
  # The same call again, in the same session: the human is not asked (Claude: calyx's rule
  # answers its PermissionRequest at once; OpenCode: its own "always" does not even ask).
  c send-keys -t s-always "$PERM again"; sleep 0.5; c send-keys -t s-always Enter
  wait_marker 30 || { echo "the second identical call did not run"; dump s-always; return 1; }
  [ -z "$(pending_id)" ] || { echo "the second identical call was asked again"; dump s-always; return 1; }
  local last; last=$(c approvals --json | python3 -c 'import json,sys; r=json.load(sys.stdin)["recent"]; print(r[-1]["state"] + " by " + r[-1]["by"])')
  case $CLI in
    opencode) [ "$last" = "allow (always) by human" ] || { echo "OpenCode asked calyx again: $last"; return 1; } ;;
    *) [ "$last" = "allow by rule" ] || { echo "the second call was not answered by the rule: $last"; return 1; } ;;
  esac
  c kill -t s-always >/dev/null 2>&1; true
}

step_pane() { # answered in Claude's own dialog while calyx holds the hook
  start s-pane "$PERM" || return 1
  local id; id=$(wait_pending s-pane)
  [ -n "$id" ] || { echo "no approval request reached calyx"; dump s-pane; return 1; }
  wait_screen s-pane "Do you want to proceed" 30 || { echo "Claude shows no dialog of its own while calyx holds the hook"; dump s-pane; return 1; }
  c send-keys -t s-pane Enter
  wait_marker 30 || { echo "answered in the pane, but the command did not run"; dump s-pane; return 1; }
  for _ in $(seq 15); do [ -z "$(pending_id)" ] && break; sleep 0.2; done
  [ -z "$(pending_id)" ] || { echo "the request stays in calyx's queue after the pane answered"; dump s-pane; ps -eo pid,ppid,stat,args | grep -E "calyx|claude" >> "$D/steps.log"; return 1; }
  [ "$(recent_of "$id")" = "answered in the CLI's own dialog by withdrawn" ] || { echo "recorded as $(recent_of "$id")"; return 1; }
  # A late answer from calyx finds nothing to answer.
  c approve "$id" >/dev/null 2>&1 && { echo "calyx answered a request the pane had answered"; return 1; }
  c kill -t s-pane >/dev/null 2>&1; true
}

step_dialog() { # Gemini/Hermes without the opt-in: the CLI asks itself, calyx shows it blocked
  server "" || return 1
  start s-dialog "$PERM" || return 1
  wait_screen s-dialog "$DIALOG" 40 || { echo "no dialog of the CLI's own"; dump s-dialog; return 1; }
  wait_row s-dialog "$AT_DIALOG" || { echo "row is $(row s-dialog), not $AT_DIALOG, while the CLI's dialog is open"; dump s-dialog; return 1; }
  [ -z "$(pending_id)" ] || { echo "calyx held a request without the opt-in"; return 1; }
  c kill -t s-dialog >/dev/null 2>&1; true
}

step_step() { # Gemini/Hermes opted in: approve steps aside, the CLI's own dialog opens
  server "$GATE_ON" || return 1
  start s-step "$PERM" || return 1
  local id; id=$(wait_pending s-step)
  [ -n "$id" ] || { echo "no approval request reached calyx"; dump s-step; return 1; }
  [ ! -f "$D/project/marker.txt" ] || { echo "the command ran while calyx held it"; return 1; }
  c approve "$id" >/dev/null || { echo "calyx approve $id failed"; return 1; }
  wait_screen s-step "$DIALOG" 40 || { echo "no dialog of the CLI's own after stepping aside"; dump s-step; return 1; }
  [ ! -f "$D/project/marker.txt" ] || { echo "the command ran before anyone answered the CLI's dialog"; return 1; }
  wait_row s-step "$AT_DIALOG" || { echo "row is $(row s-step), not $AT_DIALOG, at the CLI's dialog"; dump s-step; return 1; }
  [ "$(recent_of "$id")" = "step aside (the CLI decides) by human" ] || { echo "recorded as $(recent_of "$id")"; return 1; }
  # Answered in the pane (the dialog's first choice allows once), the command runs.
  c send-keys -t s-step Enter
  wait_marker 30 || { echo "answered in the CLI's dialog, but the command did not run"; dump s-step; return 1; }
  c kill -t s-step >/dev/null 2>&1; true
}

for s in $STEPS; do
  start_t=$(date +%s)
  "step_$s" > "$D/step-$s.out" 2>&1; rc=$?
  # Whatever happened, the step's pane goes (its held requests are withdrawn with it).
  c kill -t "s-$s" >/dev/null 2>&1; tm kill-server 2>/dev/null
  if [ $rc -eq 0 ]; then say "$s" "PASS ($(( $(date +%s) - start_t )) s$(sed -n 's/^the model got: /; the model got: /p' "$D/step-$s.out" | tail -n 1))"
  else say "$s" "FAIL $(tail -n 3 "$D/step-$s.out" | tr '\n' ' ')"; fi
done
bye
INNER

for cli in ${*:-claude codex opencode gemini pi copilot hermes kimi}; do
  [ -n "${KIND[$cli]:-}" ] || { echo "$RL_NAME $cli: SKIP: not a CLI the harness installs"; continue; }
  t0=$SECONDS
  if ! rl_install "$cli" "$T/install-$cli.log"; then
    echo "$RL_NAME $cli: SKIP: install failed: $(tail -n 2 "$T/install-$cli.log" | tr '\n' ' ')"
    continue
  fi
  D=$T/$cli; mkdir -p "$D/run" && chmod 700 "$D/run"
  "$R" prepare "$cli" "$D/home" "$D/project" "${PORT[$cli]}" > "$D/env.sh"
  out=$(ROOT=$ROOT R=$R CALYX=$CALYX D=$D P=${PORT[$cli]} CLI=$cli KIND=${KIND[$cli]} \
        STEPS="${REALCLI_STEPS:-${STEPS[$cli]}}" timeout 300 "$R" netns -- bash "$D/../inner.sh" 2>&1)
  for s in ${REALCLI_STEPS:-${STEPS[$cli]}}; do
    line=$(echo "$out" | grep "^STEP $s " | head -n 1 | cut -d' ' -f3-)
    [ -n "$line" ] || line=$(echo "$out" | grep "^STEP all " | head -n 1 | cut -d' ' -f3-)
    [ -n "$line" ] || line="FAIL no result (timed out?): $(echo "$out" | tail -n 3 | tr '\n' ' ')"
    case $line in PASS*) ;; *) failed=1 ;; esac
    echo "$RL_NAME $cli $s: $line"
    [ -z "${REALCLI_RESULTS:-}" ] || echo "$cli approvals-$s ${line%%[ (]*}" >> "$REALCLI_RESULTS"
  done
  if [ -n "${SKIPS[$cli]:-}" ] && [ -z "${REALCLI_STEPS:-}" ]; then
    echo "$RL_NAME $cli ${SKIPS[$cli]%%:*}: SKIP: ${SKIPS[$cli]#*:}"
    [ -z "${REALCLI_RESULTS:-}" ] || echo "$cli approvals-${SKIPS[$cli]%%:*} SKIP" >> "$REALCLI_RESULTS"
  fi
  python3 "$ROOT/tests/realcli/save_payloads.py" --source tests/realcli/approvals.sh "$cli" \
    "$("$R" version "$cli")" "$D" "$ROOT/fixtures/payloads" | sed "s/^realcli /$RL_NAME /"
  rl_time "$cli" $((SECONDS - t0))
  echo "$RL_NAME $cli: $((SECONDS - t0)) s"
done
rl_finish "$failed"
exit "$failed"
