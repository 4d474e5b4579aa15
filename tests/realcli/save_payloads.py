#!/usr/bin/env python3
"""Saves the hook payloads a real-CLI run sent to calyx whose event fixtures/payloads/ does not
cover yet, so the unit tests grow with every CLI release.

    save_payloads.py CLI VERSION RUN_DIR FIXTURES_DIR

RUN_DIR is one CLI's directory of tests/realcli/suite.sh: payloads.jsonl (written by the calyx
server under CALYX_CAPTURE_PAYLOADS), home/ and project/. An event is covered when any file
FIXTURES_DIR/<cli>-<any version>-<event>.json or FIXTURES_DIR/new/<cli>-*-<event>.json exists.
New ones are written to FIXTURES_DIR/new/<cli>-<version>-<event>.json in the fixtures' wrapper
format, with the run's paths replaced by the neutral ones fixtures/payloads uses (/home/dev,
/home/dev/src/app). Prints one line: what it saved, or that everything was covered.
"""
import glob
import json
import os
import re
import sys

# calyx's agent kinds -> the CLI names the fixture files start with.
PREFIX = {"claude-code": "claude"}


def event_name(cli, line):
    """The fixture-style event name of a captured line (None when it cannot be told)."""
    p = line.get("payload")
    if not isinstance(p, dict):
        return None
    if cli == "opencode":
        if isinstance(p.get("type"), str):
            return "event_" + p["type"]
        if isinstance(p.get("hook"), str):
            return p["hook"]
    if cli == "pi" and isinstance(p.get("event"), dict) and isinstance(p["event"].get("type"), str):
        return p["event"]["type"]
    for key in ("hook_event_name", "hookName", "event_name"):
        if isinstance(p.get(key), str):
            return p[key]
    return line.get("event")


def neutral(value, maps):
    if isinstance(value, str):
        for old, new in maps:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [neutral(v, maps) for v in value]
    if isinstance(value, dict):
        return {k: neutral(v, maps) for k, v in value.items()}
    return value


def path_maps(run_dir):
    """Longest first; each absolute path also in Claude Code's encoded form (-tmp-x-...)."""
    run_dir = os.path.realpath(run_dir)
    base = [
        (os.path.join(run_dir, "project"), "/home/dev/src/app"),
        (os.path.join(run_dir, "home"), "/home/dev"),
        (run_dir, "/tmp/calyx-realcli"),
    ]
    cache = os.environ.get("REALCLI_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "calyx-realcli")
    base.append((cache, "/home/dev/.cache/calyx-realcli"))
    maps = []
    for old, new in base:
        maps.append((old, new))
        maps.append((re.sub(r"[^A-Za-z0-9]", "-", old), re.sub(r"[^A-Za-z0-9]", "-", new)))
    return sorted(maps, key=lambda m: -len(m[0]))


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    kind, version, run_dir, fixtures = sys.argv[1:5]
    cli = PREFIX.get(kind, kind)
    capture = os.path.join(run_dir, "payloads.jsonl")
    if not os.path.exists(capture):
        print(f"realcli {cli} payloads (info): no capture file")
        return 0
    covered = set()
    for path in glob.glob(os.path.join(fixtures, f"{cli}-*.json")) + glob.glob(
            os.path.join(fixtures, "new", f"{cli}-*.json")):
        m = re.match(rf"{re.escape(cli)}-[0-9][^-]*-(.+)\.json$", os.path.basename(path))
        if m:
            covered.add(m.group(1))
    maps = path_maps(run_dir)
    saved, seen = [], set()
    for raw in open(capture, encoding="utf-8", errors="replace"):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        name = event_name(line.get("cli", kind), line)
        if not name:
            continue
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        seen.add(safe)
        if safe in covered:
            continue
        covered.add(safe)
        os.makedirs(os.path.join(fixtures, "new"), exist_ok=True)
        out = os.path.join(fixtures, "new", f"{cli}-{version}-{safe}.json")
        wrapper = {
            "cli": cli,
            "version": version,
            "event": name,
            "route": line.get("route"),
            "source": "tests/realcli/suite.sh (calyx's own hooks, CALYX_CAPTURE_PAYLOADS)",
            "payload": neutral(line.get("payload"), maps),
        }
        with open(out, "w", encoding="utf-8") as f:
            json.dump(wrapper, f, indent=2)
            f.write("\n")
        saved.append(os.path.relpath(out, os.path.dirname(fixtures.rstrip("/"))))
    if saved:
        print(f"realcli {cli} payloads (info): {len(saved)} new event(s) saved: {' '.join(saved)}"
              " (add them to integrations/src/events/tests.rs and commit)")
    else:
        print(f"realcli {cli} payloads (info): all {len(seen)} event(s) seen are covered by fixtures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
