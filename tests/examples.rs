//! Every playground example (`www/examples/index.json`) evaluated through the public API, with
//! its `expect` block asserted: an example that stops producing its decision fails here.

mod common;

use common::check_expectations;
use serde_json::Value;
use std::fs;
use std::path::Path;
use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests};

fn read(dir: &Path, name: Option<&Value>) -> Option<String> {
    name.and_then(Value::as_str)
        .map(|f| fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")))
}

#[test]
fn playground_examples_give_their_documented_decisions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("www/examples");
    let index: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("index.json")).expect("index.json"))
            .expect("json");
    let examples = index["examples"].as_array().expect("examples");
    assert!(examples.len() >= 5);
    let mut failures = Vec::new();
    for ex in examples {
        let name = ex["name"].as_str().unwrap_or_default();
        let manifests = read(&dir, ex.get("manifests")).expect("manifests");
        // Kyverno examples need the `kyverno` feature (on by default).
        if cfg!(not(feature = "kyverno")) && manifests.contains("apiVersion: kyverno.io/") {
            continue;
        }
        let input = EvaluateInput {
            manifests: Manifests::Text(manifests),
            object: read(&dir, ex.get("object")).map(Document::Text),
            old_object: read(&dir, ex.get("oldObject")).map(Document::Text),
            request: read(&dir, ex.get("request")).map(Document::Text),
            kubernetes_version: ex
                .get("kubernetesVersion")
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        let result = serde_json::to_value(evaluate(&input)).expect("serialise");
        failures.extend(check_expectations(name, &result, &ex["expect"]));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
