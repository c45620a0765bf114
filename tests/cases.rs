//! Runs every scenario in `tests/cases/<name>/` through the whole pipeline (see
//! `tests/cases/README.md`). Each case's `expect` block (hand-written from the spec) is asserted;
//! the full result is compared with `expected.json` (`UPDATE_EXPECT=1` rewrites it).

mod common;

use common::check_expectations;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use vap_eval::admission::yaml::{parse_json_object, parse_stream};
use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests};

fn yaml(text: &str) -> Value {
    let (docs, errors) = parse_stream(text);
    assert!(errors.is_empty(), "{errors:?}");
    docs.into_iter().map(|d| d.value).find(|v| !v.is_null()).unwrap_or(Value::Null)
}

/// Build the input of one case directory.
pub fn case_input(dir: &Path) -> (EvaluateInput, Value) {
    let case = yaml(&fs::read_to_string(dir.join("case.yaml")).expect("case.yaml"));
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .expect("case dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut manifests = Vec::new();
    let mut input = EvaluateInput::default();
    for f in files {
        let name = f.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        let text = fs::read_to_string(&f).expect("read");
        match name.as_str() {
            "case" => {}
            "object" => input.object = Some(Document::Text(text)),
            "oldObject" => input.old_object = Some(Document::Text(text)),
            _ => manifests.push(Document::Text(text)),
        }
    }
    input.manifests = Manifests::List(manifests);
    if let Some(r) = case.get("request") {
        input.request = Some(Document::Object(r.clone()));
    }
    input.kubernetes_version =
        case.get("kubernetesVersion").and_then(Value::as_str).map(str::to_string);
    // Options beyond the apiserver's behaviour (issue 13): `unboundPolicies`, `missingNamespaces`.
    let option = |key: &str| case.get("options").and_then(|o| o.get(key)).cloned();
    input.unbound_policies = option("unboundPolicies").map(|v| serde_json::from_value(v).unwrap());
    input.missing_namespaces =
        option("missingNamespaces").map(|v| serde_json::from_value(v).unwrap());
    input.objects_as_given = case.get("objectsAsGiven") == Some(&Value::Bool(true));
    (input, case)
}

#[test]
fn cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .expect("tests/cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 30, "expected the case directories, found {}", dirs.len());
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let (input, case) = case_input(dir);
        let result = serde_json::to_value(evaluate(&input)).expect("serialise");
        failures.extend(check_expectations(
            &name,
            &result,
            case.get("expect").unwrap_or(&json!({})),
        ));
        let expected_path = dir.join("expected.json");
        let pretty = serde_json::to_string_pretty(&result).expect("pretty") + "\n";
        if update {
            fs::write(&expected_path, &pretty).expect("write expected.json");
        } else {
            match fs::read_to_string(&expected_path) {
                Ok(old) if old == pretty => {}
                Ok(_) => failures.push(format!(
                    "{name}: result differs from expected.json (review, then UPDATE_EXPECT=1)"
                )),
                Err(_) => failures
                    .push(format!("{name}: expected.json missing (UPDATE_EXPECT=1 writes it)")),
            }
        }
    }
    assert!(failures.is_empty(), "{} problem(s):\n{}", failures.len(), failures.join("\n"));
}

/// Issue 13: the request objects' fast path (`yaml::parse_json_object`, plain JSON without
/// positions) and the positions path (`yaml::parse_stream`) give identical results on every
/// pipeline case. Each case's object and oldObject, given as JSON text, are evaluated once
/// through `Document::Text` (which takes the fast path) and once as the value the positions
/// loader reads from the same text; both results must equal the case's own (YAML) result.
#[test]
fn fast_path_and_positions_path_agree_on_every_case() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .expect("tests/cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let mut fast_documents = 0;
    for dir in &dirs {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let (input, _) = case_input(dir);
        let reference = serde_json::to_value(evaluate(&input)).expect("serialise");
        let mut fast = input.clone();
        let mut positioned = input.clone();
        for (doc, fast_doc, pos_doc, label) in [
            (&input.object, &mut fast.object, &mut positioned.object, "object"),
            (&input.old_object, &mut fast.old_object, &mut positioned.old_object, "oldObject"),
        ] {
            let Some(Document::Text(yaml)) = doc else { continue };
            let value = Document::parse_positioned(yaml, label).expect("case YAML").expect("value");
            for text in [value.to_string(), serde_json::to_string_pretty(&value).expect("json")] {
                let by_fast = parse_json_object(&text);
                let by_positions = Document::parse_positioned(&text, label).expect("JSON");
                // The fast path takes integers only; a document with a double goes the
                // positions way, and the results must still agree.
                if by_fast.is_some() || !has_double(&value) {
                    assert!(by_fast.is_some(), "{name}: {label}: the fast path refused {text}");
                    assert_eq!(by_fast, by_positions, "{name}: {label}");
                    fast_documents += 1;
                }
                *fast_doc = Some(Document::Text(text));
                *pos_doc = by_positions.map(Document::Object);
            }
        }
        // A diagnostic located in the object's text (a body that does not decode) points into
        // the text it was given as: the JSON texts here, the YAML of the reference.
        let unlocated = |mut r: Value| {
            for d in r["diagnostics"].as_array_mut().into_iter().flatten() {
                if d["source"]["kind"] == "input" {
                    d["span"] = Value::Null;
                    d["source"] = Value::Null;
                }
            }
            r
        };
        let reference = unlocated(reference);
        for (path, candidate) in [("fast path", &fast), ("positions path", &positioned)] {
            let result = unlocated(serde_json::to_value(evaluate(candidate)).expect("serialise"));
            assert_eq!(result, reference, "{name}: the {path} gives a different result");
        }
    }
    assert!(fast_documents >= 2 * dirs.len(), "only {fast_documents} documents took the fast path");
}

fn has_double(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64(),
        Value::Array(a) => a.iter().any(has_double),
        Value::Object(o) => o.values().any(has_double),
        _ => false,
    }
}

/// A later variable of the same name that refers to the earlier one refers to itself at run
/// time (the last definition wins): an error, not endless recursion (a native stack overflow,
/// `Maximum call stack size exceeded` in the package; found by the native/package differential).
#[test]
fn a_duplicate_variable_referring_to_its_namesake_is_an_error() {
    let manifests = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  variables:
  - {name: a, expression: "object"}
  - {name: a, expression: "has(variables.a.spec) ? variables.a : object"}
  - {name: b, expression: "variables.a.metadata.name"}
  validations:
  - expression: "variables.b == 'x'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: pb}
spec: {policyName: p, validationActions: [Deny]}
"#;
    let input = EvaluateInput {
        manifests: Manifests::Text(manifests.into()),
        object: Some(Document::Text(
            "{apiVersion: v1, kind: Pod, metadata: {name: x, namespace: d}, spec: {}}".into(),
        )),
        ..Default::default()
    };
    let result = serde_json::to_string(&evaluate(&input)).unwrap();
    assert!(result.contains(r#"composited variable \"a\" refers to itself"#), "{result}");
}
