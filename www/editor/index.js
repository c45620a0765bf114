// The playground's editors: CodeMirror 6 views that replace the page's textareas once the first
// result is on screen (main.js imports the bundle of this module, www/editor.js, after it; the
// cold start never waits for it). Bundled with esbuild by scripts/bundle-www.mjs.
//
// YAML editors: YAML highlighting, CEL highlighting inside expression fields (cel.js finds them),
// CEL completion and hover there. CEL editor (scratchpad): CEL highlighting, completion and hover. All: line
// numbers, bracket matching, search (Ctrl-F), undo history, diagnostics as squiggles
// (@codemirror/lint) with the message on hover and in the gutter.
import { EditorState, RangeSetBuilder, Compartment, StateEffect, StateField } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection, ViewPlugin, Decoration, hoverTooltip, showTooltip, placeholder as placeholderExt } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import { bracketMatching, syntaxHighlighting, indentOnInput, foldGutter, foldKeymap, StreamLanguage } from '@codemirror/language';
import { classHighlighter } from '@lezer/highlight';
import { yaml } from '@codemirror/lang-yaml';
import { setDiagnostics, lintGutter, lintKeymap } from '@codemirror/lint';
import { autocompletion, completionKeymap, closeBrackets, closeBracketsKeymap } from '@codemirror/autocomplete';
import { tokenizeCel, celRegions, celCompletions, packageCompletions, TOKEN } from './cel.js';

/** For main.js: the expression fields of a YAML text (the ↗ of a type-checking warning selects
 * one), the scratchpad's `objectKind` from the Object editor's text. */
export { celRegions };
export { objectKindOf } from './cel.js';

const marks = Object.fromEntries(Object.entries(TOKEN).map(([k, cls]) => [k, Decoration.mark({ class: `${cls} cel-token` })]));

/** Decorates the CEL inside the YAML's expression fields (visible part only). */
const celInYaml = ViewPlugin.fromClass(
  class {
    constructor(view) {
      this.decorations = this.build(view);
    }
    update(u) {
      if (u.docChanged || u.viewportChanged) this.decorations = this.build(u.view);
    }
    build(view) {
      const b = new RangeSetBuilder();
      const text = view.state.doc.toString();
      const { from: vFrom, to: vTo } = view.viewport;
      for (const r of celRegions(text)) {
        if (r.to < vFrom || r.from > vTo) continue;
        b.add(r.from, r.from, Decoration.mark({}));
        for (const t of tokenizeCel(text.slice(r.from, r.to))) b.add(r.from + t.from, r.from + t.to, marks[t.kind]);
      }
      return b.finish();
    }
  },
  { decorations: (v) => v.decorations },
);

/** The scratchpad's language: the same tokenizer as a stream parser (one line at a time). */
const celLanguage = StreamLanguage.define({
  name: 'cel',
  token(stream) {
    if (stream.eatSpace()) return null;
    const rest = stream.string.slice(stream.pos);
    const t = tokenizeCel(rest)[0];
    if (!t || t.from > 0) {
      // Punctuation or an unknown character.
      stream.next();
      return t ? null : null;
    }
    stream.pos += t.to;
    return { keyword: 'keyword', string: 'string', number: 'number', bool: 'bool', null: 'null', variable: 'variableName', function: 'function(variableName)', property: 'propertyName', operator: 'operator', comment: 'comment' }[t.kind];
  },
  languageData: { commentTokens: { line: '//' } },
});

/**
 * A completion source for CEL. `kind` 'yaml': only inside an expression field; 'cel': anywhere.
 * `env()` gives {version, manifests, object, oldObject} at completion time. `intel.complete(text,
 * pos)` (optional) asks the package; its table (cel.js) answers when the package has nothing
 * (null, no items), nobody when a newer request superseded it ({superseded: true}).
 */
