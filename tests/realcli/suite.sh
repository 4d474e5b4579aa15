#!/usr/bin/env bash
# The real-CLI suite (issue 7): every CLI ../shared/realcli installs runs in its interactive TUI
# inside a calyx pane, offline against its fake model, with the hooks and MCP entry that
# `calyx setup` itself wrote into a throwaway HOME. Per CLI, in one network namespace:
#   setup      `calyx setup --yes --agent KIND` succeeds;
#   mcp-list   the CLI's own MCP listing shows calyx-ipc (pi: no MCP client);
#   prompt     a plain prompt (SCENARIO:plain): the pane's agent row goes working, then idle;
#   subagent   SCENARIO:subagent: a child row appears under the agent and retires (CLIs with one);
#   mcp        SCENARIO:mcp:pane_list: the CLI calls calyx-ipc's pane_list and calyx's answer
#              reaches the model (the fake model's request log shows it);
#   done       quitting the CLI (its /exit or /quit) settles the row done, by the signal
#              docs/integrations.md names: the CLI's session-end hook while the pane is still open
#              (the pane outlives the CLI), or the pane's exit for a CLI with no such event;
#   uninstall  `calyx setup --uninstall`: `CLI --version` runs, calyx-ipc is gone from its MCP
#              listing, and no file setup wrote still names calyx;
#   uninstall-run  then the CLI's TUI starts in a calyx pane, a plain prompt's answer from the
#              model shows, and no hook payload reaches calyx (no agent row).
# Approvals (allow / deny / message / always) are tests/realcli/approvals.sh, run after this.
# Permission dialogs met on the way are answered from calyx (`calyx approve`) where calyx holds
# the gate, and in the pane (Enter) where the CLI's own dialog is the only place to answer.
#
# Hook payloads the server received whose shape (event, key paths and types) fixtures/payloads/
# does not cover yet are saved, with neutral paths, into fixtures/payloads/new/ (save_payloads.py;
# the unit tests require calyx to read an event from every file there).
#
# Usage: tests/realcli/suite.sh [CLI...]   (after `cargo build`; CALYX_BIN overrides the binary;
#        REALCLI_RESULTS=FILE also writes "cli step RESULT" lines there, for scripts/realcli-drift.sh)
# One line per CLI per step (PASS, FAIL or SKIP: why), then "N passed, M failed"; exits 1 if a CLI
# that installed failed a step. A CLI that cannot be installed is a SKIP line, never silent.
# Logs (/tmp/calyx-realcli.*/CLI/) are removed when all passed, unless REALCLI_KEEP=1.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"

STEPS="setup mcp-list prompt subagent mcp done uninstall uninstall-run"
declare -A KIND=([claude]=claude-code [codex]=codex [opencode]=opencode [gemini]=gemini [pi]=pi
                 [copilot]=copilot [hermes]=hermes [kimi]=kimi)
# What `calyx setup` says an accepting CLI loaded, for the CLIs it asks (src/setup/cli_check/).
declare -A CHECKED=([kimi]='loaded config.toml and mcp.json' [codex]='loaded config.toml'
                    [claude]='loaded .claude.json' [gemini]='loaded settings.json'
                    [hermes]='loaded config.yaml' [opencode]='loaded opencode.json'
                    [copilot]='loaded mcp-config.json')
declare -A PORT=([claude]=18401 [codex]=18402 [opencode]=18403 [gemini]=18404 [pi]=18405
                 [copilot]=18406 [hermes]=18407 [kimi]=18408)
declare -A QUIT=([claude]=/exit [codex]=/exit [opencode]=/exit [gemini]=/quit [pi]=/quit
                 [copilot]=/exit [hermes]=/quit [kimi]=/exit)
# CLIs whose TUI takes no prompt on its command line: it is typed once this greeting shows.
declare -A GREET=([hermes]='Welcome to Hermes' [kimi]='Welcome to Kimi')
# What settles the row done when the CLI quits (docs/integrations.md): the hook event its quit
# fires, or `pane` (the pane's exit) for a CLI without a session-end event, with the reason.
declare -A DONE_BY=([claude]=SessionEnd [codex]=SessionEnd [opencode]=pane [gemini]=SessionEnd
                    [pi]=session_shutdown [copilot]=sessionEnd [hermes]=on_session_finalize [kimi]=SessionEnd)
