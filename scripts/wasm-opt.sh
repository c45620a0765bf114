#!/usr/bin/env bash
# Optimises a wasm-bindgen output module in place with binaryen's wasm-opt (the npm package
# `binaryen`, pinned in scripts/package.json; scripts/setup.sh installs it), as wasm-pack does
# after wasm-bindgen: -O1, then passes that shrink what rustc's output still repeats (redundant
# local sets, instruction peepholes, constants propagated, identical functions and code tails
# merged, arguments every caller passes the same removed), to a fixed point. On the package's
# module: -O1 alone 599.1 -> 591.9 KB GNU gzip -9; the passes after it another 597.3 -> 594.4 KB
# (Node zlib 602.8 -> 599.4), and fewer bytes for V8 to compile on a page's first evaluate()
# (bench/README.md, "The package's size"); --dae-optimizing later another -364 B Node zlib.
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
node "$OPT" -O1 --rse --optimize-instructions --precompute-propagate \
  --duplicate-function-elimination --code-folding --merge-locals --dae-optimizing --converge \
  --enable-bulk-memory --enable-sign-ext --enable-mutable-globals \
  --enable-nontrapping-float-to-int --enable-reference-types --enable-multivalue \
  "$FILE" -o "$FILE"
