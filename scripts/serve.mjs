#!/usr/bin/env node
// Serves the repository root statically (the playground www/ imports ../pkg/), with the MIME
// types a browser needs (application/wasm for streaming compilation, text/javascript for
// modules), on HOST:PORT (default 127.0.0.1:8080). Used by scripts/run.sh; Ctrl-C stops it.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HOST = process.env.HOST || "127.0.0.1";
const PORT = Number(process.env.PORT || 8080);
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
  ".svg": "image/svg+xml",
};

const server = http.createServer((req, res) => {
  let rel;
  try {
    rel = decodeURIComponent(new URL(req.url, "http://x").pathname);
  } catch {
    return res.writeHead(400).end("bad request");
  }
  let file = path.join(root, rel);
  if (file !== root && !file.startsWith(root + path.sep)) return res.writeHead(403).end("forbidden");
  fs.stat(file, (err, st) => {
    if (!err && st.isDirectory()) {
      if (!rel.endsWith("/")) return res.writeHead(301, { location: rel + "/" }).end();
      file = path.join(file, "index.html");
    }
    fs.readFile(file, (err, body) => {
      if (err) return res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] ?? "application/octet-stream", "cache-control": "no-cache" });
      res.end(body);
      console.log(`${req.method} ${rel} 200`);
    });
  });
});
server.listen(PORT, HOST, () => console.log(`serving ${root} at http://${HOST}:${PORT}/ (playground: /www/)`));
