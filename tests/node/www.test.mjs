// node --test tests/node/www.test.mjs — the playground's pure modules (www/state.js,
// www/diagnostics.js, www/render.js) against results shaped per docs/result-format.md, and
// the examples inlined into www/index.html (scripts/inline-examples.mjs).
// No DOM, no wasm: these run before pkg/ exists.
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { encodeState, decodeState, normalizeState, emptyState, evaluateArgs, expressionArgs, chooseVersion, debounce, FIELDS, exampleCases, exampleSource } from '../../www/state.js';
import {
  formatDiagnostic,
  sortDiagnostics,
  positionAt,
  offsetAt,
  documentRanges,
  locateExpression,
  locateDiagnostic,
  editorForInput,
} from '../../www/diagnostics.js';
import { h, toDom, textOf, elementsOf, renderResult, renderExpressionResult, renderDiagnostics, renderObjectChanges, renderTypeChecking, toPlain, snippetOf, formatValue } from '../../www/render.js';
import { examplesElement, withExamples, exampleFiles } from '../../scripts/inline-examples.mjs';
import { deniedResult, allowedWithWarningsResult, typeErrorManifests, typeErrorDiagnostics } from './fixtures.mjs';

const sel = (text, r) => text.slice(r.start, r.end);
const byClass = (tree, cls) => elementsOf(tree).filter((n) => n.className.split(/\s+/).includes(cls));

// ---------------------------------------------------------------------------------- state.js

test('state: encode/decode round trip keeps every field, incl. non-ASCII and newlines', async () => {
  const state = {
    ...emptyState(),
    manifests: 'kind: ValidatingAdmissionPolicy\n# ü 😀 \u2028 end\n',
    object: '{"a": "\\u0000"}',
    request: 'operation: UPDATE',
    version: '1.31',
    example: 'replica-limit',
    expression: "object.metadata.name + '🚀'",
  };
  const hash = await encodeState(state);
  assert.match(hash, /^#s=[zj][A-Za-z0-9_-]+$/);
  assert.deepEqual(await decodeState(hash), state);
  assert.deepEqual(await decodeState(hash.slice(1)), state, 'leading # optional');
});

test('state: the hash is compressed', async () => {
  const big = { ...emptyState(), manifests: 'apiVersion: admissionregistration.k8s.io/v1\n'.repeat(200) };
  const hash = await encodeState(big);
  assert.ok(hash.length < big.manifests.length / 10, `hash length ${hash.length}`);
});

test('state: garbage hashes decode to null, never throw', async () => {
  const b64 = (s) => Buffer.from(s).toString('base64url');
  const garbage = [
    undefined,
    null,
    42,
    '',
    '#',
    '#s=',
    '#s=z',
    '#s=j',
    '#s=zzzzz',
    '#s=z!!!!',
    '#s=x' + b64('{}'),
    '#other=1',
    '#s=j' + b64('not json'),
    '#s=j' + b64('[1,2]'),
    '#s=j' + b64('null'),
    '#s=j' + b64('"text"'),
    '#s=j' + Buffer.from([0xff, 0xfe, 0x00]).toString('base64url'),
    '#s=z' + Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 37) & 255)).toString('base64url'),
  ];
  for (const g of garbage) assert.equal(await decodeState(g), null, `hash ${JSON.stringify(g)}`);
});

test('state: decoded fields are checked (types, unknown keys)', async () => {
  const b64 = Buffer.from(JSON.stringify({ manifests: 5, object: 'x', version: ['1.30'], evil: '<script>', __proto__x: 1 })).toString('base64url');
  const s = await decodeState('#s=j' + b64);
  assert.deepEqual(Object.keys(s).sort(), [...FIELDS].sort());
  assert.equal(s.manifests, '');
  assert.equal(s.object, 'x');
  assert.equal(s.version, '');
  assert.deepEqual(normalizeState('nope'), emptyState());
});

test('state: evaluate/evaluateExpression arguments leave out empty editors', () => {
  const s = { ...emptyState(), manifests: 'm', object: 'o', oldObject: '  \n', request: '', version: '', expression: 'e', scratchParams: 'p' };
  assert.deepEqual(evaluateArgs(s, ['1.30', '1.37', '1.9']), [{ manifests: 'm', unboundPolicies: 'preview', object: 'o', kubernetesVersion: '1.37' }]);
  assert.deepEqual(evaluateArgs(s, []), [{ manifests: 'm', unboundPolicies: 'preview', object: 'o' }]);
  assert.deepEqual(expressionArgs({ ...s, version: '1.30' }, ['1.30', '1.37']), ['e', { object: 'o', params: 'p' }, { kind: 'variable', kubernetesVersion: '1.30' }]);
});

test('state: chooseVersion keeps a supported choice, else the newest (numeric order)', () => {
  assert.equal(chooseVersion('1.31', ['1.30', '1.31']), '1.31');
  assert.equal(chooseVersion('1.99', ['1.9', '1.10', '1.30']), '1.30');
  assert.equal(chooseVersion('', ['1.9', '1.10']), '1.10');
  assert.equal(chooseVersion('', []), undefined);
});

test('state: exampleCases gives the passing and failing files, the second request inheriting the first\'s', () => {
  const ex = { object: 'a.object.yaml', request: 'a.request.yaml', passing: { object: 'a.passing.yaml' } };
  assert.deepEqual(exampleCases(ex), {
    passing: { object: 'a.passing.yaml', oldObject: '', request: 'a.request.yaml' },
    failing: { object: 'a.object.yaml', oldObject: '', request: 'a.request.yaml' },
  });
  const flipped = { object: 'b.object.yaml', failing: { request: 'b.failing-request.yaml' } };
  assert.deepEqual(exampleCases(flipped), {
    passing: { object: 'b.object.yaml', oldObject: '', request: '' },
    failing: { object: 'b.object.yaml', oldObject: '', request: 'b.failing-request.yaml' },
  });
  for (const bad of [undefined, null, {}, { passing: 'x' }, { failing: null }]) assert.equal(exampleCases(bad), null);
});

