// Playground state <-> URL hash, and the arguments the wasm exports are called with.
//
// The hash is "#s=" + a tagged payload:
//   "z" + base64url(deflate-raw(JSON))  when CompressionStream is available (browsers, Node ≥ 20),
//   "j" + base64url(JSON)               otherwise.
// decodeState never throws: a hash that is not ours, truncated or corrupt gives null, and every
// field of a decoded state is checked, so a hand-edited URL cannot put non-strings in the editors.

/** Texts longer than this are dropped from decoded state (a URL this long is not ours). */
export const MAX_TEXT = 1 << 20;

/** Every field of the state; all strings. `version` "" means the newest supported version. */
export const FIELDS = Object.freeze([
  'manifests',
  'object',
  'oldObject',
  'request',
  'version',
  'example',
  'expression',
  'scratchParams',
]);

export function emptyState() {
  return Object.fromEntries(FIELDS.map((f) => [f, '']));
}

/** A complete state from anything: unknown keys dropped, non-strings and huge texts emptied. */
export function normalizeState(value) {
  const state = emptyState();
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return state;
  for (const f of FIELDS) {
    const v = value[f];
    if (typeof v === 'string' && v.length <= MAX_TEXT) state[f] = v;
  }
  return state;
}

/** `#s=...` for a state (async: compression streams are). */
export async function encodeState(state) {
  const json = JSON.stringify(normalizeState(state));
  const bytes = new TextEncoder().encode(json);
  if (typeof CompressionStream === 'function') {
    const packed = await pipeThrough(bytes, new CompressionStream('deflate-raw'));
    return '#s=z' + toBase64Url(packed);
  }
  return '#s=j' + toBase64Url(bytes);
}

/** The state in a hash (with or without the leading `#`), or null when there is none or it is garbage. */
export async function decodeState(hash) {
  if (typeof hash !== 'string') return null;
  const m = /^#?s=([zj])([A-Za-z0-9_-]*)$/.exec(hash.trim());
  if (!m) return null;
  try {
    let bytes = fromBase64Url(m[2]);
    if (bytes === null) return null;
    if (m[1] === 'z') {
      if (typeof DecompressionStream !== 'function') return null;
      bytes = await pipeThrough(bytes, new DecompressionStream('deflate-raw'), MAX_TEXT * 8);
    }
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    const value = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
    return normalizeState(value);
  } catch {
    return null;
  }
}

/**
 * The argument lists for the wasm exports, from a state. Empty editors are left out (the engine
 * derives what it can: the request from the object, CREATE without an old object, ...). Texts are
 * passed as YAML/JSON text; the engine parses them (docs/result-format.md positions refer to them).
 * `version` is the state's version or the newest supported one (left out when unknown).
 */
export function evaluateArgs(state, supportedVersions = []) {
  const s = normalizeState(state);
  // A policy without a binding is also shown evaluated as if bound with Deny (labelled
  // hypothetical; the response stays the apiserver's).
  const input = { manifests: s.manifests, unboundPolicies: 'preview' };
  for (const f of ['object', 'oldObject', 'request']) {
    if (s[f].trim() !== '') input[f] = s[f];
  }
  const version = chooseVersion(s.version, supportedVersions);
  if (version) input.kubernetesVersion = version;
  return [input];
}

/**
 * Arguments for evaluateExpression(expression, {object, oldObject, params, request}, options).
 * The scratchpad evaluates any type (`kind: 'variable'`), not only the bool a validation needs.
 */
export function expressionArgs(state, supportedVersions = []) {
  const s = normalizeState(state);
  const context = {};
  for (const [key, f] of [['object', 'object'], ['oldObject', 'oldObject'], ['params', 'scratchParams'], ['request', 'request']]) {
    if (s[f].trim() !== '') context[key] = s[f];
  }
  const options = { kind: 'variable' };
  const version = chooseVersion(s.version, supportedVersions);
  if (version) options.kubernetesVersion = version;
  return [s.expression, context, options];
}

/** `wanted` if supported, else the newest of `versions` ("1.9" < "1.10"); undefined if none. */
export function chooseVersion(wanted, versions) {
  const list = Array.isArray(versions) ? versions.filter((v) => typeof v === 'string') : [];
  if (wanted && list.includes(wanted)) return wanted;
  if (list.length === 0) return wanted || undefined;
  return [...list].sort(compareVersions).at(-1);
}

