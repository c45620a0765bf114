// node --test tests/node/fuzz.test.mjs — random and mutated inputs through the package's JS API,
// as a user's code would pass them. Nothing reachable from input may trap the wasm instance (the
// package is built with panic = "abort": a Rust panic is a RuntimeError that poisons the
// instance) or run away: an Error or a diagnostic is the only acceptable answer to bad input.
//
// Deterministic: a fixed seed and call count (~20,000 calls, ~15 s here). For a longer campaign:
//   FUZZ_SEED=7 FUZZ_CALLS=1000000 node --test tests/node/fuzz.test.mjs
// Corpus: the CEL conformance expressions (tests/conformance/.cache/suites.json, written by
// scripts/test.sh before this runs; without it, the rest), the benchmark's 14 expressions, and
// the manifests, objects and requests of every playground example and pipeline case
// (tests/cases), plus type-checking inputs (supplied `schemas`, a CRD, objectKind/objectSchema)
// and complete/hover positions. Mutations: characters, CEL tokens, splices, deep nesting, and for YAML also
// whole lines and values (so that most documents still parse and reach the pipeline).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { findBenchDir } from "../../bench/bench-dir.mjs";

const pkgDir = new URL("../../pkg/", import.meta.url);
const wasm = await import(new URL("vap_eval.js", pkgDir));
wasm.initSync({ module: fs.readFileSync(new URL("vap_eval_bg.wasm", pkgDir)) });
// The built-in schemas shipped beside the module, so type checking and completion run too.
const schemaText = fs.readFileSync(new URL("schemas/1.35.json", pkgDir), "utf8");
wasm.loadSchemas("1.35", schemaText);
wasm.loadSchemaDescriptions("1.35", fs.readFileSync(new URL("schemas/1.35.descriptions.json", pkgDir), "utf8"));
// Schemas input corpus: supplied OpenAPI schemas (valid, odd and hostile) and a CRD.
const SCHEMAS = [
  { "apps/v1/Deployment": { type: "object", properties: { foo: { type: "string" }, spec: { $ref: "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec" } } } },
  { "v1/ConfigMap": { type: "object", additionalProperties: { type: "array", items: { "x-kubernetes-int-or-string": true } } } },
  { "apps/v1/Deployment": { $ref: "#/components/schemas/io.k8s.api.apps.v1.Deployment" } },
  { "apps/v1/Deployment": { $ref: "Loop" } },
  { "apps/v1/Deployment": { type: ["object", "null"], properties: { "": { type: "string" }, "1a": {}, "a-b": { type: "integer" }, namespace: { type: "string", format: "date-time" } } } },
  { "apps/v1/Deployment": { type: 7, properties: [] } },
  { "apps/v1/Deployment": "not a schema" },
];
const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            properties:
              size: {type: integer}
              items: {type: array, items: {type: object, x-kubernetes-embedded-resource: true}}
