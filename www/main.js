// Wires the page: editors <-> state (URL hash), the wasm package, and the rendered results.
// Logic lives in state.js, render.js and diagnostics.js (unit-tested in tests/node/www.test.mjs).

import { decodeState, encodeState, emptyState, evaluateArgs, expressionArgs, chooseVersion, compareVersions, debounce, routeFile, exampleCases, exampleSource } from './state.js';
import { renderResult, renderExpressionResult, renderNotice, toDom, toPlain } from './render.js';
import { locateDiagnostic, positionAt, locateExpression, findDocument } from './diagnostics.js';
// Imported statically: the page's code (app.js, render-blocking) runs only once the package's glue
// is loaded, so nothing is laid out or painted before the engine can start. A dynamic import resolved in a
// later task, which Chromium sometimes ran only after the first layout and frame (40-110 ms
// later in 2 of 15 loads). When the package is missing, index.html's onerror shows the notice.
import * as vapEval from '../pkg/vap_eval.js';

const EDITOR_IDS = ['manifests', 'object', 'oldObject', 'request', 'expression', 'scratchParams'];
const $ = (id) => document.getElementById(id);
const editors = Object.fromEntries(EDITOR_IDS.map((id) => [id, $(id)]));
/** CodeMirror handles by editor id, once www/editor.js has upgraded the textareas. */
const cm = {};
/** www/editor.js once loaded (celRegions, objectKindOf). */
let editorModule = null;
/** Set while the page writes the editors itself (no re-evaluation per editor). */
let writing = false;
/** A worker evaluation longer than this is cancelled and the worker replaced (ms). */
const TIME_LIMIT_MS = 3000;

let pkg = null;
let versions = [];
let examples = [];
/** Which of the example's two requests (passing, failing) the editors were last given; '' unknown. */
let loadedCase = '';
let state = emptyState();
let firstResult = true;
const inlined = inlineExamples();

function show(container, tree) {
  container.replaceChildren(...(tree ? [toDom(tree, document)] : []));
}

/** An editor's text: the CodeMirror view's once upgraded, the textarea's before. */
function textOf(id) {
  return cm[id] ? cm[id].get() : editors[id].value;
}

function setText(id, text) {
  if (cm[id]) cm[id].set(text);
  else editors[id].value = text;
}

function texts() {
  return Object.fromEntries(EDITOR_IDS.map((id) => [id, textOf(id)]));
}

function readEditors() {
  for (const id of EDITOR_IDS) state[id] = textOf(id);
  state.version = $('version').value;
  state.example = $('example').value;
}

