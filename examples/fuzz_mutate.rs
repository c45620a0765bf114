//! A native mutation fuzzer over the public API (tests/node/README.md, "Native mutation
//! fuzzer"): every input gets results or diagnostics, never a panic, never seconds of work,
//! never gigabytes, never more stack than the browser gives wasm.
//!
//! ```text
//! cargo run --profile fuzz --example fuzz_mutate -- [--seconds N] [--seed S] [--out DIR] [--stack KiB] [--stats]
//! cargo run --profile fuzz --example fuzz_mutate -- --replay DIR/<finding>.json
//! ```
//!
//! Corpus: the node fuzz test's (tests/node/fixtures/kyverno-corpus.yaml, the playground
//! examples www/examples/*, the pipeline cases tests/cases/*, the CEL conformance expressions
//! when extracted), the CLI's test files and dumps (crates/vap-eval-cli/tests/data) and dumps
//! built from the corpus objects. Mutations: byte level (flip, insert, delete, duplicate,
//! truncate, splice from another corpus file), YAML structure (a value replaced by another type
//! or an edge value, lines and blocks deleted or duplicated, keys added, deep nesting) and CEL
//! aware (tokens, operators, function names, macros, edge literals, indexes, regexps and
//! library calls with edge arguments inside the expressions of the manifests); random OpenAPI
//! schemas. Inputs whose results look new join a pool that later inputs are mutated from.
//! Targets: `evaluate`, a `PolicySet` evaluated three times, `typecheck`, `complete`/`hover` at
//! random offsets (manifests and expressions), `evaluateExpression`, the audit reader and
//! auditor over a mutated dump, the test runner over mutated test files.
//!
//! Built with the `fuzz` profile (dev at opt-level 1: unwinding panics, debug assertions and
//! overflow checks on). A run is reproducible from its seed; a finding is saved as JSON with its
//! message and replays alone (`--replay`). A panic is saved once per location, minimised by
//! deleting chunks while the same location panics; a call slower than 2 s or peaking over
//! 512 MiB is a finding; one over 60 s is a hang. The work runs in a child process on a small
//! stack; a child that dies (stack overflow, out of memory) leaves its input in
//! `in-flight.json`, saved as a `crash` finding, and the next child goes on after it. Not part
//! of the package or the test suite.

