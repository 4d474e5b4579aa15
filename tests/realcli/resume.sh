#!/usr/bin/env bash
# Issue 18: a real agent CLI comes back in its conversation after the calyx server is killed.
# Per CLI (default: claude codex): `calyx setup` wires its hooks; the CLI is started from a
# pane's shell with one exchange with the fake model; once calyx saved its session id, the server
# is killed with SIGKILL; `calyx attach` restores the session, the pane types the CLI's resume
# command, a second prompt is typed, and the fake model's request for it (its raw body, dumped
# with FAKE_DUMP_DIR) must contain the first exchange. Prints `realcli resume: PASS|FAIL CLI ...`.
# Usage: tests/realcli/resume.sh [CLI...] (default claude codex; every CLI ../shared/realcli
# drives is known here: claude codex opencode gemini pi copilot hermes kimi).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
rl_init "realcli resume"
CLIS=${*:-claude codex}
declare -A KIND=([claude]=claude-code [codex]=codex [opencode]=opencode [gemini]=gemini
                 [pi]=pi [copilot]=copilot [hermes]=hermes [kimi]=kimi)
declare -A PORT=([claude]=18401 [codex]=18402 [opencode]=18403 [gemini]=18404 [pi]=18405
                 [copilot]=18406 [hermes]=18407 [kimi]=18408)
# CLIs whose TUI takes no prompt on its command line: it is typed once this greeting shows.
declare -A GREET=([hermes]='Welcome to Hermes' [kimi]='Welcome to Kimi')
FAILED=0

inner() {
  . "$D/env.sh"
  rl_calyx_env "$D/run"
  local P=${PORT[$CLI]}
  # The fake's log holds no prompt text: its raw request bodies do.
  export FAKE_DUMP_DIR=$D/dump; mkdir -p "$FAKE_DUMP_DIR"
  "$R" fake "$CLI" "$P" "$D/fake.jsonl" > "$D/fake.out" 2>&1 & FAKE=$!
  trap 'c kill-server >/dev/null 2>&1; kill $FAKE 2>/dev/null' EXIT
  "$R" waitport "$P" 20 || { echo "FAIL fake model did not start"; return; }
  timeout 60 "$CALYX" setup --yes --agent "${KIND[$CLI]}" > "$D/setup.out" 2>&1 || { echo "FAIL setup"; return; }
  "$R" cmd --sh "$CLI" tui "SCENARIO:plain first exchange FIRSTMARK" > "$D/line"
  (cd "$D/project" && c new -d -s agent -x 160 -y 45 -c "$D/project") || { echo "FAIL calyx new"; return; }
  c send-keys -t agent -l "$(cat "$D/line")"; c send-keys -t agent Enter
  local i sid=""
  if [ -n "${GREET[$CLI]:-}" ]; then
    for i in $(seq 600); do c capture -t agent 2>/dev/null | grep -qF "${GREET[$CLI]}" && break; sleep 0.2; done
    c send-keys -t agent -l "SCENARIO:plain first exchange FIRSTMARK"; sleep 0.5; c send-keys -t agent Enter
  fi
  for i in $(seq 600); do
    sid=$(python3 - "${XDG_STATE_HOME:-$HOME/.local/state}/calyx/sessions.json" <<'PY' 2>/dev/null
import json, sys
for s in json.load(open(sys.argv[1]))["sessions"]:
    for w in s["windows"]:
        for p in w["panes"]:
            a = p.get("agent") or {}
            if a.get("session_id") and p.get("foreground"):
                print(a["session_id"]); sys.exit()
PY
)
    [ -n "$sid" ] && grep -rqF FIRSTMARK "$D/dump" 2>/dev/null && break
    sleep 0.2
  done
  [ -n "$sid" ] || { echo "FAIL no session id saved; pane: $(c capture -t agent | grep -v '^\s*$' | tail -n 5 | tr '\n' ' ')"; return; }
  echo "first exchange done, session $sid" >> "$D/progress.log"
  sleep 2  # the turn's last events reach the file
  kill -9 "$(pgrep -f 'calyx server' | while read -r p; do grep -qz "$D/run" /proc/$p/environ 2>/dev/null && echo "$p"; done | head -n 1)"
  sleep 1
  c ls > "$D/ls.out" 2>&1
  python3 - "$CALYX" > "$D/attach.out" 2>&1 <<'PY' &
import os, pty, sys, time, fcntl, termios, struct, select
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "attach", "-t", "agent"])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
end = time.time() + 150
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try: os.read(fd, 65536)
        except OSError: break
os.kill(pid, 15)
PY
  local holder=$!
  echo "killed and attached" >> "$D/progress.log"
  for i in $(seq 300); do c capture -t agent 2>/dev/null | grep -qiE "resume|FIRSTMARK|first exchange" && break; sleep 0.2; done
  sleep 5
  c capture -t agent > "$D/pane-restored.txt" 2>&1
  echo "typing the second prompt" >> "$D/progress.log"
  c send-keys -t agent -l "SCENARIO:plain second exchange SECONDMARK"; sleep 0.5; c send-keys -t agent Enter
  local ok=no
  for i in $(seq 600); do
    if grep -rlF SECONDMARK "$D/dump" 2>/dev/null | xargs -r grep -lF FIRSTMARK | grep -q .; then ok=yes; break; fi
    sleep 0.2
  done
  kill "$holder" 2>/dev/null
  if [ $ok = yes ]; then
    echo "PASS resumed $sid: $(grep -v '^\s*$' "$D/ls.out" | head -n 1); typed: $(grep -m1 -F -- "$sid" "$D/pane-restored.txt" | sed 's/^.*[#$] //')"
  else
    echo "FAIL no request with both exchanges; pane: $(c capture -t agent | grep -v '^\s*$' | head -n 8 | tr '\n' ' ')"
  fi
}

for CLI in $CLIS; do
  t0=$SECONDS
  D=$T/$CLI; mkdir -p "$D/project"
  rl_install "$CLI" "$D/install.log" || { echo "realcli resume: FAIL $CLI install"; FAILED=1; continue; }
  "$R" prepare "$CLI" "$D/home" "$D/project" "${PORT[$CLI]}" > "$D/env.sh"
  export D CLI R CALYX
  out=$("$R" netns -- bash -c "$(declare -f inner c rl_calyx_env); $(declare -p PORT KIND GREET); inner" 2>&1 | tail -n 1)
  echo "realcli resume: $out" | sed "s/^realcli resume: \(PASS\|FAIL\)/realcli resume: \1 $CLI/"
  case "$out" in PASS*) ;; *) FAILED=1 ;; esac
  rl_time "$CLI" $((SECONDS - t0))
done
rl_finish $FAILED
exit $FAILED