function writeEditors() {
  writing = true;
  try {
    for (const id of EDITOR_IDS) {
      setText(id, state[id]);
      updateGutter(editors[id], false);
    }
  } finally {
    writing = false;
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
  showExampleInfo();
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
//
// The first result of a fresh visit (the inlined default example) is computed on the page's
// thread, as soon as the engine is instantiated: nothing else is waited for (cold start). Every
// other evaluation — edits, examples, and a state opened from a link, which may hold anything —
// runs in a Web Worker (worker.js) given the same compiled module, with a time limit: a runaway
// or huge input is cancelled, the worker replaced, and the page says so.

/**
 * An engine worker: one request at a time, the newest waiting request per function kept. `name`
 * names the thread; `timeLimit` (ms) cancels a request and replaces the worker.
 */
class EngineWorker {
  constructor(module, { name = 'vap-eval', timeLimit = TIME_LIMIT_MS } = {}) {
    this.module = module;
    this.name = name;
    this.timeLimit = timeLimit;
    this.busy = null; // {fn, args, resolve, timer}
    this.queued = new Map(); // fn -> {fn, args, resolve}
    this.replaced = 0;
    /** Set-up messages (schemas, descriptions) given so far: a replaced worker gets them again. */
    this.setup = [];
    this.spawn();
  }

  spawn() {
    this.worker = new Worker(new URL('worker.js', document.baseURI), { type: 'module', name: this.name });
    this.worker.onmessage = (ev) => this.onMessage(ev.data);
    this.worker.onerror = (ev) => {
      ev.preventDefault?.();
      this.fail(`the evaluation worker failed: ${ev.message ?? 'error'}`);
    };
    this.ready = false;
    this.worker.postMessage({ type: 'init', module: this.module });
    for (const msg of this.setup) this.worker.postMessage(msg);
  }

  /** Posts a set-up message ({type: 'schemas' | 'descriptions', version, text}), kept for a replacement. */
  load(msg) {
    this.setup.push(msg);
    this.worker.postMessage(msg);
  }

  /** Resolves to {value} | {error} | {timeout: ms}; a newer run of the same fn supersedes a queued one ({superseded}). */
  run(fn, args) {
    return new Promise((resolve) => {
      if (this.broken) return resolve({ broken: true });
      this.queued.get(fn)?.resolve({ superseded: true });
      this.queued.set(fn, { fn, args, resolve });
      this.pump();
    });
  }

  pump() {
    if (this.busy || !this.ready || this.queued.size === 0) return;
    const [fn, job] = this.queued.entries().next().value;
    this.queued.delete(fn);
    this.busy = job;
    job.id = (this.seq = (this.seq ?? 0) + 1);
    job.timer = setTimeout(() => this.timeout(), this.timeLimit);
    this.worker.postMessage({ type: 'run', id: job.id, fn: job.fn, args: job.args });
  }

  onMessage(msg) {
    if (msg?.type === 'ready') {
      this.ready = true;
      this.pump();
      return;
    }
    if (msg?.type === 'init-error') return this.fail(msg.message);
    const job = this.busy;
    if (!job || msg?.id !== job.id) return;
    clearTimeout(job.timer);
    this.busy = null;
    job.resolve(msg.type === 'result' ? { value: msg.value, ms: msg.ms } : { error: msg.message });
    this.pump();
  }

  timeout() {
    const job = this.busy;
    this.busy = null;
    this.worker.terminate();
    this.replaced++;
    this.spawn();
    job?.resolve({ timeout: this.timeLimit });
  }

  fail(message) {
    if (!this.ready) {
      // The worker could not start (worker.js missing, no module workers): the page's thread
      // evaluates from now on, rather than respawning a worker that cannot start.
      this.worker.terminate();
      this.broken = true;
      for (const job of this.queued.values()) job.resolve({ broken: true });
      this.queued.clear();
      return;
    }
    const job = this.busy;
    this.busy = null;
    if (job) clearTimeout(job.timer);
    this.worker.terminate();
    this.spawn();
    job?.resolve({ error: message });
  }
}

let engineWorker = null;

/** Built-in schemas registered so far (version -> text), in the page and in the worker. */
const schemaTexts = new Map();
/** The versions the package ships schemas for (pkg/schemas/index.json), fetched once. */
let schemaVersions = null;

/**
 * Registers the built-in schemas for `version` (the package's schemas/<minor>.json; for a version
 * without its own file, the newest older one), then evaluates again so type-check warnings show.
 * After the first result only: the first result does not wait for them.
 */
async function loadSchemasFor(version) {
  try {
    const v = await schemaVersionFor(version);
    if (!v || schemaTexts.has(v)) return;
    const res = await fetch(new URL(`../pkg/schemas/${v}.json`, document.baseURI));
    if (!res.ok) return;
    const text = await res.text();
    vapEval.loadSchemas?.(v, text);
    schemaTexts.set(v, text);
    for (const w of [engineWorker, editorWorker]) w?.load({ type: 'schemas', version: v, text });
    evaluateSoon();
  } catch {
    // Offline or no schemas: expressions are checked without them (the engine says so).
  }
}

/** The version whose schema bundle serves `version`: its own, else the newest older one; undefined if none. */
async function schemaVersionFor(version) {
  schemaVersions ??= fetch(new URL('../pkg/schemas/index.json', document.baseURI))
    .then((r) => (r.ok ? r.json() : []))
    .catch(() => []);
  const minor = (v) => Number(String(v).split('.')[1]);
  const list = await schemaVersions;
  return (Array.isArray(list) ? list : []).filter((s) => minor(s) <= minor(version)).at(-1);
}

/** Runs `fn` of the package: in the worker when there is one, else on this thread. */
async function runEngine(fn, args) {
  if (engineWorker) {
    const out = await engineWorker.run(fn, args);
    if (!out.broken) return out;
  }
  try {
    return { value: pkg[fn](...args) };
  } catch (e) {
    return { error: String(e?.message ?? e) };
  }
}

// --- editor intelligence: the package's complete / hover -------------------------------------
//
// Completions and hover types in the Manifests editor's expressions come from the package
// (`complete`, `hover`: the fields, types and descriptions of the schemas the policy's kinds
// have). They run in a worker of their own, started on the first request: a completion never
// waits behind an evaluation, and a huge input cannot freeze the page. The schema descriptions
// are fetched on that first request too, never before the first result. Without that worker
// (no module workers) the page's instance answers.

/** The editors' engine worker (complete, hover); a promise of it from the first request on. */
let editorWorker = null;
let editorWorkerStarting = null;
/** Description texts by schema version (a promise each; null when unavailable). */
const descriptionTexts = new Map();
/** The schema versions whose descriptions the page's own instance has. */
const pageDescriptions = new Set();

function startEditorWorker() {
  editorWorkerStarting ??= (async () => {
    if (typeof Worker !== 'function') return null;
    const module = await window.__vapBoot?.wasm?.catch(() => undefined);
    if (!(module instanceof WebAssembly.Module)) return null;
    editorWorker = new EngineWorker(module, { name: 'vap-eval-editor' });
    editorWorker.described = new Set();
    for (const [version, text] of schemaTexts) editorWorker.load({ type: 'schemas', version, text });
    window.__vapEditorWorker = editorWorker;
    return editorWorker;
  })();
  return editorWorkerStarting;
}

/** Gives `worker` (null: this page's instance) the descriptions that serve `version`, once. */
async function loadDescriptionsFor(version, worker) {
  const v = await schemaVersionFor(version);
  if (!v) return;
  if (!descriptionTexts.has(v)) {
    const url = new URL(`../pkg/schemas/${v}.descriptions.json`, document.baseURI);
    descriptionTexts.set(v, fetch(url).then((r) => (r.ok ? r.text() : null)).catch(() => null));
  }
  const text = await descriptionTexts.get(v);
  if (text === null) return; // hover and completion work without descriptions
  if (worker) {
    if (worker.described.has(v)) return;
    worker.described.add(v);
    worker.load({ type: 'descriptions', version: v, text });
  } else if (!pageDescriptions.has(v)) {
    pageDescriptions.add(v);
    try {
      vapEval.loadSchemaDescriptions?.(v, text);
    } catch {}
  }
}

/**
 * `fn` of the package (complete, hover, completeExpression, hoverExpression) with `args`,
 * typed for Kubernetes `version`. Resolves to the plain result, {superseded: true} (a newer
 * request replaced it: its answer follows), or null (timed out or failed: the editor falls back
 * to its own table).
 */
async function editorCall(fn, args, version) {
  if (!pkg) return null;
  const worker = await startEditorWorker();
  // The first request waits for the descriptions a while (they are fetched now), not for long:
  // on a slow network it is answered without them, the next ones have them.
  await Promise.race([loadDescriptionsFor(version, worker), new Promise((resolve) => setTimeout(resolve, 1500))]);
  if (worker && !worker.broken) {
    const out = await worker.run(fn, args);
    if (out.superseded) return { superseded: true };
    if (!out.broken) return out.value ? toPlain(out.value) : null;
  }
  await loadDescriptionsFor(version, null);
  try {
    return typeof pkg[fn] === 'function' ? toPlain(pkg[fn](...args)) : null;
  } catch {
    return null;
  }
}

/** `complete` or `hover` at UTF-16 offset `position` of `manifests` (the editor's text, the other inputs as in the editors). */
function manifestsCall(fn, manifests, position) {
  const [input] = evaluateArgs({ ...state, manifests }, versions);
  return editorCall(fn, [input, position], input.kubernetesVersion);
}

/**
 * `completeExpression` or `hoverExpression` at `position` of the scratchpad's `expression`, with
 * its variables and options as evaluated, `object` typed by the Object editor's apiVersion/kind.
 */
function expressionCall(fn, expression, position) {
  const current = { ...state, ...texts(), expression };
  const [, variables, options] = expressionArgs(current, versions);
  const objectKind = editorModule?.objectKindOf(current.object);
  return editorCall(fn, [expression, position, variables, objectKind ? { ...options, objectKind } : options], options.kubernetesVersion);
}

/** What the Manifests editor asks (www/editor/index.js `intel`). */
const manifestsIntel = {
  complete: (text, position) => manifestsCall('complete', text, position),
  hover: (text, position) => manifestsCall('hover', text, position),
};

/** What the scratchpad's expression editor asks. */
const expressionIntel = {
  complete: (text, position) => expressionCall('completeExpression', text, position),
  hover: (text, position) => expressionCall('hoverExpression', text, position),
};

function timeoutNotice(what, ms) {
  return renderNotice(
    'error',
    `${what} was stopped after ${(ms / 1000).toFixed(1)} s`,
    'The input is too large or an expression runs away; the evaluation worker was replaced. Edit the input to evaluate again.',
  );
}

let evaluateSeq = 0;

async function evaluateNow() {
  if (!pkg) return;
  const seq = ++evaluateSeq;
  const t0 = performance.now();
  const args = evaluateArgs(state, versions);
  const out = await runEngine('evaluate', args);
  if (out.superseded || seq !== evaluateSeq) return;
  if (out.timeout) {
    show($('notice'), timeoutNotice('The evaluation', out.timeout));
    $('result').replaceChildren();
    trackVerdict();
    document.body.dataset.state = 'timeout';
    showDiagnostics('evaluate', []);
    markFirstResult();
    return;
  }
  if (out.error !== undefined) {
    show($('notice'), renderNotice('error', 'The engine rejected the input', out.error));
    $('result').replaceChildren();
    trackVerdict();
    document.body.dataset.state = 'ready';
    showDiagnostics('evaluate', []);
    markFirstResult();
    return;
  }
  const result = toPlain(out.value);
  const ms = out.ms ?? performance.now() - t0;
  if (firstResult) performance.mark('vap-first-evaluated');
  const current = texts();
  // The policies' status.typeChecking (the result's typeChecking), for every result but the
  // first: the schemas that type it load after that one, so it would only say nothing was checked.
  const typeChecks = firstResult ? null : result.typeChecking ?? [];
  const { tree, diagnostics } = renderResult(result, (d) => locateDiagnostic(d, current, 'evaluate'), typeChecks);
  show($('notice'), null);
  show($('result'), tree);
  $('result').dataset.evalMs = ms.toFixed(2);
  wireDiagnostics($('result'), diagnostics, 'evaluate');
  wireGoto($('result'));
  document.body.dataset.state = 'ready';
  const first = firstResult;
  markFirstResult();
  window.__vapLastResult = result;
  if (!first) trackVerdict();
  lastDiagnostics.evaluate = diagnostics.map((d) => [d, locateDiagnostic(d, current, 'evaluate')]);
  showDiagnostics();
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
      // Everything the first result did not need comes after it.
      setTimeout(afterFirstResult, 0);
    };
    channel.port2.postMessage(null);
  });
}

