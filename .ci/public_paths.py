#!/usr/bin/env python3
"""Lists every public path of the `prism` crate and fails when one item has two of them.

`prism` is a facade: each public item should be reachable by exactly one path, so users (and
their search engines) find one name for one thing. This script reads rustdoc's JSON output for
`prism` and for the crates it re-exports from (`prism_tools`, the derive crate), walks the public
tree from `prism`'s root, follows every `use` (single or glob, within or across crates) and every
public module, and keys each item by its definition (crate and path of definition). An item met
under two paths is a duplicate. Items marked `#[doc(hidden)]` (the macros' `__private` module)
are left out by rustdoc and so by this check.

Usage:
    python3 .ci/public_paths.py            # builds the JSON first (RUSTC_BOOTSTRAP=1 cargo rustdoc)
    python3 .ci/public_paths.py --no-build # reads the JSON already in target/doc
    python3 .ci/public_paths.py --list     # also prints every public path

Exits 1 on a duplicate or on anything it cannot follow, 0 otherwise.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

FACADE = "prism"
# Crates whose items `prism` re-exports; their JSON is needed to follow globs and whole modules.
SOURCES = ["prism-tools"]
# Kinds that are items of their own (fields, variants, methods and impls belong to their parent).
ITEM_KINDS = {
    "module", "struct", "enum", "union", "trait", "trait_alias", "function", "type_alias",
    "constant", "static", "macro", "proc_attribute", "proc_derive", "primitive", "extern_crate",
}
# Rust's namespaces: a trait and a derive macro may share a name and a path.
MACRO_KINDS = {"macro", "proc_attribute", "proc_derive"}
VALUE_KINDS = {"function", "constant", "static"}


def spelled(path: str, kind: str) -> str:
    """A path as users would search for it, marked with its namespace when not a type."""
    if kind in MACRO_KINDS:
        return f"{path}!" if kind == "macro" else f"{path} ({kind.removeprefix('proc_')} macro)"
    return f"{path}()" if kind == "function" else path


def target_dir(workspace: Path) -> Path:
    env = os.environ.get("CARGO_TARGET_DIR")
    return Path(env) if env else workspace / "target"


def build(workspace: Path) -> None:
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    for package in [FACADE, *SOURCES]:
        subprocess.run(
            ["cargo", "rustdoc", "--quiet", "-p", package, "--all-features", "--",
             "-Z", "unstable-options", "--output-format", "json"],
            cwd=workspace, env=env, check=True,
        )


class Crates:
    """The rustdoc JSON documents, by crate name, and lookups between them."""

    def __init__(self, doc_dir: Path, names: list[str]):
        self.docs = {}
        for name in names:
            path = doc_dir / f"{name.replace('-', '_')}.json"
            with open(path) as file:
                self.docs[name.replace("-", "_")] = json.load(file)
        # For each loaded crate: definition path -> local id, to follow cross-crate references.
        self.by_path = {
            crate: {
                tuple(entry["path"]): local_id
                for local_id, entry in doc["paths"].items()
                if entry["crate_id"] == 0
            }
            for crate, doc in self.docs.items()
        }
        self.problems: list[str] = []

    def resolve(self, crate: str, item_id):
        """Where an id used in `crate` really lives: (crate, id, item) or (crate, path, None)."""
        doc = self.docs[crate]
        key = str(item_id)
        if key in doc["index"]:
            return crate, key, doc["index"][key]
        entry = doc["paths"].get(key)
        if entry is None:
            return None
        owner = crate if entry["crate_id"] == 0 else doc["external_crates"][str(entry["crate_id"])]["name"]
        path = tuple(entry["path"])
        if owner in self.docs and path in self.by_path[owner]:
            local = self.by_path[owner][path]
            if local in self.docs[owner]["index"]:
                return owner, local, self.docs[owner]["index"][local]
            # Known to that crate but not documented there: hidden or private.
            return None
        return owner, path, entry

    def identity(self, crate: str, key, item) -> tuple:
        """One key per definition, the same whichever crate's document names it."""
        doc = self.docs.get(crate)
        if doc is not None and key in doc["paths"]:
            entry = doc["paths"][key]
            return crate, tuple(entry["path"]), entry["kind"]
        if isinstance(key, tuple):
            return crate, key, item.get("kind")
        return crate, ("#" + key,), kind_of(item)


