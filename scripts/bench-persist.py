#!/usr/bin/env python3
"""What saving and restoring sessions costs (issue 18's benchmark).

1. Save: one session of 100 panes (20 windows of 5, 200x60). Each save the server makes (at
   most once a second after a change; typing is a change) is read from its log: the owner's
   part (the snapshot) and the writer thread's (/proc, JSON, temp file, fsync, rename), with the
   file's size. Then `kill-server` with each pane holding 1,200 lines: the last save, with
   `[persistence] scrollback_lines = 1000` of history per pane (its time and the file's size).
2. Echo while saving: muxbench's raw-mode echo program in the first of the 100 panes, KEYS keys
   typed through a real client; each key's echo time is split by whether a save (the snapshot
   on the owner, or the writer's write) overlapped it: p50/p99 with and without.
3. Restore: 50 saved panes (10 windows of 5); the time from starting `calyx attach -t bench`
   (which starts the server and restores the session) to the client's first frame showing the
   session, after `kill-server` (history shown) and after kill -9 (none), ROUNDS times each.

usage: MUXBENCH_DIR=../shared/bench python3 scripts/bench-persist.py [--calyx target/release/calyx] [--keys 2000] [--rounds 5]
"""
import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.environ.get("MUXBENCH_DIR", os.path.join(HERE, "..", "..", "shared", "bench")))
import muxbench  # noqa: E402
from benchlib import quantile  # noqa: E402

LOG_FILTER = "info,calyx::server::operations=trace,calyx::persist=debug"
SNAPSHOT = re.compile(r"^(\S+).*snapshot of (\d+) panes in ([\d.]+)(µs|ms|s)")
SAVED = re.compile(r"^(\S+).*saved (\d+) sessions \((\d+) bytes\) in ([\d.]+)(µs|ms|s)")
HISTORY = re.compile(r"^(\S+).*history of the panes kept in ([\d.]+)(µs|ms|s)")


def ms(value, unit):
    return float(value) * {"µs": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def stamp(text):
    """A log line's RFC 3339 UTC time as Unix seconds."""
    text = text.rstrip("Z")
    return datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc).timestamp()


class World:
    """A private calyx world: its own runtime, state and config directories."""

    def __init__(self, calyx, tmp):
        self.calyx = calyx
        self.tmp = tmp
        self.env = muxbench.env_for(tmp)
        self.env.update(SHELL="/bin/sh", PS1="$ ", CALYX_LOG=LOG_FILTER)
        os.makedirs(os.path.join(tmp, "config", "calyx"), exist_ok=True)
        with open(os.path.join(tmp, "config", "calyx", "config.toml"), "w") as f:
            f.write("[persistence]\nscrollback_lines = 1000\n")

    def run(self, *args, check=True):
        p = subprocess.run([self.calyx, *args], env=self.env, capture_output=True, text=True,
                           timeout=60)
        if check and p.returncode != 0:
            sys.exit(f"calyx {' '.join(args)}: {p.stderr.strip()}")
        return p

    def state_file(self):
        return os.path.join(self.tmp, "state", "calyx", "sessions.json")

    def log_lines(self):
        try:
            with open(os.path.join(self.tmp, "state", "calyx", "server.log"), errors="replace") as f:
                return f.read().splitlines()
        except OSError:
            return []

    def session(self, windows, first_cmd=None):
        """Session `bench` of `windows` windows of 5 panes each."""
        first = ["--", "sh", "-c", first_cmd] if first_cmd else []
        self.run("new", "-d", "-s", "bench", "-x", "200", "-y", "60", *first)
        first_pane = json.loads(self.run("list-panes", "--json").stdout)[0]["id"]
        for w in range(windows):
            if w:
                self.run("new-window", "-t", "bench")
            for _ in range(4):
                self.run("split", "-t", f"bench:{w}", "-h")
            self.run("select-layout", "-t", f"bench:{w}", "tiled")
        # The first pane (the echo program's) in front and zoomed, for the client to type into
        # with its markers on whole lines.
        self.run("select", "-t", first_pane)
        if first_cmd:
            self.run("resize-pane", "-t", first_pane, "-Z")

    def server_pid(self):
        sock = os.path.join(self.tmp, "calyx", "server.sock")
        out = subprocess.run(["pgrep", "-f", "calyx server"], capture_output=True, text=True).stdout
        for pid in out.split():
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if self.tmp.encode() in f.read():
                        return int(pid)
            except OSError:
                pass
        return None

    def wait_gone(self, pid):
        for _ in range(500):
            try:
                with open(f"/proc/{pid}/status") as f:
                    if "State:\tZ" in f.read():
                        return
            except OSError:
                return
            time.sleep(0.01)


def saves(world):
    """(snapshot ms, write ms, bytes, start, end) of each save in the log."""
    snaps, writes = [], []
    for line in world.log_lines():
        m = SNAPSHOT.match(line)
        if m and int(m.group(2)) >= 50:
            t = stamp(m.group(1))
            d = ms(m.group(3), m.group(4))
            snaps.append((d, t - d / 1000, t))
        m = SAVED.match(line)
        if m:
            t = stamp(m.group(1))
            d = ms(m.group(4), m.group(5))
            writes.append((d, int(m.group(3)), t - d / 1000, t))
    return snaps, writes


