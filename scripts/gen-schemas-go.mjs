#!/usr/bin/env node
// Generates vap-eval's compact built-in schemas (data/schemas/<minor>.json and
// <minor>.descriptions.json, the same form as scripts/gen-schemas.mjs writes) from the Go API types,
// for the Kubernetes versions whose published OpenAPI (kubernetes/kubernetes api/openapi-spec/v3)
// is not available here (1.36, 1.37). The apiserver's published spec is itself generated from these
// Go types by kube-openapi's openapi-gen; this script applies the same rules, learned from
// kube-openapi's pkg/generators (openapi.go, extension.go) and pkg/common (the type/format table),
// and is checked against the published 1.30–1.35 bundles, which it reproduces exactly (--check):
// - a struct is `type: object`; each member with a JSON name is a property (`json:"-"` skipped,
//   Go field name when there is no json tag, embedded members with an empty or `,…` JSON name
//   inlined); a member is required unless it has `+optional` or a JSON `,omitempty` (`+required`
//   wins over omitempty);
// - Go kinds map to type/format (int32 → integer/int32, int64 → integer/int64, int → integer/int32,
//   float64 → number/double, []byte → string/byte, bool, string, interface{} → object); pointers and
//   named non-struct types are looked through; slices → array with items, maps → object with
//   additionalProperties; structs (also `type A B` of a struct B) → a reference to their definition;
// - types with OpenAPISchemaType/OpenAPISchemaFormat methods (Quantity, IntOrString, Time, …) get
//   that type and format, or no type when they declare v3 oneOf types (the v3 document's form);
// - `+listType`, `+listMapKey`, `+mapType` on members and `+structType`/`+mapType` on types become
//   x-kubernetes-list-type / -list-map-keys / -map-type (as written; on a reference they sit beside
//   an allOf, which the compact form drops); no `enum` (the published documents carry none);
// - descriptions: the doc comment (go/ast CommentGroup.Text) processed as openapi-gen does (lines
//   starting with `+` or `TODO` dropped, a `---` line ends it, indented lines on their own lines),
//   with the pre-1.32 generator's Go-string unquoting (rulesFor);
// - files excluded by their `//go:build` constraint in a default build are not read.
// Which definitions and kinds a version's document holds follows the apiserver: every served kind of
// every installed group version (register.go's known types, minus those no REST storage serves —
// NOT_RESOURCES and the alpha tables below, learned from 1.30–1.35 — and minus those whose
// zz_generated.prerelease-lifecycle.go says they are removed at that minor, as the apiserver's
// removed-kinds evaluator does), plus the metav1 types the REST operations use, closed over
// references; each definition lists every group-version-kind its Go type is registered under in
// the apiserver's scheme (metav1's DeleteOptions and WatchEvent: every installed group version).
// Definition names are the reversed Go import path (what +k8s:openapi-model-package says; checked).
//
// Usage:
//   node scripts/gen-schemas-go.mjs --check [--versions 1.30,…] [--show N] [--show-descriptions]
//       compare with the committed bundles of 1.30–1.35 (made from the published spec by
//       scripts/gen-schemas.mjs): every difference — kinds index, definitions, descriptions — is
//       listed and fails; without --versions also regenerates the versions recorded in
//       sources.json's `generated` part and fails unless the committed files and tags match
//   node scripts/gen-schemas-go.mjs --write 1.36,1.37
//       write those bundles and record their inputs (tags, commits) and hashes in
//       data/schemas/sources.json (`generated`)
// Inputs: bare git mirrors read with `git cat-file` (nothing is downloaded), from the environment
// or the defaults below: K8S_API_REPO, K8S_APIMACHINERY_REPO, K8S_APIEXTENSIONS_REPO,
// K8S_AGGREGATOR_REPO (kubernetes/api, apimachinery, apiextensions-apiserver, kube-aggregator).

import { execFileSync } from "node:child_process";
import { sha256, stable } from "./schema-json.mjs";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

const MIRROR = "/work/.mirror";
const REPOS = {
  api: process.env.K8S_API_REPO ?? `${MIRROR}/kubernetes+api/repo`,
  apimachinery: process.env.K8S_APIMACHINERY_REPO ?? `${MIRROR}/kubernetes+apimachinery/repo`,
  apiextensions: process.env.K8S_APIEXTENSIONS_REPO ?? `${MIRROR}/kubernetes+apiextensions-apiserver/repo`,
  aggregator: process.env.K8S_AGGREGATOR_REPO ?? `${MIRROR}/kubernetes+kube-aggregator/repo`,
};
const UPSTREAM = {
  api: "kubernetes/api",
  apimachinery: "kubernetes/apimachinery",
  apiextensions: "kubernetes/apiextensions-apiserver",
  aggregator: "kubernetes/kube-aggregator",
};
// Tags per minor version (newest patch when generated; 1.37: its newest pre-release).
// kube-aggregator has no tag past v0.36.2 / v0.37.0-alpha.2 in the mirror; its apiregistration
// types have not changed since 1.30.
const TAGS = {
  "1.30": { api: "v0.30.14", apimachinery: "v0.30.14", apiextensions: "v0.30.14", aggregator: "v0.30.14" },
  "1.31": { api: "v0.31.14", apimachinery: "v0.31.14", apiextensions: "v0.31.14", aggregator: "v0.31.14" },
  "1.32": { api: "v0.32.13", apimachinery: "v0.32.13", apiextensions: "v0.32.13", aggregator: "v0.32.13" },
  "1.33": { api: "v0.33.13", apimachinery: "v0.33.13", apiextensions: "v0.33.13", aggregator: "v0.33.13" },
  "1.34": { api: "v0.34.10", apimachinery: "v0.34.10", apiextensions: "v0.34.10", aggregator: "v0.34.9" },
  "1.35": { api: "v0.35.7", apimachinery: "v0.35.7", apiextensions: "v0.35.7", aggregator: "v0.35.6" },
  "1.36": { api: "v0.36.3", apimachinery: "v0.36.3", apiextensions: "v0.36.3", aggregator: "v0.36.2" },
  "1.37": { api: "v0.37.0-beta.0", apimachinery: "v0.37.0-beta.0", apiextensions: "v0.37.0-beta.0", aggregator: "v0.37.0-alpha.2" },
};

