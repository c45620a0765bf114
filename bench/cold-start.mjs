#!/usr/bin/env node
// Cold start of the playground in headless Chromium: navigation start → first rendered
// evaluation result (`window.__vapFirstResultMs`, set by www/main.js), over N fresh page loads
// (each in a new browser context: no HTTP cache, no compiled-wasm cache). Prints one JSON object.
//   node bench/cold-start.mjs [N=7] [pkg-bench-dir]
// Serves the repository root on 127.0.0.1 (free port). While the package (pkg/) does not export
// `evaluate` yet, /pkg/ is served from the bench package (cargo feature `bench`) behind a shim
// module whose `evaluate` calls the bench stand-in `benchEvaluate` — noted in the output.
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium } from "../tests/node/page-helpers.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const N = Number(process.argv[2] ?? 7);
const pkgBench = process.argv[3] ?? path.join(repo, "bench/.out/pkg-bench");
const shippedJs = path.join(repo, "pkg/vap_eval.js");
if (!fs.existsSync(shippedJs)) throw new Error("pkg/ is not built: bash scripts/build-pkg.sh");
const useShim = !/export function evaluate\s*\(/.test(fs.readFileSync(shippedJs, "utf8"));

const SHIM = `// bench shim: the package's evaluate() through the bench stand-in benchEvaluate
import init, * as m from './vap_eval_bench.js';
export * from './vap_eval_bench.js';
export default init;
export function evaluate(manifests, input, options) {
  return JSON.parse(m.benchEvaluate(manifests, JSON.stringify(input ?? {}), JSON.stringify(options ?? {})));
}
`;
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".json": "application/json", ".wasm": "application/wasm", ".yaml": "text/yaml; charset=utf-8" };

function resolve(rel) {
  if (useShim && rel.startsWith("/pkg/")) {
    const name = rel.slice(5);
    if (name === "vap_eval.js") return { body: SHIM, type: TYPES[".js"] };
    if (name === "vap_eval_bench.js") return { file: path.join(pkgBench, "vap_eval.js") };
    return { file: path.join(pkgBench, name) };
  }
  let file = path.join(repo, rel);
  if (!file.startsWith(repo)) return null;
  if (rel.endsWith("/")) file = path.join(file, "index.html");
  return { file };
}

const server = http.createServer((req, res) => {
  const rel = decodeURIComponent(new URL(req.url, "http://x").pathname);
  const r = resolve(rel);
  try {
    const body = r.body ?? fs.readFileSync(r.file);
    res.writeHead(200, { "content-type": r.type ?? TYPES[path.extname(r.file)] ?? "application/octet-stream", "cache-control": "no-store" });
    res.end(body);
  } catch {
    res.writeHead(404).end("not found");
  }
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const url = `http://127.0.0.1:${server.address().port}/www/`;

const browser = await launchChromium();
const runs = [];
const details = [];
try {
  for (let i = 0; i < N; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(() => window.__vapFirstResultMs !== undefined, null, { timeout: 30000 });
    const d = await page.evaluate(() => {
      const wasm = performance.getEntriesByType("resource").find((e) => e.name.endsWith(".wasm"));
      return {
        firstResultMs: window.__vapFirstResultMs,
        state: document.body.dataset.state,
        allowed: window.__vapLastResult?.response?.allowed,
        evalMs: Number(document.getElementById("result")?.dataset.evalMs ?? NaN),
        wasmFetchEndMs: wasm?.responseEnd,
        wasmBytes: wasm?.encodedBodySize,
        domContentLoadedMs: performance.getEntriesByType("navigation")[0]?.domContentLoadedEventEnd,
        resources: performance.getEntriesByType("resource").map((e) => [new URL(e.name).pathname, Math.round(e.startTime), Math.round(e.responseEnd)]),
        // www/main.js's start-up marks: start() runs, inputs in the editors, engine ready,
        // first evaluate() returned (then the render, then window.__vapFirstResultMs).
        marks: Object.fromEntries(performance.getEntriesByType("mark").filter((m) => m.name.startsWith("vap-")).map((m) => [m.name, Math.round(m.startTime)])),
      };
    });
    await context.close();
    if (d.state !== "ready" || typeof d.allowed !== "boolean" || errors.length)
      throw new Error(`load ${i}: no evaluation result rendered (state ${d.state}, allowed ${d.allowed}); ${errors.join("; ")}`);
    runs.push(d.firstResultMs);
    details.push(d);
  }
} finally {
  await browser.close();
  server.close();
}
const s = [...runs].sort((a, b) => a - b);
const median = s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
const med2 = (get) => {
  const v = details.map(get).filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return v.length ? v[v.length >> 1] : null;
};
const med = (k) => {
  const v = details.map((d) => d[k]).filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return v.length ? +v[v.length >> 1].toFixed(1) : null;
};
console.log(
  JSON.stringify({
    medianMs: +median.toFixed(1),
    runs: runs.map((x) => +x.toFixed(1)),
    wasmFetchEndMs: med("wasmFetchEndMs"),
    domContentLoadedMs: med("domContentLoadedMs"),
    firstEvaluateMs: med("evalMs"),
    marks: Object.fromEntries(["vap-start", "vap-inputs-ready", "vap-engine-ready", "vap-first-evaluated", "vap-first-result"].map((k) => [k, med2((d) => d.marks?.[k])])),
    timeline: details[details.length >> 1]?.resources,
    note: useShim ? "pkg/ has no evaluate export yet: served the bench package with an evaluate shim" : null,
  }),
);
