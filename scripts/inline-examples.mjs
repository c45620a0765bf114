#!/usr/bin/env node
// Writes the playground's example list and the default example's files into www/index.html, so
// the first evaluation needs no request besides the engine: fetched, they were read by tasks
// that Chromium queued behind the first frame (measured: first result 171 -> 143 ms median,
// bench/cold-start.mjs A/B over 21 loads each). www/examples/ stays the source; the other
// examples are still fetched when chosen.
//   node scripts/inline-examples.mjs           rewrite www/index.html
//   node scripts/inline-examples.mjs --check   exit 1 if www/index.html is not current
// tests/node/www.test.mjs runs the check.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const BEGIN = '<!-- examples:begin';
const END = '<!-- examples:end -->';
const FILE_KEYS = ['manifests', 'object', 'oldObject', 'request'];
/** An example's second request (www/examples/README.md): its files replace the first's. */
const CASE_KEYS = ['passing', 'failing'];

/** `example` without the tests' `expect` blocks (its own and its second request's). */
function withoutExpect({ expect: _expect, ...rest }) {
  for (const k of CASE_KEYS) if (rest[k]) rest[k] = withoutExpect(rest[k]);
  return rest;
}

/** Every file an example names, its second request's included. */
export function exampleFiles(example) {
  const files = FILE_KEYS.filter((k) => example[k]).map((k) => example[k]);
  for (const c of CASE_KEYS) for (const k of FILE_KEYS) if (example[c]?.[k]) files.push(example[c][k]);
  return files;
}

/**
 * The inlined data: index.json without the tests' `expect` blocks, and the text of every file
 * of the default example (both of its requests). One `<script type="application/json" id="examples-data">` element.
 */
export function examplesElement(examplesDir) {
  const read = (f) => fs.readFileSync(new URL(f, examplesDir), 'utf8');
  const index = JSON.parse(read('index.json'));
  const examples = index.examples.map(withoutExpect);
  const first = examples.find((e) => e.name === index.default);
  if (!first) throw new Error(`index.json: default example ${JSON.stringify(index.default)} is not listed`);
  const files = Object.fromEntries(exampleFiles(first).map((f) => [f, read(f)]));
  // `<` escaped: nothing in the data can end the script element or open a comment in it.
  const json = JSON.stringify({ default: index.default, examples, files }).replaceAll('<', '\\u003c');
  return `<script type="application/json" id="examples-data">${json}</script>`;
}

/** `html` with the block between the markers replaced by `element`. */
export function withExamples(html, element) {
  const begin = html.indexOf(BEGIN);
  const end = html.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`index.html: no "${BEGIN} … ${END}" block`);
  const afterBegin = html.indexOf('-->', begin) + '-->'.length;
  const indent = html.slice(html.lastIndexOf('\n', begin) + 1, begin);
  return `${html.slice(0, afterBegin)}\n${indent}${element}\n${indent}${html.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const www = new URL('../www/', import.meta.url);
  const page = new URL('index.html', www);
  const html = fs.readFileSync(page, 'utf8');
  const want = withExamples(html, examplesElement(new URL('examples/', www)));
  if (process.argv.includes('--check')) {
    if (want !== html) {
      console.error('www/index.html: the inlined examples are stale; run node scripts/inline-examples.mjs');
      process.exit(1);
    }
  } else if (want !== html) {
    fs.writeFileSync(page, want);
    console.log('www/index.html: examples updated');
  }
}
