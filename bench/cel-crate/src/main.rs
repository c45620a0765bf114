//! The `cel` crate's interpreter (0.15.0) on the standard benchmark (a Deployment JSON and 14 VAP
//! expressions with expected results), natively; every result is verified against `expect`.
//!
//! Env: VAP_BENCH_DIR (default `<repo>/../shared/bench`, or beside the main checkout of a git
//! worktree), BENCH_RUNS (timed samples, default 400), BENCH_WARMUP (default 100).
//! `--json` prints the JSON only; otherwise a table, and the JSON goes to bench/.out/cel-crate.json.
//!
//! Figures (µs): compile = mean per expression of `Env::compile` (parse + macro expansion; the
//! crate has no type checker); eval Σ14 = median over runs of executing the 14 programs on a
//! context holding the converted object; e2e = median of JSON text -> serde_json -> cel::Value
//! (integers as signed `int`, as Kubernetes does) -> Context -> the 14 results.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use cel::objects::{Key, Map};
use cel::{Context, Env, Program, Value};

fn bench_dir() -> PathBuf {
    if let Ok(d) = std::env::var("VAP_BENCH_DIR") {
        return PathBuf::from(d);
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut candidates = vec![repo.join("../shared/bench")];
    // In a git worktree, shared/ sits beside the main checkout.
    if let Ok(out) = Command::new("git")
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .current_dir(&repo)
        .output()
    {
        let common = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if let Some(main) = common.parent() {
            candidates.push(main.join("../shared/bench"));
        }
    }
    for c in &candidates {
        if c.join("expressions.json").exists() {
            return c.clone();
        }
    }
    panic!("benchmark data not found in {candidates:?}; set VAP_BENCH_DIR");
}

/// JSON -> CEL the way Kubernetes does it: integers that fit int64 are `int`, other numbers
/// `double` (never `uint`, which is what converting through serde would give).
fn to_cel(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(a) => Value::List(Arc::new(a.iter().map(to_cel).collect())),
        serde_json::Value::Object(o) => Value::Map(Map {
            map: Arc::new(
                o.iter().map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v))).collect(),
            ),
        }),
    }
}

