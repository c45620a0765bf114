#!/usr/bin/env node
// Peer benchmark: @marcbachmann/cel-js on the standard benchmark (a Deployment JSON and 14 VAP
// expressions with expected results). Every result is verified against `expect`.
//
//   cd bench && npm ci && node peers.mjs [--json]
//
// Env: VAP_BENCH_DIR (default: <repo>/../shared/bench; from a git worktree, also the main
// checkout's ../shared/bench), BENCH_RUNS (timed samples, default 400), BENCH_WARMUP (default 200).
// Prints a human table and writes machine-readable JSON to bench/.out/peers.json (--json: prints
// the JSON instead of the table).
//
// Figures (µs, wall clock, this process):
//   compile      mean per expression of parse + type-check (env.parse(e).check()), all 14 in turn
//   eval Σ14     median over runs of evaluating the 14 pre-compiled expressions on the parsed object
//   e2e          median over runs of: JSON text -> JSON.parse -> the 14 results (compiled once)
//   e2e int      the same with integers as BigInt (cel-js's CEL int): JSON.parse with a reviver.
//
// cel-js represents CEL int as BigInt and CEL double as JS number. Plain JSON.parse gives numbers,
// so Kubernetes integers become CEL *double* — results only come out right because CEL compares
// int and double numerically. The "correct ints" variant converts integral JSON numbers to BigInt
// (Node 20 has no reviver source text, so `1.0` also becomes int; the benchmark object has no
// non-integral numbers).

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Environment } from "@marcbachmann/cel-js";
import { benchDir } from "./bench-dir.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const asJson = process.argv.includes("--json");
const RUNS = Number(process.env.BENCH_RUNS ?? 400);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);


const dir = benchDir();
const text = fs.readFileSync(path.join(dir, "deployment.json"), "utf8");
const cases = JSON.parse(fs.readFileSync(path.join(dir, "expressions.json"), "utf8"));
const celJsVersion = JSON.parse(
  fs.readFileSync(path.join(here, "node_modules", "@marcbachmann", "cel-js", "package.json"), "utf8"),
).version;

const intReviver = (_k, v) => (typeof v === "number" && Number.isInteger(v) ? BigInt(v) : v);

const env = new Environment().registerVariable("object", "dyn");

const now = () => performance.now() * 1000; // µs
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// Compile (parse + check), checked for errors once.
const programs = cases.map((c) => {
  const p = env.parse(c.expr);
  const chk = p.check();
  if (!chk.valid) throw new Error(`${c.id}: type check failed: ${chk.error?.message}`);
  return p;
});

function verify(label, results) {
  const bad = [];
  results.forEach((r, i) => {
    if (r !== cases[i].expect) bad.push(`${cases[i].id}: got ${String(r)}, expected ${cases[i].expect}`);
  });
  if (bad.length) throw new Error(`${label}: wrong results:\n  ${bad.join("\n  ")}`);
}

function evalAll(object) {
  const ctx = { object };
  const out = new Array(programs.length);
  for (let i = 0; i < programs.length; i++) out[i] = programs[i](ctx);
  return out;
}

// 1. compile: mean per expression.
const compileRounds = Math.max(20, Math.round(RUNS / 4));
for (let r = 0; r < 20; r++) for (const c of cases) env.parse(c.expr).check();
let t0 = now();
for (let r = 0; r < compileRounds; r++) for (const c of cases) env.parse(c.expr).check();
const compileUs = (now() - t0) / (compileRounds * cases.length);

function sample(label, fn) {
  let last;
  for (let i = 0; i < WARMUP; i++) last = fn();
  verify(label, last);
  const xs = [];
  for (let i = 0; i < RUNS; i++) {
    const a = now();
    last = fn();
    xs.push(now() - a);
  }
  verify(label, last);
  return { median: median(xs), min: Math.min(...xs) };
}

const parsedDoubles = JSON.parse(text);
const parsedInts = JSON.parse(text, intReviver);
const evalD = sample("eval (JSON numbers)", () => evalAll(parsedDoubles));
const evalI = sample("eval (BigInt ints)", () => evalAll(parsedInts));
const e2e = sample("e2e (JSON.parse)", () => evalAll(JSON.parse(text)));
const e2eI = sample("e2e (JSON.parse + BigInt reviver)", () => evalAll(JSON.parse(text, intReviver)));
const parseOnly = sample("JSON.parse only", () => (JSON.parse(text), cases.map((c) => c.expect)));

// Per-expression evaluation medians (ints as BigInt), to see where the time goes.
const perExpr = programs.map((p, i) => {
  const ctx = { object: parsedInts };
  for (let k = 0; k < WARMUP; k++) p(ctx);
  const xs = [];
  for (let k = 0; k < RUNS; k++) {
    const a = now();
    p(ctx);
    xs.push(now() - a);
  }
  return { id: cases[i].id, evalUs: +median(xs).toFixed(2) };
});

const r2 = (x) => +x.toFixed(1);
const result = {
  engine: "@marcbachmann/cel-js",
  version: celJsVersion,
  node: process.version,
  benchDir: dir,
  documentBytes: Buffer.byteLength(text),
  expressions: cases.length,
  runs: RUNS,
  warmup: WARMUP,
  verified: true,
  compileUsPerExpr: r2(compileUs),
  evalSum14Us: r2(evalD.median),
  evalSum14UsBigIntInts: r2(evalI.median),
  e2eUs: r2(e2e.median),
  e2eUsCorrectInts: r2(e2eI.median),
  jsonParseUs: r2(parseOnly.median),
  perExpr,
};

fs.mkdirSync(path.join(here, ".out"), { recursive: true });
fs.writeFileSync(path.join(here, ".out", "peers.json"), JSON.stringify(result, null, 2) + "\n");
if (asJson) {
  console.log(JSON.stringify(result, null, 2));
} else {
  console.log(`${result.engine} ${result.version} on node ${result.node}; ${dir}`);
  console.log(`document ${result.documentBytes} B, ${cases.length} expressions, median of ${RUNS} runs after ${WARMUP} warm-up; all results verified`);
  const rows = [
    ["compile (parse+check), mean per expression", result.compileUsPerExpr],
    ["eval Σ14, JSON numbers (ints as double)", result.evalSum14Us],
    ["eval Σ14, ints as BigInt", result.evalSum14UsBigIntInts],
    ["end-to-end: JSON.parse + 14 results", result.e2eUs],
    ["end-to-end, correct ints (BigInt reviver)", result.e2eUsCorrectInts],
    ["  of which JSON.parse alone", result.jsonParseUs],
  ];
  for (const [k, v] of rows) console.log(`  ${k.padEnd(46)} ${String(v).padStart(9)} µs`);
  console.log("  per expression (eval, ints as BigInt, µs): " + perExpr.map((e) => `${e.id.slice(0, 3)} ${e.evalUs}`).join(", "));
  console.log(`JSON: ${path.relative(process.cwd(), path.join(here, ".out", "peers.json"))}`);
}
