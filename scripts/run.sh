#!/usr/bin/env bash
# Builds the npm package (pkg/) and serves the repository root statically, so the playground
# (www/, which imports ../pkg/) runs at http://127.0.0.1:8080/www/. Ctrl-C stops it.
# Env: PORT (default 8080), HOST (default 127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8080}

bash scripts/build-pkg.sh
echo
echo "Playground: http://$HOST:$PORT/www/"
echo "(serving $(pwd) with python3 -m http.server; Ctrl-C to stop)"
exec python3 -m http.server "$PORT" --bind "$HOST" --directory .
