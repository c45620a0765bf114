// node --test tests/node/playground.page.test.mjs — the playground (www/) end to end in headless
// Chromium against the real package (pkg/, build it first: bash scripts/build-pkg.sh).
// Serves the repository root itself (scripts/serve.mjs on 127.0.0.1, a free port).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
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
// Screenshots of the page tests (gitignored).
const ARTIFACTS = path.join(ROOT, 'tests', 'node', 'artifacts');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
// A share link as www/state.js wrote them when the editors were textareas (#s=z + deflate-raw
// JSON): a policy denying ConfigMaps with 2+ data keys, version 1.33, a scratchpad expression.
const OLD_LINK =
  '#s=zrVNNb9QwEP0rlk9U2gQtvaCIy7IUTkBVoV5IDxNnNh3WHhuPs7Qg_jtynHRX1aonbp558_ne-I92wLRDSaIbDYFuMQp5bhT0jiQ_Iw4kKUIiz_X-rdTkXx_WLe-J-0bdgqUeEvGwWRKuvSXz2LLDBD0kaFpWisFho7ztK0u8r_EBXLBYG-9aloBmCtoB2TFiKdCoj0A2ux0kc7_1nKcgTjLFKhVR_BgN3owWF1-lINCn6Mcgjfre6lbfFUCp43IFOqxPQB-wbFiw7c3V5tvVCb70KrDxvKPBQZA55DCzkPOzXSl8CBGlUNlq3_1Ak-rMRi30G19dqHfqTatLeYciMBR6VKZHlCSyNk_FLVdV1fL_lOY9cU88vKhQ1S1BT-qEKfnLC0KeErExC50fkB_vzqxxnDTXlAAGz47U4w5Gm7LDQod20Xo_dhgZE057L4n1syS9mtl_dt_H7ttJzc8QznZPv_xiTCOelH6KhKzxusjZ5fckbe5s-69Lc73SEX-OKLNxKJPoRq_ry0u90jOVBT3ej27OnI9eaTEx_4triODy59V__wE';

