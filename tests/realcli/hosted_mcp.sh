#!/usr/bin/env bash
# Issue 16: each real CLI calls a tool of an MCP server calyx hosts, through the `calyx-mcp`
# entry `calyx setup` wrote, and the result reaches the model. Per CLI, in one network namespace
# with its fake model and a calyx server (CALYX_LOG at debug for calyx's hosted route):
#   hosted-call     server-everything (pinned, from npm, the cache the cargo tests use) added as
#                   `ev` over stdio; `calyx setup --yes --agent KIND`; the CLI's TUI in a calyx pane
#                   with `SCENARIO:mcp:ev-echo`: the fake model calls the offered tool named like
#                   `ev-echo`; PASS when calyx's route forwarded that call to `ev` (server.log) and
#                   the model's next request carries the echo result (`Echo: test`);
#   hosted-relist   then a second server-everything is added as `ev2`, which changes the published
#                   set, so calyx sends `notifications/tools/list_changed` to every calyx-mcp
#                   session: does the CLI send `tools/list` again on /mcp-hosted (server.log,
#                   within RELIST_WAIT_S)? Compared with RELISTS below (docs/integrations.md's
#                   column): a change either way FAILs and names both;
#   hosted-new-tool a second prompt, `SCENARIO:mcp:ev2-echo`: does the model get the new tool
#                   (calyx forwards a call to `ev2`) or answer "no tool matching" (the CLI kept its
#                   first list)? Compared with NEW_TOOL below, the same way.
# pi has no MCP client; its extension's `calyx_mcp` tool takes the published name as an
# argument, which the fake model cannot choose (it fills a required string with "test"): SKIP
# lines say so. Permission dialogs on the way are answered as suite.sh answers them.
# Usage: tests/realcli/hosted_mcp.sh [CLI...]   (after `cargo build`; CALYX_BIN, REALCLI_KEEP,
#        REALCLI_RESULTS as for suite.sh; CALYX_MCP_TEST_SERVERS overrides the npm cache.)
# One line per CLI per step, then "N passed, M failed"; exits 1 if a CLI that installed failed.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh"

STEPS="hosted-call hosted-relist hosted-new-tool"
EVERYTHING=@modelcontextprotocol/server-everything@2026.8.31
declare -A KIND=([claude]=claude-code [codex]=codex [opencode]=opencode [gemini]=gemini [pi]=pi
                 [copilot]=copilot [hermes]=hermes [kimi]=kimi)
declare -A PORT=([claude]=18401 [codex]=18402 [opencode]=18403 [gemini]=18404 [pi]=18405
                 [copilot]=18406 [hermes]=18407 [kimi]=18408)
declare -A GREET=([hermes]='Welcome to Hermes' [kimi]='Welcome to Kimi')
declare -A DIALOG=([gemini]='Allow execution' [hermes]='Dangerous Command' [opencode]='Permission required'
                   [kimi]='requesting approval')
# How the CLI shows the published `ev-echo` to its model when it renames it: Codex and Hermes
# turn the `-` of an MCP tool name into `_` (Codex: `ev_echo` in namespace `mcp__calyx_mcp`;
# Hermes: `mcp__calyx_mcp__ev_echo`). The scenario names the tool as the model sees it.
declare -A DASH=([codex]=_ [hermes]=_)
declare -A NO_MCP=([pi]="pi has no MCP client; its extension's calyx_mcp tool takes the published name as its 'tool' argument, which the fake model cannot pick (it fills a required string with 'test')")
# What each pinned CLI does after `tools/list_changed` (the *hosted MCP* column of
# docs/integrations.md's table of verified CLIs): `yes` it sends tools/list again, `no` it does not.
declare -A RELISTS=([claude]=yes [codex]=no [opencode]=yes [gemini]=yes [copilot]=no [hermes]=yes
                   [kimi]=no)
# Whether the CLI offers a tool published after its first listing at the next prompt.
declare -A NEW_TOOL=([claude]=yes [codex]=no [opencode]=yes [gemini]=yes [copilot]=yes [hermes]=yes
                    [kimi]=no)
