#!/usr/bin/env node
// Extracts the CEL conformance tests shipped by the npm package @bufbuild/cel-spec into
// .cache/suites.json, a plain JSON form our Rust tests read without protobuf.
// Format: see README.md beside this file. Usage: node extract.mjs [out.json]
//
// The package ships the upstream cel-spec textproto suites already converted to protobuf JSON
// (`cel.expr.conformance.test.SimpleTest` in its canonical JSON mapping), as plain data modules
// under dist/esm/testdata/. We import those data modules directly (no protobuf runtime needed).

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(process.argv[2] ?? path.join(here, ".cache", "suites.json"));

const pkgVersion = JSON.parse(
  fs.readFileSync(path.join(here, "node_modules", "@bufbuild", "cel-spec", "package.json"), "utf8"),
);
const { tests: conformance } = await import("@bufbuild/cel-spec/testdata/conformance.js");
const { tests: parsing } = await import("@bufbuild/cel-spec/testdata/parsing.js");
const { tests: checking } = await import("@bufbuild/cel-spec/testdata/checking.js");
const { tests: comprehension } = await import("@bufbuild/cel-spec/testdata/comprehension.js");

// ---------------------------------------------------------------------------------------------
// Protobuf-message detection. A test "needs proto" when it cannot be run without protobuf
// message types: message literals, google.protobuf.* wrappers/Any/Struct/Value/ListValue, the
// proto2/proto3 TestAllTypes types, enums. google.protobuf.Duration and Timestamp are CEL's own
// duration/timestamp types and do NOT need proto.
const PROTO_EXPR_RES = [
  [/\bTestAllTypes\b|\bNestedTestAllTypes\b|\bTestRequired\b/, "expression uses a conformance test message type"],
  [/\bcel\.expr\.conformance\b|\bgoogle\.expr\.proto[23]\b/, "expression names a conformance test proto package"],
  [/\bgoogle\.protobuf\.(?!Duration\b|Timestamp\b)[A-Z]\w*/, "expression uses a google.protobuf message type"],
  [/\b(GlobalEnum|NestedEnum|GAR|GAZ|GOO)\b/, "expression uses a protobuf enum"],
  [/\b[A-Z]\w*\s*\{/, "expression contains a message literal"],
];
const WKT_CEL = new Set(["google.protobuf.Duration", "google.protobuf.Timestamp"]);

class Ctx {
  constructor() {
    this.reasons = new Set();
  }
  proto(reason) {
    this.reasons.add(reason);
  }
}

// ---------------------------------------------------------------------------------------------
// Values: protobuf JSON of cel.expr.Value -> tagged JSON.
function int64(v) {
  return typeof v === "bigint" ? v.toString() : String(v);
}

function double(v) {
  if (typeof v === "string") {
    // The protobuf JSON mapping writes non-finite doubles as strings.
    if (v === "NaN" || v === "Infinity" || v === "-Infinity") return v;
    v = Number(v);
  }
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "Infinity";
  if (v === -Infinity) return "-Infinity";
  if (Object.is(v, -0)) return "-0";
  return v;
}

function bytes(b64) {
  // Normalise to standard base64 with padding (the JSON mapping accepts URL-safe too).
  return Buffer.from(b64 ?? "", "base64").toString("base64");
}

function anyToValue(obj, ctx) {
  const t = String(obj["@type"] ?? "").replace(/^.*\//, "");
  if (t === "google.protobuf.Duration") return { duration: obj.value };
  if (t === "google.protobuf.Timestamp") return { timestamp: obj.value };
  ctx.proto(`value is a protobuf message (${t})`);
  const { ["@type"]: _, ...json } = obj;
  return { object: { type: t, json } };
}

function value(v, ctx) {
  if (v === undefined || v === null) throw new Error("missing value");
  if ("nullValue" in v) return { null: null };
  if ("boolValue" in v) return { bool: !!v.boolValue };
  if ("int64Value" in v) return { int: int64(v.int64Value) };
  if ("uint64Value" in v) return { uint: int64(v.uint64Value) };
  if ("doubleValue" in v) return { double: double(v.doubleValue) };
  if ("stringValue" in v) return { string: v.stringValue };
  if ("bytesValue" in v) return { bytes: bytes(v.bytesValue) };
  if ("listValue" in v) return { list: (v.listValue.values ?? []).map((x) => value(x, ctx)) };
  if ("mapValue" in v)
    return { map: (v.mapValue.entries ?? []).map((e) => [value(e.key, ctx), value(e.value, ctx)]) };
  if ("typeValue" in v) {
    const t = v.typeValue;
    if (t.includes(".") && !WKT_CEL.has(t)) ctx.proto(`type value ${t} is a protobuf type`);
    return { type: t };
  }
  if ("enumValue" in v) {
    ctx.proto(`value is a protobuf enum (${v.enumValue.type})`);
    return { enum: { type: v.enumValue.type, value: v.enumValue.value ?? 0 } };
  }
  if ("objectValue" in v) return anyToValue(v.objectValue, ctx);
  if (Object.keys(v).length === 0) {
    // An unset oneof in protobuf JSON; the only value written that way is... none we know of.
    throw new Error("empty cel.expr.Value");
  }
  throw new Error(`unknown cel.expr.Value kind: ${JSON.stringify(v)}`);
}

function exprValue(ev, ctx) {
  if ("value" in ev) return value(ev.value, ctx);
  if ("error" in ev) return { evalError: (ev.error.errors ?? []).map((e) => e.message ?? "") };
  if ("unknown" in ev) return { unknown: (ev.unknown.exprs ?? []).map(int64) };
  throw new Error(`unknown ExprValue: ${JSON.stringify(ev)}`);
}

// ---------------------------------------------------------------------------------------------
// Types: protobuf JSON of cel.expr.Type -> cel-go's type string, the same form as the package's
// own `type` field: int, uint, double, bool, string, bytes, null, dyn, any, timestamp, duration,
// list(T), map(K, V), type(T), wrapper(T), NAME(T, ...) for abstract types, a message's full
// name, a type parameter's name, *error*.
const PRIM = { BOOL: "bool", INT64: "int", UINT64: "uint", DOUBLE: "double", STRING: "string", BYTES: "bytes" };
const WK = { ANY: "any", TIMESTAMP: "timestamp", DURATION: "duration" };

function type(t, ctx) {
  if (t === undefined || t === null) return "dyn";
  if ("dyn" in t) return "dyn";
  if ("null" in t) return "null";
  if ("primitive" in t) return PRIM[t.primitive] ?? `?${t.primitive}`;
  if ("wrapper" in t) {
    ctx.proto("type uses a protobuf wrapper type");
    return `wrapper(${PRIM[t.wrapper] ?? t.wrapper})`;
  }
  if ("wellKnown" in t) {
    if (t.wellKnown === "ANY") ctx.proto("type uses google.protobuf.Any");
    return WK[t.wellKnown] ?? `?${t.wellKnown}`;
  }
  if ("listType" in t) return `list(${type(t.listType.elemType, ctx)})`;
  if ("mapType" in t) return `map(${type(t.mapType.keyType, ctx)}, ${type(t.mapType.valueType, ctx)})`;
  if ("function" in t)
    return `function(${[t.function.resultType, ...(t.function.argTypes ?? [])].map((x) => type(x, ctx)).join(", ")})`;
  if ("messageType" in t) {
    const m = t.messageType;
    if (m === "google.protobuf.Duration") return "duration";
    if (m === "google.protobuf.Timestamp") return "timestamp";
    ctx.proto(`type uses protobuf message ${m}`);
    return m;
  }
  if ("typeParam" in t) return t.typeParam;
  if ("type" in t) return Object.keys(t.type ?? {}).length ? `type(${type(t.type, ctx)})` : "type";
  if ("error" in t) return "*error*";
  if ("abstractType" in t) {
    const ps = t.abstractType.parameterTypes ?? [];
    return ps.length ? `${t.abstractType.name}(${ps.map((x) => type(x, ctx)).join(", ")})` : t.abstractType.name;
  }
  throw new Error(`unknown cel.expr.Type: ${JSON.stringify(t)}`);
}

function decl(d, ctx) {
  if (d.ident) return { name: d.name, type: type(d.ident.type, ctx) };
  if (d.function)
    return {
      name: d.name,
      function: (d.function.overloads ?? []).map((o) => ({
        id: o.overloadId,
        ...(o.isInstanceFunction ? { receiver: true } : {}),
        ...(o.typeParams?.length ? { typeParams: o.typeParams } : {}),
        params: (o.params ?? []).map((p) => type(p, ctx)),
        result: type(o.resultType, ctx),
      })),
    };
  throw new Error(`unknown decl: ${JSON.stringify(d)}`);
}

// ---------------------------------------------------------------------------------------------
function exprProtoReasons(o, ctx) {
  for (const [re, why] of PROTO_EXPR_RES) if (re.test(o.expr)) ctx.proto(why);
  if (o.container && /conformance|\bproto[23]\b|google\.protobuf/.test(o.container))
    ctx.proto(`container ${o.container} is a protobuf package`);
}

function celGoInfo(t) {
  const info = {};
  for (const k of ["ast", "checkedAst", "type", "error"]) if (t[k] !== undefined) info[k] = t[k];
  return info;
}

function fromConformance(file, section, t) {
  const o = t.original;
  const ctx = new Ctx();
  exprProtoReasons(o, ctx);
  const rec = {
    file,
    section,
    name: o.name ?? o.expr.replace(/\s+/g, " ").trim(),
    expr: o.expr,
    mode: o.checkOnly ? "check" : "eval",
  };
  if (o.description) rec.description = o.description;
  if (o.disableMacros) rec.disableMacros = true;
  if (o.disableCheck) rec.disableCheck = true;
  if (o.checkOnly) rec.checkOnly = true;
  if (o.container) rec.container = o.container;
  rec.typeEnv = (o.typeEnv ?? []).map((d) => decl(d, ctx));
  rec.bindings = Object.fromEntries(Object.entries(o.bindings ?? {}).map(([k, v]) => [k, exprValue(v, ctx)]));
  const expected = {};
  if (o.value) expected.value = value(o.value, ctx);
  if (o.typedResult) {
    if (o.typedResult.result) expected.value = value(o.typedResult.result, ctx);
    if (o.typedResult.deducedType) {
      rec.expectedType = type(o.typedResult.deducedType, ctx);
      rec.expectedTypeFrom = "typed_result";
    }
  }
  if (o.evalError) expected.evalError = (o.evalError.errors ?? []).map((e) => e.message ?? "");
  if (o.anyEvalErrors)
    expected.anyEvalErrors = (o.anyEvalErrors.errors ?? []).map((s) => (s.errors ?? []).map((e) => e.message ?? ""));
  if (o.unknown) expected.unknown = (o.unknown.exprs ?? []).map(int64);
  if (o.anyUnknowns) expected.anyUnknowns = (o.anyUnknowns.unknowns ?? []).map((u) => (u.exprs ?? []).map(int64));
  // No matcher at all means "evaluates to true" in the conformance runner (SimpleTest docs).
  if (Object.keys(expected).length === 0 && !o.checkOnly) expected.value = { bool: true };
  rec.expected = expected;
  if (!rec.expectedType && t.type && !o.disableCheck) {
    // cel-go's deduced type, recorded by the package; typed_result wins where present.
    rec.expectedType = t.type;
    rec.expectedTypeFrom = "cel-go";
  }
  rec.celGo = celGoInfo(t);
  finish(rec, ctx);
  return rec;
}

function fromCelGo(file, t, mode) {
  const o = t.original;
  const ctx = new Ctx();
  // Parsing needs no message types (a message literal is just syntax); checking does.
  if (mode !== "parse") exprProtoReasons(o, ctx);
  const rec = { file, section: "", name: o.expr.replace(/\s+/g, " ").trim(), expr: o.expr, mode };
  if (o.container) rec.container = o.container;
  rec.typeEnv = [];
  rec.bindings = {};
  const expected = {};
  if (mode === "parse") {
    if (t.ast !== undefined) expected.ast = t.ast;
    else expected.error = t.error ?? "parse error";
  } else {
    // Type-check expectation under cel-go's standard environment (the test's own declarations
    // are not recorded by the package, so an error here is informational only).
    if (t.type !== undefined) {
      rec.expectedType = t.type;
      rec.expectedTypeFrom = "cel-go";
      if (t.checkedAst !== undefined) expected.checkedAst = t.checkedAst;
    } else if (t.ast === undefined) expected.error = t.error ?? "parse error";
    else {
      expected.error = t.error ?? "check error";
      expected.informational = true;
    }
  }
  rec.expected = expected;
  rec.celGo = celGoInfo(t);
  finish(rec, ctx);
  return rec;
}

function finish(rec, ctx) {
  if (ctx.reasons.size) {
    rec.needsProto = true;
    rec.needsProtoReason = [...ctx.reasons].join("; ");
  }
}

// ---------------------------------------------------------------------------------------------
const records = [];
for (const file of conformance.suites ?? []) {
  for (const t of file.tests ?? []) records.push(fromConformance(file.name, "", t));
  for (const section of file.suites ?? []) {
    if (section.suites?.length) throw new Error(`unexpected nesting in ${file.name}/${section.name}`);
    for (const t of section.tests ?? []) records.push(fromConformance(file.name, section.name, t));
  }
}
for (const [suite, mode] of [
  [parsing, "parse"],
  [checking, "check"],
  [comprehension, "parse"],
]) {
  const file = `cel-go/${suite.name}`;
  const walk = (s, prefix) => {
    for (const t of s.tests ?? []) records.push({ ...fromCelGo(file, t, mode), section: prefix });
    for (const sub of s.suites ?? []) walk(sub, prefix ? `${prefix}/${sub.name}` : sub.name);
  };
  walk(suite, "");
}

fs.mkdirSync(path.dirname(out), { recursive: true });
const doc = {
  source: `@bufbuild/cel-spec@${pkgVersion.version}`,
  upstreamCelSpecRef: pkgVersion.upstreamCelSpecRef ?? null,
  tests: records,
};
fs.writeFileSync(out, JSON.stringify(doc, null, 0) + "\n");

// Summary.
const byFile = new Map();
for (const r of records) {
  const s = byFile.get(r.file) ?? { total: 0, runnable: 0, proto: 0 };
  s.total++;
  if (r.needsProto) s.proto++;
  else s.runnable++;
  byFile.set(r.file, s);
}
const pad = (x, n) => String(x).padStart(n);
console.log(`cel-spec ${doc.source} (upstream ${doc.upstreamCelSpecRef}) -> ${path.relative(process.cwd(), out)}`);
console.log(`${"file".padEnd(26)}${pad("tests", 7)}${pad("runnable", 10)}${pad("needsProto", 12)}`);
let T = 0, R = 0, P = 0;
for (const [f, s] of byFile) {
  console.log(`${f.padEnd(26)}${pad(s.total, 7)}${pad(s.runnable, 10)}${pad(s.proto, 12)}`);
  T += s.total; R += s.runnable; P += s.proto;
}
console.log(`${"TOTAL".padEnd(26)}${pad(T, 7)}${pad(R, 10)}${pad(P, 12)}`);
