#!/usr/bin/env python3
"""Server idle CPU and memory, calyx beside tmux, in one run.

For each multiplexer: one server with 16 panes in a 200x50 session, each pane having printed
10,000 lines of the mixed ANSI text muxbench.py uses, then sitting idle at a shell prompt.
Reports the server's RSS (VmRSS) and its CPU time over an idle window.

usage: CALYX_BIN=target/release/calyx python3 scripts/bench-idle-memory.py [--idle-seconds 60]
"""
import argparse, os, subprocess, tempfile, time

from benchlib import rss_kb

LINES = [
    "plain ascii text line with some words in it and a number {i}\n",
    "\x1b[1;32mgreen bold\x1b[0m \x1b[38;5;208morange\x1b[0m \x1b[48;2;10;20;30mtruecolor bg\x1b[0m {i}\n",
    "unicode: \u00e9\u00e8\u00ea \u4e2d\u6587\u5b57\u7b26 \u2713 \u2192 {i}\n",
    "    fn main() {{ println!(\"{i}\"); }} // code-like line with tabs\t\tand more\n",
]
PANES = 16


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_until(check, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        v = check()
        if v:
            return v
        time.sleep(0.2)
    raise SystemExit("timed out")


def measure(name, pid, idle):
    time.sleep(2)  # let the last frames settle before the idle window starts
    rss = rss_kb(pid)
    anon, file = rss_kb(pid, "RssAnon"), rss_kb(pid, "RssFile")
    t0, c0 = time.time(), cpu_ticks(pid)
    time.sleep(idle)
    c1, t1 = cpu_ticks(pid), time.time()
    hz = os.sysconf("SC_CLK_TCK")
    cpu = 100.0 * (c1 - c0) / hz / (t1 - t0)
    print(f"{name}: server RSS {rss / 1024:.1f} MiB (private {anon / 1024:.1f}, from files {file / 1024:.1f}) "
          f"with {PANES} panes x 10000 lines; idle CPU {cpu:.2f}% over {t1 - t0:.0f}s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--idle-seconds", type=int, default=60)
    a = ap.parse_args()
    calyx = os.environ.get("CALYX_BIN", "calyx")
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        text = os.path.join(tmp, "lines.txt")
        with open(text, "w") as f:
            for i in range(10000):
                f.write(LINES[i % 4].format(i=i))
        cmd = f"cat {text}; exec sh"
        env = dict(os.environ, XDG_RUNTIME_DIR=tmp, XDG_STATE_HOME=os.path.join(tmp, "state"),
                   XDG_CONFIG_HOME=os.path.join(tmp, "cfg"), HOME=tmp, SHELL="/bin/sh", TERM="xterm-256color")
        env.pop("TMUX", None)

        # tmux with history-limit 10000
        conf = os.path.join(tmp, "tmux.conf")
        with open(conf, "w") as f:
            f.write("set -g history-limit 10000\n")
        sock = os.path.join(tmp, "tmux.sock")
        t = ["tmux", "-S", sock, "-f", conf]
        subprocess.run(t + ["new-session", "-d", "-x", "200", "-y", "50", "sh", "-c", cmd], env=env, check=True)
        for _ in range(PANES - 1):
            subprocess.run(t + ["split-window", "-d", "sh", "-c", cmd], env=env, check=False)
            subprocess.run(t + ["select-layout", "tiled"], env=env, check=False)
        pid = int(subprocess.run(t + ["display", "-p", "#{pid}"], env=env, capture_output=True, text=True).stdout)
        wait_until(lambda: len(subprocess.run(t + ["list-panes"], env=env, capture_output=True, text=True).stdout.splitlines()) == PANES)
        time.sleep(3)
        measure("tmux " + subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip(), pid, a.idle_seconds)
        subprocess.run(t + ["kill-server"], env=env)

        # calyx: 16 panes in one 200x50 session (4 windows of 4 panes, like tmux's tiled 16)
        c = lambda *args: subprocess.run([calyx, *args], env=env, capture_output=True, text=True)
        c("new", "-d", "-s", "bench", "-x", "200", "-y", "50", "--", "sh", "-c", cmd)
        made = 1
        for w in range(4):
            if w > 0:
                c("new-window", "-d", "-t", "bench", "--", "sh", "-c", cmd)
                made += 1
            for _ in range(3):
                if c("split", "-d", "-t", f"bench:{w}", "--", "sh", "-c", cmd).returncode == 0:
                    made += 1
        sock = os.path.join(tmp, "calyx", "server.sock")
        pid = int(subprocess.run(["pgrep", "-f", f"{calyx} server"], capture_output=True, text=True).stdout.split()[0])
        wait_until(lambda: all("9999" in c("capture", "-t", f"bench:{w}.{p}").stdout for w in range(4) for p in range(4)))
        measure(f"calyx (panes={made})", pid, a.idle_seconds)
        c("kill-server")


if __name__ == "__main__":
    main()