// ---------------------------------------------------------------------------------------------
// Reading Go sources out of the git mirrors.

const gitCache = new Map();
function git(repo, ...argv) {
  const key = `${repo}\0${argv.join("\0")}`;
  if (!gitCache.has(key)) {
    let out = null;
    try {
      out = execFileSync("git", ["--git-dir", repo, ...argv], { encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "ignore"] });
    } catch {
      out = null;
    }
    gitCache.set(key, out);
  }
  return gitCache.get(key);
}
// The contents of several blobs (`<tag>:<path>`), with one `git cat-file --batch`.
function catFiles(repo, specs) {
  if (!specs.length) return [];
  const out = execFileSync("git", ["--git-dir", repo, "cat-file", "--batch"], { input: specs.join("\n") + "\n", maxBuffer: 1 << 28 });
  const texts = [];
  let at = 0;
  for (const spec of specs) {
    const nl = out.indexOf(10, at);
    const header = out.subarray(at, nl).toString();
    const m = /^[0-9a-f]+ blob (\d+)$/.exec(header);
    if (!m) throw new Error(`${spec}: ${header}`);
    const size = Number(m[1]);
    texts.push(out.subarray(nl + 1, nl + 1 + size).toString("utf8"));
    at = nl + 1 + size + 1;
  }
  return texts;
}
const lsTree = (repo, tag, dir) => (git(repo, "ls-tree", "--name-only", `${tag}:${dir}`) ?? "").split("\n").filter(Boolean);

// Where a Go import path's sources are, for one version: [repo key, directory].
function locate(importPath) {
  const table = [
    ["k8s.io/apimachinery/", "apimachinery"],
    ["k8s.io/apiextensions-apiserver/", "apiextensions"],
    ["k8s.io/kube-aggregator/", "aggregator"],
    ["k8s.io/api/", "api"],
  ];
  for (const [prefix, repo] of table) if (importPath.startsWith(prefix)) return [repo, importPath.slice(prefix.length)];
  return null;
}

// The definition name of a Go type, as the apiserver's spec names it (reversed domain).
function defName(importPath, name) {
  const [host, ...rest] = importPath.split("/");
  return [...host.split(".").reverse(), ...rest].join(".") + "." + name;
}

// go/ast's CommentGroup.Text() for a run of `//` lines: markers and one following space removed,
// directives dropped, trailing spaces trimmed, blank lines at the ends dropped and runs collapsed.
function commentText(raw) {
  const lines = [];
  for (const r of raw) {
    if (/^\/\/(line |extern |export |[a-z0-9]+:[a-z0-9])/.test(r)) continue;
    let t = r.slice(2);
    if (t.startsWith(" ")) t = t.slice(1);
    lines.push(t.replace(/[ \t\r]+$/, ""));
  }
  const out = [];
  for (const l of lines) {
    if (l === "" && (out.length === 0 || out[out.length - 1] === "")) continue;
    out.push(l);
  }
  while (out.length && out[out.length - 1] === "") out.pop();
  return out;
}

// gengo's ExtractCommentTags("+", lines): key → values.
function tags(lines) {
  const out = {};
  for (let l of lines) {
    l = l.trim();
    if (!l.startsWith("+")) continue;
    const body = l.slice(1);
    const eq = body.indexOf("=");
    const k = eq < 0 ? body : body.slice(0, eq);
    const v = eq < 0 ? "" : body.slice(eq + 1);
    (out[k] ??= []).push(v);
  }
  return out;
}