test('state: exampleSource shows only https URLs', () => {
  assert.equal(exampleSource({ source: 'https://kubernetes.io/docs/x/#y' }), 'https://kubernetes.io/docs/x/#y');
  for (const source of ['javascript:alert(1)', 'http://example.com', 'https://a b', '"https://x"', 3, undefined]) {
    assert.equal(exampleSource({ source }), null, String(source));
  }
  assert.equal(exampleSource(null), null);
});

test('state: debounce runs once with the last arguments after the delay', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const calls = [];
    const d = debounce((x) => calls.push(x), 150);
    d(1);
    d(2);
    mock.timers.tick(149);
    d(3);
    mock.timers.tick(149);
    assert.deepEqual(calls, []);
    mock.timers.tick(1);
    assert.deepEqual(calls, [3]);
    d(4);
    d.flush();
    assert.deepEqual(calls, [3, 4]);
  } finally {
    mock.timers.reset();
  }
});

// ---------------------------------------------------------------------------- diagnostics.js

test('diagnostics: list label "ERROR 3:14 field: message"', () => {
  assert.equal(
    formatDiagnostic({ severity: 'error', line: 3, column: 14, field: 'spec.validations[0].expression', message: "found no matching overload for '_+_' applied to '(int, string)'" }),
    "ERROR 3:14 spec.validations[0].expression: found no matching overload for '_+_' applied to '(int, string)'",
  );
  assert.equal(formatDiagnostic({ severity: 'warning', field: '', message: 'no position' }), 'WARNING: no position');
});

test('diagnostics: sorted errors, warnings, info, stable inside a severity', () => {
  const l = [{ severity: 'info', message: 'i' }, { severity: 'error', message: 'e1' }, { severity: 'warning', message: 'w' }, { severity: 'error', message: 'e2' }];
  assert.deepEqual(sortDiagnostics(l).map((d) => d.message), ['e1', 'e2', 'w', 'i']);
});

test('diagnostics: UTF-16 offsets and 1-based line/column with an emoji and an accented letter', () => {
  const text = 'a😀é\nbc';
  // a=0, 😀=1..2 (surrogate pair), é=3, \n=4, b=5
  assert.deepEqual(positionAt(text, 3), { line: 1, column: 4 });
  assert.deepEqual(positionAt(text, 5), { line: 2, column: 1 });
  assert.equal(offsetAt(text, 1, 4), 3);
  assert.equal(offsetAt(text, 2, 2), 6);
  assert.equal(offsetAt(text, 9, 9), text.length, 'clamped');
});

test('diagnostics: input source selects in the named editor with UTF-16 offsets', () => {
  const object = 'metadata:\n  name: "😀-x"\n';
  const start = object.indexOf('-x');
  const d = { severity: 'error', message: 'bad name', field: 'metadata.name', source: { kind: 'input', name: 'object' }, start, end: start + 2 };
  const r = locateDiagnostic(d, { object });
  assert.deepEqual(r, { editor: 'object', start, end: start + 2 });
  assert.equal(sel(object, r), '-x');
  assert.equal(editorForInput('oldObject'), 'oldObject');
  assert.equal(locateDiagnostic({ ...d, source: { kind: 'input', name: 'nonsense' } }, { object }), null);
  assert.equal(locateDiagnostic({ message: 'no source' }, { object }), null);
});

test('diagnostics: input source with only line/column', () => {
  const request = 'operation: PATCH\nuserInfo: {}\n';
  const r = locateDiagnostic({ source: { kind: 'input', name: 'request' }, line: 1, column: 12, endLine: 1, endColumn: 17 }, { request });
  assert.equal(sel(request, r), 'PATCH');
});

test('diagnostics: manifest source offsets index the whole manifests text', () => {
  const manifests = 'kind: A\n---\nkind: 😀B\nspec: [\n';
  const start = manifests.indexOf('B');
  const r = locateDiagnostic({ source: { kind: 'manifest', document: 1 }, start, end: start + 1 }, { manifests });
  assert.deepEqual(r, { editor: 'manifests', start, end: start + 1 });
  assert.deepEqual(documentRanges(manifests).map(([s, e]) => manifests.slice(s, e)), ['kind: A\n', 'kind: 😀B\nspec: [\n']);
});

test('diagnostics: expression offsets map into the manifest (double-quoted scalar)', () => {
  const [, d] = typeErrorDiagnostics;
  const r = locateDiagnostic(d, { manifests: typeErrorManifests });
  assert.equal(r.editor, 'manifests');
  assert.equal(sel(typeErrorManifests, r), '<=');
  assert.equal(positionAt(typeErrorManifests, r.start).line, 7);
});

test('diagnostics: expression with an emoji maps by UTF-16 offsets', () => {
  const expression = "'😀' + 1";
  const manifests = `spec:\n  validations:\n  - expression: "${expression}"\n`;
  const start = expression.indexOf('+'); // 5: the emoji is two code units
  assert.equal(start, 5);
  const r = locateDiagnostic({ source: { kind: 'expression', expression }, start, end: start + 1 }, { manifests });
  assert.equal(sel(manifests, r), '+');
});

