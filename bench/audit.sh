#!/usr/bin/env bash
# The audit benchmark: `vap-eval audit` over a generated dump of N objects (bench/gen-dump.mjs,
# default 100,000) against the playground examples' policies, natively, on 1 and 2 cores
# (RAYON_NUM_THREADS), with peak memory (GNU time), against serde_json merely parsing the same
# dump on one thread (crates/vap-eval-cli/examples/parse_dump.rs).
# Usage: bash bench/audit.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-100000}"
mkdir -p bench/.cache
DUMP="bench/.cache/dump-$N.jsonl"
[ -s "$DUMP" ] || node bench/gen-dump.mjs "$N" > "$DUMP"
cargo build --release -q -p vap-eval-cli --bin vap-eval --example parse_dump
BIN=target/release/vap-eval
PARSE=target/release/examples/parse_dump
mapfile -t POLICIES < <(ls www/examples/*.yaml | grep -v -e '\.object\.yaml$' -e 'request\.yaml$' -e '\.passing\.yaml$' -e '\.failing\.yaml$')
FLAGS=(); for p in "${POLICIES[@]}"; do FLAGS+=(-f "$p"); done
echo "dump: $DUMP ($(du -h "$DUMP" | cut -f1), $N objects); policies: ${#POLICIES[@]} example files"

# run LABEL CMD…: prints objects/s and peak RSS from GNU time.
run() {
  local label="$1"; shift
  local log; log="$(mktemp)"
  /usr/bin/time -v "$@" > /dev/null 2> "$log"
  local secs rss
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  rm -f "$log"
  printf '%-28s %8.2f s %10.0f objects/s %8.1f MB peak\n' "$label" "$secs" "$(echo "$N / $secs" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
  echo "$secs" > "bench/.cache/last-$label.txt"
}

run parse-serde_json "$PARSE" "$DUMP"
RAYON_NUM_THREADS=1 run audit-1-core "$BIN" audit "${FLAGS[@]}" "$DUMP"
RAYON_NUM_THREADS=2 run audit-2-cores "$BIN" audit "${FLAGS[@]}" "$DUMP"
p=$(cat bench/.cache/last-parse-serde_json.txt)
for c in audit-1-core audit-2-cores; do
  printf 'ratio %s / serde_json parse (objects/s): %.3f\n' "$c" "$(echo "$p / $(cat bench/.cache/last-$c.txt)" | bc -l)"
done
