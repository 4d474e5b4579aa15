#!/bin/sh
# The conformance runner's client for auth/metadata-default through `calyx mcp login --paste`
# (run by scripts/mcp-conformance-client.sh inside its network namespace; $1 is the scenario
# server's URL). A private calyx server gets the entry `conf`, which goes to "sign-in
# required"; `calyx mcp login conf --paste` opens the page with $BROWSER (a stand-in that
# prints the redirect's Location into $PASTE_PIPE instead of following it) and reads the
# pasted address from that pipe; the server then connects with the token.
set -eu
URL=${1:?usage: conformance-login-paste.sh URL}
CALYX=${CALYX:?CALYX must name the calyx binary}
dir=$(mktemp -d /tmp/calyx-login-paste.XXXXXX)
chmod 700 "$dir"
export XDG_RUNTIME_DIR="$dir/run" XDG_STATE_HOME="$dir/state" XDG_CONFIG_HOME="$dir/config"
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/calyx"
chmod 700 "$XDG_RUNTIME_DIR"
# The file store: no D-Bus probe in a namespace without a session bus.
printf '[mcp]\nsecret_store = "file"\n' > "$XDG_CONFIG_HOME/calyx/config.toml"
trap '"$CALYX" kill-server >/dev/null 2>&1; rm -rf "$dir"' EXIT

state() { "$CALYX" mcp list --json | tr -d '\n' | sed -n 's/.*"alias": *"conf"[^}]*"state": *"\([^"]*\)".*/\1/p'; }
wait_for() {
  for _ in $(seq 300); do [ "$(state)" = "$1" ] && return 0; sleep 0.1; done
  echo "conf never reached '$1' (last: $(state))" >&2
  return 1
}

"$CALYX" mcp add conf --url "$URL" >/dev/null
wait_for 'sign-in required'
PASTE_PIPE="$dir/paste"
export PASTE_PIPE
mkfifo "$PASTE_PIPE"
# Open read-write so neither side blocks opening it.
exec 3<>"$PASTE_PIPE"
DISPLAY=:0 SSH_CONNECTION='' "$CALYX" mcp login conf --paste <&3
wait_for ready
