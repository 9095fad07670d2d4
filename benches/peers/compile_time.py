#!/usr/bin/env python3
"""Writes two crates of 100 tools each, one for Prism's `#[tool]` and one for rmcp's `#[tool]`.

The two crates declare the same tools with the same signatures: async functions over an integer,
a string, an optional integer and an enum shared by every tool, with a doc comment on each tool
and each parameter; even tools return `Result<String, String>`, odd tools a serialisable struct.
The Prism crate writes them as free `#[tool]` functions and a `registry()` listing their
definitions; the rmcp crate writes each tool's arguments as a `Deserialize + JsonSchema` struct
taken through `Parameters<ArgsN>`, in one `#[tool_router(server_handler)]` impl block, as rmcp's
own examples do.

Both crates live in one Cargo workspace in the output directory, so their dependencies are
compiled once into one target directory, and that workspace starts from the `Cargo.lock` of
`benches/peers` (copied in on every run), so rmcp, serde and schemars resolve to the versions the
dispatch benchmark uses.

    python3 compile_time.py OUT_DIR [--prism PRISM_REPO]

`--prism` defaults to the repository holding this script. Re-running overwrites only files
whose text changed, so an unchanged crate is not rebuilt.
"""

import argparse
import pathlib
import shutil
import sys

TOOLS = 100

SHARED_TYPES = """\
/// The order a tool sorts its result in.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Smallest first.
    Ascending,
    /// Largest first.
    Descending,
}

/// What the tools with a structured result return.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Summary {
    /// The tool that answered.
    pub tool: String,
    /// The label it was given.
    pub label: String,
    /// The count after the limit was applied.
    pub count: i64,
    /// The order it was asked for.
    pub order: Order,
}
"""

# One tool's parameters: (name, type, doc). Every tool takes the same four, so the two crates
# differ only in how each framework wants them written.
PARAMS = [
    ("count", "i64", "How many items to take."),
    ("label", "String", "A label copied into the result."),
    ("limit", "Option<u32>", "An upper bound on the count; no bound when absent."),
    ("order", "Order", "The order of the result."),
]


def tool_name(i):
    return f"tool_{i:03}"


def doc(i):
    return f"Tool number {i}: takes up to `count` items labelled `label`, in the given order."


def body(i, structured, wrap):
    """The body both frameworks share; `wrap` turns a `Summary` into what the function returns."""
    name = tool_name(i)
    ok = (
        wrap("Summary { tool: \"" + name + "\".to_string(), label, count, order }")
        if structured
        else f'format!("{name}: {{label}} {{count}} {{order:?}}")'
    )
    return f"""\
    let count = match limit {{
        Some(limit) => count.min(i64::from(limit)),
        None => count,
    }};
    if label.is_empty() {{
        return Err("{name}: the label is empty".to_string());
    }}
    Ok({ok})"""


def prism_crate(prism_repo):
    cargo = f"""\
[package]
name = "prism_100"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
prism = {{ path = "{prism_repo}", default-features = false }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1.2"
"""
    out = [
        "//! 100 tools written with Prism's `#[tool]`.",
        "",
        "use prism::{ToolRegistry, tool};",
        "use schemars::JsonSchema;",
        "use serde::{Deserialize, Serialize};",
        "",
        SHARED_TYPES,
    ]
    for i in range(TOOLS):
        structured = i % 2 == 1
        ret = "Result<Summary, String>" if structured else "Result<String, String>"
        out.append(f"/// {doc(i)}")
        out.append("#[tool]")
        out.append(f"pub async fn {tool_name(i)}(")
        for name, ty, pdoc in PARAMS:
            out.append(f"    /// {pdoc}")
            out.append(f"    {name}: {ty},")
        out.append(f") -> {ret} {{")
        out.append(body(i, structured, lambda s: s))
        out.append("}")
        out.append("")
    out.append("/// Every tool of the crate, ready to dispatch.")
    out.append("pub fn registry() -> ToolRegistry {")
    out.append("    ToolRegistry::from_iter([")
    for i in range(TOOLS):
        out.append(f"        {tool_name(i)}::definition(),")
    out.append("    ])")
    out.append("}")
    return cargo, "\n".join(out) + "\n"