declare -A NO_END=([opencode]="OpenCode 1.18.33 has no session-end event: no plugin hook or bus event fires when its TUI quits")
# The pane runs the CLI under HOLD: when the CLI exits, HOLD prints EXITED and keeps the pane
# open until a `q` is typed, so the suite can tell a hook that settled the row from the pane's exit.
EXITED="[realcli: the CLI exited]"
HOLD='"$@"; rc=$?; printf "\n%s (status %s)\n" "'"$EXITED"'" "$rc"; while IFS= read -r -s -n 1 k; do [ "$k" = q ] && break; done'
# The CLI's own permission dialog, answered in the pane (Enter) only when calyx holds nothing for
# it: Gemini's and Hermes' gates cannot allow from a hook, OpenCode's is answered by calyx's plugin
# when calyx has a decision. Kimi's approval panel asks before every shell command unless calyx
# holds its PreToolUse gate (opt-in, off here), and its hook cannot allow past it.
declare -A DIALOG=([gemini]='Allow execution' [hermes]='Dangerous Command' [opencode]='Permission required'
                   [kimi]='requesting approval')
# Why a step cannot run for a CLI (a SKIP line says so).
declare -A NO_SUBAGENT=(
  [gemini]="Gemini CLI has no subagent tool the model can call, and no subagent hook events"
  [pi]="pi has no subagents")
declare -A NO_MCP=([pi]="pi has no MCP client (calyx gives pi an extension with a 'calyx' dispatcher tool instead)")

# The CLI's own MCP listing (runs in the project dir).
mcp_list() { (cd "$D/project" && timeout 90 "$CLI" mcp list < /dev/null 2>&1); }

# ----------------------------------------------------------------------------------- inside
report() { # STEP PASS|FAIL|SKIP DETAIL
  echo "$1 $2 $3" >> "$D/results"
  if [ "$2" = SKIP ]; then echo "realcli $CLI $1: SKIP: $3"; else echo "realcli $CLI $1: $2 ($3)"; fi
}

# One round of answering whatever the turn waits on: calyx's queue first (as a user would with
# `calyx approve`), then the CLI's own dialog when calyx held nothing for 3 rounds in a row.
DIALOG_SEEN=0 APPROVED=0 IN_PANE=0
pump() {
  local ids; ids=$(rl_pending_ids)
  if [ -n "$ids" ]; then
    for id in $ids; do c approve "$id" >/dev/null 2>&1 && APPROVED=$((APPROVED + 1)); done
    DIALOG_SEEN=0; return
  fi
  local pattern=${DIALOG[$CLI]:-}
  if [ -n "$pattern" ] && c capture -t agent 2>/dev/null | grep -q "$pattern"; then
    DIALOG_SEEN=$((DIALOG_SEEN + 1))
    if [ $DIALOG_SEEN -ge 3 ]; then c send-keys -t agent Enter; IN_PANE=$((IN_PANE + 1)); DIALOG_SEEN=0; fi
  else DIALOG_SEEN=0; fi
}

row_json() { c agents --json 2>/dev/null; }
# Whether the agent pane's screen shows the fixed string $1 (read whole first: see pipefail).
pane_has() { grep -qF -- "$1" <<< "$(c capture -t agent 2>/dev/null)"; }
# From history lines on stdin: the event (or `<pane exit>`) that first made the row done.
# From history lines on stdin: "event -> state" pairs, comma-separated ("none" without any).
events_of() {
  local e; e=$(sed -n 's/^  - *[0-9]*[smhd] \(<[^>]*>\|[^ ]*\).* -> \([a-z]*\):.*/\1 -> \2/p' | uniq | tr '\n' ',' | sed 's/,$//; s/,/, /g')
  echo "${e:-none}"
}
settled_by() { sed -n 's/^  - *[0-9]*[smhd] \(<[^>]*>\|[^ ]*\).* -> done:.*/\1/p' | head -n 1; }
row_field() { # PANE FIELD -> the row's field ("none" without a row)
  row_json | python3 -c '
import json, sys
rows = [r for r in json.load(sys.stdin)["agents"] if r.get("pane") == sys.argv[1]]
v = rows[0].get(sys.argv[2]) if rows else "none"
print(len(v) if isinstance(v, list) else v)' "$1" "$2" 2>/dev/null || echo none
}

