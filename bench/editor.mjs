#!/usr/bin/env node
// Editor latency on the standard benchmark object: `node bench/editor.mjs` after
// `bash scripts/build-pkg.sh`. Times `complete` and `hover` (one call = one keystroke: the input
// is parsed, the kind's schema converted to CEL types, the expression checked) on the benchmark
// Deployment with its kind's schema, the benchmark's expressions at several positions, and a
// `typecheck` of a policy holding all 14 expressions. Prints medians and p95 (µs per call).
// Env: BENCH_RUNS (300).
import fs from "node:fs";
import path from "node:path";
import { benchDir } from "./bench-dir.mjs";

const pkg = new URL("../pkg/", import.meta.url);
const wasm = await import(new URL("vap_eval.js", pkg));
wasm.initSync({ module: fs.readFileSync(new URL("vap_eval_bg.wasm", pkg)) });
const t0 = performance.now();
wasm.loadSchemas("1.35", fs.readFileSync(new URL("schemas/1.35.json", pkg), "utf8"));
const loadMs = performance.now() - t0;
const t1 = performance.now();
wasm.loadSchemaDescriptions("1.35", fs.readFileSync(new URL("schemas/1.35.descriptions.json", pkg), "utf8"));
const descMs = performance.now() - t1;

const dir = benchDir();
const object = JSON.parse(fs.readFileSync(path.join(dir, "deployment.json"), "utf8"));
const exprs = JSON.parse(fs.readFileSync(path.join(dir, "expressions.json"), "utf8")).map((e) => e.expr);
const RUNS = Number(process.env.BENCH_RUNS ?? 300);
const options = { objectKind: "apps/v1/Deployment", kubernetesVersion: "1.35" };

function time(f) {
  for (let i = 0; i < 20; i++) f(i);
  const ts = [];
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    f(i);
    ts.push((performance.now() - s) * 1000);
  }
  ts.sort((a, b) => a - b);
  return { median: ts[ts.length >> 1], p95: ts[Math.floor(ts.length * 0.95)] };
}

// Positions: after each '.' of each expression (member completion), and the end.
const cases = [];
for (const e of exprs) {
  for (let i = 0; i < e.length; i++) if (e[i] === ".") cases.push({ expression: e, pos: i + 1 });
  cases.push({ expression: e, pos: e.length });
}
const complete = time((i) => {
  const c = cases[i % cases.length];
  wasm.completeExpression(c.expression, c.pos, { object }, options);
});
const hover = time((i) => {
  const c = cases[i % cases.length];
  wasm.hoverExpression(c.expression, Math.max(0, c.pos - 2), { object }, options);
});
const manifests = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
${exprs.map((e) => `  - expression: ${JSON.stringify(e)}`).join("\n")}
`;
const typecheck = time(() => wasm.typecheck({ manifests, kubernetesVersion: "1.35" }));
const manifestComplete = time((i) => {
  const at = manifests.indexOf("object.spec.") + 12;
  wasm.complete({ manifests, object, kubernetesVersion: "1.35" }, at + (i % 2));
});
const f = (r) => `median ${r.median.toFixed(0)} µs, p95 ${r.p95.toFixed(0)} µs`;
console.log(`loadSchemas(1.35): ${loadMs.toFixed(1)} ms; loadSchemaDescriptions(1.35): ${descMs.toFixed(1)} ms`);
console.log(`complete (standalone, ${cases.length} positions): ${f(complete)}`);
console.log(`hover (standalone): ${f(hover)}`);
console.log(`complete (in a 14-validation policy): ${f(manifestComplete)}`);
console.log(`typecheck (14 validations × Deployment): ${f(typecheck)}`);
