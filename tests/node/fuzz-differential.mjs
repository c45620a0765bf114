// node tests/node/fuzz-differential.mjs exprs.jsonl — the package's evaluateExpression against
// the native results of the same expressions, written by the native fuzzer:
//   cargo run --profile fuzz --example fuzz_mutate -- --exprs 100000 --seed 6 > exprs.jsonl
// Differences are wasm-only behaviour (wasm32's 32-bit usize, the engine's stack). Not run by
// `node --test` (no .test.mjs); needs pkg/ (bash scripts/build-pkg.sh).
import fs from "node:fs";

const pkgDir = new URL("../../pkg/", import.meta.url);
const wasm = await import(new URL("vap_eval.js", pkgDir));
wasm.initSync({ module: fs.readFileSync(new URL("vap_eval_bg.wasm", pkgDir)) });
const cases = fs.readFileSync(process.argv[2], "utf8").trim().split("\n").map((l) => JSON.parse(l));
let differ = 0;
let threw = 0;
for (const c of cases) {
  let r;
  try {
    r = wasm.evaluateExpression(c.expr, {}, {});
  } catch (e) {
    threw++;
    console.log("THREW", JSON.stringify(c.expr).slice(0, 300), String(e).slice(0, 200));
    continue;
  }
  const native = JSON.stringify([c.value ?? null, c.type ?? null, c.diagnostics]);
  const pkg = JSON.stringify([r.value ?? null, r.type ?? null, r.diagnostics.map((d) => d.message)]);
  if (native !== pkg && ++differ <= 20)
    console.log("DIFF", JSON.stringify(c.expr).slice(0, 300), "\n  native", native.slice(0, 300), "\n  wasm  ", pkg.slice(0, 300));
}
console.log(`${cases.length} compared, ${differ} differ, ${threw} threw`);
process.exitCode = differ || threw ? 1 : 0;