let expressionSeq = 0;

async function evaluateExpressionNow() {
  if (!pkg) return;
  if (state.expression.trim() === '') {
    $('scratch-result').replaceChildren();
    lastDiagnostics.expression = [];
    showDiagnostics();
    return;
  }
  const seq = ++expressionSeq;
  const out = await runEngine('evaluateExpression', expressionArgs(state, versions));
  if (out.superseded || seq !== expressionSeq) return;
  if (out.timeout) {
    show($('scratch-result'), timeoutNotice('The scratchpad expression', out.timeout));
    return;
  }
  if (out.error !== undefined) {
    show($('scratch-result'), renderNotice('error', 'The engine rejected the input', out.error));
    return;
  }
  const r = toPlain(out.value);
  const current = texts();
  const { tree, diagnostics } = renderExpressionResult(r, (d) => locateDiagnostic(d, current, 'expression'));
  show($('scratch-result'), tree);
  wireDiagnostics($('scratch-result'), diagnostics, 'expression');
  lastDiagnostics.expression = diagnostics.map((d) => [d, locateDiagnostic(d, current, 'expression')]);
  showDiagnostics();
}

/** The located diagnostics of the last results, by context, for the editors' squiggles. */
const lastDiagnostics = { evaluate: [], expression: [] };

/** Squiggles in the CodeMirror editors (no-op before they are loaded). */
function showDiagnostics(context = null, list = null) {
  if (context) lastDiagnostics[context] = list;
  if (Object.keys(cm).length === 0) return;
  const byEditor = Object.fromEntries(EDITOR_IDS.map((id) => [id, []]));
  for (const [d, target] of [...lastDiagnostics.evaluate, ...lastDiagnostics.expression]) {
    if (!target || !byEditor[target.editor]) continue;
    byEditor[target.editor].push({ from: target.start, to: target.end, severity: d.severity, message: d.message ?? '', source: d.field || d.code || undefined });
  }
  for (const id of EDITOR_IDS) cm[id]?.setDiagnostics(byEditor[id]);
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

/** The results' "show in the editor" buttons: the expression in its policy's document. */
function wireGoto(container) {
  for (const button of container.querySelectorAll('button[data-goto]')) {
    button.addEventListener('click', () => {
      const text = textOf('manifests');
      const policy = button.closest('[data-policy]')?.dataset.policy;
      const doc = policy ? findDocument(text, 'ValidatingAdmissionPolicy', policy) : null;
      const map = locateExpression(text, button.dataset.goto, doc);
      if (map) selectRange('manifests', map[0], map[map.length - 1]);
    });
  }
  // Type-checking warnings: the field's diagnostic locates it; the expression around it is
  // selected (the editors' scan of the expression fields; before they load, the diagnostic's range).
  for (const button of container.querySelectorAll('button[data-goto-field]')) {
    button.addEventListener('click', () => {
      const field = `ValidatingAdmissionPolicy/${button.closest('[data-policy]')?.dataset.policy}: ${button.dataset.gotoField}`;
      const target = lastDiagnostics.evaluate.find(([d, t]) => d?.field === field && t?.editor === 'manifests')?.[1];
      if (!target) return;
      const text = textOf('manifests');
      const region = editorModule?.celRegions(text).find((r) => r.from <= target.start && target.start <= r.to);
      if (!region) return selectRange('manifests', target.start, target.end);
      let from = region.from;
      while (from < region.to && /\s/.test(text[from])) from++;
      selectRange('manifests', from, region.to);
    });
  }
}

function selectDiagnostic(d, context) {
  const target = locateDiagnostic(d, texts(), context);
  if (target) selectRange(target.editor, target.start, target.end);
}

function selectRange(id, start, end) {
  const ta = editors[id];
  ta.closest('details')?.setAttribute('open', '');
  if (cm[id]) {
    cm[id].select(start, end);
    return;
  }
  ta.focus();
  ta.setSelectionRange(start, end);
  // Scroll the selection into view: a textarea does not do it for a programmatic selection.
  const { line } = positionAt(ta.value, start);
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
  loadedCase = ex.passing ? 'failing' : ex.failing ? 'passing' : '';
  writeEditors();
}

/** Replaces the object, old object and request with the example's passing or failing ones; the manifests stay as edited. */
async function loadCase(which) {
  const cases = exampleCases(examples.find((e) => e.name === state.example));
  if (!cases) return;
  const files = cases[which];
  [state.object, state.oldObject, state.request] = await Promise.all(['object', 'oldObject', 'request'].map((k) => (files[k] ? fetchText(files[k]) : '')));
  loadedCase = which;
  writeEditors();
}

/** The example's passing/failing buttons, source link and licence (hidden for a custom state). */
function showExampleInfo() {
  const ex = examples.find((e) => e.name === state.example);
  $('example-cases').hidden = !exampleCases(ex);
  for (const which of ['passing', 'failing']) $(`load-${which}`).setAttribute('aria-pressed', String(loadedCase === which));
  const url = exampleSource(ex);
  $('example-source').hidden = !url;
  if (url) $('example-source').href = url;
  $('example-source').title = url ? `${url} (licence ${ex.license ?? 'unknown'})` : '';
  $('example-license').textContent = url && ex.license ? `(${ex.license})` : '';
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
  for (const ex of examples) {
    const option = new Option(ex.title ?? ex.name, ex.name);
    if (typeof ex.description === 'string') option.title = ex.description;
    $('example').append(option);
  }

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

  for (const id of EDITOR_IDS) {
    editors[id].addEventListener('input', () => {
      updateGutter(editors[id]);
      edited(id);
    });
  }
  for (const ta of Object.values(editors)) ta.addEventListener('scroll', () => syncGutterScroll(ta));
  $('version').addEventListener('change', () => {
    loadSchemasFor($('version').value);
    readEditors();
    evaluateNow();
    evaluateExpressionNow();
    saveHash();
  });
  $('example').addEventListener('change', async () => {
    const name = $('example').value;
    if (!name) {
      // "(custom)": the editors keep their text; the example's buttons and source go.
      readEditors();
      showExampleInfo();
      return;
    }
    await loadExample(name);
    readEditors();
    evaluateNow();
    evaluateExpressionNow();
    saveHash();
  });
  for (const which of ['passing', 'failing']) {
    $(`load-${which}`).addEventListener('click', async () => {
      readEditors();
      await loadCase(which);
      readEditors();
      evaluateNow();
      saveHash();
    });
  }
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
    loadedCase = '';
    writeEditors();
    evaluateNow();
    evaluateExpressionNow();
  });

  // A state from a link may hold anything: it is evaluated in the worker, under the time limit,
  // from the start. The default example is evaluated here, at once (cold start).
  if (fromHash) {
    await startWorker();
    evaluateNow();
    evaluateExpressionNow();
    return;
  }
  // The scratchpad's expression is not part of the first result: evaluated once that is
  // rendered (≈ 5 ms of the page's thread before it otherwise, most of it V8 compiling code
  // only evaluateExpression reaches).
  await evaluateNow();
  evaluateExpressionNow();
}