use serde_json::{json, Map, Value as Json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use vap_eval::api::{
    compile, evaluate, evaluate_expression, evaluate_with, to_js, typecheck, Document,
    EvaluateInput, ExpressionOptions, Manifests, PolicySetOptions, RequestDocuments,
};
use vap_eval::audit::{AuditOptions, Auditor, DumpReader};
use vap_eval::diagnostic::SourceRef;
use vap_eval::editor::{complete, hover, Source};
use vap_eval::testing::run_file;

// ---- memory: a counting allocator (current and peak bytes) -------------------------------

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = CURRENT.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        CURRENT.fetch_sub(l.size(), Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            if new >= l.size() {
                let now = CURRENT.fetch_add(new - l.size(), Ordering::Relaxed) + new - l.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                CURRENT.fetch_sub(l.size() - new, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const SLOW: Duration = Duration::from_secs(2);
const HANG: Duration = Duration::from_secs(60);
const MEMORY: usize = 512 << 20;

// ---- randomness -------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn new(seed: u64, i: u64) -> Rng {
        let mut r = Rng(seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03);
        for _ in 0..4 {
            r.next();
        }
        r
    }
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ---- the corpus -------------------------------------------------------------------------

#[derive(Clone, Default)]
struct Example {
    manifests: String,
    object: Option<String>,
    old_object: Option<String>,
    request: Option<String>,
}

struct Corpus {
    examples: Vec<Example>,
    /// Every text (for splices).
    texts: Vec<String>,
    exprs: Vec<String>,
    /// CLI test data: path → text.
    files: BTreeMap<String, String>,
    tests: Vec<String>,
    dumps: Vec<String>,
    policies_for_audit: Vec<String>,
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn load_corpus(root: &Path) -> Corpus {
    let mut examples = Vec::new();
    // Playground examples (first request, and the second one's files replacing the first's).
    let ex = root.join("www/examples");
    if let Some(index) = read(&ex.join("index.json")) {
        let index: Json = serde_json::from_str(&index).expect("www/examples/index.json");
        for e in index["examples"].as_array().into_iter().flatten() {
            let f = |v: &Json, k: &str| v[k].as_str().and_then(|n| read(&ex.join(n)));
            let first = Example {
                manifests: f(e, "manifests").unwrap_or_default(),
                object: f(e, "object"),
                old_object: f(e, "oldObject"),
                request: f(e, "request"),
            };
            for second in [&e["passing"], &e["failing"]] {
                if second.is_object() {
                    let mut x = first.clone();
                    x.object = f(second, "object").or(x.object);
                    x.old_object = f(second, "oldObject").or(x.old_object);
                    x.request = f(second, "request").or(x.request);
                    x.manifests = f(second, "manifests").unwrap_or(x.manifests);
                    examples.push(x);
                }
            }
            examples.push(first);
        }
    }
    // Pipeline cases.
    let mut cases: Vec<_> = std::fs::read_dir(root.join("tests/cases"))
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    cases.sort();
    for dir in cases {
        let manifests: Vec<String> = [
            "policy.yaml",
            "binding.yaml",
            "params.yaml",
            "namespace.yaml",
            "rbac.yaml",
            "webhooks.yaml",
        ]
        .iter()
        .filter_map(|f| read(&dir.join(f)))
        .collect();
        if manifests.is_empty() {
            continue;
        }
        examples.push(Example {
            manifests: manifests.join("\n---\n"),
            object: read(&dir.join("object.yaml")),
            old_object: read(&dir.join("oldObject.yaml")),
            request: None,
        });
    }
    // Kyverno policies with a Pod and a Deployment.
    let kyverno = read(&root.join("tests/node/fixtures/kyverno-corpus.yaml")).unwrap_or_default();
    examples.push(Example {
        manifests: kyverno.clone(),
        object: Some("apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default, labels: {app: a}}\nspec: {containers: [{name: c, image: 'nginx:latest'}], hostNetwork: true}\n".into()),
        ..Example::default()
    });
    examples.push(Example {
        manifests: kyverno,
        object: Some("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"default\"},\"spec\":{\"replicas\":3,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}}}".into()),
        ..Example::default()
    });
    // CLI test data.
    let mut paths = Vec::new();
    walk(&root.join("crates/vap-eval-cli/tests/data"), &mut paths);
    let mut files = BTreeMap::new();
    for p in paths {
        if let Some(t) = read(&p) {
            files.insert(p.display().to_string(), t);
        }
    }
    let tests: Vec<String> = files
        .keys()
        .filter(|k| {
            k.ends_with("kyverno-test.yaml")
                || k.ends_with("kaptest.yaml")
                || k.ends_with("admission-test.yaml")
        })
        .cloned()
        .collect();
    let dumps: Vec<String> = files
        .iter()
        .filter(|(k, _)| k.contains("/audit/") || k.ends_with("resources.yaml"))
        .map(|(_, v)| v.clone())
        .collect();
    // Dumps in every format the reader takes, from the corpus objects: a JSON List (pretty and
    // compact), JSON lines, concatenated values, a top-level array, a YAML List.
    let mut dumps = dumps;
    let objects: Vec<Json> = examples
        .iter()
        .filter_map(|e| e.object.as_deref())
        .filter_map(|t| vap_eval::audit::parse_document(t).ok())
        .filter(Json::is_object)
        .take(40)
        .collect();
    for chunk in objects.chunks(5) {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": chunk});
        dumps.push(serde_json::to_string_pretty(&list).unwrap());
        dumps.push(list.to_string());
        dumps.push(chunk.iter().map(|o| o.to_string() + "\n").collect());
        dumps.push(chunk.iter().map(|o| serde_json::to_string_pretty(o).unwrap()).collect());
        dumps.push(Json::Array(chunk.to_vec()).to_string());
        let mut yaml = String::from("apiVersion: v1\nkind: List\nitems:\n");
        for o in chunk {
            yaml.push_str(&format!("- {o}\n"));
        }
        dumps.push(yaml);
    }
    let mut policies_for_audit: Vec<String> =
        files.iter().filter(|(k, _)| k.ends_with("policy.yaml")).map(|(_, v)| v.clone()).collect();
    policies_for_audit.extend(examples.iter().take(8).map(|e| e.manifests.clone()));
    // Files that are manifests on their own (with the first object they test) join the examples.
    for (k, v) in &files {
        if k.ends_with(".yaml")
            && !k.ends_with(".object.yaml")
            && !k.ends_with(".passing.yaml")
            && !k.ends_with(".request.yaml")
        {
            let object = files.get(&k.replace(".yaml", ".object.yaml")).cloned();
            if object.is_some() {
                examples.push(Example { manifests: v.clone(), object, ..Example::default() });
            }
        }
    }
    let mut texts = Vec::new();
    for e in &examples {
        texts.push(e.manifests.clone());
        texts.extend(e.object.iter().cloned());
        texts.extend(e.request.iter().cloned());
    }
    texts.extend(files.values().cloned());
    let mut exprs = BTreeSet::new();
    for t in &texts {
        for (_, _, e) in expression_spans(t) {
            exprs.insert(e);
        }
    }
    // The CEL conformance expressions, where scripts/test.sh has extracted them.
    if let Some(suites) = read(&root.join("tests/conformance/.cache/suites.json")) {
        let suites: Json = serde_json::from_str(&suites).unwrap_or_default();
        for t in suites["tests"].as_array().into_iter().flatten() {
            if let Some(e) = t["expr"].as_str() {
                exprs.insert(e.to_string());
            }
        }
    }
    let mut exprs: Vec<String> = exprs.into_iter().collect();
    exprs.extend(EXTRA_EXPRS.iter().map(|s| s.to_string()));
    Corpus { examples, texts, exprs, files, tests, dumps, policies_for_audit }
}

const EXTRA_EXPRS: &[&str] = &[
    "object.spec.replicas * 2",
    "quantity('1Gi').add(quantity('500m')).isGreaterThan(quantity('1'))",
    "url('https://a.b/c?d=e').getQuery()",
    "ip('10.0.0.1').isLoopback() || cidr('10.0.0.0/8').containsIP('10.1.2.3')",
    "semver('1.2.3').compareTo(semver('1.2.4')) < 0",
    "'abc'.matches('^a.c$') && 'x'.find('[a-z]+') == 'x'",
    "format.dns1123Label().validate('abc').hasValue()",
    "[1,2,3].sum() + lists.range(3).size()",
    "sets.contains([1,2], [1]) && math.greatest(1, 2.0) == 2.0",
    "strings.quote('a') + 'a,b'.split(',').join('-')",
    "timestamp('2024-01-01T00:00:00Z').getHours('Europe/Paris') + duration('1h').getMinutes()",
    "authorizer.group('apps').resource('deployments').namespace('ns').name('n').check('get').allowed()",
    "optional.of(1).orValue(2) + object.?spec.?replicas.orValue(0)",
    "'%s %d %.2f'.format(['a', 1, 1.5])",
    "variables.v.exists(x, x == 1)",
    "base64.encode(b'abc') == 'YWJj'",
    "jsonpatch.escapeKey('a/b') == 'a~1b'",
];

// ---- finding expression spans in YAML text ------------------------------------------------

/// Byte spans (start, end) of the values of expression keys, and the expression text.
fn expression_spans(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        for key in [
            "expression:",
            "Expression:",
            "condition:",
            "cel:",
            "valueExpression:",
            "messageExpression:",
        ] {
            if let Some(at) = body.find(key) {
                let v_start = at + key.len();
                let value = &body[v_start..];
                let trimmed = value.trim_start();
                if trimmed.is_empty() {
                    break;
                }
                let start = offset + v_start + (value.len() - trimmed.len());
                let raw = trimmed.trim_end();
                let expr = if raw.starts_with('"') {
                    serde_json::from_str::<String>(raw).ok()
                } else if raw.starts_with('\'') && raw.ends_with('\'') && raw.len() > 1 {
                    Some(raw[1..raw.len() - 1].replace("''", "'"))
                } else if raw.starts_with('|') || raw.starts_with('>') {
                    None
                } else {
                    Some(raw.to_string())
                };
                if let Some(e) = expr {
                    out.push((start, start + raw.len(), e));
                }
                break;
            }
        }
        offset += line.len();
    }
    out
}

// ---- mutations ----------------------------------------------------------------------------

const CHARS: &[&str] = &[
    "(", ")", "[", "]", "{", "}", ".", ",", ":", ";", "?", "!", "&", "|", "=", "<", ">", "+", "-",
    "*", "/", "%", "\"", "'", "`", "\\", " ", "\n", "\t", "0", "9", "a", "_", "$", "@", "#", "é",
    "😀", "\u{0}", "\u{200b}", "ß", "İ", "\u{FFFF}", "\u{FFFD}", "𝟘", "\u{7f}", "\r",
];

const YAML_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ": ",
    "\"",
    "'",
    "\n",
    "\n---\n",
    "- ",
    "items:\n",
    "\n  ",
    "&a ",
    "*a",
    "!!str ",
    "!!binary ",
    "? ",
    "|\n  ",
    ">-\n  ",
    "<<: *a\n",
    "#",
    "%YAML 1.2\n",
    "...\n",
    "\t",
];

const VALUES: &[&str] = &[
    "null",
    "~",
    "true",
    "false",
    "0",
    "-1",
    "1.5",
    "-0.0",
    ".nan",
    ".inf",
    "-.inf",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    // Past 32 bits (wasm32's usize): a wrapping cast maps these on small values.
    "4294967296",
    "4294967297",
    "-4294967295",
    "2147483648",
    "1e308",
    "1e400",
    "-1e-400",
    "4.9e-324",
    "0x10",
    "0o17",
    "0b1",
    "''",
    "\"\"",
    "[]",
    "{}",
    "[1, [2, {a: b}]]",
    "{a: {b: {c: [d]}}}",
    "{matchExpressions: [{key: a, operator: Exists}]}",
    "{matchExpressions: [{key: a, operator: In, values: []}]}",
    "{matchLabels: {'': ''}}",
    "*x",
    "&x v",
    "!!binary aGk=",
    "!!int 7",
    "!!float x",
    "'é😀'",
    "\"\\ud800\"",
    "\"\\uFFFF\"",
    "\"\\u0000\"",
    "Fail",
    "Ignore",
    "Deny",
    "[Deny, Warn, Audit]",
    "[Audit]",
    "[Warn]",
    "Equivalent",
    "Exact",
    "'*'",
    "['*']",
    "['*/*']",
    "[CREATE, UPDATE, DELETE, CONNECT, '*']",
    "v1",
    "apps/v1",
    "a/b/c",
    "/",
    "ConfigMap",
    "Pod",
    "Namespace",
    "{name: x}",
    "{name: x, namespace: y}",
    "{parameterNotFoundAction: Allow}",
    "{parameterNotFoundAction: Deny, selector: {}}",
    "\"object.spec.replicas > 0\"",
    "\"params.data.x\"",
    "\"variables.v\"",
    "\"request.userInfo.username == ''\"",
    "100m",
    "1Gi",
    "1e3",
    "-1Ki",
    "0.000000001",
    "12345678901234567890Ei",
    "10.0.0.1",
    "::1/64",
    "2024-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999999Z",
    "1h",
    "-292y",
    "v1.2.3",
    "'${{ x }}'",
    "'{{ request.object.metadata.name }}'",
    "'?(*)'",
    "'!*'",
    "'a | b'",
];

const CEL_TOKENS: &[&str] = &[
    "object",
    "oldObject",
    "params",
    "request",
    "namespaceObject",
    "authorizer",
    "variables",
    "self",
    "oldSelf",
    ".all(x, ",
    ".exists(x, ",
    ".exists_one(x, ",
    ".map(x, ",
    ".map(x, x, x)",
    ".filter(x, ",
    ".transformList(i, v, v)",
    ".transformMap(k, v, v)",
    "has(",
    "has(object.x)",
    "size(",
    "int(",
    "uint(",
    "double(",
    "string(",
    "bytes(",
    "bool(",
    "duration(",
    "timestamp(",
    "quantity(",
    "isQuantity(",
    "ip(",
    "isIP(",
    "cidr(",
    "isCIDR(",
    "url(",
    "isURL(",
    "semver(",
    "isSemver(",
    "format.dns1123Label()",
    "format.named('x')",
    ".matches(",
    ".find(",
    ".findAll(",
    ".split(",
    ".join(",
    ".indexOf(",
    ".lastIndexOf(",
    ".replace(",
    ".lowerAscii()",
    ".upperAscii()",
    ".trim()",
    ".sort()",
    ".sum()",
    ".min()",
    ".max()",
    ".isSorted()",
    ".indexOf(1)",
    ".slice(",
    ".flatten(",
    ".distinct()",
    ".format([",
    ".reverse()",
    ".charAt(",
    ".substring(",
    ".getHours('Europe/Paris')",
    ".getFullYear('+14:00')",
    ".getDayOfWeek('x')",
    ".compareTo(",
    ".add(",
    ".sub(",
    ".asInteger()",
    ".asApproximateFloat()",
    ".sign()",
    ".isGreaterThan(",
    ".path(",
    ".getHost()",
    ".getPort()",
    ".getQuery()",
    ".getEscapedPath()",
    ".family()",
    ".prefixLength()",
    ".masked()",
    ".containsIP(",
    ".containsCIDR(",
    ".check('get')",
    ".allowed()",
    ".errored()",
    ".error()",
    ".reason()",
    ".resource('pods')",
    ".subresource('x')",
    ".namespace('')",
    ".name('')",
    ".group('apps')",
    ".serviceAccount('ns', 'n')",
    ".fieldSelector('a=b')",
    ".labelSelector('a in (b)')",
    "dyn(",
    "type(",
    "?",
    ".?",
    "[?",
    "optional.of(",
    "optional.none()",
    ".orValue(",
    ".hasValue()",
    ".value()",
    "math.greatest(",
    "math.least(",
    "math.abs(",
    "math.bitShiftLeft(1, ",
    "math.ceil(",
    "math.round(",
    "math.isNaN(",
    "sets.contains(",
    "sets.intersects(",
    "sets.equivalent(",
    "lists.range(",
    "strings.quote(",
    "base64.decode(",
    "base64.encode(",
    "jsonpatch.escapeKey(",
    "cel.bind(x, 1, ",
    "cel.block([",
    "cel.index(0)",
    "@it:0:0",
    "__result__",
    "in",
    "&&",
    "||",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "!",
    "? 1 : 2",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    ".",
    // Kyverno CEL libraries.
    "resource.Get('v1', 'configmaps', 'ns', 'n')",
    "resource.List('apps/v1', 'deployments', '')",
    "http.Get('https://x')",
    "image('nginx:latest')",
    "image('nginx@sha256:0').registry()",
    "json.unmarshal('{')",
    "yaml.parse('a: [')",
    "x509.decode('x')",
    "random('[a-z]{3}')",
    "time.now()",
    "globalContext.Get('x', '')",
    "imagedata.Get('x')",
    "gctx.Get('x', '')",
    "parseImageReference('x')",
];

const EDGE_LITERALS: &[&str] = &[
    "-9223372036854775808",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615u",
    "18446744073709551616u",
    "4294967296",
    "4294967297",
    "-4294967295",
    "2147483648",
    "4294967296u",
    "4294967297u",
    "0u",
    "1e308",
    "-1e308",
    "1e309",
    "2.2250738585072014e-308",
    "0.0",
    "-0.0",
    "0x7fffffffffffffff",
    "0x8000000000000000",
    "'\\uFFFF'",
    "'\\U0010FFFF'",
    "'\\U00110000'",
    "'\\ud800'",
    "'\\xff'",
    "b'\\xff\\xfe'",
    "'\\377'",
    "'\\0'",
    "''",
    "'''",
    "\"\"\"a\"\"\"",
    "r'\\d+'",
    "null",
    "[]",
    "{}",
    "[[[[[]]]]]",
    "{'a': {'b': {}}}",
    "{1: 2, 1u: 3, 1.0: 4}",
    "duration('9223372036854775807ns')",
    "duration('-292y')",
    "duration('1h1h1h')",
    "timestamp('0001-01-01T00:00:00Z')",
    "timestamp('9999-12-31T23:59:59.999999999Z')",
    "timestamp(-62135596801)",
    "timestamp(253402300800)",
    "1 / 0",
    "1 % 0",
    "-9223372036854775808 / -1",
    "-9223372036854775808 % -1",
    "0u - 1u",
    "9223372036854775807 + 1",
    "-(-9223372036854775808)",
    "int(1e19)",
    "int(-9.3e18)",
    "uint(-1)",
    "uint(1.8446744073709552e19)",
    "int('9223372036854775808')",
    "double('1e400')",
    "dyn(1) == dyn(1u)",
];

/// Long and odd strings (generated: a literal would be unreadable).
fn long_literal(rng: &mut Rng) -> String {
    let n = *rng.pick(&[1000usize, 10_000, 100_000, 1_000_000]);
    let c = *rng.pick(&["a", "é", "😀", "(", "\\\\", "%s", "a,"]);
    format!("'{}'", c.repeat(n / c.len().max(1)))
}

const REGEXPS: &[&str] = &[
    "(",
    ")",
    "[",
    "[]",
    "[^]",
    "a**",
    "a{2,1}",
    "a{1001}",
    "(a{1000}){1000}",
    "((((((((((a))))))))))*",
    "\\",
    "\\p{Greek}",
    "\\p{Nope}",
    "\\pN",
    "\\Q.*\\E",
    "(?i)ß",
    "(?P<n>a)(?P<n>b)",
    "(?<n>a)",
    "(?=a)",
    "(?!a)",
    "(?<=a)",
    "\\1",
    "\\b\\B\\A\\z",
    "\\Z",
    "[[:alpha:]]",
    "[[:nope:]]",
    "[a-\\d]",
    "[z-a]",
    "\\x{110000}",
    "\\x{FFFF}",
    "\\8",
    "(?U)a+?",
    "(?s-m:.)",
    "(?x) a # b",
    "^$",
    "\\C",
    "(|a)*",
    "(a*)*$",
    ".{0,65535}",
];

const LIB_STRINGS: &[&str] = &[
    "quantity('')",
    "quantity('1e1000')",
    "quantity('9223372036854775807Ei')",
    "quantity('-0.000000000001m')",
    "quantity('1.5.5')",
    "quantity('12345678901234567890123456789012345678901234567890')",
    "quantity('1Ki').asInteger()",
    "quantity('8Ei').add(quantity('8Ei')).asInteger()",
    "quantity('1').add(9223372036854775807)",
    "quantity('1').sub(-9223372036854775808)",
    "quantity('1e-1000').asApproximateFloat()",
    "url('')",
    "url('http://[::1')",
    "url('http://a:99999999999999/')",
    "url('%zz')",
    "url('http://a/%').getEscapedPath()",
    "url('http://u:p@[fe80::1%25eth0]:80/').getHostname()",
    "url('http://a').getPort()",
    "url('http://a?' + 'a=b&'.repeat(1000)).getQuery()",
    "ip('')",
    "ip('::ffff:1.2.3.4')",
    "ip('1.2.3.4%eth0')",
    "ip('fe80::1%eth0')",
    "ip('01.2.3.4')",
    "ip('1.2.3.4').isCanonical()",
    "cidr('1.2.3.4/33')",
    "cidr('::/129')",
    "cidr('::/0').masked()",
    "cidr('1.2.3.4/-1')",
    "cidr('0.0.0.0/0').containsCIDR('::/0')",
    "cidr('1.2.3.0/24').ip().family()",
    "semver('')",
    "semver('v1.2.3')",
    "semver('1.2.3-alpha+b', true)",
    "semver('01.2.3', true)",
    "semver('99999999999999999999.0.0')",
    "semver('1.2.3').major()",
    "format.named('nope')",
    "format.named('dns1123Subdomain').value().validate('x'.repeat(300))",
    "format.uri().validate('%')",
    "format.date().validate('2024-02-30')",
    "format.datetime().validate('2024-01-01T00:00:00+25:00')",
    "format.byte().validate('====')",
    "format.labelValue().validate('')",
    "format.qualifiedName().validate('a/b/c')",
    "'a'.format([])",
    "'%'.format([1])",
    "'%d'.format(['x'])",
    "'%.99999f'.format([1.0])",
    "'%e'.format([1e308])",
    "'%x'.format([b'\\xff'])",
    "'%o'.format([-1])",
    "'%b'.format([18446744073709551615u])",
    "'%s'.format([{1: [null]}])",
    "'%.-1f'.format([1.0])",
    "'abc'.substring(2, 1)",
    "'abc'.substring(-1)",
    "'abc'.charAt(4)",
    "'abc'.indexOf('', 9)",
    "'abc'.lastIndexOf('', -1)",
    "'abc'.replace('', 'x', -1)",
    "''.split('', 9223372036854775807)",
    "'a'.split('a', -9223372036854775808)",
    "strings.quote('\\ud800')",
    "'\\u00e9'.upperAscii()",
    "'x'.repeat(-1)",
    "lists.range(-1)",
    "lists.range(100000000)",
    "[1,2].slice(2, 1)",
    "[1,2].slice(-1, 0)",
    "[[1],[2]].flatten(-1)",
    "[1, 'a'].sort()",
    "[1, 1u, 1.0].distinct()",
    "[].min()",
    "[1, 2u].max()",
    "[9223372036854775807, 1].sum()",
    "[1.0, 1].sum()",
    "math.bitShiftLeft(1, 64)",
    "math.bitShiftLeft(1, -1)",
    "math.bitShiftRight(-1, 65)",
    "math.abs(-9223372036854775808)",
    "math.round(1e308)",
    "math.trunc(-1e308)",
    "math.sqrt(-1)",
    "math.greatest([])",
    "math.least(1, 1u, 1.0)",
    "base64.decode('====')",
    "base64.decode('@')",
    "timestamp('2024-01-01T00:00:00Z') + duration('2562047h')",
    "timestamp('2024-01-01T00:00:00Z') - timestamp('0001-01-01T00:00:00Z')",
    "duration('2562048h')",
    "duration('1.5.5s')",
    "duration('9223372036854775808ns')",
    "timestamp('2024-01-01T00:00:00Z').getHours('Nope/Zone')",
    "timestamp('2024-01-01T00:00:00Z').getHours('+99:99')",
    "timestamp('2024-01-01T00:00:00Z').getHours('-')",
    "int(timestamp('9999-12-31T23:59:59Z'))",
    "timestamp('2024-13-01T00:00:00Z')",
    "timestamp('2024-01-01T00:00:00.0000000001Z')",
    "string(duration('-1ns'))",
    "double('NaN') == double('NaN')",
    "int(double('NaN'))",
    "uint(double('inf'))",
    "string(b'\\xff')",
    "bytes('\\u00ff').size()",
    "dyn([]).all(x, x)",
    "[0, 1][9223372036854775807]",
    "[0, 1][-1]",
    "[0, 1][1u]",
    "[0, 1][1.0]",
    "[0, 1][1.5]",
    "{'a': 1}['b']",
    "{'a': 1}[[]]",
    "object.metadata.name[0]",
    "object.spec.containers[-9223372036854775808]",
    "object.spec.containers[18446744073709551615u]",
    "'abc'[0]",
    "type(type)",
    "cel.bind(x, x, x)",
    "[1, 2].map(x, [1, 2].map(x, [1, 2].map(x, lists.range(1000))))",
    "jsonpatch.escapeKey('~')",
    "x509.decode('-----BEGIN CERTIFICATE-----')",
];

/// Library calls with typed holes, filled with edge values of the type (`library_call`).
const TEMPLATES: &[&str] = &[
    "$S.charAt($I)",
    "$S.indexOf($S)",
    "$S.indexOf($S, $I)",
    "$S.lastIndexOf($S)",
    "$S.lastIndexOf($S, $I)",
    "$S.substring($I)",
    "$S.substring($I, $I)",
    "$S.replace($S, $S)",
    "$S.replace($S, $S, $I)",
    "$S.split($S)",
    "$S.split($S, $I)",
    "$S.lowerAscii()",
    "$S.upperAscii()",
    "$S.trim()",
    "$L.join($S)",
    "$L.join()",
    "strings.quote($S)",
    "$S.reverse()",
    "$F.format($L)",
    "$F.format([$X])",
    "$F.format([$X, $X])",
    "$S.size()",
    "$S.matches($R)",
    "$S.find($R)",
    "$S.findAll($R)",
    "$S.findAll($R, $I)",
    "$S.startsWith($S)",
    "$S.endsWith($S)",
    "$S.contains($S)",
    "$S + $S",
    "$S < $S",
    "$S[$I]",
    "bytes($S).size()",
    "string(bytes($S))",
    "base64.encode(bytes($S))",
    "base64.decode($S)",
    "int($S)",
    "uint($S)",
    "double($S)",
    "bool($S)",
    "duration($S)",
    "timestamp($S)",
    "$I + $I",
    "$I - $I",
    "$I * $I",
    "$I / $I",
    "$I % $I",
    "-$I",
    "$U + $U",
    "$U - $U",
    "$U * $U",
    "$U / $U",
    "$U % $U",
    "$D + $D",
    "$D * $D",
    "$D / $D",
    "-$D",
    "int($D)",
    "uint($D)",
    "int($U)",
    "uint($I)",
    "double($I)",
    "double($U)",
    "string($D)",
    "string($I)",
    "string($U)",
    "$I == $D",
    "$I < $U",
    "$D < $U",
    "$I < $D",
    "duration(string($I) + 's')",
    "timestamp($I)",
    "timestamp($I).getFullYear($T)",
    "timestamp($I).getDayOfYear($T)",
    "timestamp($I).getMilliseconds($T)",
    "timestamp($S).getHours($T)",
    "timestamp($I) + duration($S)",
    "timestamp($I) - timestamp($I)",
    "duration($S) + duration($S)",
    "duration($S).getMilliseconds()",
    "duration($S) * 2",
    "int(duration($S))",
    "int(timestamp($I))",
    "lists.range($I)",
    "$L.slice($I, $I)",
    "$L.flatten()",
    "$L.flatten($I)",
    "$L.sort()",
    "$L.distinct()",
    "$L.reverse()",
    "$L.first()",
    "$L.last()",
    "$L.sum()",
    "$L.min()",
    "$L.max()",
    "$L.isSorted()",
    "$L.indexOf($X)",
    "$L.lastIndexOf($X)",
    "$L[$I]",
    "$L[?$I]",
    "$L.sortBy(x, x)",
    "sets.contains($L, $L)",
    "sets.equivalent($L, $L)",
    "sets.intersects($L, $L)",
    "math.greatest($X, $X)",
    "math.least($L)",
    "math.abs($I)",
    "math.abs($D)",
    "math.sign($I)",
    "math.ceil($D)",
    "math.floor($D)",
    "math.round($D)",
    "math.trunc($D)",
    "math.isInf($D)",
    "math.isNaN($D)",
    "math.isFinite($D)",
    "math.bitOr($I, $I)",
    "math.bitAnd($U, $U)",
    "math.bitXor($I, $I)",
    "math.bitNot($I)",
    "math.bitShiftLeft($I, $I)",
    "math.bitShiftRight($I, $I)",
    "math.bitShiftLeft($U, $I)",
    "math.sqrt($D)",
    "quantity($Q)",
    "isQuantity($Q)",
    "quantity($Q).asInteger()",
    "quantity($Q).asApproximateFloat()",
    "quantity($Q).isInteger()",
    "quantity($Q).sign()",
    "quantity($Q).add(quantity($Q))",
    "quantity($Q).add($I)",
    "quantity($Q).sub($I)",
    "quantity($Q).sub(quantity($Q))",
    "quantity($Q).compareTo(quantity($Q))",
    "quantity($Q).isLessThan(quantity($Q))",
    "string(quantity($Q))",
    "url($S)",
    "isURL($S)",
    "url($S).getHost()",
    "url($S).getHostname()",
    "url($S).getPort()",
    "url($S).getQuery()",
    "url($S).getEscapedPath()",
    "url($S).getScheme()",
    "ip($S)",
    "isIP($S)",
    "ip.isCanonical($S)",
    "ip($S).family()",
    "ip($S).isLoopback()",
    "string(ip($S))",
    "cidr($S)",
    "isCIDR($S)",
    "cidr($S).prefixLength()",
    "cidr($S).masked()",
    "cidr($S).ip()",
    "cidr($S).containsIP($S)",
    "cidr($S).containsCIDR($S)",
    "string(cidr($S))",
    "semver($S)",
    "semver($S, true)",
    "isSemver($S)",
    "isSemver($S, true)",
    "semver($S).major()",
    "semver($S, true).patch()",
    "semver($S).compareTo(semver($S, true))",
    "format.named($S)",
    "format.named($S).hasValue()",
    "format.dns1123Label().validate($S)",
    "format.dns1123Subdomain().validate($S)",
    "format.qualifiedName().validate($S)",
    "format.labelValue().validate($S)",
    "format.uri().validate($S)",
    "format.uuid().validate($S)",
    "format.byte().validate($S)",
    "format.date().validate($S)",
    "format.datetime().validate($S)",
    "format.dns1035LabelPrefix().validate($S)",
    "authorizer.group($S).resource($S).namespace($S).name($S).check($S).allowed()",
    "authorizer.path($S).check($S).reason()",
    "authorizer.serviceAccount($S, $S).group($S).resource($S).subresource($S).check($S).error()",
    "authorizer.group($S).resource($S).fieldSelector($S).labelSelector($S).check($S).allowed()",
    "jsonpatch.escapeKey($S)",
    "cel.bind(x, $X, [x, x])",
    "optional.of($X).orValue($X)",
    "optional.ofNonZeroValue($X)",
    "{$X: $X}",
    "{$X: 1, $X: 2}",
    "[$X, $X][$I]",
    "$X in $L",
    "$X == $X",
    "type($X)",
    "dyn($X) + dyn($X)",
    "$L + $L",
    "$L.map(x, x * $I)",
    "$L.exists_one(x, x == $X)",
    "$L.transformList(i, v, i * $I)",
    "{1: 2}.transformMap(k, v, v + $I)",
    "$L.all(i, v, i < $I)",
];

const HOLE_S: &[&str] = &[
    "''",
    "'a'",
    "'abc'",
    "'é😀a'",
    "'😀'",
    "'ß'",
    "'İ'",
    "'\\u0000'",
    "'a,b,,c'",
    "'%'",
    "'\\\\'",
    "'\\uFFFF'",
    "'\\U0010FFFF'",
    "' \\t\\n'",
    "'1.2.3'",
    "'v1.2.3-rc.1+b'",
    "'1h30m'",
    "'-1s'",
    "'2024-01-01T00:00:00Z'",
    "'10.0.0.1'",
    "'::1'",
    "'fe80::1%eth0'",
    "'10.0.0.0/8'",
    "'::ffff:1.2.3.4/128'",
    "'http://a.b:8080/p?q=1&q=2#f'",
    "'https://[::1]:0/'",
    "'/relative'",
    "'mailto:x'",
    "'a=b,c!=d'",
    "'a in (b,c)'",
    "'!a'",
    "'x'.repeat(3)",
    "string(b'\\xff')",
    "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'",
    "'get'",
    "'*'",
    "'dns1123Label'",
    "'-'",
    "'0'",
    "'9223372036854775808'",
    "'1e400'",
    "'NaN'",
    "'true'",
    "'TRUE'",
    "'t'",
];
const HOLE_I: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "5",
    "-1",
    "-2",
    "63",
    "64",
    "65",
    "9223372036854775807",
    "-9223372036854775808",
    "-9223372036854775807",
    "100000000",
    "4294967296",
    "4294967297",
    "4294967298",
    "-4294967295",
    "2147483648",
    "1000000",
];
const HOLE_U: &[&str] =
    &["0u", "1u", "2u", "18446744073709551615u", "9223372036854775808u", "4294967297u"];
const HOLE_D: &[&str] = &[
    "0.0",
    "-0.0",
    "0.5",
    "-0.5",
    "1.5",
    "2.5",
    "1e308",
    "-1e308",
    "1e-320",
    "double('NaN')",
    "double('inf')",
    "double('-inf')",
    "9.223372036854776e18",
    "-9.223372036854776e18",
    "1.8446744073709552e19",
    "4503599627370497.0",
];
const HOLE_L: &[&str] = &[
    "[]",
    "[1, 2, 3]",
    "[3, 1, 2, 1]",
    "['a', 'é', '']",
    "[1, 'a']",
    "[[1], [2, [3]], []]",
    "[1.0, 2u]",
    "[true, false]",
    "[9223372036854775807, 1]",
    "[-9223372036854775808, -1]",
    "[18446744073709551615u, 1u]",
    "[1e308, 1e308]",
    "[duration('1h'), duration('-1h')]",
    "[timestamp(0), timestamp(253402300799)]",
    "[b'a', b'']",
    "[null, null]",
    "[{}, {}]",
    "[dyn(1), dyn(1u), dyn(1.0)]",
    "lists.range(3)",
    "[double('NaN'), 1.0]",
];
const HOLE_Q: &[&str] = &[
    "''",
    "'0'",
    "'1'",
    "'-1'",
    "'100m'",
    "'1Ki'",
    "'1Gi'",
    "'1e3'",
    "'1E3'",
    "'1.5'",
    "'.5'",
    "'5.'",
    "'1e-3'",
    "'1n'",
    "'1u'",
    "'9223372036854775807'",
    "'9223372036854775808'",
    "'-9223372036854775808'",
    "'8Ei'",
    "'9Ei'",
    "'1e18'",
    "'1e19'",
    "'1e308'",
    "'1e-308'",
    "'0.0000000001'",
    "'123456789012345678901234567890'",
    "'1Pi'",
    "'+1'",
    "'--1'",
    "'1 '",
    "'1e'",
    "'1ee3'",
    "'1.5Mi'",
    "'0.1m'",
    "'999999999999999999999E'",
];
const HOLE_T: &[&str] = &[
    "''",
    "'UTC'",
    "'Europe/Paris'",
    "'America/New_York'",
    "'+14:00'",
    "'-12:00'",
    "'+99:99'",
    "'-'",
    "'+'",
    "'Nope/Zone'",
    "'../etc'",
    "'02:00'",
    "'+02'",
    "'Local'",
    "'EST5EDT'",
];
const HOLE_F: &[&str] = &[
    "'%s'",
    "'%d'",
    "'%f'",
    "'%.3f'",
    "'%e'",
    "'%x'",
    "'%X'",
    "'%o'",
    "'%b'",
    "'%%'",
    "'%.0e'",
    "'%10s'",
    "'%-5d'",
    "'%.*f'",
    "'%'",
    "'%.'",
    "'%.99f'",
    "'%.1000f'",
    "'%s %s'",
    "'%1$s'",
    "'%q'",
    "'%.2s'",
    "'%.f'",
    "'%.-1f'",
    "'%.18446744073709551616f'",
    "'%.9223372036854775807f'",
    "'%.4294967297f'",
];

fn hole(rng: &mut Rng, kind: u8) -> String {
    let v = match kind {
        b'S' => *rng.pick(HOLE_S),
        b'I' => *rng.pick(HOLE_I),
        b'U' => *rng.pick(HOLE_U),
        b'D' => *rng.pick(HOLE_D),
        b'L' => *rng.pick(HOLE_L),
        b'Q' => *rng.pick(HOLE_Q),
        b'T' => *rng.pick(HOLE_T),
        b'F' => *rng.pick(HOLE_F),
        b'R' => {
            return format!("'{}'", rng.pick(REGEXPS).replace('\\', "\\\\").replace('\'', "\\'"))
        }
        _ => {
            let pool: [&[&str]; 5] = [HOLE_S, HOLE_I, HOLE_U, HOLE_D, HOLE_L];
            let list = *rng.pick(&pool);
            *rng.pick(list)
        }
    };
    v.to_string()
}

/// A library call with edge arguments; sometimes a hole of the wrong type.
fn library_call(rng: &mut Rng) -> String {
    let t = *rng.pick(TEMPLATES);
    let mut out = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' {
            let k = chars.next().unwrap_or('X') as u8;
            let k = if rng.chance(8) { *rng.pick(b"SIUDLQTFRX") } else { k };
            out.push_str(&hole(rng, k));
        } else {
            out.push(c);
        }
    }
    out
}

