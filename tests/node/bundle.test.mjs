// node --test tests/node/bundle.test.mjs — scripts/bundle-www.mjs, which makes www/app.js (the
// playground's own modules as one) and what scripts/serve.mjs serves as /www/app.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundle } from '../../scripts/bundle-www.mjs';
import { serveStatic } from '../../scripts/serve.mjs';

const WWW = fileURLToPath(new URL('../../www/', import.meta.url));

/** A directory of module files, removed after `fn`. */
async function withModules(files, fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-bundle-'));
  try {
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    return await fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('the playground bundles: each www/ module once, the package still imported', () => {
  const text = bundle(path.join(WWW, 'main.js'));
  for (const m of ['state.js', 'diagnostics.js', 'render.js', 'main.js']) {
    assert.equal(text.split(`// ---- www/${m}\n`).length, 2, `${m} once`);
  }
  assert.match(text, /^import \* as vapEval from '\.\.\/pkg\/vap_eval\.js';$/m);
  assert.doesNotMatch(text, /^\s*(import\s*\{|export\s)/m, 'no www/ import or export left');
  // Dependencies before their importers.
  assert.ok(text.indexOf('// ---- www/diagnostics.js') < text.indexOf('// ---- www/render.js'));
  assert.ok(text.indexOf('// ---- www/render.js') < text.indexOf('// ---- www/main.js'));
});

test('a bundle runs as its modules did: exports, aliases, shared modules, outside imports', async () => {
  await withModules(
    {
      'a.js': "export const base = 40;\nexport function add(x) {\n  return x + base;\n}\nconst hidden = 'a';\n",
      'b.js': "import { add as plus } from './a.js';\nexport async function twice(x) {\n  return plus(plus(x) - 40);\n}\nconst hidden = 'b';\n",
      'main.js':
        "import { base } from './a.js';\nimport { twice } from './b.js';\nimport * as p from 'node:path';\nconst hidden = 'main';\nglobalThis.__bundleResult = twice(1).then((v) => [v, base, p.basename('/x/y.js'), hidden]);\n",
    },
    async (dir) => {
      // The modules themselves (package.json: ES modules) ...
      fs.writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}');
      await import(pathToFileURL(path.join(dir, 'main.js')).href);
      const direct = await globalThis.__bundleResult;
      // ... and their bundle.
      const text = bundle(path.join(dir, 'main.js'));
      assert.equal(text.split('// ---- www/a.js').length, 2, 'a.js once though imported twice');
      fs.writeFileSync(path.join(dir, 'app.js'), text);
      await import(pathToFileURL(path.join(dir, 'app.js')).href);
      const bundled = await globalThis.__bundleResult;
      assert.deepEqual(direct, [41, 40, 'y.js', 'main']);
      assert.deepEqual(bundled, direct);
    },
  );
});

test('module syntax the bundler does not handle is an error, not a wrong bundle', async () => {
  const cases = [
    [{ 'main.js': "import x from './a.js';\n", 'a.js': 'export const a = 1;\n' }, /unsupported import/],
    [{ 'main.js': "import { a } from './a.js';\n", 'a.js': 'export default 1;\n' }, /unsupported export/],
    [{ 'main.js': "import { a } from './a.js';\n", 'a.js': 'export let a = 1;\n' }, /unsupported export/],
    [{ 'main.js': "import { b } from './a.js';\n", 'a.js': 'export const a = 1;\n' }, /does not export b/],
    [{ 'main.js': "import { a } from './a.js';\n", 'a.js': "import { m } from './main.js';\nexport const a = 1;\n" }, /import cycle/],
    [{ 'main.js': "const m = import('./a.js');\n", 'a.js': '' }, /dynamic import/],
    [{ 'main.js': "import * as a from './a.js';\n", 'a.js': 'export const a = 1;\n' }, /namespace import of a www\/ module/],
  ];
  for (const [files, error] of cases) {
    await withModules(files, (dir) => assert.throws(() => bundle(path.join(dir, 'main.js')), error, JSON.stringify(files)));
  }
});

test('serve.mjs makes /www/app.js from the current sources', async () => {
  await withModules({}, async (dir) => {
    fs.mkdirSync(path.join(dir, 'www'));
    fs.writeFileSync(path.join(dir, 'www', 'main.js'), "import { v } from './v.js';\nconsole.log(v);\n");
    fs.writeFileSync(path.join(dir, 'www', 'v.js'), 'export const v = 1;\n');
    const server = await serveStatic({ root: dir });
    try {
      const get = () => fetch(`${server.url}www/app.js`);
      let res = await get();
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type'), /^text\/javascript/);
      assert.match(await res.text(), /export const v|const v = 1;/);
      fs.writeFileSync(path.join(dir, 'www', 'v.js'), 'export const v = 2;\n');
      assert.match(await (await get()).text(), /const v = 2;/, 'an edit shows on the next request');
      fs.writeFileSync(path.join(dir, 'www', 'v.js'), 'export default 3;\n');
      res = await get();
      assert.equal(res.status, 500);
      assert.match(await res.text(), /unsupported export/);
    } finally {
      await server.close();
    }
  });
});
