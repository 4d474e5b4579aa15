#!/usr/bin/env python3
"""Keystroke echo latency of several multiplexers, pooled over many interleaved rounds.

muxbench.py's latency figure is 200 keys per run, so its p99 is the second slowest key and
moves by milliseconds between runs of the same build. This runs muxbench's own latency test
(the same raw-mode echo program, the same outer PTY) ROUNDS times per target, alternating the
targets so both see the same machine, and reports the pooled percentiles and each round's p99.

A target `calyx:PATH` is calyx built at PATH, so two builds can be compared in one run:
    python3 scripts/bench-latency.py tmux calyx:/tmp/old/calyx calyx:target/release/calyx

usage: CALYX_BIN=target/release/calyx python3 scripts/bench-latency.py [--rounds N] [--keys N] [--flood] TARGET...
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("MUXBENCH_DIR", os.path.join(HERE, "..", "..", "shared", "bench")))
import muxbench  # noqa: E402
from benchlib import quantile, select_binary  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("targets", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--flood", action="store_true", help="with a neighbour pane running `yes`")
    a = ap.parse_args()
    pooled = {t: [] for t in a.targets}
    round_p99 = {t: [] for t in a.targets}
    default_bin = os.environ.get("CALYX_BIN")
    for r in range(a.rounds):
        for target in a.targets:
            kind = select_binary(target, default_bin)
            samples = muxbench.latency(kind, a.keys, flood=a.flood)
            if not samples or samples == "n/a":
                print(f"round {r + 1} {target}: FAILED", flush=True)
                continue
            samples.sort()
            pooled[target] += samples
            round_p99[target].append(quantile(samples, 0.99))
            print(f"round {r + 1} {target}: p50_ms={quantile(samples, 0.5):.2f} "
                  f"p99_ms={quantile(samples, 0.99):.2f} n={len(samples)}", flush=True)
    label = "latency-flood" if a.flood else "latency"
    for target, samples in pooled.items():
        if not samples:
            continue
        samples.sort()
        rounds = " ".join(f"{p:.2f}" for p in round_p99[target])
        print(f"{label} {target} pooled n={len(samples)} p50_ms={quantile(samples, 0.5):.2f} "
              f"p90_ms={quantile(samples, 0.9):.2f} p99_ms={quantile(samples, 0.99):.2f} "
              f"p99.9_ms={quantile(samples, 0.999):.2f}; per-round p99: {rounds}", flush=True)


if __name__ == "__main__":
    main()
