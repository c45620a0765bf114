#!/usr/bin/env bash
# Builds the npm package into pkg/ (generated, not committed): the wasm module, its JS glue and
# TypeScript types (wasm-bindgen --target web: browsers use `await init()`, Node uses
# `initSync({ module: fs.readFileSync('pkg/vap_eval_bg.wasm') })`), package.json, README, LICENSE.
# Needs: rustup target wasm32-unknown-unknown, wasm-bindgen-cli = the wasm-bindgen in Cargo.lock,
# binaryen's wasm-opt from scripts/package.json (scripts/setup.sh --pkg installs all three).
set -euo pipefail
cd "$(dirname "$0")/.."

WBV=$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')
HAVE=$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2 || true)
if [ "$HAVE" != "$WBV" ]; then
  echo "build-pkg: wasm-bindgen-cli ${HAVE:-missing}, Cargo.lock has wasm-bindgen $WBV." >&2
  echo "  cargo install wasm-bindgen-cli --version $WBV --locked   (or run .ci/run)" >&2
  exit 1
fi

# VAP_EVAL_NO_EDITOR=1: without complete/hover (cargo feature `editor`), for the smallest module.
FEATURES=()
if [ -n "${VAP_EVAL_NO_EDITOR:-}" ]; then FEATURES=(--no-default-features --features tz); fi
# Only the cdylib: compiled together with the rlib (Cargo.toml's crate-type), the LTO'd module
# keeps more code (≈ 22 KB gzip, 696.1 -> 674.4 KB measured at commit 9826ccc).
cargo rustc --lib --crate-type cdylib --profile wasm --target wasm32-unknown-unknown "${FEATURES[@]}"
rm -rf pkg
wasm-bindgen --target web --out-dir pkg --remove-name-section --remove-producers-section \
  target/wasm32-unknown-unknown/wasm/vap_eval.wasm
bash scripts/wasm-opt.sh pkg/vap_eval_bg.wasm

VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
DESC=$(sed -n 's/^description = "\(.*\)"/\1/p' Cargo.toml | head -1)
cat > pkg/package.json <<JSON
{
  "name": "vap-eval",
  "version": "$VERSION",
  "description": "$DESC",
  "license": "Apache-2.0",
  "type": "module",
  "main": "vap_eval.js",
  "module": "vap_eval.js",
  "types": "vap_eval.d.ts",
  "exports": {
    ".": {
      "types": "./vap_eval.d.ts",
      "default": "./vap_eval.js"
    },
    "./vap_eval_bg.wasm": "./vap_eval_bg.wasm",
    "./schemas/*": "./schemas/*",
    "./package.json": "./package.json"
  },
  "files": [
    "vap_eval_bg.wasm",
    "vap_eval_bg.wasm.d.ts",
    "vap_eval.js",
    "vap_eval.d.ts",
    "schemas/",
    "README.md",
    "LICENSE"
  ],
  "sideEffects": false,
  "keywords": ["kubernetes", "cel", "validatingadmissionpolicy", "admission", "wasm"]
}
JSON
# wasm-bindgen writes snippets/ for inline JS (the result builder in src/wasm.rs, crates/vap-eval-cel/src/host_tz.rs): ship it.
if [ -d pkg/snippets ]; then
  node -e 'const f="pkg/package.json",p=JSON.parse(require("fs").readFileSync(f));p.files.push("snippets/");require("fs").writeFileSync(f,JSON.stringify(p,null,2)+"\n")'
fi

# The built-in schemas ship beside the module, not in it (loadSchemas / loadSchemaDescriptions).
mkdir -p pkg/schemas
cp data/schemas/1.*.json data/schemas/sources.json pkg/schemas/
# The versions with their own bundle, newest last (the playground picks the newest <= its version).
ls data/schemas | sed -n 's/^\(1\.[0-9]*\)\.json$/"\1"/p' | sort -t. -k2 -n | paste -sd, | sed 's/.*/[&]/' > pkg/schemas/index.json

rm -f pkg/.gitignore
cp README.md LICENSE pkg/
# Every file package.json lists must exist.
node -e 'const fs=require("fs"),p=JSON.parse(fs.readFileSync("pkg/package.json"));for(const f of p.files)if(!fs.existsSync("pkg/"+f)){console.error("build-pkg: pkg/"+f+" missing");process.exit(1)}'

WASM=pkg/vap_eval_bg.wasm
RAW=$(stat -c %s "$WASM")
GZ=$(gzip -9c "$WASM" | wc -c)
echo "build-pkg: pkg/ vap-eval@$VERSION, $WASM $RAW bytes ($GZ gzipped)"
