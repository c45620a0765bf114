// node --test tests/node/ — the npm package in pkg/ (build it first: bash scripts/build-pkg.sh).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";

const pkgDir = new URL("../../pkg/", import.meta.url);
const wasm = await import(new URL("vap_eval.js", pkgDir));
wasm.initSync({ module: fs.readFileSync(new URL("vap_eval_bg.wasm", pkgDir)) });

test("version() is the package version", () => {
  const pkg = JSON.parse(fs.readFileSync(new URL("package.json", pkgDir), "utf8"));
  assert.equal(wasm.version(), pkg.version);
  assert.match(wasm.version(), /^\d+\.\d+\.\d+/);
});

// .cargo/config.toml links the wasm with -zstack-size=8388608 (the CEL parser recurses; the
// default is 1 MiB). The stack grows down from the initial __stack_pointer, global 0 of the
// module. A RUSTFLAGS environment variable silently replaces config rustflags: this catches it.
test("wasm module has an 8 MiB stack", () => {
  const b = fs.readFileSync(new URL("vap_eval_bg.wasm", pkgDir));
  let p = 8;
  const uleb = () => {
    let r = 0, s = 0, x;
    do { x = b[p++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80);
    return r;
  };
  const sleb = () => {
    let r = 0, s = 0, x;
    do { x = b[p++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80);
    return x & 0x40 ? r - 2 ** s : r;
  };
  let stackPointer;
  while (p < b.length && stackPointer === undefined) {
    const id = b[p++];
    const size = uleb();
    const end = p + size;
    if (id === 6) {
      uleb(); // number of globals
      const [valtype, mutable, op] = [b[p++], b[p++], b[p++]];
      if (valtype === 0x7f && mutable === 1 && op === 0x41) stackPointer = sleb();
    }
    p = end;
  }
  assert.ok(stackPointer >= 8 * 1024 * 1024, `initial stack pointer ${stackPointer} < 8 MiB`);
});
