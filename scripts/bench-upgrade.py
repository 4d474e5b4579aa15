#!/usr/bin/env python3
"""The pause a typing user sees during `calyx server-upgrade` (issue 18, Benchmark: Upgrade).

One attached calyx client (in a PTY standing in for the user's terminal, muxbench's `Outer`)
runs muxbench's raw-mode echo program, which answers each key with a unique marker. Keys are
typed one after the other, each waiting for its echo, while `calyx server-upgrade` replaces the
server UPGRADES times in a row (to the same binary). For each upgrade the longest
keystroke->echo gap is the pause the user saw: it includes the check of the new binary (keys
flow meanwhile), the exec, the new server's start, the client's reconnect and redraw. Goal:
under 100 ms.

usage: CALYX_BIN=target/release/calyx python3 scripts/bench-upgrade.py [--upgrades N]
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("MUXBENCH_DIR", os.path.join(HERE, "..", "..", "shared", "bench")))
import muxbench  # noqa: E402
from benchlib import echo_ms, quantile  # noqa: E402


class Typist:
    """Types one key at a time into the outer terminal and times its echo."""

    def __init__(self, outer):
        self.outer = outer
        self.sent = 0

    def key(self):
        """The milliseconds from writing one key to its echo on the terminal (None: no echo
        within 10 s)."""
        self.sent += 1
        elapsed = echo_ms(self.outer, self.sent, 10)
        if elapsed is not None:
            self.outer.buf = self.outer.buf[-4096:]
        return elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--upgrades", type=int, default=20)
    ap.add_argument("--after", type=int, default=20, help="keys typed after each upgrade returned")
    a = ap.parse_args()
    binary = os.path.abspath(os.environ.get("CALYX_BIN") or "target/release/calyx")
    os.environ["CALYX_BIN"] = binary
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        prog = os.path.join(tmp, "echo.py")
        with open(prog, "w") as f:
            f.write(muxbench.ECHO_PROG)
        env = muxbench.env_for(tmp)
        argv, cleanup = muxbench.target_argv("calyx", f"exec python3 {prog}", tmp, env=env)
        outer = muxbench.Outer(argv, env)
        try:
            if outer.wait_for(b"READY", 30) < 0:
                raise SystemExit("the echo program did not start")
            outer.drain(1.0)
            typist = Typist(outer)
            baseline = [typist.key() for _ in range(100)]
            if None in baseline:
                raise SystemExit("a key was not echoed before any upgrade")
            baseline.sort()
            gaps = []
            for u in range(a.upgrades):
                upgrade = subprocess.Popen(
                    [binary, "server-upgrade", "--binary", binary],
                    env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                worst, during = 0.0, 0
                while upgrade.poll() is None:
                    lat = typist.key()
                    if lat is None:
                        raise SystemExit(f"upgrade {u + 1}: a key was never echoed")
                    worst, during = max(worst, lat), during + 1
                out, err = upgrade.communicate()
                if upgrade.returncode != 0:
                    raise SystemExit(f"upgrade {u + 1} failed: {err.decode(errors='replace')}")
                # The client may still be reconnecting when the command returns.
                for _ in range(a.after):
                    lat = typist.key()
                    if lat is None:
                        raise SystemExit(f"upgrade {u + 1}: a key after it was never echoed")
                    worst = max(worst, lat)
                gaps.append(worst)
                print(f"upgrade {u + 1}: longest keystroke->echo gap {worst:.1f} ms "
                      f"({during} keys typed while it ran)", flush=True)
            gaps.sort()
            print(f"baseline echo (no upgrade) n={len(baseline)} p50_ms={quantile(baseline, 0.5):.2f} "
                  f"p99_ms={quantile(baseline, 0.99):.2f}")
            print(f"upgrade pause over {len(gaps)} upgrades: median_ms={quantile(gaps, 0.5):.1f} "
                  f"max_ms={gaps[-1]:.1f} (goal < 100)")
        finally:
            outer.close()
            cleanup()


if __name__ == "__main__":
    main()
