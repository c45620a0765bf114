#!/usr/bin/env node
// The one benchmark command: `node bench/run.mjs` (from the repository root or anywhere).
//
// Builds what it needs (native release example, the npm package pkg/, a bench-only wasm package
// bench/.out/pkg-bench/ with the cargo feature `bench`, the `cel` crate benchmark), then runs on
// the standard workload (../shared/bench: a Deployment and 14 expressions with expected results),
// verifying every result:
//   - vap-eval natively (examples/vap_bench.rs)         compile µs/expr, eval Σ14, end-to-end
//   - vap-eval wasm under Node (bench/wasm-node.mjs)     the same, JSON text into wasm
//   - @marcbachmann/cel-js (bench/peers.mjs)             the same, plus e2e with BigInt ints
//   - the `cel` crate's interpreter (bench/cel-crate)    the same, natively
// The wasm and cel-js processes alternate for BENCH_ROUNDS rounds (the table: medians over
// rounds); each bar ratio is the median of the per-round ratios, whose two figures were taken
// back to back, under the same load. Then: pkg/vap_eval_bg.wasm raw / gzip -9
// / brotli (q11) against the 600 KB gzip bar; cold start of www/ in headless Chromium (median of
// COLD_RUNS fresh loads) against 150 ms, and the wasm functions V8 compiles for the playground's
// first evaluate() (bench/first-call.mjs: their count and bytes do not move with the load); a
// full evaluate() of a 5-validation + messageExpression policy per request.
// Prints one table and writes bench/.out/results.json.
//
// Flags: --no-build (use what is built), --skip-cold (no browser).
// Env: VAP_BENCH_DIR, BENCH_RUNS (400), BENCH_WARMUP (200), BENCH_ROUNDS (5), COLD_RUNS (7),
//      CHROMIUM (/usr/bin/chromium).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { benchDir } from "./bench-dir.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
const out = path.join(here, ".out");
const pkgBench = path.join(out, "pkg-bench");
const pkg = path.join(repo, "pkg");
const args = new Set(process.argv.slice(2));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 7);
const GZIP_BAR = 600_000; // bytes (KB = 1000 B)
const COLD_BAR_MS = 150;

fs.mkdirSync(out, { recursive: true });
const log = (s) => process.stderr.write(s + "\n");

const dir = benchDir();
const env = { ...process.env, VAP_BENCH_DIR: dir };

function run(cmd, argv, opts = {}) {
  log(`$ ${[cmd, ...argv].join(" ")}`);
  return execFileSync(cmd, argv, { cwd: repo, env, encoding: "utf8", maxBuffer: 1 << 26, stdio: ["ignore", "pipe", "inherit"], ...opts });
}
const runJson = (cmd, argv) => JSON.parse(run(cmd, argv));

// ---- build ----------------------------------------------------------------------------------
if (!args.has("--no-build")) {
  run("cargo", ["build", "--release", "--features", "bench", "--example", "vap_bench", "--example", "eval_exprs"], { stdio: ["ignore", "inherit", "inherit"] });
  run("cargo", ["build", "--release", "--manifest-path", "bench/cel-crate/Cargo.toml"], { stdio: ["ignore", "inherit", "inherit"] });
  // The bench package first (same profile, plus the feature), then the shipped one.
  run("cargo", ["rustc", "--lib", "--crate-type", "cdylib", "--profile", "wasm", "--target", "wasm32-unknown-unknown", "--features", "bench"], { stdio: ["ignore", "inherit", "inherit"] });
  fs.rmSync(pkgBench, { recursive: true, force: true });
  run("wasm-bindgen", ["--target", "web", "--out-dir", pkgBench, "--remove-name-section", "--remove-producers-section", "target/wasm32-unknown-unknown/wasm/vap_eval.wasm"]);
  // As scripts/build-pkg.sh does for the package.
  run("bash", ["scripts/wasm-opt.sh", path.join(pkgBench, "vap_eval_bg.wasm")]);
  run("bash", ["scripts/build-pkg.sh"], { stdio: ["ignore", "inherit", "inherit"] });
  for (const d of ["bench", "tests/node"]) {
    if (!fs.existsSync(path.join(repo, d, "node_modules"))) run("npm", ["ci", "--no-audit", "--no-fund"], { cwd: path.join(repo, d), stdio: ["ignore", "inherit", "inherit"] });
  }
}