fn random_piece(rng: &mut Rng, corpus: &Corpus) -> String {
    match rng.below(12) {
        0 => (*rng.pick(CHARS)).to_string(),
        1 => (*rng.pick(YAML_TOKENS)).to_string(),
        2 => (*rng.pick(CEL_TOKENS)).to_string(),
        3 => (*rng.pick(VALUES)).to_string(),
        4 => (*rng.pick(EDGE_LITERALS)).to_string(),
        5 => (*rng.pick(LIB_STRINGS)).to_string(),
        6 => {
            let t = rng.pick(&corpus.texts);
            let a = floor(t, rng.below(t.len() + 1));
            let b = floor(t, (a + 1 + rng.below(200)).min(t.len()));
            t[a..b].to_string()
        }
        7 => {
            let e = rng.pick(&corpus.exprs);
            let a = floor(e, rng.below(e.len() + 1));
            let b = floor(e, (a + 1 + rng.below(30)).min(e.len()));
            e[a..b].to_string()
        }
        8 => char::from_u32(rng.below(0x110000) as u32).map(String::from).unwrap_or_default(),
        9 => "(".repeat(rng.below(400)),
        10 => format!("'{}'", rng.pick(REGEXPS).replace('\\', "\\\\")),
        _ => (rng.below(256) as u8 as char).to_string(),
    }
}

