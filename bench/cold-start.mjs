#!/usr/bin/env node
// Cold start of the playground in headless Chromium: navigation start → first rendered
// evaluation result (`window.__vapFirstResultMs`, set by www/main.js), over N fresh page loads
// (each in a new browser context: no HTTP cache, no compiled-wasm cache). Prints one JSON object.
//   node bench/cold-start.mjs [N=7] [PAGE=www/]
//
// The harness stays off the page's main thread until the result is there: it polls one global
// with a bare CDP Runtime.evaluate. (Playwright's waitForFunction first injects its own script,
// ~0.5 MB of JavaScript that took 20-30 ms of the main thread in the middle of start-up, and
// that time was counted as the page's.)
// Serves the repository root on 127.0.0.1 (scripts/serve.mjs, a free port); needs pkg/ built.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { launchChromium, serveRepo } from "../tests/node/page-helpers.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const N = Number(process.argv[2] ?? 7);
const PAGE = process.argv[3] ?? "www/";
if (!fs.existsSync(path.join(repo, "pkg/vap_eval.js"))) throw new Error("pkg/ is not built: bash scripts/build-pkg.sh");
const server = await serveRepo(repo);
const url = `${server.url}${PAGE}`;

const browser = await launchChromium();
const runs = [];
const details = [];
try {
  for (let i = 0; i < N; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const cdp = await context.newCDPSession(page);
    await page.goto(url, { waitUntil: "commit" });
    await firstResult(cdp);
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
  await server.close();
}
/** Polls `window.__vapFirstResultMs` every 10 ms through CDP alone (no script injected). */
async function firstResult(cdp) {
  const deadline = Date.now() + 30000;
  while (Date.now() < deadline) {
    const r = await cdp
      .send("Runtime.evaluate", { expression: "window.__vapFirstResultMs", returnByValue: true })
      .catch(() => null); // the document may still be committing
    if (typeof r?.result?.value === "number") return r.result.value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("no first result within 30 s");
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
  }),
);
