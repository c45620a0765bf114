//! Shared by the integration tests: checking a result against a hand-written `expect` block.

use serde_json::Value;

/// Compare `result` (an `EvaluateResult` as JSON) with `expect`: `allowed`, `code`, `reason`,
/// `message`, `warnings`, `auditAnnotations` must be equal when given; `diagnostics` lists codes
/// that must be present; `webhooks` lists per-webhook fields (`name`, `called`, `reason`, …). Returns one line per difference.
pub fn check_expectations(name: &str, result: &Value, expect: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    let response = &result["response"];
    let checks: [(&str, &Value); 6] = [
        ("allowed", &response["allowed"]),
        ("code", &response["status"]["code"]),
        ("reason", &response["status"]["reason"]),
        ("message", &response["status"]["message"]),
        ("warnings", &response["warnings"]),
        ("auditAnnotations", &response["auditAnnotations"]),
    ];
    for (key, got) in checks {
        if let Some(want) = expect.get(key) {
            if got != want {
                failures.push(format!("{name}: {key}:\n    got:  {got}\n    want: {want}"));
            }
        }
    }
    // `webhooks`: one object per webhook, in order; each key given must equal the result's.
    if let Some(want) = expect.get("webhooks").and_then(Value::as_array) {
        let got = result["webhooks"].as_array().cloned().unwrap_or_default();
        if got.len() != want.len() {
            failures.push(format!("{name}: {} webhooks, expected {}", got.len(), want.len()));
        }
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            for (k, v) in w.as_object().into_iter().flatten() {
                if &g[k] != v {
                    failures.push(format!(
                        "{name}: webhooks[{i}].{k}:\n    got:  {}\n    want: {v}",
                        g[k]
                    ));
                }
            }
        }
    }
    if let Some(codes) = expect.get("diagnostics").and_then(Value::as_array) {
        let present: Vec<&str> = result["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["code"].as_str())
            .collect();
        for c in codes
            .iter()
            .filter_map(|c| c.as_str().or_else(|| c.get("code").and_then(Value::as_str)))
        {
            if !present.contains(&c) {
                failures.push(format!("{name}: expected a {c:?} diagnostic, got {present:?}"));
            }
        }
    }
    failures
}