`;

const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const CALLS = Number(process.env.FUZZ_CALLS ?? 20000);
const SLOW_MS = 2000;

let state = SEED >>> 0;
const rnd = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
const int = (n) => Math.floor(rnd() * n);
const pick = (a) => a[int(a.length)];

const read = (rel) => fs.readFileSync(new URL(rel, import.meta.url), "utf8");
const exists = (rel) => fs.existsSync(new URL(rel, import.meta.url));

const exprs = [];
if (exists("../conformance/.cache/suites.json"))
  for (const t of JSON.parse(read("../conformance/.cache/suites.json")).tests) if (typeof t.expr === "string") exprs.push(t.expr);
// The benchmark's Deployment and 14 expressions (`[{id, expr, expect}]`), where the machine has them.
const benchDir = findBenchDir();
const deployment = benchDir
  ? JSON.parse(fs.readFileSync(path.join(benchDir, "deployment.json"), "utf8"))
  : { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { replicas: 3 } };
if (benchDir) for (const e of JSON.parse(fs.readFileSync(path.join(benchDir, "expressions.json"), "utf8"))) exprs.push(e.expr);
const index = JSON.parse(read("../../www/examples/index.json"));
const examples = index.examples.map((e) => {
  const f = (k) => (e[k] ? read(`../../www/examples/${e[k]}`) : undefined);
  return { manifests: f("manifests"), object: f("object"), oldObject: f("oldObject"), request: f("request") };
});
// Each example's second request (passing or failing), its files replacing the first's.
for (const e of index.examples) {
  const second = e.passing ?? e.failing;
  if (!second) continue;
  const f = (k) => (second[k] ?? e[k] ? read(`../../www/examples/${second[k] ?? e[k]}`) : undefined);
  examples.push({ manifests: f("manifests"), object: f("object"), oldObject: f("oldObject"), request: f("request") });
}
// The pipeline cases (tests/cases/*): policies, bindings, params, namespaces, RBAC, webhook
// configurations, objects.
const casesDir = new URL("../cases/", import.meta.url);
for (const entry of fs.readdirSync(casesDir, { withFileTypes: true })) {
  if (!entry.isDirectory()) continue;
  const dir = new URL(`${entry.name}/`, casesDir);
  const f = (file) => (fs.existsSync(new URL(file, dir)) ? fs.readFileSync(new URL(file, dir), "utf8") : undefined);
  const manifests = ["policy.yaml", "binding.yaml", "params.yaml", "namespace.yaml", "rbac.yaml", "webhooks.yaml"].map(f).filter(Boolean).join("\n---\n");
  if (manifests) examples.push({ manifests, object: f("object.yaml"), oldObject: f("oldObject.yaml"), request: undefined });
}
// Kyverno policies (docs/kyverno-semantics.md), with a Pod and a Deployment to evaluate.
const kyvernoCorpus = read("fixtures/kyverno-corpus.yaml");
examples.push(
  { manifests: kyvernoCorpus, object: "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default, labels: {app: a}}\nspec: {containers: []}\n" },
  { manifests: kyvernoCorpus, object: JSON.stringify({ ...deployment, metadata: { name: "web", namespace: "default" } }) },
);
// The same objects as JSON text too, so mutations reach the plain-JSON fast path and its
// fallback to the positions loader (issue 13); converted by the package itself.
for (const e of [...examples]) {
  if (!e.object) continue;
  const value = wasm.evaluateExpression("object", { object: e.object }, { kind: "variable" }).value;
  if (value && typeof value === "object") examples.push({ ...e, object: JSON.stringify(value, null, examples.length % 2 ? 2 : 0) });
}
for (const e of examples)
  for (const m of e.manifests.matchAll(/(?:expression|Expression): (?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|(.+))/g))
    exprs.push(m[1] ?? m[2]?.replace(/''/g, "'") ?? m[3]);

const CHARS = [..."()[]{}.,:;?!&|=<>+-*/%\"'`\\ \n\t0123456789abcxyz_$@#^~", "é", "😀", "\u0000", "\u200b", "ß", "İ", "\ud800", "𝟘"];
const TOKENS = [
  "object", "oldObject", "params", "request", "namespaceObject", "authorizer", "variables", "self",
  ".all(x, ", ".exists(x, ", ".exists_one(x, ", ".map(x, ", ".filter(x, ", "has(", "size(", "int(", "uint(", "double(",
  "string(", "bytes(", "duration(", "timestamp(", "quantity(", "isQuantity(", "ip(", "cidr(", "url(", "semver(",
  "format.dns1123Label()", ".matches(", ".split(", ".join(", ".indexOf(", ".replace(", ".lowerAscii()", ".sort()",
  ".sum()", ".min()", ".format([", "dyn(", "type(", "?", ".?", "optional.of(", "optional.none()", ".orValue(",
  "9223372036854775807", "-9223372036854775808", "18446744073709551615u", "1e308", "0x7fffffffffffffff",
  "b'\\xff'", "'''", "r'\\d+'", "null", "[1,2,3]", "{'a': 1}", "1 / 0", "1 % 0", "math.greatest(", "sets.contains(",
  "lists.range(", "strings.quote(", ".reverse()", ".charAt(", ".substring(", ".getHours('Europe/Paris')",
  ".compareTo(", ".add(", ".asInteger()", ".path(", ".check('get')", ".allowed()", ".errored()",
  ".resource('pods', 'apps', 'default')", ".group('apps')",
];

