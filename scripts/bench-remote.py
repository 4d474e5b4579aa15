#!/usr/bin/env python3
"""Keystroke echo latency through `calyx --remote` over loopback SSH (issue 20, benchmark).

Starts a private sshd on 127.0.0.1 (host and user keys made here, a second "remote" HOME and
runtime directory set by sshd's SetEnv), then measures muxbench's echo latency (its raw-mode
echo program, its outer PTY, one key at a time) for, alternating in each round:

  calyx-remote  `calyx --remote HOST attach -t S` (ssh holds the terminal, `ssh -t`; the
                far side's `remote-bridge --tty` hands sshd's pty to the server, which reads
                and writes it itself: no calyx process relays on either machine)
  calyx-remote-framed  `calyx --remote HOST new -- ...`: the framed attach (a local calyx
                client reads the terminal and frames it; the bridge hands the SSH channel to
                the server), which `new` and remotes older than `--tty` still use
  calyx-remote-relay  the framed attach with CALYX_BRIDGE_RELAY=1: the bridge copies every
                frame (only when asked for: `calyx-remote-relay` on the command line)
  tmux-ssh      `ssh -t HOST tmux new-session ...` (the usual way: the multiplexer runs remote)
  calyx-local   `calyx new -- ...` (the same calyx attached locally: what the bridge adds)

A calyx target `KIND:PATH` (`calyx-remote:/tmp/old/calyx`) uses calyx built at PATH on both
sides, so two builds are compared in one run:
    python3 scripts/bench-remote.py tmux-ssh calyx-remote:/tmp/old/calyx calyx-remote:target/release/calyx

`--interleave` attaches every target at once and lets keys take turns between them (the order
rotating each key): on a shared VM whose speed drifts by tens of percent from minute to minute,
only that compares targets fairly.

usage: CALYX_BIN=target/release/calyx python3 scripts/bench-remote.py [--rounds N] [--keys N]
       [--interleave] [TARGET...]
"""
import argparse
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("MUXBENCH_DIR", os.path.join(HERE, "..", "..", "shared", "bench")))
import muxbench  # noqa: E402
from benchlib import echo_ms, quantile  # noqa: E402

HOST = "calyx-bench"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_sshd(tmp, calyx):
    """A private sshd in front of a remote world whose PATH has `calyx` and tmux; returns
    (process, ssh config path, remote world directory)."""
    for key in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(tmp, key)], check=True)
    os.rename(os.path.join(tmp, "user_key.pub"), os.path.join(tmp, "authorized_keys"))
    remote = os.path.join(tmp, "remote")
    bindir = os.path.join(remote, "bin")
    for sub in ("home", "config", "bin"):
        os.makedirs(os.path.join(remote, sub), exist_ok=True)
    os.symlink(os.path.abspath(calyx), os.path.join(bindir, "calyx"))
    os.makedirs("/run/sshd", exist_ok=True)
    port = free_port()
    env_line = " ".join([
        f"HOME={remote}/home", f"XDG_CONFIG_HOME={remote}/config",
        f"PATH={bindir}:/usr/local/bin:/usr/bin:/bin", "SHELL=/bin/sh", "LANG=C.UTF-8",
    ])
    with open(os.path.join(tmp, "sshd_config"), "w") as f:
        f.write(f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {tmp}/host_key\n"
                f"AuthorizedKeysFile {tmp}/authorized_keys\nPidFile {tmp}/sshd.pid\nStrictModes no\n"
                f"UsePAM no\nPermitRootLogin prohibit-password\nPrintMotd no\nSetEnv {env_line}\n"
                # calyx-remote-relay asks the bridge to relay instead of handing over; each
                # target's server has a runtime and state directory of its own (`remote_dirs`).
                f"AcceptEnv CALYX_BRIDGE_RELAY XDG_RUNTIME_DIR XDG_STATE_HOME\n")
    user = os.environ.get("USER", "root")
    config = os.path.join(tmp, "ssh_config")
    with open(config, "w") as f:
        f.write(f"Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n"
                f"  IdentityFile {tmp}/user_key\n  IdentitiesOnly yes\n"
                f"  UserKnownHostsFile {tmp}/known_hosts\n  StrictHostKeyChecking no\n"
                f"  LogLevel ERROR\n  BatchMode yes\n  SetEnv {remote_dirs(remote, 0)}\n")
    proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", os.path.join(tmp, "sshd_config")],
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, config, remote
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("sshd did not start")