// One Go package: its structs (members with doc lines), named non-struct types, the
// OpenAPI methods of its types, and the kinds register.go registers.
function parsePackage(repoKey, tag, dir, importPath) {
  const repo = REPOS[repoKey];
  const pkg = { importPath, structs: new Map(), named: new Map(), methods: new Map(), docLines: [], kinds: [], group: null, version: null, lifecycle: new Map() };
  const lc = git(repo, "show", `${tag}:${dir}/zz_generated.prerelease-lifecycle.go`);
  if (lc) {
    for (const m of lc.matchAll(/func \(in \*(\w+)\) APILifecycle(Introduced|Removed)\(\) \(major, minor int\) \{\s*return (\d+), (\d+)/g)) {
      const e = pkg.lifecycle.get(m[1]) ?? {};
      e[m[2].toLowerCase()] = Number(m[4]);
      pkg.lifecycle.set(m[1], e);
    }
  }
  const files = lsTree(repo, tag, dir).filter((f) => f.endsWith(".go") && !f.endsWith("_test.go") && !f.startsWith("zz_generated") && !f.startsWith("generated.") && !f.endsWith("_swagger_doc_generated.go"));
  const texts = catFiles(repo, files.map((f) => `${tag}:${dir}/${f}`));
  files.forEach((f, i) => {
    if (buildsByDefault(texts[i])) parseFile(pkg, texts[i], f);
  });
  const model = tags(pkg.docLines)["k8s:openapi-model-package"]?.[0];
  if (model !== undefined && `${model}.X` !== defName(importPath, "X")) {
    throw new Error(`${importPath}: +k8s:openapi-model-package=${model} differs from the definition names used here`);
  }
  return pkg;
}

// Whether a file's `//go:build` constraint holds in a default build (linux/amd64, no tags): the
// apiserver's spec is generated from that build (e.g. apimachinery's FieldsV1 has a variant behind
// the `fieldsv1string` tag).
function buildsByDefault(src) {
  const m = /^\/\/go:build (.+)$/m.exec(src.split(/^package /m)[0]);
  if (!m) return true;
  const expr = m[1].trim();
  if (!/^[\w.!&|() ]+$/.test(expr)) throw new Error(`cannot read build constraint: ${expr}`);
  const on = new Set(["linux", "amd64", "unix", "gc"]);
  const js = expr.replace(/[\w.]+/g, (id) => (on.has(id) || /^go1\.\d+$/.test(id) ? "true" : "false"));
  return Function(`return (${js});`)();
}

function parseImports(src) {
  const imports = {};
  const add = (alias, path) => {
    imports[alias || path.split("/").pop()] = path;
  };
  for (const m of src.matchAll(/^import\s+(?:(\w+)\s+)?"([^"]+)"/gm)) add(m[1], m[2]);
  for (const block of src.matchAll(/^import \(([\s\S]*?)^\)/gm)) {
    for (const m of block[1].matchAll(/^\s*(?:(\w+|_|\.)\s+)?"([^"]+)"/gm)) add(m[1], m[2]);
  }
  return imports;
}

function parseFile(pkg, src, fileName) {
  const imports = parseImports(src);
  const lines = src.split("\n");
  let comments = []; // the current run of `//` lines
  let lastComment = -2; // index of the line ending that run
  const docBefore = (i) => (lastComment === i - 1 ? commentText(comments) : []);
  const noteComment = (i, l) => {
    if (lastComment !== i - 1) comments = [];
    comments.push(l);
    lastComment = i;
  };
  let inGroup = null; // "type" | "const" | "var" | "import"
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const t = line.trim();
    if (t.startsWith("//")) {
      noteComment(i, t);
      continue;
    }
    if (t.startsWith("/*")) {
      while (i < lines.length && !lines[i].includes("*/")) i++;
      continue;
    }
    let m;
    if ((m = /^package\s+\w+/.exec(line))) {
      const d = docBefore(i);
      if (d.length) pkg.docLines.push(...d);
      continue;
    }
    if (inGroup) {
      if (/^\)/.test(line)) {
        inGroup = null;
        continue;
      }
      if (inGroup === "type" && (m = /^\s+(\w+)\s+(.*)$/.exec(line))) {
        i = typeSpec(pkg, lines, i, m[1], m[2], docBefore(i), imports);
      }
      continue;
    }
    if ((m = /^(type|const|var|import) \($/.exec(line))) {
      inGroup = m[1];
      continue;
    }
    if ((m = /^type\s+(\w+)\s+(.*)$/.exec(line))) {
      i = typeSpec(pkg, lines, i, m[1], m[2], docBefore(i), imports);
      continue;
    }
    if ((m = /^func \(\s*(?:\w+\s+)?\*?(\w+)\s*\)\s*(OpenAPISchemaType|OpenAPISchemaFormat|OpenAPIV3OneOfTypes|OpenAPIDefinition|OpenAPIV3Definition)\(\)/.exec(line))) {
      let body = line;
      let j = i;
      if (!/\}\s*$/.test(line) || /\{\s*$/.test(line)) {
        while (j + 1 < lines.length && !/^\}/.test(lines[j])) body += "\n" + lines[++j];
      }
      const ms = pkg.methods.get(m[1]) ?? {};
      if (m[2] === "OpenAPISchemaType") {
        const r = /return\s+(nil|\[\]string\{([^}]*)\})/.exec(body);
        ms.type = !r || r[1] === "nil" ? [] : [...r[2].matchAll(/"([^"]*)"/g)].map((x) => x[1]);
      } else if (m[2] === "OpenAPISchemaFormat") {
        const r = /return\s+"([^"]*)"/.exec(body);
        ms.format = r ? r[1] : "";
      } else if (m[2] === "OpenAPIV3OneOfTypes") ms.oneOf = true;
      else ms[m[2]] = true;
      pkg.methods.set(m[1], ms);
      i = j;
      continue;
    }
    if ((m = /^const GroupName\s*=\s*"([^"]*)"/.exec(line))) pkg.group = m[1];
    if (t !== "") comments = [];
  }
  if (fileName === "register.go") {
    const g = /SchemeGroupVersion\s*=\s*schema\.GroupVersion\{Group:\s*(?:GroupName|"([^"]*)"),\s*Version:\s*"([^"]+)"\}/.exec(src);
    if (g) {
      if (g[1] !== undefined) pkg.group = g[1];
      pkg.version = g[2];
    }
    for (const call of src.matchAll(/AddKnownTypes\(\s*SchemeGroupVersion\s*,([^)]*)\)/g)) {
      for (const k of call[1].matchAll(/&(?:(\w+)\.)?(\w+)\{\}/g)) {
        pkg.kinds.push(k[1] ? { importPath: imports[k[1]], name: k[2] } : { importPath: pkg.importPath, name: k[2] });
      }
    }
  }
}

