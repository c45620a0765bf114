// Wires the page: editors <-> state (URL hash), the wasm package, and the rendered results.
// Logic lives in state.js, render.js and diagnostics.js (unit-tested in tests/node/www.test.mjs).

import { decodeState, encodeState, emptyState, evaluateArgs, expressionArgs, chooseVersion, compareVersions, debounce } from './state.js';
import { renderResult, renderExpressionResult, renderNotice, toDom, toPlain } from './render.js';
import { locateDiagnostic, positionAt } from './diagnostics.js';
// Imported statically: the page's code (app.js, render-blocking) runs only once the package's glue
// is loaded, so nothing is laid out or painted before the engine can start. A dynamic import resolved in a
// later task, which Chromium sometimes ran only after the first layout and frame (40-110 ms
// later in 2 of 15 loads). When the package is missing, index.html's onerror shows the notice.
import * as vapEval from '../pkg/vap_eval.js';

const EDITOR_IDS = ['manifests', 'object', 'oldObject', 'request', 'expression', 'scratchParams'];
const $ = (id) => document.getElementById(id);
const editors = Object.fromEntries(EDITOR_IDS.map((id) => [id, $(id)]));

let pkg = null;
let versions = [];
let examples = [];
let state = emptyState();
let firstResult = true;
const inlined = inlineExamples();

function show(container, tree) {
  container.replaceChildren(...(tree ? [toDom(tree, document)] : []));
}

function texts() {
  return Object.fromEntries(EDITOR_IDS.map((id) => [id, editors[id].value]));
}

function readEditors() {
  for (const id of EDITOR_IDS) state[id] = editors[id].value;
  state.version = $('version').value;
  state.example = $('example').value;
}

function writeEditors() {
  for (const id of EDITOR_IDS) {
    editors[id].value = state[id];
    updateGutter(editors[id], false);
  }
  // Reading scrollTop forces a layout: do it once, with the next frame's, and not at all while
  // the page starts (nothing is scrolled yet, and the first result should not wait for it).
  if (!firstResult) {
    requestAnimationFrame(() => {
      for (const id of EDITOR_IDS) syncGutterScroll(editors[id]);
    });
  }
  if (versions.length) $('version').value = chooseVersion(state.version, versions);
  $('example').value = examples.some((e) => e.name === state.example) ? state.example : '';
}

// --- line-number gutters -------------------------------------------------------------------

function gutterOf(textarea) {
  const gutter = textarea.previousElementSibling;
  return gutter?.classList.contains('gutter') ? gutter : null;
}

function updateGutter(textarea, syncScroll = true) {
  const gutter = gutterOf(textarea);
  if (!gutter) return;
  const lines = textarea.value.split('\n').length;
  if (gutter.dataset.lines !== String(lines)) {
    gutter.textContent = Array.from({ length: lines }, (_, i) => i + 1).join('\n') + '\n';
    gutter.dataset.lines = String(lines);
  }
  if (syncScroll) syncGutterScroll(textarea);
}

function syncGutterScroll(textarea) {
  const gutter = gutterOf(textarea);
  if (gutter) gutter.scrollTop = textarea.scrollTop;
}

// --- evaluation ----------------------------------------------------------------------------

function evaluateNow() {
  if (!pkg) return;
  const t0 = performance.now();
  let result;
  try {
    result = toPlain(pkg.evaluate(...evaluateArgs(state, versions)));
  } catch (e) {
    show($('notice'), renderNotice('error', 'The engine rejected the input', String(e?.message ?? e)));
    $('result').replaceChildren();
    document.body.dataset.state = 'ready';
    markFirstResult();
    return;
  }
  const ms = performance.now() - t0;
  if (firstResult) performance.mark('vap-first-evaluated');
  const current = texts();
  const { tree, diagnostics } = renderResult(result, (d) => locateDiagnostic(d, current, 'evaluate'));
  show($('notice'), null);
  show($('result'), tree);
  $('result').dataset.evalMs = ms.toFixed(2);
  wireDiagnostics($('result'), diagnostics, 'evaluate');
  document.body.dataset.state = 'ready';
  markFirstResult();
  window.__vapLastResult = result;
}

