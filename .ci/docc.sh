#!/usr/bin/env bash
# Builds the DocC catalogs (Sources/Strata/Strata.docc, Sources/StrataStorage/StrataStorage.docc) with the
# toolchain's `docc` and fails on any DocC warning — a broken or ambiguous symbol link in a `///` comment or an
# article — and on a public top-level symbol that a landing page's topic groups leave out.
# Usage: bash .ci/docc.sh [OUTPUT_DIRECTORY]; the archives are kept there when it is given.
set -euo pipefail
cd "$(dirname "$0")/.."

# The toolchain's docc sits next to `swift`; DOCC overrides it.
docc=${DOCC:-$(dirname "$(readlink -f "$(command -v swift)")")/docc}
if [ ! -x "$docc" ]; then docc=$(command -v docc); fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
output=${1:-$work}
mkdir -p "$output"

# Public symbols only, without the members every type inherits from the standard library's protocols.
swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members >/dev/null
graphs=$(find .build -type d -name symbolgraph | head -n 1)

for module in Strata StrataStorage; do
    mkdir -p "$work/$module-graphs"
    # The module's own graph and those of its extensions to other modules (Strata@Swift...), if any.
    find "$graphs" -maxdepth 1 \( -name "$module.symbols.json" -o -name "$module@*.symbols.json" \) \
        -exec cp {} "$work/$module-graphs/" \;
    "$docc" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$work/$module-graphs" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.strata.$module" \
        --output-path "$output/$module.doccarchive" --warnings-as-errors
    swift .ci/docc-topics.swift "$output/$module.doccarchive" "$module"
done
