#!/usr/bin/env python3
"""Saved machines' live links (issue 20 §2-§3, benchmark).

Starts a private sshd on 127.0.0.1 in front of a second "remote" calyx world (bench-remote.py's
start_sshd), a local calyx server that saved it (started with CALYX_SSH, as a user's shell
would give it), then measures:

  request   a real `calyx hook claude-code --approval` started on the remote machine, to the
            request listed by the local server (`Approvals` asked over its socket in a tight
            loop, so the figure includes one such round trip); each one is then denied from
            here over the link and the next starts once the hook exited. p50 over --runs.
  idle      with 5 saved machines (all linked and live, nothing changing): the local server's
            CPU time over --idle seconds (/proc/PID/stat), and the bytes its ssh processes
            moved meanwhile (/proc/PID/io rchar+wchar: keep-alives only, at most one every 15 s).

usage: MUXBENCH_DIR=../shared/bench CALYX_BIN=target/debug/calyx python3 scripts/bench-machines.py [--runs 20] [--idle 10]
"""
import argparse
import importlib.util
import json
import os
import socket
import struct
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("bench_remote", os.path.join(HERE, "bench-remote.py"))
bench_remote = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_remote)
from benchlib import quantile, wait_until  # noqa: E402

HOST = bench_remote.HOST
FIXTURES = os.path.join(HERE, "..", "fixtures", "payloads")


def world(base):
    """A calyx world's variables (runtime, state, config and home directories of its own)."""
    for sub in ("home", "run", "state", "config/calyx"):
        os.makedirs(os.path.join(base, sub), exist_ok=True)
    os.chmod(os.path.join(base, "run"), 0o700)
    return {
        "HOME": f"{base}/home", "XDG_RUNTIME_DIR": f"{base}/run", "XDG_STATE_HOME": f"{base}/state",
        "XDG_CONFIG_HOME": f"{base}/config", "PATH": os.environ.get("PATH", ""),
        "SHELL": "/bin/sh", "LANG": "C.UTF-8", "TERM": "xterm-256color",
    }


def calyx(binary, env, *args, stdin=None, check=True):
    return subprocess.run([binary, *args], env=env, input=stdin, capture_output=True, check=check)


class Socket:
    """The local server's client protocol: 4-byte length, tag 1, JSON."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)

    def ask(self, request):
        body = json.dumps({"Request": request}).encode()
        self.s.sendall(struct.pack(">I", len(body) + 1) + b"\x01" + body)
        while True:
            length = struct.unpack(">I", self._read(4))[0]
            frame = self._read(length)
            if frame[0] == 1:
                msg = json.loads(frame[1:])
                if "Response" in msg:
                    return msg["Response"]

    def _read(self, n):
        out = b""
        while len(out) < n:
            chunk = self.s.recv(n - len(out))
            if not chunk:
                raise SystemExit("the server closed the connection")
            out += chunk
        return out


def payload(name):
    with open(os.path.join(FIXTURES, name)) as f:
        p = json.load(f)["payload"]
    p["session_id"] = "bench-machines"
    return p


def wait(what, check, seconds=30):
    # Every 10 ms: the request's arrival is timed by this poll.
    return wait_until(what, check, seconds, interval=0.01)


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def io_bytes(pid):
    total = 0
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith(("rchar:", "wchar:")):
                total += int(line.split()[1])
    return total


def children(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--idle", type=float, default=10.0)
    a = ap.parse_args()
    binary = os.path.abspath(os.environ.get("CALYX_BIN", "target/debug/calyx"))
    with tempfile.TemporaryDirectory(prefix="calyx-bench-machines") as tmp:
        proc, config, remote_dir = bench_remote.start_sshd(tmp, binary)
        remote = world(remote_dir)
        remote["PATH"] = f"{remote_dir}/bin:" + remote["PATH"]
        local = world(os.path.join(tmp, "local"))
        local["CALYX_SSH"] = f"ssh -F {config}"
        try:
            calyx(binary, remote, "new", "-d", "-s", "far")
            panes = json.loads(calyx(binary, remote, "list-panes", "--json").stdout)
            surface = panes[0]["surface_id"]
            hook_env = dict(remote, CALYX_SURFACE_ID=surface)
            start = json.dumps(payload("claude-2.1.197-SessionStart.json")).encode()
            calyx(binary, hook_env, "hook", "claude-code", stdin=start)
            calyx(binary, local, "machine", "add", "build", HOST)
            calyx(binary, local, "new", "-d", "-s", "near")
            sock = Socket(os.path.join(local["XDG_RUNTIME_DIR"], "calyx", "server.sock"))

            def live(names):
                machines = sock.ask({"Machines": {"reload": False}})["Json"]["machines"]
                return all(any(m["name"] == n and m["state"] == "live" for m in machines) for n in names)

            wait("the link to build live", lambda: live(["build"]))

            def remote_pending():
                rows = sock.ask({"Approvals": {"pending_only": True}})["Json"]["pending"]
                return [r for r in rows if r.get("machine") == "build"]

            request = json.dumps(payload("claude-2.1.197-PermissionRequest.json")).encode()
            samples = []
            for _ in range(a.runs):
                began = time.monotonic()
                hook = subprocess.Popen([binary, "hook", "claude-code", "--approval"], env=hook_env,
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                hook.stdin.write(request)
                hook.stdin.close()
                seen = wait("the remote request here", remote_pending)
                samples.append((time.monotonic() - began) * 1000)
                machine, number = seen[0]["id"].split(":")
                sock.ask({"Decide": {"id": int(number), "allow": False, "message": None,
                                     "machine": machine, "answered_from": None}})
                hook.wait(timeout=30)
                wait("the request gone here", lambda: not remote_pending())
            samples.sort()
            print(f"request remote hook -> listed here: n={len(samples)} p50_ms={quantile(samples, 0.5):.1f} "
                  f"p90_ms={quantile(samples, 0.9):.1f} max_ms={samples[-1]:.1f}", flush=True)

            # Idle: 5 saved machines, all live, nothing changing.
            for i in range(2, 6):
                calyx(binary, local, "machine", "add", f"m{i}", HOST)
            names = ["build"] + [f"m{i}" for i in range(2, 6)]
            wait("5 links live", lambda: live(names))
            pid = sock.ask("ServerVersion")["Json"]["pid"]
            ssh = [p for p in children(pid) if "ssh" in open(f"/proc/{p}/comm").read()]
            time.sleep(1)
            hz = os.sysconf("SC_CLK_TCK")
            ticks0, io0, t0 = cpu_ticks(pid), sum(io_bytes(p) for p in ssh), time.monotonic()
            time.sleep(a.idle)
            ticks1, io1, t1 = cpu_ticks(pid), sum(io_bytes(p) for p in ssh), time.monotonic()
            cpu = (ticks1 - ticks0) / hz / (t1 - t0) * 100
            print(f"idle 5 saved machines over {t1 - t0:.1f} s: local server cpu={cpu:.2f}% "
                  f"({ticks1 - ticks0} ticks), {len(ssh)} ssh processes moved {io1 - io0} bytes", flush=True)
        finally:
            for env in (local, remote):
                calyx(binary, env, "kill-server", check=False)
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
