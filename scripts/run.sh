#!/usr/bin/env bash
# Installs the wasm toolchain if missing, builds the npm package (pkg/) and serves the repository root statically, so the playground
# (www/, which imports ../pkg/) runs at http://127.0.0.1:8080/www/. Ctrl-C stops it.
# Env: PORT (default 8080), HOST (default 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8080}

# The wasm32 target and wasm-bindgen-cli, when missing (a few minutes, once).
bash scripts/setup.sh --pkg
bash scripts/build-pkg.sh
# The default example in www/index.html follows www/examples/ (a no-op when it is current).
node scripts/inline-examples.mjs
echo
echo "Playground: http://$HOST:$PORT/www/   (Ctrl-C to stop)"
HOST=$HOST PORT=$PORT exec node scripts/serve.mjs