function celCompletionSource(kind, env, intel) {
  return async (ctx) => {
    const text = ctx.state.doc.toString();
    let start = 0;
    if (kind === 'yaml') {
      const region = celRegions(text).find((r) => r.from <= ctx.pos && ctx.pos <= r.to);
      if (!region) return null;
      start = region.from;
    }
    const before = text.slice(start, ctx.pos);
    const e = env();
    const res = celCompletions(before, e.version, e);
    if (!res) return null;
    const word = before.slice(res.from);
    if (!ctx.explicit && word === '' && !before.endsWith('.')) return null;
    if (intel?.complete) {
      const got = await Promise.resolve(intel.complete(text, ctx.pos)).catch(() => null);
      // Superseded: a newer request (the text typed since) answers; the table would be stale.
      if (ctx.aborted || got?.superseded) return null;
      const fromPackage = packageCompletions(got, ctx.pos, text.length);
      if (fromPackage) return fromPackage;
    }
    return { from: start + res.from, options: res.options, validFor: /^[\w.]*$/ };
  };
}

/** Whether `pos` is inside CEL: an expression field of a YAML editor, anywhere in the CEL editor. */
const inCel = (lang, text, pos) => lang === 'cel' || celRegions(text).some((r) => r.from <= pos && pos <= r.to);

/**
 * The hover tooltip at `pos` inside CEL (`lang` as in upgrade()): the package's `hover`
 * (`intel.hover(text, pos)` resolving to {type, documentation, from, to}) — the sub-expression's
 * checked type and the field's description, as text. Null outside expressions or when the
 * package has nothing.
 */
async function celHoverAt(lang, intel, view, pos) {
  const text = view.state.doc.toString();
  if (!inCel(lang, text, pos)) return null;
  const got = await Promise.resolve(intel.hover(text, pos)).catch(() => null);
  if (!got || (got.type == null && !got.documentation)) return null;
  const len = view.state.doc.length;
  const from = got.from >= 0 && got.from <= pos ? got.from : pos;
  const to = got.to >= pos && got.to <= len ? got.to : pos;
  return {
    pos: from,
    end: to,
    above: true,
    create() {
      const dom = document.createElement('div');
      dom.className = 'cm-cel-hover';
      if (got.type != null) {
        const type = document.createElement('code');
        type.textContent = String(got.type);
        dom.append(type);
      }
      if (got.documentation) {
        const doc = document.createElement('div');
        doc.className = 'cm-cel-doc';
        doc.textContent = String(got.documentation);
        dom.append(doc);
      }
      return { dom };
    },
  };
}

/** The same tooltip from the keyboard (Ctrl-Shift-Space at the cursor); Escape, an edit or a move closes it. */
const setKeyHover = StateEffect.define();
const keyHover = StateField.define({
  create: () => null,
  update(tip, tr) {
    for (const e of tr.effects) if (e.is(setKeyHover)) return e.value;
    return tr.docChanged || tr.selection ? null : tip;
  },
  provide: (f) => showTooltip.from(f),
});

function celHover(lang, intel) {
  const showAtCursor = (view) => {
    const pos = view.state.selection.main.head;
    if (!inCel(lang, view.state.doc.toString(), pos)) return false;
    celHoverAt(lang, intel, view, pos).then((tip) => {
      if (tip && view.state.selection.main.head === pos) view.dispatch({ effects: setKeyHover.of(tip) });
    });
    return true;
  };
  const close = (view) => {
    if (!view.state.field(keyHover)) return false;
    view.dispatch({ effects: setKeyHover.of(null) });
    return true;
  };
  return [
    hoverTooltip((view, pos) => celHoverAt(lang, intel, view, pos), { hoverTime: 300 }),
    keyHover,
    keymap.of([
      { key: 'Ctrl-Shift-Space', run: showAtCursor },
      { key: 'Escape', run: close },
    ]),
  ];
}