def remote_dirs(remote, n):
    """The remote runtime and state directories of target `n`, as ssh's `SetEnv` value: with
    targets attached at once (`--interleave`), two builds of calyx must not share a server.
    Target 0 has `run` and `state`, the remote world's own (bench-machines.py starts its remote
    server there and reaches it through this ssh config)."""
    run, state = ("run", "state") if n == 0 else (f"run-{n}", f"state-{n}")
    for sub in (run, state):
        os.makedirs(os.path.join(remote, sub), mode=0o700, exist_ok=True)
    return f"XDG_RUNTIME_DIR={remote}/{run} XDG_STATE_HOME={remote}/{state}"


def use_binary(target, calyx, remote):
    """`KIND:PATH` runs calyx built at PATH on both sides (the remote world's `calyx` is pointed
    at it for the round), so two builds are compared in one run; returns (KIND, calyx)."""
    kind, _, path = target.partition(":")
    calyx = os.path.abspath(path) if path else calyx
    link = os.path.join(remote, "bin", "calyx")
    tmp_link = link + ".new"
    os.symlink(calyx, tmp_link)
    os.replace(tmp_link, link)
    return kind, calyx


class Attached:
    """One target attached in its own outer PTY, its echo program ready for keys."""

    def __init__(self, target, calyx, config, remote, n=0):
        self.name = target
        kind, self.calyx = use_binary(target, calyx, remote)
        self.tmp = tempfile.TemporaryDirectory()
        tmp = self.tmp.name
        os.chmod(tmp, 0o700)
        prog = os.path.join(tmp, "echo.py")
        with open(prog, "w") as f:
            f.write(muxbench.ECHO_PROG)
        self.env = env = muxbench.env_for(tmp)
        # ssh takes the first value of an option: this one before the config file's.
        dirs = f"-o {shlex.quote('SetEnv=' + remote_dirs(remote, n))}"
        env["CALYX_SSH"] = f"ssh -F {config} {dirs}"
        # The remote side reads the program from its own copy (the same machine here).
        cmd = ["sh", "-c", f"exec python3 {prog}"]
        ssh = ["ssh", "-F", config]
        calyx = self.calyx
        if kind == "calyx-remote-relay":
            # The bridge copies between the SSH channel and the server (before the handover).
            relay = f"-o {shlex.quote('SetEnv=CALYX_BRIDGE_RELAY=1 ' + remote_dirs(remote, n))}"
            env["CALYX_SSH"] = f"ssh -F {config} {relay}"
        if kind == "calyx-remote":
            # The session first, then the interactive attach (`new` keeps the framed path).
            # A name of its own each round: `kill-server` keeps the last round's as saved.
            name = "bench-" + os.path.basename(tmp).replace("_", "")
            new = [calyx, "--remote", HOST, "new", "-d", "-s", name, "--", *cmd]
            attach = [calyx, "--remote", HOST, "attach", "-t", name]
            script = f"{shlex.join(new)} && exec {shlex.join(attach)}"
            argv = ["sh", "-c", script]
            self.cleanup = [calyx, "--remote", HOST, "kill-server"]
        elif kind in ("calyx-remote-framed", "calyx-remote-relay"):
            argv = [calyx, "--remote", HOST, "new", "--", *cmd]
            self.cleanup = [calyx, "--remote", HOST, "kill-server"]
        elif kind == "tmux-ssh":
            sock = os.path.join(tmp, "tmux.sock")
            remote_cmd = " ".join(shlex.quote(a) for a in
                                  ["tmux", "-S", sock, "-f", "/dev/null", "new-session", *cmd])
            argv = [*ssh, "-t", HOST, remote_cmd]
            self.cleanup = [*ssh, HOST, f"tmux -S {shlex.quote(sock)} kill-server"]
        elif kind == "calyx-local":
            argv = [calyx, "new", "--", *cmd]
            self.cleanup = [calyx, "kill-server"]
        else:
            raise SystemExit(f"unknown target {target}")
        self.outer = muxbench.Outer(argv, env)
        self.typed = 0
        self.ready = self.outer.wait_for(b"READY", 30) >= 0
        if self.ready:
            self.outer.drain(1.0)

    def key(self):
        """Types one key and waits for its echo; the latency in ms, or None."""
        self.typed += 1
        took = echo_ms(self.outer, self.typed, 5)
        if took is not None:
            self.outer.drain(0.01)
        return took

    def close(self):
        self.outer.close()
        # Each target's calyx is its own build (KIND:PATH), so it stops its own server.
        subprocess.run(self.cleanup, env=self.env, capture_output=True, timeout=30)
        self.tmp.cleanup()


