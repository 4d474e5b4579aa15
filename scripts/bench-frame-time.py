#!/usr/bin/env python3
"""Where a keystroke's echo goes inside the calyx server, from its trace log.

Runs muxbench's raw-mode echo program in a 200x50 calyx pane (after 20 KB of its mixed ANSI
text, so frames carry a full screen), types KEYS keys one at a time like muxbench's latency
test, and reads the server's trace log (CALYX_LOG=calyx=trace) for:
  - frame: compose + diff + emit time of each frame ("frame for client N in T"),
  - per key: input -> pane output (writer thread, pty, program, reader thread) and
    pane output -> frame sent (owner wake-up + frame).
The log timestamps show what the server spends, independent of the client hops; the echo
figures are end to end, like muxbench's.

usage: CALYX_BIN=target/release/calyx python3 scripts/bench-frame-time.py [KEYS]
"""
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("MUXBENCH_DIR", os.path.join(HERE, "..", "..", "shared", "bench")))
import muxbench  # noqa: E402


def quantile(values, q):
    return values[min(len(values) - 1, int(len(values) * q))] if values else float("nan")


def main():
    keys = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    binary = os.environ.get("CALYX_BIN", "calyx")
    tmp = tempfile.mkdtemp()
    os.chmod(tmp, 0o700)
    try:
        prog = os.path.join(tmp, "echo.py")
        with open(prog, "w") as f:
            f.write(muxbench.ECHO_PROG)
        fill = os.path.join(tmp, "fill.txt")
        muxbench.make_payload(fill, 1)
        env = muxbench.env_for(tmp)
        env["CALYX_LOG"] = "calyx=trace"
        argv, cleanup = muxbench.target_argv(
            "calyx", f"head -c 20000 {fill}; exec python3 {prog}", tmp, env=env
        )
        outer = muxbench.Outer(argv, env)
        if outer.wait_for(b"READY", 30) < 0:
            raise SystemExit("calyx did not start")
        outer.drain(1.0)
        echo = []
        for i in range(keys):
            marker = b"@K%05d@" % (i + 1)
            start = max(0, len(outer.buf) - 16)
            t0 = time.monotonic()
            os.write(outer.fd, b"a")
            if outer.wait_for(marker, 5, start) < 0:
                break
            echo.append((time.monotonic() - t0) * 1000)
            outer.drain(0.01)
        outer.close()
        cleanup()
        with open(os.path.join(tmp, "state/calyx/server.log")) as f:
            log = f.read().splitlines()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    frames, events = [], []
    unit = {"µs": 1, "ms": 1000, "ns": 0.001, "s": 1e6}
    for line in log:
        m = re.search(r"frame for client \d+ in ([0-9.]+)(µs|ms|ns|s)", line)
        if m:
            frames.append(float(m.group(1)) * unit[m.group(2)])
        m = re.match(r"(\S+)\s.*?(input from client|output from pane|frame for client)", line)
        if m:
            t = datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).timestamp() * 1000
            events.append((t, m.group(2)))
    to_output, to_frame = [], []
    for i, (t0, what) in enumerate(events):
        if what != "input from client":
            continue
        out = next((t for t, w in events[i + 1:] if w == "output from pane"), None)
        frame = next((t for t, w in events[i + 1:] if w == "frame for client" and out and t >= out), None)
        if out is not None and frame is not None:
            to_output.append(out - t0)
            to_frame.append(frame - out)
    for v in (frames, echo, to_output, to_frame):
        v.sort()
    print(f"{binary}: {len(frames)} frames, frame p50 {quantile(frames, .5):.0f} us, "
          f"p90 {quantile(frames, .9):.0f} us, mean {statistics.mean(frames):.0f} us")
    print(f"  server: input -> pane output p50 {quantile(to_output, .5):.2f} ms, "
          f"p99 {quantile(to_output, .99):.2f} ms; pane output -> frame p50 "
          f"{quantile(to_frame, .5):.2f} ms, p99 {quantile(to_frame, .99):.2f} ms")
    print(f"  echo end to end: p50 {quantile(echo, .5):.2f} ms, p99 {quantile(echo, .99):.2f} ms, n={len(echo)}")


if __name__ == "__main__":
    main()
