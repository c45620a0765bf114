#!/usr/bin/env node
// Our engine compiled to wasm, under Node, on the standard benchmark; prints one JSON object.
// Run by bench/run.mjs (which builds the packages first):
//   node bench/wasm-node.mjs <bench-dir> <pkg-bench-dir> <pkg-dir>
// Uses the bench-only export `Bench` (cargo feature `bench`) of bench/.out/pkg-bench/, and for
// the per-request `evaluate` the shipped package's JS API.
//
// Env: BENCH_RUNS (timed samples, default 400), BENCH_WARMUP (default 200).
// Figures (µs, wall clock in this process):
//   compile   mean per expression of Bench.compileAll() (CelCompiler: parse, check, plan)
//   eval Σ14  median of Bench.evalAll() on the object parsed once inside wasm
//   e2e       median of Bench.endToEnd(text): the JSON text passed into wasm (UTF-16 -> UTF-8
//             copy), parsed there (the request path's one-pass reader), the 14 evaluated,
//             the 14 codes returned
//   evaluate  median of a full evaluate() of the 5-validation policy, object as JSON text
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [dir, pkgBench, pkgShipped] = process.argv.slice(2);
const RUNS = Number(process.env.BENCH_RUNS ?? 400);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);

const text = fs.readFileSync(path.join(dir, "deployment.json"), "utf8");
const casesText = fs.readFileSync(path.join(dir, "expressions.json"), "utf8");
const cases = JSON.parse(casesText);

async function load(pkgDir) {
  const mod = await import(pathToFileURL(path.join(pkgDir, "vap_eval.js")).href);
  mod.initSync({ module: fs.readFileSync(path.join(pkgDir, "vap_eval_bg.wasm")) });
  return mod;
}

const now = () => performance.now() * 1000;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const want = cases.map((c) => (c.expect === true ? 1 : c.expect === false ? 0 : -1));
function verify(label, codes) {
  const bad = [];
  want.forEach((w, i) => {
    if (codes[i] !== w) bad.push(`${cases[i].id}: got code ${codes[i]}, expected ${cases[i].expect}`);
  });
  if (bad.length) throw new Error(`${label}: wrong results:\n  ${bad.join("\n  ")}`);
}
function sample(label, fn, check, runs = RUNS, warmup = WARMUP) {
  let last;
  for (let i = 0; i < warmup; i++) last = fn();
  check(label, last);
  const xs = [];
  for (let i = 0; i < runs; i++) {
    const a = now();
    last = fn();
    xs.push(now() - a);
  }
  check(label, last);
  return median(xs);
}

const t0 = now();
const b = await load(pkgBench);
const loadUs = now() - t0;
const t1 = now();
const bench = new b.Bench(casesText);
const firstCompileUs = now() - t1;

// Full results once, compared with `expect` (any JSON value).
bench.setObject(text);
const results = JSON.parse(bench.resultsJson());
const wrong = results
  .map((r, i) => [r, cases[i]])
  .filter(([r, c]) => JSON.stringify(r) !== JSON.stringify(c.expect))
  .map(([r, c]) => `${c.id}: got ${JSON.stringify(r)}, expected ${JSON.stringify(c.expect)}`);
if (wrong.length) throw new Error(`wasm: wrong results:\n  ${wrong.join("\n  ")}`);

const rounds = Math.max(20, Math.round(RUNS / 4));
for (let r = 0; r < 5; r++) if (bench.compileAll() !== cases.length) throw new Error("compile failed");
let t = now();
for (let r = 0; r < rounds; r++) bench.compileAll();
const compileUs = (now() - t) / (rounds * cases.length);

const evalUs = sample("wasm eval", () => bench.evalAll(), (l, c) => verify(l, c));
const perExpr = cases.map((c, i) => ({
  id: c.id,
  evalUs: +sample(`wasm eval ${c.id}`, () => bench.evalOne(i), (l, code) => { if (code !== want[i]) throw new Error(`${l}: code ${code}`); }, RUNS >> 1, WARMUP >> 1).toFixed(2),
}));
const e2eUs = sample("wasm e2e", () => bench.endToEnd(text), (l, c) => verify(l, c));