def kind_of(item) -> str:
    if "kind" in item:  # a `paths` entry of another crate
        return item["kind"]
    return next(iter(item["inner"]))


def walk(crates: Crates) -> dict[str, tuple]:
    """Every public path of the facade, mapped to the identity of the item it names."""
    found: dict[str, tuple] = {}
    facade = FACADE.replace("-", "_")
    root_doc = crates.docs[facade]
    root = root_doc["index"][str(root_doc["root"])]
    seen_modules: set[tuple] = set()

    def record(path: str, resolved) -> None:
        crate, key, item = resolved
        kind = kind_of(item)
        if kind not in ITEM_KINDS:
            return
        identity = crates.identity(crate, key, item)
        name = spelled(path, kind)
        if name in found and found[name] != identity:
            crates.problems.append(f"{name} names two different items")
        found[name] = identity
        if kind == "module" and not isinstance(key, tuple):
            guard = (path, identity)
            if guard not in seen_modules:
                seen_modules.add(guard)
                visit_module(crate, item, path)
        # A module of a crate not loaded here (a re-exported dependency such as `schemars`) is
        # one item: its contents are that crate's API, not the facade's.

    def visit_module(crate: str, module, prefix: str) -> None:
        for child in module["inner"]["module"]["items"]:
            child_item = crates.docs[crate]["index"].get(str(child))
            if child_item is None:
                continue
            visit_item(crate, str(child), child_item, prefix)

    def visit_item(crate: str, key: str, item, prefix: str) -> None:
        if "use" in item["inner"]:
            use = item["inner"]["use"]
            if use["id"] is None:
                return  # a primitive or something rustdoc could not name
            target = crates.resolve(crate, use["id"])
            if target is None:
                return  # hidden or private: not reachable in the docs
            if use["is_glob"]:
                t_crate, t_key, t_item = target
                if isinstance(t_key, tuple):
                    crates.problems.append(
                        f"{prefix}::* globs `{use['source']}`, whose crate JSON is not loaded")
                    return
                if "module" not in t_item["inner"]:
                    return  # a glob of an enum's variants: variants are not items here
                for child in t_item["inner"]["module"]["items"]:
                    child_item = crates.docs[t_crate]["index"].get(str(child))
                    if child_item is not None:
                        visit_item(t_crate, str(child), child_item, prefix)
                return
            if use["name"] == "_":
                return  # `pub use Trait as _`: brings methods into scope, names nothing
            record(f"{prefix}::{use['name']}", target)
            return
        if item.get("name") is None:
            return  # impls
        record(f"{prefix}::{item['name']}", (crate, key, item))

    visit_module(facade, root, facade)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-build", action="store_true", help="use the JSON in target/doc")
    parser.add_argument("--list", action="store_true", help="print every public path")
    args = parser.parse_args()

    workspace = Path(__file__).resolve().parent.parent
    if not args.no_build:
        build(workspace)
    crates = Crates(target_dir(workspace) / "doc", [FACADE, *SOURCES])
    found = walk(crates)

    by_item: dict[tuple, list[str]] = {}
    for path, identity in found.items():
        by_item.setdefault(identity, []).append(path)
    duplicates = {identity: sorted(paths) for identity, paths in by_item.items() if len(paths) > 1}
    root_items = sorted(p for p in found if p.split(" ")[0].count("::") == 1)
    modules = sorted(p for p, identity in found.items() if identity[2] == "module")

    if args.list:
        for path in sorted(found):
            print(f"{found[path][2]:<12} {path}")
    print(f"{FACADE}: {len(by_item)} public items, {len(found)} public paths, "
          f"{len(root_items)} at the root ({len(root_items) - sum(p in modules for p in root_items)} "
          f"without the modules), {len(modules)} modules")
    print("root: " + ", ".join(p.split("::", 1)[1] for p in root_items))
    for identity, paths in sorted(duplicates.items(), key=lambda pair: pair[1]):
        print(f"DUPLICATE {identity[2]} {'::'.join(identity[1])}: " + ", ".join(paths))
    for problem in crates.problems:
        print(f"PROBLEM {problem}")
    if duplicates or crates.problems:
        print(f"{len(duplicates)} items reachable by more than one public path; "
              "give each exactly one (see the crate docs of `prism`, 'Where items live').")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