/** An edit in editor `id` (textarea input or CodeMirror change). */
function edited(id) {
  if (writing) return;
  readEditors();
  if (id !== 'expression' && id !== 'scratchParams') evaluateSoon();
  evaluateExpressionSoon();
}

/** Starts the evaluation worker with the boot script's compiled module (none: this thread evaluates). */
async function startWorker() {
  if (engineWorker || typeof Worker !== 'function') return;
  const module = await window.__vapBoot?.wasm?.catch(() => undefined);
  if (module instanceof WebAssembly.Module) engineWorker = new EngineWorker(module);
  window.__vapWorker = engineWorker;
}

/** What the first result does not need: the worker, the editors, the page's other controls. */
// The verdict chip (narrow screens, where the results come after the editors): the decision
// banner's word and code, pinned to the bottom of the screen while the banner is below it, so
// whoever edits above sees the outcome of each edit; a tap scrolls to the banner. Set up after
// the first result, like everything it does not need.
let verdictObserver = null;
let verdictBelow = false;

function trackVerdict() {
  const chip = $('verdict-chip');
  if (!chip || typeof IntersectionObserver !== 'function') return;
  if (!verdictObserver) {
    verdictObserver = new IntersectionObserver((entries) => {
      const e = entries.at(-1);
      verdictBelow = !e.isIntersecting && e.boundingClientRect.top >= (e.rootBounds?.bottom ?? innerHeight);
      chip.hidden = !verdictBelow || !chip.textContent;
    });
    chip.addEventListener('click', () => {
      const banner = $('result').querySelector('.decision');
      if (!banner) return;
      banner.tabIndex = -1;
      banner.scrollIntoView({ block: 'start', behavior: matchMedia('(prefers-reduced-motion: reduce)').matches ? 'auto' : 'smooth' });
      banner.focus({ preventScroll: true });
    });
  }
  verdictObserver.disconnect();
  const banner = $('result').querySelector('.decision');
  if (!banner) {
    chip.textContent = '';
    chip.hidden = true;
    return;
  }
  const allowed = banner.dataset.decision === 'allowed';
  const code = banner.querySelector('.decision-code')?.textContent ?? '';
  const warnings = window.__vapLastResult?.response?.warnings?.length ?? 0;
  const detail = allowed ? (warnings ? `${warnings} warning${warnings === 1 ? '' : 's'}` : '') : code;
  chip.className = `verdict-chip ${allowed ? 'decision-allowed' : 'decision-denied'}`;
  chip.textContent = allowed ? 'ALLOWED' : 'DENIED';
  if (detail) chip.append(' ', Object.assign(document.createElement('span'), { className: 'verdict-detail', textContent: detail }));
  chip.setAttribute('aria-label', `${chip.textContent}: go to the result`);
  chip.hidden = !verdictBelow;
  verdictObserver.observe(banner);
}

