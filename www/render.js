// Results (docs/result-format.md) -> a plain tree, and that tree -> DOM.
//
// A node is either a string (text) or {tag, className, attrs, children}. Rendering builds only
// these plain objects, so it is tested in Node without a DOM; toDom() is the one place that
// creates elements, and it writes user text only through text nodes, never as HTML.

import { formatDiagnostic, sortDiagnostics, countDiagnostics } from './diagnostics.js';

/** Attributes toDom() will set; anything else (on*, href, style, src, ...) is dropped. */
const ATTR_ALLOWED = /^(?:title|role|tabindex|colspan|open|type|aria-[a-z-]+|data-[a-z0-9-]+)$/;

/** Element node. `props`: {className?, attrs?}; children: nodes, strings, arrays, null/false (skipped). */
export function h(tag, props, ...children) {
  return {
    tag,
    className: props?.className ?? '',
    attrs: props?.attrs ?? {},
    children: flatten(children),
  };
}

function flatten(children) {
  const out = [];
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) out.push(...flatten(c));
    else if (typeof c === 'object') out.push(c);
    else out.push(String(c));
  }
  return out;
}

/** Builds DOM nodes from a tree with `doc` (a `document`). User text only ever becomes text nodes. */
export function toDom(node, doc) {
  if (typeof node === 'string') return doc.createTextNode(node);
  const el = doc.createElement(node.tag);
  if (node.className) el.className = node.className;
  for (const [k, v] of Object.entries(node.attrs ?? {})) {
    if (ATTR_ALLOWED.test(k) && v !== null && v !== undefined && v !== false) el.setAttribute(k, String(v));
  }
  for (const c of node.children ?? []) el.appendChild(toDom(c, doc));
  return el;
}

/** All text of a tree, depth first (tests and accessibility labels). */
export function textOf(node) {
  if (typeof node === 'string') return node;
  return (node.children ?? []).map(textOf).join('');
}

/** Every element node of a tree, depth first. */
export function elementsOf(node, out = []) {
  if (typeof node === 'string') return out;
  out.push(node);
  for (const c of node.children ?? []) elementsOf(c, out);
  return out;
}

