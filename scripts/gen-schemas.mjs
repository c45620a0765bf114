#!/usr/bin/env node
// Generates vap-eval's compact built-in schemas (data/schemas/) from the apiserver's published
// OpenAPI v3 documents, one directory per Kubernetes minor version.
//
// Usage:
//   node scripts/gen-schemas.mjs --source DIR --repo OWNER/NAME --commit SHA --path PATH [--check]
//
// DIR holds `<minor>/api/v1.json` and `<minor>/apis/<group>/<version>.json` — the layout of
// kubernetes/kubernetes `api/openapi-spec/v3/` as kubernetes-sigs/kubectl-validate embeds it under
// `pkg/openapiclient/builtins/<minor>/`. --repo/--commit/--path say where DIR came from; they are
// recorded in data/schemas/sources.json (its `generated` part, written by scripts/gen-schemas-go.mjs
// for the versions made from the Go types, is kept). With --check nothing is written: the command fails when
// the committed files differ from what it would write (used by tests/node/schemas.test.mjs).
//
// Output, per minor version:
//   <minor>.json              { kinds: { "<apiVersion>/<Kind>": "<definition>" },
//                               definitions: { "<definition>": <schema> } }
//   <minor>.descriptions.json { "<definition>": { "": text, "<property path>": text } }
// A compact schema keeps what the apiserver's CEL type conversion and completion read: type,
// format, properties, items, additionalProperties (schema form), required, enum, nullable,
// maxLength/maxItems/maxProperties and the x-kubernetes-* extensions CEL honours. References stay
// references (`{"$ref": "<definition>"}`; `allOf: [{$ref}]` wrappers are unwrapped as the
// apiserver's resolver does). Descriptions, defaults, oneOf and paths are dropped.

import { sha256, stable } from "./schema-json.mjs";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { join, relative } from "node:path";

const KEEP = [
  "type",
  "format",
  "required",
  "enum",
  "nullable",
  "maxLength",
  "maxItems",
  "maxProperties",
  "x-kubernetes-int-or-string",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
];
const REF_PREFIX = "#/components/schemas/";

function args(argv) {
  const out = { check: false };
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--check") out.check = true;
    else if (["--source", "--repo", "--commit", "--path", "--out"].includes(a)) out[a.slice(2)] = argv[++i];
    else throw new Error(`unknown argument ${a}`);
  }
  for (const k of ["source", "repo", "commit", "path"]) {
    if (!out[k]) throw new Error(`missing --${k}`);
  }
  out.out ??= new URL("../data/schemas/", import.meta.url).pathname;
  return out;
}

function walk(dir) {
  const files = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files.push(...walk(p));
    else if (name.endsWith(".json")) files.push(p);
  }
  return files;
}

// The definition a schema refers to, directly or through a one-element allOf.
function refOf(s) {
  if (typeof s.$ref === "string") return s.$ref.startsWith(REF_PREFIX) ? s.$ref.slice(REF_PREFIX.length) : s.$ref;
  if (Array.isArray(s.allOf) && s.allOf.length === 1) return refOf(s.allOf[0]);
  return null;
}

function compact(s, descs, path) {
  if (s.description !== undefined && descs) descs[path] = s.description;
  const ref = refOf(s);
  if (ref !== null) return { $ref: ref };
  const out = {};
  for (const k of KEEP) if (s[k] !== undefined) out[k] = s[k];
  if (s.items && typeof s.items === "object") out.items = compact(s.items, null, "");
  if (s.additionalProperties && typeof s.additionalProperties === "object") {
    out.additionalProperties = compact(s.additionalProperties, null, "");
  }
  if (s.properties) {
    out.properties = {};
    for (const name of Object.keys(s.properties).sort()) {
      out.properties[name] = compact(s.properties[name], descs, path ? `${path}.${name}` : name);
    }
  }
  return out;
}



function generate(dir) {
  const definitions = {};
  const descriptions = {};
  const kinds = {};
  const inputs = [];
  for (const file of walk(dir)) {
    const text = readFileSync(file, "utf8");
    inputs.push({ file: relative(dir, file), sha256: sha256(text) });
    const schemas = JSON.parse(text).components?.schemas ?? {};
    for (const name of Object.keys(schemas)) {
      const def = schemas[name];
      const d = {};
      const c = compact(def, d, "");
      const body = JSON.stringify(stable(c));
      if (definitions[name] !== undefined && JSON.stringify(definitions[name]) !== body) {
        throw new Error(`${file}: definition ${name} differs from an earlier file's`);
      }
      definitions[name] = stable(c);
      if (Object.keys(d).length) descriptions[name] = stable(d);
      for (const gvk of def["x-kubernetes-group-version-kind"] ?? []) {
        const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
        kinds[`${apiVersion}/${gvk.kind}`] = name;
      }
    }
  }
  return {
    schema: JSON.stringify(stable({ kinds, definitions })),
    descriptions: JSON.stringify(stable(descriptions)),
    inputs,
  };
}

function main() {
  const a = args(process.argv);
  const minors = readdirSync(a.source).filter((m) => /^1\.\d+$/.test(m)).sort((x, y) => Number(x.split(".")[1]) - Number(y.split(".")[1]));
  const files = new Map();
  const versions = {};
  for (const minor of minors) {
    const g = generate(join(a.source, minor));
    files.set(`${minor}.json`, g.schema);
    files.set(`${minor}.descriptions.json`, g.descriptions);
    versions[minor] = {
      path: `${a.path}/${minor}`,
      inputs: g.inputs,
      outputs: { [`${minor}.json`]: sha256(g.schema), [`${minor}.descriptions.json`]: sha256(g.descriptions) },
    };
  }
  const sources = {
    generator: "scripts/gen-schemas.mjs",
    repo: a.repo,
    commit: a.commit,
    note: "The apiserver's api/openapi-spec/v3 documents of each release, as embedded per minor version by the repository above.",
    upstream: "kubernetes/kubernetes api/openapi-spec/v3 at branch release-<minor> (kubectl-validate's pkg/openapiclient/github_builtins.go fetches ?ref=release-<minor>; the exact upstream commit is not recorded there). 1.36 and 1.37 are not in that snapshot.",
    versions,
  };
  // The versions scripts/gen-schemas-go.mjs makes from the Go types keep their record.
  const previous = join(a.out, "sources.json");
  if (existsSync(previous)) {
    const generated = JSON.parse(readFileSync(previous, "utf8")).generated;
    if (generated) sources.generated = generated;
  }
  files.set("sources.json", JSON.stringify(sources, null, 1) + "\n");
  let bad = 0;
  if (!a.check) mkdirSync(a.out, { recursive: true });
  for (const [name, text] of files) {
    const p = join(a.out, name);
    if (a.check) {
      if (!existsSync(p) || readFileSync(p, "utf8") !== text) {
        console.error(`${p}: differs from the generator's output`);
        bad++;
      }
    } else {
      writeFileSync(p, text);
    }
  }
  if (bad) process.exit(1);
}

main();