// ---- correctness of the wasm-only paths ----------------------------------------------------
// Time zones come from the host's Intl in wasm and from jiff's bundled database natively.
const tzCheck = run("node", [path.join(here, "tz-check.mjs"), pkgBench]).trim().split("\n").at(-1);

// ---- throughput -----------------------------------------------------------------------------
const load0 = os.loadavg();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const native = runJson(path.join(repo, "target/release/examples/vap_bench"), []);
const celCrate = runJson(path.join(repo, "bench/cel-crate/target/release/cel-crate-bench"), ["--json"]);
const wasmRounds = [];
const peerRounds = [];
for (let r = 0; r < ROUNDS; r++) {
  wasmRounds.push(runJson("node", [path.join(here, "wasm-node.mjs"), dir, pkgBench, pkg]));
  peerRounds.push(runJson("node", [path.join(here, "peers.mjs"), "--json"]));
}
const merge = (rounds) => {
  const m = { ...rounds[0], rounds: rounds.length };
  for (const k of Object.keys(rounds[0])) if (typeof rounds[0][k] === "number" && !["runs", "warmup"].includes(k)) m[k] = +median(rounds.map((x) => x[k])).toFixed(1);
  delete m.perExpr;
  return m;
};
const wasm = merge(wasmRounds);
const celjs = merge(peerRounds);

// ---- size -----------------------------------------------------------------------------------
function sizeOf(file) {
  const bytes = fs.readFileSync(file);
  return {
    file: path.relative(repo, file),
    raw: bytes.length,
    gzip9: zlib.gzipSync(bytes, { level: 9 }).length,
    brotli11: zlib.brotliCompressSync(bytes, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length, [zlib.constants.BROTLI_PARAM_LGWIN]: 24 },
    }).length,
  };
}
// The bar applies to the shipped package; the bench package (with the bench exports) for scale.
const sizeShipped = sizeOf(path.join(pkg, "vap_eval_bg.wasm"));
const sizeBench = sizeOf(path.join(pkgBench, "vap_eval_bg.wasm"));
const size = sizeShipped;

// ---- first evaluate(): what V8 compiles for it (deterministic; the cold start's largest part) --
const firstCall = runJson("node", [path.join(here, "first-call.mjs"), path.join(repo, "pkg")]);

// ---- cold start -----------------------------------------------------------------------------
let cold = null;
if (!args.has("--skip-cold")) {
  cold = JSON.parse(run("node", [path.join(here, "cold-start.mjs"), String(COLD_RUNS)]));
}
const load1 = os.loadavg();