def summary(values):
    values = sorted(values)
    return f"median {quantile(values, 0.5):.2f} max {values[-1]:.2f} (n={len(values)})"


def bench_save_and_echo(calyx, keys):
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        world = World(calyx, tmp)
        prog = os.path.join(tmp, "echo.py")
        with open(prog, "w") as f:
            f.write(muxbench.ECHO_PROG)
        world.session(20, f"exec python3 {prog}")
        panes = json.loads(world.run("list-panes", "--json").stdout)
        print(f"session of {len(panes)} panes", flush=True)
        outer = muxbench.Outer([calyx, "attach", "-t", "bench"], world.env)
        if outer.wait_for(b"READY", 30) < 0:
            sys.exit("the echo program did not start")
        outer.drain(2.0)
        # A layout change every 0.3 s as well, so a save is always due.
        stop = threading.Event()

        def churn():
            n = 0
            while not stop.wait(0.3):
                n += 1
                world.run("rename-window", "-t", "bench:19", f"w{n}", check=False)

        churner = threading.Thread(target=churn, daemon=True)
        churner.start()
        samples = []
        for i in range(keys):
            marker = b"@K%05d@" % (i + 1)
            start = max(0, len(outer.buf) - 16)
            t0 = time.time()
            m0 = time.monotonic()
            os.write(outer.fd, b"a")
            if outer.wait_for(marker, 5, start) < 0:
                break
            samples.append((t0, (time.monotonic() - m0) * 1000))
            outer.drain(0.01)
            outer.buf = outer.buf[-4096:]
        stop.set()
        churner.join()
        outer.close()
        time.sleep(1.5)
        snaps, writes = saves(world)
        busy = [(s, e) for _, s, e in snaps] + [(s, e) for _, _, s, e in writes]
        during, outside = [], []
        for t0, d in samples:
            t1 = t0 + d / 1000
            (during if any(s < t1 and t0 < e for s, e in busy) else outside).append(d)
        print(f"save, owner's snapshot (ms): {summary([d for d, _, _ in snaps])}")
        print(f"save, writer thread (ms): {summary([d for d, _, _, _ in writes])}")
        print(f"save, bytes: {summary([b for _, b, _, _ in writes])}")
        for name, values in (("with a save in progress", during), ("without", outside)):
            if values:
                values.sort()
                print(f"echo {name}: p50 {quantile(values, 0.5):.2f} ms p99 "
                      f"{quantile(values, 0.99):.2f} ms max {values[-1]:.2f} ms n={len(values)}")
        # The graceful stop: 1,200 lines in every pane, then kill-server.
        for p in panes[1:]:
            world.run("send-keys", "-t", p["id"], "seq 1 1200", "Enter")
        time.sleep(3)
        before = len(world.log_lines())
        world.run("kill-server")
        time.sleep(1)
        lines = world.log_lines()[before:]
        for line in lines:
            m = HISTORY.match(line)
            if m:
                print(f"stop: history of {len(panes)} panes on the owner: "
                      f"{ms(m.group(2), m.group(3)):.1f} ms")
            m = SAVED.match(line)
            if m:
                print(f"stop: the last save (writer): {ms(m.group(4), m.group(5)):.1f} ms, "
                      f"{int(m.group(3))} bytes")
        print(f"stop: sessions.json {os.path.getsize(world.state_file())} bytes")


def bench_restore(calyx, rounds):
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        world = World(calyx, tmp)
        world.session(10)
        panes = json.loads(world.run("list-panes", "--json").stdout)
        for p in panes:
            world.run("send-keys", "-t", p["id"], "seq 1 1200", "Enter")
        time.sleep(3)
        results = {"after kill-server (history shown)": [], "after kill -9 (no history)": []}
        for r in range(rounds):
            for how in results:
                if how.startswith("after kill-server"):
                    world.run("kill-server")
                else:
                    time.sleep(1.5)  # the last change saved
                    pid = world.server_pid()
                    if pid is None:
                        sys.exit("no server to kill")
                    os.kill(pid, signal.SIGKILL)
                    world.wait_gone(pid)
                time.sleep(0.3)
                t0 = time.monotonic()
                outer = muxbench.Outer([calyx, "attach", "-t", "bench"], world.env)
                found = outer.wait_for(b"[bench]", 30)
                dt = (time.monotonic() - t0) * 1000
                outer.close()
                if found < 0:
                    sys.exit(f"round {r + 1} {how}: no frame")
                n = len(json.loads(world.run("list-panes", "--json").stdout))
                results[how].append(dt)
                print(f"round {r + 1} restore {how}: {dt:.0f} ms to the first frame, {n} panes",
                      flush=True)
                if how.startswith("after kill-server"):
                    # Give the next kill -9 something to save that has no history.
                    time.sleep(1.5)
        for how, values in results.items():
            print(f"restore {how}: {summary(values)} ms")
        world.run("kill-server", check=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calyx", default=os.path.join(ROOT, "target", "release", "calyx"))
    ap.add_argument("--keys", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    calyx = os.path.abspath(a.calyx)
    bench_save_and_echo(calyx, a.keys)
    bench_restore(calyx, a.rounds)


if __name__ == "__main__":
    main()
