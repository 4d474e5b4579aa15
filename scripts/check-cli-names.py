#!/usr/bin/env python3
"""Fails when a string literal in src/ (outside tests) is an agent CLI's name.

Issue 14: what calyx knows about each agent CLI lives in the `integrations` crate, where
`AgentKind` names them once; the root crate passes the enum. A literal such as "codex" in
src/ is per-CLI knowledge in the wrong place (or a kind travelling as a string again).
Test code is exempt: files named tests.rs or *_tests.rs, and the item after `#[cfg(test)]`.
Text shown to people that merely mentions a CLI ("Gemini's hook can only deny") is not a
name literal and is not flagged; only a literal that is exactly a CLI's name is.

Usage: scripts/check-cli-names.py [ROOT]   (ROOT defaults to the repository)
"""
import pathlib
import re
import sys

# Every AgentKind name (integrations/src/kind.rs), and the other spellings CLIs go by.
NAMES = {
    "claude-code", "claude", "codex", "gemini", "opencode", "copilot", "cursor",
    "cursor-agent", "grok", "kimi", "hermes", "pi", "antigravity", "agy",
}
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def code_lines(text):
    """The file's lines with test-only items blanked (line numbers kept)."""
    lines = text.split("\n")
    out = list(lines)
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith("#[cfg(test)]"):
            out[i] = ""
            j = i + 1
            depth = 0
            opened = False
            while j < len(lines):
                line = lines[j]
                out[j] = ""
                depth += line.count("{") - line.count("}")
                opened = opened or "{" in line
                if (not opened and line.rstrip().endswith(";")) or (opened and depth <= 0):
                    break
                j += 1
            i = j + 1
            continue
        i += 1
    return out


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    found = []
    for path in sorted((root / "src").rglob("*.rs")):
        if path.name == "tests.rs" or path.name.endswith("_tests.rs") or "tests" in path.relative_to(root / "src").parts[:-1]:
            continue
        for number, line in enumerate(code_lines(path.read_text()), 1):
            if line.lstrip().startswith("//"):
                continue
            for literal in LITERAL.findall(line):
                if literal.lower() in NAMES:
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    if found:
        print("CLI names as string literals in src/ (put the knowledge in integrations/, use AgentKind):")
        print("\n".join(found))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
