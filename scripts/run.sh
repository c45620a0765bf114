#!/usr/bin/env bash
# Installs the wasm toolchain and the editors' npm packages if missing, builds the npm package
# (pkg/) and the static playground (dist/site/, scripts/build-site.mjs) and serves it, so the
# playground runs at http://127.0.0.1:8080/www/. Ctrl-C stops it.
# Env: PORT (default 8080), HOST (default 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8080}

# The wasm32 target and wasm-bindgen-cli, when missing (a few minutes, once).
bash scripts/setup.sh --pkg
# CodeMirror and esbuild for the editors (www/package-lock.json), when missing or outdated.
if [ ! -f www/node_modules/.package-lock.json ] || [ www/package-lock.json -nt www/node_modules/.package-lock.json ]; then
  (cd www && npm ci --no-audit --no-fund)
fi
bash scripts/build-pkg.sh
# The default example in www/index.html follows www/examples/ (a no-op when it is current).
node scripts/inline-examples.mjs
node scripts/build-site.mjs dist/site
echo
echo "Playground: http://$HOST:$PORT/www/   (Ctrl-C to stop; the static site is dist/site/)"
HOST=$HOST PORT=$PORT ROOT=dist/site exec node scripts/serve.mjs
