//! Evaluate one CEL expression in the environment of a VAP validation, from the command line:
//!
//! ```text
//! cargo run --example eval -- "object.spec.replicas <= 5" '{"object": {"spec": {"replicas": 3}}}'
//! ```
//!
//! Prints the result (`value`, `type`, `cost`, `diagnostics`) as JSON.

use serde_json::{Map, Value};
use vap_eval::api::{evaluate_expression, ExpressionOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(expression) = args.next() else {
        eprintln!("usage: eval <expression> [variables-json] [kubernetes-version]");
        std::process::exit(2);
    };
    let variables: Map<String, Value> = match args.next().map(|s| serde_json::from_str(&s)) {
        Some(Ok(Value::Object(m))) => m,
        Some(_) => {
            eprintln!("variables must be a JSON object");
            std::process::exit(2);
        }
        None => Map::new(),
    };
    let options = ExpressionOptions { kubernetes_version: args.next(), ..Default::default() };
    let result = evaluate_expression(&expression, &variables, &options);
    println!("{}", serde_json::to_string_pretty(&result).unwrap_or_default());
}
