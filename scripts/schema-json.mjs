// What both schema generators (gen-schemas.mjs from the published OpenAPI, gen-schemas-go.mjs
// from the Go types) write their bundles with, so the two outputs compare byte for byte.
import { createHash } from "node:crypto";

/** A copy of `v` with object keys sorted, so the output does not depend on the input's key order. */
export function stable(v) {
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = stable(v[k]);
    return o;
  }
  return v;
}

/** The hex SHA-256 of a text (the provenance record in data/schemas/sources.json). */
export const sha256 = (text) => createHash("sha256").update(text).digest("hex");