// ---- report ---------------------------------------------------------------------------------
const f = (x) => (x == null ? "–" : x.toFixed(1));
const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
const bar = (ok) => (ok ? "PASS" : "FAIL");
// Each ratio is the median of the per-round ratios: round r's wasm and cel-js processes ran back to
// back, so their figures share the machine's load better than medians taken across rounds do.
const roundRatios = (a, b) => wasmRounds.map((w, r) => w[a] / peerRounds[r][b]);
const ratios1 = roundRatios("evalSum14Us", "evalSum14Us");
const ratios2 = roundRatios("e2eUs", "e2eUsCorrectInts");
const ratios2plain = roundRatios("e2eUs", "e2eUs");
// The user path (issue 13): PolicySet.evaluate of the 14 as validations, object as JSON text /
// as a JS object, against cel-js's JSON.parse + the 14 on the same text (plain e2e).
const ratiosUserText = roundRatios("userPathTextUs", "e2eUs");
const ratiosUserObject = roundRatios("userPathObjectUs", "e2eUs");
const ratioUserText = median(ratiosUserText);
const ratioUserObject = median(ratiosUserObject);
const USER_TEXT_BAR = 1.5;
const USER_OBJECT_BAR = 2.0;
const stageKeys = Object.keys(wasmRounds[0].userPathStages ?? {});
const stages = Object.fromEntries(stageKeys.map((k) => [k, +median(wasmRounds.map((w) => w.userPathStages[k])).toFixed(1)]));
const ratio1 = median(ratios1);
const ratio2 = median(ratios2);
const ratio2plain = median(ratios2plain);
const each = (rs) => `rounds ${rs.map((x) => x.toFixed(2)).join(", ")}`;
const rows = [
  ["vap-eval, native (Rust)", native.compileUsPerExpr, native.evalSum14Us, native.e2eUs, null],
  ["vap-eval, wasm under Node", wasm.compileUsPerExpr, wasm.evalSum14Us, wasm.e2eUs, null],
  [`@marcbachmann/cel-js ${celjs.version}`, celjs.compileUsPerExpr, celjs.evalSum14Us, celjs.e2eUs, celjs.e2eUsCorrectInts],
  [`cel crate ${celCrate.version} interpreter, native`, celCrate.compileUsPerExpr, celCrate.evalSum14Us, celCrate.e2eUs, null],
];
const lines = [];
const p = (s = "") => lines.push(s);
p(`vap-eval benchmark — ${dir}`);
p(`document ${fs.statSync(path.join(dir, "deployment.json")).size} B, ${JSON.parse(fs.readFileSync(path.join(dir, "expressions.json"))).length} expressions, every result verified against expect`);
p(`node ${process.version}; ${os.cpus().length} cores, load average ${load0.map((x) => x.toFixed(2)).join(" ")} at start, ${load1.map((x) => x.toFixed(2)).join(" ")} at end (shared machine)`);
p(`medians of ${wasm.runs} runs after ${wasm.warmup} warm-up; wasm and cel-js: median of ${ROUNDS} alternating rounds`);
p();
p(`${"engine".padEnd(36)} ${"compile µs/expr".padStart(15)} ${"eval Σ14 µs".padStart(12)} ${"end-to-end µs".padStart(14)} ${"e2e, int ok µs".padStart(15)}`);
for (const [name, c, e, t, ti] of rows) p(`${name.padEnd(36)} ${f(c).padStart(15)} ${f(e).padStart(12)} ${f(t).padStart(14)} ${(ti == null ? "= e2e" : f(ti)).padStart(15)}`);
p("  (end-to-end = object as JSON text in → 14 results out; cel-js's plain e2e reads Kubernetes integers as double,");
p("   'int ok' uses JSON.parse with a BigInt reviver; vap-eval and the cel crate always read them as int)");
p();
p("Bars (median of the per-round ratios; each round runs wasm and cel-js back to back):");
p(`  wasm eval Σ14 ≤ cel-js eval Σ14                  ${ratio1.toFixed(2)}  ${bar(ratio1 <= 1)}  (${each(ratios1)})`);
p(`  wasm e2e ≤ cel-js e2e with correct ints          ${ratio2.toFixed(2)}  ${bar(ratio2 <= 1)}  (${each(ratios2)})`);
p(`    (aim: ≤ cel-js's plain e2e                      ${ratio2plain.toFixed(2)}  ${ratio2plain <= 1 ? "met" : "not met"}  (${each(ratios2plain)}))`);
p("The user path (PolicySet.evaluate, a policy holding the 14 as validations, bound with Deny; vs cel-js JSON.parse + 14):");
p(`  JSON text: ${f(wasm.userPathTextUs)} µs;  JS object: ${f(wasm.userPathObjectUs)} µs;  evaluate() uncompiled, text: ${f(wasm.userPathEvaluateUs)} µs`);
p(`  PolicySet.evaluate(text) ≤ ${USER_TEXT_BAR} × cel-js e2e              ${ratioUserText.toFixed(2)}  ${bar(ratioUserText <= USER_TEXT_BAR)}  (${each(ratiosUserText)})`);
p(`  PolicySet.evaluate(object) ≤ ${USER_OBJECT_BAR} × cel-js e2e            ${ratioUserObject.toFixed(2)}  ${bar(ratioUserObject <= USER_OBJECT_BAR)}  (${each(ratiosUserObject)})`);
p(`  stages (µs, bench export PolicyBench, no conversion to JS unless named): ${Object.entries(stages).map(([k, v]) => `${k} ${v}`).join(", ")}`);
p();
for (const [label, s] of [["Package", sizeShipped], ["Bench package (whole pipeline + bench exports)", sizeBench]])
  p(`${label} ${s.file}: raw ${kb(s.raw)}, gzip (zlib level 9) ${kb(s.gzip9)}, brotli q11 ${kb(s.brotli11)}`);