def measure(target, keys, calyx, config, remote):
    """One round of muxbench's echo test for `target`; the samples in ms."""
    attached = Attached(target, calyx, config, remote)
    samples = []
    if attached.ready:
        for _ in range(keys):
            took = attached.key()
            if took is None:
                break
            samples.append(took)
    attached.close()
    return samples


def measure_interleaved(targets, keys, calyx, config, remote):
    """One round with every target attached at once, keys taking turns between them (the
    order rotating each key), so a machine whose speed drifts (a shared VM) moves all
    targets alike; {target: samples in ms}."""
    samples = {t: [] for t in targets}
    # Each target starts its own remote server (`remote_dirs`) with its own build.
    attached = [Attached(t, calyx, config, remote, n) for n, t in enumerate(targets)]
    try:
        live = [a for a in attached if a.ready]
        for i in range(keys):
            for a in live[i % len(live):] + live[:i % len(live)]:
                took = a.key()
                if took is not None:
                    samples[a.name].append(took)
    finally:
        for a in attached:
            a.close()
    return samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keys", type=int, default=500)
    ap.add_argument("--size", default=None, metavar="ROWSxCOLS",
                    help="the outer terminal's size (muxbench's own by default)")
    ap.add_argument("--interleave", action="store_true",
                    help="attach every target at once and alternate keys between them")
    ap.add_argument("targets", nargs="*",
                    default=["calyx-remote", "calyx-remote-framed", "tmux-ssh", "calyx-local"])
    a = ap.parse_args()
    if a.size:
        rows, _, cols = a.size.partition("x")
        muxbench.ROWS, muxbench.COLS = int(rows), int(cols)
    calyx = os.path.abspath(os.environ.get("CALYX_BIN", "target/release/calyx"))
    with tempfile.TemporaryDirectory(prefix="calyx-bench-sshd") as tmp:
        proc, config, remote = start_sshd(tmp, calyx)
        try:
            pooled = {t: [] for t in a.targets}
            for r in range(a.rounds):
                if a.interleave:
                    got = measure_interleaved(a.targets, a.keys, calyx, config, remote)
                for target in a.targets:
                    if a.interleave:
                        samples = sorted(got[target])
                    else:
                        samples = sorted(measure(target, a.keys, calyx, config, remote))
                    if not samples:
                        print(f"round {r + 1} {target}: FAILED", flush=True)
                        continue
                    pooled[target] += samples
                    print(f"round {r + 1} {target}: p50_ms={quantile(samples, 0.5):.2f} "
                          f"p99_ms={quantile(samples, 0.99):.2f} n={len(samples)}", flush=True)
            for target, samples in pooled.items():
                if samples:
                    samples.sort()
                    print(f"echo {target} pooled n={len(samples)} p50_ms={quantile(samples, 0.5):.2f} "
                          f"p90_ms={quantile(samples, 0.9):.2f} p99_ms={quantile(samples, 0.99):.2f}",
                          flush=True)
        finally:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
