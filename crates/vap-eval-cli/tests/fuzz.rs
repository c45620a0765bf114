#![cfg(not(target_arch = "wasm32"))]
//! Mutated test files and dumps never panic the library (the test runner and the audit
//! reader and evaluator): every input gives results or diagnostics. Seeded, deterministic;
//! `FUZZ_SEED` / `FUZZ_CASES` run longer campaigns. (The npm package does not expose these
//! functions, so they are fuzzed natively rather than in tests/node/fuzz.test.mjs.)

use std::collections::BTreeMap;
use std::path::PathBuf;
use vap_eval::audit::{AuditOptions, Auditor, DumpReader};
use vap_eval::testing::run_file;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const TOKENS: [&str; 16] = [
    "{",
    "}",
    "[",
    "]",
    ":",
    "\"",
    "'",
    "\n",
    "---\n",
    "- ",
    "items:\n",
    "\n  ",
    "&a ",
    "*a",
    "\u{e9}\u{1F600}",
    "null",
];

/// One to three edits: delete a range, insert a token, duplicate a line, truncate.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(s.len() + 1);
        match rng.below(4) {
            0 => {
                let end = (at + 1 + rng.below(8)).min(s.len());
                s.drain(at.min(end)..end);
            }
            1 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                for (i, c) in t.chars().enumerate() {
                    s.insert(at + i, c);
                }
            }
            2 => {
                let text: String = s.iter().collect();
                let lines: Vec<&str> = text.lines().collect();
                if !lines.is_empty() {
                    let l = lines[rng.below(lines.len())].to_string();
                    let mut out = text.clone();
                    out.insert_str(text.find(&l).unwrap_or(0), &(l + "\n"));
                    s = out.chars().collect();
                }
            }
            _ => s.truncate(at),
        }
    }
    s.into_iter().collect()
}

fn data_files() -> BTreeMap<String, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut out = BTreeMap::new();
    for dir in ["kyverno", "kyverno-cel", "kaptest", "native", "audit"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            out.insert(p.display().to_string(), std::fs::read_to_string(&p).unwrap());
        }
    }
    out
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn mutated_test_files_never_panic() {
    let files = data_files();
    let tests: Vec<&String> = files
        .keys()
        .filter(|k| {
            k.ends_with("kyverno-test.yaml")
                || k.ends_with("kaptest.yaml")
                || k.ends_with("admission-test.yaml")
        })
        .collect();
    let mut rng = Rng(env("FUZZ_SEED", 0x5eed) | 1);
    for _ in 0..env("FUZZ_CASES", 300) {
        let test = tests[rng.below(tests.len())];
        // Mutate the test file, or one of the files it reads.
        let victim = if rng.below(2) == 0 {
            test.clone()
        } else {
            files.keys().nth(rng.below(files.len())).unwrap().clone()
        };
        let mutated = mutate(&files[&victim], &mut rng);
        let read = |p: &str| -> Result<String, String> {
            let p = PathBuf::from(p);
            let key =
                std::fs::canonicalize(&p).map(|c| c.display().to_string()).unwrap_or_default();
            let key = files.keys().find(|k| {
                std::fs::canonicalize(k).map(|c| c.display().to_string()).unwrap_or_default() == key
            });
            match key {
                Some(k) if *k == victim => Ok(mutated.clone()),
                Some(k) => Ok(files[k].clone()),
                None => Err("no such file".into()),
            }
        };
        let text = if *test == victim { mutated.clone() } else { files[test].clone() };
        let report = run_file(test, &text, &read, None);
        assert!(
            !report.cases.is_empty(),
            "a file gives at least one result (or its error): {test}"
        );
    }
}

#[test]
fn mutated_dumps_never_panic() {
    let files = data_files();
    let policies = files.iter().find(|(k, _)| k.ends_with("kyverno/policy.yaml")).unwrap().1;
    let yaml = files.iter().find(|(k, _)| k.ends_with("audit/dump.yaml")).unwrap().1.clone();
    let json = "{\"apiVersion\":\"v1\",\"items\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"a\",\"namespace\":\"staging\"},\"spec\":{\"replicas\":5}}],\"kind\":\"List\"}\n{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"b\"},\"spec\":{\"replicas\":\"x\"}}\n".to_string();
    let mut auditor = Auditor::new(policies, AuditOptions::default());
    let mut rng = Rng(env("FUZZ_SEED", 0x5eed) | 1);
    for _ in 0..env("FUZZ_CASES", 300) * 2 {
        let base = if rng.below(2) == 0 { &yaml } else { &json };
        let dump = mutate(base, &mut rng);
        let mut n = 0;
        for item in DumpReader::new(dump.as_bytes(), "dump") {
            if let Ok(raw) = item {
                let _ = auditor.audit(&raw);
            }
            n += 1;
            assert!(n <= dump.len() + 1, "the reader makes progress on {dump:?}");
        }
    }
}
