// node --test tests/node/playground.page.test.mjs — the playground (www/) end to end in headless
// Chromium against the real package (pkg/, build it first: bash scripts/build-pkg.sh).
// Serves the repository root itself (scripts/serve.mjs on 127.0.0.1, a free port).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic } from '../../scripts/serve.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const PKG = path.join(ROOT, 'pkg', 'vap_eval.js');
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const index = JSON.parse(fs.readFileSync(path.join(ROOT, 'www/examples/index.json'), 'utf8'));
const preloaded = index.examples.find((e) => e.name === index.default);

test('playground in headless Chromium', async (t) => {
  assert.ok(fs.existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM} (apt-get install -y chromium)`);
  if (!fs.existsSync(PKG)) {
    t.skip('pkg/vap_eval.js does not exist yet: build it with bash scripts/build-pkg.sh');
    return;
  }
  const { chromium } = await import('playwright-core');
  const server = await serveStatic({ root: ROOT });
  const base = `http://127.0.0.1:${server.port}`;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-eval-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS });
  const problems = [];
  t.after(async () => {
    await context.close();
    await server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  });

  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console.error: ${m.text()}`));
  const decision = () => page.getAttribute('[data-decision]', 'data-decision');
  const statusMessage = () => page.textContent('[data-testid=status-message]');

  await t.test('cold start: first result for the preloaded example', async () => {
    // index.html preloads the wasm and its boot script fetches it: one download, not two; the
    // examples come with the page.
    const requests = [];
    const onRequest = (r) => requests.push(r.url());
    page.on('request', onRequest);
    const response = await page.goto(`${base}/www/`);
    // scripts/serve.mjs starts the engine's download with the page's response.
    assert.match(response.headers().link ?? '', /^<\.\.\/pkg\/vap_eval_bg\.wasm>; rel=preload; as=fetch; crossorigin$/);
    await page.waitForFunction(() => window.__vapFirstResultMs !== undefined || document.body.dataset.state === 'error', null, { timeout: 30_000 });
    const notice = await page.textContent('#notice');
    assert.notEqual(await page.getAttribute('body', 'data-state'), 'error', notice);
    assert.equal(await page.locator('[data-decision]').count(), 1, `no decision shown; notice: ${notice}`);
    const ms = await page.evaluate(() => window.__vapFirstResultMs);
    t.diagnostic(`cold start (navigation -> first result rendered): ${ms.toFixed(1)} ms`);
    assert.equal(await page.inputValue('#example'), preloaded.name);
    assert.equal(await decision(), preloaded.expect.allowed ? 'allowed' : 'denied');
    const warnings = await page.locator('[data-testid=warnings] li').allTextContents();
    assert.deepEqual(warnings, preloaded.expect.warnings);
    const versions = await page.locator('#version option').allTextContents();
    assert.ok(versions.length > 0, 'version select is filled from supportedVersions()');
    page.off('request', onRequest);
    assert.deepEqual(requests.filter((u) => u.endsWith('.wasm')), [`${base}/pkg/vap_eval_bg.wasm`]);
    // The example list and the default example are inlined in index.html (scripts/inline-examples.mjs).
    assert.deepEqual(requests.filter((u) => u.includes('/www/examples/')), [], 'the default example was fetched, not read from the page');
    const fetched = await page.evaluate(() => performance.getEntriesByType('resource').filter((e) => e.name.endsWith('.wasm')).length);
    assert.equal(fetched, 1, 'the wasm was fetched more than once');
  });

  await t.test('editing the object re-evaluates: replicas 4 -> 50 is denied', async () => {
    const object = await page.inputValue('#object');
    assert.match(object, /replicas: 4\b/);
    await page.fill('#object', object.replace(/replicas: 4\b/, 'replicas: 50'));
    await page.waitForSelector('[data-decision=denied]', { timeout: 10_000 });
    assert.equal(
      await statusMessage(),
      `deployments.apps "nginx" is forbidden: ValidatingAdmissionPolicy 'replica-limit.example.com' with binding 'replica-limit-deny.example.com' denied request: spec.replicas is 50, the limit is 5`,
    );
    assert.match(await page.textContent('.decision-code'), /^422 Invalid$/);
    assert.equal(await page.locator('.first-denial').count(), 1);
  });

  await t.test('CEL scratchpad evaluates against the object', async () => {
    await page.fill('#expression', 'object.spec.replicas * 2');
    await page.waitForFunction(() => document.querySelector('[data-testid=scratch-value]')?.textContent === '100', null, { timeout: 10_000 });
    assert.match(await page.textContent('.scratch-meta'), /type int/);
  });

  await t.test('state survives a reload through the URL hash', async () => {
    await page.waitForFunction(() => location.hash.startsWith('#s='), null, { timeout: 5_000 });
    await page.reload();
    await page.waitForSelector('[data-decision]', { timeout: 30_000 });
    assert.match(await page.inputValue('#object'), /replicas: 50\b/);
    assert.equal(await decision(), 'denied');
  });

  await t.test('a garbage hash falls back to the preloaded example', async () => {
    await page.goto(`${base}/www/#s=zthis-is-not-a-state`);
    await page.reload();
    await page.waitForSelector('[data-decision]', { timeout: 30_000 });
    assert.match(await page.inputValue('#object'), /replicas: 4\b/);
  });

  await t.test('user text is rendered as text, never as HTML', async () => {
    const payload = '<img src=x onerror="window.__xss=1">';
    const manifests = await page.inputValue('#manifests');
    const object = await page.inputValue('#object');
    await page.fill('#object', object.replace(/replicas: \d+/, 'replicas: 50'));
    await page.fill('#manifests', manifests.replace(/^(\s*)messageExpression: .*$/m, `$1message: '${payload}'`));
    await page.waitForFunction((p) => document.querySelector('[data-testid=status-message]')?.textContent.includes(p), payload, { timeout: 10_000 });
    assert.equal(await page.locator('#result img').count(), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
  });

  await t.test('type-error example: diagnostics listed, click selects the expression', async () => {
    await page.selectOption('#example', 'type-error');
    await page.waitForFunction(() => document.querySelector('.diagnostic.clickable') !== null, null, { timeout: 10_000 });
    assert.equal(await decision(), 'denied');
    const overload = page.locator('.diagnostic.severity-error', { hasText: "found no matching overload for '_<=_' applied to '(int, string)'" }).first();
    assert.match(await overload.locator('.diagnostic-line').textContent(), /^ERROR .*spec\.validations\[0\]\.expression: found no matching overload/);
    assert.match(await overload.getAttribute('class'), /\bclickable\b/, 'the diagnostic has a position');
    await overload.click();
    const sel = await page.evaluate(() => {
      const ta = document.getElementById('manifests');
      const line = ta.value.slice(0, ta.selectionStart).split('\n').length;
      return { focused: document.activeElement === ta, text: ta.value.slice(ta.selectionStart, ta.selectionEnd), line: ta.value.split('\n')[line - 1] };
    });
    assert.ok(sel.focused, 'the manifests editor has focus');
    assert.ok(sel.line.includes("size(object.metadata.name) <= '30'"), `selection on the expression's line, got: ${sel.line}`);
    assert.ok("size(object.metadata.name) <= '30'".includes(sel.text), `selection inside the expression, got: ${sel.text}`);
  });

  /** Opens the playground served from a copy of the repository made by `setup(dir)`. */
  async function withCopy(setup, fn) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-eval-copy-'));
    fs.cpSync(path.join(ROOT, 'www'), path.join(dir, 'www'), { recursive: true });
    setup(dir);
    const copyServer = await serveStatic({ root: dir });
    const other = await context.newPage();
    try {
      await other.goto(`http://127.0.0.1:${copyServer.port}/www/`);
      await fn(other);
    } finally {
      await other.close();
      await copyServer.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  await t.test('without the package, the page says how to build it', async () => {
    // No pkg/: the bundle's static import of the glue fails, so main.js never runs and
    // index.html's onerror handler shows the notice.
    await withCopy(() => {}, async (other) => {
      await other.waitForSelector('#notice [role=alert]', { timeout: 10_000 });
      assert.equal(await other.getAttribute('body', 'data-state'), 'error');
      assert.match(await other.textContent('#notice'), /could not be loaded[\s\S]*bash scripts\/run\.sh/);
    });
  });

  await t.test('a broken wasm module gets its notice, not a blank page', async () => {
    // The package with its wasm replaced by junk: the boot script's compile fails, init()'s own
    // fetch and compile fail too, and main.js says so.
    const junkWasm = (dir) => {
      fs.cpSync(path.join(ROOT, 'pkg'), path.join(dir, 'pkg'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'pkg', 'vap_eval_bg.wasm'), 'not wasm');
    };
    await withCopy(junkWasm, async (other) => {
      await other.waitForSelector('#notice [role=alert]', { timeout: 10_000 });
      assert.equal(await other.getAttribute('body', 'data-state'), 'error');
      assert.match(await other.textContent('#notice'), /could not be loaded or initialised[\s\S]*bash scripts\/run\.sh[\s\S]*Details: /);
    });
  });

  await t.test('no page errors', () => {
    assert.deepEqual(problems, []);
  });
});

