#!/usr/bin/env python3
"""Bytes a multiplexer sends the user's terminal for each echoed keystroke.

Runs muxbench's raw-mode echo program (each key answered with a 8-byte marker and a space) in a
200x50 pane, after a screenful of its mixed ANSI text, types KEYS keys one at a time, and
counts what arrives at the outer terminal per key. Over SSH these bytes are the bandwidth
typing costs.

usage: CALYX_BIN=target/release/calyx python3 scripts/bench-echo-bytes.py [KEYS] TARGET...
"""
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("MUXBENCH_DIR", os.path.join(HERE, "..", "..", "shared", "bench")))
import muxbench  # noqa: E402


def echo_bytes(target, keys):
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        payload = os.path.join(tmp, "screen.txt")
        muxbench.make_payload(payload, 1)
        prog = os.path.join(tmp, "echo.py")
        with open(prog, "w") as f:
            f.write(muxbench.ECHO_PROG)
        env = muxbench.env_for(tmp)
        cmd = f"head -c 20000 {payload}; exec python3 {prog}"
        argv, cleanup = muxbench.target_argv(target, cmd, tmp, env=env)
        outer = muxbench.Outer(argv, env)
        try:
            if outer.wait_for(b"READY", 30) < 0:
                return None
            outer.drain(1.0)
            sizes = []
            for i in range(keys):
                before = len(outer.buf)
                os.write(outer.fd, b"a")
                if outer.wait_for(b"@K%05d@" % (i + 1), 5, max(0, before - 16)) < 0:
                    return None
                outer.drain(0.05)
                sizes.append(len(outer.buf) - before)
            return sizes
        finally:
            outer.close()
            cleanup()


def main():
    args = sys.argv[1:]
    keys = int(args.pop(0)) if args and args[0].isdigit() else 100
    for target in args:
        sizes = echo_bytes(target, keys)
        if not sizes:
            print(f"echo-bytes {target} FAILED", flush=True)
            continue
        print(f"echo-bytes {target} median={statistics.median(sizes):.0f} "
              f"mean={statistics.mean(sizes):.0f} max={max(sizes)} n={len(sizes)}", flush=True)


if __name__ == "__main__":
    main()