/// The largest char boundary at or below `i`.
fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate_bytes(s: &str, rng: &mut Rng, corpus: &Corpus) -> String {
    let mut b = s.as_bytes().to_vec();
    match rng.below(7) {
        0 if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] ^= 1 << rng.below(8);
        }
        1 => {
            let i = rng.below(b.len() + 1);
            let end = (i + 1 + rng.below(16)).min(b.len());
            b.drain(i.min(end)..end);
        }
        2 => {
            let i = rng.below(b.len() + 1);
            let piece = random_piece(rng, corpus);
            b.splice(i..i, piece.bytes());
        }
        3 => {
            // splice: this text's prefix, another corpus text's suffix.
            let other = rng.pick(&corpus.texts).as_bytes();
            let i = rng.below(b.len() + 1);
            let j = rng.below(other.len() + 1);
            b.truncate(i);
            b.extend_from_slice(&other[j..]);
        }
        4 if !b.is_empty() => {
            let i = rng.below(b.len());
            let end = (i + 1 + rng.below(200)).min(b.len());
            let copy = b[i..end].to_vec();
            let at = rng.below(b.len() + 1);
            b.splice(at..at, copy);
        }
        5 => {
            let i = rng.below(b.len() + 1);
            b.truncate(i);
        }
        _ if !b.is_empty() => {
            let i = rng.below(b.len());
            b[i] = *rng.pick(b"\0\n\r\t :-[]{}'\"#&*!|>%@`,\\\x7f\xff\xc3");
        }
        _ => {}
    }
    String::from_utf8_lossy(&b).into_owned()
}

const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "spec",
    "data",
    "replicas",
    "matchConstraints",
    "resourceRules",
    "validations",
    "expression",
    "message",
    "messageExpression",
    "reason",
    "variables",
    "matchConditions",
    "auditAnnotations",
    "valueExpression",
    "failurePolicy",
    "paramKind",
    "paramRef",
    "policyName",
    "validationActions",
    "namespaceSelector",
    "objectSelector",
    "matchResources",
    "excludeResourceRules",
    "operations",
    "apiGroups",
    "apiVersions",
    "resources",
    "resourceNames",
    "scope",
    "rules",
    "match",
    "exclude",
    "validate",
    "cel",
    "expressions",
    "pattern",
    "anyPattern",
    "deny",
    "conditions",
    "preconditions",
    "celPreconditions",
    "validationFailureAction",
    "validationFailureActionOverrides",
    "background",
    "any",
    "all",
    "webhooks",
    "clientConfig",
    "sideEffects",
    "admissionReviewVersions",
    "timeoutSeconds",
    "reinvocationPolicy",
    "subjects",
    "roleRef",
    "verbs",
    "containers",
    "image",
    "resourcesLimits",
    "generateName",
    "uid",
    "deletionTimestamp",
    "finalizers",
    "ownerReferences",
    "operation",
    "userInfo",
    "username",
    "groups",
    "subResource",
    "dryRun",
    "options",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "$ref",
    "type",
    "properties",
    "items",
    "additionalProperties",
    "policies",
    "resource",
    "result",
    "kyvernoTest",
];

fn deep(rng: &mut Rng) -> String {
    let n = 1 + rng.below(3000);
    match rng.below(3) {
        0 => format!("{}{}", "[".repeat(n), "]".repeat(n)),
        1 => format!("{}1{}", "{a: ".repeat(n), "}".repeat(n)),
        _ => {
            let mut s = String::from("\n");
            for i in 0..n.min(500) {
                s.push_str(&" ".repeat(2 * (i + 1)));
                s.push_str("a:\n");
            }
            s
        }
    }
}

fn mutate_yaml(s: &str, rng: &mut Rng, corpus: &Corpus) -> String {
    let mut lines: Vec<String> = s.split('\n').map(String::from).collect();
    if lines.is_empty() {
        return s.to_string();
    }
    let i = rng.below(lines.len());
    match rng.below(9) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[rng.below(lines.len())].clone();
            lines.insert(i, l);
        }
        2 | 3 => {
            // A value replaced: another type, an edge value, a long string, deep nesting.
            let value = match rng.below(8) {
                0 => long_literal(rng),
                1 => deep(rng),
                2 => format!("\"{}\"", rng.pick(LIB_STRINGS).replace('"', "\\\"")),
                _ => (*rng.pick(VALUES)).to_string(),
            };
            let l = &lines[i];
            if let Some(c) = l.find(": ").or_else(|| l.ends_with(':').then(|| l.len() - 1)) {
                lines[i] = format!("{}: {}", &l[..c], value);
            } else if let Some(d) = l.find("- ") {
                lines[i] = format!("{}- {}", &l[..d], value);
            } else {
                lines[i] = format!("{l} {value}");
            }
        }
        4 => {
            // A block (a line and its more indented followers) deleted or duplicated.
            let indent = lines[i].len() - lines[i].trim_start().len();
            let mut end = i + 1;
            while end < lines.len()
                && (lines[end].len() - lines[end].trim_start().len() > indent
                    || lines[end].trim().is_empty())
            {
                end += 1;
            }
            if rng.chance(50) {
                lines.drain(i..end);
            } else {
                let block: Vec<String> = lines[i..end].to_vec();
                lines.splice(end..end, block);
            }
        }
        5 => {
            // A key added at this line's indentation.
            let l = &lines[i];
            let indent = &l[..l.len() - l.trim_start().len()];
            let key = rng.pick(KEYS);
            let value = rng.pick(VALUES);
            lines.insert(i, format!("{indent}{key}: {value}"));
        }
        6 => {
            // Re-indented.
            let t = lines[i].trim_start().to_string();
            lines[i] = format!("{}{}", " ".repeat(rng.below(12)), t);
        }
        7 => {
            // A line from another corpus text.
            let other = rng.pick(&corpus.texts);
            let ls: Vec<&str> = other.split('\n').collect();
            let l = ls[rng.below(ls.len())].to_string();
            lines.insert(i, l);
        }
        _ => {
            let l = &lines[i];
            if let Some(c) = l.find(": ") {
                lines[i] = format!("{}: {}", &l[..c], deep(rng));
            }
        }
    }
    lines.join("\n")
}

