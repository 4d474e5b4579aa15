"""What the benchmark scripts in this folder share: reading a process's memory from /proc."""


def rss_kb(pid):
    """The resident set size of process `pid` in KiB (0 when /proc does not say)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0
