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