RELIST_WAIT_S=6

# ----------------------------------------------------------------------------------- inside
report() { # STEP PASS|FAIL|SKIP DETAIL
  echo "$1 $2 $3" >> "$D/results"
  if [ "$2" = SKIP ]; then echo "realcli hosted-mcp $CLI $1: SKIP: $3"; else echo "realcli hosted-mcp $CLI $1: $2 ($3)"; fi
}
LOG() { cat "$STATE/server.log.1" "$STATE/server.log" 2>/dev/null; }
# Lines of server.log written after byte offset $1 (server.log is not rotated in a run this short).
log_since() { tail -c +"$(($1 + 1))" "$STATE/server.log" 2>/dev/null; }
log_size() { stat -c %s "$STATE/server.log" 2>/dev/null || echo 0; }
pane_text() { c capture -t agent 2>/dev/null | grep -v '^\s*$' | tail -n 4 | tr '\n' ' '; }

# Answers what a turn waits on: calyx's queue first, the CLI's own dialog after 3 quiet rounds.
DIALOG_SEEN=0
pump() {
  local ids; ids=$(rl_pending_ids)
  if [ -n "$ids" ]; then
    for id in $ids; do c approve "$id" >/dev/null 2>&1; done
    DIALOG_SEEN=0; return
  fi
  local pattern=${DIALOG[$CLI]:-}
  if [ -n "$pattern" ] && grep -q "$pattern" <<< "$(c capture -t agent 2>/dev/null)"; then
    DIALOG_SEEN=$((DIALOG_SEEN + 1))
    [ $DIALOG_SEEN -lt 3 ] || { c send-keys -t agent Enter; DIALOG_SEEN=0; }
  else DIALOG_SEEN=0; fi
}
type_prompt() { c send-keys -t agent "$1"; sleep 0.5; c send-keys -t agent Enter; }