// A type declaration starting at lines[i] (`Name <rest>`); returns the index of its last line.
function typeSpec(pkg, lines, i, name, rest, doc, imports) {
  rest = rest.trim();
  if (/^struct\s*\{\s*\}/.test(rest)) {
    pkg.structs.set(name, { doc, members: [], imports });
    return i;
  }
  if (/^struct\s*\{/.test(rest)) {
    const members = [];
    let comments = [];
    let last = -2;
    let depth = 0;
    let j = i + 1;
    for (; j < lines.length; j++) {
      const t = lines[j].trim();
      if (depth === 0 && t.startsWith("}")) break;
      if (t.startsWith("//")) {
        if (depth === 0) {
          if (last !== j - 1) comments = [];
          comments.push(t);
          last = j;
        }
        continue;
      }
      if (t.startsWith("/*")) {
        while (j < lines.length && !lines[j].includes("*/")) j++;
        comments = [];
        continue;
      }
      if (depth > 0) {
        if (/\{\s*(\/\/.*)?$/.test(t) && !/\}/.test(t)) depth++;
        if (t.startsWith("}")) depth--;
        continue;
      }
      if (t === "") {
        comments = [];
        continue;
      }
      const doc = last === j - 1 ? commentText(comments) : [];
      comments = [];
      let m;
      if ((m = /^(\w+(?:\s*,\s*\w+)*)\s+([^\s`]+)\s*(`[^`]*`)?/.exec(t)) && !/^\w+\s+`/.test(t)) {
        if (/\{\s*$/.test(t) && /struct/.test(m[2])) {
          depth++;
          members.push({ name: m[1], type: "struct{?}", tag: "", doc, embedded: false });
          continue;
        }
        for (const n of m[1].split(/\s*,\s*/)) members.push({ name: n, type: m[2], tag: m[3] ?? "", doc, embedded: false });
      } else if ((m = /^(\*?[\w.]+)\s*(`[^`]*`)?/.exec(t))) {
        const tn = m[1].replace(/^\*/, "");
        members.push({ name: tn.split(".").pop(), type: m[1], tag: m[2] ?? "", doc, embedded: true });
      } else {
        throw new Error(`${pkg.importPath}.${name}: cannot read member line: ${t}`);
      }
    }
    pkg.structs.set(name, { doc, members, imports });
    return j;
  }
  const m = /^(=?)\s*([^\s/]+)/.exec(rest);
  if (m && m[2] !== "interface") pkg.named.set(name, { type: m[2], alias: m[1] === "=", doc, imports });
  return i;
}

// ---------------------------------------------------------------------------------------------
// Go types → compact schemas.

const SIMPLE = {
  uint: ["integer", "int32"], uint8: ["integer", "byte"], uint16: ["integer", "int32"], uint32: ["integer", "int64"],
  uint64: ["integer", "int64"], int: ["integer", "int32"], int8: ["integer", "byte"], int16: ["integer", "int32"],
  int32: ["integer", "int32"], int64: ["integer", "int64"], byte: ["integer", "byte"], float64: ["number", "double"],
  float32: ["number", "float"], bool: ["boolean", ""], "time.Time": ["string", "date-time"], string: ["string", ""],
  "[]byte": ["string", "byte"], "interface{}": ["object", ""], any: ["object", ""],
};
const EXTENSION_TAGS = {
  patchMergeKey: ["x-kubernetes-patch-merge-key", false],
  patchStrategy: ["x-kubernetes-patch-strategy", false],
  listMapKey: ["x-kubernetes-list-map-keys", true],
  listType: ["x-kubernetes-list-type", false],
  mapType: ["x-kubernetes-map-type", false],
  structType: ["x-kubernetes-map-type", false],
  validations: ["x-kubernetes-validations", false],
};

class Universe {
  constructor(minor) {
    this.minor = minor;
    this.tags = TAGS[minor];
    this.packages = new Map();
  }
  pkg(importPath) {
    if (!this.packages.has(importPath)) {
      const loc = locate(importPath);
      this.packages.set(importPath, loc ? parsePackage(loc[0], this.tags[loc[0]], loc[1], importPath) : null);
    }
    return this.packages.get(importPath);
  }
  // A type expression in the context of a package and a file's imports → a resolved shape:
  // {simple: [type, format]} | {slice: shape} | {map: shape} | {struct: {importPath, name}}
  resolve(expr, importPath, imports) {
    expr = expr.replace(/^\*+/, "");
    if (expr === "struct{?}") throw new Error(`${importPath}: anonymous struct members are not supported (openapi-gen does not generate them either)`);
    if (SIMPLE[expr]) return { simple: SIMPLE[expr] };
    if (expr === "interface{}") return { simple: SIMPLE["interface{}"] };
    let m;
    if ((m = /^\[\d*\](.*)$/.exec(expr))) {
      const elem = m[1].replace(/^\*+/, "");
      if (expr.startsWith("[]") && (elem === "byte" || elem === "uint8")) return { simple: SIMPLE["[]byte"] };
      return { slice: this.resolve(elem, importPath, imports) };
    }
    if (expr.startsWith("map[")) {
      let depth = 0;
      let k = 3;
      for (; k < expr.length; k++) {
        if (expr[k] === "[") depth++;
        else if (expr[k] === "]" && --depth === 0) break;
      }
      // openapi-gen supports string keys only (it fails on others).
      const key = this.resolve(expr.slice(4, k), importPath, imports);
      if (key.simple?.[0] !== "string" || key.simple[1] !== "") throw new Error(`${importPath}: map key of ${expr} is not a string`);
      return { map: this.resolve(expr.slice(k + 1), importPath, imports) };
    }
    let path = importPath;
    let name = expr;
    if ((m = /^(\w+)\.(\w+)$/.exec(expr))) {
      if (expr === "time.Time") return { simple: SIMPLE["time.Time"] };
      path = imports[m[1]];
      name = m[2];
      if (!path) throw new Error(`${importPath}: unknown import ${m[1]} in ${expr}`);
    }
    const p = this.pkg(path);
    if (!p) throw new Error(`no sources for ${path} (type ${expr})`);
    if (p.structs.has(name)) return { struct: { importPath: path, name } };
    if (p.named.has(name)) {
      const n = p.named.get(name);
      const under = this.resolve(n.type, path, n.imports);
      // `type A B` with B a struct is a struct type of its own (its own definition, B's members);
      // `type A = B` is B.
      if (under.struct && !n.alias) return { struct: { importPath: path, name } };
      return under;
    }
    throw new Error(`${path}: type ${name} not found`);
  }
  // The struct behind a struct type: {doc, members, imports, importPath} (members of the struct a
  // defined type `type A B` copies, with A's doc).
  struct(importPath, name) {
    const p = this.pkg(importPath);
    if (p.structs.has(name)) return { ...p.structs.get(name), importPath };
    const n = p.named.get(name);
    if (n) {
      const under = this.resolve(n.type, importPath, n.imports);
      if (under.struct) return { ...this.struct(under.struct.importPath, under.struct.name), doc: n.doc };
    }
    throw new Error(`${importPath}: struct type ${name} not found`);
  }
}

// openapi-gen's generateDescription. Before 1.32 (kube-openapi before its description was written
// with %#v) the text went into the generated Go code between quotes with only `"` escaped, after
// replacing `\"` by `"`: so the Go compiler turned the comment's `\\` into `\` (and `\n`, `\t`
// into a newline and a tab).
function description(lines, rules) {
  const d = descriptionText(lines);
  if (rules.quotedDescriptions) {
    return d.replaceAll('\\"', '"').replace(/\\([\\nt])/g, (_, c) => (c === "n" ? "\n" : c === "t" ? "\t" : "\\"));
  }
  return d;
}

function descriptionText(lines) {
  let buf = "";
  const delPrev = () => {
    if (buf.length) buf = buf.slice(0, -1);
  };
  for (let line of lines) {
    if (line === "---") break;
    line = line.replace(/ +$/, "");
    const leading = line.replace(/^ +/, "");
    if (line.length === 0) {
      delPrev();
      buf += "\n\n";
    } else if (leading.startsWith("TODO") || leading.startsWith("+")) {
      // dropped
    } else if (line.startsWith(" ") || line.startsWith("\t")) {
      delPrev();
      buf += "\n" + line + "\n";
    } else {
      buf += line + " ";
    }
  }
  return buf.trim();
}

// What the compact form keeps of the extensions (gen-schemas.mjs KEEP).
const KEEP_EXTENSIONS = new Set(["x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type"]);

function extensions(lines) {
  const out = {};
  for (const [k, v] of Object.entries(extensionsAll(lines))) if (KEEP_EXTENSIONS.has(k)) out[k] = v;
  return out;
}

function extensionsAll(lines) {
  const out = {};
  for (const v of tags(lines)["k8s:openapi-gen"] ?? []) {
    if (!v.startsWith("x-kubernetes-")) continue;
    const i = v.indexOf(":");
    if (i > 0) out[v.slice(0, i)] = v.slice(i + 1);
  }
  const t = tags(lines);
  for (const k of Object.keys(t).sort()) {
    const e = EXTENSION_TAGS[k];
    if (!e) continue;
    out[e[0]] = t[k].length > 1 || e[1] ? t[k] : t[k][0];
  }
  return out;
}

const jsonTag = (tag) => {
  const m = /json:"([^"]*)"/.exec(tag);
  return m ? m[1] : null;
};

