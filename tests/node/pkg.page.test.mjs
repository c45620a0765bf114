// The npm package (pkg/) in headless Chromium: ES module import from a static server + init().
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { serveRepo, launchChromium, collectErrors, repoRoot } from "./page-helpers.mjs";

test("pkg/ loads in Chromium with init() and answers version()", async () => {
  const { version } = JSON.parse(fs.readFileSync(`${repoRoot}/pkg/package.json`, "utf8"));
  const server = await serveRepo();
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = collectErrors(page);
    await page.goto(server.url + "tests/node/fixtures/pkg.html");
    await page.waitForFunction(() => document.getElementById("out").textContent !== "loading");
    assert.equal(await page.textContent("#out"), `vap-eval ${version}`);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
