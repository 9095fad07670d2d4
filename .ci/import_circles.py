#!/usr/bin/env python3
"""Fails when files of a crate import each other in a circle.

Reads every `use crate::…`, `use super::…` and `crate::…` path in the `.rs` files under the
given source folder, maps each path to the file that defines its longest module prefix, and
reports every strongly connected group of two or more files. A file's own `mod` children count
as the same file's layer only through the paths it uses, never through `mod` lines.

Usage: python3 .ci/import_circles.py prism-tools/src
"""

import re
import sys
from pathlib import Path

USE = re.compile(r"\buse\s+((?:crate|super)::[^;]*);", re.S)
PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def module_of(root: Path, file: Path) -> list[str]:
    parts = list(file.relative_to(root).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return parts


def file_of(root: Path, segments: list[str]) -> Path | None:
    """The file defining the longest prefix of `segments` that is a module."""
    for end in range(len(segments), 0, -1):
        base = root.joinpath(*segments[:end])
        for candidate in (base.with_suffix(".rs"), base / "mod.rs"):
            if candidate.is_file():
                return candidate
    return None


def flatten(tree: str) -> list[str]:
    """`crate::a::{b, c::{d, e}}` -> `crate::a::b`, `crate::a::c::d`, `crate::a::c::e`."""
    tree = re.sub(r"\s+", "", tree)
    out: list[str] = []

    def walk(prefix: str, text: str) -> None:
        brace = text.find("{")
        if brace < 0:
            out.append(prefix + text)
            return
        head, body = text[:brace], text[brace + 1 : text.rindex("}")]
        depth, start = 0, 0
        for i, ch in enumerate(body + ","):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                item = body[start:i]
                if item:
                    walk(prefix + head, item)
                start = i + 1

    walk("", tree)
    return out


def edges(root: Path) -> dict[Path, set[Path]]:
    graph: dict[Path, set[Path]] = {}
    for file in sorted(root.rglob("*.rs")):
        text = re.sub(r"//[^\n]*", "", file.read_text())
        here = module_of(root, file)
        targets: set[Path] = set()
        paths = [p for tree in USE.findall(text) for p in flatten(tree)]
        paths += [m.group(1) + m.group(2) for m in PATH.finditer(text)]
        for path in paths:
            segments = [s for s in path.split("::") if s]
            if segments[0] == "crate":
                absolute = segments[1:]
            else:
                # `super` from a `mod.rs` or `lib.rs` is the parent of its folder's module.
                absolute = here[:]
                while segments and segments[0] == "super":
                    segments.pop(0)
                    absolute = absolute[:-1]
                absolute += segments
            target = file_of(root, absolute)
            if target is not None and target != file:
                targets.add(target)
        graph[file] = targets
    return graph


def circles(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """Tarjan's strongly connected components, iteratively, of size two or more."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    found: list[list[Path]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "prism-tools/src")
    graph = edges(root)
    # `lib.rs` declares every module and re-exports from them; it is the crate's root, not a layer.
    lib = root / "lib.rs"
    graph.pop(lib, None)
    for targets in graph.values():
        targets.discard(lib)
    found = circles(graph)
    for group in found:
        print("import circle:", ", ".join(str(p.relative_to(root)) for p in group))
    print(f"{len(graph)} files, {len(found)} import circles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
