"""What the benchmark scripts in this folder share: reading a process's memory from /proc,
quantiles, polling with a deadline, pointing muxbench at the calyx binary a `calyx:PATH` target
names, and timing one key's echo."""

import os
import time


def rss_kb(pid, field="VmRSS"):
    """The resident set size of process `pid` in KiB (0 when /proc does not say). `field` picks
    another line of /proc/PID/status: `RssAnon` (private memory: heaps, stacks) or `RssFile`
    (pages mapped from files, mostly the executable's code, shared with every process that runs
    the same binary and dropped by the kernel when memory is short)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def quantile(sorted_values, q):
    """The value at quantile `q` of an already sorted, non-empty list."""
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def select_binary(target, default_bin):
    """Points muxbench at the calyx binary a `calyx:PATH` target names (a plain `calyx` after
    one must not inherit its binary); returns the target's kind."""
    kind, _, binary = target.partition(":")
    if binary:
        os.environ["CALYX_BIN"] = os.path.abspath(binary)
    elif default_bin is not None:
        os.environ["CALYX_BIN"] = default_bin
    else:
        os.environ.pop("CALYX_BIN", None)
    return kind


def wait_until(what, check, timeout, interval=0.05):
    """Polls `check` every `interval` seconds until it returns something truthy, which is
    returned; exits naming `what` after `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = check()
        if got:
            return got
        time.sleep(interval)
    raise SystemExit(f"timed out waiting for {what}")


def echo_ms(outer, n, timeout):
    """Types key number `n` (an `a`) into muxbench's echo program through its outer terminal
    `outer` and waits for the echo's marker (`@Knnnnn@`); the milliseconds that took, or None
    when it did not come within `timeout` seconds."""
    marker = b"@K%05d@" % n
    start = max(0, len(outer.buf) - 16)
    t0 = time.monotonic()
    os.write(outer.fd, b"a")
    if outer.wait_for(marker, timeout, start) < 0:
        return None
    return (time.monotonic() - t0) * 1000
