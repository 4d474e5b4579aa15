#!/usr/bin/env python3
"""A pane printing 1 GiB: how long it takes, how much memory the server holds, whether a
neighbour pane keeps answering. A benchmark run by hand (docs/performance.md, "A pane printing
1 GiB"), not a test: a debug build takes minutes for this, so tests/e2e_mux.rs floods 40 MB.

One private calyx server; a real client attached in a PTY this script owns (its output is read
and thrown away, as a fast terminal would); a 200x50 session with two panes: the focused one
cats 1 MiB of mixed ANSI text (colors, wide characters, long lines) over and over until N bytes
are out, the other runs a shell. While the flood runs, the server's VmRSS is sampled every
0.2 s and every 2 s the neighbour is sent `echo ping-K` and the time until `calyx capture`
shows it is measured. The configured caps (scrollback_lines, scrollback_bytes) are the defaults
unless --scrollback-bytes is given.

usage: CALYX_BIN=target/release/calyx python3 scripts/bench-flood.py [--mib 1024]
"""
import argparse, fcntl, json, os, pty, select, signal, struct, subprocess, tempfile, termios, threading, time

from benchlib import rss_kb, wait_until

LINES = [
    "plain ascii text line with some words in it and a number {i}\n",
    "\x1b[1;32mgreen bold\x1b[0m \x1b[38;5;208morange\x1b[0m \x1b[48;2;10;20;30mtruecolor bg\x1b[0m {i}\n",
    "unicode: \u00e9\u00e8\u00ea \u4e2d\u6587\u5b57\u7b26 \u2713 \u2192 {i}\n",
    "    fn main() {{ println!(\"{i}\"); }} // code-like line with tabs\t\tand more {pad}\n",
]


def server_pid(runtime_dir):
    """The calyx server whose environment names our private runtime directory."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if b"server" in argv and runtime_dir.encode() in environ:
            return int(pid)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=1024, help="MiB the pane prints (default 1024)")
    ap.add_argument("--scrollback-bytes", type=int, default=None)
    ap.add_argument("--timeout", type=int, default=1800)
    a = ap.parse_args()
    calyx = os.environ.get("CALYX_BIN", "target/release/calyx")
    with tempfile.TemporaryDirectory(prefix="calyx-flood") as tmp:
        os.chmod(tmp, 0o700)
        run = os.path.join(tmp, "run")
        for d in ("run", "state", "cfg/calyx", "home"):
            os.makedirs(os.path.join(tmp, d), mode=0o700)
        if a.scrollback_bytes is not None:
            with open(os.path.join(tmp, "cfg/calyx/config.toml"), "w") as f:
                f.write(f"scrollback_bytes = {a.scrollback_bytes}\n")
        chunk = os.path.join(tmp, "chunk.txt")
        with open(chunk, "w") as f:
            i = 0
            while f.tell() < 1 << 20:
                f.write(LINES[i % 4].format(i=i, pad="x" * (i % 150)))
                i += 1
        chunk_bytes = os.path.getsize(chunk)
        repeats = (a.mib << 20) // chunk_bytes
        done = os.path.join(tmp, "done")
        env = dict(os.environ, XDG_RUNTIME_DIR=run, XDG_STATE_HOME=os.path.join(tmp, "state"),
                   XDG_CONFIG_HOME=os.path.join(tmp, "cfg"), HOME=os.path.join(tmp, "home"),
                   SHELL="/bin/sh", TERM="xterm-256color", PS1="$ ", ENV="")
        env.pop("TMUX", None)
        env.pop("CALYX", None)
        c = lambda *args: subprocess.run([calyx, *args], env=env, capture_output=True, text=True)

        # The attached client, in a 200x50 PTY whose output is drained.
        pid, fd = pty.fork()
        if pid == 0:
            os.execvpe(calyx, [calyx, "new", "-s", "flood"], env)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        stop = threading.Event()

        def drain():
            while not stop.is_set():
                r, _, _ = select.select([fd], [], [], 0.2)
                if r:
                    try:
                        if not os.read(fd, 1 << 16):
                            return
                    except OSError:
                        return

        threading.Thread(target=drain, daemon=True).start()
        spid = wait_until("server", lambda: server_pid(run), 30)
        wait_until("session", lambda: c("ls").returncode == 0, 30)
        if c("split", "-d", "-t", "flood", "--", "sh").returncode != 0:
            raise SystemExit("split failed")
        neighbour = json.loads(c("list-panes", "--json").stdout)[-1]["id"]
        rss_before = rss_kb(spid)
        cmd = f"i=0; while [ $i -lt {repeats} ]; do cat {chunk}; i=$((i+1)); done; echo FLOOD-DONE; touch {done}"
        start = time.time()
        c("send-keys", "-t", "flood:0.0", cmd, "Enter")
        peak, samples, pings, k = rss_before, 0, [], 0
        next_ping = start + 2
        while not os.path.exists(done):
            if time.time() - start > a.timeout:
                raise SystemExit("flood did not finish")
            peak = max(peak, rss_kb(spid))
            samples += 1
            if time.time() >= next_ping:
                k += 1
                t0 = time.time()
                c("send-keys", "-t", neighbour, f"echo ping-{k}", "Enter")
                wait_until(f"ping-{k}", lambda: f"ping-{k}" in c("capture", "-t", neighbour).stdout, 60)
                pings.append(time.time() - t0)
                next_ping = time.time() + 2
            time.sleep(0.2)
        elapsed = time.time() - start
        peak = max(peak, rss_kb(spid))
        wait_until("FLOOD-DONE on screen", lambda: "FLOOD-DONE" in c("capture", "-t", "flood:0.0").stdout, 60)
        rss_after = rss_kb(spid)
        # Reading the whole history back replays it into a parser with scrollback: that
        # allocation is the capture's, and shows separately.
        history = len(c("capture", "-t", "flood:0.0", "--scrollback").stdout.encode())
        rss_capture = rss_kb(spid)
        total = repeats * chunk_bytes
        print(f"calyx {calyx}: {total / (1 << 20):.0f} MiB through one focused 200x50 pane, client attached")
        print(f"  time {elapsed:.1f} s, {total / elapsed / 1e6:.1f} MB/s")
        print(f"  server RSS: {rss_before / 1024:.1f} MiB before, peak {peak / 1024:.1f} MiB during ({samples} samples), {rss_after / 1024:.1f} MiB after")
        print(f"  retained history: {history / (1 << 20):.2f} MiB of text; server RSS after capture --scrollback: {rss_capture / 1024:.1f} MiB")
        if pings:
            pings.sort()
            print(f"  neighbour pane echo while flooding: {len(pings)} pings, median {1000 * pings[len(pings) // 2]:.0f} ms, max {1000 * pings[-1]:.0f} ms")
        stop.set()
        c("kill-server")
        try:
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)
        except OSError:
            pass


if __name__ == "__main__":
    main()
