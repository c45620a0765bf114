// Diagnostics (docs/result-format.md `Diagnostic`) -> list labels and editor selections.
//
// Offsets are UTF-16 code units everywhere (the contract's `start`/`end`, JS string indices and
// `textarea.setSelectionRange` all agree), lines and columns are 1-based. A diagnostic points into:
//   source.kind "input"      -> the editor named by source.name (object, oldObject, request, ...);
//   source.kind "manifest"   -> the Manifests editor; offsets index the whole manifests text;
//   source.kind "expression" -> a CEL expression; we find that expression in the Manifests text
//                               (or it is the scratchpad's own expression) and map the offsets.

/** Editor ids a diagnostic can select text in. */
export const EDITORS = Object.freeze(['manifests', 'object', 'oldObject', 'request', 'scratchParams', 'expression']);

const INPUT_NAMES = new Map([
  ['manifests', 'manifests'],
  ['manifest', 'manifests'],
  ['object', 'object'],
  ['oldobject', 'oldObject'],
  ['old-object', 'oldObject'],
  ['old_object', 'oldObject'],
  ['request', 'request'],
  ['params', 'scratchParams'],
  ['expression', 'expression'],
]);

/** The editor an `{kind: "input", name}` source names, or null. */
export function editorForInput(name) {
  return typeof name === 'string' ? INPUT_NAMES.get(name.toLowerCase()) ?? null : null;
}

/** "ERROR 3:14 spec.validations[0].expression: message" (position and field only when known). */
export function formatDiagnostic(d) {
  const parts = [String(d?.severity ?? 'error').toUpperCase()];
  if (Number.isInteger(d?.line)) parts.push(Number.isInteger(d.column) ? `${d.line}:${d.column}` : `${d.line}`);
  const head = parts.join(' ');
  const field = typeof d?.field === 'string' && d.field !== '' ? ` ${d.field}` : '';
  return `${head}${field}: ${d?.message ?? ''}`;
}

const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 };

/** Errors first, then warnings, then info; stable otherwise (the engine's order is meaningful). */
export function sortDiagnostics(list) {
  return (Array.isArray(list) ? list : [])
    .map((d, i) => [d, i])
    .sort(([a, i], [b, j]) => (SEVERITY_ORDER[a?.severity] ?? 3) - (SEVERITY_ORDER[b?.severity] ?? 3) || i - j)
    .map(([d]) => d);
}

/** Counts by severity: {error, warning, info}. */
export function countDiagnostics(list) {
  const c = { error: 0, warning: 0, info: 0 };
  for (const d of Array.isArray(list) ? list : []) if (d && d.severity in c) c[d.severity]++;
  return c;
}

/** UTF-16 offset of each line start. */
export function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

/** 1-based {line, column} (column in UTF-16 units) of a UTF-16 offset. */
export function positionAt(text, offset) {
  const o = Math.max(0, Math.min(offset, text.length));
  const starts = lineStarts(text);
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= o) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: o - starts[lo] + 1 };
}

/** UTF-16 offset of a 1-based line/column, clamped to the text. */
export function offsetAt(text, line, column) {
  const starts = lineStarts(text);
  const l = Math.max(1, Math.min(line, starts.length));
  const lineEnd = l < starts.length ? starts[l] - 1 : text.length;
  return Math.min(starts[l - 1] + Math.max(0, column - 1), lineEnd);
}

