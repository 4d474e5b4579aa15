#!/usr/bin/env python3
"""What one agent hook costs: `calyx hook claude-code < payload` against sh + curl.

Both post the same captured PostToolUse payload to the same running calyx server's
/agent-event, alternately, RUNS times each, as agent CLIs run hooks: no terminal (a new session
without a controlling terminal, stdin a file, stdout and stderr pipes). Prints p50, p90, p99 and
the mean of the wall time of each, in ms, and whether calyx meets issue 14's goal (p50 at most
3 ms and at most half of sh + curl's).

usage: python3 scripts/bench-hook.py [--runs 500] [--calyx target/release/calyx]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def quantile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(len(s) * q))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--calyx", default=os.path.join(ROOT, "target", "release", "calyx"))
    a = ap.parse_args()
    calyx = os.path.abspath(a.calyx)
    if not shutil.which("curl"):
        sys.exit("curl is required (apt-get install curl)")
    world = tempfile.mkdtemp(prefix="calyx-bench-hook.")
    env = dict(os.environ)
    for sub in ("run", "state", "config", "home"):
        os.makedirs(os.path.join(world, sub), exist_ok=True)
    os.chmod(os.path.join(world, "run"), 0o700)
    env.update(XDG_RUNTIME_DIR=f"{world}/run", XDG_STATE_HOME=f"{world}/state",
               XDG_CONFIG_HOME=f"{world}/config", HOME=f"{world}/home", SHELL="/bin/sh")
    for k in ("CALYX", "CALYX_SURFACE_ID", "CALYX_SESSION_ID", "TMUX"):
        env.pop(k, None)
    subprocess.run([calyx, "new", "-d", "-s", "bench", "--", "sh"], env=env, check=True)
    try:
        panes = json.loads(subprocess.run([calyx, "list-panes", "--json"], env=env, check=True,
                                          capture_output=True, text=True).stdout)
        surface = panes[0]["surface_id"]
        endpoint_file = f"{world}/state/calyx/agent-endpoint.json"
        for _ in range(100):
            if os.path.exists(endpoint_file):
                break
            time.sleep(0.05)
        ep = json.load(open(endpoint_file))
        payload = os.path.join(world, "payload.json")
        captured = json.load(open(os.path.join(ROOT, "fixtures/payloads/claude-2.1.197-PostToolUse.json")))
        with open(payload, "w") as f:
            json.dump(captured["payload"], f)
        hook_env = dict(env, CALYX_SURFACE_ID=surface)
        curl = (f"curl -s -o /dev/null -X POST -H 'Authorization: Bearer {ep['token']}' "
                f"-H 'Content-Type: application/json' -H 'X-Calyx-Surface-ID: {surface}' "
                f"-H 'X-Calyx-Agent-Kind: claude-code' --data-binary @- "
                f"http://127.0.0.1:{ep['port']}/agent-event")
        commands = {
            "calyx hook": [calyx, "hook", "claude-code"],
            "sh + curl": ["sh", "-c", curl],
        }
        times = {name: [] for name in commands}
        for _ in range(a.runs):
            for name, argv in commands.items():
                with open(payload, "rb") as stdin:
                    t = time.perf_counter()
                    p = subprocess.run(argv, stdin=stdin, capture_output=True, env=hook_env,
                                       start_new_session=True)
                    times[name].append((time.perf_counter() - t) * 1000)
                if p.returncode != 0:
                    sys.exit(f"{name} failed: {p.stderr.decode(errors='replace')}")
        print(f"{a.runs} runs each, alternating, no terminal, one calyx server ({calyx})")
        print(f"{'':12} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
        for name, v in times.items():
            print(f"{name:12} {quantile(v, .5):8.2f} {quantile(v, .9):8.2f} {quantile(v, .99):8.2f} "
                  f"{sum(v) / len(v):8.2f}")
        hook50, curl50 = quantile(times["calyx hook"], .5), quantile(times["sh + curl"], .5)
        ok = hook50 <= 3.0 and hook50 <= curl50 / 2
        print(f"goal (p50 <= 3 ms and <= half of sh + curl's {curl50:.2f} ms): "
              f"{'met' if ok else 'NOT met'} ({hook50:.2f} ms)")
    finally:
        subprocess.run([calyx, "kill-server"], env=env, capture_output=True)
        shutil.rmtree(world, ignore_errors=True)


if __name__ == "__main__":
    main()
