#!/usr/bin/env python3
"""Fails when modules of a crate import each other in a circle (issue 14).

Granularity: one node per module. A file is a module; a folder is its `mod.rs`; an inline
`mod name { ... }` (usually `#[cfg(test)] mod tests`) is a module of its own, so a test module's
`use super::*` never closes a circle. An edge A -> B is any path in A's code that names an item
of B: `use` trees (also `pub use` re-exports) and paths written inline (`crate::a::b::f()`,
`super::x::T`, `child::T` for a child module of A). A path counts for the deepest module it
passes through (`crate::server::model::state::Client` is an edge to `model/state.rs`, and
`crate::agents::BLOCKED_GRACE` one to `agents/mod.rs`). Not edges: a parent's `mod child;`
declaration, comments and doc links, string literals, and method calls (`self.request(..)` on
a type declared elsewhere names no module). Re-exports are not followed: a child that takes a
sibling's item through `super::Item` depends on its parent, so siblings import each other by
their own path.

Usage: scripts/check-module-cycles.py [crate src dir ...]   (default: every crate of the
workspace). Exit status 1 and a list of the circles (with the lines that make each edge) when
there is one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CRATES = ["src", "pty/src", "tui/src", "integrations/src"]
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
KEYWORDS = {"crate", "super", "self", "Self"}
# Circles known and owned elsewhere, reported but not failed on. Each entry says how it goes.
KNOWN: dict[frozenset[str], str] = {}
STRICT = "--strict" in sys.argv


def strip_code(text: str) -> str:
    """The source with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and not re.match(r"[A-Za-z0-9_]", text[i - 1 : i]):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}'), else a lifetime.
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Module:
    def __init__(self, path: tuple[str, ...], file: Path, inline: bool = False):
        self.path = path
        self.file = file
        self.inline = inline
        self.children: set[str] = set()

    def label(self, src: Path) -> str:
        rel = self.file.relative_to(ROOT) if self.file.is_relative_to(ROOT) else self.file
        if self.inline:
            return f"{rel}::{'::'.join(self.path[len(self.path) - self.inline:])}"
        return str(rel)


class Crate:
    def __init__(self, src: Path):
        self.src = src
        self.modules: dict[tuple[str, ...], Module] = {}
        # (module path, stripped code of the module's own lines, line offset) per module.
        self.bodies: dict[tuple[str, ...], list[tuple[int, str]]] = {}
        # Per module: name -> the path its `pub use` re-export points at (from that module).
        self.reexports: dict[tuple[str, ...], dict[str, list[str]]] = {}
        for root in ("lib.rs", "main.rs"):
            f = src / root
            if f.exists():
                # The binary is a crate of its own: its modules live under a separate root.
                base = () if root == "lib.rs" else ("<bin>",)
                self.load(base, f, mod_rs=True)
        for path, lines in self.bodies.items():
            text = "\n".join(line for _, line in lines)
            for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", text):
                for segs, name in use_paths(m.group(1)):
                    if segs[0] not in ("crate", "super", "self") and segs[0] in self.modules[path].children:
                        segs = ["self"] + segs
                    if segs[0] in ("crate", "super", "self"):
                        self.reexports.setdefault(path, {})[name] = segs

    def load(self, path: tuple[str, ...], file: Path, mod_rs: bool) -> None:
        module = Module(path, file)
        self.modules[path] = module
        code = strip_code(file.read_text())
        self.scan(module, code, file, mod_rs)

    def scan(self, module: Module, code: str, file: Path, mod_rs: bool) -> None:
        """Splits a file into its module and inline modules, and loads `mod x;` children."""
        lines = code.split("\n")
        # Stack of (module path, brace depth at which its block closes).
        stack: list[tuple[tuple[str, ...], int]] = [(module.path, -1)]
        depth = 0
        pending_attr_path: str | None = None
        raw_lines = file.read_text().split("\n")
        for lineno, line in enumerate(lines, 1):
            current = stack[-1][0]
            raw = raw_lines[lineno - 1] if lineno - 1 < len(raw_lines) else ""
            m_attr = re.search(r'#\[path\s*=\s*"([^"]+)"\]', raw)
            if m_attr:
                pending_attr_path = m_attr.group(1)
            m_decl = re.match(rf"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+({IDENT})\s*;", line)
            m_inline = re.match(rf"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+({IDENT})\s*\{{", line)
            if m_decl:
                name = m_decl.group(1)
                self.modules[current].children.add(name)
                in_inline = len(stack) > 1
                if pending_attr_path:
                    child = file.parent / pending_attr_path
                    child_mod_rs = child.name == "mod.rs"
                else:
                    base = file.parent if mod_rs else file.parent / file.stem
                    for part in current[len(module.path):]:
                        base = base / part
                    child = base / f"{name}.rs"
                    child_mod_rs = False
                    if not child.exists():
                        child = base / name / "mod.rs"
                        child_mod_rs = True
                del in_inline
                pending_attr_path = None
                if child.exists():
                    self.load(current + (name,), child, child_mod_rs)
                self.body(current).append((lineno, ""))
                continue
            if m_inline:
                name = m_inline.group(1)
                self.modules[current].children.add(name)
                inner = current + (name,)
                inline = Module(inner, file, inline=len(inner) - len(module.path))
                self.modules[inner] = inline
                # The rest of the line after `{` belongs to the inline module.
                depth += line.count("{") - line.count("}")
                stack.append((inner, depth - 1))
                pending_attr_path = None
                continue
            if not m_attr and line.strip() and not line.strip().startswith("#["):
                pending_attr_path = None
            self.body(current).append((lineno, line))
            depth += line.count("{") - line.count("}")
            while len(stack) > 1 and depth <= stack[-1][1]:
                stack.pop()

    def body(self, path: tuple[str, ...]) -> list[tuple[int, str]]:
        return self.bodies.setdefault(path, [])

    def resolve(
        self, start: tuple[str, ...], segments: list[str], depth: int = 0
    ) -> tuple[str, ...] | None:
        """The deepest module a path from `start` passes through, or None if it leaves the
        crate (std, dependencies) or names nothing known."""
        if not segments:
            return None
        base = ("<bin>",) if start[:1] == ("<bin>",) else ()
        head, rest = segments[0], segments[1:]
        if head == "crate":
            here = base
        elif head == "self":
            here = start
        elif head == "super":
            here = start[:-1]
            while rest and rest[0] == "super":
                here, rest = here[:-1], rest[1:]
        elif head in self.modules.get(start, Module((), Path())).children:
            here, rest = start + (head,), rest
        else:
            return None
        for i, seg in enumerate(rest):
            if here + (seg,) in self.modules:
                here = here + (seg,)
                continue
            # An item: where a re-export (`pub use x::Item`) of this module points, if one does.
            target = self.reexports.get(here, {}).get(seg)
            if target is not None and depth < 8:
                return self.resolve(here, target + rest[i + 1 :], depth + 1)
            break
        return here if here in self.modules else None


