//! Every playground example (`www/examples/index.json`) evaluated through the public API, with
//! its `expect` block asserted: an example that stops producing its decision fails here.
//!
//! Each example is two admission requests against the same manifests: the one the playground
//! loads first (`object`, `oldObject`, `request`, `expect`) and its counterpart (`passing` or
//! `failing`, whose files default to the first's), so every example shows both an allowed and a
//! denied request. The expectations are what kube-apiserver answers (www/examples/README.md).

mod common;

use common::check_expectations;
use serde_json::Value;
use std::fs;
use std::path::Path;
use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests, UnboundPolicies};

fn read(dir: &Path, name: Option<&Value>) -> Option<String> {
    name.and_then(Value::as_str)
        .map(|f| fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")))
}

/// The example's counterpart request: its own key (`passing`/`failing`) and its block.
fn counterpart(ex: &Value) -> Option<(&'static str, &Value)> {
    ["passing", "failing"].into_iter().find_map(|k| ex.get(k).map(|v| (k, v)))
}

/// Evaluate `files` (falling back to `base` for any file it does not name) and check `expect`.
fn run(dir: &Path, label: &str, ex: &Value, files: &Value, expect: &Value) -> Vec<String> {
    let file = |k: &str| read(dir, files.get(k).or_else(|| ex.get(k)));
    let input = EvaluateInput {
        manifests: Manifests::Text(file("manifests").expect("manifests")),
        object: file("object").map(Document::Text),
        old_object: file("oldObject").map(Document::Text),
        request: file("request").map(Document::Text),
        kubernetes_version: ex.get("kubernetesVersion").and_then(Value::as_str).map(str::to_string),
        // As the playground evaluates (www/state.js `evaluateArgs`).
        unbound_policies: Some(UnboundPolicies::Preview),
        ..Default::default()
    };
    let result = serde_json::to_value(evaluate(&input)).expect("serialise");
    check_expectations(label, &result, expect)
}

#[test]
fn playground_examples_give_their_documented_decisions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("www/examples");
    let index: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("index.json")).expect("index.json"))
            .expect("json");
    let examples = index["examples"].as_array().expect("examples");
    assert!(examples.len() >= 16, "{} examples", examples.len());
    let mut failures = Vec::new();
    for ex in examples {
        let name = ex["name"].as_str().unwrap_or_default();
        // Kyverno examples need the `kyverno` feature (on by default).
        let manifests = read(&dir, ex.get("manifests")).unwrap_or_default();
        if cfg!(not(feature = "kyverno")) && manifests.contains("apiVersion: kyverno.io/") {
            continue;
        }
        failures.extend(run(&dir, name, ex, ex, &ex["expect"]));
        let Some((key, other)) = counterpart(ex) else {
            failures.push(format!("{name}: neither a `passing` nor a `failing` request"));
            continue;
        };
        failures.extend(run(&dir, &format!("{name} ({key})"), ex, other, &other["expect"]));
        // One of the two is allowed and the other denied, and the block's name says which.
        let allowed = |e: &Value| e["expect"]["allowed"].as_bool();
        let want = key == "passing";
        if allowed(other) != Some(want) || allowed(ex) != Some(!want) {
            failures.push(format!(
                "{name}: `{key}` must expect allowed {want} and the first request {}",
                !want
            ));
        }
        let denied = if want { ex } else { other };
        if denied["expect"]["message"].as_str().is_none() {
            failures.push(format!("{name}: the denied request's expect has no message"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The deliverable: at least ten examples are real published policies, each naming its
/// source and that source's licence.
#[test]
fn published_examples_name_their_source_and_license() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("www/examples");
    let index: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("index.json")).expect("index.json"))
            .expect("json");
    let examples = index["examples"].as_array().expect("examples");
    let published: Vec<&Value> = examples.iter().filter(|e| e.get("source").is_some()).collect();
    assert!(published.len() >= 10, "{} published examples", published.len());
    let licenses = ["CC-BY-4.0", "Apache-2.0"];
    for ex in examples {
        let name = ex["name"].as_str().unwrap_or_default();
        let license = ex["license"].as_str().unwrap_or_default();
        assert!(licenses.contains(&license), "{name}: license {license:?}");
        if let Some(source) = ex.get("source") {
            let url = source.as_str().unwrap_or_default();
            assert!(url.starts_with("https://"), "{name}: source {url:?}");
        }
    }
}