// Cold start: the page fetches the package's modules through <link rel="modulepreload"> while
// the HTML parses. A module of the graph missing from the links is fetched only once its importer
// has been parsed (it cost ~40 ms here for the snippet module); a link to a file the package no
// longer has is a 404.
test('index.html modulepreloads exactly the package\'s module graph', (t) => {
  if (!fs.existsSync(PKG)) {
    t.skip('pkg/vap_eval.js does not exist yet: build it with bash scripts/build-pkg.sh');
    return;
  }
  const graph = [];
  const visit = (file) => {
    const rel = path.relative(ROOT, file).split(path.sep).join('/');
    if (graph.includes(rel)) return;
    graph.push(rel);
    const src = fs.readFileSync(file, 'utf8');
    for (const m of src.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]/gm)) visit(path.resolve(path.dirname(file), m[1]));
    for (const m of src.matchAll(/^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm)) visit(path.resolve(path.dirname(file), m[1]));
  };
  visit(PKG);
  const html = fs.readFileSync(path.join(ROOT, 'www/index.html'), 'utf8');
  const linked = [...html.matchAll(/<link rel="modulepreload" href="\.\.\/(pkg\/[^"]+)">/g)].map((m) => m[1]);
  assert.deepEqual(linked.sort(), graph.sort());
  assert.ok(graph.some((f) => f.startsWith('pkg/snippets/')), 'the graph walk found the snippet import');
});
