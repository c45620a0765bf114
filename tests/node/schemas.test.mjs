// node --test tests/node/schemas.test.mjs — the built-in schemas (data/schemas/) and the package's
// type checking and editor APIs over them (docs/typechecking-semantics.md).
//
// The generated files must be what scripts/gen-schemas.mjs writes: always checked against the
// hashes the generator recorded in sources.json; and, when the upstream spec files are on the
// machine (K8S_OPENAPI_SPEC_DIR = a directory of <minor>/api/v1.json, apis/<group>/<version>.json,
// e.g. kubectl-validate's pkg/openapiclient/builtins), regenerated in --check mode. 1.36 and 1.37
// come from the Go types (scripts/gen-schemas-go.mjs), checked the same ways.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";

const root = new URL("../../", import.meta.url);
const dataDir = new URL("data/schemas/", root);
const sources = JSON.parse(fs.readFileSync(new URL("sources.json", dataDir), "utf8"));

test("committed schema files match the hashes the generator recorded", () => {
  const versions = Object.keys(sources.versions);
  assert.deepEqual(versions, ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35"]);
  for (const v of versions) {
    for (const [file, sha] of Object.entries(sources.versions[v].outputs)) {
      const text = fs.readFileSync(new URL(file, dataDir));
      assert.equal(createHash("sha256").update(text).digest("hex"), sha, `${file} was edited by hand or not regenerated`);
    }
    assert.ok(sources.versions[v].inputs.length > 30, `${v}: the record lists its input files`);
  }
  assert.equal(sources.repo, "kubernetes-sigs/kubectl-validate");
  assert.match(sources.commit, /^[0-9a-f]{40}$/);
});

const specDir = process.env.K8S_OPENAPI_SPEC_DIR;
test("the generator reproduces the committed files from the upstream spec", { skip: !specDir && "K8S_OPENAPI_SPEC_DIR not set" }, () => {
  execFileSync(process.execPath, [
    new URL("scripts/gen-schemas.mjs", root).pathname, "--check", "--source", specDir,
    "--repo", sources.repo, "--commit", sources.commit, "--path", "pkg/openapiclient/builtins",
  ], { stdio: "pipe" });
});

// 1.36 and 1.37 have no published spec here: scripts/gen-schemas-go.mjs makes them from the Go API
// types (kubernetes/api, apimachinery, apiextensions-apiserver, kube-aggregator at the tags
// recorded in sources.json's `generated` part).
test("generated schema files match the hashes their generator recorded", () => {
  const g = sources.generated;
  assert.equal(g.generator, "scripts/gen-schemas-go.mjs");
  assert.deepEqual(Object.keys(g.versions), ["1.36", "1.37"]);
  for (const [v, rec] of Object.entries(g.versions)) {
    for (const [file, sha] of Object.entries(rec.outputs)) {
      const text = fs.readFileSync(new URL(file, dataDir));
      assert.equal(createHash("sha256").update(text).digest("hex"), sha, `${file} was edited by hand or not regenerated`);
    }
    for (const k of ["api", "apimachinery", "apiextensions", "aggregator"]) {
      assert.match(rec.inputs[k].commit, /^[0-9a-f]{40}$/, `${v}: ${k} commit recorded`);
      assert.match(rec.inputs[k].tag, /^v0\.\d+\.\d+/, `${v}: ${k} tag recorded`);
    }
  }
});

// The Go-types generator must reproduce the bundles made from the published spec (1.30–1.35)
// exactly — types, formats, properties, items, required, extensions, the kinds index and the
// descriptions — and regenerate the committed 1.36/1.37 files byte for byte. Runs when the git
// mirrors are on the machine (K8S_API_REPO, K8S_APIMACHINERY_REPO, K8S_APIEXTENSIONS_REPO,
// K8S_AGGREGATOR_REPO, or the defaults under /work/.mirror).
const mirrors = [
  process.env.K8S_API_REPO ?? "/work/.mirror/kubernetes+api/repo",
  process.env.K8S_APIMACHINERY_REPO ?? "/work/.mirror/kubernetes+apimachinery/repo",
  process.env.K8S_APIEXTENSIONS_REPO ?? "/work/.mirror/kubernetes+apiextensions-apiserver/repo",
  process.env.K8S_AGGREGATOR_REPO ?? "/work/.mirror/kubernetes+kube-aggregator/repo",
];
const haveMirrors = mirrors.every((m) => fs.existsSync(m));
test("the Go-types generator reproduces the published bundles and the generated ones", { skip: !haveMirrors && "Go source mirrors not present", timeout: 600_000 }, () => {
  const out = execFileSync(process.execPath, [new URL("scripts/gen-schemas-go.mjs", root).pathname, "--check"], { encoding: "utf8", maxBuffer: 1 << 26 });
  for (const v of ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35"]) {
    assert.match(out, new RegExp(`^${v.replace(".", "\\.")}: 0 type-relevant differences; descriptions: 0 of \\d+ differ$`, "m"));
  }
  assert.match(out, /^1\.36\.json: matches the generator$/m);
  assert.match(out, /^1\.37\.descriptions\.json: matches the generator$/m);
});

const pkgDir = new URL("pkg/", root);
const havePkg = fs.existsSync(new URL("schemas/1.35.json", pkgDir));
test("package: typecheck, complete and hover with the shipped schemas", { skip: !havePkg && "pkg/ not built" }, async () => {
  const wasm = await import(new URL("vap_eval.js", pkgDir));
  wasm.initSync({ module: fs.readFileSync(new URL("vap_eval_bg.wasm", pkgDir)) });
  const manifests = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [deployments]
  validations:
  - expression: "object.spec.replica > 1"
`;
  // Before loading: no schema, nothing checked, and an info diagnostic says why.
  const before = wasm.typecheck({ manifests, kubernetesVersion: "1.35" });
  assert.deepEqual(before.policies[0].typeChecking.expressionWarnings, []);
  assert.deepEqual(before.diagnostics.map((d) => [d.code, d.severity]), [["schemas-not-loaded", "info"]]);
  assert.throws(() => wasm.loadSchemas("1.35", "{"), /schema bundle/);
  wasm.loadSchemas("1.35", fs.readFileSync(new URL("schemas/1.35.json", pkgDir), "utf8"));
  const r = wasm.typecheck({ manifests, kubernetesVersion: "1.35" });
  assert.deepEqual(r.policies[0].typeChecking.expressionWarnings, [{
    fieldRef: "spec.validations[0].expression",
    warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replica'\n | object.spec.replica > 1\n | ...........^\n",
  }]);
  assert.ok(!r.diagnostics.some((d) => d.code === "schemas-not-loaded"));
  const d = r.diagnostics.find((d) => d.code === "cel-typecheck");
  assert.equal(d.severity, "warning");
  assert.equal(d.line, 12);
  // 1.37 falls back to the newest loaded older bundle.
  assert.equal(wasm.typecheck({ manifests }).policies[0].typeChecking.expressionWarnings.length, 1);
  // evaluate is unchanged but carries the warning.
  const e = wasm.evaluate({ manifests, object: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { replicas: 3 } } });
  assert.ok(e.diagnostics.some((d) => d.code === "cel-typecheck"));

  wasm.loadSchemaDescriptions("1.35", fs.readFileSync(new URL("schemas/1.35.descriptions.json", pkgDir), "utf8"));
  const options = { objectKind: "apps/v1/Deployment", kubernetesVersion: "1.35" };
  const c = wasm.completeExpression("object.spec.rep", 15, {}, options);
  assert.equal(c.from, 12);
  assert.equal(c.to, 15);
  assert.deepEqual(c.items.map((i) => [i.label, i.kind, i.detail]), [["replicas", "field", "int"]]);
  assert.match(c.items[0].documentation, /desired pods/);
  assert.equal(wasm.hoverExpression("object.spec.replicas", 14, null, options).type, "int");
  // Map keys from the supplied object.
  const keys = wasm.completeExpression("object.metadata.labels.", 23, { object: { metadata: { labels: { app: "a" } } } }, options);
  assert.deepEqual(keys.items.filter((i) => i.kind === "key").map((i) => i.label), ["app"]);
  // In the manifests: the policy's kinds type the expression.
  const at = manifests.indexOf("replica >") + 7;
  assert.deepEqual(wasm.complete({ manifests, kubernetesVersion: "1.35" }, at).items.map((i) => i.label), ["replicas"]);
  assert.equal(wasm.hover({ manifests, kubernetesVersion: "1.35" }, manifests.indexOf("spec.replica")).type, "Deployment.spec");
  assert.throws(() => wasm.completeExpression("x", 0, {}, { objectKind: 3 }), /completeExpression\(options\)\.objectKind/);
});

// Every bundle the package ships (pkg/schemas/index.json) loads, types the version's own fields
// and documents them: `PodSpec.schedulingGroup` is in the 1.36/1.37 bundles (generated from the Go
// types), not in 1.35's.
test("package: every shipped bundle loads and types its own version", { skip: !havePkg && "pkg/ not built" }, async () => {
  const wasm = await import(new URL("vap_eval.js", pkgDir));
  wasm.initSync({ module: fs.readFileSync(new URL("vap_eval_bg.wasm", pkgDir)) });
  const versions = JSON.parse(fs.readFileSync(new URL("schemas/index.json", pkgDir), "utf8"));
  assert.deepEqual(versions, ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]);
  const manifests = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [pods]
  validations:
  - expression: "object.spec.schedulingGroup.podGroupName != '' && object.spec.nodeNam == ''"
`;
  for (const v of versions) {
    wasm.loadSchemas(v, fs.readFileSync(new URL(`schemas/${v}.json`, pkgDir), "utf8"));
    wasm.loadSchemaDescriptions(v, fs.readFileSync(new URL(`schemas/${v}.descriptions.json`, pkgDir), "utf8"));
    const w = wasm.typecheck({ manifests, kubernetesVersion: v }).policies[0].typeChecking.expressionWarnings;
    assert.equal(w.length, 1, v);
    const newer = Number(v.split(".")[1]) >= 36;
    assert.match(w[0].warning, newer ? /undefined field 'nodeNam'/ : /undefined field 'schedulingGroup'/, v);
    const c = wasm.completeExpression("object.spec.schedulingGro", 25, {}, { objectKind: "v1/Pod", kubernetesVersion: v });
    assert.deepEqual(c.items.map((i) => i.label), newer ? ["schedulingGroup"] : [], v);
    if (newer) assert.match(c.items[0].documentation, /scheduling runtime grouping/, v);
  }
});
