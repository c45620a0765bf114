//! Evaluates CEL expressions (one per stdin line, no variables) with `api::evaluate_expression`
//! and prints a JSON list of the results: the native side of `bench/tz-check.mjs`.
use std::io::BufRead;

fn main() {
    let opts = vap_eval::api::ExpressionOptions::default();
    let out: Vec<serde_json::Value> = std::io::stdin()
        .lock()
        .lines()
        .map_while(Result::ok)
        .map(|e| {
            let r = vap_eval::api::evaluate_expression(&e, &serde_json::Map::new(), &opts);
            match r.value {
                Some(v) => v,
                None => {
                    serde_json::json!({ "error": r.diagnostics.first().map(|d| d.message.clone()) })
                }
            }
        })
        .collect();
    println!("{}", serde_json::Value::Array(out));
}