test('diagnostics: expression in a block scalar (indentation skipped)', () => {
  const manifests = [
    'spec:',
    '  validations:',
    '  - expression: >-',
    '      object.spec.replicas <= 5 &&',
    "      object.metadata.name != ''",
    '    message: x',
    '',
  ].join('\n');
  const expression = "object.spec.replicas <= 5 && object.metadata.name != ''"; // folded: newline -> space
  const start = expression.indexOf('!=');
  const r = locateDiagnostic({ source: { kind: 'expression', expression }, start, end: start + 2 }, { manifests });
  assert.equal(sel(manifests, r), '!=');
  const literal = "object.spec.replicas <= 5 &&\n  object.metadata.name != ''\n";
  const manifests2 = manifests.replace('>-', '|').replace("      object.metadata.name", "        object.metadata.name");
  const r2 = locateDiagnostic({ source: { kind: 'expression', expression: literal }, start: literal.indexOf('!='), end: literal.indexOf('!=') + 2 }, { manifests: manifests2 });
  assert.equal(sel(manifests2, r2), '!=');
});

test('diagnostics: the same expression in two policies selects the one in the field\'s policy', () => {
  const doc = (name) => `apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: ${name}\nspec:\n  validations:\n  - expression: "object.x == 1"\n`;
  const manifests = doc('first') + '---\n' + doc('second');
  const d = { source: { kind: 'expression', expression: 'object.x == 1' }, field: 'ValidatingAdmissionPolicy/second: spec.validations[0].expression', start: 9, end: 11 };
  const r = locateDiagnostic(d, { manifests });
  assert.equal(sel(manifests, r), '==');
  assert.ok(r.start > manifests.indexOf('---'), 'in the second document');
  assert.equal(locateExpression(manifests, 'not there'), null);
});

test('diagnostics: scratchpad expression sources index the scratchpad expression', () => {
  const expression = 'oops + 1';
  const d = { source: { kind: 'expression', expression }, start: 0, end: 4 };
  assert.deepEqual(locateDiagnostic(d, { expression }, 'expression'), { editor: 'expression', start: 0, end: 4 });
});

// --------------------------------------------------------------------------------- render.js

test('render: denied result shows DENIED, code and reason, the full status message and the first denial', () => {
  const result = deniedResult();
  const { tree } = renderResult(result);
  const banner = elementsOf(tree).find((n) => n.attrs['data-decision']);
  assert.equal(banner.attrs['data-decision'], 'denied');
  assert.match(textOf(banner), /^DENIED422 InvalidKubernetes 1\.37$/);
  const status = elementsOf(tree).find((n) => n.attrs['data-testid'] === 'status-message');
  assert.equal(textOf(status), result.response.status.message);
  const first = byClass(tree, 'first-denial');
  assert.equal(first.length, 1);
  assert.match(textOf(first[0]), /validations\[0\]object\.spec\.replicas <= int\(params\.data\.maxReplicas\)/);
  assert.match(textOf(first[0]), /message: spec\.replicas is 50, the limit is 5/);
  const policies = elementsOf(tree).filter((n) => n.attrs['data-policy']);
  assert.deepEqual(policies.map((p) => p.attrs['data-policy']), ['replica-limit.example.com', 'zz-unrelated.example.com']);
  assert.equal(policies[0].attrs.open, '', 'matched policies open');
  assert.equal(policies[1].attrs.open, undefined, 'unmatched policies collapsed');
  assert.ok(textOf(tree).includes('param policy-config/replica-limit-hard'));
});

