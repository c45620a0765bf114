// node --test tests/node/memory.test.mjs — the wasm module's memory stays flat over many
// `PolicySet.evaluate` and `evaluate` calls: the per-call arena (src/arena.rs) reuses its chunks, and what a call
// leaves behind (caches) does not grow the module's memory call after call.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { findBenchDir } from "../../bench/bench-dir.mjs";

const pkgDir = new URL("../../pkg/", import.meta.url);
// A module instance of its own (the query makes a separate ES module), whose memory only this
// file's calls use.
const wasm = await import(new URL("vap_eval.js?memory", pkgDir));
const exports = wasm.initSync({ module: fs.readFileSync(new URL("vap_eval_bg.wasm", pkgDir)) });
for (const f of fs.readdirSync(new URL("schemas/", pkgDir))) {
  const m = /^(1\.\d+)\.json$/.exec(f);
  if (m) wasm.loadSchemas(m[1], fs.readFileSync(new URL(`schemas/${f}`, pkgDir), "utf8"));
}

const example = (f) => fs.readFileSync(new URL(`../../www/examples/${f}`, import.meta.url), "utf8");
const examples = JSON.parse(example("index.json")).examples;

test("20,000 PolicySet.evaluate and evaluate calls leave the module's memory as it was after warm-up", () => {
  // Every example's set with its objects (the one it denies, the one it allows), and requests
  // that fail: text that is not JSON, a document that is not an object, a body that does not decode.
  const calls = [];
  for (const e of examples) {
    if (!e.manifests || !e.object) continue;
    const set = new wasm.PolicySet(example(e.manifests));
    const request = e.request ? example(e.request) : undefined;
    for (const f of [e.object, e.failing?.object, e.passing?.object].filter(Boolean)) {
      calls.push(() => set.evaluate({ object: example(f), request }));
    }
    calls.push(() => set.evaluate({ object: "{bad" }));
    calls.push(() => set.evaluate({ object: "[1, 2]" }));
    calls.push(() => set.evaluate({ object: '{"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": "x"}}' }));
    // evaluate(), which compiles the manifests in the call, once per example.
    calls.push(() => wasm.evaluate({ manifests: example(e.manifests), object: example(e.object), request }));
  }
  // The standard benchmark's Deployment (18.7 KB) when the workload is there.
  const dir = findBenchDir();
  if (dir) {
    const replicas = examples.find((e) => e.name === "replica-limit");
    const set = new wasm.PolicySet(example(replicas.manifests));
    const object = fs.readFileSync(`${dir}/deployment.json`, "utf8");
    for (let i = 0; i < 4; i++) calls.push(() => set.evaluate({ object, request: example(replicas.request) }));
  }
  assert.ok(calls.length > 40, `${calls.length} calls in the mix`);
  const round = (n) => {
    for (let i = 0; i < n; i++) calls[i % calls.length]();
  };
  round(2000);
  const after = exports.memory.buffer.byteLength;
  round(20000);
  assert.equal(exports.memory.buffer.byteLength, after, "the memory grew after warm-up");
});