# Waits until the server-list row of ALIAS is ready (up to 90 s: a cold node start).
wait_ready() { # ALIAS
  local state="" deadline=$((SECONDS + 90))
  while [ $SECONDS -lt $deadline ]; do
    state=$(c mcp list --json 2>/dev/null | python3 -c '
import json, sys
v = json.load(sys.stdin)
rows = v.get("servers", v) if isinstance(v, dict) else v
print(next((r["state"] + ": " + r["status"] for r in rows if r.get("alias") == sys.argv[1]), "absent"))' "$1" 2>/dev/null)
    [[ "$state" = ready:* ]] && return 0
    [[ "$state" = failed:* ]] && break
    sleep 0.2
  done
  echo "$state"; return 1
}

# Whether the fake model's log after line $1 has a request whose tool result carries the echo.
# (Each `grep -q` reads a string, not a pipe: with pipefail, a writer cut off by grep -q's early
# exit would turn a match into a failure.)
echo_reached_model() { grep -q 'Echo: test' <<< "$(tail -n +"$(($1 + 1))" "$D/fake.jsonl" 2>/dev/null)"; }
inner() {
  . "$D/env.sh"
  rl_calyx_env "$D/run"
  # calyx's hosted route and announcer at debug, and rmcp's session lines that show a client
  # opening its GET stream (where `tools/list_changed` travels).
  export CALYX_LOG="info,rmcp=warn,calyx::hosted=debug,calyx::mcp::tool_set=debug,rmcp::transport::streamable_http_server::session::local=debug"
  STATE=${XDG_STATE_HOME:-$HOME/.local/state}/calyx
  local P=${PORT[$CLI]} node; node=$(command -v node)
  "$R" fake "$CLI" "$P" "$D/fake.jsonl" > "$D/fake.out" 2>&1 & FAKE=$!
  trap 'c kill-server >/dev/null 2>&1; kill $FAKE 2>/dev/null' EXIT
  "$R" waitport "$P" 20 || { report hosted-call FAIL "the fake model did not start: $(tail -n 3 "$D/fake.out")"; return; }
  c new -d -s setup -x 160 -y 45 -- sleep 900 || { report hosted-call FAIL "the calyx server did not start"; return; }

  # 1. ev hosted, setup, the call
  c mcp add ev -- "$node" "$EV" stdio > "$D/add.out" 2>&1 ||
    { report hosted-call FAIL "calyx mcp add ev: $(tr '\n' ' ' < "$D/add.out")"; return; }
  local state; state=$(wait_ready ev) || { report hosted-call FAIL "ev did not get ready: $state"; return; }
  timeout 120 "$CALYX" setup --yes --agent "${KIND[$CLI]}" > "$D/setup.out" 2>&1 ||
    { report hosted-call FAIL "calyx setup: $(tail -n 5 "$D/setup.out" | tr '\n' ' ')"; return; }
  grep -q 'calyx-mcp' "$D/setup.out" || { report hosted-call FAIL "calyx setup wrote no calyx-mcp entry"; return; }
  local dash=${DASH[$CLI]:--}
  local prompt="SCENARIO:mcp:ev${dash}echo echo something"
  "$R" cmd "$CLI" tui "$prompt" > "$D/argv" 2>/dev/null || { report hosted-call FAIL "realcli.sh cmd failed"; return; }
  mapfile -t A < "$D/argv"
  (cd "$D/project" && c new -d -s agent -x 160 -y 45 -c "$D/project" -- timeout --foreground 300 "${A[@]}") ||
    { report hosted-call FAIL "calyx new failed"; return; }
  if [ -n "${GREET[$CLI]:-}" ]; then
    local until=$((SECONDS + 60))
    while [ $SECONDS -lt $until ] && ! grep -q "${GREET[$CLI]}" <<< "$(c capture -t agent 2>/dev/null)"; do sleep 0.2; done
    sleep 1; type_prompt "$prompt"
  fi
  local got=no deadline=$((SECONDS + 120))
  while [ $SECONDS -lt $deadline ]; do
    pump
    echo_reached_model 0 && { got=yes; break; }
    sleep 0.2
  done
  local forwarded; forwarded=$(LOG | grep 'calyx-mcp: forwarding a call to `ev`' | head -n 1)
  local session; session=$(sed -n 's/.*session=\([^ ]*\).*/\1/p' <<< "$forwarded")
  local tool; tool=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    d = r.get("decision") or []
    if d and d[0] == "tool" and sys.argv[2] in str(d[1]):
        print(d[1]); break' "$D/fake.jsonl" "ev${dash}echo" 2>/dev/null)
  local lists; lists=$(LOG | grep -c 'calyx-mcp: tools/list')
  if [ $got = yes ] && [ -n "$forwarded" ]; then
    report hosted-call PASS "the model called ${tool:-?}; calyx forwarded it to ev (session $session) and the model got 'Echo: test'; $lists tools/list on /mcp-hosted so far"
  elif [ -n "$forwarded" ]; then
    report hosted-call FAIL "calyx forwarded the call to ev but the echo never reached the model (pane: $(pane_text))"; return
  elif [ $got = yes ]; then
    report hosted-call FAIL "the model got an echo but calyx's log has no forwarded call to ev"; return
  else
    report hosted-call FAIL "the model never called ev${dash}echo: $(tail -n 1 "$D/fake.jsonl" 2>/dev/null | head -c 300) (pane: $(pane_text))"; return
  fi

  # 2. the published set changes: does the CLI list again? (First a second for the CLI to
  # finish the turn the echo ended.)
  sleep 1
  local mark; mark=$(log_size)
  c mcp add ev2 -- "$node" "$EV" stdio > "$D/add2.out" 2>&1 ||
    { report hosted-relist FAIL "calyx mcp add ev2: $(tr '\n' ' ' < "$D/add2.out")"; return; }
  state=$(wait_ready ev2) || { report hosted-relist FAIL "ev2 did not get ready: $state"; return; }
  local relist="" same=no
  deadline=$((SECONDS + RELIST_WAIT_S))
  while [ $SECONDS -lt $deadline ]; do
    relist=$(log_since "$mark" | grep 'calyx-mcp: tools/list')
    [ -n "$relist" ] && break
    sleep 0.2
  done
  local observed=no detail="no tools/list on /mcp-hosted within ${RELIST_WAIT_S} s of the change"
  if [ -n "$relist" ]; then
    observed=yes
    grep -q "session=$session" <<< "$relist" && same=yes
    detail="tools/list again $(grep -c . <<< "$relist") time(s) after the change, $([ $same = yes ] && echo "in the session that made the call" || echo "from another session: $(sed -n 's/.*session=\([^ ]*\).*/\1/p' <<< "$relist" | sort -u | tr '\n' ' ')")"
  fi
  local undelivered; undelivered=$(log_since "$mark" | grep -m1 'tools/list_changed not delivered' | sed 's/.*not delivered: //')
  [ -z "$undelivered" ] || detail+="; calyx could not deliver the notification to a session: $undelivered"
  if [ "$session" != '"-"' ] && [ -n "$session" ]; then
    if grep -F "streamable_http_session{id=$session}" <<< "$(LOG)" | grep 'common channel' > /dev/null; then
      detail+="; the calling session had opened its GET stream"
    else
      detail+="; the calling session never opened a GET stream"
    fi
  else
    detail+="; no MCP session (a stateless protocol version): nothing to notify"
  fi
  local want=${RELISTS[$CLI]:-}
  if [ -z "$want" ] || [ "$want" = "$observed" ]; then
    report hosted-relist PASS "re-lists after tools/list_changed: $observed: $detail"
  else
    report hosted-relist FAIL "re-lists after tools/list_changed: $observed, but docs/integrations.md says $want (update RELISTS and the docs): $detail"
  fi

  # 3. the next prompt: does the model get the tool published after the first listing?
  local from; from=$(wc -l < "$D/fake.jsonl")
  mark=$(log_size)
  type_prompt "SCENARIO:mcp:ev2${dash}echo echo again"
  # The turn ends with the model either calling the new tool (calyx forwards it to ev2 and the
  # echo comes back) or answering that no offered tool matches.
  local called=no answer="" deadline=$((SECONDS + 90))
  while [ $SECONDS -lt $deadline ]; do
    pump
    answer=$(tail -n +"$((from + 1))" "$D/fake.jsonl" | grep -o "no tool matching 'ev2${dash}echo' among the [0-9]* offered tools" | tail -n 1)
    [ -n "$answer" ] && break
    if grep -q 'calyx-mcp: forwarding a call to `ev2`' <<< "$(log_since "$mark")" && echo_reached_model "$from"; then
      called=yes; break
    fi
    sleep 0.2
  done
  [ $called = yes ] || [ -n "$answer" ] || { report hosted-new-tool FAIL "the second turn neither called ev2${dash}echo nor answered (pane: $(pane_text))"; return; }
  local new=$called
  detail=$([ $called = yes ] && echo "the model called the new tool: calyx forwarded a call to ev2" || echo "the model did not get ev2${dash}echo: ${answer:-no call reached ev2}")
  want=${NEW_TOOL[$CLI]:-}
  if [ -z "$want" ] || [ "$want" = "$new" ]; then
    report hosted-new-tool PASS "new tool at the next prompt: $new: $detail"
  else
    report hosted-new-tool FAIL "new tool at the next prompt: $new, but docs/integrations.md says $want (update NEW_TOOL and the docs): $detail"
  fi
}

if [ "${1:-}" = --inner ]; then
  inner
  exit 0
fi

# ---------------------------------------------------------------------------------- outside
rl_init "realcli hosted-mcp"
START=$SECONDS
# server-everything, installed once into the cache tests/hosted_support/ uses.
CACHE=${CALYX_MCP_TEST_SERVERS:-$ROOT/target/mcp-test-servers}
EV=$CACHE/node_modules/@modelcontextprotocol/server-everything/dist/index.js
if [ ! -f "$EV" ] && ! { mkdir -p "$CACHE" && timeout 300 npm install --no-audit --no-fund --prefix "$CACHE" "$EVERYTHING" > "$T/npm.log" 2>&1 && [ -f "$EV" ]; }; then
  # CI (CALYX_REQUIRE_NODE, as for the cargo hosted tests) has node and npm: a failure there.
  if [ -n "${CALYX_REQUIRE_NODE:-}" ]; then
    echo "realcli hosted-mcp: FAIL: CALYX_REQUIRE_NODE is set and $EVERYTHING could not be installed: $(tail -n 2 "$T/npm.log" | tr '\n' ' ')"
    rl_finish 1
    echo "0 passed, 1 failed"
    exit 1
  fi
  for CLI in ${*:-claude codex opencode gemini pi copilot hermes kimi}; do
    for s in $STEPS; do
      echo "realcli hosted-mcp $CLI $s: SKIP: cannot install $EVERYTHING: $(tail -n 2 "$T/npm.log" | tr '\n' ' ')"
      [ -z "${REALCLI_RESULTS:-}" ] || echo "$CLI $s SKIP" >> "$REALCLI_RESULTS"
    done
  done
  rl_finish 0
  echo "0 passed, 0 failed"
  exit 0
fi
export EV
passed=0 failed=0
for CLI in ${*:-claude codex opencode gemini pi copilot hermes kimi}; do
  [ -n "${KIND[$CLI]:-}" ] || { echo "realcli hosted-mcp: unknown CLI '$CLI'"; failed=$((failed + 1)); continue; }
  if [ -n "${NO_MCP[$CLI]:-}" ]; then
    for s in $STEPS; do
      echo "realcli hosted-mcp $CLI $s: SKIP: ${NO_MCP[$CLI]}"
      [ -z "${REALCLI_RESULTS:-}" ] || echo "$CLI $s SKIP" >> "$REALCLI_RESULTS"
    done
    continue
  fi
  D=$T/$CLI; mkdir -p "$D"; t0=$SECONDS
  if ! rl_install "$CLI" "$D/install.log"; then
    for s in $STEPS; do
      echo "realcli hosted-mcp $CLI $s: SKIP: not installable: $(tail -n 2 "$D/install.log" | tr '\n' ' ')"
      [ -z "${REALCLI_RESULTS:-}" ] || echo "$CLI $s SKIP" >> "$REALCLI_RESULTS"
    done
    continue
  fi
  "$R" prepare "$CLI" "$D/home" "$D/project" "${PORT[$CLI]}" > "$D/env.sh" ||
    { echo "realcli hosted-mcp $CLI: FAIL: realcli.sh prepare failed"; failed=$((failed + 1)); continue; }
  CLI=$CLI D=$D timeout 300 "$R" netns -- bash "$HERE/hosted_mcp.sh" --inner
  rc=$?
  touch "$D/results"
  for s in $STEPS; do
    st=$(awk -v s="$s" '$1 == s { print $2; exit }' "$D/results")
    case "$st" in
      PASS) passed=$((passed + 1)) ;;
      SKIP) ;;
      FAIL) failed=$((failed + 1)) ;;
      *) failed=$((failed + 1)); st=FAIL
         if [ $rc -ne 0 ]; then echo "realcli hosted-mcp $CLI $s: FAIL (not reached: the namespace run exited $rc${rc/#124/, timed out})"
         else echo "realcli hosted-mcp $CLI $s: FAIL (not reached: an earlier step failed)"; fi ;;
    esac
    [ -z "${REALCLI_RESULTS:-}" ] || echo "$CLI $s $st" >> "$REALCLI_RESULTS"
  done
  rl_time "$CLI" $((SECONDS - t0))
  echo "realcli hosted-mcp $CLI: $((SECONDS - t0)) s ($CLI $("$R" version "$CLI"))"
done
echo "realcli hosted-mcp: $((SECONDS - START)) s"
rl_finish "$failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
