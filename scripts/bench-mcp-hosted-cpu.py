#!/usr/bin/env python3
"""calyx's CPU per forwarded hosted call: 8 clients x N `echo` calls through a real calyx server
to the fixture over a Streamable HTTP upstream and a stdio upstream, alternating, with the
server's utime+stime (from /proc/PID/stat) before and after each batch. On a busy machine this
says more than the calls/s share of scripts/bench-mcp-hosted.py (figure 2), whose direct
baseline swings with the load (docs/performance.md, "Session 13").

usage: python3 scripts/bench-mcp-hosted-cpu.py [--calls 1000] [--rounds 2] [--profile release]
"""
import argparse
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
_spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "bench-mcp-hosted.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1000, help="calls per client")
    ap.add_argument("--rounds", type=int, default=2, help="HTTP then stdio, this many times")
    ap.add_argument("--profile", default="release", help="target/<profile> holding the programs")
    a = ap.parse_args()
    bench.BIN["dir"] = os.path.join(bench.ROOT, "target", a.profile)
    calyx = os.path.join(bench.BIN["dir"], "calyx")
    fixture = os.path.join(bench.BIN["dir"], "examples", "mcp_fixture")
    world = bench.World(calyx)
    server, url = bench.http_fixture()
    hz = os.sysconf("SC_CLK_TCK")
    try:
        world.run("mcp", "add", "fxh", "--url", url)
        world.run("mcp", "add", "fxs", "--", fixture)
        world.wait("fxh", "ready")
        world.wait("fxs", "ready")
        for _ in range(a.rounds):
            for name, prefix in (("http", "fxh-"), ("stdio", "fxs-")):
                before = bench.cpu_ticks(world.pid)
                t = bench.client("throughput", world.hosted, "--clients", "8", "--calls",
                                 str(a.calls), "--prefix", prefix)
                ticks = bench.cpu_ticks(world.pid) - before
                print(f"{a.profile} {name:5} {t['calls_per_s']:.0f} calls/s, calyx CPU "
                      f"{1000 * ticks / hz / t['calls']:.3f} ms per call "
                      f"(load {os.getloadavg()[0]:.1f})")
    finally:
        server.kill()
        world.stop()


if __name__ == "__main__":
    main()