async function afterFirstResult() {
  wireControls();
  trackVerdict();
  await startWorker();
  loadSchemasFor($('version').value);
  await loadEditors();
  if (document.querySelector('meta[name="vap-offline"]') && 'serviceWorker' in navigator) {
    navigator.serviceWorker.register('sw.js').catch(() => {});
  }
}

async function loadEditors() {
  let mod;
  try {
    mod = await import('./editor.js');
  } catch (e) {
    // The textareas keep working; say why the editors are plain.
    show($('editor-notice'), renderNotice('warning', 'The code editors could not be loaded; plain text fields are used.', String(e?.message ?? e)));
    return;
  }
  editorModule = mod;
  const env = () => ({ version: chooseVersion(state.version, versions), manifests: textOf('manifests'), object: textOf('object'), oldObject: textOf('oldObject') });
  for (const id of EDITOR_IDS) {
    const ta = editors[id];
    ta.value = textOf(id);
    cm[id] = mod.upgrade(ta, {
      lang: id === 'expression' ? 'cel' : 'yaml',
      singleLine: id === 'expression',
      env,
      intel: id === 'manifests' ? manifestsIntel : id === 'expression' ? expressionIntel : null,
      onChange: () => edited(id),
    });
  }
  document.body.dataset.editors = 'codemirror';
  window.__vapEditors = cm;
  showDiagnostics();
}