/// Rough CEL tokens: identifiers, numbers, string literals, operators.
fn cel_tokens(e: &str) -> Vec<(usize, usize)> {
    let b = e.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
        } else if c == b'\'' || c == b'"' {
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
        } else {
            i += 1;
            while i < b.len() && b"=&|<>!".contains(&b[i]) && b"=&|<>!".contains(&c) {
                i += 1;
            }
        }
        let end = floor(e, i.min(b.len()));
        if end > start && e.is_char_boundary(start) {
            out.push((start, end));
        }
        if end <= start {
            i = start + 1;
        }
    }
    out
}

const OPERATORS: &[&str] =
    &["&&", "||", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "in", "!", "?", ":"];
const MACROS: &[&str] = &[
    ".all(x, true)",
    ".exists(x, x == x)",
    ".exists_one(x, false)",
    ".map(x, x)",
    ".map(x, true, x)",
    ".filter(x, true)",
    ".all(k, v, true)",
    ".transformList(i, v, v)",
    ".transformMap(k, v, v)",
    ".transformMapEntry(k, v, {k: v})",
    ".map(x, x.map(y, y))",
];
const INDEXES: &[&str] = &[
    "[0]",
    "[-1]",
    "[9223372036854775807]",
    "[-9223372036854775808]",
    "[18446744073709551615u]",
    "[4294967296]",
    "[4294967297]",
    "[4294967297u]",
    "[1.5]",
    "['a']",
    "[null]",
    "[?0]",
    "[?'a']",
    ".?a",
    "[[]]",
];

fn mutate_cel(e: &str, rng: &mut Rng, corpus: &Corpus) -> String {
    let mut e = e.to_string();
    for _ in 0..1 + rng.below(3) {
        let toks = cel_tokens(&e);
        let (a, b) = if toks.is_empty() { (e.len(), e.len()) } else { *rng.pick(&toks) };
        let tok = e[a..b].to_string();
        let first = tok.bytes().next().unwrap_or(b' ');
        let replacement: String = match rng.below(12) {
            0 | 1 if first.is_ascii_digit() || first == b'\'' || first == b'"' => {
                if rng.chance(10) {
                    long_literal(rng)
                } else {
                    (*rng.pick(EDGE_LITERALS)).to_string()
                }
            }
            0 | 1 => (*rng.pick(EDGE_LITERALS)).to_string(),
            2 if OPERATORS.contains(&tok.as_str()) => (*rng.pick(OPERATORS)).to_string(),
            2 | 3 => (*rng.pick(CEL_TOKENS)).to_string(),
            4 => format!("{tok}{}", rng.pick(MACROS)),
            5 => format!("{tok}{}", rng.pick(INDEXES)),
            6 => {
                let r = rng.pick(REGEXPS).replace('\\', "\\\\").replace('\'', "\\'");
                format!("{tok}.matches('{r}')")
            }
            7 if rng.chance(50) => (*rng.pick(LIB_STRINGS)).to_string(),
            7 => library_call(rng),
            8 => {
                // A token from another expression.
                let other = rng.pick(&corpus.exprs);
                let ts = cel_tokens(other);
                if ts.is_empty() {
                    tok
                } else {
                    let (c, d) = *rng.pick(&ts);
                    other[c..d].to_string()
                }
            }
            9 => String::new(),
            10 => format!("({tok} {} {})", rng.pick(OPERATORS), rng.pick(EDGE_LITERALS)),
            _ => {
                // A whole other expression, or a splice of this one with another.
                let other = rng.pick(&corpus.exprs);
                let j = floor(other, rng.below(other.len() + 1));
                return format!("{}{}", &e[..a], &other[j..]);
            }
        };
        e.replace_range(a..b, &replacement);
    }
    e
}

/// Mutate one expression inside YAML text, re-quoted so that the YAML still parses.
fn mutate_expression_in(s: &str, rng: &mut Rng, corpus: &Corpus) -> String {
    let spans = expression_spans(s);
    if spans.is_empty() {
        return mutate_bytes(s, rng, corpus);
    }
    let (a, b, e) = rng.pick(&spans).clone();
    let m = mutate_cel(&e, rng, corpus);
    let quoted = serde_json::to_string(&m).unwrap();
    format!("{}{}{}", &s[..a], quoted, &s[b..])
}

fn mutate_text(s: &str, rng: &mut Rng, corpus: &Corpus) -> String {
    let mut s = s.to_string();
    for _ in 0..1 + rng.below(3) {
        s = match rng.below(10) {
            0..=2 => mutate_bytes(&s, rng, corpus),
            3..=5 => mutate_yaml(&s, rng, corpus),
            _ => mutate_expression_in(&s, rng, corpus),
        };
    }
    s
}

fn random_json(rng: &mut Rng, depth: usize) -> Json {
    match rng.below(if depth > 3 { 6 } else { 9 }) {
        0 => Json::Null,
        1 => Json::Bool(rng.chance(50)),
        2 => serde_json::from_str(rng.pick::<&str>(&[
            "0",
            "-1",
            "1.5",
            "9007199254740993",
            "4294967296",
            "4294967297",
            "9223372036854775807",
            "-9223372036854775808",
            "18446744073709551615",
            "1e308",
            "-0.0",
            "5e-324",
        ]))
        .unwrap(),
        3 => Json::String(
            (*rng.pick(&[
                "",
                "a",
                "é😀",
                "100m",
                "1Gi",
                "10.0.0.1",
                "::1/64",
                "2024-01-01T00:00:00Z",
                "1h",
                "v1.2.3",
                "\u{FFFF}",
                "\u{0}",
            ]))
            .to_string(),
        ),
        4 => Json::String("x".repeat(rng.below(100_000))),
        5 => {
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default", "labels": {"app": "a"}}, "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
        }
        6 => Json::Array((0..rng.below(5)).map(|_| random_json(rng, depth + 1)).collect()),
        _ => {
            let mut m = Map::new();
            for _ in 0..rng.below(5) {
                let k = *rng.pick(&[
                    "a",
                    "spec",
                    "metadata",
                    "replicas",
                    "data",
                    "labels",
                    "name",
                    "é",
                    "",
                    "kind",
                    "apiVersion",
                ]);
                m.insert(k.to_string(), random_json(rng, depth + 1));
            }
            Json::Object(m)
        }
    }
}

/// A random OpenAPI v3 schema: types (and wrong ones), properties, items, refs (to built-in
/// definitions, missing ones, itself), the Kubernetes extensions, combinators.
fn random_schema(rng: &mut Rng, depth: usize) -> Json {
    let mut m = Map::new();
    if rng.chance(70) {
        let t: Json = match rng.below(12) {
            0 => json!("array"),
            1 => json!("string"),
            2 => json!("integer"),
            3 => json!("number"),
            4 => json!("boolean"),
            5 => json!(["object", "null"]),
            6 => json!(7),
            7 => json!(""),
            _ => json!("object"),
        };
        m.insert("type".into(), t);
    }
    if depth < 4 {
        if rng.chance(50) {
            let mut props = Map::new();
            for _ in 0..rng.below(5) {
                let k = *rng.pick(&[
                    "spec",
                    "metadata",
                    "replicas",
                    "items",
                    "a-b",
                    "",
                    "1a",
                    "namespace",
                    "self",
                    "__x__",
                    "in",
                    "é",
                    "data",
                    "status",
                    "apiVersion",
                    "kind",
                ]);
                props.insert(k.into(), random_schema(rng, depth + 1));
            }
            m.insert("properties".into(), Json::Object(props));
        }
        if rng.chance(25) {
            let v =
                if rng.chance(30) { json!(rng.chance(50)) } else { random_schema(rng, depth + 1) };
            m.insert("additionalProperties".into(), v);
        }
        if rng.chance(25) {
            let v = if rng.chance(20) {
                json!([random_schema(rng, depth + 1)])
            } else {
                random_schema(rng, depth + 1)
            };
            m.insert("items".into(), v);
        }
        if rng.chance(10) {
            let k = *rng.pick(&["allOf", "anyOf", "oneOf"]);
            m.insert(
                k.into(),
                json!([random_schema(rng, depth + 1), random_schema(rng, depth + 1)]),
            );
        }
        if rng.chance(5) {
            m.insert("not".into(), random_schema(rng, depth + 1));
        }
    }
    if rng.chance(15) {
        let r = *rng.pick(&[
            "#/components/schemas/io.k8s.api.apps.v1.Deployment",
            "#/components/schemas/io.k8s.api.core.v1.PodSpec",
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString",
            "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity",
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time",
            "#/components/schemas/nope",
            "#/definitions/io.k8s.api.apps.v1.Deployment",
            "#",
            "#/",
            "",
            "Loop",
        ]);
        m.insert("$ref".into(), json!(r));
    }
    for (k, v) in [
        ("x-kubernetes-preserve-unknown-fields", json!(true)),
        ("x-kubernetes-int-or-string", json!(true)),
        ("x-kubernetes-embedded-resource", json!(true)),
        ("nullable", json!(true)),
        ("x-kubernetes-list-type", json!("map")),
        ("x-kubernetes-list-map-keys", json!(["name", ""])),
        ("x-kubernetes-map-type", json!("atomic")),
        (
            "format",
            json!(*rng.pick(&[
                "date-time",
                "date",
                "byte",
                "int64",
                "int-or-string",
                "duration",
                "quantity",
                "uri",
                "x"
            ])),
        ),
        ("enum", json!([1, "a", null, {}])),
        ("maxLength", json!(9223372036854775807i64)),
        ("maxLength", json!(4294967297i64)),
        ("maxItems", json!(4294967296i64)),
        ("maxProperties", json!(4294967297i64)),
        ("maxItems", json!(-1)),
        ("maxProperties", json!(1.5)),
        ("default", json!({"a": [1]})),
        ("x-kubernetes-validations", json!([{"rule": "self.size() > 0"}])),
    ] {
        if rng.chance(6) {
            m.insert(k.into(), v);
        }
    }
    if rng.chance(3) {
        return random_json(rng, 2);
    }
    Json::Object(m)
}

fn random_schemas(rng: &mut Rng) -> String {
    let mut m = Map::new();
    for _ in 0..1 + rng.below(3) {
        let k = *rng.pick(&[
            "apps/v1/Deployment",
            "v1/Pod",
            "v1/ConfigMap",
            "example.com/v1/Widget",
            "v1/Namespace",
            "batch/v1/Job",
            "",
            "/",
        ]);
        m.insert(k.into(), random_schema(rng, 0));
    }
    Json::Object(m).to_string()
}

// ---- cases --------------------------------------------------------------------------------

/// One call: `target` and its inputs (all strings, so that it saves and replays as JSON).
type Case = BTreeMap<String, String>;

fn s(c: &Case, k: &str) -> Option<String> {
    c.get(k).cloned()
}

const VERSIONS: &[&str] =
    &["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37", "1.29", "x"];
const SCHEMAS: &[&str] = &[
    r##"{"apps/v1/Deployment": {"type": "object", "properties": {"foo": {"type": "string"}, "spec": {"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}}}}"##,
    r#"{"v1/ConfigMap": {"type": "object", "additionalProperties": {"type": "array", "items": {"x-kubernetes-int-or-string": true}}}}"#,
    r##"{"apps/v1/Deployment": {"$ref": "#/components/schemas/io.k8s.api.apps.v1.Deployment"}}"##,
    r#"{"apps/v1/Deployment": {"$ref": "Loop"}}"#,
    r#"{"apps/v1/Deployment": {"type": ["object", "null"], "properties": {"": {"type": "string"}, "1a": {}, "a-b": {"type": "integer"}, "namespace": {"type": "string", "format": "date-time"}}}}"#,
    r#"{"apps/v1/Deployment": {"type": 7, "properties": []}}"#,
    r#"{"apps/v1/Deployment": "not a schema"}"#,
    r#"{"apps/v1/Deployment": {"type": "object", "properties": {"spec": {"type": "object", "properties": {"replicas": {"type": "integer", "maximum": 1e300, "enum": [1, "a", null]}}, "x-kubernetes-validations": [{"rule": "self.replicas > 0"}]}}}}"#,
    r##"{"apps/v1/Deployment": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.Deployment"}], "anyOf": [{}], "items": {"items": {"items": {}}}}}"##,
];

/// Inputs whose results looked new (`FEATURE`): mutated again, so mutations accumulate.
#[derive(Default)]
struct Pools {
    examples: Vec<Example>,
    exprs: Vec<String>,
}

