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
import { serveStatic, repoRoot } from "../../scripts/serve.mjs";

export { repoRoot, serveStatic };

/** Serves `root` (default: the repository) statically on 127.0.0.1, on a free port. */
export function serveRepo(root = repoRoot) {
  return serveStatic({ root });
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
