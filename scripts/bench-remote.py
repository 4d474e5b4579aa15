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

usage: CALYX_BIN=target/release/calyx python3 scripts/bench-remote.py [--rounds N] [--keys N] [TARGET...]
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
from benchlib import quantile  # noqa: E402

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
    for sub in ("home", "run", "state", "config", "bin"):
        os.makedirs(os.path.join(remote, sub), exist_ok=True)
    os.chmod(os.path.join(remote, "run"), 0o700)
    os.symlink(os.path.abspath(calyx), os.path.join(bindir, "calyx"))
    os.makedirs("/run/sshd", exist_ok=True)
    port = free_port()
    env_line = " ".join([
        f"HOME={remote}/home", f"XDG_RUNTIME_DIR={remote}/run", f"XDG_STATE_HOME={remote}/state",
        f"XDG_CONFIG_HOME={remote}/config", f"PATH={bindir}:/usr/local/bin:/usr/bin:/bin",
        "SHELL=/bin/sh", "LANG=C.UTF-8",
    ])
    with open(os.path.join(tmp, "sshd_config"), "w") as f:
        f.write(f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {tmp}/host_key\n"
                f"AuthorizedKeysFile {tmp}/authorized_keys\nPidFile {tmp}/sshd.pid\nStrictModes no\n"
                f"UsePAM no\nPermitRootLogin prohibit-password\nPrintMotd no\nSetEnv {env_line}\n"
                # calyx-remote-relay asks the bridge to relay instead of handing over.
                f"AcceptEnv CALYX_BRIDGE_RELAY\n")
    user = os.environ.get("USER", "root")
    config = os.path.join(tmp, "ssh_config")
    with open(config, "w") as f:
        f.write(f"Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n"
                f"  IdentityFile {tmp}/user_key\n  IdentitiesOnly yes\n"
                f"  UserKnownHostsFile {tmp}/known_hosts\n  StrictHostKeyChecking no\n"
                f"  LogLevel ERROR\n  BatchMode yes\n")
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


def measure(target, keys, calyx, config, remote):
    """One round of muxbench's echo test for `target`; the samples in ms."""
    target, calyx = use_binary(target, calyx, remote)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        prog = os.path.join(tmp, "echo.py")
        with open(prog, "w") as f:
            f.write(muxbench.ECHO_PROG)
        env = muxbench.env_for(tmp)
        env["CALYX_SSH"] = f"ssh -F {config}"
        # The remote side reads the program from its own copy (the same machine here).
        cmd = ["sh", "-c", f"exec python3 {prog}"]
        ssh = ["ssh", "-F", config]
        if target == "calyx-remote-relay":
            # The bridge copies between the SSH channel and the server (before the handover).
            env["CALYX_SSH"] = f"ssh -F {config} -o SetEnv=CALYX_BRIDGE_RELAY=1"
        if target == "calyx-remote":
            # The session first, then the interactive attach (`new` keeps the framed path).
            # A name of its own each round: `kill-server` keeps the last round's as saved.
            name = "bench-" + os.path.basename(tmp).replace("_", "")
            new = [calyx, "--remote", HOST, "new", "-d", "-s", name, "--", *cmd]
            attach = [calyx, "--remote", HOST, "attach", "-t", name]
            script = f"{shlex.join(new)} && exec {shlex.join(attach)}"
            argv = ["sh", "-c", script]
            cleanup = [calyx, "--remote", HOST, "kill-server"]
        elif target in ("calyx-remote-framed", "calyx-remote-relay"):
            argv = [calyx, "--remote", HOST, "new", "--", *cmd]
            cleanup = [calyx, "--remote", HOST, "kill-server"]
        elif target == "tmux-ssh":
            sock = os.path.join(tmp, "tmux.sock")
            remote_cmd = " ".join(shlex.quote(a) for a in
                                  ["tmux", "-S", sock, "-f", "/dev/null", "new-session", *cmd])
            argv = [*ssh, "-t", HOST, remote_cmd]
            cleanup = [*ssh, HOST, f"tmux -S {shlex.quote(sock)} kill-server"]
        elif target == "calyx-local":
            argv = [calyx, "new", "--", *cmd]
            cleanup = [calyx, "kill-server"]
        else:
            raise SystemExit(f"unknown target {target}")
        outer = muxbench.Outer(argv, env)
        samples = []
        if outer.wait_for(b"READY", 30) >= 0:
            outer.drain(1.0)
            for i in range(keys):
                marker = b"@K%05d@" % (i + 1)
                start = max(0, len(outer.buf) - 16)
                t0 = time.monotonic()
                os.write(outer.fd, b"a")
                if outer.wait_for(marker, 5, start) < 0:
                    break
                samples.append((time.monotonic() - t0) * 1000)
                outer.drain(0.01)
        outer.close()
        subprocess.run(cleanup, env=env, capture_output=True, timeout=30)
        return samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keys", type=int, default=500)
    ap.add_argument("targets", nargs="*",
                    default=["calyx-remote", "calyx-remote-framed", "tmux-ssh", "calyx-local"])
    a = ap.parse_args()
    calyx = os.path.abspath(os.environ.get("CALYX_BIN", "target/release/calyx"))
    with tempfile.TemporaryDirectory(prefix="calyx-bench-sshd") as tmp:
        proc, config, remote = start_sshd(tmp, calyx)
        try:
            pooled = {t: [] for t in a.targets}
            for r in range(a.rounds):
                for target in a.targets:
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
