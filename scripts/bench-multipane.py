#!/usr/bin/env python3
"""Four panes flooding at once, and a fifth, quiet one that must stay responsive: calyx against
tmux (or two calyx builds) in the same run.

Each target runs as a real client in a 200x50 outer PTY this script owns and drains (muxbench's
`Outer`). The focused pane runs muxbench's raw-mode echo program; four more panes, split the
same way in every target (the quiet pane top left, floods below it and on the right), each wait
for a start signal and then `cat` muxbench's mixed ANSI text (MB each) and print a marker. The
script starts all four at once, then types keys into the quiet pane and times each echo until
the floods are over. A flood is done when the multiplexer's own `capture` of its pane shows the
marker (polled every 0.2 s, `--poll`), so every byte before it was parsed.

Prints per run: the aggregate rate (4 x MB over the time until the last marker) and the echo
p50/p99 under the flood; then per target the medians over the rounds and the runs' spread.

usage: CALYX_BIN=target/release/calyx python3 scripts/bench-multipane.py [--mb N] [--rounds N] TARGET...
TARGET is tmux, calyx or calyx:PATH.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("MUXBENCH_DIR", os.path.join(HERE, "..", "..", "shared", "bench")))
import muxbench  # noqa: E402
from benchlib import quantile, select_binary  # noqa: E402

FLOODS = 4
# (pane to split: index into the panes so far, direction): the same tree in every target.
SPLITS = [(0, "-v"), (0, "-h"), (1, "-h"), (2, "-v")]


class Tmux:
    def __init__(self, tmp, env):
        self.sock = os.path.join(tmp, "tmux.sock")
        self.env = env

    def argv(self, cmd):
        return ["tmux", "-S", self.sock, "-f", "/dev/null", "new-session", cmd]

    def run(self, *args):
        return subprocess.run(["tmux", "-S", self.sock, *args], env=self.env, capture_output=True,
                              text=True, timeout=20)

    def first_pane(self):
        return self.run("list-panes", "-F", "#{pane_id}").stdout.split()[0]

    def split(self, target, direction, cmd):
        out = self.run("split-window", "-d", direction, "-P", "-F", "#{pane_id}", "-t", target, cmd)
        return out.stdout.strip() or None

    def capture(self, pane):
        return self.run("capture-pane", "-p", "-t", pane).stdout

    def cleanup(self):
        self.run("kill-server")


class Calyx:
    def __init__(self, tmp, env):
        self.bin = os.environ.get("CALYX_BIN") or "calyx"
        self.env = env

    def argv(self, cmd):
        return [self.bin, "new", "--", "sh", "-c", cmd]

    def run(self, *args):
        return subprocess.run([self.bin, *args], env=self.env, capture_output=True, text=True, timeout=20)

    def pane_ids(self):
        panes = json.loads(self.run("list-panes", "--json").stdout or "[]")
        panes = panes if isinstance(panes, list) else panes.get("panes", [])
        return [str(p.get("id", p.get("pane_id"))) for p in panes]

    def first_pane(self):
        return self.pane_ids()[0]

    def split(self, target, direction, cmd):
        before = set(self.pane_ids())
        if self.run("split", "-d", direction, "-t", target, "--", "sh", "-c", cmd).returncode != 0:
            return None
        new = [p for p in self.pane_ids() if p not in before]
        return new[0] if new else None

    def capture(self, pane):
        return self.run("capture", "-t", pane).stdout

    def cleanup(self):
        self.run("kill-server")


def one_run(kind, payload, mb, max_keys, poll_every):
    """One run: (aggregate MB/s or None, echo samples in ms)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        env = muxbench.env_for(tmp)
        mux = Tmux(tmp, env) if kind == "tmux" else Calyx(tmp, env)
        prog = os.path.join(tmp, "echo.py")
        with open(prog, "w") as f:
            f.write(muxbench.ECHO_PROG)
        go = os.path.join(tmp, "go")
        outer = muxbench.Outer(mux.argv(f"exec python3 {prog}"), env)
        try:
            if outer.wait_for(b"READY", 30) < 0:
                return None, []
            panes = [mux.first_pane()]
            markers = {}
            for k, (parent, direction) in enumerate(SPLITS, start=1):
                marker = f"MULTI-DONE{k}"
                cmd = (f"while [ ! -e {go} ]; do sleep 0.05; done; cat {shlex.quote(payload)}; "
                       f"printf '\\n%s%s\\n' MULTI -DONE{k}; sleep 600")
                pane = mux.split(panes[parent], direction, cmd)
                if pane is None:
                    return None, []
                panes.append(pane)
                markers[pane] = marker
            outer.drain(1.0)
            done = {}
            start = time.monotonic()
            open(go, "w").close()

            def poll():
                while len(done) < FLOODS and time.monotonic() - start < 600:
                    for pane, marker in markers.items():
                        if pane not in done and marker in mux.capture(pane):
                            done[pane] = time.monotonic()
                    time.sleep(poll_every)

            poller = threading.Thread(target=poll, daemon=True)
            poller.start()
            samples = []
            n = 0
            while poller.is_alive() and n < max_keys:
                n += 1
                key_marker = b"@K%05d@" % n
                mark = max(0, len(outer.buf) - 16)
                t0 = time.monotonic()
                os.write(outer.fd, b"a")
                if outer.wait_for(key_marker, 5, mark) < 0:
                    break
                samples.append((time.monotonic() - t0) * 1000)
                outer.drain(0.01)
                outer.buf = outer.buf[-4096:]
            # Keep draining the outer terminal (as a fast terminal would) until the floods end.
            while poller.is_alive():
                outer.drain(0.2)
            if len(done) < FLOODS:
                return None, samples
            return FLOODS * mb / (max(done.values()) - start), samples
        finally:
            outer.close()
            mux.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("targets", nargs="+")
    ap.add_argument("--mb", type=int, default=32, help="MB each flooding pane prints")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keys", type=int, default=2000, help="most keys typed per run")
    ap.add_argument("--poll", type=float, default=0.2,
                    help="seconds between captures of the flooding panes (each is a `capture` command)")
    a = ap.parse_args()
    default_bin = os.environ.get("CALYX_BIN")
    rates = {t: [] for t in a.targets}
    p99s = {t: [] for t in a.targets}
    p50s = {t: [] for t in a.targets}
    with tempfile.TemporaryDirectory() as data:
        payload = os.path.join(data, "payload.txt")
        muxbench.make_payload(payload, a.mb)
        for r in range(a.rounds):
            for target in a.targets:
                kind = select_binary(target, default_bin)
                rate, samples = one_run(kind, payload, a.mb, a.keys, a.poll)
                if rate is None or not samples:
                    print(f"round {r + 1} {target}: FAILED (rate {rate}, {len(samples)} echoes)", flush=True)
                    continue
                samples.sort()
                p50, p99 = quantile(samples, 0.5), quantile(samples, 0.99)
                rates[target].append(rate)
                p50s[target].append(p50)
                p99s[target].append(p99)
                print(f"round {r + 1} {target}: aggregate {rate:.1f} MB/s, echo p50 {p50:.2f} ms "
                      f"p99 {p99:.2f} ms (n={len(samples)})", flush=True)
    medians = {}
    for target in a.targets:
        if not rates[target]:
            continue
        med = statistics.median(rates[target])
        medians[target] = med
        spread = (max(rates[target]) - min(rates[target])) / med
        print(f"multipane {target} aggregate_median_MB/s={med:.1f} spread={100 * spread:.0f}% "
              f"echo_p50_median_ms={statistics.median(p50s[target]):.2f} "
              f"echo_p99_median_ms={statistics.median(p99s[target]):.2f} runs={len(rates[target])}",
              flush=True)
    calyxes = [t for t in medians if t.startswith("calyx")]
    for c in calyxes:
        for o in (t for t in medians if not t.startswith("calyx")):
            print(f"ratio {c} / {o} aggregate = {medians[c] / medians[o]:.2f}x", flush=True)


if __name__ == "__main__":
    main()