const POOL_MAX: usize = 20_000;

impl Pools {
    fn keep(&mut self, c: &Case, rng: &mut Rng) {
        let cap = |v: usize, rng: &mut Rng| if v >= POOL_MAX { Some(rng.below(v)) } else { None };
        match c["target"].as_str() {
            "evaluate" => {
                let e = Example {
                    manifests: s(c, "manifests").unwrap_or_default(),
                    object: s(c, "object"),
                    old_object: s(c, "oldObject"),
                    request: s(c, "request"),
                };
                if e.manifests.len() + e.object.as_ref().map_or(0, String::len) > 200_000 {
                    return;
                }
                match cap(self.examples.len(), rng) {
                    Some(i) => self.examples[i] = e,
                    None => self.examples.push(e),
                }
            }
            "expression" => {
                let e = c["expression"].clone();
                if e.len() > 20_000 {
                    return;
                }
                match cap(self.exprs.len(), rng) {
                    Some(i) => self.exprs[i] = e,
                    None => self.exprs.push(e),
                }
            }
            _ => {}
        }
    }
}

fn generate(rng: &mut Rng, corpus: &Corpus, pools: &Pools) -> Case {
    let mut c = Case::new();
    let r = rng.below(100);
    if r < 50 {
        // One in five from the Kyverno examples (few, but a whole engine).
        let kyverno: Vec<&Example> =
            corpus.examples.iter().filter(|e| e.manifests.contains("kyverno.io/")).collect();
        let ex = if rng.chance(20) && !kyverno.is_empty() {
            (*rng.pick(&kyverno)).clone()
        } else if rng.chance(50) && !pools.examples.is_empty() {
            rng.pick(&pools.examples).clone()
        } else {
            rng.pick(&corpus.examples).clone()
        };
        let mut fields = vec![
            ("manifests", Some(ex.manifests)),
            ("object", ex.object),
            ("oldObject", ex.old_object),
            ("request", ex.request),
        ];
        let which = *rng.pick(&[0, 0, 0, 0, 1, 1, 2, 3]);
        let text = fields[which].1.clone().unwrap_or_default();
        fields[which].1 = Some(mutate_text(&text, rng, corpus));
        if rng.chance(15) {
            let other = rng.below(4);
            let text = fields[other].1.clone().unwrap_or_default();
            fields[other].1 = Some(mutate_text(&text, rng, corpus));
        }
        for (k, v) in fields {
            if let Some(v) = v {
                c.insert(k.into(), v);
            }
        }
        if rng.chance(10) {
            c.insert("kubernetesVersion".into(), (*rng.pick(VERSIONS)).into());
        }
        if rng.chance(30) {
            c.insert("unboundPolicies".into(), (*rng.pick(&["skip", "preview", "bind"])).into());
        }
        if rng.chance(20) {
            c.insert("missingNamespaces".into(), (*rng.pick(&["assume", "strict"])).into());
        }
        if rng.chance(10) {
            c.insert("objectsAsGiven".into(), "true".into());
        }
        if rng.chance(10) {
            c.insert("schemas".into(), (*rng.pick(SCHEMAS)).into());
        } else if rng.chance(10) {
            c.insert("schemas".into(), random_schemas(rng));
        }
        if rng.chance(20) {
            c.insert("objectAsValue".into(), "true".into());
        }
        let target = match rng.below(20) {
            0..=9 => "evaluate",
            10..=13 => "policyset",
            14..=15 => "typecheck",
            16..=17 => "complete",
            _ => "hover",
        };
        if target == "complete" || target == "hover" {
            let len = c.get("manifests").map_or(0, |m| m.len());
            let p =
                if rng.chance(5) { u32::MAX as usize - rng.below(3) } else { rng.below(len + 2) };
            c.insert("position".into(), p.to_string());
        }
        c.insert("target".into(), target.into());
    } else if r < 80 {
        let base = if rng.chance(50) && !pools.exprs.is_empty() {
            rng.pick(&pools.exprs).clone()
        } else {
            rng.pick(&corpus.exprs).clone()
        };
        let expr = if rng.chance(30) {
            // Library calls with edge arguments, sometimes two joined, sometimes mutated.
            let mut e = library_call(rng);
            if rng.chance(20) {
                e = format!("{e} {} {}", rng.pick(OPERATORS), library_call(rng));
            }
            if rng.chance(20) {
                e = mutate_cel(&e, rng, corpus);
            }
            e
        } else if rng.chance(50) {
            mutate_cel(&base, rng, corpus)
        } else if rng.chance(50) {
            mutate_bytes(&base, rng, corpus)
        } else {
            format!("{} {} {}", base, rng.pick(OPERATORS), rng.pick(LIB_STRINGS))
        };
        c.insert("expression".into(), expr);
        let mut vars = Map::new();
        for k in ["object", "oldObject", "params", "request", "namespaceObject", "x"] {
            if rng.chance(40) {
                let v = if rng.chance(20) {
                    Json::String(random_json(rng, 0).to_string())
                } else if rng.chance(30) {
                    // A corpus object as text, maybe mutated.
                    let ex = rng.pick(&corpus.examples);
                    let t = ex.object.clone().unwrap_or_default();
                    Json::String(if rng.chance(50) { mutate_text(&t, rng, corpus) } else { t })
                } else {
                    random_json(rng, 0)
                };
                vars.insert(k.into(), v);
            }
        }
        c.insert("variables".into(), Json::Object(vars).to_string());
        let kinds = [
            "validation",
            "messageExpression",
            "matchCondition",
            "auditAnnotation",
            "variable",
            "bogus",
        ];
        if rng.chance(85) {
            c.insert("kind".into(), (*rng.pick(&kinds)).into());
        }
        if rng.chance(90) {
            c.insert("kubernetesVersion".into(), (*rng.pick(VERSIONS)).into());
        }
        if rng.chance(25) {
            c.insert(
                "objectKind".into(),
                (*rng.pick(&[
                    "apps/v1/Deployment",
                    "v1/Pod",
                    "a/b/c/",
                    "",
                    "Deployment",
                    "example.com/v1/Widget",
                    "v1/ConfigMap",
                    "batch/v1/CronJob",
                ]))
                .into(),
            );
        }
        if rng.chance(10) {
            let m: Map<String, Json> = serde_json::from_str(rng.pick::<&str>(SCHEMAS)).unwrap();
            c.insert("objectSchema".into(), m.values().next().unwrap().to_string());
        } else if rng.chance(15) {
            c.insert("objectSchema".into(), random_schema(rng, 0).to_string());
        }
        if rng.chance(5) {
            c.insert("schemas".into(), (*rng.pick(SCHEMAS)).into());
        } else if rng.chance(10) {
            c.insert("schemas".into(), random_schemas(rng));
        }
        let target = match rng.below(10) {
            0..=6 => "expression",
            7 | 8 => "completeExpression",
            _ => "hoverExpression",
        };
        if target != "expression" {
            let len = c["expression"].len();
            c.insert("position".into(), rng.below(len + 2).to_string());
            c.entry("objectKind".into()).or_insert_with(|| "apps/v1/Deployment".into());
        }
        c.insert("target".into(), target.into());
    } else if r < 90 {
        c.insert("target".into(), "audit".into());
        c.insert("policies".into(), rng.pick(&corpus.policies_for_audit).clone());
        let dump = rng.pick(&corpus.dumps).clone();
        c.insert("dump".into(), mutate_text(&dump, rng, corpus));
        if rng.chance(20) {
            let p = c["policies"].clone();
            c.insert("policies".into(), mutate_text(&p, rng, corpus));
        }
        if rng.chance(30) {
            c.insert("update".into(), "true".into());
        }
        if rng.chance(50) {
            c.insert("capacity".into(), (1 + rng.below(64)).to_string());
        }
    } else {
        c.insert("target".into(), "testfile".into());
        let test = rng.pick(&corpus.tests).clone();
        // The test file, or a file in its directory.
        let dir = Path::new(&test).parent().unwrap().display().to_string();
        let siblings: Vec<&String> = corpus.files.keys().filter(|k| k.starts_with(&dir)).collect();
        let victim = if rng.chance(50) { test.clone() } else { (*rng.pick(&siblings)).clone() };
        c.insert("mutated".into(), mutate_text(&corpus.files[&victim], rng, corpus));
        c.insert("test".into(), test);
        c.insert("victim".into(), victim);
    }
    c
}

fn document(c: &Case, k: &str) -> Option<Document> {
    let t = s(c, k)?;
    if c.contains_key("objectAsValue") {
        if let Ok(v) = serde_json::from_str::<Json>(&t) {
            return Some(Document::Object(v));
        }
    }
    Some(Document::Text(t))
}

fn input_of(c: &Case) -> EvaluateInput {
    let schemas = s(c, "schemas").map(|t| Document::Object(serde_json::from_str(&t).unwrap()));
    EvaluateInput {
        manifests: Manifests::Text(s(c, "manifests").unwrap_or_default()),
        object: document(c, "object"),
        old_object: document(c, "oldObject"),
        request: document(c, "request"),
        kubernetes_version: s(c, "kubernetesVersion"),
        unbound_policies: s(c, "unboundPolicies")
            .and_then(|u| serde_json::from_value(Json::String(u)).ok()),
        missing_namespaces: s(c, "missingNamespaces")
            .and_then(|u| serde_json::from_value(Json::String(u)).ok()),
        objects_as_given: c.contains_key("objectsAsGiven"),
        schemas,
    }
}

/// An `evaluate` input aimed at what differs between 32- and 64-bit platforms: a corpus
/// example, unmutated but for its expressions (library calls and edge literals swapped in) and
/// numbers in its documents replaced by values about 2^31, 2^32 and 2^63 (a wrapping `as usize`
/// maps 2^32 + 1 on 1 on wasm32), so that the input stays well-formed and reaches evaluation.
fn generate_focus32(rng: &mut Rng, corpus: &Corpus) -> Case {
    const NUMBERS: &[&str] = &[
        "4294967296",
        "4294967297",
        "4294967295",
        "2147483648",
        "-2147483649",
        "-4294967295",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551615",
        "4294967296.5",
    ];
    let ex = rng.pick(&corpus.examples).clone();
    let mut c = Case::new();
    let mut manifests = ex.manifests;
    for _ in 0..1 + rng.below(3) {
        manifests = if rng.chance(50) {
            // A whole expression replaced by a library call or an indexing with edge values.
            let spans = expression_spans(&manifests);
            if spans.is_empty() {
                break;
            }
            let (a, b, _) = rng.pick(&spans).clone();
            let e = if rng.chance(60) {
                library_call(rng)
            } else {
                format!(
                    "{}{} {} {}",
                    rng.pick(&["object.spec", "object.metadata", "[1, 2, 3]", "'abc'", "object"]),
                    rng.pick(INDEXES),
                    rng.pick(OPERATORS),
                    rng.pick(EDGE_LITERALS)
                )
            };
            // Most places want a bool (or a string): wrapped, the value is still computed and an
            // error in it still reported.
            let e = match rng.below(4) {
                0 | 1 => format!("({e}) == ({e})"),
                2 => format!("string({e}) == 'x'"),
                _ => e,
            };
            let quoted = serde_json::to_string(&e).unwrap();
            format!("{}{}{}", &manifests[..a], quoted, &manifests[b..])
        } else {
            mutate_expression_in(&manifests, rng, corpus)
        };
    }
    c.insert("manifests".into(), manifests);
    for (k, v) in [("object", ex.object), ("oldObject", ex.old_object), ("request", ex.request)] {
        let Some(mut t) = v else { continue };
        if k != "request" && rng.chance(60) {
            // Replace a few numbers (a run of digits after `: ` or `[`/`, `).
            let starts: Vec<usize> = t
                .match_indices(|ch: char| ch.is_ascii_digit())
                .map(|(i, _)| i)
                .filter(|&i| {
                    i > 1 && matches!(&t[i - 2..i], ": " | ", " | " -") || t[..i].ends_with('[')
                })
                .collect();
            for _ in 0..1 + rng.below(2) {
                if starts.is_empty() {
                    break;
                }
                let i = *rng.pick(&starts);
                if i > t.len() || !t.is_char_boundary(i) {
                    continue;
                }
                let end = t[i..].find(|ch: char| !ch.is_ascii_digit()).map_or(t.len(), |e| i + e);
                t = format!("{}{}{}", &t[..i], rng.pick(NUMBERS), &t[end..]);
            }
        }
        c.insert(k.into(), t);
    }
    if rng.chance(20) {
        c.insert("kubernetesVersion".into(), (*rng.pick(VERSIONS)).into());
    }
    if rng.chance(20) {
        c.insert("objectsAsGiven".into(), "true".into());
    }
    if rng.chance(20) {
        c.insert("schemas".into(), random_schemas(rng));
    }
    c.insert("target".into(), "evaluate".into());
    c
}

