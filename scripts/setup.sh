#!/usr/bin/env bash
# Installs what building and testing vap-eval needs, skipping whatever is already there (quick on
# a machine that has it all). Used by scripts/run.sh (--pkg), scripts/test.sh and .ci/run.
#
#   bash scripts/setup.sh         everything: the wasm32 target, rustfmt and clippy,
#                                 wasm-bindgen-cli = the wasm-bindgen in Cargo.lock, Debian's
#                                 chromium + chromium-driver (apt, as root or with sudo), and the
#                                 npm packages of every folder with a package.json
#   bash scripts/setup.sh --pkg   only what building pkg/ needs (the target, wasm-bindgen-cli,
#                                 binaryen from scripts/package.json)
#
# Needs Rust (rustup) and Node 20+ with npm.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
# rustup's cargo, if the environment lacks it on PATH.
if ! command -v cargo >/dev/null && [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi
ONLY_PKG=0
[ "${1:-}" = --pkg ] && ONLY_PKG=1

say() { printf -- '-- setup: %s\n' "$*"; }

# rustup is quiet and quick when these are installed already.
if [ "$ONLY_PKG" = 1 ]; then
  rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
else
  rustup target add wasm32-unknown-unknown
  rustup component add rustfmt clippy
fi

WBV=$(grep -A1 '^name = "wasm-bindgen"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')
[ -n "$WBV" ] || { echo "setup: no wasm-bindgen in Cargo.lock" >&2; exit 1; }
if [ "$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" = "$WBV" ] &&
  command -v wasm-bindgen-test-runner >/dev/null; then
  say "wasm-bindgen-cli $WBV present"
else
  say "installing wasm-bindgen-cli $WBV (a few minutes)"
  # --locked can fail when the registry mirror lags on one of its dependencies (seen with
  # 0.2.130: webpki-roots); without it, cargo resolves to what the mirror has.
  cargo install wasm-bindgen-cli --version "$WBV" --locked ||
    cargo install wasm-bindgen-cli --version "$WBV"
fi
# binaryen's wasm-opt (scripts/wasm-opt.sh), pinned in scripts/package-lock.json.
if [ -f scripts/node_modules/.package-lock.json ] && [ scripts/node_modules/.package-lock.json -nt scripts/package-lock.json ]; then
  say "binaryen present"
else
  say "npm ci in scripts (binaryen)"
  (cd scripts && npm ci --no-audit --no-fund)
fi
[ "$ONLY_PKG" = 1 ] && exit 0

if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  say "chromium present: $(/usr/bin/chromium --version 2>/dev/null || echo chromium)"
else
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo -n"
  say "installing chromium and chromium-driver (apt)"
  if ! { $SUDO apt-get update && $SUDO apt-get install -y chromium chromium-driver; }; then
    echo "setup: could not install chromium + chromium-driver; install them (Debian: apt-get install" >&2
    echo "  chromium chromium-driver), or run the tests without the browser: VAP_SKIP_BROWSER=1" >&2
    [ "${VAP_SKIP_BROWSER:-}" = 1 ] || exit 1
  fi
fi

# npm ci only where node_modules is missing or older than the lock file.
for d in tests/node tests/conformance bench www; do
  [ -f "$d/package.json" ] || continue
  if [ -f "$d/node_modules/.package-lock.json" ] && [ "$d/node_modules/.package-lock.json" -nt "$d/package-lock.json" ]; then
    continue
  fi
  if [ -f "$d/package-lock.json" ]; then
    say "npm ci in $d"
    (cd "$d" && npm ci --no-audit --no-fund)
  else
    echo "setup: WARNING: $d has no package-lock.json; npm install" >&2
    (cd "$d" && npm install --no-audit --no-fund)
  fi
done
say "done"