/** [start, end) UTF-16 ranges of the `---`-separated YAML documents of a manifests text. */
export function documentRanges(text) {
  const ranges = [];
  const re = /^---[ \t]*(?:#.*)?$/gm;
  let start = 0;
  let m;
  while ((m = re.exec(text)) !== null) {
    if (m.index > 0 || start > 0) ranges.push([start, m.index]);
    start = Math.min(text.length, m.index + m[0].length + 1);
  }
  ranges.push([start, text.length]);
  return ranges;
}

/**
 * Where `expression` is written in `text`: an array mapping each UTF-16 offset 0..expression.length
 * of the expression to an offset in `text`, or null. Handles plain, quoted (no escapes before the
 * mapped offset) and block scalars: indentation, line folds, quotes and backslashes in the text
 * are skipped while walking. `prefer` = [start, end) of the text to search first (the policy's
 * document).
 */
export function locateExpression(text, expression, prefer = null) {
  if (typeof text !== 'string' || typeof expression !== 'string' || expression.trim() === '') return null;
  const lead = expression.length - expression.trimStart().length;
  const body = expression.slice(lead);
  // The first run without whitespace, quotes or backslashes is written verbatim in any style.
  const probe = /^[^\s'"\\]+/.exec(body)?.[0] ?? body[0];
  const candidates = [];
  for (let p = text.indexOf(probe); p !== -1 && candidates.length < 1000; p = text.indexOf(probe, p + 1)) {
    candidates.push(p);
  }
  if (prefer) {
    const inside = (p) => p >= prefer[0] && p < prefer[1];
    candidates.sort((a, b) => Number(inside(b)) - Number(inside(a)) || a - b);
  }
  for (const p of candidates) {
    const map = align(text, p, body);
    if (map) return [...new Array(lead).fill(p), ...map];
  }
  return null;
}

function isSkippable(c) {
  return c === ' ' || c === '\t' || c === '\r' || c === '\n' || c === '"' || c === "'" || c === '\\';
}

// Walks `needle` against `text` from `pos`; returns needle.length + 1 offsets or null.
function align(text, pos, needle) {
  const map = new Array(needle.length + 1);
  let j = pos;
  for (let i = 0; i < needle.length; i++) {
    const vc = needle[i];
    for (;;) {
      if (j >= text.length) return null;
      const sc = text[j];
      const fold = (vc === ' ' || vc === '\n') && sc === '\n';
      if (sc === vc || fold) {
        map[i] = j++;
        break;
      }
      if (!isSkippable(sc)) return null;
      j++;
    }
  }
  map[needle.length] = j;
  return map;
}

/** "ValidatingAdmissionPolicy/demo: spec..." -> {kind, name}, or null. */
export function objectOfField(field) {
  const m = /^([A-Za-z]+)\/([^:\s]+):/.exec(field ?? '');
  return m ? { kind: m[1], name: m[2] } : null;
}

/** The document range of `kind`/`name` in a manifests text (first match), or null. */
export function findDocument(text, kind, name) {
  for (const [s, e] of documentRanges(text)) {
    const doc = text.slice(s, e);
    if (new RegExp(`^kind:\\s*["']?${escapeRe(kind)}["']?\\s*$`, 'm').test(doc) &&
        new RegExp(`^\\s+name:\\s*["']?${escapeRe(name)}["']?\\s*$`, 'm').test(doc)) {
      return [s, e];
    }
  }
  return null;
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Where to select for a diagnostic: {editor, start, end} (UTF-16, start <= end) or null when it
 * has no usable position. `texts` holds the editor texts by editor id; `context` is "evaluate"
 * (manifest expressions) or "expression" (the scratchpad: expression sources are its input).
 */
export function locateDiagnostic(d, texts, context = 'evaluate') {
  if (!d || typeof d !== 'object') return null;
  const src = d.source;
  const hasOffsets = Number.isInteger(d.start);
  const range = (editor, text, start, end) => {
    if (typeof text !== 'string') return null;
    const s = Math.max(0, Math.min(start, text.length));
    const e = Math.max(s, Math.min(Number.isInteger(end) ? end : s, text.length));
    return { editor, start: s, end: e };
  };
  const fromLines = (editor, text) => {
    if (typeof text !== 'string' || !Number.isInteger(d.line)) return null;
    const s = offsetAt(text, d.line, d.column ?? 1);
    const e = Number.isInteger(d.endLine) ? offsetAt(text, d.endLine, d.endColumn ?? 1) : s;
    return range(editor, text, s, e);
  };
  if (!src) return null;
  if (src.kind === 'input' || src.kind === 'manifest') {
    const editor = src.kind === 'manifest' ? 'manifests' : editorForInput(src.name);
    if (!editor) return null;
    const text = texts[editor];
    return hasOffsets ? range(editor, text, d.start, d.end) : fromLines(editor, text);
  }
  if (src.kind === 'expression') {
    if (context === 'expression') {
      return hasOffsets ? range('expression', texts.expression, d.start, d.end) : fromLines('expression', texts.expression);
    }
    const text = texts.manifests;
    const owner = objectOfField(d.field);
    const prefer = owner ? findDocument(text ?? '', owner.kind, owner.name) : null;
    const map = locateExpression(text, src.expression, prefer);
    if (!map) return null;
    let start = d.start;
    let end = d.end;
    if (!hasOffsets && Number.isInteger(d.line)) {
      start = offsetAt(src.expression, d.line, d.column ?? 1);
      end = Number.isInteger(d.endLine) ? offsetAt(src.expression, d.endLine, d.endColumn ?? 1) : start;
    }
    if (!Number.isInteger(start)) return range('manifests', text, map[0], map[map.length - 1]);
    const clamp = (o) => map[Math.max(0, Math.min(o, map.length - 1))];
    return range('manifests', text, clamp(start), clamp(Number.isInteger(end) ? end : start));
  }
  return null;
}