/** A CEL/JSON value for display: strings quoted as CEL would print them, the rest as JSON. */
export function formatValue(v) {
  if (v === undefined) return '';
  if (typeof v === 'string') return JSON.stringify(v);
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

const pill = (text, kind) => h('span', { className: `pill pill-${kind}` }, text);

/**
 * A button that selects the expression at `fieldRef` (`spec.validations[0].expression`) of the
 * enclosing `[data-policy]` in the Manifests editor, located through the result's diagnostic of
 * that field (main.js wires every `button[data-goto-field]`). Null when no diagnostic of the
 * field has a position.
 */
function gotoField(fieldRef, prefix, diagnostics) {
  if (typeof fieldRef !== 'string' || !diagnostics.some((d) => d?.field === prefix + fieldRef && Number.isInteger(d.start))) return null;
  return h('button', { className: 'goto', attrs: { type: 'button', 'data-goto-field': fieldRef, title: 'show this expression in the editor', 'aria-label': 'show in the editor' } }, '↗');
}

/**
 * A button that selects `expression` in the Manifests editor (main.js wires every
 * `button[data-goto]`, finding it in the document of the enclosing `[data-policy]`).
 */
function gotoExpr(expression) {
  if (typeof expression !== 'string' || expression.trim() === '') return null;
  return h('button', { className: 'goto', attrs: { type: 'button', 'data-goto': expression, title: 'show this expression in the editor', 'aria-label': 'show in the editor' } }, '↗');
}

/**
 * What kubectl prints for this response (stderr): a `Warning: ` line per warning, then for a
 * denial `Error from server (<reason>): <message>` (kubectl cmdutil.StandardErrorMessage), or for
 * reason Invalid with details, `The <kind> "<name>" is invalid: : <cause>` (cmdutil.checkErr
 * renders Invalid statuses from their causes, each as "<field>: <message>"; the field is empty).
 */
export function kubectlLines(result) {
  const res = result?.response ?? {};
  const lines = (Array.isArray(res.warnings) ? res.warnings : []).map((w) => `Warning: ${w}`);
  const st = res.status;
  if (res.allowed === true || !st) return lines;
  const d = st.details;
  if (st.reason === 'Invalid' && d && Array.isArray(d.causes) && d.causes.length > 0) {
    const head = d.kind || d.name ? `The ${d.kind ?? ''} ${JSON.stringify(d.name ?? '')} is invalid` : 'The request is invalid';
    const causes = d.causes.map((c) => `${c.field ?? ''}: ${c.message ?? ''}`);
    lines.push(causes.length === 1 ? `${head}: ${causes[0]}` : `${head}: \n${causes.map((c) => `* ${c}`).join('\n')}`);
  } else if (st.reason === 'Invalid' && !d) {
    lines.push(`The request is invalid${st.message ? `: ${st.message}` : ''}`);
  } else if (st.reason === 'Unauthorized') {
    lines.push(`error: You must be logged in to the server (${st.message ?? ''})`);
  } else {
    lines.push(st.reason ? `Error from server (${st.reason}): ${st.message ?? ''}` : `Error from server: ${st.message ?? ''}`);
  }
  return lines;
}

/** kubectlLines() as a terminal-like block. */
export function renderKubectl(result) {
  const lines = kubectlLines(result);
  if (lines.length === 0) return null;
  return h('div', { className: 'block kubectl' }, h('h3', null, 'kubectl says'), h('pre', { className: 'kubectl-output', attrs: { 'data-testid': 'kubectl' } }, lines.join('\n')));
}

/** The decision banner plus response details (status message, warnings, audit annotations). */
export function renderResponse(result) {
  const res = result?.response ?? {};
  const st = res.status;
  const allowed = res.allowed === true;
  const banner = h(
    'div',
    { className: `decision ${allowed ? 'decision-allowed' : 'decision-denied'}`, attrs: { 'data-decision': allowed ? 'allowed' : 'denied', role: 'status' } },
    h('span', { className: 'decision-word' }, allowed ? 'ALLOWED' : 'DENIED'),
    !allowed && st ? h('span', { className: 'decision-code' }, `${st.code ?? ''} ${st.reason ?? ''}`.trim()) : null,
    result?.kubernetesVersion ? h('span', { className: 'decision-version' }, `Kubernetes ${result.kubernetesVersion}`) : null,
  );
  const warnings = Array.isArray(res.warnings) ? res.warnings : [];
  const annotations = Object.entries(res.auditAnnotations ?? {});
  return h(
    'section',
    { className: 'response' },
    banner,
    !allowed && st
      ? h('div', { className: 'block' }, h('h3', null, 'status.message'), h('pre', { className: 'status-message', attrs: { 'data-testid': 'status-message' } }, st.message ?? ''))
      : null,
    warnings.length
      ? h(
          'div',
          { className: 'block' },
          h('h3', null, `Warnings (${warnings.length})`),
          h('ul', { className: 'warnings', attrs: { 'data-testid': 'warnings' } }, warnings.map((w) => h('li', { className: 'warning' }, w))),
        )
      : null,
    annotations.length
      ? h(
          'div',
          { className: 'block' },
          h('h3', null, `Audit annotations (${annotations.length})`),
          h('dl', { className: 'annotations' }, annotations.flatMap(([k, v]) => [h('dt', null, k), h('dd', null, h('code', null, String(v)))])),
        )
      : null,
    warnings.length === 0 || annotations.length === 0
      ? h(
          'p',
          { className: 'block compact muted' },
          [warnings.length === 0 ? 'No warnings.' : null, annotations.length === 0 ? 'No audit annotations.' : null].filter(Boolean).join(' '),
        )
      : null,
  );
}

/** The admission attributes the engine used. */
export function renderRequest(request) {
  if (!request || typeof request !== 'object') return null;
  const gvk = request.kind ?? {};
  const gvr = request.resource ?? {};
  const u = request.userInfo ?? {};
  const rows = [
    ['operation', request.operation],
    ['kind', [gvk.group, gvk.version, gvk.kind].filter(Boolean).join('/')],
    ['resource', [gvr.group, gvr.version, gvr.resource].filter(Boolean).join('/') + (request.subResource ? `/${request.subResource}` : '')],
    ['namespace', request.namespace],
    ['name', request.name],
    ['user', [u.username, Array.isArray(u.groups) && u.groups.length ? `(${u.groups.join(', ')})` : ''].filter(Boolean).join(' ')],
    ['dryRun', request.dryRun === undefined ? '' : String(request.dryRun)],
  ];
  return h(
    'details',
    { className: 'request-attrs' },
    h('summary', null, 'Request attributes'),
    h('dl', { className: 'kv' }, rows.flatMap(([k, v]) => [h('dt', null, k), h('dd', null, v === undefined || v === '' ? '—' : String(v))])),
  );
}

function exprLine(r, label) {
  // Booleans pass or fail; other values (variables, messages) are just "ok" when they evaluated.
  const state = !r.evaluated ? 'skipped' : r.error !== undefined ? 'error' : r.value === false ? 'fail' : 'pass';
  const word = state === 'pass' && typeof r.value !== 'boolean' ? 'ok' : state === 'skipped' ? 'not evaluated' : state;
  return h(
    'li',
    { className: `expr expr-${state}` },
    h('div', { className: 'expr-head' }, pill(word, state), label ? h('span', { className: 'expr-name' }, label) : null, h('code', { className: 'expr-code' }, r.expression ?? ''), costOf(r.cost), gotoExpr(r.expression)),
    r.evaluated && r.error === undefined ? h('div', { className: 'expr-value' }, '→ ', h('code', null, formatValue(r.value)), r.type ? h('span', { className: 'type' }, ` : ${r.type}`) : null) : null,
    r.error !== undefined ? h('pre', { className: 'expr-error' }, r.error) : null,
  );
}

const costOf = (c) => (typeof c === 'number' ? h('span', { className: 'cost', attrs: { title: 'runtime cost' } }, `cost ${c}`) : null);

function validationLine(v) {
  const state = v.decision === 'admit' ? 'pass' : v.decision === 'error' ? 'error' : 'fail';
  return h(
    'li',
    { className: `expr validation expr-${state}${v.firstDenial ? ' first-denial' : ''}`, attrs: { 'data-validation-index': v.index } },
    h(
      'div',
      { className: 'expr-head' },
      pill(v.decision ?? '?', state),
      h('span', { className: 'expr-name' }, `validations[${v.index}]`),
      h('code', { className: 'expr-code' }, v.expression ?? ''),
      costOf(v.cost),
      gotoExpr(v.expression),
      v.firstDenial ? h('span', { className: 'pill pill-first', attrs: { title: 'this decision is the one the response reports' } }, 'first denial') : null,
    ),
    v.result !== undefined ? h('div', { className: 'expr-value' }, '→ ', h('code', null, String(v.result))) : null,
    v.error !== undefined ? h('pre', { className: 'expr-error' }, v.error) : null,
    v.message !== undefined ? h('div', { className: 'expr-message' }, h('span', { className: 'label' }, 'message: '), h('span', null, v.message)) : null,
    v.messageExpression ? h('ul', { className: 'exprs nested' }, exprLine(v.messageExpression, 'messageExpression')) : null,
    v.reason || (v.actions && v.actions.length)
      ? h(
          'div',
          { className: 'expr-meta' },
          v.reason ? h('span', null, `reason ${v.reason}`) : null,
          v.actions && v.actions.length ? h('span', null, 'actions ', v.actions.map((a) => pill(a, `action-${a.toLowerCase()}`))) : null,
        )
      : null,
  );
}

function auditLine(a) {
  const state = a.error !== undefined ? 'error' : a.published ? 'pass' : 'skipped';
  return h(
    'li',
    { className: `expr expr-${state}` },
    h('div', { className: 'expr-head' }, pill(a.published ? 'published' : a.error !== undefined ? 'error' : 'omitted', state), h('span', { className: 'expr-name' }, a.key ?? ''), h('code', { className: 'expr-code' }, a.valueExpression ?? ''), costOf(a.cost), gotoExpr(a.valueExpression)),
    a.error === undefined ? h('div', { className: 'expr-value' }, '→ ', h('code', null, formatValue(a.value ?? null))) : h('pre', { className: 'expr-error' }, a.error),
  );
}

function section(title, items, fn) {
  if (!Array.isArray(items) || items.length === 0) return null;
  return h('div', { className: 'subsection' }, h('h5', null, title), h('ul', { className: 'exprs' }, items.map(fn)));
}

function renderParamEvaluation(e) {
  const p = e.param;
  const label = p === null || p === undefined ? 'no param' : `param ${p.namespace ? `${p.namespace}/` : ''}${p.name}`;
  const cost = e.cost ?? {};
  return h(
    'div',
    { className: `evaluation ${e.matched ? '' : 'not-matched'}` },
    h(
      'h4',
      null,
      label,
      e.matched ? null : h('span', { className: 'muted' }, ' — matchConditions not met, no decisions'),
      h('span', { className: 'cost' }, ` cost ${cost.matchConditions ?? 0} + ${cost.validations ?? 0} + ${cost.auditAnnotations ?? 0}`),
    ),
    section('matchConditions', e.matchConditions, (r) => exprLine(r, r.name)),
    section('variables', e.variables, (r) => exprLine(r, r.name)),
    section('validations', e.validations, validationLine),
    section('auditAnnotations', e.auditAnnotations, auditLine),
  );
}

function renderBinding(b) {
  return h(
    'div',
    { className: `binding ${b.matched ? 'matched' : 'not-matched'}${b.hypothetical ? ' hypothetical' : ''}` },
    h(
      'h4',
      { className: 'binding-head' },
      pill(b.matched ? 'matched' : 'not matched', b.matched ? 'pass' : 'skipped'),
      // No such binding exists: the policy has none and was evaluated as if bound with Deny.
      b.hypothetical ? pill('hypothetical', 'skipped') : null,
      h('span', { className: 'name' }, b.hypothetical ? 'no binding — as if bound with Deny' : `binding ${b.name}`),
      (b.validationActions ?? []).map((a) => pill(a, `action-${String(a).toLowerCase()}`)),
    ),
    b.reason ? h('p', { className: 'reason muted' }, b.reason) : null,
    b.configurationError ? h('pre', { className: 'config-error' }, b.configurationError) : null,
    (b.evaluations ?? []).map(renderParamEvaluation),
  );
}

/** ObjectChange.reason (docs/result-format.md) in words. */
const CHANGE_REASONS = Object.freeze({
  default: 'defaulted',
  droppedZeroValue: 'empty omitempty field dropped',
  nullForNonOmitempty: 'nil field without omitempty, stored as null',
  zeroValue: 'zero value of a field without omitempty',
  pruned: 'pruned: not in the type or the CRD schema',
  canonical: 'canonical form',
});

/**
 * `objectChanges`: what the apiserver's decoding, defaulting and storage form changed in the
 * object, old object, params and namespaces before the policies read them — path, before →
 * after, why — grouped by object, in the result's order. Collapsed; null when nothing changed.
 */
export function renderObjectChanges(changes) {
  const list = Array.isArray(changes) ? changes : [];
  if (list.length === 0) return null;
  const groups = new Map();
  for (const c of list) {
    const key = String(c?.object ?? '');
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(c);
  }
  const side = (v, absent) => (v === undefined ? h('span', { className: 'muted' }, absent) : h('code', null, formatValue(v)));
  return h(
    'details',
    { className: 'object-changes', attrs: { 'data-testid': 'object-changes' } },
    h('summary', null, `Object changes (${list.length})`, h('span', { className: 'muted' }, ' — what decoding and defaulting changed before the policies read the objects')),
    [...groups].map(([object, cs]) =>
      h(
        'div',
        { className: 'subsection' },
        h('h5', null, object),
        h(
          'ul',
          { className: 'changes' },
          cs.map((c) =>
            h(
              'li',
              { className: 'change', attrs: { 'data-path': c.path ?? '' } },
              h('code', { className: 'change-path' }, c.path ?? ''),
              ' ',
              side(c.before, '(absent)'),
              ' → ',
              side(c.after, '(removed)'),
              ' ',
              h('span', { className: 'change-reason muted', attrs: { title: c.reason ?? '' } }, CHANGE_REASONS[c.reason] ?? c.reason ?? ''),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * A policy's type checking: `status.typeChecking.expressionWarnings` as the apiserver writes it
 * (`tc`: an entry of typecheck()'s `policies`, or the policy's own `typeChecking`), then the
 * warnings vap-eval adds beyond the status (diagnostics `cel-typecheck-vap-eval` of this policy:
 * variables, matchConditions, auditAnnotations). Each warning whose field a diagnostic locates
 * has a ↗ button (gotoField). Null when neither is known.
 */
export function renderTypeChecking(name, tc, diagnostics = []) {
  const prefix = `ValidatingAdmissionPolicy/${name}: `;
  const all = Array.isArray(diagnostics) ? diagnostics : [];
  const extra = all.filter((d) => d?.code === 'cel-typecheck-vap-eval' && String(d.field ?? '').startsWith(prefix));
  if (!tc && extra.length === 0) return null;
  const warnings = Array.isArray(tc?.typeChecking?.expressionWarnings) ? tc.typeChecking.expressionWarnings : [];
  const kinds = Array.isArray(tc?.checkedKinds) ? tc.checkedKinds : [];
  return h(
    'div',
    { className: 'subsection typechecking', attrs: { 'data-testid': 'typechecking' } },
    tc ? h('h5', null, `status.typeChecking.expressionWarnings (${warnings.length})`) : null,
    tc && warnings.length === 0
      ? h('p', { className: 'muted compact' }, kinds.length ? `none — checked against ${kinds.join('; ')}` : 'none — no matched kind has a schema to check against')
      : null,
    warnings.length
      ? h(
          'ul',
          { className: 'exprs' },
          warnings.map((w) => h('li', { className: 'expr expr-warning' }, h('div', { className: 'expr-head' }, pill('warning', 'warning'), h('span', { className: 'expr-name' }, w.fieldRef ?? ''), gotoField(w.fieldRef, prefix, all)), h('pre', { className: 'typecheck-warning' }, w.warning ?? ''))),
        )
      : null,
    extra.length
      ? [
          h('h5', null, `also type-checked by vap-eval, not in the status (${extra.length})`),
          h(
            'ul',
            { className: 'exprs' },
            extra.map((d) => h('li', { className: 'expr expr-warning' }, h('div', { className: 'expr-head' }, pill('warning', 'warning'), h('span', { className: 'expr-name' }, String(d.field).slice(prefix.length)), gotoField(String(d.field).slice(prefix.length), prefix, all)), h('pre', { className: 'typecheck-warning' }, d.message ?? ''))),
          ),
        ]
      : null,
  );
}

/**
 * Per policy -> binding -> param trace. Unmatched policies are collapsed. `typeChecks`:
 * typecheck()'s `policies` (matched by name), `diagnostics`: the result's, for the type checking
 * of each policy.
 */
export function renderPolicies(policies, typeChecks = null, diagnostics = []) {
  const list = Array.isArray(policies) ? policies : [];
  const checks = Array.isArray(typeChecks) ? typeChecks : [];
  if (list.length === 0) {
    // The chain stopped before the policies (the decoder's 400, a mutating webhook's rejection).
    const stopped = (Array.isArray(diagnostics) ? diagnostics : []).find((d) => d?.code === 'admission-chain-stopped');
    return h('p', { className: 'muted' }, stopped ? `Not evaluated: ${stopped.message ?? ''}` : 'No ValidatingAdmissionPolicy in the manifests.');
  }
  return h(
    'div',
    { className: 'policies' },
    list.map((p) =>
      h(
        'details',
        { className: `policy ${p.matched ? 'matched' : 'not-matched'}`, attrs: { 'data-policy': p.name, ...(p.matched ? { open: '' } : {}) } },
        h(
          'summary',
          null,
          pill(p.matched ? 'matched' : 'not matched', p.matched ? 'pass' : 'skipped'),
          h('span', { className: 'name' }, p.name),
          p.reason ? h('span', { className: 'reason muted' }, ` — ${p.reason}`) : null,
        ),
        p.configurationError ? h('pre', { className: 'config-error' }, p.configurationError) : null,
        renderTypeChecking(p.name, p.typeChecking ? p : checks.find((c) => c?.name === p.name), diagnostics),
        (p.bindings ?? []).map(renderBinding),
      ),
    ),
  );
}

/** Webhooks in the apiserver's order: called or skipped with the reason, matchConditions, review. */
export function renderWebhooks(webhooks) {
  const list = Array.isArray(webhooks) ? webhooks : [];
  return h(
    'div',
    { className: 'policies webhooks' },
    list.map((w) =>
      h(
        'details',
        { className: `policy ${w.called ? 'matched' : 'not-matched'}`, attrs: { 'data-webhook': w.name } },
        h(
          'summary',
          null,
          pill(w.called ? 'called' : 'not called', w.called ? 'pass' : 'skipped'),
          h('span', { className: 'name' }, `${w.kind === 'MutatingWebhookConfiguration' ? 'mutating' : 'validating'} ${w.configuration}/${w.name}`),
          w.reason ? h('span', { className: 'reason muted' }, ` — ${w.reason}`) : null,
        ),
        (w.matchConditions ?? []).length
          ? h('ul', { className: 'exprs' }, w.matchConditions.map((c) => exprLine({ ...c, evaluated: true, value: c.result }, c.name)))
          : null,
        w.review ? h('pre', { className: 'review' }, JSON.stringify(w.review, null, 2)) : null,
      ),
    ),
  );
}

/** Kyverno policies (result.kyverno): per policy, the rules Kyverno reports and the CEL trace. */
export function renderKyverno(kyverno) {
  const list = Array.isArray(kyverno?.policies) ? kyverno.policies : [];
  const rule = (r) =>
    h(
      'div',
      { className: `kyverno-rule result-${r.result ?? 'unsupported'}` },
      h(
        'h4',
        null,
        pill(r.result ?? 'not evaluated', r.result === 'pass' ? 'pass' : r.result === 'skip' ? 'skipped' : 'fail'),
        h('span', { className: 'name' }, r.name),
        r.action ? pill(r.action, `action-${r.action === 'Enforce' ? 'deny' : 'audit'}`) : null,
      ),
      r.message ? h('p', { className: 'reason' }, r.message) : null,
      r.unsupported ? h('p', { className: 'reason muted' }, `not evaluated by vap-eval: ${r.unsupported}`) : null,
      (r.evaluations ?? []).map(renderParamEvaluation),
    );
  return h(
    'div',
    { className: 'policies kyverno' },
    list.map((p) =>
      h(
        'details',
        { className: `policy ${(p.rules ?? []).length ? 'matched' : 'not-matched'}`, attrs: { 'data-kyverno-policy': p.name, open: '' } },
        h(
          'summary',
          null,
          h('span', { className: 'name' }, `${p.kind} ${p.namespace ? `${p.namespace}/` : ''}${p.name}`),
          p.reason ? h('span', { className: 'reason muted' }, ` — ${p.reason}`) : null,
        ),
        (p.rules ?? []).map(rule),
        (p.notMatched ?? []).map((n) => h('p', { className: 'reason muted' }, `${n.rule}: not matched — ${n.reason}`)),
        p.validatingAdmissionPolicy
          ? h(
              'p',
              { className: 'reason muted' },
              p.validatingAdmissionPolicy.generated
                ? 'Kyverno generates a ValidatingAdmissionPolicy from this policy (evaluated under Policies).'
                : p.validatingAdmissionPolicy.message,
            )
          : null,
      ),
    ),
    (kyverno?.webhooks ?? [])
      .filter((w) => (w.policies ?? []).length || (w.warnings ?? []).length || !w.allowed)
      .map((w) => h('p', { className: 'reason muted' }, `${w.name}: ${w.allowed ? 'allowed' : 'denied'}${(w.policies ?? []).length ? ` (${w.policies.join(', ')})` : ''}`)),
  );
}

/**
 * The diagnostics list. `locate(d)` returns a selection target or null; items with one are
 * marked clickable and carry data-diagnostic=<index into the sorted list> for main.js.
 */
export function renderDiagnostics(diagnostics, locate = () => null) {
  const sorted = sortDiagnostics(diagnostics);
  const c = countDiagnostics(sorted);
  return {
    sorted,
    tree: h(
      'div',
      { className: 'diagnostics' },
      h('h3', null, `Diagnostics (${c.error} errors, ${c.warning} warnings${c.info ? `, ${c.info} info` : ''})`),
      sorted.length === 0
        ? h('p', { className: 'muted' }, 'none')
        : h(
            'ul',
            { className: 'diagnostic-list' },
            sorted.map((d, i) => {
              const target = locate(d);
              return h(
                'li',
                {
                  className: `diagnostic severity-${d.severity}${target ? ' clickable' : ''}`,
                  attrs: target ? { 'data-diagnostic': i, role: 'button', tabindex: 0, title: `select in ${target.editor}` } : { 'data-diagnostic': i },
                },
                h('div', { className: 'diagnostic-line' }, formatDiagnostic(d)),
                snippetOf(d.rendered) ? h('pre', { className: 'diagnostic-rendered' }, snippetOf(d.rendered)) : null,
                d.help ? h('div', { className: 'diagnostic-help' }, `help: ${d.help}`) : null,
              );
            }),
          ),
    ),
  };
}

/**
 * The source excerpt of a `rendered` diagnostic ("ERROR: f:1:2: msg\n | line\n | ..^"): its
 * header repeats the list line, so only the lines after it are shown ("" when there are none).
 */
export function snippetOf(rendered) {
  if (typeof rendered !== 'string') return '';
  const lines = rendered.split('\n');
  return /^(ERROR|WARNING|INFO)\b/i.test(lines[0]) ? lines.slice(1).join('\n') : rendered;
}

/**
 * The whole evaluate() result. Returns {tree, diagnostics} (diagnostics sorted, as numbered).
 * `typeChecks`: typecheck()'s `policies` for the same input, when known.
 */
export function renderResult(result, locate, typeChecks = null) {
  const diags = renderDiagnostics(result?.diagnostics, locate);
  return {
    diagnostics: diags.sorted,
    tree: h(
      'div',
      { className: 'result' },
      renderResponse(result),
      renderKubectl(result),
      diags.tree,
      renderRequest(result?.request),
      renderObjectChanges(result?.objectChanges),
      h('h3', null, 'Policies'),
      renderPolicies(result?.policies, typeChecks, result?.diagnostics),
      result?.webhooks?.length ? [h('h3', null, 'Webhooks'), renderWebhooks(result.webhooks)] : null,
      result?.kyverno ? h('h3', null, 'Kyverno policies') : null,
      result?.kyverno ? renderKyverno(result.kyverno) : null,
    ),
  };
}

/** The scratchpad's evaluateExpression() result. */
export function renderExpressionResult(r, locate) {
  const diags = renderDiagnostics(r?.diagnostics, locate);
  const ok = r && r.type !== undefined && !(r.diagnostics ?? []).some((d) => d.severity === 'error');
  return {
    diagnostics: diags.sorted,
    tree: h(
      'div',
      { className: `scratch-result ${ok ? 'ok' : 'failed'}` },
      ok
        ? h(
            'div',
            { className: 'scratch-value' },
            h('pre', { className: 'value', attrs: { 'data-testid': 'scratch-value' } }, formatValue(r.value === undefined ? null : r.value)),
            h('div', { className: 'scratch-meta' }, h('span', { className: 'type' }, `type ${r.type}`), typeof r.cost === 'number' ? h('span', { className: 'cost' }, `cost ${r.cost}`) : null),
          )
        : null,
      (r?.diagnostics ?? []).length ? diags.tree : null,
    ),
  };
}

/** A message box (loading, missing package, thrown errors). */
export function renderNotice(kind, title, ...lines) {
  return h('div', { className: `notice notice-${kind}`, attrs: { role: kind === 'error' ? 'alert' : 'status' } }, h('strong', null, title), lines.map((l) => h('p', null, l)));
}

/**
 * The engine's result as plain JSON-like data: Maps become objects (serde-wasm-bindgen turns
 * Rust maps into JS Maps unless told otherwise), a JSON string is parsed.
 */
export function toPlain(v) {
  if (typeof v === 'string' && (v.startsWith('{') || v.startsWith('['))) {
    try {
      return toPlain(JSON.parse(v));
    } catch {
      return v;
    }
  }
  return plain(v);
}

function plain(v) {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), plain(x)]));
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object' && !(v instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  }
  return v;
}
