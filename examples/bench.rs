//! Perf sanity: evaluate expressions over the benchmark Deployment and print µs per evaluation.
//! `cargo run --release --example bench -- [expr...]` (defaults to `shared/bench/expressions.json`).
use serde_json::Value as Json;
use std::time::Instant;
use vap_eval::cel::parser::{parse, ParseOptions};
use vap_eval::cel::runtime::{plan, Bindings, CostTracker, PlanOptions};
use vap_eval::cel::stdlib::Registry;
use vap_eval::cel::value::Value;

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(dir) =
        ["../shared/bench", "../../shared/bench"].iter().map(|d| root.join(d)).find(|d| d.is_dir())
    else {
        eprintln!("shared/bench not found");
        return;
    };
    let dep: Json = serde_json::from_str(
        &std::fs::read_to_string(dir.join("deployment.json")).unwrap_or_default(),
    )
    .unwrap_or(Json::Null);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let exprs: Vec<(String, String)> = if args.is_empty() {
        let list: Json = serde_json::from_str(
            &std::fs::read_to_string(dir.join("expressions.json")).unwrap_or_default(),
        )
        .unwrap_or(Json::Null);
        list.as_array()
            .map(|a| {
                a.iter()
                    .map(|e| {
                        (
                            e["id"].as_str().unwrap_or("").into(),
                            e["expr"].as_str().unwrap_or("").into(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    } else {
        args.iter().enumerate().map(|(i, e)| (format!("arg{i}"), e.clone())).collect()
    };
    let reg = Registry::standard();
    let mut total = 0.0;
    for (id, expr) in &exprs {
        let ast = match parse(expr, ParseOptions::default()) {
            Ok(a) => a,
            Err(e) => {
                println!("{id}: parse error {e:?}");
                continue;
            }
        };
        let p = match plan(&ast, None, &reg, PlanOptions::default()) {
            Ok(p) => p,
            Err(e) => {
                println!("{id}: plan error {e:?}");
                continue;
            }
        };
        let act = Bindings::new().with("object", Value::from_json(&dep));
        let n = 20_000;
        let start = Instant::now();
        let mut last = String::new();
        for i in 0..n {
            let mut cost = CostTracker::default();
            let v = p.eval(&act, &mut cost);
            if i == 0 {
                last = match &v {
                    Ok(v) => format!("{v:?} cost {}", cost.actual_cost()),
                    Err(e) => format!("error {}", e.message),
                };
            }
            std::hint::black_box(&v);
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / n as f64;
        total += us;
        println!("{id:30} {us:8.3} µs  {last}");
    }
    println!("{:30} {total:8.3} µs", "total");
}
