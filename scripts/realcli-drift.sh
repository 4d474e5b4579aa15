#!/usr/bin/env bash
# Runs the real-CLI suite (suite.sh, approvals.sh, mcp_headers.sh, hosted_mcp.sh) against the newest published CLI
# versions instead of the pins, and reports what changed, so a CLI release that breaks calyx is
# caught the day it ships.
#
#   scripts/realcli-drift.sh [CLI...]      (after `cargo build`; needs the npm registry and PyPI
#                                          for the install, nothing else: the runs are offline)
#
# The newest versions go into their own cache (REALCLI_HOME, default ~/.cache/calyx-realcli-latest),
# so the pinned cache the CI uses is never touched. Reports:
#   versions   pinned -> newest, per CLI;
#   results    every step whose result differs from tests/realcli/expected.txt (what the pinned
#              versions give: "cli step RESULT" lines; refresh it with --update-expected after a
#              pinned run shows a deliberate change);
#   payloads   payload shapes the new versions sent that fixtures/payloads/ does not cover (saved into
#              fixtures/payloads/new/ by the suite; the unit tests normalize every file there).
# Exits 0 when nothing changed for the worse (no step went from PASS to FAIL or SKIP, and every
# CLI still sends its MCP identity headers), else 1.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
R=${REALCLI:-$(realpath "$ROOT/../shared/realcli/realcli.sh" 2>/dev/null)}
[ -x "$R" ] || { echo "realcli drift: SKIP: no ../shared/realcli/realcli.sh"; exit 0; }
EXPECTED=$ROOT/tests/realcli/expected.txt

if [ "${1:-}" = --update-expected ]; then
  shift
  out=$(mktemp)
  REALCLI_RESULTS=$out bash "$ROOT/tests/realcli/suite.sh" "$@"
  REALCLI_RESULTS=$out bash "$ROOT/tests/realcli/approvals.sh" "$@"
  REALCLI_RESULTS=$out bash "$ROOT/tests/realcli/hosted_mcp.sh" "$@"
  sort "$out" > "$EXPECTED"; rm -f "$out"
  echo "realcli drift: wrote $EXPECTED from the pinned versions"
  exit 0
fi

export REALCLI_LATEST=1
export REALCLI_HOME=${REALCLI_DRIFT_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/calyx-realcli-latest}
WORK=$(mktemp -d /tmp/calyx-realcli-drift.XXXXXX)
CLIS=${*:-claude codex opencode gemini pi copilot hermes}

echo "== versions (pinned -> newest)"
pins=$(REALCLI_LATEST= "$R" list 2>/dev/null)
for cli in $CLIS; do
  timeout 900 "$R" install "$cli" > "$WORK/install-$cli.log" 2>&1
  pin=$(awk -v c="$cli" '$1 == c { print $3; exit }' <<< "$pins")
  new=$("$R" version "$cli" 2>/dev/null || echo "not installable")
  if [ "$pin" = "$new" ]; then echo "  $cli $pin (unchanged)"; else echo "  $cli ${pin:-?} -> $new"; fi
done

echo "== suite against the newest versions"
before=$(git -C "$ROOT" status --porcelain --untracked-files=all -- fixtures/payloads/new 2>/dev/null)
REALCLI_RESULTS=$WORK/results bash "$ROOT/tests/realcli/suite.sh" $CLIS | tee "$WORK/suite.out"
echo "== approvals against the newest versions"
REALCLI_RESULTS=$WORK/results bash "$ROOT/tests/realcli/approvals.sh" $CLIS | tee -a "$WORK/suite.out"
echo "== MCP identity headers from the newest versions"
headers_ok=yes
bash "$ROOT/tests/realcli/mcp_headers.sh" $CLIS | tee -a "$WORK/suite.out"
[ "${PIPESTATUS[0]}" -eq 0 ] || headers_ok=no
echo "== hosted MCP servers through calyx-mcp with the newest versions"
REALCLI_RESULTS=$WORK/results bash "$ROOT/tests/realcli/hosted_mcp.sh" $CLIS | tee -a "$WORK/suite.out"

echo "== results that differ from the pinned versions ($EXPECTED)"
worse=0
while read -r cli step result; do
  want=$(awk -v c="$cli" -v s="$step" '$1 == c && $2 == s { print $3; exit }' "$EXPECTED" 2>/dev/null)
  [ "$want" = "$result" ] && continue
  echo "  $cli $step: ${want:-unknown} -> $result: $(grep -m1 -E "^realcli (approvals |hosted-mcp )?$cli ${step#approvals-}:" "$WORK/suite.out" | cut -d: -f2- | cut -c1-200)"
  # A step that no longer runs (SKIP: not installable, say) is as worse as one that fails.
  [ "$want" = PASS ] && [ "$result" != PASS ] && worse=$((worse + 1))
done < <(sort "$WORK/results")
if [ $headers_ok = no ]; then
  echo "  mcp_headers: a CLI no longer sends calyx's identity headers (see above)"
  worse=$((worse + 1))
fi
[ $worse -eq 0 ] && echo "  (no step went from PASS to FAIL or SKIP)"

echo "== payloads the fixtures did not cover"
after=$(git -C "$ROOT" status --porcelain --untracked-files=all -- fixtures/payloads/new 2>/dev/null)
if [ "$before" != "$after" ]; then
  comm -13 <(echo "$before") <(echo "$after") | sed 's/^/  /'
else
  echo "  (none new)"
fi
echo "realcli drift: logs in $WORK"
[ $worse -eq 0 ]
