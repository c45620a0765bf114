#!/usr/bin/env node
// Cold start of the playground in headless Chromium, over N fresh page loads (each in a new
// browser context: no HTTP cache, no compiled-wasm cache). Prints one JSON object.
//   node bench/cold-start.mjs [N=7] [PAGE=www/] [--against DIR]
// Serves the repository root on 127.0.0.1 (scripts/serve.mjs, a free port); needs pkg/ built.
// --against DIR loads another checkout's playground in turn with this one (its own server; its
// pkg/ built): "against" in the output is its median and this one's ratio to it.
//
// Two figures per load, both from navigation start:
// - first result: the first evaluation result is in the DOM (`window.__vapFirstResultMs`, set by
//   www/main.js) — the figure held against the bar;
// - painted: the frame that shows it has been laid out and painted (`__vapFirstPaintedMs`).
// Each playground load alternates with a load of bench/baseline/ (an empty page with one module
// script, timed to its first frame the same way): what any page costs on this machine and
// browser. The playground's own cost is the difference; absolute figures move by ±30 % with
// the load of the shared machine.
//
// The harness stays off the page's main thread until the result is there: it polls one global
// with a bare CDP Runtime.evaluate. (Playwright's waitForFunction first injects its own script,
// ~0.5 MB of JavaScript that took 20-30 ms of the main thread in the middle of start-up, and
// that time was counted as the page's.)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { launchChromium, serveRepo } from "../tests/node/page-helpers.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
// --against DIR: another checkout of the project (its pkg/ built), served by its own server and
// loaded in turn with this one and the baseline: the two playgrounds side by side, in the same
// minutes (e.g. the release a bar was measured on).
const againstAt = args.indexOf("--against");
const AGAINST = againstAt >= 0 ? path.resolve(args.splice(againstAt, 2)[1] ?? "") : null;
const N = Number(args[0] ?? 7);
const PAGE = args[1] ?? "www/";
for (const root of [repo, AGAINST].filter(Boolean)) {
  if (!fs.existsSync(path.join(root, "pkg/vap_eval.js"))) throw new Error(`${root}: pkg/ is not built: bash scripts/build-pkg.sh`);
}
const server = await serveRepo(repo);
const otherServer = AGAINST
  ? await (await import(pathToFileURL(path.join(AGAINST, "tests/node/page-helpers.mjs")).href)).serveRepo(AGAINST)
  : null;

/** Polls `window[name]` every 10 ms through CDP alone (no script injected); its number. */
async function poll(cdp, name, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await cdp
      .send("Runtime.evaluate", { expression: `window.${name}`, returnByValue: true })
      .catch(() => null); // the document may still be committing
    if (typeof r?.result?.value === "number") return r.result.value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${PAGE}: no ${name} within ${timeoutMs} ms`);
}

/** One load of `page` in a fresh context: its two times, and `inspect`'s view of the page. */
async function load(browser, page, inspect, at = server) {
  const context = await browser.newContext();
  try {
    const tab = await context.newPage();
    const errors = [];
    tab.on("pageerror", (e) => errors.push(e.message));
    const cdp = await context.newCDPSession(tab);
    await tab.goto(`${at.url}${page}`, { waitUntil: "commit" });
    const firstResultMs = await poll(cdp, "__vapFirstResultMs");
    const paintedMs = await poll(cdp, "__vapFirstPaintedMs");
    const details = inspect ? await tab.evaluate(inspect) : {};
    if (errors.length) throw new Error(`${page}: ${errors.join("; ")}`);
    return { firstResultMs, paintedMs, ...details };
  } finally {
    await context.close();
  }
}

const inspectPlayground = () => {
  const wasm = performance.getEntriesByType("resource").find((e) => e.name.endsWith(".wasm"));
  return {
    state: document.body.dataset.state,
    allowed: window.__vapLastResult?.response?.allowed,
    evalMs: Number(document.getElementById("result")?.dataset.evalMs ?? NaN),
    wasmFetchEndMs: wasm?.responseEnd,
    domContentLoadedMs: performance.getEntriesByType("navigation")[0]?.domContentLoadedEventEnd,
    resources: performance.getEntriesByType("resource").map((e) => [new URL(e.name).pathname, Math.round(e.startTime), Math.round(e.responseEnd)]),
    // www/main.js's start-up marks: start() runs, inputs in the editors, engine ready, first
    // evaluate() returned, rendered, painted.
    marks: Object.fromEntries(performance.getEntriesByType("mark").filter((m) => m.name.startsWith("vap-")).map((m) => [m.name, Math.round(m.startTime)])),
  };
};

const browser = await launchChromium();
const details = [];
const baseline = [];
const other = [];
try {
  const kinds = otherServer ? ["page", "baseline", "other"] : ["page", "baseline"];
  for (let i = 0; i < N; i++) {
    // Rotate which goes first, so none always follows another.
    const order = kinds.map((_, k) => kinds[(i + k) % kinds.length]);
    for (const which of order) {
      if (which === "baseline") {
        baseline.push(await load(browser, "bench/baseline/"));
        continue;
      }
      const d = await load(browser, PAGE, inspectPlayground, which === "other" ? otherServer : server);
      if (d.state !== "ready" || typeof d.allowed !== "boolean")
        throw new Error(`${which === "other" ? AGAINST : "this checkout"}, load ${i}: no evaluation result rendered (state ${d.state}, allowed ${d.allowed})`);
      (which === "other" ? other : details).push(d);
    }
  }
} finally {
  await browser.close();
  await server.close();
  await otherServer?.close();
}

const median = (values) => {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length % 2 ? v[v.length >> 1] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  return +m.toFixed(1);
};
const runs = details.map((d) => d.firstResultMs);
const medianMs = median(runs);
const baselineMs = median(baseline.map((b) => b.firstResultMs));
const byResult = [...details].sort((a, b) => a.firstResultMs - b.firstResultMs);
console.log(
  JSON.stringify({
    medianMs,
    runs: runs.map((x) => +x.toFixed(1)),
    paintedMs: median(details.map((d) => d.paintedMs)),
    baselineMs,
    baselineRuns: baseline.map((b) => +b.firstResultMs.toFixed(1)),
    overBaselineMs: +(medianMs - baselineMs).toFixed(1),
    wasmFetchEndMs: median(details.map((d) => d.wasmFetchEndMs)),
    domContentLoadedMs: median(details.map((d) => d.domContentLoadedMs)),
    firstEvaluateMs: median(details.map((d) => d.evalMs)),
    marks: Object.fromEntries(
      ["vap-start", "vap-inputs-ready", "vap-engine-ready", "vap-first-evaluated", "vap-first-result", "vap-first-result-painted"].map((k) => [
        k,
        median(details.map((d) => d.marks?.[k])),
      ]),
    ),
    timeline: byResult[byResult.length >> 1]?.resources,
    against: otherServer
      ? {
          dir: AGAINST,
          medianMs: median(other.map((d) => d.firstResultMs)),
          runs: other.map((d) => +d.firstResultMs.toFixed(1)),
          ratio: +(medianMs / median(other.map((d) => d.firstResultMs))).toFixed(3),
        }
      : undefined,
  }),
);
