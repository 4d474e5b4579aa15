#!/usr/bin/env python3
"""Wall time from posix_spawn to waitpid of `calyx hook claude-code` and of hook-curl.sh, with
stdin from payload.json and stdout to /dev/null, no shell in front of calyx. The commands are
interleaved run by run so both see the same machine load. The figures include the cost of
spawning a process from Python (measure /bin/true the same way to see it).

usage: CALYX_BIN=target/release/calyx python3 spawnbench.py [RUNS]   (run in this directory)
"""
import os
import statistics
import sys
import time

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 500
CALYX = os.path.abspath(os.environ.get("CALYX_BIN", "../../target/release/calyx"))
COMMANDS = {
    "calyx hook claude-code": [CALYX, "hook", "claude-code"],
    "sh + curl": ["/bin/sh", "./hook-curl.sh"],
    "/bin/true (spawn cost)": ["/bin/true"],
}


def run(argv):
    stdin = os.open("payload.json", os.O_RDONLY)
    null = os.open("/dev/null", os.O_WRONLY)
    actions = [(os.POSIX_SPAWN_DUP2, stdin, 0), (os.POSIX_SPAWN_DUP2, null, 1)]
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    os.waitpid(pid, 0)
    elapsed = time.perf_counter() - start
    os.close(stdin)
    os.close(null)
    return elapsed


for argv in COMMANDS.values():
    for _ in range(20):
        run(argv)
times = {name: [] for name in COMMANDS}
for _ in range(RUNS):
    for name, argv in COMMANDS.items():
        times[name].append(run(argv))
for name, t in times.items():
    t.sort()
    print(
        f"{name:24s} p50 {statistics.median(t) * 1e3:6.2f} ms  mean {statistics.mean(t) * 1e3:6.2f} ms  "
        f"p90 {t[int(len(t) * 0.9)] * 1e3:6.2f} ms  min {t[0] * 1e3:5.2f} ms  ({len(t)} runs)"
    )
