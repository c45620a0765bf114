// CEL for the playground's editors, without CodeMirror: a tokenizer (highlighting of the scratchpad
// and of expression fields inside the YAML), where the CEL fields of a manifest are, and the
// completion candidates of a Kubernetes version. Pure functions, unit-tested in Node
// (tests/node/www.test.mjs); www/editor/index.js wires them into CodeMirror.

/** Token classes, as @lezer/highlight's classHighlighter names them (`tok-*`, styled in index.html). */
export const TOKEN = Object.freeze({
  keyword: 'tok-keyword',
  string: 'tok-string',
  number: 'tok-number',
  bool: 'tok-bool',
  null: 'tok-null',
  variable: 'tok-variableName tok-definition',
  function: 'tok-variableName tok-function',
  property: 'tok-propertyName',
  operator: 'tok-operator',
  comment: 'tok-comment',
});

const RESERVED = new Set(['in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

/**
 * Tokens of one CEL text: [{from, to, kind}] with offsets into `text` (UTF-16) and kind a key of
 * TOKEN. Whitespace and unknown characters are skipped; an unterminated string runs to the end.
 */
export function tokenizeCel(text) {
  const out = [];
  const n = text.length;
  let i = 0;
  let prev = null; // the previous significant token (a name after '.' is a property)
  const push = (from, to, kind) => {
    out.push({ from, to, kind });
    prev = { from, to, kind, text: text.slice(from, to) };
  };
  while (i < n) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      push(i, end < 0 ? n : end, 'comment');
      i = end < 0 ? n : end;
      continue;
    }
    // Strings: optional r/b prefixes, ' " ''' """.
    const sm = /^(?:[rRbB]{1,2})?('''|"""|'|")/.exec(text.slice(i, i + 5));
    if (sm && (sm[0].length === sm[1].length || /[rRbB]/.test(c))) {
      const q = sm[1];
      const raw = /[rR]/.test(sm[0].slice(0, sm[0].length - q.length));
      let j = i + sm[0].length;
      while (j < n) {
        if (!raw && text[j] === '\\') {
          j += 2;
          continue;
        }
        if (text.startsWith(q, j)) {
          j += q.length;
          break;
        }
        if (q.length === 1 && text[j] === '\n') break;
        j++;
      }
      push(i, Math.min(j, n), 'string');
      i = Math.min(j, n);
      continue;
    }
    const num = /^(?:0x[0-9a-fA-F]+u?|\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)|\d+u?)/.exec(text.slice(i, i + 40));
    if (num && !(c === '.' && prev && (prev.kind === 'variable' || prev.kind === 'property'))) {
      push(i, i + num[0].length, 'number');
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i, i + 200));
    if (id) {
      const word = id[0];
      const end = i + word.length;
      let k = end;
      while (k < n && (text[k] === ' ' || text[k] === '\t')) k++;
      const call = text[k] === '(';
      const afterDot = prev && prev.text === '.';
      let kind;
      if (word === 'true' || word === 'false') kind = 'bool';
      else if (word === 'null') kind = 'null';
      else if (RESERVED.has(word)) kind = 'keyword';
      else if (call) kind = 'function';
      else if (afterDot) kind = 'property';
      else kind = 'variable';
      push(i, end, kind);
      i = end;
      continue;
    }
    if (c === '`') {
      const end = text.indexOf('`', i + 1);
      const to = end < 0 ? n : end + 1;
      push(i, to, 'property');
      i = to;
      continue;
    }
    const op = /^(?:&&|\|\||==|!=|<=|>=|[-+*/%<>!?:.,()[\]{}])/.exec(text.slice(i, i + 2));
    if (op) {
      push(i, i + op[0].length, op[0] === '.' || /[()[\]{},]/.test(op[0]) ? 'punct' : 'operator');
      i += op[0].length;
      continue;
    }
    i++;
  }
  return out.filter((t) => t.kind !== 'punct');
}

/** YAML keys whose values are CEL in ValidatingAdmissionPolicy (and the webhook/Kyverno kinds). */
export const CEL_KEYS = Object.freeze(['expression', 'messageExpression', 'valueExpression', 'condition']);

const KEY_LINE = /^(\s*)(?:-\s+)?([A-Za-z_][\w-]*)\s*:(?=\s|$)\s*(.*)$/;

/**
 * The CEL fields of a YAML text: [{from, to, quote}] ranges (UTF-16 offsets) of the expression
 * text of every `expression:`-like key — plain, quoted (the quotes excluded) or a block scalar
 * (`|`/`>`: its indented lines). A line-based scan, good for highlighting and completion; the
 * engine's parser is the authority on what the text means.
 */
export function celRegions(text) {
  const out = [];
  const lines = text.split('\n');
  let at = 0;
  const starts = lines.map((l) => {
    const s = at;
    at += l.length + 1;
    return s;
  });
  for (let li = 0; li < lines.length; li++) {
    const line = lines[li];
    const m = KEY_LINE.exec(line);
    if (!m || !CEL_KEYS.includes(m[2])) continue;
    const value = m[3];
    const valueStart = starts[li] + line.length - value.length;
    if (/^[|>][-+0-9]*\s*(#.*)?$/.test(value)) {
      // Block scalar: the following lines indented deeper than the key's line.
      const keyIndent = m[1].length + (line.slice(m[1].length).startsWith('-') ? 2 : 0);
      let lj = li + 1;
      let end = null;
      while (lj < lines.length) {
        const l = lines[lj];
        if (l.trim() !== '' && l.length - l.trimStart().length <= keyIndent) break;
        if (l.trim() !== '') end = starts[lj] + l.length;
        lj++;
      }
      if (end !== null) out.push({ from: starts[li + 1], to: end, quote: 'block' });
      continue;
    }
    if (value.startsWith('"') || value.startsWith("'")) {
      const q = value[0];
      let j = 1;
      while (j < value.length) {
        if (q === '"' && value[j] === '\\') j += 2;
        else if (q === "'" && value[j] === "'" && value[j + 1] === "'") j += 2;
        else if (value[j] === q) break;
        else j++;
      }
      out.push({ from: valueStart + 1, to: valueStart + Math.min(j, value.length), quote: q });
      continue;
    }
    const comment = value.search(/\s#/);
    const plain = (comment < 0 ? value : value.slice(0, comment)).trimEnd();
    if (plain) out.push({ from: valueStart, to: valueStart + plain.length, quote: '' });
  }
  return out;
}

// --- completion ------------------------------------------------------------------------------

/** The variables of a ValidatingAdmissionPolicy expression (apiserver `validating/compile`). */
export const VARIABLES = Object.freeze([
  { name: 'object', detail: 'the new object (null for DELETE)' },
  { name: 'oldObject', detail: 'the existing object (null for CREATE)' },
  { name: 'request', detail: 'admission.k8s.io AdmissionRequest attributes' },
  { name: 'params', detail: 'the binding\'s param object (null without paramKind)' },
  { name: 'namespaceObject', detail: 'the request\'s Namespace (null for cluster-scoped)' },
  { name: 'authorizer', detail: 'Authorizer: authorization checks for the request\'s user', since: 27 },
  { name: 'variables', detail: 'the policy\'s spec.variables, by name' },
]);

/** CEL macros (cel-go parser; two-variable comprehensions from Kubernetes 1.32). */
export const MACROS = Object.freeze([
  { name: 'has', sig: 'has(a.f) -> bool', global: true },
  { name: 'all', sig: 'list.all(x, p) -> bool' },
  { name: 'exists', sig: 'list.exists(x, p) -> bool' },
  { name: 'exists_one', sig: 'list.exists_one(x, p) -> bool' },
  { name: 'map', sig: 'list.map(x, [p,] f) -> list' },
  { name: 'filter', sig: 'list.filter(x, p) -> list' },
  { name: 'existsOne', sig: 'list.existsOne(i, v, p) -> bool', since: 32 },
  { name: 'transformList', sig: 'map.transformList(k, v, [p,] f) -> list', since: 32 },
  { name: 'transformMap', sig: 'map.transformMap(k, v, [p,] f) -> map', since: 32 },
  { name: 'transformMapEntry', sig: 'map.transformMapEntry(k, v, [p,] f) -> map', since: 32 },
  { name: 'optMap', sig: 'optional.optMap(x, f) -> optional', since: 28 },
  { name: 'optFlatMap', sig: 'optional.optFlatMap(x, f) -> optional', since: 28 },
]);

/**
 * Functions, by library and the Kubernetes minor version that enabled it (environment.rs
 * `Features::for_version`). `g`: callable as a global function; otherwise a member (receiver.f()).
 */
export const FUNCTIONS = Object.freeze([
  // cel-go standard library
  ...['size', 'int', 'uint', 'double', 'string', 'bytes', 'bool', 'type', 'dyn', 'duration', 'timestamp'].map((name) => ({ name, g: true, lib: 'standard' })),
  ...['contains', 'startsWith', 'endsWith', 'matches', 'size', 'getDate', 'getDayOfMonth', 'getDayOfWeek', 'getDayOfYear', 'getFullYear', 'getHours', 'getMilliseconds', 'getMinutes', 'getMonth', 'getSeconds'].map((name) => ({ name, lib: 'standard' })),
  // Kubernetes: regex, lists, url, authz (authorizer.*), quantity, ip/cidr, format, semver
  ...['find', 'findAll'].map((name) => ({ name, lib: 'regex' })),
  ...['isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf'].map((name) => ({ name, lib: 'kubernetes lists' })),
  { name: 'includes', lib: 'kubernetes lists', since: 37 },
  ...['url', 'isURL'].map((name) => ({ name, g: true, lib: 'url' })),
  ...['getScheme', 'getHost', 'getHostname', 'getPort', 'getEscapedPath', 'getQuery'].map((name) => ({ name, lib: 'url' })),
  ...['group', 'resource', 'subresource', 'namespace', 'name', 'check', 'allowed', 'reason', 'errored', 'error', 'path', 'serviceAccount'].map((name) => ({ name, lib: 'authz', since: 27 })),
  ...['fieldSelector', 'labelSelector'].map((name) => ({ name, lib: 'authz selectors', since: 31 })),
  ...['quantity', 'isQuantity'].map((name) => ({ name, g: true, lib: 'quantity', since: 28 })),
  ...['sign', 'isInteger', 'asInteger', 'asApproximateFloat', 'add', 'sub', 'isLessThan', 'isGreaterThan', 'compareTo'].map((name) => ({ name, lib: 'quantity', since: 28 })),
  ...['ip', 'isIP', 'ip.isCanonical', 'cidr', 'isCIDR'].map((name) => ({ name, g: true, lib: 'ip/cidr', since: 30 })),
  ...['family', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast', 'containsIP', 'containsCIDR', 'masked', 'prefixLength'].map((name) => ({ name, lib: 'ip/cidr', since: 30 })),
  ...['format.named', 'format.dns1123Label', 'format.dns1123Subdomain', 'format.dns1035Label', 'format.qualifiedName', 'format.labelValue', 'format.uri', 'format.uuid', 'format.byte', 'format.date', 'format.datetime'].map((name) => ({ name, g: true, lib: 'format', since: 31 })),
  { name: 'validate', lib: 'format', since: 31 },
  ...['semver', 'isSemver'].map((name) => ({ name, g: true, lib: 'semver', since: 33 })),
  ...['major', 'minor', 'patch'].map((name) => ({ name, lib: 'semver', since: 33 })),
  // cel-go extensions: strings v2 (1.29), sets (1.29), optional types (1.28), lists v3 (1.34)
  ...['charAt', 'indexOf', 'lastIndexOf', 'lowerAscii', 'upperAscii', 'replace', 'split', 'substring', 'trim', 'join', 'format', 'reverse'].map((name) => ({ name, lib: 'ext strings', since: 29 })),
  { name: 'strings.quote', g: true, lib: 'ext strings', since: 29 },
  ...['sets.contains', 'sets.equivalent', 'sets.intersects'].map((name) => ({ name, g: true, lib: 'ext sets', since: 29 })),
  ...['optional.of', 'optional.ofNonZeroValue', 'optional.none'].map((name) => ({ name, g: true, lib: 'optional', since: 28 })),
  ...['hasValue', 'value', 'orValue', 'or'].map((name) => ({ name, lib: 'optional', since: 28 })),
  { name: 'lists.range', g: true, lib: 'ext lists', since: 34 },
  ...['slice', 'flatten', 'distinct', 'reverse', 'first', 'last', 'sort', 'sortBy'].map((name) => ({ name, lib: 'ext lists', since: 34 })),
]);

/** "1.34" -> 34; NaN-safe (unknown: the newest). */
function minorOf(version) {
  const m = /^v?1\.(\d+)$/.exec(String(version ?? ''));
  return m ? Number(m[1]) : Infinity;
}

/** Names declared in `variables:` lists of the manifests (for `variables.` completion). */
export function declaredVariables(manifests) {
  const out = new Set();
  const lines = String(manifests ?? '').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*variables\s*:\s*$/.test(lines[i])) continue;
    const indent = lines[i].length - lines[i].trimStart().length;
    for (let j = i + 1; j < lines.length; j++) {
      const l = lines[j];
      if (l.trim() === '' || l.trimStart().startsWith('#')) continue;
      const ind = l.length - l.trimStart().length;
      if (ind < indent || (ind === indent && !l.trimStart().startsWith('-'))) break;
      const m = /^\s*(?:-\s+)?name\s*:\s*["']?([A-Za-z_][\w]*)/.exec(l);
      if (m) out.add(m[1]);
    }
  }
  return [...out];
}

/**
 * Keys under a dotted path (e.g. ["spec", "template"]) of a YAML document, by indentation: the
 * field names `object.spec.` can complete to. Best effort; [] when the path is not found.
 */
export function yamlKeysAt(text, path) {
  const lines = String(text ?? '').split('\n');
  let from = 0;
  let to = lines.length;
  let indent = -1;
  for (const seg of [...path, null]) {
    // Children of the current node: the lines in [from, to) with the smallest indent > indent.
    let childIndent = null;
    for (let i = from; i < to; i++) {
      const l = lines[i];
      if (l.trim() === '' || l.trimStart().startsWith('#') || l.trim() === '---') continue;
      const ind = l.length - l.trimStart().length;
      if (ind > indent) {
        childIndent = ind;
        break;
      }
    }
    if (childIndent === null) return [];
    const keys = [];
    let found = null;
    for (let i = from; i < to; i++) {
      const m = /^(\s*)([A-Za-z_][\w.\-/]*|"[^"]*")\s*:(?:\s|$)/.exec(lines[i]);
      if (!m || m[1].length !== childIndent) continue;
      const key = m[2].replace(/^"|"$/g, '');
      if (seg === null) keys.push(key);
      else if (key === seg) {
        let end = i + 1;
        while (end < to) {
          const l = lines[end];
          if (l.trim() !== '' && !l.trimStart().startsWith('#') && l.length - l.trimStart().length <= childIndent) break;
          end++;
        }
        found = { from: i + 1, to: end };
        break;
      }
    }
    if (seg === null) return [...new Set(keys)];
    if (!found) return [];
    from = found.from;
    to = found.to;
    indent = childIndent;
  }
  return [];
}

/**
 * Completion candidates at the end of `before` (the CEL text up to the cursor) for Kubernetes
 * `version`: {from, options: [{label, type, detail}]} with `from` an offset into `before`, or
 * null when nothing applies (inside a string, a number). `context`: {manifests, object,
 * oldObject} texts, for `variables.` and `object.` field names.
 */
export function celCompletions(before, version, context = {}) {
  const minor = minorOf(version);
  const enabled = (e) => (e.since ?? 0) <= minor;
  const toks = tokenizeCel(before);
  const last = toks.at(-1);
  if (last && last.to === before.length && (last.kind === 'string' || last.kind === 'number' || last.kind === 'comment')) return null;
  const m = /((?:[A-Za-z_][\w]*\s*\.\s*)*)([A-Za-z_][\w]*)?$/.exec(before);
  const word = m?.[2] ?? '';
  const from = before.length - word.length;
  const chain = (m?.[1] ?? '').split('.').map((s) => s.trim()).filter(Boolean);
  const member = /\.\s*[A-Za-z_\w]*$/.test(before);
  const options = [];
  if (!member) {
    for (const v of VARIABLES.filter(enabled)) options.push({ label: v.name, type: 'variable', detail: v.detail });
    for (const mac of MACROS.filter((x) => x.global && enabled(x))) options.push({ label: mac.name, type: 'keyword', detail: `macro ${mac.sig}` });
    for (const f of FUNCTIONS.filter((x) => x.g && enabled(x))) options.push({ label: f.name, type: 'function', detail: f.lib });
    for (const w of ['true', 'false', 'null', 'in']) options.push({ label: w, type: 'keyword' });
  } else {
    const root = chain[0];
    if (chain.length === 1 && root === 'variables') {
      for (const name of declaredVariables(context.manifests)) options.push({ label: name, type: 'variable', detail: 'spec.variables' });
    }
    if (root === 'object' || root === 'oldObject') {
      const keys = yamlKeysAt(root === 'object' ? context.object : context.oldObject, chain.slice(1));
      for (const k of keys) if (/^[A-Za-z_]\w*$/.test(k)) options.push({ label: k, type: 'property', detail: `${root} field` });
    }
    if (root === 'request' && chain.length === 1) {
      for (const k of ['kind', 'resource', 'subResource', 'requestKind', 'requestResource', 'requestSubResource', 'name', 'namespace', 'operation', 'userInfo', 'dryRun', 'options']) options.push({ label: k, type: 'property', detail: 'request field' });
    }
    for (const mac of MACROS.filter((x) => !x.global && enabled(x))) options.push({ label: mac.name, type: 'keyword', detail: `macro ${mac.sig}` });
    const seen = new Set();
    for (const f of FUNCTIONS.filter((x) => !x.g && enabled(x))) {
      if (seen.has(f.name)) continue;
      seen.add(f.name);
      options.push({ label: f.name, type: 'method', detail: f.lib });
    }
  }
  return { from, options };
}

// --- the package's completions ----------------------------------------------------------------

/**
 * The `objectKind` option (`"<apiVersion>/<Kind>"`: "apps/v1/Deployment", "v1/Pod") of an
 * object's YAML or JSON text, from its first document's top-level apiVersion and kind;
 * undefined when either is missing. Types `object` for the scratchpad's completion and hover
 * (main.js, through www/editor.js: not part of the page's first load).
 */
export function objectKindOf(text) {
  const t = String(text ?? '');
  let api;
  let kind;
  if (/^\s*\{/.test(t)) {
    try {
      ({ apiVersion: api, kind } = JSON.parse(t) ?? {});
    } catch {}
  } else {
    const first = t.split(/^---\s*$/m).find((d) => /\S/.test(d.replace(/^#.*$/gm, ''))) ?? '';
    const top = (key) => first.match(new RegExp(`^${key}:[ \\t]*["']?([^"'\\s#]+)["']?[ \\t]*(?:#.*)?$`, 'm'))?.[1];
    api = top('apiVersion');
    kind = top('kind');
  }
  return typeof api === 'string' && typeof kind === 'string' && api && kind ? `${api}/${kind}` : undefined;
}

/** CompletionItem.kind (the package's `complete`) -> CodeMirror's completion type (its icon). */
const ITEM_TYPES = { variable: 'variable', field: 'property', key: 'property', method: 'method', function: 'function', macro: 'keyword' };

/**
 * The package's completions as CodeMirror's, or null when it has none. `got`:
 * {from, to, items: [{label, kind, detail, documentation}]} (UTF-16 offsets in the document).
 * One option per item (the package gives one item per label). A multi-line detail (a function's signatures) shows its first line; all of it, and the
 * field's description, go to the info panel — as text (CodeMirror sets a string info as a
 * text node).
 */
export function packageCompletions(got, pos, docLength) {
  const items = Array.isArray(got?.items) ? got.items : [];
  if (items.length === 0 || !(got.from >= 0 && got.from <= pos)) return null;
  const options = [];
  // One item per label already (the package keeps a schema field over the same key of the object).
  for (const it of items) {
    const type = ITEM_TYPES[it.kind] ?? 'text';
    const detail = String(it.detail ?? '');
    const lines = detail.split('\n');
    const info = [lines.length > 1 ? detail : '', it.documentation ?? ''].filter(Boolean).join('\n\n');
    options.push({ label: String(it.label), type, detail: lines[0], ...(info ? { info } : {}) });
  }
  const to = got.to > pos && got.to <= docLength ? got.to : undefined;
  // A '.' asks again (the fields of the new receiver), so only word characters keep the list.
  return { from: got.from, ...(to !== undefined ? { to } : {}), options, validFor: /^\w*$/ };
}