def rmcp_crate():
    cargo = """\
[package]
name = "rmcp_100"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
rmcp = { version = "3", default-features = false, features = ["server", "macros"] }
serde = { version = "1", features = ["derive"] }
schemars = "1.2"
"""
    out = [
        "//! 100 tools written with rmcp's `#[tool_router]` and `#[tool]`.",
        "",
        "use rmcp::handler::server::wrapper::{Json, Parameters};",
        "use rmcp::{tool, tool_router};",
        "use schemars::JsonSchema;",
        "use serde::{Deserialize, Serialize};",
        "",
        SHARED_TYPES,
    ]
    for i in range(TOOLS):
        out.append(f"/// The arguments of `{tool_name(i)}`.")
        out.append("#[derive(Debug, Deserialize, JsonSchema)]")
        out.append(f"pub struct Args{i:03} {{")
        for name, ty, pdoc in PARAMS:
            out.append(f"    /// {pdoc}")
            out.append(f"    pub {name}: {ty},")
        out.append("}")
        out.append("")
    out.append("/// The server holding every tool of the crate.")
    out.append("#[derive(Clone, Debug, Default)]")
    out.append("pub struct Server;")
    out.append("")
    out.append("#[tool_router(server_handler, vis = \"pub\")]")
    out.append("impl Server {")
    fields = ", ".join(name for name, _, _ in PARAMS)
    for i in range(TOOLS):
        structured = i % 2 == 1
        ret = "Result<Json<Summary>, String>" if structured else "Result<String, String>"
        out.append(f"    /// {doc(i)}")
        out.append("    #[tool]")
        out.append(f"    pub async fn {tool_name(i)}(")
        out.append("        &self,")
        out.append(f"        Parameters(Args{i:03} {{ {fields} }}): Parameters<Args{i:03}>,")
        out.append(f"    ) -> {ret} {{")
        out.append("\n".join("    " + line for line in body(i, structured, lambda s: f"Json({s})").splitlines()))
        out.append("    }")
        if i + 1 < TOOLS:
            out.append("")
    out.append("}")
    return cargo, "\n".join(out) + "\n"


def write_if_changed(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_text() == text:
        return
    path.write_text(text)


def main():
    here = pathlib.Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path, help="the scratch directory to write into")
    parser.add_argument(
        "--prism",
        type=pathlib.Path,
        default=here.parent.parent,
        help="the Prism repository whose `prism` crate the Prism side uses (default: %(default)s)",
    )
    args = parser.parse_args()
    prism_repo = args.prism.resolve()
    if not (prism_repo / "Cargo.toml").is_file() or not (prism_repo / "src" / "lib.rs").is_file():
        sys.exit(f"{prism_repo} does not look like a Prism repository (no Cargo.toml and src/lib.rs)")
    out = args.out.resolve()

    write_if_changed(
        out / "Cargo.toml",
        '[workspace]\nmembers = ["prism_100", "rmcp_100"]\nresolver = "3"\n',
    )
    # Start from the dispatch benchmark's versions; cargo adds what the Prism facade needs.
    shutil.copyfile(here / "Cargo.lock", out / "Cargo.lock")
    toolchain = prism_repo / "rust-toolchain.toml"
    if toolchain.is_file():
        write_if_changed(out / "rust-toolchain.toml", toolchain.read_text())

    cargo, lib = prism_crate(prism_repo)
    write_if_changed(out / "prism_100" / "Cargo.toml", cargo)
    write_if_changed(out / "prism_100" / "src" / "lib.rs", lib)
    cargo, lib = rmcp_crate()
    write_if_changed(out / "rmcp_100" / "Cargo.toml", cargo)
    write_if_changed(out / "rmcp_100" / "src" / "lib.rs", lib)
    print(out)


if __name__ == "__main__":
    main()