// Cold start as the page test reads it: navigation start -> first evaluation rendered.
function markFirstResult() {
  if (!firstResult) return;
  firstResult = false;
  performance.mark('vap-first-result');
  window.__vapFirstResultMs = performance.now();
  // ... and once the frame that shows it has been laid out and painted.
  requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      performance.mark('vap-first-result-painted');
      window.__vapFirstPaintedMs = performance.now();
    };
    channel.port2.postMessage(null);
  });
}

function evaluateExpressionNow() {
  if (!pkg) return;
  if (state.expression.trim() === '') {
    $('scratch-result').replaceChildren();
    return;
  }
  let r;
  try {
    r = toPlain(pkg.evaluateExpression(...expressionArgs(state, versions)));
  } catch (e) {
    show($('scratch-result'), renderNotice('error', 'The engine rejected the input', String(e?.message ?? e)));
    return;
  }
  const current = texts();
  const { tree, diagnostics } = renderExpressionResult(r, (d) => locateDiagnostic(d, current, 'expression'));
  show($('scratch-result'), tree);
  wireDiagnostics($('scratch-result'), diagnostics, 'expression');
}

function wireDiagnostics(container, diagnostics, context) {
  for (const li of container.querySelectorAll('li.clickable[data-diagnostic]')) {
    const d = diagnostics[Number(li.dataset.diagnostic)];
    const go = () => selectDiagnostic(d, context);
    li.addEventListener('click', go);
    li.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        go();
      }
    });
  }
}

function selectDiagnostic(d, context) {
  const target = locateDiagnostic(d, texts(), context);
  if (!target) return;
  const ta = editors[target.editor];
  ta.closest('details')?.setAttribute('open', '');
  ta.focus();
  ta.setSelectionRange(target.start, target.end);
  // Scroll the selection into view: a textarea does not do it for a programmatic selection.
  const { line } = positionAt(ta.value, target.start);
  const lineHeight = parseFloat(getComputedStyle(ta).lineHeight) || 16;
  ta.scrollTop = Math.max(0, (line - 3) * lineHeight);
  updateGutter(ta);
}

const saveHash = debounce(async () => {
  const hash = await encodeState(state);
  if (hash !== location.hash) history.replaceState(null, '', hash);
}, 300);

const evaluateSoon = debounce(() => {
  evaluateNow();
  saveHash();
}, 150);
const evaluateExpressionSoon = debounce(() => {
  evaluateExpressionNow();
  saveHash();
}, 150);

// --- examples ------------------------------------------------------------------------------

/**
 * The example list and the default example's files, inlined into index.html by
 * scripts/inline-examples.mjs; null when the element is missing or not what it should be.
 */
function inlineExamples() {
  try {
    const data = JSON.parse($('examples-data')?.textContent ?? '');
    if (!Array.isArray(data?.examples) || data.files === null || typeof data.files !== 'object') return null;
    return data;
  } catch {
    return null;
  }
}

async function fetchText(path) {
  // The default example's files are in the page.
  const inline = inlined?.files?.[path];
  if (typeof inline === 'string') return inline;
  const res = await fetch(new URL(`examples/${path}`, document.baseURI));
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return res.text();
}

async function loadExample(name) {
  const ex = examples.find((e) => e.name === name);
  if (!ex) return;
  const files = await Promise.all(['manifests', 'object', 'oldObject', 'request'].map((k) => (ex[k] ? fetchText(ex[k]) : '')));
  [state.manifests, state.object, state.oldObject, state.request] = files;
  state.example = name;
  writeEditors();
}

// --- start-up ------------------------------------------------------------------------------