// kube-openapi's isOptional: `+required` → required, `+optional` → optional, else omitempty.
function isOptional(member) {
  const t = tags(member.doc);
  const j = jsonTag(member.tag) ?? "";
  const omitempty = j.endsWith(",omitempty") || j.includes(",omitempty,");
  if (t.required) return false;
  if (t.optional) return true;
  return omitempty;
}

// The compact schema of a resolved shape (a property's value, items or additionalProperties).
function shapeSchema(shape, refs) {
  if (shape.simple) {
    const out = { type: shape.simple[0] };
    if (shape.simple[1]) out.format = shape.simple[1];
    return out;
  }
  if (shape.slice) return { type: "array", items: shapeSchema(shape.slice, refs) };
  if (shape.map) return { type: "object", additionalProperties: shapeSchema(shape.map, refs) };
  if (shape.struct) {
    const name = defName(shape.struct.importPath, shape.struct.name);
    refs.add(`${shape.struct.importPath}\0${shape.struct.name}`);
    return { $ref: name };
  }
  return {};
}

// One definition: [compact schema, descriptions, referenced types].
function definition(u, importPath, name, rules) {
  const p = u.pkg(importPath);
  const st = u.struct(importPath, name);
  const refs = new Set();
  const descs = {};
  const d = description(st.doc, rules);
  if (d) descs[""] = d;
  const ms = p.methods.get(name);
  const typeExt = extensions(st.doc);
  if (ms?.OpenAPIDefinition || ms?.OpenAPIV3Definition) {
    // Their schema is Go code; none of the API types has one (kube-openapi would call it).
    throw new Error(`${importPath}.${name}: custom OpenAPIDefinition methods are not supported`);
  }
  // kube-openapi's hasOpenAPIDefinitionMethods: both OpenAPISchemaType and OpenAPISchemaFormat.
  if (ms && ms.type !== undefined && ms.format !== undefined) {
    const out = {};
    if (!ms.oneOf && ms.type?.length) out.type = ms.type[0];
    if (ms.format) out.format = ms.format;
    Object.assign(out, typeExt);
    return [out, descs, refs];
  }
  const out = { type: "object" };
  const props = {};
  const required = [];
  const members = (st2, ip) => {
    for (const m of st2.members) {
      const t = tags(m.doc);
      if ((t["k8s:openapi-gen"] ?? []).includes("false")) continue;
      const j = jsonTag(m.tag);
      if (m.embedded && j !== null && (j === "" || j.startsWith(","))) {
        const shape = u.resolve(m.type, ip, st2.imports);
        if (!shape.struct) throw new Error(`${name}: inline member ${m.type} is not a struct`);
        const inner = u.struct(shape.struct.importPath, shape.struct.name);
        members(inner, inner.importPath);
        continue;
      }
      const jsonName = j === null || j === "" ? m.name : j.split(",")[0];
      if (jsonName === "-") continue;
      if (!isOptional(m)) required.push(jsonName);
      const dsc = description(m.doc, rules);
      if (dsc) descs[jsonName] = dsc;
      let s;
      if ((j ?? "").split(",")[1] === "string") s = { type: "string" };
      else s = shapeSchema(u.resolve(m.type, ip, st2.imports), refs);
      const ext = extensions(m.doc);
      // A reference's siblings (extensions, description) sit beside an allOf in the v3 document,
      // which the compact form drops (gen-schemas.mjs refOf).
      props[jsonName] = s.$ref ? s : Object.assign(s, ext);
    }
  };
  members(st, st.importPath);
  if (Object.keys(props).length) out.properties = props;
  if (required.length) out.required = required;
  Object.assign(out, typeExt);
  return [out, descs, refs];
}