struct Case {
    id: String,
    expr: String,
    expect: bool,
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

fn verify(label: &str, cases: &[Case], results: &[Result<Value, String>]) {
    let bad: Vec<String> = cases
        .iter()
        .zip(results)
        .filter(|(c, r)| !matches!(r, Ok(Value::Bool(b)) if *b == c.expect))
        .map(|(c, r)| format!("{}: got {:?}, expected {}", c.id, r, c.expect))
        .collect();
    assert!(bad.is_empty(), "{label}: wrong results:\n  {}", bad.join("\n  "));
}

fn eval_all(programs: &[Program], ctx: &Context) -> Vec<Result<Value, String>> {
    programs.iter().map(|p| p.execute(ctx).map_err(|e| e.to_string())).collect()
}

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let as_json = std::env::args().any(|a| a == "--json");
    let runs = env_num("BENCH_RUNS", 400);
    let warmup = env_num("BENCH_WARMUP", 100);
    let dir = bench_dir();
    let text = std::fs::read_to_string(dir.join("deployment.json")).expect("deployment.json");
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expressions.json")).unwrap())
            .unwrap();
    let cases: Vec<Case> = raw
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            id: c["id"].as_str().unwrap().to_string(),
            expr: c["expr"].as_str().unwrap().to_string(),
            expect: c["expect"].as_bool().unwrap(),
        })
        .collect();

    // Kubernetes' CEL has the strings extension (lowerAscii, split, ...).
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings).unwrap();
    let env = Arc::new(env);

    let programs: Vec<Program> = cases
        .iter()
        .map(|c| env.compile(&c.expr).unwrap_or_else(|e| panic!("{}: {e:?}", c.id)))
        .collect();

    // compile: mean per expression.
    let rounds = (runs / 4).max(20);
    for c in &cases {
        let _ = env.compile(&c.expr);
    }
    let t = Instant::now();
    for _ in 0..rounds {
        for c in &cases {
            std::hint::black_box(env.compile(&c.expr).unwrap());
        }
    }
    let compile_us = t.elapsed().as_secs_f64() * 1e6 / (rounds * cases.len()) as f64;

    // eval Σ14 on a prepared context.
    let object = to_cel(&serde_json::from_str(&text).unwrap());
    let mut ctx = Context::with_env(env.clone());
    ctx.add_variable_from_value("object", object);
    let mut last = Vec::new();
    for _ in 0..warmup {
        last = eval_all(&programs, &ctx);
    }
    verify("eval", &cases, &last);
    let mut xs = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        last = std::hint::black_box(eval_all(&programs, &ctx));
        xs.push(t.elapsed().as_secs_f64() * 1e6);
    }
    verify("eval", &cases, &last);
    let eval_us = median(&mut xs);

    // Per expression (eval), to see where the time goes.
    let per_expr: Vec<(String, f64)> = programs
        .iter()
        .zip(&cases)
        .map(|(p, c)| {
            let mut xs = Vec::with_capacity(runs);
            for _ in 0..runs.min(200) {
                let t = Instant::now();
                std::hint::black_box(p.execute(&ctx).ok());
                xs.push(t.elapsed().as_secs_f64() * 1e6);
            }
            (c.id.clone(), median(&mut xs))
        })
        .collect();

    // end-to-end per request.
    let request = |text: &str| {
        let json: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut ctx = Context::with_env(env.clone());
        ctx.add_variable_from_value("object", to_cel(&json));
        eval_all(&programs, &ctx)
    };
    for _ in 0..warmup {
        last = request(&text);
    }
    verify("e2e", &cases, &last);
    let mut xs = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        last = std::hint::black_box(request(&text));
        xs.push(t.elapsed().as_secs_f64() * 1e6);
    }
    verify("e2e", &cases, &last);
    let e2e_us = median(&mut xs);

    let parser = if cfg!(feature = "pratt") { "pratt" } else { "antlr (default)" };
    let r1 = |x: f64| (x * 10.0).round() / 10.0;
    let result = serde_json::json!({
        "engine": "cel (crate) interpreter",
        "version": "0.15.0",
        "parser": parser,
        "target": format!("{}-native", std::env::consts::ARCH),
        "benchDir": dir.display().to_string(),
        "documentBytes": text.len(),
        "expressions": cases.len(),
        "runs": runs,
        "warmup": warmup,
        "verified": true,
        "compileUsPerExpr": r1(compile_us),
        "evalSum14Us": r1(eval_us),
        "e2eUs": r1(e2e_us),
        "perExpr": per_expr.iter().map(|(id, us)| serde_json::json!({"id": id, "evalUs": r1(*us)})).collect::<Vec<_>>(),
    });
    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.out");
    let _ = std::fs::create_dir_all(&out_dir);
    let out = out_dir.join("cel-crate.json");
    std::fs::write(&out, serde_json::to_string_pretty(&result).unwrap() + "\n").unwrap();
    if as_json {
        println!("{}", serde_json::to_string_pretty(&result).unwrap());
        return;
    }
    println!("cel 0.15.0 interpreter (parser: {parser}), native release build; {}", dir.display());
    println!(
        "document {} B, {} expressions, median of {runs} runs after {warmup} warm-up; all results verified",
        text.len(),
        cases.len()
    );
    println!("  {:<46} {:>9.1} µs", "compile (parse+macros), mean per expression", compile_us);
    println!("  {:<46} {:>9.1} µs", "eval Σ14", eval_us);
    println!("  {:<46} {:>9.1} µs", "end-to-end: JSON text -> 14 results", e2e_us);
    let per: Vec<String> =
        per_expr.iter().map(|(id, us)| format!("{} {:.1}", &id[..3], us)).collect();
    println!("  per expression (eval, µs): {}", per.join(", "));
    println!("JSON: {}", out.display());
}