function mutate(s) {
  for (let n = 1 + int(4); n > 0; n--) {
    const p = int(s.length + 1);
    switch (int(7)) {
      case 0: s = s.slice(0, p) + s.slice(p + 1 + int(3)); break;
      case 1: s = s.slice(0, p) + pick(CHARS) + s.slice(p); break;
      case 2: s = s.slice(0, p) + pick(TOKENS) + s.slice(p); break;
      case 3: { const o = pick(exprs); const q = int(o.length); s = s.slice(0, p) + o.slice(q, q + 1 + int(20)) + s.slice(p); break; }
      case 4: s = pick(["!", "-", "(", "[", "{", "size(", "string(", "dyn("]) + s + pick([")", "]", "}", ".size()", " == 1", " + ''", " ? 1 : 2"]); break;
      case 5: { const q = int(s.length); s += s.slice(q, q + int(40)); break; }
      default: s = s.slice(0, p) + "(".repeat(int(300)) + s.slice(p);
    }
  }
  return s;
}

const VALUES = [
  "null", "~", "true", "0", "-1", "1.5", "9223372036854775808", "-9223372036854775809", "1e400", "0x10", "''", '""',
  "[]", "{}", "[1, [2, {a: b}]]", "{matchExpressions: [{key: a, operator: Exists}]}", "*x", "&x v", "!!binary aGk=",
  "'é😀'", "\"\\ud800\"", "Fail", "Ignore", "Deny", "[Deny, Warn, Audit]", "[Audit]", "Equivalent", "Exact",
  "'*'", "['*']", "[CREATE, UPDATE]", "v1", "apps/v1", "ConfigMap", "{name: x}", "{name: x, namespace: y}",
  "{parameterNotFoundAction: Allow}", "\"object.spec.replicas > 0\"", "\"params.data.x\"", "\"variables.v\"",
];
function mutateYaml(text) {
  const lines = text.split("\n");
  for (let n = 1 + int(3); n > 0; n--) {
    const i = int(lines.length);
    switch (int(6)) {
      case 0: lines.splice(i, 1); break;
      case 1: lines.splice(i, 0, lines[int(lines.length)] ?? ""); break;
      case 2: lines[i] = (lines[i] ?? "").replace(/^(\s*(?:- )?[\w.\/-]+:)(\s.*)?$/, (_, key) => `${key} ${pick(VALUES)}`); break;
      case 3: lines[i] = (lines[i] ?? "").replace(/^(\s*)- /, "$1- " + pick(VALUES) + "\n$1  "); break;
      // Block nesting around the 255-level limit (5,000 levels overflowed the stack; a few
      // hundred exhausted the engine's stack in evaluate).
      case 4: { const ind = (lines[i] ?? "").match(/^\s*/)[0]; lines[i] = ind + "deep:" + Array.from({ length: 200 + int(400) }, (_, k) => "\n" + ind + " ".repeat(k + 1) + "a:").join(""); break; }
      default: return mutate(text);
    }
  }
  return lines.join("\n");
}

function randomJson(depth = 0) {
  switch (int(depth > 3 ? 6 : 9)) {
    case 0: return null;
    case 1: return rnd() < 0.5;
    case 2: return pick([0, -1, 1.5, 2 ** 53, 2 ** 63, -(2 ** 63), 1e308, 9007199254740993]);
    case 3: return pick(["", "a", "é😀", "100m", "1Gi", "10.0.0.1", "::1/64", "2024-01-01T00:00:00Z", "1h", "v1.2.3", "x".repeat(int(5000))]);
    case 4: return String(int(1000));
    case 5: return pick([deployment, deployment.spec, deployment.metadata]);
    case 6: return Array.from({ length: int(5) }, () => randomJson(depth + 1));
    default: return Object.fromEntries(Array.from({ length: int(5) }, () => [pick(["a", "spec", "metadata", "replicas", "data", "labels", "name", "é", ""]), randomJson(depth + 1)]));
  }
}

