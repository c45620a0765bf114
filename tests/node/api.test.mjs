// node --test tests/node/ — the npm package in pkg/ (build it first: bash scripts/build-pkg.sh),
// called the way users call it: every export, results as plain objects, malformed input thrown.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";

const pkgDir = new URL("../../pkg/", import.meta.url);
const wasm = await import(new URL("vap_eval.js", pkgDir));
wasm.initSync({ module: fs.readFileSync(new URL("vap_eval_bg.wasm", pkgDir)) });
const { evaluate, evaluateExpression, typecheck, PolicySet, supportedVersions } = wasm;
// As a user of the package does: the built-in schemas beside the wasm, registered once.
for (const f of fs.readdirSync(new URL("schemas/", pkgDir))) {
  const m = /^(1\.\d+)\.json$/.exec(f);
  if (m) wasm.loadSchemas(m[1], fs.readFileSync(new URL(`schemas/${f}`, pkgDir), "utf8"));
}

const example = (f) => fs.readFileSync(new URL(`../../www/examples/${f}`, import.meta.url), "utf8");
const examples = JSON.parse(example("index.json")).examples;

// A Deny policy without params: at most 5 replicas.
const replicas = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-replicas.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    message: "at most 5 replicas"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-replicas-binding.example.com
spec:
  policyName: max-replicas.example.com
  validationActions: ["Deny"]
---
apiVersion: v1
kind: Namespace
metadata:
  name: default
`;
const deployment = (n, name = "web") => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default" },
  spec: { replicas: n },
});

test("version() is the package version", () => {
  const pkg = JSON.parse(fs.readFileSync(new URL("package.json", pkgDir), "utf8"));
  assert.equal(wasm.version(), pkg.version);
  assert.match(wasm.version(), /^\d+\.\d+\.\d+/);
});

// .cargo/config.toml links the wasm with -zstack-size=8388608 (the CEL parser recurses; the
// default is 1 MiB). The stack grows down from the initial __stack_pointer, global 0 of the
// module. A RUSTFLAGS environment variable silently replaces config rustflags: this catches it.
test("wasm module has an 8 MiB stack", () => {
  const b = fs.readFileSync(new URL("vap_eval_bg.wasm", pkgDir));
  let p = 8;
  const uleb = () => {
    let r = 0, s = 0, x;
    do { x = b[p++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80);
    return r;
  };
  const sleb = () => {
    let r = 0, s = 0, x;
    do { x = b[p++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80);
    return x & 0x40 ? r - 2 ** s : r;
  };
  let stackPointer;
  while (p < b.length && stackPointer === undefined) {
    const id = b[p++];
    const size = uleb();
    const end = p + size;
    if (id === 6) {
      uleb(); // number of globals
      const [valtype, mutable, op] = [b[p++], b[p++], b[p++]];
      if (valtype === 0x7f && mutable === 1 && op === 0x41) stackPointer = sleb();
    }
    p = end;
  }
  assert.ok(stackPointer >= 8 * 1024 * 1024, `initial stack pointer ${stackPointer} < 8 MiB`);
});

test("supportedVersions() lists 1.30 through 1.37, oldest first", () => {
  assert.deepEqual(supportedVersions(), ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]);
});

test("evaluate: a denial is the Status kube-apiserver sends", () => {
  const r = evaluate({ manifests: replicas, object: deployment(50) });
  assert.equal(r.response.allowed, false);
  assert.deepEqual(r.response.status, {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message:
      `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max-replicas.example.com' with binding ` +
      `'max-replicas-binding.example.com' denied request: at most 5 replicas`,
    reason: "Forbidden",
    code: 403,
    details: {
      name: "web",
      group: "apps",
      kind: "deployments",
      causes: [
        {
          message:
            "ValidatingAdmissionPolicy 'max-replicas.example.com' with binding 'max-replicas-binding.example.com' denied request: at most 5 replicas",
        },
      ],
    },
  });
  // Only information: the operation was derived from the object.
  assert.deepEqual(
    r.diagnostics.map((d) => [d.severity, d.code, d.rendered]),
    [["info", "request-derived", "INFO: operation: operation CREATE derived from the objects supplied"]],
  );
  assert.equal(r.kubernetesVersion, "1.37");
  assert.equal(r.request.operation, "CREATE");
  assert.deepEqual(r.request.kind, { group: "apps", version: "v1", kind: "Deployment" });
  const [policy] = r.policies;
  assert.equal(policy.name, "max-replicas.example.com");
  assert.equal(policy.matched, true);
  const [validation] = policy.bindings[0].evaluations[0].validations;
  assert.equal(validation.decision, "deny");
  assert.equal(validation.result, false);
  assert.equal(validation.firstDenial, true);
  assert.deepEqual(validation.actions, ["Deny"]);
  // Plain objects, not Maps: what JSON.stringify and structuredClone see.
  assert.equal(Object.getPrototypeOf(r.response.auditAnnotations), Object.prototype);
  assert.deepEqual(JSON.parse(JSON.stringify(r)), r);
});

