// The playground's engine worker: runs the package's functions off the page's thread, so a
// runaway or huge input cannot freeze the page. main.js gives it the compiled
// WebAssembly.Module (no second download or compile), times every request, and terminates and
// replaces the worker when one takes too long. main.js runs two of them: one evaluates
// (evaluate, evaluateExpression, typecheck), one answers the editors (complete, hover,
// completeExpression, hoverExpression), so a completion never waits behind an evaluation.
//
// Messages in:  {type: 'init', module}                 -> {type: 'ready'} | {type: 'init-error', message}
//               {type: 'schemas', version, text}       (no answer)
//               {type: 'descriptions', version, text}  (no answer; hover and completion documentation)
//               {type: 'run', id, fn, args}            -> {type: 'result', id, value} | {type: 'error', id, message}
// `fn` is one of FUNCTIONS; values cross as structured clones (plain objects, Maps).
import * as vapEval from '../pkg/vap_eval.js';

const FUNCTIONS = new Set(['evaluate', 'evaluateExpression', 'typecheck', 'complete', 'hover', 'completeExpression', 'hoverExpression']);

self.onmessage = (ev) => {
  const msg = ev.data ?? {};
  if (msg.type === 'init') {
    try {
      vapEval.initSync({ module: msg.module });
      self.postMessage({ type: 'ready' });
    } catch (e) {
      self.postMessage({ type: 'init-error', message: String(e?.message ?? e) });
    }
    return;
  }
  if (msg.type === 'schemas') {
    // Built-in schemas for type checking (the package's schemas/<version>.json).
    try {
      vapEval.loadSchemas?.(msg.version, msg.text);
    } catch {}
    return;
  }
  if (msg.type === 'descriptions') {
    try {
      vapEval.loadSchemaDescriptions?.(msg.version, msg.text);
    } catch {}
    return;
  }
  if (msg.type === 'run') {
    if (!FUNCTIONS.has(msg.fn)) {
      self.postMessage({ type: 'error', id: msg.id, message: `unknown function ${String(msg.fn)}` });
      return;
    }
    try {
      const t0 = performance.now();
      const value = vapEval[msg.fn](...(Array.isArray(msg.args) ? msg.args : []));
      self.postMessage({ type: 'result', id: msg.id, value, ms: performance.now() - t0 });
    } catch (e) {
      self.postMessage({ type: 'error', id: msg.id, message: String(e?.message ?? e) });
    }
  }
};