/** Relative luminance of a CSS rgb() colour (0 black .. 1 white). */
function luminance(rgb) {
  const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/**
 * `n` policies, each with 12 validations that run into the per-expression cost limit (a six-deep
 * comprehension): ≈ 350 ms of evaluation per policy in Node, ≈ 8 s for 24 — a runaway to the
 * page's 3 s limit, though each expression is bounded by the cost limits.
 */
function runawayManifests(n) {
  const ten = '[1,2,3,4,5,6,7,8,9,10]';
  const expr = `${ten}.all(a, ${ten}.all(b, ${ten}.all(c, ${ten}.all(d, ${ten}.all(e, ${ten}.all(f, a+b+c+d+e+f > 0))))))`;
  const docs = [];
  for (let i = 0; i < n; i++) {
    docs.push(
      `apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: runaway-${i}\nspec:\n  failurePolicy: Ignore\n` +
        `  matchConstraints:\n    resourceRules:\n    - apiGroups: [""]\n      apiVersions: ["v1"]\n      operations: ["CREATE"]\n      resources: ["namespaces"]\n` +
        `  validations:\n${Array.from({ length: 12 }, () => `  - expression: "${expr}"\n`).join('')}---\n` +
        `apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: runaway-${i}\nspec:\n  policyName: runaway-${i}\n  validationActions: [Deny]\n`,
    );
  }
  return docs.join('---\n');
}

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
    // The schemas (and the descriptions) are requested only after the first result.
    const early = await page.evaluate(() => {
      const first = performance.getEntriesByName('vap-first-result')[0].startTime;
      return performance.getEntriesByType('resource').filter((e) => e.name.includes('/pkg/schemas/') && e.startTime < first).map((e) => e.name);
    });
    assert.deepEqual(early, [], 'schemas requested before the first result');
    const fetched = await page.evaluate(() => performance.getEntriesByType('resource').filter((e) => e.name.endsWith('.wasm')).length);
    assert.equal(fetched, 1, 'the wasm was fetched more than once');
  });

  await page.waitForFunction(() => document.body.dataset.editors === 'codemirror', null, { timeout: 30_000 });
  /** An editor's text (CodeMirror) / replacing it as a paste would. */
  const getText = (id) => page.evaluate((id) => window.__vapEditors[id].get(), id);
  const setText = (id, text) => page.evaluate(([id, text]) => window.__vapEditors[id].set(text), [id, text]);
  // Enter, once the completion list is settled with `label` selected: CodeMirror ignores Enter
  // while a query (a retry's Ctrl-Space) is pending (the list is disabled) and for 75 ms after
  // the list changes. Settled: the same list, selection and state over three samples 100 ms apart.
  const acceptCompletion = async (label) => {
    const listState = () => page.evaluate(() => {
      const list = document.querySelector('.cm-tooltip-autocomplete');
      if (!list || list.classList.contains('cm-tooltip-autocomplete-disabled')) return null;
      return `${list.querySelector('li[aria-selected] .cm-completionLabel')?.textContent}|${list.textContent}`;
    });
    for (let settled = 0, last = null, i = 0; settled < 3 && i < 100; i++) {
      const now = await listState();
      settled = now !== null && now === last ? settled + 1 : 0;
      last = now;
      await page.waitForTimeout(100);
    }
    assert.ok((await listState())?.startsWith(`${label}|`), `a settled completion list with ${label} selected`);
    await page.keyboard.press('Enter');
  };
  const shot = (name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false });

  await t.test('the editors load after the first result: CodeMirror with line numbers, YAML and CEL highlighting', async () => {
    assert.equal(await page.locator('.cm-editor').count(), 6);
    assert.equal(await page.locator('.editor-manifests .cm-lineNumbers').count(), 1);
    assert.equal(await page.locator('textarea#manifests').isHidden(), true);
    // YAML keys are highlighted; the CEL in an expression field is tokenized (cel.js).
    assert.ok((await page.locator('.editor-manifests .tok-propertyName').count()) > 5);
    const cel = await page.locator('.editor-manifests .cel-token').allTextContents();
    assert.ok(cel.includes('object') && cel.includes('int'), `CEL tokens in the manifests: ${cel.slice(0, 20)}`);
    await shot('editors-light');
  });

  await t.test('editing the object re-evaluates: replicas 4 -> 50 is denied, as kubectl prints it', async () => {
    const object = await getText('object');
    assert.match(object, /replicas: 4\b/);
    await setText('object', object.replace(/replicas: 4\b/, 'replicas: 50'));
    await page.waitForSelector('[data-decision=denied]', { timeout: 10_000 });
    const message = `ValidatingAdmissionPolicy 'replica-limit.example.com' with binding 'replica-limit-deny.example.com' denied request: spec.replicas is 50, the limit is 5`;
    assert.equal(await statusMessage(), `deployments.apps "nginx" is forbidden: ${message}`);
    assert.match(await page.textContent('.decision-code'), /^422 Invalid$/);
    assert.equal(await page.locator('.first-denial').count(), 1);
    // kubectl's rendering of an Invalid status: from its one cause, whose field is empty.
    const kubectl = await page.textContent('[data-testid=kubectl]');
    assert.match(kubectl, /^Warning: /);
    assert.ok(kubectl.endsWith(`The deployments "nginx" is invalid: : ${message}`), kubectl);
  });

  await t.test('a result\'s link selects its expression in the editor', async () => {
    await page.locator('[data-policy="replica-limit.example.com"] .validation button.goto').first().click();
    const sel = await page.evaluate(() => {
      const v = window.__vapEditors.manifests.view;
      const r = v.state.selection.main;
      return { text: v.state.sliceDoc(r.from, r.to), focused: v.hasFocus };
    });
    assert.equal(sel.text, 'object.spec.replicas <= int(params.data.maxReplicas)');
    assert.ok(sel.focused);
  });

  await t.test('CEL scratchpad evaluates against the object (in the worker)', async () => {
    await setText('expression', 'object.spec.replicas * 2');
    await page.waitForFunction(() => document.querySelector('[data-testid=scratch-value]')?.textContent === '100', null, { timeout: 10_000 });
    assert.match(await page.textContent('.scratch-meta'), /type int/);
    assert.ok(await page.evaluate(() => window.__vapWorker !== null), 'the evaluation worker runs');
  });

  const described = () => page.evaluate(() => performance.getEntriesByType('resource').some((e) => e.name.endsWith('.descriptions.json')));

  await t.test('completion offers variables, functions and the object\'s fields', async () => {
    // The schema descriptions are fetched on the first hover or completion, never before.
    assert.equal(await described(), false, 'descriptions were fetched before any hover or completion');
    await setText('expression', '');
    await page.locator('.scratchpad .code-line .cm-content').click();
    await page.keyboard.type('obj');
    await page.waitForSelector('.cm-tooltip-autocomplete', { timeout: 5_000 });
    let labels = await page.locator('.cm-tooltip-autocomplete .cm-completionLabel').allTextContents();
    // The package's completeExpression answers: the variables whose names start with the word.
    assert.ok(labels.includes('object') && !labels.includes('oldObject'), `variables: ${labels}`);
    // Accepting is the manifests' and the scratchpad schema test's: here the text is set (an
    // Enter racing the package's answer to the last keystroke may find the list disabled).
    await page.keyboard.press('Escape');
    await setText('expression', 'object');
    await page.evaluate(() => window.__vapEditors.expression.select(6, 6));
    await page.keyboard.type('.sp');
    await page.waitForSelector('.cm-tooltip-autocomplete', { timeout: 5_000 });
    // The list of a moment before (`object.s`) may still be open: wait for the one of `.sp`.
    for (let i = 0; i < 50; i++) {
      labels = await page.locator('.cm-tooltip-autocomplete .cm-completionLabel').allTextContents();
      if (labels.includes('spec')) break;
      await page.waitForTimeout(100);
    }
    assert.ok(labels.includes('spec'), `fields of the Object editor's YAML: ${labels} in ${JSON.stringify(await getText('expression'))}`);
    await page.keyboard.press('Escape');
    await setText('expression', '');
    await page.keyboard.type('si');
    await page.waitForSelector('.cm-tooltip-autocomplete', { timeout: 5_000 });
    labels = await page.locator('.cm-tooltip-autocomplete .cm-completionLabel').allTextContents();
    assert.ok(labels.includes('size'), `functions: ${labels}`);
    await shot('completion');
    await page.keyboard.press('Escape');
    await setText('expression', 'object.spec.replicas * 2');
    assert.equal(await described(), true, 'the descriptions were fetched for the completion');
  });

  await t.test('completion in a policy expression offers the Deployment\'s schema fields with their type and description (the package\'s complete)', async () => {
    // The schemas load after the first result and the page evaluates again: then the
    // policy's type checking is in the results.
    await page.waitForSelector('[data-policy="replica-limit.example.com"] [data-testid=typechecking]', { timeout: 15_000 });
    assert.match(await page.textContent('[data-policy="replica-limit.example.com"] [data-testid=typechecking]'), /expressionWarnings \(0\)none — checked against apps\/v1, Kind=Deployment/);
    const text = await getText('manifests');
    const at = text.indexOf('object.spec.replicas <= int(') + 'object.spec.'.length;
    // Replace `replicas` by `rep`, typed: the list is the package's, typed from the Deployment schema.
    await page.evaluate(([from, to]) => window.__vapEditors.manifests.select(from, to), [at, at + 'replicas'.length]);
    await page.keyboard.type('rep');
    let rows = [];
    for (let i = 0; i < 100; i++) {
      rows = await page.evaluate(() => [...document.querySelectorAll('.cm-tooltip-autocomplete li')].map((li) => [li.querySelector('.cm-completionLabel')?.textContent, li.querySelector('.cm-completionDetail')?.textContent ?? '']));
      if (rows.some(([l, d]) => l === 'replicas' && d === 'int')) break;
      await page.waitForTimeout(100);
    }
    assert.ok(rows.some(([l, d]) => l === 'replicas' && d === 'int'), `replicas : int from the schema, got ${JSON.stringify(rows)}`);
    const info = page.locator('.cm-tooltip-autocomplete .cm-completionInfo');
    await info.waitFor({ timeout: 5_000 });
    assert.match(await info.textContent(), /^Number of desired pods\./);
    await shot('completion-schema');
    await acceptCompletion('replicas');
    assert.ok((await getText('manifests')).includes('- expression: "object.spec.replicas <= int(params.data.maxReplicas)"'), 'accepting replaces the word');
    // After `object.spec.template.spec.`, from an explicit request (Ctrl-Space): the Pod spec's fields.
    const at2 = (await getText('manifests')).indexOf('object.spec.replicas <= int(') + 'object.spec.'.length;
    await page.evaluate(([from, to]) => window.__vapEditors.manifests.select(from, to), [at2, at2 + 'replicas'.length]);
    await page.keyboard.type('template.spec.');
    for (let i = 0; i < 100; i++) {
      rows = await page.evaluate(() => [...document.querySelectorAll('.cm-tooltip-autocomplete li')].map((li) => [li.querySelector('.cm-completionLabel')?.textContent, li.querySelector('.cm-completionDetail')?.textContent ?? '']));
      if (rows.some(([l]) => l === 'containers')) break;
      if (i % 20 === 19) await page.keyboard.press('Control+Space');
      await page.waitForTimeout(100);
    }
    assert.ok(rows.some(([l, d]) => l === 'containers' && /^list\(/.test(d)), `Pod spec fields: ${JSON.stringify(rows.slice(0, 12))}`);
    assert.ok(rows.some(([l]) => l === 'hostNetwork'), 'a field the object does not set');
    await page.keyboard.press('Escape');
    await setText('manifests', text);
  });

  await t.test('hover over a field in an expression (pointer or Ctrl-Shift-Space) shows its checked type and schema description', async () => {
    const text = await getText('manifests');
    const at = text.indexOf('object.spec.replicas <= int(') + 'object.spec.rep'.length;
    await page.mouse.move(0, 0);
    await page.evaluate((pos) => window.__vapEditors.manifests.select(pos, pos), at);
    const box = await page.evaluate((pos) => {
      const c = window.__vapEditors.manifests.view.coordsAtPos(pos);
      return c && { x: c.left, y: (c.top + c.bottom) / 2 };
    }, at);
    assert.ok(box, 'the expression is on screen');
    const tip = page.locator('.cm-cel-hover');
    for (let i = 0; i < 3 && !(await tip.count()); i++) {
      await page.mouse.move(box.x + 1, box.y);
      await page.mouse.move(box.x + 3, box.y);
      await tip.first().waitFor({ timeout: 5_000 }).catch(() => {});
    }
    assert.equal(await tip.locator('code').textContent(), 'int');
    assert.match(await tip.locator('.cm-cel-doc').textContent(), /^Number of desired pods\. This is a pointer to distinguish between explicit zero and not specified\. Defaults to 1\./);
    await shot('hover');
    await page.mouse.move(0, 0);
    await tip.first().waitFor({ state: 'detached', timeout: 5_000 });
    // From the keyboard: Ctrl-Shift-Space at the cursor, Escape closes it.
    await page.evaluate((pos) => window.__vapEditors.manifests.select(pos, pos), at);
    await page.keyboard.press('Control+Shift+Space');
    await tip.first().waitFor({ timeout: 5_000 });
    assert.equal(await tip.locator('code').textContent(), 'int');
    await page.keyboard.press('Escape');
    await tip.first().waitFor({ state: 'detached', timeout: 5_000 });
  });

  await t.test('the scratchpad\'s completion and hover are the package\'s, typed by the Object editor\'s apiVersion/kind', async () => {
    const rowsNow = () => page.evaluate(() => [...document.querySelectorAll('.cm-tooltip-autocomplete li')].map((li) => [li.querySelector('.cm-completionLabel')?.textContent, li.querySelector('.cm-completionDetail')?.textContent ?? '']));
    // A field of the Deployment schema the object does not set: only the package (objectKind apps/v1/Deployment) knows it.
    assert.ok(!(await getText('object')).includes('progressDeadlineSeconds'));
    await setText('expression', 'object.spec.');
    await page.evaluate(() => window.__vapEditors.expression.select(12, 12));
    await page.keyboard.type('prog');
    let rows = [];
    for (let i = 0; i < 100; i++) {
      rows = await rowsNow();
      if (rows.some(([l, d]) => l === 'progressDeadlineSeconds' && d === 'int')) break;
      if (i % 20 === 19) await page.keyboard.press('Control+Space');
      await page.waitForTimeout(100);
    }
    assert.ok(rows.some(([l, d]) => l === 'progressDeadlineSeconds' && d === 'int'), `progressDeadlineSeconds : int from the schema, got ${JSON.stringify(rows)}`);
    const info = page.locator('.cm-tooltip-autocomplete .cm-completionInfo');
    await info.waitFor({ timeout: 5_000 });
    assert.match(await info.textContent(), /^The maximum time in seconds for a deployment to make progress/);
    await shot('scratch-completion');
    await acceptCompletion('progressDeadlineSeconds');
    assert.equal(await getText('expression'), 'object.spec.progressDeadlineSeconds');
    // Hover (Ctrl-Shift-Space at the cursor): the checked type and the field's description.
    await setText('expression', 'object.spec.replicas * 2');
    await page.evaluate(() => window.__vapEditors.expression.select(15, 15));
    await page.keyboard.press('Control+Shift+Space');
    const tip = page.locator('.cm-cel-hover');
    await tip.first().waitFor({ timeout: 5_000 });
    assert.equal(await tip.locator('code').textContent(), 'int');
    assert.match(await tip.locator('.cm-cel-doc').textContent(), /^Number of desired pods\./);
    await page.keyboard.press('Escape');
    await tip.first().waitFor({ state: 'detached', timeout: 5_000 });
    // The whole expression: its type.
    await page.evaluate(() => window.__vapEditors.expression.select(21, 21));
    await page.keyboard.press('Control+Shift+Space');
    await tip.first().waitFor({ timeout: 5_000 });
    assert.equal(await tip.locator('code').textContent(), 'int');
    await page.keyboard.press('Escape');
  });

  await t.test('objectChanges: a Deployment without replicas is stored with replicas 1 (defaulted), shown in the results', async () => {
    const object = await getText('object');
    await setText('object', object.replace(/\n\s*replicas: \d+/, ''));
    await page.waitForFunction(() => document.querySelector('[data-testid=object-changes] li[data-path="spec.replicas"]') !== null, null, { timeout: 10_000 });
    const changes = page.locator('[data-testid=object-changes]');
    assert.equal(await changes.getAttribute('open'), null, 'collapsed at first');
    await changes.locator('summary').focus();
    await page.keyboard.press('Enter');
    assert.equal(await changes.getAttribute('open'), '');
    assert.match(await changes.locator('summary').textContent(), /^Object changes \(\d+\)/);
    const line = changes.locator('li[data-path="spec.replicas"]');
    assert.equal(await line.textContent(), 'spec.replicas (absent) → 1 defaulted');
    assert.equal(await line.evaluate((li) => li.closest('.subsection').querySelector('h5').textContent), 'object');
    // The policies read the stored form: 1 replica passes both limits.
    await page.waitForSelector('[data-decision=allowed]', { timeout: 10_000 });
    await shot('object-changes');
    await setText('object', object);
    await page.waitForSelector('[data-decision=denied]', { timeout: 10_000 });
    // The URL keeps the restored object (saved 300 ms after the edit) before the next test reloads.
    const saved = () => page.evaluate(async () => (await (await import('/www/state.js')).decodeState(location.hash))?.object ?? '');
    for (let i = 0; i < 50 && (await saved()) !== object; i++) await page.waitForTimeout(100);
    assert.equal(await saved(), object);
  });

  await t.test('state survives a reload through the URL hash', async () => {
    await page.waitForFunction(() => location.hash.startsWith('#s='), null, { timeout: 5_000 });
    await page.reload();
    await page.waitForSelector('[data-decision]', { timeout: 30_000 });
    assert.match(await page.inputValue('#object'), /replicas: 50\b/);
    assert.equal(await decision(), 'denied');
  });

  await t.test('a link made before the editors changed (state format of 2026-11) still opens', async () => {
    await page.goto(`${base}/www/${OLD_LINK}`);
    await page.reload();
    await page.waitForSelector('[data-decision]', { timeout: 30_000 });
    assert.equal(await page.inputValue('#version'), '1.33');
    assert.equal(await decision(), 'denied');
    assert.match(await statusMessage(), /old links still open$/);
    await page.waitForFunction(() => document.querySelector('[data-testid=scratch-value]')?.textContent === '2', null, { timeout: 10_000 });
  });

  await t.test('a garbage hash falls back to the preloaded example', async () => {
    await page.goto(`${base}/www/#s=zthis-is-not-a-state`);
    await page.reload();
    await page.waitForSelector('[data-decision]', { timeout: 30_000 });
    assert.match(await page.inputValue('#object'), /replicas: 4\b/);
    await page.waitForFunction(() => document.body.dataset.editors === 'codemirror', null, { timeout: 30_000 });
  });

  await t.test('user text is rendered as text, never as HTML: the payload in every field and the results', async () => {
    const payload = '<img src=x onerror="window.__xss=1">';
    const manifests = await getText('manifests');
    const object = await getText('object');
    const withPayload = object.replace(/replicas: \d+/, 'replicas: 50').replace('app: nginx', `app: '${payload}'`);
    await setText('object', withPayload);
    await setText('oldObject', `# ${payload}\n${withPayload}`);
    await setText('request', `operation: UPDATE\nuserInfo:\n  username: '${payload}'\n`);
    await setText('scratchParams', `x: '${payload}'\n`);
    await setText('expression', `'${payload}' + params.x`);
    await setText('manifests', manifests.replace(/^(\s*)messageExpression: .*$/m, `$1message: '${payload}'`));
    await page.waitForFunction((p) => document.querySelector('[data-testid=status-message]')?.textContent.includes(p), payload, { timeout: 10_000 });
    // The scratchpad prints the string value JSON-quoted (its inner quotes escaped).
    await page.waitForFunction(() => document.querySelector('[data-testid=scratch-value]')?.textContent.includes('<img src=x onerror='), null, { timeout: 10_000 });
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.ok((await page.textContent('.cm-content >> nth=0')).includes(payload) || (await page.textContent('body')).includes(payload));
  });

  await t.test('type-error example: a squiggle on the expression, its message on hover, the list jumps to it', async () => {
    await page.selectOption('#example', 'type-error');
    await page.waitForFunction(() => document.querySelector('.diagnostic.clickable') !== null, null, { timeout: 10_000 });
    assert.equal(await decision(), 'denied');
    const squiggle = page.locator('.editor-manifests .cm-lintRange-error', { hasText: "size(object.metadata.name) <= '30'" });
    await squiggle.first().waitFor({ timeout: 10_000 });
    // The squiggle's line is the validation's expression line.
    const line = await squiggle.first().evaluate((el) => el.closest('.cm-line').textContent);
    assert.match(line, /^\s*- expression: "size\(object\.metadata\.name\) <= '30'"/);
    await squiggle.first().hover();
    const tip = page.locator('.cm-tooltip-lint');
    await tip.waitFor({ timeout: 5_000 });
    assert.match(await tip.textContent(), /found no matching overload for '_<=_' applied to '\(int, string\)'/);
    await shot('type-error-squiggle');
    const overload = page.locator('.diagnostic.severity-error', { hasText: "found no matching overload for '_<=_' applied to '(int, string)'" }).first();
    assert.match(await overload.locator('.diagnostic-line').textContent(), /^ERROR .*spec\.validations\[0\]\.expression: found no matching overload/);
    await overload.click();
    const sel = await page.evaluate(() => {
      const v = window.__vapEditors.manifests.view;
      const r = v.state.selection.main;
      return { focused: v.hasFocus, text: v.state.sliceDoc(r.from, r.to), line: v.state.doc.lineAt(r.from).text };
    });
    assert.ok(sel.focused, 'the manifests editor has focus');
    assert.ok(sel.line.includes("size(object.metadata.name) <= '30'"), `selection on the expression's line, got: ${sel.line}`);
    assert.ok("size(object.metadata.name) <= '30'".includes(sel.text) && sel.text.length > 0, `selection inside the expression, got: ${sel.text}`);
  });

  await t.test('type checking in the results: the ↗ of a warning selects its expression in the Manifests editor', async () => {
    const selection = () => page.evaluate(() => {
      const v = window.__vapEditors.manifests.view;
      const r = v.state.selection.main;
      return { focused: v.hasFocus, text: v.state.sliceDoc(r.from, r.to) };
    });
    const button = page.locator('[data-policy="name-length.example.com"] [data-testid=typechecking] button[data-goto-field="spec.validations[0].expression"]');
    await button.waitFor({ timeout: 15_000 });
    await page.evaluate(() => window.__vapEditors.manifests.select(0, 0));
    await button.click();
    let sel = await selection();
    assert.ok(sel.focused);
    assert.equal(sel.text, "size(object.metadata.name) <= '30'");
    // A warning whose diagnostic marks a sub-expression (size() of an int): the whole expression is selected.
    const text = await getText('manifests');
    const expr = 'object.metadata.name.size() + object.metadata.generation.size() <= 30';
    await setText('manifests', text.replace("size(object.metadata.name) <= '30'", expr));
    await page.waitForFunction(() => /applied to 'int\.\(\)'/.test(document.querySelector('[data-policy="name-length.example.com"] [data-testid=typechecking]')?.textContent ?? ''), null, { timeout: 15_000 });
    const located = await page.evaluate(() => window.__vapLastResult.diagnostics.filter((d) => d.code === 'cel-typecheck').map((d) => [d.start, d.end]));
    const manifests = await getText('manifests');
    assert.ok(located.some(([s, e]) => manifests.slice(s, e) === 'object.metadata.generation.size()'), `the diagnostic marks the sub-expression: ${JSON.stringify(located)}`);
    await page.evaluate(() => window.__vapEditors.manifests.select(0, 0));
    await button.click();
    sel = await selection();
    assert.equal(sel.text, expr);
    await shot('typecheck-goto');
    await setText('manifests', text);
  });

  await t.test('a published example: its source link and licence; the passes/fails buttons load its two objects', async () => {
    const ex = index.examples.find((e) => e.name === 'gatekeeper-privileged');
    await page.selectOption('#example', ex.name);
    await page.waitForFunction((m) => document.querySelector('[data-testid=status-message]')?.textContent === m, ex.expect.message, { timeout: 10_000 });
    assert.equal(await page.getAttribute('#example-source', 'href'), ex.source);
    assert.equal(await page.textContent('#example-license'), `(${ex.license})`);
    assert.equal(await page.getAttribute('#load-failing', 'aria-pressed'), 'true');
    await shot('published-example');
    // The manifests stay as they are (edits kept); only the object/old object/request change.
    const manifests = await getText('manifests');
    await page.click('#load-passing');
    await page.waitForSelector('[data-decision=allowed]', { timeout: 10_000 });
    assert.match(await getText('object'), /safeimages\.com\/nginx/);
    assert.equal(await getText('manifests'), manifests);
    assert.equal(await page.getAttribute('#load-passing', 'aria-pressed'), 'true');
    await page.click('#load-failing');
    await page.waitForSelector('[data-decision=denied]', { timeout: 10_000 });
    assert.equal(await statusMessage(), ex.expect.message);
    // An example of this project's own has no source link.
    await page.selectOption('#example', 'required-labels');
    await page.waitForFunction(() => document.querySelector('#example-source').hidden, null, { timeout: 10_000 });
    assert.equal(await page.isVisible('#load-passing'), true);
    // "(custom)" keeps the text and drops the example's buttons.
    await page.selectOption('#example', '');
    assert.equal(await page.isVisible('#example-cases'), false);
  });

  await t.test('a runaway evaluation is stopped at the time limit, the worker replaced, the page says so', async () => {
    const before = await getText('manifests');
    await setText('manifests', runawayManifests(24));
    await setText('object', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: runaway\n');
    await page.waitForSelector('body[data-state=timeout]', { timeout: 30_000 });
    assert.match(await page.textContent('#notice'), /The evaluation was stopped after 3\.0 s[\s\S]*worker was replaced/);
    assert.equal(await page.evaluate(() => window.__vapWorker.replaced), 1);
    // The runaway input is in the link by now (saved 300 ms after an edit).
    const runawayLink = await page.evaluate(() => location.hash);
    // The page stayed responsive, and the new worker evaluates the next input.
    await setText('manifests', before);
    await page.waitForSelector('body[data-state=ready] [data-decision]', { timeout: 30_000 });
    // ... and the link holds the restored input again before the next test reloads the page.
    await page.waitForFunction((h) => location.hash !== h, runawayLink, { timeout: 10_000 });
  });

  await t.test('dark mode follows the system and the toggle', async () => {
    // Styles settle a frame after a media or attribute change, and later under load: read each
    // colour once it has the expected brightness (or, failing that, after 5 s, to report it).
    const settled = async (selector, wanted) => {
      const read = () => page.evaluate((sel) => getComputedStyle(document.querySelector(sel)).backgroundColor, selector);
      let value = await read();
      for (let i = 0; i < 50 && !wanted(luminance(value)); i++) {
        await page.waitForTimeout(100);
        value = await read();
      }
      return value;
    };
    const isDark = (l) => l < 0.1;
    const isLight = (l) => l > 0.8;
    await page.emulateMedia({ colorScheme: 'light' });
    const light = await settled('body', isLight);
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await settled('body', isDark);
    assert.notEqual(dark, light);
    assert.ok(isDark(luminance(dark)) && isLight(luminance(light)), `${dark} vs ${light}`);
    const editorBg = await settled('.cm-editor', (l) => l < 0.15);
    assert.ok(luminance(editorBg) < 0.15, `editor background in dark mode: ${editorBg}`);
    await shot('dark');
    await page.click('#theme');
    assert.equal(await page.getAttribute('html', 'data-theme'), 'light');
    const toggled = await settled('body', isLight);
    assert.ok(isLight(luminance(toggled)), `after the toggle: ${toggled}`);
    await page.click('#theme');
    assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
    await page.reload();
    await page.waitForSelector('[data-decision]', { timeout: 30_000 });
    const reloaded = await settled('body', isDark);
    assert.ok(isDark(luminance(reloaded)), `the choice survives a reload: ${reloaded}`);
    await page.evaluate(() => localStorage.removeItem('vap-theme'));
    await page.emulateMedia({ colorScheme: 'light' });
  });

  await t.test('accessibility: axe-core finds no serious or critical violations (light and dark)', async () => {
    for (const scheme of ['light', 'dark']) {
      await page.goto(`${base}/www/`);
      await page.emulateMedia({ colorScheme: scheme });
      await page.waitForFunction(() => document.body.dataset.editors === 'codemirror', null, { timeout: 30_000 });
      // The results in full: type checking (after the schemas), the object changes opened.
      await page.waitForSelector('[data-testid=typechecking]', { timeout: 15_000 });
      await page.click('[data-testid=object-changes] > summary');
      await page.addScriptTag({ path: AXE });
      const violations = await page.evaluate(async () => (await window.axe.run(document)).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })));
      const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      assert.deepEqual(serious, [], `${scheme}: ${JSON.stringify(serious, null, 1)}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  await t.test('a phone-sized screen: one column, no horizontal scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/www/`);
    await page.waitForFunction(() => document.body.dataset.editors === 'codemirror', null, { timeout: 30_000 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `horizontal overflow ${overflow}px`);
    // The editors stack above the results, each its own box: none collapsed, none drawn over
    // another or over the results (the one-column grid once gave the editors' row no height).
    const boxes = await page.evaluate(() =>
      ['.editors', ...[...document.querySelectorAll('.editors > .editor')].map((_, i) => `.editors > .editor:nth-child(${i + 1})`), '.output'].map((sel) => {
        const r = document.querySelector(sel).getBoundingClientRect();
        return { sel, top: r.top, bottom: r.bottom, height: r.height };
      }),
    );
    const [editorsBox, ...rest] = boxes;
    const outputBox = rest.pop();
    assert.ok(rest.length >= 4, `editors: ${JSON.stringify(rest)}`);
    for (const [i, b] of rest.entries()) {
      assert.ok(b.height >= 90, `${b.sel} is ${b.height}px high`);
      if (i > 0) assert.ok(b.top >= rest[i - 1].bottom, `${b.sel} overlaps the editor above it: ${JSON.stringify(boxes)}`);
    }
    assert.ok(editorsBox.bottom >= rest.at(-1).bottom, `the editors overflow their section: ${JSON.stringify(boxes)}`);
    assert.ok(outputBox.top >= editorsBox.bottom, `the results overlap the editors: ${JSON.stringify(boxes)}`);
    await shot('phone');
    // The verdict chip: with the decision banner below the screen, the chip at its bottom says
    // the banner's word; a tap brings the banner up and the chip goes; wide, no chip.
    await page.waitForFunction(() => !document.getElementById('verdict-chip').hidden, null, { timeout: 5_000 });
    const chip = await page.evaluate(() => {
      const c = document.getElementById('verdict-chip').getBoundingClientRect();
      return { text: document.getElementById('verdict-chip').textContent, word: document.querySelector('.decision-word').textContent, bottom: c.bottom, height: innerHeight };
    });
    assert.ok(chip.text.startsWith(chip.word), `chip ${JSON.stringify(chip)}`);
    assert.ok(chip.bottom <= chip.height && chip.bottom > chip.height - 80, `chip not at the screen's bottom: ${JSON.stringify(chip)}`);
    await page.click('#verdict-chip');
    // (The scroll is smooth; a later result may replace the banner, so its place is what counts.)
    await page.waitForFunction(() => {
      const top = document.querySelector('.decision').getBoundingClientRect().top;
      return document.getElementById('verdict-chip').hidden && top >= -1 && top < 200;
    }, null, { timeout: 5_000 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForFunction(() => !document.getElementById('verdict-chip').hidden, null, { timeout: 5_000 });
    // Two narrow columns: the audit annotations' long key (validation_failure's) wraps in its
    // column, its value keeps most of the width (it was squeezed to a word a line).
    await page.setViewportSize({ width: 1024, height: 768 });
    const widths = await page.evaluate(() => {
      const dl = document.querySelector('dl.annotations');
      return dl && { dl: dl.getBoundingClientRect().width, dd: Math.min(...[...dl.querySelectorAll('dd')].map((d) => d.getBoundingClientRect().width)) };
    });
    assert.ok(widths && widths.dd >= 0.55 * widths.dl, `audit annotation values squeezed: ${JSON.stringify(widths)}`);
    await page.setViewportSize({ width: 1280, height: 800 });
    assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('verdict-chip')).display), 'none');
  });

  await t.test('opening a kubectl get -o yaml List puts its items in the Manifests editor', async () => {
    const list = 'apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: a\n- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRole\n  metadata:\n    name: r\nkind: List\nmetadata:\n  resourceVersion: ""\n';
    await page.setInputFiles('#file-input', { name: 'list.yaml', mimeType: 'text/yaml', buffer: Buffer.from(list) });
    await page.waitForFunction(() => window.__vapEditors.manifests.get().includes('kind: ClusterRole'), null, { timeout: 5_000 });
    assert.equal(await getText('manifests'), 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\n');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    const json = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
    assert.equal(typeof json.response.allowed, 'boolean');
  });

  /** Opens the playground served from a copy of the repository made by `setup(dir)`. */
  async function withCopy(setup, fn) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-eval-copy-'));
    fs.cpSync(path.join(ROOT, 'www'), path.join(dir, 'www'), { recursive: true, filter: (src) => !src.includes(`${path.sep}node_modules`) });
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

// The static deploy (scripts/build-site.mjs): served from a sub-path, it runs, and once loaded it
// runs offline (sw.js).
test('the static site works from a sub-path and offline once loaded', async (t) => {
  if (!fs.existsSync(PKG)) {
    t.skip('pkg/vap_eval.js does not exist yet: build it with bash scripts/build-pkg.sh');
    return;
  }
  const { buildSite } = await import('../../scripts/build-site.mjs');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-eval-site-'));
  buildSite(path.join(dir, 'some', 'sub', 'path'));
  const { chromium } = await import('playwright-core');
  const server = await serveStatic({ root: dir });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-eval-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS });
  t.after(async () => {
    await context.close();
    await server.close();
    fs.rmSync(profile, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  // The site's root redirects to www/.
  await page.goto(`http://127.0.0.1:${server.port}/some/sub/path/`);
  await page.waitForURL(/\/some\/sub\/path\/www\/$/, { timeout: 10_000 });
  await page.waitForFunction(() => document.body.dataset.editors === 'codemirror', null, { timeout: 30_000 });
  assert.equal(await page.getAttribute('[data-decision]', 'data-decision'), 'allowed');
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  // The schema descriptions ship, are not precached (≈ 0.9 MB a version), and are kept once asked for.
  const sw = fs.readFileSync(path.join(dir, 'some', 'sub', 'path', 'www', 'sw.js'), 'utf8');
  assert.ok(sw.includes('"../pkg/schemas/1.35.json"') && !/"[^"]*\.descriptions\.json"/.test(sw), 'precache list');
  const descriptions = () => page.evaluate(() => fetch('../pkg/schemas/1.35.descriptions.json').then((r) => r.ok && r.json()).then((j) => typeof j === 'object' && j !== null, () => false));
  assert.equal(await descriptions(), true);
  await context.setOffline(true);
  assert.equal(await descriptions(), true, 'offline: from the service worker\'s cache');
  await page.reload();
  await page.waitForFunction(() => document.body.dataset.editors === 'codemirror', null, { timeout: 30_000 });
  assert.equal(await page.getAttribute('[data-decision]', 'data-decision'), 'allowed');
  // Another example (a fetched file, not inlined) offline too.
  await page.selectOption('#example', 'type-error');
  await page.waitForSelector('[data-decision=denied]', { timeout: 10_000 });
  await context.setOffline(false);
  assert.deepEqual(problems, []);
});