test(`${CALLS} random and mutated calls (seed ${SEED}): no trap, nothing slower than ${SLOW_MS} ms`, () => {
  assert.ok(exprs.length > 20, `expression corpus too small (${exprs.length})`);
  const versions = wasm.supportedVersions();
  const kinds = ["validation", "messageExpression", "matchCondition", "auditAnnotation", "variable", undefined, "bogus"];
  const counts = { calls: 0, threw: 0, diagnostics: 0 };
  const call = (label, input, f) => {
    counts.calls++;
    const t0 = performance.now();
    let out;
    try {
      out = f();
    } catch (e) {
      // A trap leaves the instance unusable: report the input that caused it.
      assert.ok(!(e instanceof WebAssembly.RuntimeError), `${label} trapped (${e}) on ${JSON.stringify(input).slice(0, 2000)}`);
      assert.ok(e instanceof Error && e.message.length > 0, `${label} threw a non-Error or an empty message: ${e}`);
      counts.threw++;
    }
    if (out?.diagnostics?.length) counts.diagnostics++;
    const ms = performance.now() - t0;
    assert.ok(ms < SLOW_MS, `${label} took ${ms.toFixed(0)} ms on ${JSON.stringify(input).slice(0, 2000)}`);
  };
  while (counts.calls < CALLS) {
    const r = rnd();
    if (r < 0.6) {
      const expr = rnd() < 0.1 ? pick(exprs) : mutate(pick(exprs));
      const vars = {};
      for (const k of ["object", "oldObject", "params", "request", "namespaceObject", "x"]) if (rnd() < 0.4) vars[k] = rnd() < 0.2 ? JSON.stringify(randomJson()) : randomJson();
      const opts = { kind: pick(kinds), kubernetesVersion: rnd() < 0.8 ? pick(versions) : pick(["1.29", "2.0", "", "x"]) };
      if (rnd() < 0.2) opts.objectKind = pick(["apps/v1/Deployment", "v1/Pod", "a/b/c/", "", "Deployment", "example.com/v1/Widget"]);
      if (rnd() < 0.1) opts.objectSchema = pick(Object.values(pick(SCHEMAS)));
      call("evaluateExpression", { expr, vars, opts }, () => wasm.evaluateExpression(expr, vars, opts));
      if (rnd() < 0.15) {
        const o = { ...opts, objectKind: opts.objectKind ?? "apps/v1/Deployment" };
        const v = { ...vars, object: vars.object ?? deployment };
        const p = int(expr.length + 2);
        call("completeExpression", { expr, p, o }, () => wasm.completeExpression(expr, p, v, o));
        call("hoverExpression", { expr, p, o }, () => wasm.hoverExpression(expr, p, v, o));
      }
    } else if (r < 0.9) {
      const input = { ...pick(examples) };
      const field = pick(["manifests", "manifests", "manifests", "object", "request", "oldObject"]);
      input[field] = rnd() < 0.5 ? mutateYaml(input[field] ?? "") : mutate(input[field] ?? "");
      if (rnd() < 0.3) input.manifests = input.manifests.replace(/expression: (.+)/, (_, x) => "expression: " + JSON.stringify(mutate(x)));
      if (rnd() < 0.1) input.kubernetesVersion = pick(versions);
      if (rnd() < 0.3) input.unboundPolicies = pick(["skip", "preview", "bind"]);
      if (rnd() < 0.2) input.missingNamespaces = pick(["assume", "strict"]);
      if (rnd() < 0.1) input.schemas = pick(SCHEMAS);
      if (rnd() < 0.05) input.manifests = (rnd() < 0.5 ? CRD : mutateYaml(CRD)) + "\n---\n" + input.manifests.replace(/apiGroups: \[.*\]/, "apiGroups: [example.com]").replace(/resources: \[.*\]/, "resources: [widgets]");
      call("evaluate", input, () => wasm.evaluate(input));
      if (rnd() < 0.05) {
        const p = int(input.manifests.length + 2);
        call("complete", { input, p }, () => wasm.complete(input, p));
        call("hover", { input, p }, () => wasm.hover(input, p));
      }
      if (rnd() < 0.2) call("typecheck", input, () => wasm.typecheck(input));
      if (rnd() < 0.1)
        call("PolicySet", input, () => {
          const set = new wasm.PolicySet(input.manifests, { unboundPolicies: input.unboundPolicies, missingNamespaces: input.missingNamespaces });
          let object = input.object;
          try {
            if (rnd() < 0.5) object = JSON.parse(object); // a JS object: the property-by-property path
          } catch {}
          try {
            return set.evaluate({ object, request: input.request });
          } finally {
            set.free();
          }
        });
    } else {
      const v = rnd() < 0.5 ? randomJson() : mutate(JSON.stringify(randomJson()));
      call("evaluate (any value)", v, () => wasm.evaluate(v));
    }
  }
  // The campaign reached the engine: some calls were refused outright, many more got diagnostics.
  assert.ok(counts.threw > 0 && counts.diagnostics > CALLS / 10, JSON.stringify(counts));
  // And the instance still answers correctly afterwards.
  assert.equal(wasm.evaluateExpression("object.spec.replicas * 2", { object: { spec: { replicas: 3 } } }).value, 6);
});
