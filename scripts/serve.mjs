#!/usr/bin/env node
// A static file server for the repository root (the playground www/ imports ../pkg/), with the
// MIME types a browser needs (application/wasm for streaming compilation, text/javascript for
// modules), a preload header for the playground's engine, and the playground's bundle of its own
// modules made from the current sources. The one server of the project: scripts/run.sh runs this file; the page tests and the
// cold-start benchmark import `serveStatic` (tests/node/page-helpers.mjs).
//
//   node scripts/serve.mjs      serves ROOT (default the repository) on HOST:PORT (default 127.0.0.1:8080) until Ctrl-C
import crypto from "node:crypto";
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bundle, bundleEditor } from "./bundle-www.mjs";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".yaml": "text/yaml; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
  ".md": "text/plain; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

// Headers for the playground's page: a `Link` preload starts the engine's download with the
// page's response, before the HTML parser reaches index.html's own <link rel="preload"> (the
// browser fetches it once; A/B over 41 interleaved loads: first result ≈ 5 ms sooner). Any host
// serving www/ can send the same header.
const PAGE_HEADERS = {
  "www/index.html": { link: "<../pkg/vap_eval_bg.wasm>; rel=preload; as=fetch; crossorigin" },
};

// Files made on request from the current sources (never stale while you edit), and remade only
// when a source changed: the playground's bundle of its own modules (scripts/bundle-www.mjs; a
// static host gets it from that script).
const GENERATED = {
  "www/app.js": { sources: "www/main.js", make: (root) => bundle(path.join(root, "www", "main.js")) },
  "www/editor.js": { sources: "www/editor", make: (root) => bundleEditor(path.join(root, "www")) },
};

/** `GENERATED[name]`'s text, from the cache while the .js files of its sources are unchanged. */
function generated(root, name, cache) {
  const { sources, make } = GENERATED[name];
  const dir = path.join(root, sources.endsWith(".js") ? path.dirname(sources) : sources);
  // The sources' contents (mtimes can repeat within the clock's resolution).
  const hash = crypto.createHash("sha256");
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".js") && f !== path.basename(name)).sort()) {
    hash.update(`${f}\0`).update(fs.readFileSync(path.join(dir, f))).update("\0");
  }
  const key = hash.digest("hex");
  const hit = cache.get(name);
  if (hit?.key === key) return hit.text;
  const text = make(root);
  cache.set(name, { key, text });
  return text;
}

/**
 * Serves `root` on `host:port` (port 0: any free port), without caching. Resolves to
 * `{ url, port, close }` once listening; `url` ends with "/". `log` is called per request.
 */
export async function serveStatic({ root = repoRoot, host = "127.0.0.1", port = 0, log = null } = {}) {
  root = path.resolve(root);
  const cache = new Map();
  const server = http.createServer((req, res) => {
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url, "http://x").pathname);
    } catch {
      return res.writeHead(400).end("bad request");
    }
    let file = path.join(root, rel);
    if (file !== root && !file.startsWith(root + path.sep)) return res.writeHead(403).end("forbidden");
    const name = path.relative(root, file).split(path.sep).join("/");
    // Generated from sources only where they are (the repository; a built site has the files).
    if (Object.hasOwn(GENERATED, name) && fs.existsSync(path.join(root, GENERATED[name].sources))) {
      let text;
      try {
        text = generated(root, name, cache);
      } catch (e) {
        log?.(`${req.method} ${rel} 500`);
        return res.writeHead(500, { "content-type": "text/plain" }).end(String(e?.message ?? e));
      }
      log?.(`${req.method} ${rel} 200 (generated)`);
      res.writeHead(200, { "content-type": TYPES[".js"], "cache-control": "no-store" });
      return res.end(text);
    }
    fs.stat(file, (err, st) => {
      if (!err && st.isDirectory()) {
        if (!rel.endsWith("/")) return res.writeHead(301, { location: rel + "/" }).end();
        file = path.join(file, "index.html");
      }
      fs.readFile(file, (err, body) => {
        const status = err ? 404 : 200;
        log?.(`${req.method} ${rel} ${status}`);
        if (err) return res.writeHead(404, { "content-type": "text/plain" }).end("not found");
        const page = PAGE_HEADERS[path.relative(root, file).split(path.sep).join("/")];
        res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream", "cache-control": "no-store", ...page });
        res.end(body);
      });
    });
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  const actual = server.address().port;
  return {
    url: `http://${host}:${actual}/`,
    port: actual,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const host = process.env.HOST || "127.0.0.1";
  // ROOT: the folder to serve (scripts/run.sh serves the built site, dist/site/); default the repository.
  const root = process.env.ROOT ? path.resolve(process.env.ROOT) : repoRoot;
  const { url } = await serveStatic({ root, host, port: Number(process.env.PORT || 8080), log: console.log });
  console.log(`serving ${root} at ${url} (playground: ${url}www/)`);
}