/// One `--evals` line: the input as the package's `evaluate` takes it, and the native result as
/// the package returns it (what `wasm::evaluate` does, natively).
fn eval_line(c: &Case) -> String {
    let mut input = input_of(c);
    // A document given as a value with an integer JS cannot hold (beyond 2^53) goes to both
    // sides as its text: as a JS value the package would get a double (an API property, not
    // a wasm32 one), and these values (`maxLength: 9223372036854775807`) are the ones to test.
    fn unsafe_int(v: &Json) -> bool {
        match v {
            Json::Number(n) => n.as_i64().map_or(n.is_u64(), |i| i.unsigned_abs() > 1 << 53),
            Json::Array(a) => a.iter().any(unsafe_int),
            Json::Object(m) => m.values().any(unsafe_int),
            _ => false,
        }
    }
    for d in [&mut input.object, &mut input.old_object, &mut input.request, &mut input.schemas] {
        // So does one that is not an object: the package takes a JS string as text, and throws
        // on other values (a native `Document::Object(27)` has no package counterpart).
        if let Some(Document::Object(v)) = d {
            if unsafe_int(v) || !v.is_object() {
                *d = Some(Document::Text(v.to_string()));
            }
        }
    }
    let mut js = Map::new();
    js.insert("manifests".into(), Json::String(input.manifests.to_text()));
    for (k, d) in
        [("object", &input.object), ("oldObject", &input.old_object), ("request", &input.request)]
    {
        match d {
            Some(Document::Text(t)) => js.insert(k.into(), Json::String(t.clone())),
            // Passed as a JSON value (the script parses it: `objectAsValue`).
            Some(Document::Object(v)) => js.insert(k.into(), json!({"json": v.to_string()})),
            None => None,
        };
    }
    if let Some(v) = &input.kubernetes_version {
        js.insert("kubernetesVersion".into(), Json::String(v.clone()));
    }
    for k in ["unboundPolicies", "missingNamespaces"] {
        // Only what the native input took (a bad name is dropped by `input_of`).
        let taken = match k {
            "unboundPolicies" => input.unbound_policies.is_some(),
            _ => input.missing_namespaces.is_some(),
        };
        if taken {
            js.insert(k.into(), Json::String(c[k].clone()));
        }
    }
    if input.objects_as_given {
        js.insert("objectsAsGiven".into(), Json::Bool(true));
    }
    match &input.schemas {
        Some(Document::Text(t)) => js.insert("schemas".into(), Json::String(t.clone())),
        Some(Document::Object(v)) => js.insert("schemas".into(), json!({"json": v.to_string()})),
        None => None,
    };
    let set = compile(&input.manifests, &input.set_options());
    let docs = RequestDocuments::from_input(&input);
    let result = evaluate_with(&set, &docs);
    let text_of = |s: &SourceRef| match s {
        SourceRef::Manifest { .. } => Some(std::borrow::Cow::Borrowed(set.text.as_str())),
        SourceRef::Expression { expression } => Some(std::borrow::Cow::Owned(expression.clone())),
        SourceRef::Input { name } => {
            let d = match name.as_str() {
                "object" => &docs.object,
                "oldObject" => &docs.old_object,
                "request" => &docs.request,
                _ => &None,
            };
            match d {
                Some(Document::Text(t)) => Some(std::borrow::Cow::Borrowed(t.as_str())),
                _ => None,
            }
        }
    };
    let mut value = serde_json::to_value(&result).unwrap_or_default();
    let diags: Vec<_> = result.diagnostics.iter().map(|d| to_js(d, &text_of)).collect();
    value["diagnostics"] = serde_json::to_value(diags).unwrap_or_default();
    json!({"input": js, "result": value}).to_string()
}

fn expression_options(c: &Case) -> ExpressionOptions {
    ExpressionOptions {
        kubernetes_version: s(c, "kubernetesVersion"),
        kind: s(c, "kind"),
        object_kind: s(c, "objectKind"),
        object_schema: s(c, "objectSchema").map(Document::Text),
        schemas: s(c, "schemas").map(|t| Document::Object(serde_json::from_str(&t).unwrap())),
    }
}

/// Run one case; the result is dropped (serialised first: the wasm layer does that too).
fn run(c: &Case, files: &BTreeMap<String, String>) {
    let position = || s(c, "position").and_then(|p| p.parse::<u32>().ok()).unwrap_or(0);
    match c["target"].as_str() {
        "evaluate" => {
            let r = evaluate(&input_of(c));
            let text = serde_json::to_string(&r).unwrap_or_default();
            let mut codes: Vec<&str> = r.diagnostics.iter().map(|d| d.code).collect();
            codes.sort();
            codes.dedup();
            let message: String = r
                .response
                .status
                .as_ref()
                .map(|st| st.message.chars().take(24).collect())
                .unwrap_or_default();
            *FEATURE.lock().unwrap() =
                format!("{codes:?} {} {message} {}", r.response.allowed, r.policies.len());
            if STATS.load(Ordering::Relaxed) {
                let v: Json = serde_json::from_str(&text).unwrap_or_default();
                let mut stats = STATS_COUNTS.lock().unwrap();
                let mut codes: Vec<String> = v["diagnostics"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|d| d["code"].as_str().unwrap_or("?").to_string())
                    .collect();
                codes.dedup();
                for code in codes {
                    *stats.entry(code).or_default() += 1;
                }
                let allowed = v["response"]["allowed"].as_bool();
                *stats.entry(format!("(allowed {allowed:?})")).or_default() += 1;
                *stats
                    .entry(format!(
                        "(policies {})",
                        v["policies"].as_array().map_or(0, Vec::len).min(3)
                    ))
                    .or_default() += 1;
            }
        }
        "policyset" => {
            let input = input_of(c);
            let set = compile(&input.manifests, &input.set_options());
            let docs = RequestDocuments::from_input(&input);
            let _ = serde_json::to_string(&evaluate_with(&set, &docs));
            // Reused: another request, then the same one again.
            let other = RequestDocuments {
                object: input.old_object.clone().or(input.object.clone()),
                old_object: None,
                request: None,
            };
            let _ = serde_json::to_string(&evaluate_with(&set, &other));
            let _ = serde_json::to_string(&evaluate_with(&set, &docs));
            let _ = PolicySetOptions::default();
        }
        "typecheck" => {
            let _ = serde_json::to_string(&typecheck(&input_of(c)));
        }
        "complete" => {
            let input = input_of(c);
            let _ = serde_json::to_string(&complete(&Source::Manifests(&input), position()));
        }
        "hover" => {
            let input = input_of(c);
            let _ = serde_json::to_string(&hover(&Source::Manifests(&input), position()));
        }
        "expression" | "completeExpression" | "hoverExpression" => {
            let expression = c["expression"].as_str();
            let variables: Map<String, Json> =
                serde_json::from_str(c.get("variables").map_or("{}", |v| v)).unwrap();
            let options = expression_options(c);
            match c["target"].as_str() {
                "expression" => {
                    let r = evaluate_expression(expression, &variables, &options);
                    let _ = serde_json::to_string(&r);
                    let first: Vec<String> = r
                        .diagnostics
                        .iter()
                        .take(2)
                        .map(|d| {
                            format!("{} {}", d.code, d.message.chars().take(24).collect::<String>())
                        })
                        .collect();
                    *FEATURE.lock().unwrap() = format!("{:?} {first:?}", r.type_name);
                }
                t => {
                    let source =
                        Source::Expression { expression, variables: &variables, options: &options };
                    if t == "completeExpression" {
                        let _ = serde_json::to_string(&complete(&source, position()));
                    } else {
                        let _ = serde_json::to_string(&hover(&source, position()));
                    }
                }
            }
        }
        "audit" => {
            let options =
                AuditOptions { update: c.contains_key("update"), ..AuditOptions::default() };
            let mut auditor = Auditor::new(&c["policies"], options);
            let dump = &c["dump"];
            let mut n = 0;
            // A small read buffer: documents straddle its refills.
            let capacity = s(c, "capacity").and_then(|n| n.parse().ok()).unwrap_or(8192);
            let reader = std::io::BufReader::with_capacity(capacity, dump.as_bytes());
            for item in DumpReader::new(reader, "dump") {
                if let Ok(raw) = item {
                    let _ = serde_json::to_string(&auditor.audit(&raw));
                }
                n += 1;
                assert!(n <= dump.len() + 1, "the dump reader makes no progress");
            }
        }
        "testfile" => {
            let test = &c["test"];
            let victim = &c["victim"];
            let mutated = &c["mutated"];
            let canon = |p: &str| {
                std::fs::canonicalize(p).map(|c| c.display().to_string()).unwrap_or_default()
            };
            let read = |p: &str| -> Result<String, String> {
                let key = canon(p);
                if !key.is_empty() && key == canon(victim) {
                    return Ok(mutated.clone());
                }
                match files.iter().find(|(k, _)| !key.is_empty() && canon(k) == key) {
                    Some((_, v)) => Ok(v.clone()),
                    None => Err("no such file".into()),
                }
            };
            let text = if test == victim { mutated.clone() } else { files[test].clone() };
            let report = run_file(test, &text, &read, None);
            assert!(!report.cases.is_empty(), "a test file gives at least one result");
        }
        t => panic!("unknown target {t}"),
    }
}

// ---- the harness --------------------------------------------------------------------------

/// `--stats`: count the diagnostic codes of `evaluate` results (how deep the inputs reach).
static STATS: AtomicBool = AtomicBool::new(false);
static STATS_COUNTS: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());
/// What a call's result looked like (diagnostic codes, decision, type): a new one keeps its
/// input in the pool that later inputs are mutated from.
static FEATURE: Mutex<String> = Mutex::new(String::new());
static LAST_PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);
static CALL_STARTED: AtomicU64 = AtomicU64::new(0);
static IN_CALL: AtomicBool = AtomicBool::new(false);
/// Set while `call` catches panics: any other panic is the driver's own and is printed.
static CATCHING: AtomicBool = AtomicBool::new(false);

fn now_ms(epoch: Instant) -> u64 {
    epoch.elapsed().as_millis() as u64
}

enum Outcome {
    Ok,
    Panic { location: String, message: String },
}

fn call(c: &Case, files: &BTreeMap<String, String>) -> Outcome {
    *LAST_PANIC.lock().unwrap() = None;
    FEATURE.lock().unwrap().clear();
    CATCHING.store(true, Ordering::Relaxed);
    let result = catch_unwind(AssertUnwindSafe(|| run(c, files)));
    CATCHING.store(false, Ordering::Relaxed);
    match result {
        Ok(()) => Outcome::Ok,
        Err(_) => {
            let (location, message) =
                LAST_PANIC.lock().unwrap().take().unwrap_or_else(|| ("?".into(), "?".into()));
            Outcome::Panic { location, message }
        }
    }
}