/** Orders "major.minor" strings numerically. */
export function compareVersions(a, b) {
  const pa = a.split('.').map((x) => parseInt(x, 10) || 0);
  const pb = b.split('.').map((x) => parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Returns fn debounced by `ms`; the returned function has `.flush()` and `.cancel()`. */
export function debounce(fn, ms) {
  let timer = null;
  let lastArgs = [];
  const run = () => {
    timer = null;
    fn(...lastArgs);
  };
  const debounced = (...args) => {
    lastArgs = args;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(run, ms);
  };
  debounced.flush = () => {
    if (timer !== null) {
      clearTimeout(timer);
      run();
    }
  };
  debounced.cancel = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  return debounced;
}

async function pipeThrough(bytes, stream, limit = Infinity) {
  const writer = stream.writable.getWriter();
  writer.write(bytes).catch(() => {});
  writer.close().catch(() => {});
  const chunks = [];
  let size = 0;
  const reader = stream.readable.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      reader.cancel().catch(() => {});
      throw new Error('decompressed state too large');
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function toBase64Url(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(s) {
  if (s.length % 4 === 1) return null;
  try {
    const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

// --- opened and dropped files ------------------------------------------------------------------

/**
 * A YAML text with `kubectl get -o yaml`'s `kind: List` wrappers unwrapped into multi-document
 * YAML (one document per item); other documents are kept as they are. Line-based: kubectl writes
 * `items:` at the top level with each item a `- ` block at column 0.
 */
export function unwrapLists(text) {
  const docs = String(text ?? '').replace(/\r\n/g, '\n').split(/^---[ \t]*(?:#.*)?$\n?/m);
  const out = [];
  for (const doc of docs) {
    if (!/^kind:\s*["']?List["']?\s*$/m.test(doc) || !/^items:\s*$/m.test(doc)) {
      if (doc.trim() !== '') out.push(doc.replace(/\n*$/, '\n'));
      continue;
    }
    const lines = doc.split('\n');
    const at = lines.findIndex((l) => /^items:\s*$/.test(l));
    let item = null;
    for (let i = at + 1; i < lines.length; i++) {
      const l = lines[i];
      if (l.startsWith('- ')) {
        if (item) out.push(item.join('\n') + '\n');
        item = [l.slice(2)];
      } else if (l.startsWith('  ') || l.trim() === '') {
        if (item) item.push(l.slice(2));
      } else {
        break;
      }
    }
    if (item) out.push(item.join('\n').replace(/\n*$/, '\n'));
  }
  return out.join('---\n');
}

/** Kinds that belong in the Manifests editor (policies, bindings, cluster state they read). */
const MANIFEST_KINDS = /^(?:ValidatingAdmissionPolicy|ValidatingAdmissionPolicyBinding|MutatingAdmissionPolicy|MutatingAdmissionPolicyBinding|ValidatingWebhookConfiguration|MutatingWebhookConfiguration|ClusterPolicy|Policy|CustomResourceDefinition|ClusterRole|ClusterRoleBinding|Role|RoleBinding)$/;

/**
 * The editor an opened file goes to: 'manifests' when one of its documents is a policy, binding
 * or other cluster state, else 'object'. Returns {editor, text} with Lists unwrapped.
 */
export function routeFile(text) {
  const unwrapped = unwrapLists(text);
  const kinds = [...unwrapped.matchAll(/^kind:\s*["']?([A-Za-z]+)["']?\s*$/gm)].map((m) => m[1]);
  const editor = kinds.some((k) => MANIFEST_KINDS.test(k)) || kinds.length > 1 ? 'manifests' : 'object';
  return { editor, text: unwrapped };
}

const REQUEST_FILES = ['object', 'oldObject', 'request'];

/**
 * The two requests of an example from www/examples/index.json: `{passing, failing}`, each the
 * file names of its object, oldObject and request ('' for none). The example's own files are one
 * of them; its `passing` or `failing` block names the other, whose absent files are the first's.
 * null when the example has no second request.
 */
export function exampleCases(example) {
  const key = ['passing', 'failing'].find((k) => example?.[k] !== null && typeof example?.[k] === 'object');
  if (!key) return null;
  const files = (from, base = {}) =>
    Object.fromEntries(REQUEST_FILES.map((f) => [f, typeof from[f] === 'string' ? from[f] : (base[f] ?? '')]));
  const first = files(example);
  const second = files(example[key], first);
  return key === 'passing' ? { passing: second, failing: first } : { passing: first, failing: second };
}

/** An example's source link, when it is an https URL (anything else is not shown as a link). */
export function exampleSource(example) {
  const url = typeof example?.source === 'string' ? example.source : '';
  return /^https:\/\/[^\s"<>]+$/.test(url) ? url : null;
}