test('render: webhooks listed in order, called or skipped with the reason; user text stays text', () => {
  const result = {
    ...allowedWithWarningsResult(),
    webhooks: [
      { configuration: 'c', kind: 'MutatingWebhookConfiguration', name: 'm.example.com', called: false, reason: '<b>namespace</b> "x" does not satisfy', matchConditions: [] },
      {
        configuration: 'c', kind: 'ValidatingWebhookConfiguration', name: 'v.example.com', called: true, matchedRule: 0,
        matchConditions: [{ name: 'not-system', expression: 'true', result: true, cost: 1 }],
        review: { kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1', request: { uid: 'u' } },
      },
    ],
  };
  const { tree } = renderResult(result);
  const hooks = elementsOf(tree).filter((n) => n.attrs['data-webhook']);
  assert.deepEqual(hooks.map((w) => w.attrs['data-webhook']), ['m.example.com', 'v.example.com']);
  assert.match(textOf(hooks[0]), /^not calledmutating c\/m\.example\.com — <b>namespace<\/b> "x" does not satisfy$/);
  assert.match(textOf(hooks[1]), /^calledvalidating c\/v\.example\.com/);
  assert.ok(textOf(hooks[1]).includes('"apiVersion": "admission.k8s.io/v1"'));
  assert.ok(elementsOf(tree).every((n) => n.tag !== 'b'), 'user text never becomes markup');
  // No webhooks: no section.
  assert.equal(elementsOf(renderResult(allowedWithWarningsResult()).tree).filter((n) => n.attrs['data-webhook']).length, 0);
});

test('render: allowed result with warnings and audit annotations', () => {
  const result = allowedWithWarningsResult();
  const { tree } = renderResult(result);
  assert.equal(elementsOf(tree).find((n) => n.attrs['data-decision']).attrs['data-decision'], 'allowed');
  assert.equal(elementsOf(tree).find((n) => n.attrs['data-testid'] === 'status-message'), undefined);
  const warnings = byClass(tree, 'warning').map(textOf);
  assert.deepEqual(warnings, result.response.warnings);
  const dts = elementsOf(tree).filter((n) => n.tag === 'dt' && n.className === '').map(textOf);
  assert.ok(dts.includes('replica-limit.example.com/replicas'));
  assert.ok(dts.includes('validation.policy.admission.k8s.io/validation_failure'));
  assert.equal(byClass(tree, 'first-denial').length, 0);
  assert.ok(byClass(tree, 'pill-action-warn').length >= 1);
});

test('render: a hypothetical binding (unboundPolicies: preview) is labelled as such', () => {
  const result = allowedWithWarningsResult();
  const binding = result.policies[0].bindings[0];
  Object.assign(binding, { name: '(hypothetical)', hypothetical: true });
  const { tree } = renderResult(result);
  const [b] = byClass(tree, 'hypothetical');
  assert.ok(b, 'the binding carries the hypothetical class');
  assert.match(textOf(b), /hypothetical.*no binding — as if bound with Deny/);
  assert.ok(!textOf(b).includes('binding (hypothetical)'));
  assert.equal(byClass(tree, 'hypothetical').length, 1);
});

test('render: diagnostics list, clickable only where a position is known', () => {
  const { tree, sorted } = renderDiagnostics(typeErrorDiagnostics, (d) => locateDiagnostic(d, { manifests: typeErrorManifests }));
  assert.equal(sorted[0].severity, 'error');
  const items = elementsOf(tree).filter((n) => n.tag === 'li');
  assert.equal(items.length, 2);
  assert.ok(items[0].className.includes('clickable'));
  assert.equal(items[0].attrs['data-diagnostic'], 0);
  assert.ok(!items[1].className.includes('clickable'));
  assert.equal(
    textOf(byClass(tree, 'diagnostic-line')[0]),
    "ERROR 1:28 ValidatingAdmissionPolicy/name-length.example.com: spec.validations[0].expression: found no matching overload for '_<=_' applied to '(int, string)'",
  );
  assert.equal(textOf(byClass(tree, 'diagnostic-rendered')[0]), " | size(object.metadata.name) <= '30'\n | ...........................^");
  assert.equal(snippetOf('WARNING: x'), '');
  assert.match(textOf(tree), /Diagnostics \(1 errors, 1 warnings\)/);
});

test('render: scratchpad value, type and cost; errors show diagnostics instead', () => {
  const ok = renderExpressionResult({ value: ['a', 1, true], type: 'list(dyn)', cost: 4, diagnostics: [] });
  assert.equal(textOf(elementsOf(ok.tree).find((n) => n.attrs['data-testid'] === 'scratch-value')), '["a",1,true]');
  assert.match(textOf(ok.tree), /type list\(dyn\)cost 4/);
  const bad = renderExpressionResult({ diagnostics: [{ severity: 'error', message: "undeclared reference to 'oops' (in container '')", field: '', line: 1, column: 1 }] });
  assert.equal(elementsOf(bad.tree).find((n) => n.attrs['data-testid'] === 'scratch-value'), undefined);
  assert.match(textOf(bad.tree), /ERROR 1:1: undeclared reference to 'oops'/);
  assert.equal(formatValue('a"b'), '"a\\"b"');
  assert.equal(formatValue(null), 'null');
});

// A document stand-in that records what toDom does and refuses any HTML parsing API.
function fakeDocument() {
  const log = [];
  const forbidden = new Set(['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'srcdoc']);
  const element = (tag) => {
    const el = { tag, attributes: {}, children: [], className: '' };
    el.setAttribute = (k, v) => {
      log.push(['setAttribute', tag, k, v]);
      el.attributes[k] = v;
    };
    el.appendChild = (c) => el.children.push(c);
    return new Proxy(el, {
      set(target, key, value) {
        if (forbidden.has(key)) throw new Error(`toDom set ${String(key)}`);
        target[key] = value;
        return true;
      },
    });
  };
  return {
    log,
    createElement: (tag) => {
      log.push(['createElement', tag]);
      return element(tag);
    },
    createTextNode: (text) => {
      log.push(['createTextNode', text]);
      return { text };
    },
  };
}

test('render: user text stays text (XSS payload in message, warning, annotation, expression, diagnostic)', () => {
  const payload = '<img src=x onerror="alert(1)">';
  const result = deniedResult(payload, payload);
  result.response.auditAnnotations[`${payload}/k`] = payload;
  result.policies[0].bindings[0].evaluations[0].validations[0].expression = payload;
  result.policies[0].name = payload;
  result.diagnostics = [{ severity: 'error', message: payload, field: payload, rendered: `ERROR: x\n${payload}` }];
  const { tree } = renderResult(result);
  const tags = new Set(elementsOf(tree).map((n) => n.tag));
  assert.ok(!tags.has('img') && !tags.has('script'), [...tags].join(','));
  assert.ok(textOf(tree).includes(`denied request: ${payload}`));

  const doc = fakeDocument();
  toDom(tree, doc);
  const created = doc.log.filter(([op]) => op === 'createElement').map(([, t]) => t);
  assert.ok(!created.includes('img'));
  const texts = doc.log.filter(([op]) => op === 'createTextNode').map(([, t]) => t);
  assert.ok(texts.filter((t) => t.includes(payload)).length >= 6, 'payload written as text nodes');
  const attrValues = doc.log.filter(([op]) => op === 'setAttribute').map(([, , k, v]) => `${k}=${v}`);
  assert.ok(attrValues.every((a) => !a.startsWith('on')), attrValues.join(' '));
});

test('render: toDom sets only allow-listed attributes', () => {
  const doc = fakeDocument();
  const el = toDom(h('a', { className: 'x', attrs: { onclick: 'evil()', href: 'javascript:evil()', style: 'x', 'data-ok': 1, title: 't', hidden: false } }, 'text'), doc);
  assert.deepEqual(el.attributes, { 'data-ok': '1', title: 't' });
  assert.equal(el.className, 'x');
  assert.deepEqual(el.children, [{ text: 'text' }]);
});

test('render: h() flattens children and skips null/false', () => {
  const n = h('p', null, 'a', null, false, ['b', ['c']], 0);
  assert.deepEqual(n.children, ['a', 'b', 'c', '0']);
});

test('render: engine results with Maps (serde-wasm-bindgen) or JSON text are normalised', () => {
  const r = toPlain({ response: { allowed: true, auditAnnotations: new Map([['p/k', 'v']]), warnings: [] }, list: [new Map([['a', 1]])] });
  assert.deepEqual(r, { response: { allowed: true, auditAnnotations: { 'p/k': 'v' }, warnings: [] }, list: [{ a: 1 }] });
  assert.deepEqual(toPlain('{"a":[1]}'), { a: [1] });
  assert.equal(toPlain('1.37'), '1.37');
});

test('render: objectChanges grouped by object — path, before → after, why; collapsed; user text stays text', () => {
  const payload = '<img src=x onerror="alert(1)">';
  const result = deniedResult();
  result.objectChanges = [
    { object: 'object', path: 'spec.replicas', after: 1, reason: 'default' },
    { object: 'object', path: 'spec.template.metadata.creationTimestamp', before: '2024-01-01T00:00:00.5Z', after: '2024-01-01T00:00:00Z', reason: 'canonical' },
    { object: 'ConfigMap default/params', path: `data[${payload}]`, before: payload, reason: 'pruned' },
  ];
  const { tree } = renderResult(result);
  const [box] = byClass(tree, 'object-changes');
  assert.equal(box.tag, 'details');
  assert.equal(box.attrs.open, undefined, 'collapsed');
  assert.match(textOf(box.children[0]), /^Object changes \(3\)/);
  const groups = byClass(box, 'subsection').map((g) => textOf(g.children[0]));
  assert.deepEqual(groups, ['object', 'ConfigMap default/params']);
  const lines = byClass(box, 'change').map(textOf);
  assert.deepEqual(lines, [
    'spec.replicas (absent) → 1 defaulted',
    'spec.template.metadata.creationTimestamp "2024-01-01T00:00:00.5Z" → "2024-01-01T00:00:00Z" canonical form',
    `data[${payload}] ${JSON.stringify(payload)} → (removed) pruned: not in the type or the CRD schema`,
  ]);
  assert.ok(!elementsOf(tree).some((n) => n.tag === 'img'));
  // Nothing changed (or objectsAsGiven): no section.
  assert.equal(renderObjectChanges(undefined), null);
  assert.equal(renderObjectChanges([]), null);
  assert.equal(byClass(renderResult(deniedResult()).tree, 'object-changes').length, 0);
});

test('render: each policy shows status.typeChecking.expressionWarnings (typecheck()) and vap-eval\'s further type-check warnings', () => {
  const result = deniedResult();
  const name = result.policies[0].name;
  const warning = "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replica'\n | object.spec.replica > 1\n | ...........^\n";
  const typeChecks = [{ name, typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning }] }, checkedKinds: ['apps/v1, Kind=Deployment'] }];
  result.diagnostics = [
    { severity: 'warning', code: 'cel-typecheck-vap-eval', message: "undefined field 'nme'", field: `ValidatingAdmissionPolicy/${name}: spec.variables[0].expression`, rendered: '' },
    { severity: 'warning', code: 'cel-typecheck-vap-eval', message: 'another policy', field: 'ValidatingAdmissionPolicy/other: spec.variables[0].expression', rendered: '' },
  ];
  const { tree } = renderResult(result, undefined, typeChecks);
  const [tc] = byClass(tree, 'typechecking');
  const text = textOf(tc);
  assert.ok(text.startsWith('status.typeChecking.expressionWarnings (1)'), text);
  assert.deepEqual(byClass(tc, 'typecheck-warning').map(textOf), [warning, "undefined field 'nme'"]);
  assert.deepEqual(byClass(tc, 'expr-name').map(textOf), ['spec.validations[0].expression', 'spec.variables[0].expression']);
  assert.ok(!text.includes('another policy'));
  // Checked, nothing found: says against what.
  const clean = renderTypeChecking(name, { name, typeChecking: { expressionWarnings: [] }, checkedKinds: ['apps/v1, Kind=Deployment'] });
  assert.equal(textOf(clean), 'status.typeChecking.expressionWarnings (0)none — checked against apps/v1, Kind=Deployment');
  assert.match(textOf(renderTypeChecking(name, { name, typeChecking: { expressionWarnings: [] }, checkedKinds: [] })), /no matched kind has a schema/);
  // Not known (the first result, before typecheck ran): nothing.
  assert.equal(renderTypeChecking(name, undefined, []), null);
  assert.equal(byClass(renderResult(deniedResult()).tree, 'typechecking').length, 0);
});

