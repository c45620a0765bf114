//! Evaluate an admission request against policies, from the command line:
//!
//! ```text
//! cargo run --example evaluate -- manifests.yaml object.yaml [oldObject.yaml] [--request request.yaml] [--version 1.34]
//! ```
//!
//! Prints the rendered diagnostics, then the response (allowed, status, warnings, audit
//! annotations) as JSON.

use std::fs;
use vap_eval::api::{evaluate, render, Document, EvaluateInput, Manifests};
use vap_eval::diagnostic::SourceRef;

fn main() {
    let mut files = Vec::new();
    let mut input = EvaluateInput::default();
    let mut args = std::env::args().skip(1);
    let read = |p: &str| fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}"));
    while let Some(a) = args.next() {
        match a.as_str() {
            "--request" => input.request = args.next().map(|p| Document::Text(read(&p))),
            "--version" => input.kubernetes_version = args.next(),
            _ => files.push(a),
        }
    }
    let [manifests, rest @ ..] = files.as_slice() else {
        eprintln!("usage: evaluate <manifests.yaml> [object.yaml] [oldObject.yaml] [--request r.yaml] [--version 1.x]");
        std::process::exit(2);
    };
    let manifest_text = read(manifests);
    input.manifests = Manifests::Text(manifest_text.clone());
    input.object = rest.first().map(|p| Document::Text(read(p)));
    input.old_object = rest.get(1).map(|p| Document::Text(read(p)));
    let result = evaluate(&input);
    for d in &result.diagnostics {
        let text = match &d.source {
            Some(SourceRef::Manifest { .. }) => Some(manifest_text.as_str()),
            _ => None,
        };
        println!("{}\n", render(d, text));
    }
    println!("{}", serde_json::to_string_pretty(&result.response).unwrap_or_default());
}
