#!/usr/bin/env bash
# Fetches the official JSON-Schema-Test-Suite (draft 2020-12 cases, MIT licence) for
# tests/validation_conformance.rs.
#
# The suite is not a package of its own on a registry, but the sdist of Python's `jsonschema`
# ships it (in `json/`). This script downloads that sdist, pinned by version and SHA-256, with
# pip (the only network access: the PyPI registry) and extracts the suite's licence, README,
# draft 2020-12 tests and remote documents into target/json-schema-test-suite/.
# Idempotent: does nothing when that folder already holds this version.
set -euo pipefail

version="4.26.0"
sha256="0c26707e2efad8aa1bfc5b7ce170f3fccc2e4918ff85989ba9ffa9facb2be326"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/target/json-schema-test-suite"
stamp="$dest/.from-python-jsonschema-$version"

if [[ -f "$stamp" ]]; then
    echo "conformance: JSON-Schema-Test-Suite already in $dest"
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# pip prepares the sdist's metadata, fetching its build backend from PyPI as well.
python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$work" "jsonschema==$version"
archive="$work/jsonschema-$version.tar.gz"
echo "$sha256  $archive" | sha256sum --check --quiet

tar -xzf "$archive" -C "$work" \
    "jsonschema-$version/json/LICENSE" \
    "jsonschema-$version/json/README.md" \
    "jsonschema-$version/json/tests/draft2020-12" \
    "jsonschema-$version/json/remotes"
rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$work/jsonschema-$version/json" "$dest"
touch "$stamp"
echo "conformance: JSON-Schema-Test-Suite (from jsonschema $version on PyPI) in $dest"
