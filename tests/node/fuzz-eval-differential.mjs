// node tests/node/fuzz-eval-differential.mjs evals.jsonl — whole evaluations: the package's
// evaluate() against the native results of the same inputs, written by the native fuzzer:
//   cargo run --profile fuzz --example fuzz_mutate -- --evals 5000 --seed 1 > evals.jsonl
// Every line holds {input, result}; the result is what `evaluate` returns in the package (the
// native run converts diagnostics as the wasm layer does: UTF-16 positions, `rendered`). The
// comparison is of the whole JSON, key order included, and names the differing fields
// (response, policies' traces, diagnostics, objectChanges, kyverno, webhooks). Not run by
// `node --test` (no .test.mjs); needs pkg/ (bash scripts/build-pkg.sh).
//
// Differences by design are listed in BY_DESIGN with their reason, and counted, never dropped
// silently. Anything that depends on the platform's pointer width is a bug, not by design.
import fs from "node:fs";
import readline from "node:readline";

const pkgDir = new URL("../../pkg/", import.meta.url);
const wasm = await import(new URL("vap_eval.js", pkgDir));
wasm.initSync({ module: fs.readFileSync(new URL("vap_eval_bg.wasm", pkgDir)) });
// The native build has the built-in schemas compiled in; the package loads them.
for (const v of wasm.supportedVersions()) {
  const f = new URL(`schemas/${v}.json`, pkgDir);
  if (fs.existsSync(f)) wasm.loadSchemas(v, fs.readFileSync(f, "utf8"));
}

// Inputs the comparison skips, with the reason (counted and printed).
const SKIP = [
  {
    reason:
      "a document passed as a JS value holding an integer beyond 2^53: JS numbers are doubles, " +
      "so the package gets another value than the native run (an API property, not wasm32)",
    test: (input) =>
      ["object", "oldObject", "request", "schemas"].some(
        (k) =>
          input[k]?.json !== undefined &&
          (input[k].json.replace(/"(?:[^"\\]|\\.)*"/g, '""').match(/(?<![\d.eE+-])-?\d{16,}(?![\d.eE])/g) ?? []).some(
            (n) => !Number.isSafeInteger(Number(n)),
          ),
      ),
  },
];
// Differences in the results that are by design: (path, native, package, input) -> match.
// Time zones: the package uses the host's Intl (ICU's IANA copy), the native build a bundled
// database (README, Differences from kube-apiserver): a zone known to one and not the other,
// or whose offsets differ, changes results. The first few of these are printed all the same.
const ZONE_CALL = /\.get(FullYear|Month|Date|DayOfMonth|DayOfWeek|DayOfYear|Hours|Minutes|Seconds|Milliseconds)\(\s*\\?["']/;
const BY_DESIGN = [
  {
    reason: "time zones: an `unknown time zone` on one side only (host Intl against the bundled database)",
    test: (path, a, b) => typeof a === "string" && typeof b === "string" && /unknown time zone/.test(a + b),
  },
  {
    reason:
      "time zones: the input's expressions take a time zone argument, whose offsets come from the " +
      "host's Intl in the package and the bundled database natively",
    test: (path, a, b, input) => ZONE_CALL.test(input.manifests ?? ""),
  },
];
let shownByDesign = 0;

const file = process.argv[2];
let inputs = 0;
const skipped = new Map();
const byDesign = new Map();
let differ = 0;
let threw = 0;
let compared = 0;

function diff(a, b, path, out) {
  if (out.length > 8) return;
  if (a === b) return;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") {
    out.push([path, a, b]);
    return;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return void out.push([path, a, b]);
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (!Array.isArray(a) && ka.join("\0") !== kb.join("\0"))
    out.push([path + " (keys)", ka.join(","), kb.join(",")]);
  if (Array.isArray(a) && a.length !== b.length) out.push([path + ".length", a.length, b.length]);
  for (const k of ka) if (k in b) diff(a[k], b[k], `${path}.${k}`, out);
}

for await (const line of readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity })) {
  if (!line) continue;
  inputs++;
  const { input, result } = JSON.parse(line);
  const skip = SKIP.find((s) => s.test(input));
  if (skip) {
    skipped.set(skip.reason, (skipped.get(skip.reason) ?? 0) + 1);
    continue;
  }
  const arg = {};
  for (const [k, v] of Object.entries(input)) arg[k] = v && typeof v === "object" && "json" in v ? JSON.parse(v.json) : v;
  let r;
  try {
    r = wasm.evaluate(arg);
  } catch (e) {
    threw++;
    console.log("THREW", JSON.stringify(input).slice(0, 400), "\n  ", String(e).slice(0, 300));
    continue;
  }
  compared++;
  // Both sides through JSON (the package parses its result from JSON text too).
  const pkg = JSON.parse(JSON.stringify(r));
  if (JSON.stringify(pkg) === JSON.stringify(result)) continue;
  const out = [];
  diff(result, pkg, "result", out);
  const real = out.filter(([p, a, b]) => {
    const d = BY_DESIGN.find((x) => x.test(p, a, b, input));
    if (d) {
      byDesign.set(d.reason, (byDesign.get(d.reason) ?? 0) + 1);
      if (++shownByDesign <= 3)
        console.log("BY DESIGN", p, "\n     native ", JSON.stringify(a)?.slice(0, 200), "\n     package", JSON.stringify(b)?.slice(0, 200));
    }
    return !d;
  });
  if (!real.length) continue;
  if (++differ <= 20) {
    console.log("DIFF", JSON.stringify(input).slice(0, 600));
    for (const [p, a, b] of real)
      console.log("  ", p, "\n     native ", JSON.stringify(a)?.slice(0, 300), "\n     package", JSON.stringify(b)?.slice(0, 300));
  }
}
for (const [reason, n] of skipped) console.log(`skipped ${n}: ${reason}`);
for (const [reason, n] of byDesign) console.log(`by design ${n}: ${reason}`);
console.log(`${inputs} inputs, ${compared} compared, ${differ} differ, ${threw} threw`);
process.exitCode = differ || threw ? 1 : 0;
