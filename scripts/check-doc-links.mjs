#!/usr/bin/env node
// Every relative link in the repository's Markdown ([text](path)) must name an existing file or
// directory: files move (src/ -> crates/…) and the README must follow. Prints the broken ones.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const files = execFileSync("git", ["ls-files", "*.md"], { encoding: "utf8" })
  .split("\n")
  .filter((f) => f && !f.includes("node_modules/"));
let broken = 0;
for (const file of files) {
  // Inline code is not a link (a regexp such as `[a-z]([-a-z]*)?` reads like one): blanked, with
  // its length kept so that line numbers stay right.
  const text = fs.readFileSync(file, "utf8").replace(/`[^`\n]*`/g, (c) => " ".repeat(c.length));
  for (const m of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
    if (!fs.existsSync(path.join(path.dirname(file), target))) {
      const line = text.slice(0, m.index).split("\n").length;
      console.error(`${file}:${line}: broken link ${target}`);
      broken++;
    }
  }
}
console.log(`doc links: ${files.length} Markdown files, ${broken} broken`);
process.exit(broken ? 1 : 0);
