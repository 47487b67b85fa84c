#!/usr/bin/env python3
"""Measures the structure of `src/`: what issue 53 counts.

1. Circles among the files of src/: file A uses file B when a path in A
   (`use crate::...`, `use super::...`, `use self::...`, a child module's
   name, or the same paths written inline in code, like
   `crate::bot::usage::human_bytes(...)` or `super::groups::read_stat`)
   names something B defines. A folder's `mod.rs` is the folder's file, and
   a path through a `pub use` re-export leads on to the file that defines
   the item, so a facade that only re-exports is not itself part of a
   circle. The tests' modules (`#[cfg(test)] mod ...`) are not read. Each
   circle is a set of files that reach each other (a strongly connected
   component), printed with the arrows that make it.
2. Functions outside the tests' modules longer than 80 lines (from the
   `fn` line to its closing brace), longest first.
3. The pairs that `duplicates` finds over the whole tree (if installed).

Prints the three counts; exits 0 unless `--check` is given and a count is
over its bound (no circle, no long function, at most 150 pairs).
tests/layers.rs fails on a circle by itself, outside its allowed list.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
from collections import defaultdict

LONG = 80
MOST_PAIRS = 150


def strip(text):
    """`text` with comments, strings and char literals blanked to spaces
    (newlines kept, so line numbers and braces still count)."""
    out = []
    i, n = 0, len(text)

    def blank(s):
        return "".join("\n" if c == "\n" else " " for c in s)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
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
            out.append(blank(text[i:j]))
            i = j
        elif re.match(r'b?r#*"', text[i:i + 40]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(b?r)(#*)"', text[i:])
            hashes = m.group(2)
            start = i + m.end()
            end = text.find('"' + hashes, start)
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('""' + blank(text[i + 2:end]))
            i = end
        elif c == '"' or (c == "b" and text.startswith('b"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + blank(text[i + 2:j + 1]))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", text[i:], re.S)
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:  # a lifetime
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(code, open_at):
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def blank_tests(code):
    """`code` with the bodies of `#[cfg(test)]` modules blanked."""
    for m in reversed(list(re.finditer(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", code))):
        end = matching_brace(code, m.end() - 1)
        code = code[: m.start()] + "".join("\n" if c == "\n" else " " for c in code[m.start(): end + 1]) + code[end + 1:]
    return code


def expand_use(tree):
    """The paths of a use tree: `a::{b, c::{d, e as f}}` -> [a::b, a::c::d, a::c::e]."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    paths = []

    def walk(prefix, s):
        parts, depth, cur = [], 0, ""
        for ch in s:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch == "{"
            depth -= ch == "}"
            cur += ch
        parts.append(cur)
        for part in parts:
            if not part:
                continue
            if "{" in part:
                head, rest = part.split("{", 1)
                walk(prefix + [x for x in head.split("::") if x], rest[:-1])
            else:
                segs = [x for x in part.split("::") if x]
                paths.append(prefix if segs == ["self"] else prefix + segs)

    walk([], tree)
    return [p for p in paths if p and p[-1] != "*" or len(p) > 1]


