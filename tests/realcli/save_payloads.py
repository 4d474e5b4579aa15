#!/usr/bin/env python3
"""Saves the hook payloads a real-CLI run sent to calyx whose *shape* fixtures/payloads/ does not
cover yet, so the unit tests grow with every CLI release and drift inside a known event (a field
added, renamed, removed or changing type) is kept, not only a new event name.

    save_payloads.py [--source NAME] CLI VERSION RUN_DIR FIXTURES_DIR
    save_payloads.py --shape FILE...          (prints each fixture's event and shape; for people)

RUN_DIR is one CLI's run directory of a tests/realcli/ script: payloads.jsonl (written by the calyx
server under CALYX_CAPTURE_PAYLOADS), home/ and project/. A payload is covered when a file
FIXTURES_DIR/<cli>-*.json or FIXTURES_DIR/new/<cli>-*.json has the same event name and the same
shape: the set of key paths with the JSON type of each value (values themselves ignored), see
`shape`. New shapes are written to FIXTURES_DIR/new/<cli>-<version>-<event>[-<shape id>].json in
the fixtures' wrapper format, with the run's paths replaced by the neutral ones fixtures/payloads
uses (/home/dev, /home/dev/src/app). A payload whose event cannot be told (it names none, and no
calyx server read it, or calyx could not) is covered by a fixture of any event with its shape,
else saved as <cli>-<version>-unnamed-<shape id>.json with "event": null: the unit test then
requires calyx to read an event from it.
Prints one line: what it saved, or that everything was covered.
"""
import glob
import hashlib
import json
import os
import re
import sys

# calyx's agent kinds -> the CLI names the fixture files start with.
PREFIX = {"claude-code": "claude"}

# How deep paths go (an object key or an array's elements is one level). 3 reaches e.g. OpenCode's
# properties.info.parentID (how calyx tells a child session), Claude's
# permission_suggestions[].type and pi's event.message.role; below that are conversation
# histories, model requests and tool results, whose inner shape is content, not the hook's schema.
MAX_DEPTH = 3

# A key that is data rather than schema (a header name, a path, an id used as a key) stands as
# `*`, so two runs with different data have the same shape.
SCHEMA_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def event_name(cli, line):
    """The fixture-style event name of a captured line (None when it cannot be told)."""
    p = line.get("payload")
    if not isinstance(p, dict):
        return None
    if cli == "opencode":
        if isinstance(p.get("type"), str):
            return "event:" + p["type"]
        if isinstance(p.get("hook"), str):
            return p["hook"]
    if cli == "pi" and isinstance(p.get("event"), dict) and isinstance(p["event"].get("type"), str):
        return p["event"]["type"]
    for key in ("hook_event_name", "hookName", "event_name", "hookEventName"):
        if isinstance(p.get(key), str):
            return p[key]
    return line.get("event")