p(`  bar gzip ≤ ${kb(GZIP_BAR)} (${size.file})${" ".repeat(Math.max(1, 38 - size.file.length))}${bar(size.gzip9 <= GZIP_BAR)}`);
if (cold) {
  p(`Cold start, headless Chromium, www/ → first rendered result: median ${f(cold.medianMs)} ms of ${cold.runs.length} fresh loads [${cold.runs.map((x) => x.toFixed(0)).join(", ")}]`);
  p(`  bar ≤ ${COLD_BAR_MS} ms                                      ${bar(cold.medianMs <= COLD_BAR_MS)}`);
  p(`  painted (the frame showing it): ${f(cold.paintedMs)} ms;  baseline, an empty page with one module script, same runs: ${f(cold.baselineMs)} ms`);
  p(`  the playground's own cost (median − baseline): ${f(cold.overBaselineMs)} ms`);
} else p("Cold start: skipped (--skip-cold)");
p(`First evaluate() of the playground's default example (Node, bench/first-call.mjs): V8 compiles ${firstCall.functions} wasm functions, ${kb(firstCall.bodyBytes)} of wasm code (${kb(firstCall.codeBytes)} machine code); first call ${f(firstCall.firstMs)} ms, second ${f(firstCall.secondMs)} ms`);
p(`evaluate(), policy with 5 validations + messageExpression, benchmark Deployment as JSON text, per request:`);
p(`  wasm via ${wasm.evaluateApi}: ${f(wasm.evaluatePolicyUs)} µs;  native api::evaluate: ${f(native.evaluatePolicyUs)} µs`);
p(`Time zones, wasm (host Intl) vs native (bundled IANA database), 286 accessor calls: ${tzCheck}`);
p(`Other: wasm instantiate ${wasm.instantiateMs} ms (Node, initSync); JSON parse alone: native serde_json ${f(native.jsonParseUs)} µs, JS JSON.parse ${f(celjs.jsonParseUs)} µs`);
const text = lines.join("\n");
console.log(text);

const results = {
  date: new Date().toISOString(),
  benchDir: dir,
  loadavg: { start: load0, end: load1 },
  native,
  wasm,
  wasmRounds,
  celjs,
  celjsRounds: peerRounds,
  celCrate,
  size: { shipped: sizeShipped, bench: sizeBench, barAppliesTo: size.file },
  coldStart: cold,
  firstCall,
  tzCheck,
  bars: {
    wasmEvalVsCelJs: { ratio: +ratio1.toFixed(3), rounds: ratios1.map((x) => +x.toFixed(3)), pass: ratio1 <= 1 },
    wasmE2eVsCelJsCorrectInts: { ratio: +ratio2.toFixed(3), rounds: ratios2.map((x) => +x.toFixed(3)), pass: ratio2 <= 1 },
    wasmE2eVsCelJsPlain: { ratio: +ratio2plain.toFixed(3), rounds: ratios2plain.map((x) => +x.toFixed(3)), pass: ratio2plain <= 1 },
    userPathTextVsCelJs: { ratio: +ratioUserText.toFixed(3), rounds: ratiosUserText.map((x) => +x.toFixed(3)), bar: USER_TEXT_BAR, pass: ratioUserText <= USER_TEXT_BAR },
    userPathObjectVsCelJs: { ratio: +ratioUserObject.toFixed(3), rounds: ratiosUserObject.map((x) => +x.toFixed(3)), bar: USER_OBJECT_BAR, pass: ratioUserObject <= USER_OBJECT_BAR },
    gzipBytes: { value: size.gzip9, bar: GZIP_BAR, pass: size.gzip9 <= GZIP_BAR },
    coldStartMs: cold ? { value: cold.medianMs, bar: COLD_BAR_MS, pass: cold.medianMs <= COLD_BAR_MS } : null,
  },
};
fs.writeFileSync(path.join(out, "results.json"), JSON.stringify(results, null, 2) + "\n");
fs.writeFileSync(path.join(out, "results.txt"), text + "\n");
console.log(`\nJSON: ${path.relative(process.cwd(), path.join(out, "results.json"))}`);