// ---------------------------------------------------------------------------------------------
// Group versions, served kinds, the document's definitions and kinds index.

const META = "k8s.io/apimachinery/pkg/apis/meta/v1";

// Every group version installed in the apiserver's scheme: [importPath, package].
function installedGroupVersions(u) {
  const out = [];
  for (const f of (git(REPOS.api, "ls-tree", "-r", "--name-only", u.tags.api) ?? "").split("\n")) {
    const m = /^(.+)\/register\.go$/.exec(f);
    if (!m || m[1].startsWith("apidiscovery/")) continue;
    out.push(`k8s.io/api/${m[1]}`);
  }
  for (const v of lsTree(REPOS.apiextensions, u.tags.apiextensions, "pkg/apis/apiextensions")) {
    if (/^v\d/.test(v)) out.push(`k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/${v}`);
  }
  for (const v of lsTree(REPOS.aggregator, u.tags.aggregator, "pkg/apis/apiregistration")) {
    if (/^v\d/.test(v)) out.push(`k8s.io/kube-aggregator/pkg/apis/apiregistration/${v}`);
  }
  return out.map((ip) => [ip, u.pkg(ip)]).filter(([, p]) => p && p.version);
}

const minorNum = (v) => Number(v.split(".")[1]);

// Whether a registered kind is served at this minor, from its prerelease-lifecycle markers.
function served(u, p, name) {
  if (!p.structs.has(name) && !p.named.has(name)) return false;
  const lc = p.lifecycle.get(name) ?? {};
  const removed = lc.removed ?? null;
  const introduced = lc.introduced ?? null;
  const m = minorNum(u.minor);
  if (introduced !== null && m < introduced) return false;
  if (removed !== null && m >= removed) return false;
  return true;
}

