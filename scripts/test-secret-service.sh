#!/usr/bin/env bash
# The secret-store tests (tests/hosted_secrets.rs) against the real Secret Service: inside
# `dbus-run-session` with a gnome-keyring unlocked the way a headless box would do it
# (`printf PASSWORD | gnome-keyring-daemon --unlock --components=secrets`), its keyrings in a
# temporary directory so the user's own are never touched. The same tests also start their own
# buses (none, no provider, locked, unlocked) and run with no session bus at all.
#
# Without dbus-run-session or gnome-keyring-daemon this says so and skips; with
# CALYX_REQUIRE_SECRET_SERVICE set (.ci/run) it fails instead. Debian packages:
# `apt-get install --no-install-recommends dbus gnome-keyring`.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in dbus-run-session dbus-daemon dbus-send gnome-keyring-daemon; do
  if ! command -v "$tool" >/dev/null; then
    if [ -n "${CALYX_REQUIRE_SECRET_SERVICE:-}" ]; then
      echo "test-secret-service: $tool is not installed but CALYX_REQUIRE_SECRET_SERVICE is set" >&2
      exit 1
    fi
    echo "test-secret-service: SKIPPED: $tool is not installed (apt-get install --no-install-recommends dbus gnome-keyring)"
    exit 0
  fi
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/data" "$scratch/run"
chmod 700 "$scratch/run"
# gnome-keyring keeps its keyrings in $XDG_DATA_HOME/keyrings and its control socket in
# $XDG_RUNTIME_DIR; both point at the scratch directory. HOME stays (cargo lives there).
export XDG_DATA_HOME="$scratch/data" XDG_RUNTIME_DIR="$scratch/run"
# Not skipped in here: the daemons are installed.
export CALYX_REQUIRE_SECRET_SERVICE=1 CALYX_TEST_UNLOCKED_SECRET_SERVICE=1

echo "test-secret-service: secret-store tests inside dbus-run-session with gnome-keyring unlocked"
set +e
dbus-run-session -- bash -c '
  set -euo pipefail
  printf calyx-test-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  cargo test --locked --test integration hosted_secrets:: -- --nocapture
' >"$scratch/out.log" 2>&1
status=$?
set -e
grep -E "^(test |SKIPPED|CHOSEN|REFUSED|WRITE|ROUND TRIP|test result)" "$scratch/out.log" || true
if [ "$status" -ne 0 ]; then
  echo "test-secret-service: FAILED; full output:" >&2
  cat "$scratch/out.log" >&2
  exit "$status"
fi
if grep -q "SKIPPED" "$scratch/out.log"; then
  echo "test-secret-service: a test skipped although the Secret Service is here" >&2
  exit 1
fi
echo "test-secret-service: passed"
