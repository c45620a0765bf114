// Where the standard benchmark workload (`shared/bench`: deployment.json, expressions.json) is:
// $VAP_BENCH_DIR, else `<repo>/../shared/bench`, else (from a git worktree, whose repo is
// elsewhere) beside the main checkout. Used by bench/run.mjs, bench/peers.mjs and the fuzz test.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The benchmark directory, or null when there is none. */
export function findBenchDir() {
  if (process.env.VAP_BENCH_DIR) return path.resolve(process.env.VAP_BENCH_DIR);
  for (const c of candidates()) if (fs.existsSync(path.join(c, "expressions.json"))) return c;
  return null;
}

/** The benchmark directory; throws naming the places looked in when there is none. */
export function benchDir() {
  const dir = findBenchDir();
  if (dir) return dir;
  throw new Error(`benchmark data not found in ${candidates().join(", ")}; set VAP_BENCH_DIR`);
}

function candidates() {
  const list = [path.resolve(repo, "../shared/bench")];
  try {
    const common = execFileSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], {
      cwd: repo,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    list.push(path.resolve(path.dirname(common), "../shared/bench"));
  } catch {}
  return list;
}