// Kinds registered for a scheme type that are not REST resources (query options, internal
// types): their definitions are not in the published document.
// Learned from the published documents of 1.30–1.35 (the scheme registers them; no REST storage
// serves them): review kinds sent to webhooks, core/v1's subresource options and internal types, and
// the kinds of alpha group versions whose serving was dropped while their Go types stayed (these
// packages have no prerelease-lifecycle data to say so).
const NOT_RESOURCES = new Set([
  "admission.k8s.io/v1/AdmissionReview", "admission.k8s.io/v1beta1/AdmissionReview",
  "apiextensions.k8s.io/v1/ConversionReview", "apiextensions.k8s.io/v1beta1/ConversionReview",
  "imagepolicy.k8s.io/v1alpha1/ImageReview",
  "v1/NodeProxyOptions", "v1/PodAttachOptions", "v1/PodExecOptions", "v1/PodLogOptions", "v1/PodPortForwardOptions",
  "v1/PodProxyOptions", "v1/PodStatusResult", "v1/RangeAllocation", "v1/SerializedReference", "v1/ServiceProxyOptions",
  "v1/List",
]);
// group version → the first minor that does not serve it
const NOT_SERVED_GROUP_VERSIONS = new Map([["node.k8s.io/v1alpha1", 0], ["rbac.authorization.k8s.io/v1alpha1", 0], ["networking.k8s.io/v1alpha1", 31]]);
const NOT_SERVED_KINDS = new Set(["scheduling.k8s.io/v1alpha1/PriorityClass", "scheduling.k8s.io/v1alpha1/PriorityClassList"]);

function generate(minor, rules) {
  const u = new Universe(minor);
  const gvs = installedGroupVersions(u);
  const gvk = new Map(); // "importPath\0name" → [apiVersion/Kind]
  const addGvk = (key, apiVersion, kind) => {
    if (!gvk.has(key)) gvk.set(key, []);
    gvk.get(key).push(`${apiVersion}/${kind}`);
  };
  const roots = [];
  for (const [ip, p] of gvs) {
    const apiVersion = p.group ? `${p.group}/${p.version}` : p.version;
    for (const k of p.kinds) {
      addGvk(`${k.importPath}\0${k.name}`, apiVersion, k.name);
      if (k.importPath === ip && served(u, p, k.name) && !NOT_RESOURCES.has(`${apiVersion}/${k.name}`) && !NOT_SERVED_KINDS.has(`${apiVersion}/${k.name}`) && !(minorNum(minor) >= (NOT_SERVED_GROUP_VERSIONS.get(apiVersion) ?? Infinity))) roots.push(`${ip}\0${k.name}`);
    }
    addGvk(`${META}\0DeleteOptions`, apiVersion, "DeleteOptions");
    addGvk(`${META}\0WatchEvent`, apiVersion, "WatchEvent");
  }
  addGvk(`${META}\0Status`, "v1", "Status");
  addGvk(`${META}\0APIResourceList`, "v1", "APIResourceList");
  for (const n of ["APIResourceList", "DeleteOptions", "Status", "WatchEvent", "Patch"]) roots.push(`${META}\0${n}`);

  const definitions = {};
  const descriptions = {};
  const kinds = {};
  const queue = [...roots];
  const seen = new Set();
  while (queue.length) {
    const key = queue.shift();
    if (seen.has(key)) continue;
    seen.add(key);
    const [ip, name] = key.split("\0");
    const [schema, descs, refs] = definition(u, ip, name, rules);
    const dn = defName(ip, name);
    definitions[dn] = stable(schema);
    if (Object.keys(descs).length) descriptions[dn] = stable(descs);
    for (const k of gvk.get(key) ?? []) kinds[k] = dn;
    for (const r of refs) queue.push(r);
  }
  return { u, schema: JSON.stringify(stable({ kinds, definitions })), descriptions: JSON.stringify(stable(descriptions)) };
}


// ---------------------------------------------------------------------------------------------

const NOTE =
  "Versions whose published OpenAPI (kubernetes/kubernetes api/openapi-spec/v3) is not available here, generated from the Go API types at the tags below by the rules of kube-openapi's openapi-gen; the same generator reproduces the published 1.30-1.35 bundles exactly (gen-schemas-go.mjs --check).";
const DATA = new URL("../data/schemas/", import.meta.url).pathname;
const PUBLISHED = ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35"];
// What changed in kube-openapi over the releases, as the published documents show: before 1.32 the
// descriptions were unquoted by the Go compiler (description()).
const rulesFor = (minor) => ({ quotedDescriptions: minorNum(minor) <= 31 });

function diffSchemas(want, got, minor) {
  const out = [];
  const wk = want.kinds;
  const gk = got.kinds;
  for (const k of new Set([...Object.keys(wk), ...Object.keys(gk)])) {
    if (wk[k] !== gk[k]) out.push(`${minor} kind ${k}: published ${wk[k] ?? "-"}, generated ${gk[k] ?? "-"}`);
  }
  for (const d of new Set([...Object.keys(want.definitions), ...Object.keys(got.definitions)])) {
    const a = want.definitions[d];
    const b = got.definitions[d];
    if (!a || !b) {
      out.push(`${minor} definition ${d}: ${a ? "only published" : "only generated"}`);
      continue;
    }
    const sa = JSON.stringify(a);
    const sb = JSON.stringify(b);
    if (sa === sb) continue;
    const pa = a.properties ?? {};
    const pb = b.properties ?? {};
    const parts = [];
    for (const p of new Set([...Object.keys(pa), ...Object.keys(pb)])) {
      if (JSON.stringify(pa[p]) !== JSON.stringify(pb[p])) parts.push(`.${p}: ${JSON.stringify(pa[p])} vs ${JSON.stringify(pb[p])}`);
    }
    const ra = { ...a, properties: undefined };
    const rb = { ...b, properties: undefined };
    if (JSON.stringify(ra) !== JSON.stringify(rb)) parts.push(`top: ${JSON.stringify(ra)} vs ${JSON.stringify(rb)}`);
    out.push(`${minor} definition ${d}: ${parts.join("; ")}`);
  }
  return out;
}

