#!/usr/bin/env python3
"""Pane throughput of several multiplexers: the median of several interleaved runs, with the spread.

muxbench.py's throughput figure is the median of 3 runs of one target after another, so a burst
of load from another process lands on one target and not the others, and nothing says how far
the runs were apart. This runs muxbench's own throughput test (the same 200x50 outer PTY, the
same mixed ANSI text, `cat FILE; printf MARKER` in one pane, the clock stopped when the marker
reaches the outer terminal) ROUNDS times per target, alternating the targets in each round so
all see the same machine, and prints each run, each target's median, minimum, maximum and
spread ((max - min) / median), and the ratios of the medians.

A target `calyx:PATH` is calyx built at PATH, so two builds can be compared in one run:
    python3 scripts/bench-throughput.py raw tmux calyx:/tmp/old/calyx calyx:target/release/calyx

usage: CALYX_BIN=target/release/calyx python3 scripts/bench-throughput.py [--mb N] [--rounds N] TARGET...
TARGET is raw, tmux, zellij, calyx or calyx:PATH (see muxbench.py).
"""
import argparse
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("MUXBENCH_DIR", os.path.join(HERE, "..", "..", "shared", "bench")))
import muxbench  # noqa: E402
from benchlib import select_binary  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("targets", nargs="+")
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    default_bin = os.environ.get("CALYX_BIN")
    rates = {t: [] for t in a.targets}
    with tempfile.TemporaryDirectory() as data:
        payload = os.path.join(data, "payload.txt")
        muxbench.make_payload(payload, a.mb)
        for r in range(a.rounds):
            for target in a.targets:
                kind = select_binary(target, default_bin)
                seconds = muxbench.throughput(kind, payload, a.mb)
                if not seconds:
                    print(f"round {r + 1} {target}: FAILED", flush=True)
                    continue
                rates[target].append(a.mb / seconds)
                print(f"round {r + 1} {target}: {a.mb / seconds:.1f} MB/s ({seconds:.2f} s)", flush=True)
    medians = {}
    for target, values in rates.items():
        if not values:
            print(f"throughput {target} FAILED")
            continue
        med = statistics.median(values)
        medians[target] = med
        spread = (max(values) - min(values)) / med
        runs = " ".join(f"{v:.1f}" for v in values)
        print(f"throughput {target} median_MB/s={med:.1f} min={min(values):.1f} max={max(values):.1f} "
              f"spread={100 * spread:.0f}% runs={len(values)} [{runs}]", flush=True)
    calyxes = [t for t in medians if t.startswith("calyx")]
    others = [t for t in medians if not t.startswith("calyx")]
    for c in calyxes:
        for o in others:
            print(f"ratio {c} / {o} = {medians[c] / medians[o]:.2f}x", flush=True)


if __name__ == "__main__":
    main()