/// Delete chunks of the longest string fields while the same location panics.
fn minimise(c: &Case, location: &str, files: &BTreeMap<String, String>) -> Case {
    let mut best = c.clone();
    let mut budget = 400;
    let fields: Vec<String> = best
        .keys()
        .filter(|k| !matches!(k.as_str(), "target" | "test" | "victim" | "position" | "variables"))
        .cloned()
        .collect();
    for k in fields {
        let mut chunk = best[&k].len() / 2;
        while chunk > 0 && budget > 0 {
            let mut at = 0;
            let mut progressed = false;
            while at < best[&k].len() && budget > 0 {
                let v = &best[&k];
                let a = floor(v, at);
                let b = floor(v, (a + chunk).min(v.len()));
                if b <= a {
                    break;
                }
                let mut cand = best.clone();
                let mut t = v.clone();
                t.replace_range(a..b, "");
                cand.insert(k.clone(), t);
                budget -= 1;
                let started = Instant::now();
                let hit = matches!(call(&cand, files), Outcome::Panic { location: l, .. } if l == location);
                if hit && started.elapsed() < SLOW {
                    best = cand;
                    progressed = true;
                } else {
                    at = b;
                }
            }
            if !progressed {
                chunk /= 2;
            }
        }
    }
    best
}

fn save(out: &Path, kind: &str, key: &str, c: &Case, note: &str) -> PathBuf {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    let path = out.join(format!("{kind}-{h:016x}.json"));
    let doc = json!({"kind": kind, "note": note, "case": c});
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1));
    let seconds: u64 = arg("--seconds").and_then(|v| v.parse().ok()).unwrap_or(60);
    let seed: u64 = arg("--seed").and_then(|v| v.parse().ok()).unwrap_or(20261127);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = arg("--out").map(PathBuf::from).unwrap_or_else(|| root.join("target/fuzz-findings"));
    std::fs::create_dir_all(&out).unwrap();

    std::panic::set_hook(Box::new(|info| {
        let location =
            info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        let message = if let Some(s) = info.payload().downcast_ref::<&str>() {
            s.to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "(non-string payload)".into()
        };
        if !CATCHING.load(Ordering::Relaxed) {
            eprintln!("fuzz_mutate itself panicked at {location}: {message}");
        }
        *LAST_PANIC.lock().unwrap() = Some((location, message));
    }));

    // A small stack, as in the browser: V8 runs wasm on its own ~1 MB stack (450 levels of a
    // YAML object exhausted it under `evaluate`). Frames differ per function between this build
    // and V8's (the CEL parser's recursion limit needs ~1 MiB here, less in V8; the YAML
    // converter the opposite), so a `crash` finding is a candidate to confirm with the package
    // under Node. A stack overflow aborts the process: the supervisor (below) saves the
    // in-flight input and starts a new child after it.
    let stack: usize = arg("--stack").and_then(|v| v.parse().ok()).unwrap_or(1024);
    if args.iter().any(|a| a == "--child")
        || arg("--replay").is_some()
        || arg("--exprs").is_some()
        || arg("--evals").is_some()
    {
        let child_args = args.clone();
        std::thread::Builder::new()
            .stack_size(stack << 10)
            .spawn(move || child(child_args, seconds, seed, out))
            .unwrap()
            .join()
            .unwrap();
    } else {
        supervise(&args, seconds, seed, &out);
    }
}

/// Runs children (`--child --start N`) until the time is up; a child that dies (stack
/// overflow, out of memory, abort) leaves its input in `in-flight.json`, saved as a `crash`
/// finding, and the next child starts after it.
fn supervise(args: &[String], seconds: u64, seed: u64, out: &Path) {
    let exe = std::env::current_exe().unwrap();
    let epoch = Instant::now();
    let mut start = 0u64;
    let inflight = out.join("in-flight.json");
    loop {
        let left = seconds.saturating_sub(epoch.elapsed().as_secs());
        if left == 0 {
            break;
        }
        let mut command = std::process::Command::new(&exe);
        command.args(["--child", "--start", &start.to_string(), "--seconds", &left.to_string()]);
        command.args(["--seed", &seed.to_string(), "--out", &out.display().to_string()]);
        for flag in ["--stack"] {
            if let Some(i) = args.iter().position(|a| a == flag) {
                command.args(&args[i..(i + 2).min(args.len())]);
            }
        }
        if args.iter().any(|a| a == "--stats") {
            command.arg("--stats");
        }
        let status = command.status().unwrap();
        if status.success() {
            break;
        }
        let Ok(text) = std::fs::read_to_string(&inflight) else { break };
        let doc: Json = serde_json::from_str(&text).unwrap_or_default();
        let Some(i) = doc["iteration"].as_u64() else { break };
        if status.code() != Some(3) {
            // (3: a hang, saved by the child's watchdog.)
            let note = format!("the process died ({status}) at iteration {i}");
            let saved = json!({"kind": "crash", "note": note, "case": doc["case"]});
            let path = out.join(format!("crash-{seed}-{i}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(&saved).unwrap()).unwrap();
            eprintln!("CRASH: {note}\n      -> {}", path.display());
        }
        start = i + 1;
    }
}

fn child(args: Vec<String>, seconds: u64, seed: u64, out: PathBuf) {
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpus = load_corpus(&root);

    // `--exprs N`: N generated expressions with their native results, one JSON line each, to
    // compare with the package's (wasm32: usize is 32 bits, stacks and floats formatting are
    // the engine's).
    if let Some(n) = arg("--exprs").and_then(|v| v.parse::<u64>().ok()) {
        let pools = Pools::default();
        for i in 0..n {
            let mut rng = Rng::new(seed, i);
            let e = loop {
                let c = generate(&mut rng, &corpus, &pools);
                if c["target"] == "expression" {
                    break c["expression"].clone();
                }
            };
            let r = evaluate_expression(&e, &Map::new(), &ExpressionOptions::default());
            let diags: Vec<&str> = r.diagnostics.iter().map(|d| d.message.as_str()).collect();
            println!(
                "{}",
                json!({"expr": e, "value": r.value, "type": r.type_name, "diagnostics": diags})
            );
        }
        return;
    }

    // `--evals N`: N generated `evaluate` inputs with the native result in the form the package
    // gives it (diagnostics with UTF-16 positions and `rendered`), one JSON line each
    // (`{"input": …, "result": …}`), for `tests/node/fuzz-eval-differential.mjs`.
    // `--focus32`: three in four inputs from `generate_focus32`.
    if let Some(n) = arg("--evals").and_then(|v| v.parse::<u64>().ok()) {
        let pools = Pools::default();
        let focus32 = args.iter().any(|a| a == "--focus32");
        for i in 0..n {
            let mut rng = Rng::new(seed, i);
            let c = if focus32 && rng.chance(75) {
                generate_focus32(&mut rng, &corpus)
            } else {
                loop {
                    let c = generate(&mut rng, &corpus, &pools);
                    if c["target"] == "evaluate" || c["target"] == "policyset" {
                        break c;
                    }
                }
            };
            // The input in flight, for a native crash (the child has no supervisor here).
            let doc = json!({"iteration": i, "case": c});
            let _ = std::fs::write(out.join("in-flight.json"), doc.to_string());
            println!("{}", eval_line(&c));
        }
        return;
    }

    if let Some(path) = arg("--replay") {
        let doc: Json = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let c: Case = serde_json::from_value(doc["case"].clone()).unwrap();
        let t = Instant::now();
        PEAK.store(CURRENT.load(Ordering::Relaxed), Ordering::Relaxed);
        let before = CURRENT.load(Ordering::Relaxed);
        match call(&c, &corpus.files) {
            Outcome::Ok => println!("no panic"),
            Outcome::Panic { location, message } => println!("panic at {location}: {message}"),
        }
        println!(
            "{:.3} s, peak +{} MiB",
            t.elapsed().as_secs_f64(),
            (PEAK.load(Ordering::Relaxed) - before) >> 20
        );
        return;
    }

    eprintln!(
        "fuzz_mutate: seed {seed}, {seconds} s; corpus {} examples, {} expressions, {} test files, {} dumps; findings in {}",
        corpus.examples.len(),
        corpus.exprs.len(),
        corpus.tests.len(),
        corpus.dumps.len(),
        out.display()
    );
    STATS.store(args.iter().any(|a| a == "--stats"), Ordering::Relaxed);
    let inflight = out.join("in-flight.json");
    let epoch = Instant::now();
    // Watchdog: a call running longer than HANG is a hang; its input is already on disk.
    {
        let inflight = inflight.clone();
        let out = out.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            if IN_CALL.load(Ordering::Relaxed)
                && now_ms(epoch) - CALL_STARTED.load(Ordering::Relaxed) > HANG.as_millis() as u64
            {
                let hang = out.join(format!("hang-{}.json", now_ms(epoch)));
                let _ = std::fs::copy(&inflight, &hang);
                eprintln!(
                    "HANG: a call ran over {} s; input in {}",
                    HANG.as_secs(),
                    hang.display()
                );
                std::process::exit(3);
            }
        });
    }

    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut features: BTreeSet<String> = BTreeSet::new();
    let mut pools = Pools::default();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let (mut panics, mut slow, mut big) = (0u64, 0u64, 0u64);
    let deadline = Duration::from_secs(seconds);
    let first: u64 = arg("--start").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut i = first;
    let mut last_report = Instant::now();
    while epoch.elapsed() < deadline {
        let mut rng = Rng::new(seed, i);
        let c = generate(&mut rng, &corpus, &pools);
        // The input is on disk before the call: an abort (stack overflow, out of memory) or a
        // hang leaves it there.
        let doc = json!({"kind": "in-flight", "seed": seed, "iteration": i, "case": c});
        std::fs::write(&inflight, serde_json::to_string(&doc).unwrap()).unwrap();
        *counts.entry(c["target"].clone()).or_default() += 1;
        let before = CURRENT.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        CALL_STARTED.store(now_ms(epoch), Ordering::Relaxed);
        IN_CALL.store(true, Ordering::Relaxed);
        let t = Instant::now();
        let outcome = call(&c, &corpus.files);
        let took = t.elapsed();
        IN_CALL.store(false, Ordering::Relaxed);
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
        let feature = std::mem::take(&mut *FEATURE.lock().unwrap());
        if !feature.is_empty() && features.insert(format!("{} {feature}", c["target"])) {
            pools.keep(&c, &mut rng);
        }
        match outcome {
            Outcome::Panic { location, message } => {
                panics += 1;
                if seen.insert(format!("panic {location}")) {
                    let small = minimise(&c, &location, &corpus.files);
                    let note = format!("panic at {location}: {message}");
                    let p = save(&out, "panic", &location, &small, &note);
                    eprintln!("[{i}] NEW {note}\n      -> {}", p.display());
                }
            }
            Outcome::Ok => {}
        }
        if took > SLOW {
            slow += 1;
            let key = format!("slow {} {}", c["target"], took.as_millis() / 1000);
            let note = format!("{} took {:.1} s (iteration {i})", c["target"], took.as_secs_f64());
            if seen.insert(key.clone()) || slow < 20 {
                let p = save(&out, "slow", &format!("{key}{i}"), &c, &note);
                eprintln!("[{i}] {note}\n      -> {}", p.display());
            }
        }
        if peak > MEMORY {
            big += 1;
            let note = format!("{} peaked at {} MiB (iteration {i})", c["target"], peak >> 20);
            if big < 20 {
                let p = save(&out, "memory", &format!("mem{i}"), &c, &note);
                eprintln!("[{i}] {note}\n      -> {}", p.display());
            }
        }
        i += 1;
        if last_report.elapsed() > Duration::from_secs(60) {
            last_report = Instant::now();
            eprintln!(
                "{:>5} s: {i} executions ({:.0}/s), {panics} panics ({} distinct), {slow} slow, {big} big; pools {} + {}; {counts:?}",
                epoch.elapsed().as_secs(),
                (i - first) as f64 / epoch.elapsed().as_secs_f64(),
                seen.iter().filter(|k| k.starts_with("panic")).count(),
                pools.examples.len(),
                pools.exprs.len(),
            );
        }
    }
    let _ = std::fs::remove_file(&inflight);
    if STATS.load(Ordering::Relaxed) {
        let mut stats: Vec<_> = STATS_COUNTS.lock().unwrap().clone().into_iter().collect();
        stats.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        eprintln!("evaluate results: {stats:?}");
    }
    eprintln!(
        "done: {i} executions in {:.0} s, {panics} panics ({} distinct locations), {slow} slow, {big} over {} MiB; {counts:?}",
        epoch.elapsed().as_secs_f64(),
        seen.iter().filter(|k| k.starts_with("panic")).count(),
        MEMORY >> 20
    );
}
