//! Our engine, natively, on the standard benchmark (`shared/bench`); prints one JSON object.
//! `VAP_BENCH_DIR=../shared/bench cargo run --release --features bench --example vap_bench`
//! (bench/run.mjs runs it and prints the side-by-side table).
//!
//! Env: VAP_BENCH_DIR (required), BENCH_RUNS (timed samples, default 400), BENCH_WARMUP (100).
//! Figures (µs): compile = mean per expression of `CelCompiler::compile` (parse, check, plan)
//! with the compiler built once; eval Σ14 = median of evaluating the 14 on the parsed object;
//! e2e = median of JSON text → the request path's reader → the 14 results; evaluate = median
//! of a full `api::evaluate` of the 5-validation policy (manifests and object as text) per
//! request.
use serde_json::{json, Value as Json};
use std::time::Instant;
use vap_eval::bench::{evaluate_policy, PolicyWorkload, Workload, FALSE, TRUE};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

fn sample(runs: usize, warmup: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..warmup {
        f();
    }
    let xs = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    median(xs)
}

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn main() {
    let dir = std::path::PathBuf::from(std::env::var("VAP_BENCH_DIR").expect("set VAP_BENCH_DIR"));
    let runs = env_num("BENCH_RUNS", 400);
    let warmup = env_num("BENCH_WARMUP", 100);
    let text = std::fs::read_to_string(dir.join("deployment.json")).expect("deployment.json");
    let cases_text =
        std::fs::read_to_string(dir.join("expressions.json")).expect("expressions.json");
    let cases: Json = serde_json::from_str(&cases_text).expect("expressions.json");
    let cases = cases.as_array().expect("a list");
    let expect: Vec<Json> = cases.iter().map(|c| c["expect"].clone()).collect();
    let exprs = Workload::expressions_of(&cases_text).expect("expressions");

    let t = Instant::now();
    let w = Workload::new(&exprs).unwrap_or_else(|e| panic!("compile: {e}"));
    let first_us = t.elapsed().as_secs_f64() * 1e6;

    // Verify: full results, and the codes of the timed paths.
    let object: Json = serde_json::from_str(&text).expect("deployment.json");
    let results = w.results(&object);
    let bad: Vec<String> = results
        .iter()
        .zip(&expect)
        .zip(cases)
        .filter(|((r, e), _)| r != e)
        .map(|((r, e), c)| format!("{}: got {r}, expected {e}", c["id"]))
        .collect();
    assert!(bad.is_empty(), "wrong results:\n  {}", bad.join("\n  "));
    let want: Vec<u8> =
        expect.iter().map(|e| if e == &Json::Bool(true) { TRUE } else { FALSE }).collect();
    let mut out = Vec::new();
    let check = |out: &[u8], label: &str| assert_eq!(out, &want[..], "{label}: wrong result codes");

    let rounds = (runs / 4).max(20);
    for _ in 0..5 {
        assert_eq!(w.compile_all(), w.len());
    }
    let t = Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(w.compile_all());
    }
    let compile_us = t.elapsed().as_secs_f64() * 1e6 / (rounds * w.len()) as f64;

    let eval = sample(runs, warmup, || w.eval_into(&object, &mut out));
    check(&out, "eval");
    let e2e = sample(runs, warmup, || w.end_to_end(&text, &mut out).expect("parse"));
    check(&out, "e2e");
    let parse = sample(runs, warmup, || {
        std::hint::black_box(serde_json::from_str::<Json>(&text).expect("parse"));
    });
    let (allowed, validations) = evaluate_policy(&text);
    assert!(allowed && validations == 5, "evaluate: allowed {allowed}, {validations} validations");
    let evaluate = sample(runs / 4, warmup / 4, || {
        std::hint::black_box(evaluate_policy(&text));
    });

    // The user path: PolicySet.evaluate of a policy holding the 14 as validations, and its stages.
    let pw = PolicyWorkload::new(&exprs);
    let r = pw.evaluate_text(&text);
    let (allowed, validations) = PolicyWorkload::summary(&r);
    assert!(!allowed && validations == w.len(), "policy set: allowed {allowed}, {validations}");
    let ps_text = sample(runs, warmup, || {
        std::hint::black_box(pw.evaluate_text(&text));
    });
    let ps_object = sample(runs, warmup, || {
        std::hint::black_box(pw.evaluate_object(&object));
    });
    let ps_positions = sample(runs, warmup, || {
        std::hint::black_box(PolicyWorkload::parse_positions(&text));
    });
    let ps_document = sample(runs, warmup, || {
        std::hint::black_box(PolicyWorkload::parse_document(&text));
    });
    let ps_serialize = sample(runs, warmup, || {
        std::hint::black_box(PolicyWorkload::serialize(&r));
    });
    let clone = sample(runs, warmup, || {
        std::hint::black_box(object.clone());
    });
    let normalize = sample(runs, warmup, || {
        std::hint::black_box(pw.normalize(&object, &text));
    });

    let per_expr: Vec<Json> = (0..w.len())
        .map(|i| {
            let us = sample(runs / 2, warmup / 2, || {
                std::hint::black_box(w.eval_one(i, &object));
            });
            json!({ "id": cases[i]["id"], "evalUs": (us * 100.0).round() / 100.0 })
        })
        .collect();

    let out = json!({
        "engine": "vap-eval (native)",
        "verified": true,
        "runs": runs,
        "warmup": warmup,
        "firstCompileAllUs": r1(first_us),
        "compileUsPerExpr": r1(compile_us),
        "evalSum14Us": r1(eval),
        "e2eUs": r1(e2e),
        "jsonParseUs": r1(parse),
        "evaluatePolicyUs": r1(evaluate),
        "policySet": {
            "evaluateTextUs": r1(ps_text),
            "evaluateParsedObjectUs": r1(ps_object),
            "parsePositionsUs": r1(ps_positions),
            "parseDocumentUs": r1(ps_document),
            "serializeResultUs": r1(ps_serialize),
            "cloneObjectUs": r1(clone),
            "normalizeWithCopyUs": r1(normalize),
        },
        "perExpr": per_expr,
    });
    println!("{}", serde_json::to_string_pretty(&out).expect("json"));
}