test('render: a type-checking warning whose field a diagnostic locates has a ↗ button (data-goto-field); without a position, none', () => {
  const result = deniedResult();
  const name = result.policies[0].name;
  const prefix = `ValidatingAdmissionPolicy/${name}: `;
  const typeChecks = [{ name, typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning: 'w' }, { fieldRef: 'spec.validations[1].expression', warning: 'w2' }] }, checkedKinds: ['apps/v1, Kind=Deployment'] }];
  result.diagnostics = [
    { severity: 'warning', code: 'cel-typecheck', message: 'm', field: `${prefix}spec.validations[0].expression`, start: 40, end: 47, rendered: '' },
    { severity: 'warning', code: 'cel-typecheck', message: 'no position', field: `${prefix}spec.validations[1].expression`, rendered: '' },
    { severity: 'warning', code: 'cel-typecheck-vap-eval', message: 'n', field: `${prefix}spec.variables[0].expression`, start: 10, end: 12, rendered: '' },
    { severity: 'warning', code: 'cel-typecheck', message: 'other policy', field: 'ValidatingAdmissionPolicy/other: spec.validations[1].expression', start: 1, end: 2, rendered: '' },
  ];
  const [tc] = byClass(renderResult(result, undefined, typeChecks).tree, 'typechecking');
  const buttons = elementsOf(tc).filter((e) => e.attrs?.['data-goto-field']);
  assert.deepEqual(buttons.map((b) => b.attrs['data-goto-field']), ['spec.validations[0].expression', 'spec.variables[0].expression']);
  assert.ok(buttons.every((b) => b.tag === 'button' && b.attrs['aria-label'] === 'show in the editor' && textOf(b) === '↗'));
});