test("evaluate: an allow with warnings and audit annotations, from ConfigMap params (replica-limit example)", () => {
  const ex = examples.find((e) => e.name === "replica-limit");
  const r = evaluate({ manifests: example(ex.manifests), object: example(ex.object), request: example(ex.request) });
  assert.equal(r.response.allowed, ex.expect.allowed);
  assert.equal(r.response.status, undefined);
  assert.deepEqual(r.response.warnings, ex.expect.warnings);
  assert.deepEqual(r.response.auditAnnotations, ex.expect.auditAnnotations);
  assert.equal(r.request.userInfo.username, "alice@example.com");
  const bindings = r.policies.find((p) => p.name === "replica-limit.example.com").bindings;
  assert.deepEqual(
    bindings.map((b) => [b.name, b.evaluations.map((e) => e.param)]),
    [
      ["replica-limit-deny.example.com", [{ namespace: "policy-config", name: "replica-limit-hard" }]],
      ["replica-limit-warn.example.com", [{ namespace: "policy-config", name: "replica-limit-soft" }]],
    ],
  );
  const warn = bindings[1].evaluations[0];
  assert.equal(warn.validations[0].decision, "deny");
  assert.deepEqual(warn.validations[0].actions, ["Warn", "Audit"]);
  assert.equal(warn.validations[0].messageExpression.value, "spec.replicas is 4, the limit is 3");
  assert.deepEqual(
    warn.auditAnnotations.map((a) => [a.key, a.value, a.published]),
    [["replicas", "replicas=4", true]],
  );
});

test("evaluate: every example in www/examples gives its expected decision", () => {
  for (const ex of examples) {
    const input = { manifests: example(ex.manifests) };
    for (const f of ["object", "oldObject", "request"]) if (ex[f]) input[f] = example(ex[f]);
    const r = evaluate(input);
    assert.equal(r.response.allowed, ex.expect.allowed, ex.name);
    // The example's second request (passing or failing): its files replace the first's.
    const second = ex.passing ?? ex.failing;
    for (const f of ["object", "oldObject", "request"]) if (second[f]) input[f] = example(second[f]);
    const r2 = evaluate(input);
    assert.equal(r2.response.allowed, second.expect.allowed, `${ex.name} (second request)`);
    if (!second.expect.allowed) assert.equal(r2.response.status.message, second.expect.message, ex.name);
  }
});

test("evaluate: the input may be YAML or JSON text, manifests a list of texts and objects", () => {
  const fromObject = evaluate({ manifests: replicas, object: deployment(6) });
  const yaml = `manifests: |\n${replicas.replace(/^/gm, "  ")}\nobject:\n  apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: web, namespace: default}\n  spec: {replicas: 6}\n`;
  assert.deepEqual(evaluate(yaml).response, fromObject.response);
  assert.deepEqual(evaluate(JSON.stringify({ manifests: replicas, object: deployment(6) })).response, fromObject.response);
  const [policy, binding, namespace] = replicas.split("\n---\n");
  assert.ok(binding.includes("max-replicas-binding"));
  const list = evaluate({ manifests: [policy, yamlBinding, namespace], object: JSON.stringify(deployment(6)) });
  assert.deepEqual(list.response, fromObject.response);
  // null and undefined fields are absent.
  assert.equal(evaluate({ manifests: replicas, object: deployment(6), oldObject: null, request: undefined }).response.allowed, false);
});

const yamlBinding = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicyBinding",
  metadata: { name: "max-replicas-binding.example.com" },
  spec: { policyName: "max-replicas.example.com", validationActions: ["Deny"] },
};

test("evaluate: kubernetesVersion selects the target; an unsupported one is a diagnostic", () => {
  assert.equal(evaluate({ manifests: replicas, object: deployment(1), kubernetesVersion: "1.31" }).kubernetesVersion, "1.31");
  const r = evaluate({ manifests: replicas, object: deployment(1), kubernetesVersion: "1.99" });
  assert.equal(r.kubernetesVersion, "1.37");
  assert.equal(r.diagnostics[0].code, "unsupported-kubernetes-version");
  assert.match(r.diagnostics[0].message, /supported versions are 1\.30 through 1\.37/);
});