# Types a prompt into the agent's TUI: the text, then Enter on its own (ink and ratatui TUIs take
# a fast "text + Enter" burst as a paste).
type_prompt() { c send-keys -t agent "$1"; sleep 0.5; c send-keys -t agent Enter; }

# The history lines of `calyx agents explain` recorded since the last `mark` (the row counts
# them in `events_recorded`; explain keeps the last 20).
history_since_mark() {
  local n; n=$(row_field "$PANE" events_recorded); [[ "$n" =~ ^[0-9]+$ ]] || n=$MARK
  [ $((n - MARK)) -gt 0 ] || return 0
  c agents explain "$PANE" 2>/dev/null | grep '^  - ' | tail -n "$((n - MARK))"
}
# The states the row passed through since the last `mark` (from its own history, so a turn
# faster than polling is seen too).
states_since_mark() { history_since_mark | sed -n 's/^  - .* -> \([a-z]*\):.*/\1/p' | uniq | tr '\n' ' '; }
mark() { MARK=$(row_field "$PANE" events_recorded); [[ "$MARK" =~ ^[0-9]+$ ]] || MARK=0; }

# Whether the row's history since the last `mark` went working and then ended idle.
turn_ended() { [[ "$(states_since_mark)" =~ working.*idle\ $ ]]; }

# Waits up to SECONDS for the turn to end: the row went working and is idle again.
wait_turn() { # SECONDS
  local i s seen=""
  for i in $(seq $(($1 * 5))); do
    pump
    s=$(row_field "$PANE" state)
    case " $seen " in *" $s "*) ;; *) seen="$seen $s" ;; esac
    if [ "$s" = idle ] && turn_ended; then
      TURN_STATES="${seen# }"; return 0
    fi
    sleep 0.2
  done
  TURN_STATES="${seen# }"; return 1
}