async function loadPackage() {
  // index.html's boot script started compiling the module; without it, init fetches it.
  const compiled = await window.__vapBoot?.wasm?.catch(() => undefined);
  // Instantiated synchronously: the asynchronous instantiate resolves in a later task, which
  // Chromium ran only after the page's first layout and frame (≈ 50 ms of the first result).
  if (compiled) vapEval.initSync({ module: compiled });
  else await vapEval.default();
  return vapEval;
}

async function start() {
  performance.mark('vap-start');
  // The wasm download/compile and the example fetches run concurrently.
  const pkgPromise = loadPackage();
  pkgPromise.catch(() => {});

  let index = { default: '', examples: [] };
  try {
    index = inlined ?? (await (await fetch(new URL('examples/index.json', document.baseURI))).json());
  } catch {
    // The playground still works without examples.
  }
  examples = Array.isArray(index.examples) ? index.examples : [];
  for (const ex of examples) $('example').append(new Option(ex.title ?? ex.name, ex.name));

  const fromHash = await decodeState(location.hash);
  if (fromHash) {
    state = fromHash;
  } else {
    try {
      await loadExample(index.default || examples[0]?.name);
    } catch (e) {
      show($('notice'), renderNotice('warning', 'Could not load the example', String(e?.message ?? e)));
    }
    if (!state.expression) state.expression = 'object.spec.replicas * 2';
  }
  writeEditors();
  performance.mark('vap-inputs-ready');

  try {
    pkg = await pkgPromise;
    performance.mark('vap-engine-ready');
  } catch (e) {
    document.body.dataset.state = 'error';
    show(
      $('notice'),
      renderNotice(
        'error',
        'The WebAssembly module (../pkg/vap_eval_bg.wasm) could not be loaded or initialised.',
        'Rebuild it with: bash scripts/run.sh',
        `Details: ${String(e?.message ?? e)}`,
      ),
    );
    return;
  }
  versions = [...(toPlain(pkg.supportedVersions?.()) ?? [])].map(String).sort(compareVersions);
  $('version').replaceChildren(...versions.slice().reverse().map((v) => new Option(v, v)));
  $('pkg-version').textContent = pkg.version ? `v${pkg.version()}` : '';
  writeEditors();
  readEditors();

  for (const id of ['manifests', 'object', 'oldObject', 'request']) {
    editors[id].addEventListener('input', () => {
      readEditors();
      updateGutter(editors[id]);
      evaluateSoon();
      evaluateExpressionSoon();
    });
  }
  for (const id of ['expression', 'scratchParams']) {
    editors[id].addEventListener('input', () => {
      readEditors();
      updateGutter(editors[id]);
      evaluateExpressionSoon();
    });
  }
  for (const ta of Object.values(editors)) ta.addEventListener('scroll', () => syncGutterScroll(ta));
  $('version').addEventListener('change', () => {
    readEditors();
    evaluateNow();
    evaluateExpressionNow();
    saveHash();
  });
  $('example').addEventListener('change', async () => {
    const name = $('example').value;
    if (!name) return;
    await loadExample(name);
    readEditors();
    evaluateNow();
    evaluateExpressionNow();
    saveHash();
  });
  $('share').addEventListener('click', async () => {
    saveHash.flush();
    const hash = await encodeState(state);
    history.replaceState(null, '', hash);
    try {
      await navigator.clipboard.writeText(location.href);
      $('share').textContent = 'Copied';
    } catch {
      $('share').textContent = 'Link in address bar';
    }
    setTimeout(() => ($('share').textContent = 'Copy link'), 1500);
  });
  window.addEventListener('hashchange', async () => {
    const s = await decodeState(location.hash);
    if (!s) return;
    state = s;
    writeEditors();
    evaluateNow();
    evaluateExpressionNow();
  });

  evaluateNow();
  evaluateExpressionNow();
}

start();