test("evaluate: objects as the apiserver stores them, with objectChanges; objectsAsGiven turns it off", () => {
  // kubernetes/api rbac/v1 ClusterRole.rules has no omitempty: a nil slice is null (schemas.md §5).
  const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [rbac.authorization.k8s.io], apiVersions: [v1], operations: [CREATE], resources: [clusterroles]}]
  validations: [{expression: "object.?rules.orValue([]) != null"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: b}
spec: {policyName: p, validationActions: [Deny]}`;
  const object = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "r" }, extra: 1 };
  const stored = evaluate({ manifests: policy, object });
  assert.equal(stored.response.allowed, false);
  // Then the registry before validating admission (docs/objects.md §3): uid and creationTimestamp placeholders.
  assert.deepEqual(stored.objectChanges.map((c) => [c.path, c.reason]), [
    ["extra", "pruned"],
    ["rules", "nullForNonOmitempty"],
    ["metadata.creationTimestamp", "registry"],
    ["metadata.uid", "registry"],
  ]);
  assert.ok(stored.diagnostics.some((d) => d.code === "object-unknown-field" && d.severity === "warning"));
  const given = evaluate({ manifests: policy, object, objectsAsGiven: true });
  assert.equal(given.response.allowed, true);
  assert.equal(given.objectChanges, undefined);
  const set = new PolicySet(policy, { objectsAsGiven: true });
  try {
    assert.equal(set.evaluate({ object }).response.allowed, true);
  } finally {
    set.free();
  }
});

test("PolicySet: compiled once, evaluated against many objects", () => {
  const set = new PolicySet(replicas, { kubernetesVersion: "1.34" });
  try {
    assert.deepEqual(set.diagnostics, []);
    assert.equal(set.kubernetesVersion, "1.34");
    const allowed = [];
    for (let n = 0; n <= 8; n++) {
      const r = set.evaluate({ object: deployment(n, `web-${n}`) });
      assert.equal(r.kubernetesVersion, "1.34");
      allowed.push(r.response.allowed);
      if (!r.response.allowed) assert.match(r.response.status.message, new RegExp(`^deployments.apps "web-${n}" is forbidden`));
    }
    assert.deepEqual(allowed, [true, true, true, true, true, true, false, false, false]);
    // UPDATE from an old object, request fields as text.
    const update = set.evaluate({ object: deployment(2), oldObject: deployment(9), request: "userInfo: {username: bob}" });
    assert.equal(update.request.operation, "UPDATE");
    assert.equal(update.request.userInfo.username, "bob");
    assert.equal(update.response.allowed, true);
    // A bad request does not spoil the set.
    assert.throws(() => set.evaluate({ object: deployment(1), obj: 1 }), /PolicySet\.evaluate\(request\)\.obj: unknown field `obj`/);
    assert.equal(set.evaluate({ object: deployment(7) }).response.allowed, false);
  } finally {
    set.free();
  }
  assert.throws(() => set.evaluate({}), Error);
});

test("PolicySet.evaluate: an object, its JSON text and the whole argument as text give one result", () => {
  // The object crosses as its own JSON text and plain JSON skips the positions loader (issue 13):
  // every way of passing the same request must give the same result.
  const set = new PolicySet(replicas);
  try {
    for (const object of [deployment(3), deployment(9), { ...deployment(2), metadata: { name: "é😀", namespace: "default", labels: { a: "b:\"c\"" } } }]) {
      const want = set.evaluate(JSON.stringify({ object }));
      assert.deepEqual(set.evaluate({ object }), want);
      assert.deepEqual(set.evaluate({ object: JSON.stringify(object) }), want);
      assert.deepEqual(set.evaluate({ object: JSON.stringify(object, null, 2), oldObject: undefined }), want);
      assert.deepEqual(set.evaluate(Object.assign(Object.create(null), { object })), want);
      assert.deepEqual(set.evaluate({ object: { toJSON: () => object } }), want);
    }
    // A float, a repeated key, YAML: the positions loader reads them, as before.
    assert.equal(set.evaluate({ object: '{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "f"}, "spec": {"replicas": 6.0}}' }).response.allowed, false);
    const dup = set.evaluate({ object: '{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1, "replicas": 2}}' });
    assert.equal(dup.diagnostics[0].code, "input-yaml-syntax");
    assert.equal(dup.diagnostics[0].line, 1);
    // Errors still name the argument and field.
    assert.throws(() => set.evaluate({ object: 5 }), /^Error: PolicySet\.evaluate\(request\)\.object: invalid type: integer `5`, expected YAML\/JSON text or an object$/);
    assert.throws(() => set.evaluate({ object: [1] }), /^Error: PolicySet\.evaluate\(request\)\.object: invalid type: sequence, expected YAML\/JSON text or an object$/);
    assert.throws(() => set.evaluate({ object: { n: 1n } }), /^Error: PolicySet\.evaluate\(request\): not convertible to JSON: /);
    assert.throws(() => set.evaluate({ objects: {} }), /^Error: PolicySet\.evaluate\(request\)\.objects: unknown field `objects`/);
  } finally {
    set.free();
  }
});

test("evaluate: an input of texts read property by property gives the general path's result", () => {
  // evaluate(), typecheck(), complete() and hover() read a plain object of texts (the
  // playground's input) without stringifying it; anything else goes through JSON.stringify and
  // serde_json, which must give the same input, or the same error.
  const ex = examples.find((e) => e.name === "replica-limit");
  const input = {
    manifests: example(ex.manifests),
    object: example(ex.object),
    request: example(ex.request),
    kubernetesVersion: "1.33",
    unboundPolicies: "preview",
    missingNamespaces: "strict",
    objectsAsGiven: false,
    oldObject: undefined,
  };
  // A text as a String object takes the general path (`schemas: null` is read as absent on both).
  const general = [{ ...input, schemas: null }, { ...input, manifests: new String(input.manifests) }, JSON.stringify(input)];
  for (const call of [evaluate, typecheck]) {
    const want = call(general[0]);
    for (const g of general.slice(1)) assert.deepEqual(call(g), want);
    assert.deepEqual(call(input), want);
    assert.deepEqual(call(Object.assign(Object.create(null), input)), want);
    assert.deepEqual(call({ ...input, objectsAsGiven: true }), call({ ...input, objectsAsGiven: true, schemas: null }));
  }
  assert.equal(evaluate(input).kubernetesVersion, "1.33");
  // Errors are the general path's.
  assert.throws(() => evaluate({ ...input, unboundPolicies: "all" }), /^Error: evaluate\(input\)\.unboundPolicies: unknown variant `all`, expected one of `skip`, `preview`, `bind`$/);
  assert.throws(() => evaluate({ ...input, objectsAsGiven: "yes" }), /^Error: evaluate\(input\)\.objectsAsGiven: invalid type: string "yes", expected a boolean$/);
  assert.throws(() => evaluate({ ...input, manifest: "" }), /^Error: evaluate\(input\)\.manifest: unknown field `manifest`/);
  // A lone surrogate is U+FFFD on both paths (TextEncoder's reading of a string; the general
  // path's JSON.stringify escape for it is read the same), never an error on one path only.
  const lone = { ...input, object: input.object.replace("name: nginx", "name: nginx\ud800") };
  const got = evaluate(lone);
  assert.equal(got.request.name, "nginx\ufffd");
  assert.deepEqual(evaluate({ ...lone, manifests: new String(lone.manifests) }), got);
  const set = new PolicySet(input.manifests);
  try {
    for (const object of [lone.object, { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "a\udc00", namespace: "default" } }]) {
      const want = set.evaluate(Object.assign(Object.create({}), { object }));
      assert.match(want.request.name, /\ufffd$/);
      assert.deepEqual(set.evaluate({ object }), want);
    }
  } finally {
    set.free();
  }
});

test("a request's text is read the same at any length: encodeInto into wasm memory, or encode beyond 4M units", () => {
  // Texts up to 2^22 UTF-16 units are encoded straight into a wasm buffer of 3 bytes a unit,
  // longer ones through a host array (src/wasm.rs large_string): both read non-ASCII text and a
  // lone surrogate (U+FFFD) alike, whitespace padding changes nothing.
  const set = new PolicySet(replicas);
  try {
    const object = JSON.stringify({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "é😀\ud800", namespace: "default", labels: { "ü€": "\udc00x" } }, spec: { replicas: 9 } });
    const want = set.evaluate({ object });
    assert.equal(want.request.name, "é😀\ufffd");
    for (const pad of [(1 << 22) - object.length, (1 << 22) - object.length + 1, (1 << 22) + 4096]) {
      const text = object.slice(0, -1) + " ".repeat(pad) + "}";
      assert.deepEqual(set.evaluate({ object: text }), want, `padded to ${text.length} units`);
      assert.deepEqual(set.evaluate({ object: text, oldObject: object }).request.name, want.request.name);
    }
    // An object's JSON.stringify text: a lone surrogate's escape is read as U+FFFD, a literal
    // backslash before "ud800" (an escaped backslash) as it is, "\\uD" alike.
    for (const [name, read] of [["a\\ud800", "a\\ud800"], ["a\\uD800\\\ud800", "a\\uD800\\\ufffd"], ["\\\\ud8", "\\\\ud8"], ["é\udbff", "é\ufffd"]]) {
      const got = set.evaluate({ object: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace: "default" } } });
      assert.equal(got.request.name, read);
    }
  } finally {
    set.free();
  }
});

test("half a setup: unboundPolicies and missingNamespaces (issue 13)", () => {
  const policyOnly = replicas.split("---")[0];
  const object = deployment(9);
  // Default: the apiserver's answer, never evaluated.
  const skip = evaluate({ manifests: policyOnly, object });
  assert.equal(skip.response.allowed, true);
  assert.deepEqual(skip.policies[0].bindings, []);
  assert.match(skip.policies[0].reason, /^no binding references this policy: it is never evaluated/);
  // The namespace "default" was not supplied either: assumed, and said so.
  assert.ok(skip.diagnostics.every((d) => d.code !== "namespace-assumed"), "not read: no diagnostic");
  // preview: the same response, and a hypothetical binding that denies.
  const set = new PolicySet(policyOnly, { unboundPolicies: "preview" });
  const preview = set.evaluate({ object });
  set.free();
  assert.deepEqual(preview.response, skip.response);
  const [b] = preview.policies[0].bindings;
  assert.equal(b.hypothetical, true);
  assert.deepEqual(b.validationActions, ["Deny"]);
  assert.equal(b.evaluations[0].validations[0].decision, "deny");
  assert.equal(b.evaluations[0].validations[0].firstDenial, false);
  // bind: that evaluation counts.
  const bind = evaluate({ manifests: policyOnly, object, unboundPolicies: "bind" });
  assert.equal(bind.response.allowed, false);
  assert.match(bind.response.status.message, /with binding '\(hypothetical\)' denied request: at most 5 replicas$/);
  // missingNamespaces: a namespaceSelector reads the assumed namespace; strict gives the 404.
  const selecting = replicas.split("---").slice(0, 2).join("---").replace("  matchConstraints:\n", "  matchConstraints:\n    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: default}}\n");
  const assumed = evaluate({ manifests: selecting, object });
  assert.equal(assumed.response.allowed, false);
  assert.equal(assumed.diagnostics.find((d) => d.code === "namespace-assumed")?.severity, "info");
  const strict = evaluate({ manifests: selecting, object, missingNamespaces: "strict" });
  assert.match(strict.response.status.message, /namespaces "default" not found$/);
  assert.throws(() => new PolicySet(policyOnly, { unboundPolicies: "yes" }), /^Error: new PolicySet\(options\)\.unboundPolicies: unknown variant `yes`, expected one of `skip`, `preview`, `bind`$/);
  assert.throws(() => evaluate({ manifests: "", missingNamespaces: 1 }), /^Error: evaluate\(input\)\.missingNamespaces: invalid type: integer `1`, expected a string$/);
});

test("PolicySet: its diagnostics, from text or objects", () => {
  const set = new PolicySet([fs.readFileSync(new URL("../../www/examples/type-error.yaml", import.meta.url), "utf8")]);
  assert.deepEqual(
    set.diagnostics.map((d) => [d.code, d.field]),
    typecheck({ manifests: example("type-error.yaml") }).diagnostics.map((d) => [d.code, d.field]),
  );
  assert.ok(set.diagnostics.some((d) => d.code === "cel-compile"));
  set.free();
  const empty = new PolicySet([]);
  assert.deepEqual(empty.diagnostics, []);
  assert.equal(empty.evaluate({ object: deployment(100) }).response.allowed, true);
  empty.free();
});

test("typecheck: compile errors of every expression, with manifest positions", () => {
  const manifests = example("type-error.yaml");
  const r = typecheck({ manifests });
  assert.equal(r.kubernetesVersion, "1.37");
  const cel = r.diagnostics.filter((d) => d.code === "cel-compile");
  assert.deepEqual(
    cel.map((d) => [d.field, d.message]),
    [
      ["ValidatingAdmissionPolicy/name-length.example.com: spec.validations[0].expression", "found no matching overload for '_<=_' applied to '(int, string)'"],
      [
        "ValidatingAdmissionPolicy/name-length.example.com: spec.auditAnnotations[0].valueExpression",
        cel[1].message,
      ],
    ],
  );
  for (const d of cel) {
    assert.deepEqual(d.source, { kind: "manifest", document: 0 });
    assert.equal(d.severity, "error");
    assert.match(d.rendered, /^ERROR: manifests:\d+:\d+: ValidatingAdmissionPolicy\/name-length\.example\.com: spec\./);
  }
  assert.equal(manifests.slice(cel[0].start, cel[0].end), "size(object.metadata.name) <= '30'");
  assert.equal(manifests.split("\n")[cel[0].line - 1].slice(cel[0].column - 1).startsWith("size(object"), true);
  assert.deepEqual(typecheck({ manifests: replicas }).diagnostics, []);
  assert.deepEqual(typecheck(`manifests: ""`), { diagnostics: [], kubernetesVersion: "1.37", policies: [] });
});

test("evaluateExpression: value, type, cost; variables as objects or YAML/JSON text", () => {
  const sum = evaluateExpression("1 + 2 == 3");
  assert.deepEqual(sum, { value: true, type: "bool", cost: sum.cost, diagnostics: [] });
  assert.ok(Number.isInteger(sum.cost) && sum.cost > 0);
  const r = evaluateExpression("object.spec.replicas * 2", { object: "spec:\n  replicas: 21\n" }, { kind: "variable" });
  assert.deepEqual([r.value, r.type, r.diagnostics], [42, "int", []]);
  assert.ok(r.cost >= 1);
  assert.equal(evaluateExpression("params.data.max", { params: { data: { max: "5" } } }, { kind: "variable" }).value, "5");
  // Names other than object/oldObject/params/request/namespaceObject are bound as given.
  assert.deepEqual(evaluateExpression("[x, y.a]", { x: "a: 1", y: { a: [1.5] } }, { kind: "variable" }).value, ["a: 1", [1.5]]);
  // A JS object's doubles are the same doubles in CEL (JSON.stringify's shortest text read back
  // as JSON.parse and Go's strconv.ParseFloat read it: nearest; serde_json's parse was a bit
  // off for these two).
  const doubles = { a: 194063.61382741499, b: 1.2345678901234568e20 };
  assert.deepEqual(evaluateExpression("[y.a, y.b]", { y: doubles }, { kind: "variable" }).value, [doubles.a, doubles.b]);
  assert.equal(evaluateExpression("y.a == 194063.61382741499 && y.b == 123456789012345680000.0", { y: doubles }).value, true);
  assert.equal(evaluateExpression("object.spec.x == 194063.61382741499", { object: { spec: { x: doubles.a } } }).value, true);
  const d = evaluateExpression("duration('90s')", undefined, { kind: "variable" });
  assert.deepEqual([d.value, d.type, d.diagnostics], ["90s", "google.protobuf.Duration", []]);
  // Without a kind any result type is fine (a scratchpad); a validation must be a bool.
  assert.deepEqual(evaluateExpression("1 + 1").value, 2);
  const notBool = evaluateExpression("1 + 1", {}, { kind: "validation" });
  assert.equal(notBool.value, undefined);
  assert.equal(notBool.diagnostics[0].message, "must evaluate to bool but got int");
  // Runtime errors are diagnostics with the failing sub-expression.
  const div = evaluateExpression("object.a / object.b == 1", { object: { a: 1, b: 0 } });
  assert.equal(div.diagnostics[0].code, "cel-runtime");
  assert.equal(div.diagnostics[0].message, "division by zero");
  assert.equal("object.a / object.b == 1".slice(div.diagnostics[0].start, div.diagnostics[0].end), "object.a / object.b");
  // Object text that does not parse: a diagnostic into that text; the expression is still checked.
  const bad = evaluateExpression("object.a == 1", { object: "a: 1\nb: [" });
  assert.equal(bad.value, undefined);
  assert.equal(bad.type, "bool");
  assert.equal(bad.diagnostics[0].code, "input-yaml-syntax");
  assert.deepEqual(bad.diagnostics[0].source, { kind: "input", name: "object" });
  assert.equal(bad.diagnostics[0].line, 2);
  // Unknown kind and version are diagnostics, not exceptions.
  assert.equal(evaluateExpression("true", {}, { kind: "nope" }).diagnostics[0].code, "unknown-expression-kind");
  assert.equal(evaluateExpression("true", null, { kubernetesVersion: "1.2" }).diagnostics[0].code, "unsupported-kubernetes-version");
  // Version gates: backtick-quoted identifiers arrive in 1.37.
  const backticks = (v) => evaluateExpression("object.`a-b` == 1", { object: { "a-b": 1 } }, { kubernetesVersion: v });
  assert.equal(backticks("1.37").value, true);
  assert.equal(backticks("1.36").diagnostics[0].code, "cel-compile");
});

// ---------------------------------------------------------------------------------------------
// Positions: UTF-16 offsets, 1-based line/column (UTF-16 columns), text.slice(start, end).

test("positions: an expression with an emoji and an accented letter before the error", () => {
  // "é" is 1 UTF-16 unit (2 UTF-8 bytes), "😀" is 2 units (4 bytes).
  const expr = `"é😀" == "x" ||\n  1 + "a" == 2`;
  const [d] = evaluateExpression(expr).diagnostics;
  assert.equal(d.code, "cel-compile");
  assert.equal(d.message, "found no matching overload for '_+_' applied to '(int, string)'");
  assert.deepEqual(d.source, { kind: "expression", expression: expr });
  assert.deepEqual([d.start, d.end, d.line, d.column, d.endLine, d.endColumn], [18, 25, 2, 3, 2, 10]);
  assert.equal(expr.slice(d.start, d.end), `1 + "a"`);
  assert.equal(d.rendered, `ERROR: <input>:2:3: found no matching overload for '_+_' applied to '(int, string)'\n |   1 + "a" == 2\n | ..^^^^^^^`);
  // Same line: the emoji shifts the UTF-16 column by 2, the accent by 1.
  const one = `'é😀' == 'x' || nope.x`;
  const [u] = evaluateExpression(one).diagnostics;
  assert.deepEqual([u.start, u.end, u.line, u.column], [16, 20, 1, 17]);
  assert.equal(one.slice(u.start, u.end), "nope");
});

test("positions: a manifest diagnostic after an emoji and an accented letter", () => {
  const manifests = `# ünïcödé 😀
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: emoji.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "'é😀' == object.metadata.name || 1 + 'a' == 2"
`;
  for (const r of [typecheck({ manifests }), evaluate({ manifests, object: deployment(1) })]) {
    const errors = r.diagnostics.filter((d) => d.severity === "error");
    assert.equal(errors.length, 1);
    const [d] = errors;
    assert.equal(d.code, "cel-compile");
    assert.equal(d.field, "ValidatingAdmissionPolicy/emoji.example.com: spec.validations[0].expression");
    assert.deepEqual(d.source, { kind: "manifest", document: 0 });
    assert.equal(manifests.slice(d.start, d.end), "1 + 'a'");
    const line = manifests.split("\n")[13];
    assert.equal(d.line, 14);
    assert.equal(d.column, line.indexOf("1 + 'a'") + 1);
    assert.equal(d.column, 51); // 50 code points before it, one of them the 2-unit emoji
    assert.deepEqual([d.endLine, d.endColumn], [14, 58]);
  }
});

test("positions: object text that does not parse points into that text", () => {
  const object = "metadata:\n  name: é😀\n  labels: [a\n";
  const r = evaluate({ manifests: replicas, object });
  const d = r.diagnostics.find((x) => x.code === "input-yaml-syntax");
  assert.deepEqual(d.source, { kind: "input", name: "object" });
  assert.equal(d.field, "object");
  assert.ok(d.line >= 3, JSON.stringify(d));
  assert.ok(d.start <= object.length && d.end <= object.length);
});

// ---------------------------------------------------------------------------------------------
// Malformed input throws an Error naming the argument and field; the instance keeps working.

test("malformed input throws an Error with a clear message; the instance keeps working", () => {
  const cyclic = {};
  cyclic.self = cyclic;
  const garbage = [
    [() => evaluate(), /^evaluate\(input\): expected an object or its YAML\/JSON text, got undefined$/],
    [() => evaluate(null), /^evaluate\(input\): expected an object or its YAML\/JSON text, got null$/],
    [() => evaluate(42), /^evaluate\(input\): expected an object or its YAML\/JSON text, got number$/],
    [() => evaluate([replicas]), /^evaluate\(input\): expected an object or its YAML\/JSON text, got array$/],
    [() => evaluate("just a string"), /^evaluate\(input\): expected an object or its YAML\/JSON text, got text holding a string$/],
    [() => evaluate("manifests: [\n"), /^evaluate\(input\): line \d+, column \d+: yaml: /],
    [() => evaluate("a: 1\n---\nb: 2\n"), /^evaluate\(input\): expected one YAML\/JSON document, found 2$/],
    [() => evaluate({ manifests: replicas, objects: {} }), /^evaluate\(input\)\.objects: unknown field `objects`, expected one of `manifests`, `object`, `oldObject`, `request`, `kubernetesVersion`, `unboundPolicies`, `missingNamespaces`, `objectsAsGiven`, `schemas`$/],
    [() => evaluate({ manifests: 7 }), /^evaluate\(input\)\.manifests: invalid type: integer `7`, expected YAML\/JSON text or a list of texts and objects$/],
    [() => evaluate({ manifests: [replicas, 3] }), /^evaluate\(input\)\.manifests\[1\]: invalid type: integer `3`, expected YAML\/JSON text or an object$/],
    [() => evaluate({ manifests: "", object: true }), /^evaluate\(input\)\.object: invalid type: boolean `true`, expected YAML\/JSON text or an object$/],
    [() => evaluate({ manifests: "", oldObject: [1] }), /^evaluate\(input\)\.oldObject: invalid type: sequence, expected YAML\/JSON text or an object$/],
    [() => evaluate({ manifests: "", kubernetesVersion: 1.3 }), /^evaluate\(input\)\.kubernetesVersion: invalid type: floating point `1\.3`, expected a string$/],
    [() => evaluate({ manifests: "", object: cyclic }), /^evaluate\(input\): not convertible to JSON: Converting circular structure to JSON/],
    [() => evaluate({ manifests: "", object: { n: 1n } }), /^evaluate\(input\): not convertible to JSON: Do not know how to serialize a BigInt$/],
    [() => typecheck({ manifest: "" }), /^typecheck\(input\)\.manifest: unknown field `manifest`/],
    [() => evaluateExpression(5), /^evaluateExpression\(expression\): expected a string, got number$/],
    [() => evaluateExpression("true", "object: {}"), /^evaluateExpression\(variables\): expected an object, got string$/],
    [() => evaluateExpression("true", {}, { kind: "variable", version: "1.30" }), /^evaluateExpression\(options\)\.version: unknown field `version`, expected one of `kubernetesVersion`, `kind`, `objectKind`, `objectSchema`, `schemas`$/],
    [() => evaluateExpression("true", {}, { kind: ["variable"] }), /^evaluateExpression\(options\)\.kind: invalid type: sequence, expected a string$/],
    [() => new PolicySet(), /^new PolicySet\(manifests\): expected YAML\/JSON text or a list of texts and objects, got undefined$/],
    [() => new PolicySet({ kind: "ValidatingAdmissionPolicy" }), /^new PolicySet\(manifests\): invalid type: map, expected YAML\/JSON text or a list of texts and objects$/],
    [() => new PolicySet(replicas, { kubernetesversion: "1.30" }), /^new PolicySet\(options\)\.kubernetesversion: unknown field `kubernetesversion`, expected one of `kubernetesVersion`, `unboundPolicies`, `missingNamespaces`, `objectsAsGiven`, `schemas`$/],
    [() => new PolicySet(replicas).evaluate("object: [\n"), /^PolicySet\.evaluate\(request\): line \d+, column \d+: yaml: /],
  ];
  assert.ok(garbage.length >= 20);
  for (const [call, message] of garbage) {
    assert.throws(call, (e) => {
      assert.ok(e instanceof Error, `${e} is an Error`);
      assert.match(e.message, message);
      return true;
    });
    // Still working after each one.
    assert.equal(evaluate({ manifests: replicas, object: deployment(6) }).response.allowed, false);
  }
  assert.equal(evaluateExpression("1 + 1 == 2").value, true);
});

// ---------------------------------------------------------------------------------------------
// Inputs deep or long enough to exhaust a recursive parser give diagnostics, not traps.

test("10,000-term chains, 10,000 nested parentheses, lists and maps are diagnostics, not traps", () => {
  const N = 10_000;
  const cases = [
    [Array(N).fill("1").join(" + ") + " == 1", "max recursion depth exceeded"],
    ["(".repeat(N) + "true" + ")".repeat(N), "expression recursion limit exceeded: 250"],
    ["[".repeat(N) + "1" + "]".repeat(N) + " == []", "expression recursion limit exceeded: 250"],
    ["{1: ".repeat(N) + "1" + "}".repeat(N) + " == {}", "expression recursion limit exceeded: 250"],
    ["-".repeat(N) + "1 == 1", "max recursion depth exceeded"],
    ["object" + ".a".repeat(N) + " == 1", "max recursion depth exceeded"],
  ];
  for (const [expr, message] of cases) {
    const r = evaluateExpression(expr);
    assert.equal(r.diagnostics[0]?.message, message, expr.slice(0, 40));
    assert.equal(r.value, undefined);
  }
  // The same inside a manifest.
  const policy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: deep.example.com}
spec:
  matchConstraints: {resourceRules: [{apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"]}]}
  validations:
  - expression: "${"(".repeat(N)}true${")".repeat(N)}"
`;
  assert.ok(typecheck({ manifests: policy }).diagnostics.some((d) => d.message === "expression recursion limit exceeded: 250"));
  // Deep data: JSON/YAML text and JS objects.
  const deepText = "[".repeat(N) + "]".repeat(N);
  assert.match(evaluate({ manifests: deepText, object: deepText }).diagnostics[0].message, /recursion limit exceeded/);
  assert.match(evaluateExpression("object == 1", { object: deepText }).diagnostics[0].message, /recursion limit exceeded/);
  let deep = {};
  for (let i = 0; i < N; i++) deep = { a: deep };
  assert.throws(() => evaluate({ manifests: "", object: deep }), /^Error: evaluate\(input\): (nested more than 128 levels deep|not convertible to JSON: Maximum call stack size exceeded)$/);
  let lessDeep = {};
  for (let i = 0; i < 200; i++) lessDeep = { a: lessDeep };
  assert.throws(() => evaluateExpression("x", { x: lessDeep }), /^Error: evaluateExpression\(variables\): nested more than 128 levels deep$/);
  // "Billion laughs": alias expansion is bounded.
  let bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (let i = 1; i < 9; i++) bomb += `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(", ")}]\n`;
  const laughs = evaluate({ manifests: replicas, object: bomb }).diagnostics[0];
  assert.equal(laughs.code, "input-yaml-syntax");
  assert.match(laughs.message, /^object: line \d+, column \d+: yaml: document contains excessive aliasing$/);
  assert.equal(evaluate({ manifests: replicas, object: deployment(6) }).response.allowed, false);
});