inner() {
  . "$D/env.sh"
  rl_calyx_env "$D/run"
  export CALYX_CAPTURE_PAYLOADS=$D/payloads.jsonl
  # remain_on_exit keeps the pane, and so its agent row, after the CLI exits.
  local cfg=${XDG_CONFIG_HOME:-$HOME/.config}/calyx
  mkdir -p "$cfg" && echo 'remain_on_exit = true' > "$cfg/config.toml"
  local kind=${KIND[$CLI]} P=${PORT[$CLI]}
  "$R" fake "$CLI" "$P" "$D/fake.jsonl" > "$D/fake.out" 2>&1 & FAKE=$!
  trap 'c kill-server >/dev/null 2>&1; kill $FAKE 2>/dev/null' EXIT
  "$R" waitport "$P" 20 || { report setup FAIL "the fake model did not start: $(tail -n 3 "$D/fake.out")"; return; }
  c new -d -s setup -x 160 -y 45 -- sleep 900 || { report setup FAIL "the calyx server did not start"; return; }

  # 1. setup (the home first saved, to compare after the uninstall)
  (cd "$HOME/.." && tar --exclude=node_modules --exclude=.cache -cf "$D/home-before.tar" "$(basename "$HOME")")
  mkdir -p "$D/before" && tar -xf "$D/home-before.tar" -C "$D/before"
  if timeout 60 "$CALYX" setup --yes --agent "$kind" > "$D/setup.out" 2>&1; then
    # Where calyx can ask the CLI (src/setup/cli_check/), setup must have had the real CLI load
    # what it wrote, and the CLI must have taken it.
    if [ -n "${CHECKED[$CLI]:-}" ] && ! grep -q "checked: .*${CHECKED[$CLI]}" "$D/setup.out"; then
      report setup FAIL "setup did not have the real $CLI load the config: $(grep -iE 'checked|warning|rejects' "$D/setup.out" | grep -v '^[-+@ ]' | head -n 3 | tr '\n' ' ')"
      return
    fi
    report setup PASS "$(grep -c '^+++ ' "$D/setup.out") file(s): $(grep '^+++ ' "$D/setup.out" | sed 's|^+++ [ab]/||; s|^+++ ||' | sed "s|^$HOME/|~/|" | tr '\n' ' ')"
  else
    report setup FAIL "exit $?: $(tail -n 5 "$D/setup.out" | tr '\n' ' ')"
    return
  fi

  # 2. the CLI's own MCP listing shows calyx-ipc, connected
  if [ -n "${NO_MCP[$CLI]:-}" ]; then
    report mcp-list SKIP "${NO_MCP[$CLI]}"
  else
    mcp_list > "$D/mcp-list.out"; local rc=$?
    local line; line=$(grep -m1 'calyx-ipc' "$D/mcp-list.out" | sed 's/\x1b\[[0-9;]*m//g' | tr -s ' ')
    if [ $rc -ne 0 ]; then report mcp-list FAIL "'$CLI mcp list' exit $rc: $(tail -n 3 "$D/mcp-list.out" | tr '\n' ' ')"
    elif [ -z "$line" ]; then report mcp-list FAIL "no calyx-ipc in '$CLI mcp list': $(head -n 5 "$D/mcp-list.out" | tr '\n' ' ')"
    elif [ "$CLI" = claude ] && ! grep -q 'Connected' <<< "$line"; then report mcp-list FAIL "calyx-ipc not connected: $line"
    elif grep -qiE 'fail|error|disconnected' <<< "$line"; then report mcp-list FAIL "$line"
    else report mcp-list PASS "$line"
    fi
  fi

  # 3. a plain prompt in the TUI: working, then idle
  local first="SCENARIO:plain say hi"
  "$R" cmd "$CLI" tui "$first" > "$D/argv" 2>/dev/null || { report prompt FAIL "realcli.sh cmd failed"; return; }
  mapfile -t A < "$D/argv"
  # `cd` first: a calyx pane inherits the client's $PWD even with -c (docs/realcli.md).
  if ! (cd "$D/project" && c new -d -s agent -x 160 -y 45 -c "$D/project" -- bash -c "$HOLD" hold timeout --foreground 600 "${A[@]}"); then
    report prompt FAIL "calyx new failed"; return
  fi
  PANE=$(rl_pane agent); MARK=0
  if [ -n "${GREET[$CLI]:-}" ]; then
    # Hermes' and Kimi's TUIs take no prompt argument: type it once they greet.
    local i; for i in $(seq 300); do grep -q "${GREET[$CLI]}" <<< "$(c capture -t agent 2>/dev/null)" && break; sleep 0.2; done
    sleep 1; type_prompt "$first"
  fi
  if wait_turn 120; then
    report prompt PASS "pane $PANE, polled: ${TURN_STATES// / -> }; history: $(states_since_mark | sed 's/ $//; s/ / -> /g')"
  else
    report prompt FAIL "row did not go working then idle (polled: $TURN_STATES; history: $(states_since_mark); pane: $(c capture -t agent 2>/dev/null | grep -v '^\s*$' | tail -n 4 | tr '\n' ' '))"
    c capture -t agent > "$D/pane-prompt.txt" 2>&1
  fi

  # 4. a subagent: a child row appears and retires
  if [ -n "${NO_SUBAGENT[$CLI]:-}" ]; then
    report subagent SKIP "${NO_SUBAGENT[$CLI]}"
  else
    mark; type_prompt "SCENARIO:subagent delegate: write marker"
    local max=0 n i ok=no
    for i in $(seq 600); do
      pump
      n=$(row_field "$PANE" subagents); [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -gt "$max" ] && max=$n
      if [ "$(row_field "$PANE" state)" = idle ] && turn_ended; then ok=yes; break; fi
      sleep 0.2
    done
    # A subagent may outlive its parent's turn (Claude Code 2.1.332 runs Agent in the
    # background: the main Stop comes first): give it time to finish and retire.
    local left
    for i in $(seq 300); do
      left=$(row_field "$PANE" subagents); [ "$left" = 0 ] && break
      pump; sleep 0.2
    done
    local hist; hist=$(history_since_mark)
    local started stopped
    started=$(grep -c '(SubagentStart)' <<< "$hist"); stopped=$(grep -c '(SubagentStop)' <<< "$hist")
    if [ $ok != yes ]; then report subagent FAIL "the turn did not end (state $(row_field "$PANE" state))"
    elif [ "$started" -eq 0 ] && [ "$max" -eq 0 ]; then report subagent FAIL "no child row appeared: $(grep '^  - ' <<< "$hist" | sed 's/^ *- *[0-9]*[smh] //; s/ ->.*//' | tr '\n' ' ')"
    elif [ "$left" != 0 ]; then report subagent FAIL "$left child row(s) still listed 60 s after the turn"
    else report subagent PASS "child rows seen polling: $max; SubagentStart x$started, SubagentStop x$stopped in the history; all retired"
    fi
  fi

  # 5. an MCP call through the entry setup wrote reaches calyx, and the answer reaches the model
  if [ -n "${NO_MCP[$CLI]:-}" ]; then
    report mcp SKIP "${NO_MCP[$CLI]}"
  else
    mark; type_prompt "SCENARIO:mcp:pane_list list the panes"
    local i got=no
    for i in $(seq 600); do
      pump
      grep -qE 'window_name|[0-9] pane\(s\)' "$D/fake.jsonl" 2>/dev/null && { got=yes; break; }
      sleep 0.2
    done
    if [ $got = yes ]; then
      wait_turn 30 >/dev/null
      report mcp PASS "the model received calyx's pane_list answer (tool $(python3 - "$D/fake.jsonl" <<'PY'
import json, sys
names = set()
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    for c in r.get("called") or []:
        if "pane_list" in str(c):
            names.add(str(c))
print(", ".join(sorted(names)) or "?")
PY
))"
    else
      report mcp FAIL "$(grep -q 'pane_list' "$D/fake.jsonl" && echo "pane_list was called but calyx's answer never reached the model" || echo "the model never called pane_list: $(tail -n 1 "$D/fake.jsonl" | head -c 300)")"
    fi
  fi

  # 6. quitting settles the row done, by the signal docs/integrations.md names for this CLI. The
  # pane outlives the CLI (HOLD), so a row that goes done while it is open was settled by a hook;
  # for a CLI without a session-end event the row must stay as it was until the pane exits.
  mark; type_prompt "${QUIT[$CLI]}"
  local i s="" exited=no by open_state=""
  for i in $(seq 150); do
    s=$(row_field "$PANE" state)
    pane_has "$EXITED" && exited=yes
    [ $exited = yes ] && { [ "$s" = done ] || [ "${DONE_BY[$CLI]}" = pane ]; } && break
    # A slash-command menu may take the first Enter as "pick": confirm once more.
    [ "$i" = 15 ] && [ $exited = no ] && c send-keys -t agent Enter
    sleep 0.2
  done
  if [ $exited = yes ] && [ "${DONE_BY[$CLI]}" = pane ]; then
    # Nothing may settle it while the pane is open (a late hook included): 3 s, then end the pane.
    for i in $(seq 15); do s=$(row_field "$PANE" state); [ "$s" = done ] && break; sleep 0.2; done
    if [ "$s" != done ]; then
      open_state="$s, events since the quit: $(history_since_mark | events_of)"
      c send-keys -t agent q
      for i in $(seq 50); do s=$(row_field "$PANE" state); [ "$s" = done ] && break; sleep 0.2; done
    fi
  fi
  by=$(history_since_mark | settled_by)
  local events; events=$(history_since_mark | events_of)
  local want=${DONE_BY[$CLI]}
  if [ $exited = no ]; then
    report done FAIL "the CLI did not exit after ${QUIT[$CLI]} (row $s; pane: $(c capture -t agent 2>/dev/null | grep -v '^\s*$' | tail -n 3 | tr '\n' ' '))"
  elif [ "$s" != done ]; then
    report done FAIL "the CLI exited but the row is $s: $([ "$want" = pane ] && echo "the pane's exit did not settle it" || echo "no $want reached calyx while the pane was open, so only the pane's exit would settle it") (events since: ${events:-none})"
  elif [ "$want" = pane ] && [ "$by" != "<pane exit>" ]; then
    report done FAIL "$by settled the row while the pane was open, but docs/integrations.md says ${CLI} has no session-end event (update DONE_BY and the docs) (events since: $events)"
  elif [ "$want" != pane ] && [ "$by" != "$want" ]; then
    report done FAIL "settled by ${by:-?}, not $want (events since: $events)"
  elif [ "$want" = pane ]; then
    report done PASS "${QUIT[$CLI]}: the CLI exited, the row stayed ${open_state} while the pane was open (${NO_END[$CLI]}); the pane's exit settled it done"
  else
    report done PASS "${QUIT[$CLI]}: the hook event $by settled the row done while the pane was still open (events since: $events)"
  fi
  echo "realcli $CLI answers (info): $APPROVED approved in calyx, $IN_PANE answered in the pane"

  # 7. uninstall: the CLI still starts, calyx-ipc is gone, no file setup wrote names calyx
  c kill -t agent >/dev/null 2>&1
  if ! timeout 60 "$CALYX" setup --uninstall --yes --agent "$kind" > "$D/uninstall.out" 2>&1; then
    report uninstall FAIL "calyx setup --uninstall: $(tail -n 5 "$D/uninstall.out" | tr '\n' ' ')"; return
  fi
  local problems="" f out
  out=$(cd "$D/project" && timeout 60 "$CLI" --version < /dev/null 2>&1) || problems+="'$CLI --version' exit $?: $(tail -n 2 <<< "$out" | tr '\n' ' '); "
  if [ -z "${NO_MCP[$CLI]:-}" ]; then
    mcp_list > "$D/mcp-list-after.out" || problems+="'$CLI mcp list' exit $?: $(tail -n 2 "$D/mcp-list-after.out" | tr '\n' ' '); "
    ! grep -q calyx-ipc "$D/mcp-list-after.out" || problems+="calyx-ipc still listed; "
  fi
  local same=0 differ=""
  while read -r f; do
    local before=$D/before/$(basename "$HOME")/${f#"$HOME"/}
    if [ -e "$f" ]; then
      ! grep -qE "calyx-ipc|$(basename "$CALYX")\"? hook " "$f" || problems+="$f still names calyx; "
      if cmp -s "$f" "$before"; then same=$((same + 1)); else differ+=" ~/${f#"$HOME"/}"; fi
    elif [ -e "$before" ]; then problems+="$f was removed; "
    else same=$((same + 1))
    fi
  done < <(grep '^+++ ' "$D/setup.out" | sed 's|^+++ [ab]/|/|; s|^+++ ||; s|//|/|')
  # Informational: the CLI may rewrite its own files during the turns (Claude's ~/.claude.json).
  local bytes="files setup touched byte-identical to before: $same${differ:+; changed since by the CLI itself:$differ}"
  if [ -z "$problems" ]; then
    report uninstall PASS "$(grep -v WARNING <<< "$out" | head -n 1 | tr -s ' ')$([ -z "${NO_MCP[$CLI]:-}" ] && echo "; '$CLI mcp list' exit 0 without calyx-ipc"); $bytes"
  else
    report uninstall FAIL "$problems"
  fi

  # 8. after the uninstall the CLI still starts a session in its TUI in a calyx pane, a plain
  # prompt's answer arrives from the model, and no hook reaches calyx any more.
  local hooks_before; hooks_before=$(wc -l < "$CALYX_CAPTURE_PAYLOADS" 2>/dev/null || echo 0)
  # A prompt the fake model answers with text only, naming a word of the prompt: "no tool
  # matching 'WORD' among the N offered tools" (SCENARIO:mcp:WORD where no tool matches; the
  # tool-less side requests, e.g. titles, get "done"), so the pane shows this very answer.
  local word="uninstalled$CLI$RANDOM" answer
  local token="SCENARIO:mcp:$word say hello"
  answer="no tool matching '$word'"
  "$R" cmd "$CLI" tui "$token" > "$D/argv-after" 2>/dev/null || { report uninstall-run FAIL "realcli.sh cmd failed"; return; }
  mapfile -t A < "$D/argv-after"
  if ! (cd "$D/project" && c new -d -s after -x 160 -y 45 -c "$D/project" -- bash -c "$HOLD" hold timeout --foreground 300 "${A[@]}"); then
    report uninstall-run FAIL "calyx new failed"; return
  fi
  local after_pane; after_pane=$(rl_pane after)
  if [ -n "${GREET[$CLI]:-}" ]; then
    for i in $(seq 300); do grep -q "${GREET[$CLI]}" <<< "$(c capture -t after 2>/dev/null)" && break; sleep 0.2; done
    sleep 1; c send-keys -t after "$token"; sleep 0.5; c send-keys -t after Enter
  fi
  local asked=no shown=no
  for i in $(seq 450); do
    [ $asked = yes ] || ! grep -qF -- "$answer" "$D/fake.jsonl" 2>/dev/null || asked=yes
    if [ $asked = yes ] && grep -qF -- "$answer" <<< "$(c capture -t after 2>/dev/null)"; then shown=yes; break; fi
    sleep 0.2
  done
  c capture -t after > "$D/pane-after.txt" 2>&1
  c send-keys -t after "${QUIT[$CLI]}"; sleep 0.5; c send-keys -t after Enter
  for i in $(seq 100); do grep -qF -- "$EXITED" <<< "$(c capture -t after 2>/dev/null)" && break; sleep 0.2; done
  local hooks_after; hooks_after=$(wc -l < "$CALYX_CAPTURE_PAYLOADS" 2>/dev/null || echo 0)
  local row_after; row_after=$(rl_row "$after_pane")
  c kill -t after >/dev/null 2>&1
  if [ $asked = no ]; then report uninstall-run FAIL "the CLI never sent the prompt to the model (pane: $(grep -v '^\s*$' "$D/pane-after.txt" | tail -n 4 | tr '\n' ' '))"
  elif [ $shown = no ]; then report uninstall-run FAIL "the model answered but the answer ($answer ...) never showed in the pane (pane: $(grep -v '^\s*$' "$D/pane-after.txt" | tail -n 4 | tr '\n' ' '))"
  elif [ "$hooks_after" != "$hooks_before" ]; then report uninstall-run FAIL "$((hooks_after - hooks_before)) hook payload(s) still reached calyx: $(tail -n "$((hooks_after - hooks_before))" "$CALYX_CAPTURE_PAYLOADS" | cut -c1-160 | tr '\n' ' ')"
  elif [ "$row_after" != none ]; then report uninstall-run FAIL "calyx shows an agent row for the pane: $row_after"
  else report uninstall-run PASS "the TUI started in a calyx pane and showed the model's answer ($answer ...); no hook reached calyx, no agent row"
  fi
}

