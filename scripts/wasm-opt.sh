#!/usr/bin/env bash
# Optimises a wasm-bindgen output module in place with binaryen's wasm-opt (the npm package
# `binaryen`, pinned in scripts/package.json; scripts/setup.sh installs it), as wasm-pack does
# after wasm-bindgen: -Oz, inlining a function into its only caller only when it is at most 20
# bytes (`-ocimfs 20`; unlimited by default). That inlining made large functions larger, which V8
# compiles whole on a page's first evaluate(): -Oz with it compiled more for the first call than
# -O1, without it 14 KB less (bench/README.md, "The package's size", "The first evaluate()").
#   bash scripts/wasm-opt.sh FILE.wasm
set -euo pipefail
cd "$(dirname "$0")/.."
FILE="$1"
OPT=scripts/node_modules/binaryen/bin/wasm-opt
if [ ! -f "$OPT" ]; then
  echo "wasm-opt.sh: $OPT missing: (cd scripts && npm ci), or bash scripts/setup.sh --pkg" >&2
  exit 1
fi
# The features rustc's wasm32-unknown-unknown target emits (validation fails on any other).
node "$OPT" -Oz -ocimfs 20 --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
  --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue \
  "$FILE" -o "$FILE"