test("pkg/package.json: an ES module package whose listed files all exist", () => {
  const pkg = JSON.parse(fs.readFileSync(new URL("package.json", pkgDir), "utf8"));
  assert.equal(pkg.name, "vap-eval");
  assert.equal(pkg.type, "module");
  assert.equal(pkg.license, "Apache-2.0");
  assert.equal(pkg.sideEffects, false);
  assert.deepEqual(pkg.exports["."], { types: "./vap_eval.d.ts", default: "./vap_eval.js" });
  assert.equal(pkg.types, "vap_eval.d.ts");
  for (const f of [...pkg.files, pkg.main, pkg.types]) assert.ok(fs.existsSync(new URL(f, pkgDir)), f);
  assert.ok(pkg.files.includes("README.md") && pkg.files.includes("LICENSE"));
});

// Go regexps' Unicode classes and (?i) case folding come from the engine's own compact tables
// (crates/vap-eval-cel/src/library/regex_unicode.rs), not regex-syntax's data: the package's
// build has none, so these run the path the native tests cannot (they link that data).
test("evaluateExpression: regex Unicode classes and case folding in the package", () => {
  const value = (e) => evaluateExpression(e).value;
  assert.equal(value(String.raw`"x αβ y".find('\\p{Greek}+')`), "αβ");
  assert.equal(value(String.raw`"ÉCOLE".matches('(?i)^école$')`), true);
  assert.equal(value(String.raw`"\u212A".matches('(?i)^k$')`), true, "Kelvin sign folds to k");
  assert.equal(value(String.raw`"ſ".matches('(?i)^S$')`), true);
  assert.equal(value(String.raw`"A".matches('(?i)[^a]')`), false);
  assert.equal(value(String.raw`"Ab1".find('[\\p{Lu}\\d]+')`), "A");
  assert.equal(value(String.raw`"abc1".find('\\p{Letter}+')`), "abc");
  assert.equal(value(String.raw`"abc1".find('\\p{scx=Latn}+')`), "abc");
  assert.equal(value(String.raw`"a1".find('[^\\PL]+')`), "a");
  assert.deepEqual(value(String.raw`"ΣΑσ".findAll('(?i)σ')`), ["Σ", "σ"]);
  const error = (e) => evaluateExpression(e).diagnostics[0].message;
  assert.equal(error(String.raw`"a".find('\\p{Foo}')`),
    "Illegal regex: error parsing regexp: invalid character class range: `\\p{Foo}`");
  assert.equal(error(String.raw`"a".find('\\p{White_Space}')`),
    "Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `\\p{White_Space}`");
});