const theme = EditorView.theme({
  '&': { height: '100%', fontSize: 'var(--code-size)', backgroundColor: 'var(--panel)', color: 'var(--text)' },
  '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: 'var(--line)' },
  '.cm-gutters': { backgroundColor: 'var(--gutter-bg)', color: 'var(--gutter-text)', borderRight: '1px solid var(--border)' },
  '.cm-activeLine': { backgroundColor: 'var(--active-line)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--active-line)' },
  '&.cm-focused': { outline: 'none' },
  '.cm-cursor': { borderLeftColor: 'var(--text)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: 'var(--selection) !important' },
  '.cm-tooltip': { backgroundColor: 'var(--panel)', color: 'var(--text)', border: '1px solid var(--border)' },
  '.cm-panels': { backgroundColor: 'var(--gutter-bg)', color: 'var(--text)' },
  '.cm-tooltip-autocomplete ul li[aria-selected]': { backgroundColor: 'var(--accent)', color: '#fff' },
});

/**
 * Replaces `textarea` with an editor holding its text. Options: `lang` 'yaml' | 'cel';
 * `onChange(text)`; `env()` for completion; `singleLine` (no line numbers); `intel`
 * ({complete(text, pos), hover(text, pos)}, promises of the package's results; YAML editors: in
 * expression fields; the CEL editor: anywhere). Returns a handle:
 * {view, get(), set(text), select(from, to), setDiagnostics(list), focus()}.
 */
export function upgrade(textarea, { lang = 'yaml', onChange = () => {}, env = () => ({}), singleLine = false, intel = null } = {}) {
  const label = textarea.labels?.[0]?.textContent?.trim() || textarea.getAttribute('aria-label') || textarea.id;
  const language = new Compartment();
  const extensions = [
    history(),
    drawSelection(),
    highlightActiveLine(),
    bracketMatching(),
    closeBrackets(),
    indentOnInput(),
    highlightSelectionMatches(),
    syntaxHighlighting(classHighlighter),
    autocompletion({ override: [celCompletionSource(lang, env, intel)], activateOnTyping: true }),
    lintGutter(),
    keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...searchKeymap, ...historyKeymap, ...foldKeymap, ...completionKeymap, ...lintKeymap, indentWithTab]),
    EditorState.tabSize.of(2),
    theme,
    EditorView.contentAttributes.of({ tabindex: '0', 'aria-label': label, spellcheck: 'false', autocapitalize: 'off', autocorrect: 'off' }),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) onChange(u.state.doc.toString());
    }),
    language.of(lang === 'yaml' ? [yaml(), celInYaml] : celLanguage),
  ];
  if (intel?.hover) extensions.push(celHover(lang, intel));
  if (!singleLine) extensions.push(lineNumbers(), highlightActiveLineGutter(), foldGutter());
  else extensions.push(EditorView.lineWrapping);
  if (textarea.placeholder) extensions.push(placeholderExt(textarea.placeholder));

  const host = document.createElement('div');
  host.className = 'cm-host';
  host.dataset.editor = textarea.id;
  const view = new EditorView({ state: EditorState.create({ doc: textarea.value, extensions }), parent: host });
  // The textarea's box (with its gutter) is replaced by the editor's; the textarea stays in the
  // document, hidden, so a <label for> still names something and nothing else has to move.
  const box = textarea.closest('.code') ?? textarea.parentElement;
  box.classList.add('code-cm');
  box.replaceChildren(host, textarea);
  textarea.hidden = true;
  textarea.tabIndex = -1;
  for (const l of textarea.labels ?? []) l.addEventListener('click', () => view.focus());

  const clamp = (n) => Math.max(0, Math.min(view.state.doc.length, n));
  return {
    view,
    get: () => view.state.doc.toString(),
    set(text) {
      if (text === view.state.doc.toString()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    select(from, to) {
      view.dispatch({ selection: { anchor: clamp(from), head: clamp(to) }, scrollIntoView: true, effects: EditorView.scrollIntoView(clamp(from), { y: 'center' }) });
      view.focus();
    },
    /** `list`: [{from, to, severity: 'error'|'warning'|'info', message}] in UTF-16 offsets. */
    setDiagnostics(list) {
      const diags = list.map((d) => {
        let from = clamp(d.from);
        let to = clamp(d.to);
        if (to < from) [from, to] = [to, from];
        return { from, to, severity: d.severity === 'warning' ? 'warning' : d.severity === 'error' ? 'error' : 'info', message: d.message, source: d.source };
      });
      view.dispatch(setDiagnostics(view.state, diags));
    },
    focus: () => view.focus(),
  };
}
