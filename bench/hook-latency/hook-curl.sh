#!/bin/sh
# The same post as `calyx hook claude-code`, the way a shell hook script does it: read the
# endpoint file on every call (shell builtins only), one curl process.
[ -n "$CALYX_SURFACE_ID" ] || [ -n "$CALYX_SESSION_ID" ] || exit 0
[ -n "$HERDR_PANE_ID" ] && exit 0
[ -n "$GROK_HOOK_EVENT" ] && exit 0
f="${XDG_STATE_HOME:-$HOME/.local/state}/calyx/agent-endpoint.json"
[ -r "$f" ] || exit 0
IFS= read -r j < "$f" || [ -n "$j" ] || exit 0
port=${j#*\"port\":}; port=${port%%,*}
token=${j#*\"token\":\"}; token=${token%%\"*}
curl -s -o /dev/null -m 2 -X POST --data-binary @- \
  -H "Authorization: Bearer $token" -H "Content-Type: application/json" \
  -H "X-Calyx-Session-ID: $CALYX_SESSION_ID" -H "X-Calyx-Surface-ID: $CALYX_SURFACE_ID" \
  -H "X-Calyx-Agent-Kind: claude-code" "http://127.0.0.1:$port/agent-event"
exit 0