// evaluate() through the JS API.
if (!pkgShipped || !fs.existsSync(path.join(pkgShipped, "vap_eval.js"))) throw new Error("usage: wasm-node.mjs <bench-dir> <pkg-bench-dir> <pkg-dir>; pkg/ must be built");
const shipped = await load(pkgShipped);
const api = "evaluate (the package's JS API)";
const evaluate = (m, i, o) => shipped.evaluate({ manifests: m, ...i, ...o });
const policy = b.benchPolicyYaml();
const plain = (r) => (typeof r === "string" ? JSON.parse(r) : r instanceof Map ? Object.fromEntries(r) : r);
const checkEvaluate = (label, r) => {
  const res = plain(r);
  const allowed = res?.response?.allowed ?? res?.response?.get?.("allowed");
  const validations = JSON.stringify(res?.policies ?? []).match(/"decision"/g)?.length ?? 0;
  if (allowed !== true || validations !== 5)
    throw new Error(`${label}: expected allowed with 5 validations evaluated, got ${JSON.stringify(res).slice(0, 400)}`);
};
checkEvaluate("evaluate", evaluate(policy, { object: text }, {}));
const evaluateUs = sample("evaluate", () => evaluate(policy, { object: text }, {}), checkEvaluate, Math.max(50, RUNS >> 2), Math.max(20, WARMUP >> 2));

// The user path: PolicySet.evaluate of a policy holding the 14 as validations (bound with Deny),
// object as JSON text and as a JS object; every validation's result checked against `expect`.
const userPolicy = b.benchPolicyYamlFor(casesText);
const set = new shipped.PolicySet(userPolicy);
if (set.diagnostics.some((d) => d.severity === "error")) throw new Error(`user-path policy: ${set.diagnostics[0].rendered}`);
const checkUser = (label, res) => {
  const vs = res?.policies?.[0]?.bindings?.[0]?.evaluations?.[0]?.validations ?? [];
  const bad = cases.map((c, i) => (vs[i]?.result === c.expect ? null : `${c.id}: got ${JSON.stringify(vs[i]?.result)}`)).filter(Boolean);
  if (vs.length !== cases.length || bad.length || res.response.allowed !== cases.every((c) => c.expect === true))
    throw new Error(`${label}: wrong results: ${bad.join(", ") || JSON.stringify(res).slice(0, 300)}`);
};
const objectJs = JSON.parse(text);
const userTextUs = sample("PolicySet.evaluate, JSON text", () => set.evaluate({ object: text }), checkUser);
const userObjectUs = sample("PolicySet.evaluate, JS object", () => set.evaluate({ object: objectJs }), checkUser);
const userEvaluateUs = sample("evaluate, 14 validations", () => shipped.evaluate({ manifests: userPolicy, object: text }), checkUser, Math.max(50, RUNS >> 2), Math.max(20, WARMUP >> 2));
set.free();

// Its stages, through the bench export PolicyBench (the same policy set; no conversion to JS
// unless named).
const pb = new b.PolicyBench(casesText, text);
const n14 = (l, n) => { if (n !== cases.length) throw new Error(`${l}: ${n} validations`); };
const truthy = (l, v) => { if (!v) throw new Error(`${l}: failed`); };
const stage = (label, fn, check) => r1(sample(label, fn, check));
const r1 = (x) => +x.toFixed(1);
const stages = {
  evaluateTextNoJsUs: stage("stage evaluateText", () => pb.evaluateText(text), n14),
  evaluateParsedNoJsUs: stage("stage evaluateParsed", () => pb.evaluateParsed(), n14),
  parsePositionsUs: stage("stage parsePositions", () => pb.parsePositions(text), truthy),
  parseDocumentUs: stage("stage parseDocument", () => pb.parseDocument(text), truthy),
  parseJsonUs: stage("stage parseJson", () => pb.parseJson(text), truthy),
  cloneObjectUs: stage("stage cloneObject", () => pb.cloneObject(), truthy),
  normalizeWithCopyUs: stage("stage normalizeObject", () => pb.normalizeObject(text), truthy),
  serializeResultUs: stage("stage serializeLast", () => pb.serializeLast(), truthy),
  jsonStringifyObjectUs: stage("stage JSON.stringify(object)", () => JSON.stringify(objectJs), truthy),
};
pb.free();

console.log(
  JSON.stringify(
    {
      engine: "vap-eval (wasm, Node)",
      node: process.version,
      verified: true,
      runs: RUNS,
      warmup: WARMUP,
      instantiateMs: +(loadUs / 1000).toFixed(1),
      firstCompileAllUs: r1(firstCompileUs),
      compileUsPerExpr: r1(compileUs),
      evalSum14Us: r1(evalUs),
      e2eUs: r1(e2eUs),
      evaluatePolicyUs: r1(evaluateUs),
      evaluateApi: api,
      userPathTextUs: r1(userTextUs),
      userPathObjectUs: r1(userObjectUs),
      userPathEvaluateUs: r1(userEvaluateUs),
      userPathStages: stages,
      perExpr,
    },
    null,
    2,
  ),
);
