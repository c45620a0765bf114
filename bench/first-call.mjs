#!/usr/bin/env node
// What the playground's first evaluate() costs before it runs: the wasm functions V8 compiles
// for it. V8 compiles a module's functions lazily, each on its first call (Liftoff), so the first
// evaluate() of a page — the cold start's largest part (bench/README.md) — compiles every function
// it reaches. Their number and wasm bytes do not depend on the machine's load, unlike the
// milliseconds, so they tell whether a change made the first call lighter or heavier.
//   node bench/first-call.mjs [PKG_DIR=pkg]
// Prints one JSON object: the functions compiled by the first evaluate() and their wasm body and
// machine code bytes (from V8's --trace-wasm-compilation-times), and the first and second calls'
// milliseconds in a process without the trace (Node, so indicative only).
//
// The input is the playground's first evaluation: the default example of www/examples/index.json
// with the arguments www/state.js's evaluateArgs gives it (called here).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");

if (process.argv[2] === "--child") {
  const pkg = path.resolve(process.argv[3]);
  const m = await import(path.join(pkg, "vap_eval.js"));
  m.initSync({ module: new WebAssembly.Module(fs.readFileSync(path.join(pkg, "vap_eval_bg.wasm"))) });
  const dir = path.join(repo, "www", "examples");
  const index = JSON.parse(fs.readFileSync(path.join(dir, "index.json"), "utf8"));
  const ex = index.examples.find((e) => e.name === index.default);
  const file = (k) => (ex[k] ? fs.readFileSync(path.join(dir, ex[k]), "utf8") : "");
  // The page's own arguments (www/state.js), for the version it selects.
  const { evaluateArgs, normalizeState } = await import(pathToFileURL(path.join(repo, "www", "state.js")).href);
  const state = normalizeState({ manifests: file("manifests"), object: file("object"), oldObject: file("oldObject"), request: file("request") });
  const [input] = evaluateArgs(state, [...m.supportedVersions()].map(String));
  // "--child PKG init": instantiate only (what compiling the module and instantiating it
  // compile is subtracted).
  if (process.argv[4] === "init") process.exit(0);
  let t0 = performance.now();
  const first = m.evaluate(input);
  const firstMs = performance.now() - t0;
  t0 = performance.now();
  m.evaluate(input);
  const secondMs = performance.now() - t0;
  if (first?.response?.allowed !== ex.expect?.allowed) throw new Error(`${ex.name}: unexpected result ${JSON.stringify(first?.response)}`);
  // On stderr: V8's trace on stdout is flushed in blocks that would split a line of ours.
  process.stderr.write(`${JSON.stringify({ firstMs, secondMs })}\n`);
} else {
  const pkg = path.resolve(process.argv[2] ?? path.join(repo, "pkg"));
  // V8 writes the trace through its own buffered stdout, flushed at exit: its lines cannot be
  // placed between ours, so the first call's are those of a run with it less those of a run
  // that only instantiates.
  const child = (trace, ...extra) => {
    const flags = trace ? ["--trace-wasm-compilation-times"] : [];
    const r = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), "--child", pkg, ...extra], {
      encoding: "utf8",
      maxBuffer: 1 << 28,
    });
    if (r.status !== 0) throw new Error(`first-call: the child failed: ${r.stderr}`);
    return { lines: r.stdout.split("\n"), stderr: r.stderr };
  };
  const count = (lines) => {
    const c = { functions: 0, bodyBytes: 0, codeBytes: 0 };
    for (const line of lines) {
      const m = /using Liftoff.* bodysize (\d+) codesize (\d+)/.exec(line);
      if (!m) continue;
      c.functions++;
      c.bodyBytes += Number(m[1]);
      c.codeBytes += Number(m[2]);
    }
    return c;
  };
  const [all, init] = [count(child(true).lines), count(child(true, "init").lines)];
  if (all.functions === 0) throw new Error("first-call: V8 traced no compilation (--trace-wasm-compilation-times)");
  const functions = all.functions - init.functions;
  const bodyBytes = all.bodyBytes - init.bodyBytes;
  const codeBytes = all.codeBytes - init.codeBytes;
  // Timed without the trace, which slows compilation.
  const times = JSON.parse(child(false).stderr.trim().split("\n").at(-1));
  const r1 = (x) => +x.toFixed(1);
  console.log(JSON.stringify({ functions, bodyBytes, codeBytes, firstMs: r1(times.firstMs), secondMs: r1(times.secondMs) }));
}