// --- theme, files, download ----------------------------------------------------------------

function wireControls() {
  $('theme').addEventListener('click', () => {
    const dark = document.documentElement.dataset.theme
      ? document.documentElement.dataset.theme === 'dark'
      : matchMedia('(prefers-color-scheme: dark)').matches;
    const next = dark ? 'light' : 'dark';
    document.documentElement.dataset.theme = next;
    try {
      localStorage.setItem('vap-theme', next);
    } catch {
      // Private mode: the choice lasts for this page.
    }
    $('theme').setAttribute('aria-pressed', String(next === 'dark'));
  });
  $('open-file').addEventListener('click', () => $('file-input').click());
  $('file-input').addEventListener('change', async () => {
    for (const file of $('file-input').files ?? []) await openFile(file, null);
    $('file-input').value = '';
  });
  for (const id of ['manifests', 'object', 'oldObject', 'request']) {
    const box = editors[id].closest('.editor');
    box.addEventListener('dragover', (ev) => {
      if (ev.dataTransfer?.types?.includes('Files')) {
        ev.preventDefault();
        box.classList.add('drop-target');
      }
    });
    box.addEventListener('dragleave', () => box.classList.remove('drop-target'));
    box.addEventListener('drop', async (ev) => {
      box.classList.remove('drop-target');
      const files = [...(ev.dataTransfer?.files ?? [])];
      if (files.length === 0) return;
      ev.preventDefault();
      ev.stopPropagation();
      for (const f of files) await openFile(f, id);
    });
  }
  $('download').addEventListener('click', () => {
    const result = window.__vapLastResult;
    if (!result) return;
    const blob = new Blob([JSON.stringify(result, null, 2) + '\n'], { type: 'application/json' });
    const a = Object.assign(document.createElement('a'), { href: URL.createObjectURL(blob), download: 'vap-eval-result.json' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  });
}

/** Files larger than this are refused (the engine and the URL state would not cope). */
const MAX_FILE = 1 << 20;

/** Puts a file's text into editor `target`, or where routeFile() says (multi-document YAML, `kubectl get -o yaml` Lists). */
async function openFile(file, target) {
  if (file.size > MAX_FILE) {
    show($('notice'), renderNotice('error', `${file.name} is too large`, `${file.size} bytes; the playground takes files up to ${MAX_FILE} bytes.`));
    return;
  }
  const routed = routeFile(await file.text());
  const id = target ?? routed.editor;
  setText(id, routed.text);
  updateGutter(editors[id]);
  if (!cm[id]) edited(id);
}

start();
