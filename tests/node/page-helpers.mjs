// Helpers for page tests (tests/node/*.page.test.mjs): a static server for the repository root
// on 127.0.0.1 (like scripts/run.sh, any free port) and headless Debian Chromium through
// playwright-core. Never `npx playwright install`: it downloads a browser, which fails here.
//
//   import { serveRepo, launchChromium } from "./page-helpers.mjs";
//   const server = await serveRepo();            // server.url = "http://127.0.0.1:PORT/"
//   const browser = await launchChromium();
//   const page = await browser.newPage();
//   await page.goto(server.url + "www/");
//   ...; await browser.close(); await server.close();
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".yaml": "text/yaml; charset=utf-8",
  ".d.ts": "text/plain; charset=utf-8",
};

/** Serves `root` (default: the repository) statically on 127.0.0.1, on a free port. */
export async function serveRepo(root = repoRoot) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    let file = path.join(root, decodeURIComponent(url.pathname));
    if (!file.startsWith(root)) return res.writeHead(403).end();
    try {
      if (fs.statSync(file).isDirectory()) {
        if (!url.pathname.endsWith("/")) return res.writeHead(301, { location: url.pathname + "/" }).end();
        file = path.join(file, "index.html");
      }
      const body = fs.readFileSync(file);
      res.writeHead(200, {
        "content-type": TYPES[path.extname(file)] ?? "application/octet-stream",
        "cache-control": "no-store",
      });
      res.end(body);
    } catch {
      res.writeHead(404).end("not found");
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Headless Debian Chromium (/usr/bin/chromium, or $CHROMIUM) through playwright-core. */
export async function launchChromium() {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/**
 * Collects console errors, uncaught page errors and failed requests (HTTP >= 400; the browser's
 * own /favicon.ico request excepted), to assert there were none.
 */
export function collectErrors(page) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    // "Failed to load resource" is reported below, with its URL.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource"))
      errors.push(`console.error: ${m.text()}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400 && new URL(r.url()).pathname !== "/favicon.ico")
      errors.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ""}`));
  return errors;
}