class Crate:
    def __init__(self, src):
        self.src = src
        self.files = {}  # module path tuple -> file
        for root, _, names in os.walk(src):
            for name in names:
                if not name.endswith(".rs"):
                    continue
                path = os.path.join(root, name)
                rel = os.path.relpath(path, src)
                if rel in ("main.rs",) or rel.startswith("bin" + os.sep):
                    continue
                parts = rel[:-3].split(os.sep)
                if parts[-1] == "mod":
                    parts = parts[:-1]
                if parts == ["lib"]:
                    parts = []
                self.files[tuple(parts)] = path
        self.module = {f: m for m, f in self.files.items()}
        self.code = {}
        for f in self.files.values():
            with open(f, encoding="utf-8") as fh:
                self.code[f] = blank_tests(strip(fh.read()))
        self.reexports = {f: self.read_reexports(f) for f in self.files.values()}

    def children(self, module):
        n = len(module)
        return {m[n] for m in self.files if len(m) == n + 1 and m[:n] == module}

    def uses(self, f):
        """(paths of `use` items, code without them) of file f."""
        code = self.code[f]
        paths = []
        for m in re.finditer(r"\buse\s+([^;]*);", code):
            prefix = code[max(0, m.start() - 20): m.start()]
            public = re.search(r"pub(\([^)]*\))?\s*$", prefix) is not None
            for p in expand_use(m.group(1)):
                paths.append((p, public, code[: m.start()].count("\n") + 1))
        rest = re.sub(r"\buse\s+[^;]*;", lambda m: "".join("\n" if c == "\n" else " " for c in m.group(0)), code)
        return paths, rest

    def read_reexports(self, f):
        """name -> absolute path of what `pub use` re-exports under it."""
        out = {}
        module = self.module[f]
        for p, public, _ in self.uses(f)[0]:
            if not public or not p:
                continue
            absolute = self.absolute(module, p)
            if absolute:
                out[p[-1]] = absolute
        return out

    def absolute(self, module, path):
        """A path as written in `module`, made absolute (a list of names
        from the crate root), or None when it leaves the crate."""
        first = path[0]
        if first in ("crate", "$crate"):
            return list(path[1:])
        if first == "self":
            return list(module) + list(path[1:])
        if first == "super":
            base, rest = list(module), list(path)
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
            return base + rest
        if first in self.children(module):
            return list(module) + list(path)
        return None

    def resolve(self, path, seen=None):
        """The file that defines what an absolute path names."""
        seen = seen or set()
        module = ()
        rest = list(path)
        while rest and module + (rest[0],) in self.files:
            module += (rest.pop(0),)
        f = self.files[module]
        if rest and rest[0] in self.reexports[f] and (f, rest[0]) not in seen:
            seen.add((f, rest[0]))
            return self.resolve(self.reexports[f][rest[0]] + rest[1:], seen)
        return f

    def nested(self, a, b):
        """Whether one of two files is the other's module or inside it: a
        folder's mod.rs and the files of its folder are one unit (it
        declares and re-exports them, they share what it defines), so the
        arrows between them are not counted."""
        ma, mb = self.module[a], self.module[b]
        n = min(len(ma), len(mb))
        return ma[:n] == mb[:n]

    def edges(self):
        """file -> {used file: first line that uses it}."""
        graph = defaultdict(dict)
        inline = re.compile(r"(?<![\w:$])(\$?crate|super|self)((?:::(?:super|\w+))+)")
        for f, module in self.module.items():
            paths, rest = self.uses(f)
            found = [(p, line) for p, public, line in paths if not public or p[0] not in self.children(module)]
            for m in inline.finditer(rest):
                found.append(([m.group(1)] + m.group(2).split("::")[1:], rest[: m.start()].count("\n") + 1))
            kids = self.children(module)
            if kids:
                child = re.compile(r"(?<![\w:$])(" + "|".join(sorted(kids)) + r")((?:::\w+)+)")
                for m in child.finditer(rest):
                    found.append(([m.group(1)] + m.group(2).split("::")[1:], rest[: m.start()].count("\n") + 1))
            for p, line in found:
                absolute = self.absolute(module, p)
                if absolute is None:
                    continue
                target = self.resolve(absolute)
                if self.nested(f, target):
                    continue
                if target not in graph[f]:
                    graph[f][target] = line
        return graph


def circles(graph):
    """The strongly connected components with more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    nodes = sorted(set(graph) | {t for ts in graph.values() for t in ts})
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in nodes:
        if v not in index:
            visit(v)
    return sorted(out)


def long_functions(crate):
    found = []
    for f in sorted(crate.code):
        code = crate.code[f]
        for m in re.finditer(r"\bfn\s+(\w+)", code):
            # the body: the first `{` after the signature that is not in a
            # `where` or generic bound (signatures hold no braces), unless
            # a `;` comes first (a declaration in a trait).
            brace, semi = code.find("{", m.end()), code.find(";", m.end())
            if brace < 0 or (0 <= semi < brace):
                continue
            end = matching_brace(code, brace)
            first = code[: m.start()].count("\n") + 1
            last = code[: end].count("\n") + 1
            length = last - first + 1
            if length > LONG:
                found.append((length, f, m.group(1), first))
    found.sort(key=lambda x: (-x[0], x[1], x[3]))
    return found


def duplicate_pairs(root):
    try:
        out = subprocess.run(["duplicates", "--repo", root, "--seconds", "300"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        return None, "duplicates is not installed"
    first = out.splitlines()[0] if out else ""
    m = re.search(r"(\d+) pairs?", first)
    if m:
        return int(m.group(1)), first
    if first.startswith("no duplicates"):
        return 0, first
    return None, first


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if any count is over its bound")
    parser.add_argument("--no-duplicates", action="store_true", help="skip the duplicates count (it takes a while)")
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    args = parser.parse_args()
    root = os.path.normpath(args.root)
    src = os.path.join(root, "src")
    crate = Crate(src)
    graph = crate.edges()
    rel = lambda f: os.path.relpath(f, root)

    found = circles(graph)
    print(f"circles among the files of src/: {len(found)}")
    for component in found:
        print("  " + " <-> ".join(rel(f) for f in component))
        for a in component:
            for b, line in sorted(graph[a].items()):
                if b in component:
                    print(f"    {rel(a)}:{line} -> {rel(b)}")

    long = long_functions(crate)
    print(f"functions outside the tests over {LONG} lines: {len(long)}")
    for length, f, name, line in long:
        print(f"  {length:4} {rel(f)}:{line} {name}")

    pairs = None
    if not args.no_duplicates:
        pairs, said = duplicate_pairs(root)
        print(f"duplicates: {pairs if pairs is not None else '?'} pairs ({said})")

    if args.check:
        over = bool(found) or bool(long) or (pairs is not None and pairs > MOST_PAIRS)
        sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