if [ "${1:-}" = --inner ]; then
  inner
  exit 0
fi

# ---------------------------------------------------------------------------------- outside
rl_init "realcli suite"
START=$SECONDS
CLIS=${*:-claude codex opencode gemini pi copilot hermes kimi}
passed=0 failed=0
for CLI in $CLIS; do
  [ -n "${KIND[$CLI]:-}" ] || { echo "realcli suite: unknown CLI '$CLI'"; failed=$((failed + 1)); continue; }
  D=$T/$CLI; mkdir -p "$D"; t0=$SECONDS
  if ! rl_install "$CLI" "$D/install.log"; then
    for s in $STEPS; do
      echo "realcli $CLI $s: SKIP: not installable: $(tail -n 2 "$D/install.log" | tr '\n' ' ')"
      [ -n "${REALCLI_RESULTS:-}" ] && echo "$CLI $s SKIP" >> "$REALCLI_RESULTS"
    done
    continue
  fi
  "$R" prepare "$CLI" "$D/home" "$D/project" "${PORT[$CLI]}" > "$D/env.sh" ||
    { echo "realcli $CLI: FAIL: realcli.sh prepare failed"; failed=$((failed + 1)); continue; }
  CLI=$CLI D=$D timeout 480 "$R" netns -- bash "$HERE/suite.sh" --inner
  rc=$?
  touch "$D/results"
  for s in $STEPS; do
    st=$(awk -v s="$s" '$1 == s { print $2; exit }' "$D/results")
    case "$st" in
      PASS) passed=$((passed + 1)) ;;
      SKIP) ;;
      FAIL) failed=$((failed + 1)) ;;
      *) failed=$((failed + 1)); st=FAIL
         if [ $rc -ne 0 ]; then echo "realcli $CLI $s: FAIL (not reached: the namespace run exited $rc${rc/#124/, timed out})"
         else echo "realcli $CLI $s: FAIL (not reached: an earlier step failed)"; fi ;;
    esac
    [ -n "${REALCLI_RESULTS:-}" ] && echo "$CLI $s $st" >> "$REALCLI_RESULTS"
  done
  python3 "$HERE/save_payloads.py" --source tests/realcli/suite.sh "$CLI" "$("$R" version "$CLI")" "$D" "$ROOT/fixtures/payloads"
  rl_time "$CLI" $((SECONDS - t0))
  echo "realcli $CLI: $((SECONDS - t0)) s ($CLI $("$R" version "$CLI"))"
done
echo "realcli suite: $((SECONDS - START)) s, $(c --version 2>/dev/null | head -n 1)"
rl_finish "$failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
