#!/usr/bin/env python3
"""What hosting MCP servers costs (issue 16, "Benchmark"): the same rmcp client
(examples/mcp_bench_client) talks to the project's fixture server (examples/mcp_fixture)
directly and through a real calyx server's /mcp-hosted, and the script prints six figures:

1. added latency: sequential `echo` calls with a 1 KiB message, stdio and Streamable HTTP
   upstream, p50/p99 direct vs through and the difference (goal: +<=1 ms p50, +<=3 ms p99);
2. throughput: 8 clients x 250 calls, calls/s through calyx as a share of direct (goal >=80%;
   HTTP upstream, since a stdio server has one client);
3. large results: 1 and 32 MiB, time through vs direct, calyx's peak RSS above idle during the
   call (goal: under 3x the payload);
4. connect: `calyx mcp enable` to `N tools` for server-everything over stdio, split into the
   server's own start (a direct client's spawn-to-tools/list) and calyx's share;
5. idle: 10 hosted stdio servers connected for 60 s, calyx CPU % and RSS per server;
6. `tools/list_changed` from the fixture to the agent session, p50 over 100 changes.

One run; release build first (`cargo build --release --bin calyx --example mcp_fixture
--example mcp_bench_client`). Numbers go to docs/performance.md.

usage: python3 scripts/bench-mcp-hosted.py [--calls 2000] [--idle-seconds 60] [--skip-everything]
       [--profile release]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from benchlib import rss_kb

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = {"dir": os.path.join(ROOT, "target", "release")}
EVERYTHING = os.path.join(ROOT, "target", "mcp-test-servers", "node_modules", "@modelcontextprotocol",
                          "server-everything", "dist", "index.js")


def hwm_kb(pid):
    """Peak RSS (VmHWM) of `pid` in KiB since the last reset_peak."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def reset_peak(pid):
    """Resets VmHWM to the current RSS (Linux: `5` to clear_refs)."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


class World:
    """A private calyx server (its own XDG directories) and the paths of the programs."""

    def __init__(self, calyx):
        self.calyx = calyx
        self.dir = tempfile.mkdtemp(prefix="calyx-bench-mcp.")
        self.env = dict(os.environ)
        for sub in ("run", "state", "config/calyx", "home"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)
        os.chmod(os.path.join(self.dir, "run"), 0o700)
        self.env.update(XDG_RUNTIME_DIR=f"{self.dir}/run", XDG_STATE_HOME=f"{self.dir}/state",
                        XDG_CONFIG_HOME=f"{self.dir}/config", HOME=f"{self.dir}/home", SHELL="/bin/sh")
        for k in ("CALYX", "CALYX_SURFACE_ID", "CALYX_SESSION_ID", "TMUX"):
            self.env.pop(k, None)
        with open(f"{self.dir}/config/calyx/config.toml", "w") as f:
            f.write('[mcp]\nsecret_store = "file"\n')
        self.run("new", "-d", "-s", "bench", "--", "sh")
        panes = json.loads(self.run("list-panes", "--json"))
        self.surface = panes[0]["surface_id"]
        endpoint_file = f"{self.dir}/state/calyx/agent-endpoint.json"
        for _ in range(200):
            if os.path.exists(endpoint_file):
                break
            time.sleep(0.05)
        ep = json.load(open(endpoint_file))
        self.hosted = ["--url", f"http://127.0.0.1:{ep['port']}/mcp-hosted", "--token", ep["token"],
                       "--surface", self.surface]
        sock = f"{self.dir}/run/calyx/server.sock"
        pids = subprocess.run(["pgrep", "-f", "calyx server"], capture_output=True, text=True).stdout.split()
        self.pid = next(int(p) for p in pids
                        if sock in open(f"/proc/{p}/environ", "rb").read().decode(errors="replace"))

    def run(self, *args):
        p = subprocess.run([self.calyx, *args], env=self.env, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"calyx {' '.join(args)}: {p.stderr}")
        return p.stdout

    def rows(self):
        return {r["alias"]: r for r in json.loads(self.run("mcp", "list", "--json"))}

    def wait(self, alias, state, deadline=120):
        end = time.time() + deadline
        while time.time() < end:
            row = self.rows().get(alias)
            if row and row["state"] == state:
                return row
            time.sleep(0.01)
        sys.exit(f"{alias} not {state} within {deadline} s: {self.rows().get(alias)}")

    def stop(self):
        subprocess.run([self.calyx, "kill-server"], env=self.env, capture_output=True)


def client(mode, target, *extra):
    out = subprocess.run([os.path.join(BIN["dir"], "examples", "mcp_bench_client"), mode, *extra, *target],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"mcp_bench_client {mode} {target}: {out.stderr}")
    return json.loads(out.stdout)


def http_fixture():
    p = subprocess.Popen([os.path.join(BIN["dir"], "examples", "mcp_fixture"), "http"],
                         stdout=subprocess.PIPE, text=True)
    return p, p.stdout.readline().strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--idle-seconds", type=int, default=60)
    ap.add_argument("--skip-everything", action="store_true", help="skip 4 (needs node)")
    ap.add_argument("--profile", default="release", help="target/<profile> holding the programs")
    a = ap.parse_args()
    BIN["dir"] = os.path.join(ROOT, "target", a.profile)
    calyx = os.path.join(BIN["dir"], "calyx")
    fixture = os.path.join(BIN["dir"], "examples", "mcp_fixture")
    for program in (calyx, fixture, os.path.join(BIN["dir"], "examples", "mcp_bench_client")):
        if not os.path.exists(program):
            sys.exit(f"{program} is missing: cargo build --release --bin calyx --example mcp_fixture "
                     "--example mcp_bench_client")
    print(f"load average at start: {os.getloadavg()}")
    world = World(calyx)
    http_server, http_url = http_fixture()
    try:
        world.run("mcp", "add", "fxs", "--", fixture)
        world.run("mcp", "add", "fxh", "--url", http_url)
        world.wait("fxs", "ready")
        world.wait("fxh", "ready")
        upstreams = {"stdio": (["--stdio", fixture], "fxs-"), "http": (["--url", http_url], "fxh-")}

        print("\n1. added latency, sequential echo of 1 KiB, ms")
        for name, (direct, prefix) in upstreams.items():
            d = client("latency", direct, "--calls", str(a.calls), "--size", "1024")
            t = client("latency", world.hosted, "--calls", str(a.calls), "--size", "1024", "--prefix", prefix)
            print(f"  {name:5} direct p50 {d['p50_ms']:.3f} p99 {d['p99_ms']:.3f} | through p50 "
                  f"{t['p50_ms']:.3f} p99 {t['p99_ms']:.3f} | added p50 {t['p50_ms'] - d['p50_ms']:+.3f} "
                  f"p99 {t['p99_ms'] - d['p99_ms']:+.3f}")

        print("\n2. throughput, 8 clients x 250 echo calls")
        d = client("throughput", upstreams["http"][0], "--clients", "8", "--calls", "250")
        t = client("throughput", world.hosted, "--clients", "8", "--calls", "250", "--prefix", "fxh-")
        ts = client("throughput", world.hosted, "--clients", "8", "--calls", "250", "--prefix", "fxs-")
        print(f"  http upstream: direct {d['calls_per_s']:.0f}/s, through {t['calls_per_s']:.0f}/s "
              f"= {100 * t['calls_per_s'] / d['calls_per_s']:.0f}% of direct")
        print(f"  stdio upstream through calyx: {ts['calls_per_s']:.0f}/s (no direct figure: a stdio "
              "server has one client)")

        print("\n3. large results: median of 3 calls, ms; calyx peak RSS above idle during the calls")
        for mib in (1, 32):
            for name, (direct, prefix) in upstreams.items():
                d = client("big", direct, "--mib", str(mib), "--runs", "3")
                idle = rss_kb(world.pid)
                reset_peak(world.pid)
                t = client("big", world.hosted, "--mib", str(mib), "--runs", "3", "--prefix", prefix)
                peak = hwm_kb(world.pid) - idle
                print(f"  {mib:2} MiB {name:5} direct {d['summary']['p50_ms']:8.1f} through "
                      f"{t['summary']['p50_ms']:8.1f} | peak RSS +{peak / 1024:.1f} MiB "
                      f"= {peak / 1024 / mib:.2f}x payload (idle {idle / 1024:.1f} MiB)")

        print("\n4. connect: server-everything over stdio, ms")
        if a.skip_everything or not os.path.exists(EVERYTHING):
            print(f"  SKIP: {EVERYTHING} missing (cargo test installs it) or --skip-everything")
        else:
            command = ["node", EVERYTHING, "stdio"]
            direct = [client("connect", ["--stdio", *command]) for _ in range(5)]
            world.run("mcp", "add", "ev", "--", *command)
            world.wait("ev", "ready")
            through = []
            for _ in range(5):
                world.run("mcp", "disable", "ev")
                world.wait("ev", "disabled")
                t0 = time.perf_counter()
                world.run("mcp", "enable", "ev")
                row = world.wait("ev", "ready")
                through.append((time.perf_counter() - t0) * 1000)
            own = sorted(x["tools_list_ms"] for x in direct)[2]
            total = sorted(through)[2]
            print(f"  direct spawn->tools/list median {own:.0f} (initialize {sorted(x['initialize_ms'] for x in direct)[2]:.0f}), "
                  f"{direct[0]['tools']} tools")
            print(f"  `calyx mcp enable` -> `{row['tools']} tools` median {total:.0f}: server {own:.0f}, calyx "
                  f"{total - own:.0f} (includes the `calyx mcp` and `calyx mcp list` processes and 10 ms polling)")
            world.run("mcp", "remove", "ev")

        print(f"\n5. idle: 10 hosted stdio servers, {a.idle_seconds} s")
        world.run("mcp", "remove", "fxs")
        world.run("mcp", "remove", "fxh")
        time.sleep(2)
        before = rss_kb(world.pid)
        for i in range(10):
            world.run("mcp", "add", f"idle{i}", "--", fixture)
        for i in range(10):
            world.wait(f"idle{i}", "ready")
        time.sleep(2)
        after = rss_kb(world.pid)
        c0, t0 = cpu_ticks(world.pid), time.time()
        time.sleep(a.idle_seconds)
        c1, t1 = cpu_ticks(world.pid), time.time()
        cpu = 100 * (c1 - c0) / os.sysconf("SC_CLK_TCK") / (t1 - t0)
        print(f"  calyx CPU {cpu:.2f}% ({c1 - c0} ticks in {t1 - t0:.0f} s); RSS {before / 1024:.1f} -> "
              f"{after / 1024:.1f} MiB = {(after - before) / 10:.0f} KiB per hosted server")
        for i in range(10):
            world.run("mcp", "remove", f"idle{i}")

        print("\n6. tools/list_changed, fixture -> agent session, 100 changes, ms")
        world.run("mcp", "add", "fxs", "--", fixture)
        world.wait("fxs", "ready")
        d = client("listchanged", ["--stdio", fixture], "--changes", "100")
        t = client("listchanged", world.hosted, "--changes", "100", "--prefix", "fxs-")
        print(f"  direct p50 {d['p50_ms']:.1f} p99 {d['p99_ms']:.1f} | through calyx p50 {t['p50_ms']:.1f} "
              f"p99 {t['p99_ms']:.1f} (calyx coalesces changes over 250 ms)")
        print(f"\nload average at end: {os.getloadavg()}")
    finally:
        world.stop()
        http_server.kill()


if __name__ == "__main__":
    main()