function diffDescriptions(want, got) {
  let total = 0;
  let differ = 0;
  const examples = [];
  for (const d of Object.keys(want)) {
    for (const p of Object.keys(want[d])) {
      total++;
      const g = got[d]?.[p];
      if (g !== want[d][p]) {
        differ++;
        let i = 0;
        while (g && i < g.length && g[i] === want[d][p][i]) i++;
        if (examples.length < 8) examples.push(`${d} ${p || "(type)"} (from ${i}):\n  published ${JSON.stringify(want[d][p].slice(Math.max(0, i - 40), i + 80))}\n  generated ${JSON.stringify(g?.slice(Math.max(0, i - 40), i + 80))}`);
      }
    }
  }
  for (const d of Object.keys(got)) for (const p of Object.keys(got[d])) if (want[d]?.[p] === undefined) differ++;
  return { total, differ, examples };
}

function main() {
  const argv = process.argv.slice(2);
  const opt = (name) => {
    const i = argv.indexOf(name);
    return i < 0 ? null : argv[i + 1];
  };
  const missing = Object.entries(REPOS).filter(([, r]) => !existsSync(r)).map(([k, r]) => `${k} (${r})`);
  if (missing.length) {
    console.error(`gen-schemas-go: git mirrors not found: ${missing.join(", ")}`);
    process.exit(2);
  }
  const sourcesPath = `${DATA}sources.json`;
  const sources = JSON.parse(readFileSync(sourcesPath, "utf8"));
  if (argv.includes("--write")) {
    const versions = opt("--write").split(",");
    const record = { generator: "scripts/gen-schemas-go.mjs", note: NOTE, versions: { ...(sources.generated?.versions ?? {}) } };
    for (const minor of versions) {
      if (PUBLISHED.includes(minor)) throw new Error(`${minor} comes from the published spec (scripts/gen-schemas.mjs)`);
      const g = generate(minor, rulesFor(minor));
      writeFileSync(`${DATA}${minor}.json`, g.schema);
      writeFileSync(`${DATA}${minor}.descriptions.json`, g.descriptions);
      record.versions[minor] = {
        inputs: Object.fromEntries(Object.keys(REPOS).map((k) => [k, { repo: UPSTREAM[k], tag: TAGS[minor][k], commit: git(REPOS[k], "rev-list", "-n1", TAGS[minor][k]).trim() }])),
        outputs: { [`${minor}.json`]: sha256(g.schema), [`${minor}.descriptions.json`]: sha256(g.descriptions) },
      };
      console.log(`${minor}: ${Object.keys(JSON.parse(g.schema).definitions).length} definitions, ${Object.keys(JSON.parse(g.schema).kinds).length} kinds`);
    }
    sources.generated = record;
    writeFileSync(sourcesPath, JSON.stringify(sources, null, 1) + "\n");
    return;
  }
  if (argv.includes("--check")) {
    const versions = (opt("--versions") ?? PUBLISHED.join(",")).split(",");
    let bad = 0;
    for (const minor of versions) {
      const g = generate(minor, rulesFor(minor));
      const want = JSON.parse(readFileSync(`${DATA}${minor}.json`, "utf8"));
      const diffs = diffSchemas(want, JSON.parse(g.schema), minor);
      const dd = diffDescriptions(JSON.parse(readFileSync(`${DATA}${minor}.descriptions.json`, "utf8")), JSON.parse(g.descriptions));
      console.log(`${minor}: ${diffs.length} type-relevant differences; descriptions: ${dd.differ} of ${dd.total} differ`);
      for (const d of diffs.slice(0, Number(opt("--show") ?? 40))) console.log("  " + d);
      if (argv.includes("--show-descriptions")) for (const e of dd.examples) console.log("  " + e);
      bad += diffs.length + dd.differ;
    }
    // The versions generated from Go: regenerating them gives the committed files.
    if (!opt("--versions")) {
      for (const [minor, rec] of Object.entries(sources.generated?.versions ?? {})) {
        const g = generate(minor, rulesFor(minor));
        for (const [k, input] of Object.entries(rec.inputs)) {
          const commit = git(REPOS[k], "rev-list", "-n1", input.tag)?.trim();
          if (input.tag !== TAGS[minor][k] || input.commit !== commit) {
            console.log(`${minor}: sources.json records ${k} ${input.tag} ${input.commit}; the generator uses ${TAGS[minor][k]} (${commit})`);
            bad++;
          }
        }
        for (const [file, text] of [[`${minor}.json`, g.schema], [`${minor}.descriptions.json`, g.descriptions]]) {
          const same = readFileSync(`${DATA}${file}`, "utf8") === text && rec.outputs[file] === sha256(text);
          if (!same) bad++;
          console.log(`${file}: ${same ? "matches the generator" : "DIFFERS from the generator's output"}`);
        }
      }
    }
    process.exit(bad ? 1 : 0);
  }
}

main();