// ------------------------------------------------------------------------------ the examples

test('examples: index.json lists existing files; every manifest holds a policy and a binding', () => {
  const dir = new URL('../../www/examples/', import.meta.url);
  const index = JSON.parse(fs.readFileSync(new URL('index.json', dir), 'utf8'));
  assert.ok(index.examples.some((e) => e.name === index.default));
  const names = new Set();
  for (const ex of index.examples) {
    assert.ok(!names.has(ex.name), `duplicate ${ex.name}`);
    names.add(ex.name);
    assert.equal(ex.manifests, `${ex.name}.yaml`);
    for (const f of exampleFiles(ex)) assert.ok(fs.existsSync(new URL(f, dir)), `${ex.name}: ${f} missing`);
    // Two requests, one allowed and one denied (www/examples/README.md).
    const cases = exampleCases(ex);
    assert.ok(cases, `${ex.name}: no passing or failing request`);
    const second = ex.passing ?? ex.failing;
    assert.equal(second.expect?.allowed, 'passing' in ex, `${ex.name}: the second request's expect.allowed`);
    assert.equal(ex.expect?.allowed, !('passing' in ex), `${ex.name}: the first request's expect.allowed`);
    if (ex.source !== undefined) assert.equal(exampleSource(ex), ex.source, `${ex.name}: source is not an https URL`);
    assert.ok(['Apache-2.0', 'CC-BY-4.0'].includes(ex.license), `${ex.name}: license ${ex.license}`);
    const m = fs.readFileSync(new URL(ex.manifests, dir), 'utf8');
    // A Kyverno example holds a ClusterPolicy or Policy instead (docs/kyverno-semantics.md).
    const kyverno = /^apiVersion: kyverno\.io\/v1\nkind: (Cluster)?Policy$/m.test(m);
    if (!kyverno) {
      assert.match(m, /^apiVersion: admissionregistration\.k8s\.io\/v1\nkind: ValidatingAdmissionPolicy$/m, ex.name);
      assert.match(m, /^kind: ValidatingAdmissionPolicyBinding$/m, ex.name);
      assert.match(m, /validationActions: \[/, ex.name);
    }
    assert.ok(!/\t/.test(m), `${ex.name}: tab in YAML`);
    assert.equal(typeof ex.expect?.allowed, 'boolean', `${ex.name}: expect.allowed`);
    for (const { expect } of [ex, second]) {
      if (expect.allowed) continue;
      if (!kyverno) assert.match(expect.message, / is forbidden: ValidatingAdmissionPolicy '/, ex.name);
      else assert.match(expect.message, /^admission webhook "validate\.kyverno\.svc-(fail|ignore)" denied the request: /, ex.name);
    }
  }
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  for (const f of files) assert.ok(names.has(f.split('.')[0]), `${f} is not listed in index.json`);
});

test('index.html inlines the current example list and default example (scripts/inline-examples.mjs)', () => {
  const www = new URL('../../www/', import.meta.url);
  const html = fs.readFileSync(new URL('index.html', www), 'utf8');
  assert.equal(withExamples(html, examplesElement(new URL('examples/', www))), html, 'stale: run node scripts/inline-examples.mjs');
  const json = /<script type="application\/json" id="examples-data">(.*?)<\/script>/s.exec(html)?.[1];
  assert.ok(json, 'no examples-data element');
  assert.ok(!json.includes('<'), 'a raw < in the inlined JSON');
  const data = JSON.parse(json);
  const index = JSON.parse(fs.readFileSync(new URL('examples/index.json', www), 'utf8'));
  assert.equal(data.default, index.default);
  assert.deepEqual(data.examples.map((e) => e.name), index.examples.map((e) => e.name));
  assert.ok(data.examples.every((e) => !('expect' in e) && !('expect' in (e.passing ?? e.failing ?? {}))), 'the tests\' expectations are not shipped');
  const ex = index.examples.find((e) => e.name === index.default);
  const files = exampleFiles(ex);
  assert.ok(files.length > 3, 'both requests of the default example are inlined');
  assert.deepEqual(Object.keys(data.files).sort(), files.sort());
  for (const f of files) assert.equal(data.files[f], fs.readFileSync(new URL(`examples/${f}`, www), 'utf8'), f);
});

test('inline-examples: text that could end the script element survives the round trip', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vap-inline-'));
  try {
    const hostile = 'a: "</script><!-- <script>"\nb: \u2028\n';
    fs.writeFileSync(path.join(dir, 'index.json'), JSON.stringify({ default: 'x', examples: [{ name: 'x', manifests: 'x.yaml', expect: { allowed: true } }] }));
    fs.writeFileSync(path.join(dir, 'x.yaml'), hostile);
    const element = examplesElement(pathToFileURL(dir + path.sep));
    const inner = element.slice(element.indexOf('>') + 1, element.lastIndexOf('</script>'));
    assert.ok(!inner.includes('<'));
    assert.deepEqual(JSON.parse(inner), { default: 'x', examples: [{ name: 'x', manifests: 'x.yaml' }], files: { 'x.yaml': hostile } });
    const page = '<head>\n  <!-- examples:begin -->\n  old\n  <!-- examples:end -->\n</head>';
    assert.equal(withExamples(page, element), `<head>\n  <!-- examples:begin -->\n  ${element}\n  <!-- examples:end -->\n</head>`);
    assert.throws(() => withExamples('<head></head>', element), /no "<!-- examples:begin/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------- editor/cel.js, files, kubectl

import { tokenizeCel, celRegions, celCompletions, declaredVariables, yamlKeysAt, packageCompletions, objectKindOf } from '../../www/editor/cel.js';
import { unwrapLists, routeFile } from '../../www/state.js';
import { kubectlLines } from '../../www/render.js';

test('cel.js: tokens of an expression, by kind', () => {
  const text = "has(object.spec) && object.spec.replicas <= int('5') && x in [1, 2.5, 0x1Fu] // c";
  const toks = tokenizeCel(text).map((t) => [text.slice(t.from, t.to), t.kind]);
  assert.deepEqual(toks.slice(0, 6), [['has', 'function'], ['object', 'variable'], ['spec', 'property'], ['&&', 'operator'], ['object', 'variable'], ['spec', 'property']]);
  assert.ok(toks.some(([s, k]) => s === "'5'" && k === 'string'));
  assert.ok(toks.some(([s, k]) => s === 'int' && k === 'function'));
  assert.ok(toks.some(([s, k]) => s === 'in' && k === 'keyword'));
  assert.ok(toks.some(([s, k]) => s === '0x1Fu' && k === 'number'));
  assert.ok(toks.some(([s, k]) => s === '2.5' && k === 'number'));
  assert.deepEqual(toks.at(-1), ['// c', 'comment']);
  // An unterminated string runs to the end instead of throwing.
  assert.deepEqual(tokenizeCel("'abc").map((t) => t.kind), ['string']);
});

test('cel.js: the CEL fields of a YAML text (plain, quoted, block scalars), as UTF-16 ranges', () => {
  const yaml = [
    'validations:',
    '- expression: "object.a > 1"',
    '  messageExpression: "\'x\' + \'y\'"',
    '- expression: |',
    '    object.b ==',
    '      2',
    '  message: not CEL',
    'matchConditions:',
    "- expression: size('é') == 1 # comment",
  ].join('\n');
  const got = celRegions(yaml).map((r) => yaml.slice(r.from, r.to));
  assert.deepEqual(got, ['object.a > 1', "'x' + 'y'", '    object.b ==\n      2', "size('é') == 1"]);
});

test('cel.js: completion offers variables, macros and functions of the version, and fields', () => {
  const labels = (r) => r.options.map((o) => o.label);
  const top = celCompletions('obj', '1.30');
  assert.equal(top.from, 0);
  assert.ok(labels(top).includes('object') && labels(top).includes('authorizer') && labels(top).includes('has'));
  assert.ok(labels(top).includes('quantity'), 'quantity (1.28) in 1.30');
  assert.ok(!labels(top).includes('semver'), 'semver is 1.33');
  assert.ok(labels(celCompletions('s', '1.33')).includes('semver'));
  const member = celCompletions('object.spec.containers.', '1.37', {});
  assert.equal(member.from, 'object.spec.containers.'.length);
  assert.ok(labels(member).includes('all') && labels(member).includes('exists_one') && labels(member).includes('includes'));
  assert.ok(!labels(celCompletions('x.', '1.36')).includes('includes'), 'includes is 1.37');
  const object = 'apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n  hostNetwork: true\nmetadata:\n  name: p\n';
  assert.deepEqual(yamlKeysAt(object, ['spec']), ['containers', 'hostNetwork']);
  assert.ok(labels(celCompletions('object.spec.ho', '1.37', { object })).includes('hostNetwork'));
  const manifests = 'spec:\n  variables:\n  - name: images\n    expression: x\n  - name: "bad"\n  validations: []\n';
  assert.deepEqual(declaredVariables(manifests), ['images', 'bad']);
  assert.ok(labels(celCompletions('variables.', '1.37', { manifests })).includes('images'));
  assert.equal(celCompletions("'abc", '1.37'), null, 'nothing inside a string');
});

test('cel.js: the package\'s completions become CodeMirror\'s (type, detail, documentation as info text); none -> null', () => {
  const got = {
    from: 12,
    to: 15,
    items: [
      { label: 'replicas', kind: 'field', detail: 'int', documentation: 'Number of desired pods.' },
      { label: 'size', kind: 'method', detail: 'size(list) -> int\nsize(map) -> int', documentation: '' },
      { label: 'all', kind: 'macro', detail: 'list.all(x, p) -> bool', documentation: '' },
      { label: 'tier', kind: 'key', detail: 'string', documentation: '' },
    ],
  };
  const r = packageCompletions(got, 13, 40);
  assert.deepEqual(r.options, [
    { label: 'replicas', type: 'property', detail: 'int', info: 'Number of desired pods.' },
    { label: 'size', type: 'method', detail: 'size(list) -> int', info: 'size(list) -> int\nsize(map) -> int' },
    { label: 'all', type: 'keyword', detail: 'list.all(x, p) -> bool' },
    { label: 'tier', type: 'property', detail: 'string' },
  ]);
  assert.equal(r.from, 12);
  assert.equal(r.to, 15, 'the rest of the word at the cursor is replaced');
  assert.ok(r.validFor.test('rep') && !r.validFor.test('spec.'), "a '.' asks again");
  assert.equal(packageCompletions({ ...got, to: 13 }, 13, 40).to, undefined);
  assert.equal(packageCompletions({ from: 0, to: 0, items: [] }, 0, 1), null, 'nothing: the table answers');
  assert.equal(packageCompletions(null, 0, 1), null);
  assert.equal(packageCompletions({ ...got, from: 20 }, 13, 40), null, 'a range after the cursor is not used');
});

test('cel.js: objectKindOf gives the scratchpad\'s objectKind from the Object editor\'s first document (YAML or JSON)', () => {
  assert.equal(objectKindOf('apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n'), 'apps/v1/Deployment');
  assert.equal(objectKindOf('kind: "Pod"\napiVersion: v1 # core\n'), 'v1/Pod');
  assert.equal(objectKindOf('{"apiVersion": "v1", "kind": "Pod"}'), 'v1/Pod');
  assert.equal(objectKindOf('# c\n---\napiVersion: v1\nkind: Pod\n---\napiVersion: apps/v1\nkind: Deployment\n'), 'v1/Pod');
  assert.equal(objectKindOf('spec:\n  apiVersion: v1\n  kind: Pod\n'), undefined, 'nested keys are not the object\'s');
  assert.equal(objectKindOf('apiVersion: v1\n'), undefined, 'no kind');
  for (const t of ['', '{bad', 'null', '[1]', null, undefined]) assert.equal(objectKindOf(t), undefined, String(t));
});

test('files: kubectl get -o yaml Lists unwrap into documents; files route to the right editor', () => {
  const list = 'apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n  data:\n    k: |\n      line\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: b\nkind: List\nmetadata:\n  resourceVersion: ""\n';
  assert.equal(unwrapLists(list), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: |\n    line\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n');
  assert.equal(routeFile(list).editor, 'manifests', 'several documents');
  assert.equal(routeFile('apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n').editor, 'object');
  assert.equal(routeFile('kind: ValidatingAdmissionPolicy\n').editor, 'manifests');
  assert.equal(unwrapLists('a: 1\r\n---\nb: 2\n'), 'a: 1\n---\nb: 2\n');
});

test('kubectlLines: what kubectl prints for Forbidden, Invalid (from its cause) and allowed responses', () => {
  // kubectl cmdutil: StandardErrorMessage for reasons other than Invalid; checkErr renders
  // Invalid statuses with details from their causes ("<field>: <message>", field empty here).
  const forbidden = { response: { allowed: false, warnings: ['w1'], status: { code: 403, reason: 'Forbidden', message: 'pods "p" is forbidden: no', details: { name: 'p', kind: 'pods', causes: [{ message: 'no' }] } } } };
  assert.deepEqual(kubectlLines(forbidden), ['Warning: w1', 'Error from server (Forbidden): pods "p" is forbidden: no']);
  const invalid = { response: { allowed: false, status: { code: 422, reason: 'Invalid', message: 'deployments.apps "d" is forbidden: m', details: { name: 'd', group: 'apps', kind: 'deployments', causes: [{ message: 'm' }] } } } };
  assert.deepEqual(kubectlLines(invalid), ['The deployments "d" is invalid: : m']);
  assert.deepEqual(kubectlLines({ response: { allowed: true, warnings: [] } }), []);
  const text = textOf(renderResult(invalid).tree);
  assert.ok(text.includes('kubectl says') && text.includes('The deployments "d" is invalid: : m'));
});

test('render: a body that does not decode (400): kubectl\'s line, and why no policy was evaluated', () => {
  const message = 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32';
  const result = {
    response: { allowed: false, warnings: [], auditAnnotations: {}, status: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 400, reason: 'BadRequest', message } },
    policies: [],
    webhooks: [],
    diagnostics: [{ severity: 'info', code: 'admission-chain-stopped', field: '', message: "The apiserver's decoder rejected the request: mutating admission, the registry, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook and Kyverno did not run", rendered: '' }],
  };
  assert.deepEqual(kubectlLines(result), [`Error from server (BadRequest): ${message}`]);
  const text = textOf(renderResult(result).tree);
  assert.ok(text.includes("Not evaluated: The apiserver's decoder rejected the request"), text);
  assert.ok(!text.includes('No ValidatingAdmissionPolicy in the manifests'));
});

test('render: Kyverno results show each rule, its result and action; user text stays text', () => {
  const kyverno = {
    policies: [
      {
        kind: 'ClusterPolicy', name: 'pod-hygiene', reason: 'evaluated',
        rules: [
          { name: 'autogen-<img src=x onerror=alert(1)>', result: 'fail', message: 'image <b>nginx</b> uses :latest', action: 'Enforce', path: 'spec.rules[0]', evaluations: [] },
          { name: 'pattern-rule', action: 'Audit', unsupported: 'validate.pattern is evaluated by Kyverno without CEL', path: 'spec.rules[1]', evaluations: [] },
        ],
        notMatched: [{ rule: 'other', reason: 'rule other not matched:\n 1. kind does not match [Service]' }],
        validatingAdmissionPolicy: { generated: false, message: 'skip generating ValidatingAdmissionPolicy: multiple rules are not applicable.' },
      },
    ],
    webhooks: [{ name: 'validate.kyverno.svc-fail', policies: ['ClusterPolicy/pod-hygiene'], allowed: false, message: 'm', warnings: [] }],
    response: { allowed: false, warnings: [], auditAnnotations: {} },
  };
  const { tree } = renderResult({ ...deniedResult, kyverno });
  const text = textOf(tree);
  assert.match(text, /Kyverno policies/);
  assert.match(text, /ClusterPolicy pod-hygiene/);
  assert.match(text, /autogen-<img src=x onerror=alert\(1\)>/);
  assert.match(text, /image <b>nginx<\/b> uses :latest/);
  assert.match(text, /not evaluated by vap-eval: validate\.pattern/);
  assert.match(text, /multiple rules are not applicable/);
  assert.match(text, /validate\.kyverno\.svc-fail: denied \(ClusterPolicy\/pod-hygiene\)/);
  // No element is made from user text: only the renderer's own tags.
  const tags = new Set(elementsOf(tree).map((e) => e.tag));
  for (const t of tags) assert.ok(['section', 'div', 'h3', 'h4', 'h5', 'p', 'span', 'details', 'summary', 'ul', 'li', 'pre', 'table', 'tr', 'td', 'th', 'tbody', 'thead', 'code', 'strong', 'em'].includes(t), t);
  // Without Kyverno policies there is no Kyverno section.
  assert.doesNotMatch(textOf(renderResult(deniedResult).tree), /Kyverno policies/);
});