test("evaluateExpression: int64 indexes and counts past 2^32 as on 64 bits (wasm32's usize wrapped them)", () => {
  const run = (e) => {
    const r = evaluateExpression(e);
    return r.diagnostics.length ? r.diagnostics[0].message : r.value;
  };
  assert.equal(run("[1, 2][4294967296]"), "index out of bounds: 4294967296");
  assert.equal(run("[1, 2][?4294967296].orValue(7)"), 7);
  assert.equal(run("[1, 2, 3].slice(0, 4294967297)"), "cannot slice(0, 4294967297), list is length 3");
  assert.equal(run("'abc'.indexOf('b', 4294967296)"), "index out of range: 4294967296");
  assert.equal(run("'abc'.lastIndexOf('b', 4294967297)"), "index out of range: 4294967297");
  assert.deepEqual(run("'a,b,c'.split(',', 4294967296)"), ["a", "b", "c"]);
  assert.equal(run("'xxx'.replace('x', 'y', 4294967297)"), "yyy");
  // Probes of this round's differential (tests/node/README.md): the same as natively.
  assert.equal(run("'abcdef'.charAt(4294967297)"), "index out of range: 4294967297");
  assert.equal(run("'abcdef'.substring(1, 4294967297)"), "index out of range: 4294967297");
  assert.deepEqual(run("'aaaa'.findAll('a', 4294967297)"), ["a", "a", "a", "a"]);
  assert.equal(run("[1, 2, 3][-4294967295]"), "index out of bounds: -4294967295");
  assert.equal(run("[4294967297, 4294967296].sum()"), 8589934593);
  assert.equal(run("quantity('4294967297k').asInteger()"), 4294967297000);
  assert.equal(run("quantity('1e4294967297').asApproximateFloat()"), 10); // Go's int32 wrap
  assert.equal(run("semver('1.4294967297.0').minor()"), 4294967297);
  assert.equal(run("url('http://a:4294967297/').getPort()"), "4294967297");
  assert.equal(run("'x'.find('a{2147483648}')"),
    "Illegal regex: error parsing regexp: invalid repeat count: `{2147483648}`");
  assert.equal(run("timestamp('2024-01-01T00:00:00Z') + duration('4294967297s')"), "2160-02-07T06:28:17Z");
});