def json_type(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def shape(value, path="", depth=0, out=None):
    """The set of `path:type` strings of a JSON value: every object key and array element down to
    MAX_DEPTH levels (`a.b.c`, `a.b[]`), the elements of an array merged. Values are ignored, so two payloads of the same
    schema have the same shape whatever they carry."""
    if out is None:
        out = set()
    if path:
        out.add(f"{path}:{json_type(value)}")
    if depth >= MAX_DEPTH:
        return out
    if isinstance(value, dict):
        for key, sub in value.items():
            key = key if SCHEMA_KEY.match(key) else "*"
            shape(sub, f"{path}.{key}" if path else key, depth + 1, out)
    elif isinstance(value, list):
        for sub in value:
            shape(sub, f"{path}[]", depth + 1, out)
    return out


def shape_id(event, shp):
    return hashlib.sha256(json.dumps([event, sorted(shp)]).encode()).hexdigest()[:8]


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


def path_maps(run_dir, fixtures):
    """Longest first; each absolute path also in Claude Code's encoded form (-tmp-x-...) and
    relative to / (tmp/x/...). The
    calyx checkout (a pane started from it shows in MCP answers) becomes /home/dev/src/calyx."""
    run_dir = os.path.realpath(run_dir)
    base = [
        (os.path.join(run_dir, "project"), "/home/dev/src/app"),
        (os.path.join(run_dir, "home"), "/home/dev"),
        (run_dir, "/tmp/calyx-realcli"),
    ]
    checkout = os.path.dirname(os.path.dirname(os.path.realpath(fixtures)))
    if checkout.count("/") >= 2:
        base.append((checkout, "/home/dev/src/calyx"))
    cache = os.environ.get("REALCLI_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "calyx-realcli")
    base.append((cache, "/home/dev/.cache/calyx-realcli"))
    maps = []
    for old, new in base:
        maps.append((old, new))
        maps.append((re.sub(r"[^A-Za-z0-9]", "-", old), re.sub(r"[^A-Za-z0-9]", "-", new)))
        # relative to / (OpenCode's session `path` when the project is in no git repository)
        maps.append((old.lstrip("/"), new.lstrip("/")))
    return sorted(maps, key=lambda m: -len(m[0]))


def fixture_shapes(cli, fixtures):
    """{(event, frozenset shape)} of every fixture file of this CLI, captured or saved (event
    None for a saved payload that named none)."""
    covered = set()
    for path in glob.glob(os.path.join(fixtures, f"{cli}-*.json")) + glob.glob(
            os.path.join(fixtures, "new", f"{cli}-*.json")):
        try:
            wrapper = json.load(open(path, encoding="utf-8"))
        except (OSError, ValueError) as e:
            print(f"realcli {cli} payloads: cannot read {path}: {e}", file=sys.stderr)
            continue
        covered.add((event_name(cli, wrapper), frozenset(shape(wrapper.get("payload")))))
    return covered


def main(argv):
    if argv[:1] == ["--shape"]:
        for path in argv[1:]:
            wrapper = json.load(open(path, encoding="utf-8"))
            cli = wrapper.get("cli", "")
            print(path, event_name(cli, wrapper), " ".join(sorted(shape(wrapper.get("payload")))))
        return 0
    source = "tests/realcli/suite.sh"
    if argv[:1] == ["--source"] and len(argv) > 1:
        source, argv = argv[1], argv[2:]
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    kind, version, run_dir, fixtures = argv
    cli = PREFIX.get(kind, kind)
    capture = os.path.join(run_dir, "payloads.jsonl")
    if not os.path.exists(capture):
        print(f"realcli {cli} payloads (info): no capture file")
        return 0
    covered = fixture_shapes(cli, fixtures)
    maps = path_maps(run_dir, fixtures)
    saved, seen = [], set()
    for raw in open(capture, encoding="utf-8", errors="replace"):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        name = event_name(cli, line)
        key = (name, frozenset(shape(line.get("payload"))))
        seen.add(key)
        # A payload with no event name to tell (a Copilot payload where nothing ran calyx's
        # inference, or one calyx could not read) is covered by any fixture of the same shape.
        if key in covered or (name is None and any(s == key[1] for _, s in covered)):
            continue
        covered.add(key)
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name or "unnamed")
        os.makedirs(os.path.join(fixtures, "new"), exist_ok=True)
        out = os.path.join(fixtures, "new", f"{cli}-{version}-{safe}.json")
        if os.path.exists(out) or name is None:  # tell shapes of one event apart
            out = os.path.join(fixtures, "new", f"{cli}-{version}-{safe}-{shape_id(*key)}.json")
        wrapper = {
            "cli": cli,
            "version": version,
            "event": name,
            "route": line.get("route"),
            "source": f"{source} (calyx's own hooks, CALYX_CAPTURE_PAYLOADS)",
            "payload": neutral(line.get("payload"), maps),
        }
        with open(out, "w", encoding="utf-8") as f:
            json.dump(wrapper, f, indent=2)
            f.write("\n")
        saved.append(os.path.relpath(out, os.path.dirname(fixtures.rstrip("/"))))
    if saved:
        print(f"realcli {cli} payloads (info): {len(saved)} new shape(s) saved: {' '.join(saved)}"
              " (sort them into integrations/src/events/tests.rs and commit)")
    else:
        print(f"realcli {cli} payloads (info): all {len(seen)} shape(s) seen are covered by fixtures")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