def use_paths(tree: str) -> list[tuple[list[str], str]]:
    """Expands a `use` tree (`a::{b, c::{d as e, self}}`) into its leaf paths, each with the
    name it binds (`e` for `d as e`)."""
    tree = re.sub(r"\s+", " ", tree).strip()

    def expand(prefix: list[str], s: str) -> list[tuple[list[str], str]]:
        out = []
        for part in split_top(s):
            part = part.strip()
            if not part:
                continue
            m = re.match(r"^(.*?)(?:::)?\s*\{(.*)\}$", part, re.S)
            if m:
                head = [x.strip() for x in m.group(1).split("::") if x.strip()]
                out += expand(prefix + head, m.group(2))
                continue
            alias = None
            m = re.match(rf"^(.*?)\s+as\s+({IDENT})$", part)
            if m:
                part, alias = m.group(1), m.group(2)
            segs = [x.strip() for x in part.split("::") if x.strip() and x.strip() != "*"]
            full = prefix + segs
            if full and full[-1] == "self":
                full = full[:-1]
            if full:
                out.append((full, alias or full[-1]))
        return out

    return expand([], tree)


def split_top(s: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def edges_of(crate: Crate) -> dict[tuple, dict[tuple, list[str]]]:
    edges: dict[tuple, dict[tuple, list[str]]] = {}
    for path, lines in crate.bodies.items():
        module = crate.modules[path]
        text = "\n".join(line for _, line in lines)
        numbers = [n for n, _ in lines]

        def add(target, offset):
            if target is None or target == path:
                return
            # A module may use its ancestors (as Rust lets a child see its parent's private
            # items): the parent is the shared base of its folder. Only --strict counts these.
            if not STRICT and target == path[: len(target)]:
                return
            line = numbers[text.count("\n", 0, offset)] if numbers else 0
            shown = module.file.relative_to(ROOT) if module.file.is_relative_to(ROOT) else module.file
            where = f"{shown}:{line}"
            edges.setdefault(path, {}).setdefault(target, []).append(where)

        taken = []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            taken.append((m.start(), m.end()))
            for segs, _ in use_paths(m.group(1)):
                add(crate.resolve(path, segs), m.start())
        for m in re.finditer(rf"(?<![\w:])({IDENT}(?:\s*::\s*{IDENT})+)", text):
            if any(a <= m.start() < b for a, b in taken):
                continue
            segs = [s for s in re.split(r"\s*::\s*", m.group(1))]
            if segs[0] in KEYWORDS or segs[0] in module.children:
                add(crate.resolve(path, segs), m.start())
    return edges


def cycles(nodes, edges):
    """Tarjan's strongly connected components of more than one module."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main(argv: list[str]) -> int:
    crates = argv or DEFAULT_CRATES
    found = 0
    for rel in crates:
        src = (ROOT / rel).resolve()
        crate = Crate(src)
        edges = edges_of(crate)
        for comp in cycles(sorted(crate.modules), edges):
            members = set(comp)
            labels = frozenset(crate.modules[m].label(src) for m in comp)
            if labels in KNOWN:
                print(f"known import circle in {rel} ({KNOWN[labels]}), not failed on:")
            else:
                found += 1
                print(f"import circle in {rel} ({len(comp)} modules):")
            for a in sorted(comp):
                for b, wheres in sorted(edges.get(a, {}).items()):
                    if b in members:
                        print(
                            f"  {crate.modules[a].label(src)} -> {crate.modules[b].label(src)}"
                            f"  ({', '.join(wheres[:3])}{', ...' if len(wheres) > 3 else ''})"
                        )
        if "-v" in sys.argv:
            print(f"{rel}: {len(crate.modules)} modules, {sum(len(e) for e in edges.values())} edges")
    if found:
        print(f"{found} import circle(s): modules must not import each other back", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main([a for a in sys.argv[1:] if a not in ("-v", "--strict")]))
