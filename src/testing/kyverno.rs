//! Kyverno CLI's `kyverno-test.yaml` for ValidatingAdmissionPolicy results, with the semantics
//! of `kyverno test` (cmd/cli/kubectl-kyverno, `pkg/admissionpolicy/validate.go`):
//!
//! - each listed resource is a CREATE of itself (no oldObject), by the user of the `userinfo`
//!   file if any;
//! - its namespace is a Namespace object carrying only the labels the values file gives it
//!   (`namespaceSelector: [{name, labels}]`, or whole objects under `namespaces`); none for a
//!   Namespace object itself;
//! - a policy with no binding is matched by its `matchConstraints` and evaluated as if bound
//!   with `Deny`; a policy with bindings is evaluated through the first binding whose
//!   `matchResources` selects the resource, without its own `matchConstraints` (the CLI has
//!   no cluster to run the apiserver's policy matcher against);
//! - the result: `skip` when nothing selected the resource or a matchCondition is false,
//!   otherwise the first validation (in order) that errs (`error`) or fails (`fail`), else
//!   `pass`. validationActions and failurePolicy do not change it.

use super::*;

pub(crate) fn run(
    doc: &Json,
    files: &Files<'_>,
    version: Option<&str>,
) -> Result<Vec<CaseResult>, String> {
    // Newer files may nest everything under `spec`.
    let root = match doc.get("spec") {
        Some(s) if s.get("policies").is_some() => s,
        _ => doc,
    };
    let mut policies = Vec::new();
    for f in strings(root.get("policies")) {
        policies.extend(files.objects(&f)?);
    }
    let mut resources = Vec::new();
    for f in strings(root.get("resources")) {
        resources.extend(files.objects(&f)?);
    }
    let mut params = Vec::new();
    for f in strings(root.get("paramResources")) {
        params.extend(files.objects(&f)?);
    }
    let values = match root.get("variables").and_then(Json::as_str) {
        Some(f) if !f.is_empty() => Some(files.document(f)?),
        _ => root.get("values").cloned(),
    };
    let mut namespaces: Vec<Json> = Vec::new();
    if let Some(v) = &values {
        if let Some(list) = v.get("namespaces").and_then(Json::as_array) {
            namespaces.extend(list.iter().cloned());
        }
        for s in v.get("namespaceSelector").and_then(Json::as_array).into_iter().flatten() {
            let name = str_of(s, &["name"]);
            if !name.is_empty() && !namespaces.iter().any(|n| name_of(n) == name) {
                namespaces.push(namespace_object(name, s.get("labels")));
            }
        }
    }
    let user = match root.get("userinfo").and_then(Json::as_str) {
        Some(f) if !f.is_empty() => files.document(f)?.get("userInfo").cloned(),
        _ => None,
    };
    let request = user.map(|u| json!({"userInfo": u}));

    let mut out = Vec::new();
    for (i, r) in root.get("results").and_then(Json::as_array).into_iter().flatten().enumerate() {
        let policy = str_of(r, &["policy"]);
        let kind = str_of(r, &["kind"]);
        let mut expected = str_of(r, &["result"]).to_string();
        if expected.is_empty() {
            expected = str_of(r, &["status"]).to_string();
        }
        let is_vap = policies
            .iter()
            .any(|p| is_kind(p, "ValidatingAdmissionPolicy") && name_of(p) == policy);
        let mut names = strings(r.get("resources"));
        names.extend(strings(r.get("resource")));
        let label = |n: &str| format!("{policy} {kind}/{n}");
        if !is_vap {
            let vap_result =
                r.get("isValidatingAdmissionPolicy").and_then(Json::as_bool) == Some(true);
            if vap_result
                || r.get("rule").is_none()
                    && !policy.is_empty()
                    && policies.iter().all(|p| name_of(p) != policy)
            {
                out.push(CaseResult::setup_error(
                    format!("results[{i}] {policy}"),
                    expected,
                    format!("policy {policy:?} is not a ValidatingAdmissionPolicy in the policies files"),
                ));
            } else {
                let mut c =
                    CaseResult::new(format!("results[{i}] {policy}"), expected.clone(), expected);
                c.status = Status::Skipped;
                c.actual = "not evaluated".into();
                c.details.push(format!(
                    "{policy:?} is a Kyverno policy, not a ValidatingAdmissionPolicy: vap-eval evaluates only ValidatingAdmissionPolicy results"
                ));
                out.push(c);
            }
            continue;
        }
        let deprecated_ns = str_of(r, &["namespace"]);
        for n in names {
            let (ns, name) = match n.split_once('/') {
                Some((ns, name)) => (ns.to_string(), name.to_string()),
                None => (deprecated_ns.to_string(), n.clone()),
            };
            let found: Vec<&Json> = resources
                .iter()
                .filter(|o| {
                    str_of(o, &["kind"]) == kind
                        && name_of(o) == name
                        && (ns.is_empty() || namespace_of(o) == ns)
                })
                .collect();
            if found.is_empty() {
                out.push(CaseResult::setup_error(
                    label(&n),
                    expected.clone(),
                    format!("no {kind} named {n:?} in the resources files"),
                ));
                continue;
            }
            for object in found {
                let mut c = evaluate_one(
                    policy,
                    object,
                    &policies,
                    &params,
                    &namespaces,
                    request.clone(),
                    version,
                );
                c.name = label(&n);
                if c.actual != expected {
                    c.fail_with(expected.clone(), c.actual.clone());
                }
                c.expected = expected.clone();
                if let Some(m) = r.get("message").and_then(Json::as_str) {
                    let got = c.details.first().cloned().unwrap_or_default();
                    if got != m {
                        c.fail_with(format!("message: {m}"), format!("message: {got}"));
                    }
                }
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// One resource against one policy, with Kyverno's semantics; `details[0]` is the message.
fn evaluate_one(
    policy: &str,
    object: &Json,
    policies: &[Json],
    params: &[Json],
    namespaces: &[Json],
    request: Option<Json>,
    version: Option<&str>,
) -> CaseResult {
    let has_binding = policies.iter().any(|b| {
        is_kind(b, "ValidatingAdmissionPolicyBinding")
            && str_of(b, &["spec", "policyName"]) == policy
    });
    let mut objects: Vec<Json> = policies.to_vec();
    objects.extend(params.iter().cloned());
    objects.extend(namespaces.iter().cloned());
    let ns = namespace_of(object);
    if !ns.is_empty() && !namespaces.iter().any(|n| name_of(n) == ns) {
        // Kyverno builds the namespace from the values file: no labels when it is not there.
        objects.push(namespace_object(ns, None));
    }
    if !has_binding {
        objects.push(synthesized_binding(policy, None));
    }
    let apiserver_set = compile_objects(&objects, version, false);
    let apiserver = evaluate(&apiserver_set, Some(object), None, request.clone());
    // Kyverno's CLI evaluates the resource as written (no apiserver decoding or defaulting).
    let mut set = compile_objects(&objects, version, true);
    if has_binding {
        match_everything(&mut set, policy);
    }
    let kyverno = evaluate(&set, Some(object), None, request);
    let (actual, message) = outcome(&kyverno, policy);
    let mut c = CaseResult::new(String::new(), String::new(), actual.to_string());
    c.status = Status::Pass;
    c.diff.clear();
    c.details.push(message);
    if actual != "skip" {
        c.warnings =
            shortcut_warnings(&apiserver_set, &apiserver, policy, has_binding, "Kyverno's CLI");
    }
    c
}

/// Kyverno's result for `policy` and its message.
fn outcome(r: &EvaluateResult, policy: &str) -> (&'static str, String) {
    let Some(t) = policy_trace(r, policy) else {
        return ("skip", "the policy was not evaluated".into());
    };
    if !t.matched {
        return ("skip", t.reason.clone());
    }
    if let Some(e) = &t.configuration_error {
        return ("error", e.clone());
    }
    let Some(b) = t.bindings.iter().find(|b| b.matched) else {
        return ("skip", "no binding selected the resource".into());
    };
    if let Some(e) = &b.configuration_error {
        return ("error", e.clone());
    }
    let Some(e) = b.evaluations.first() else {
        return ("pass", b.reason.clone());
    };
    if let Some(err) = &e.error {
        return ("error", err.clone());
    }
    if !e.matched {
        return ("skip", "match conditions aren't met".into());
    }
    for v in &e.validations {
        match v.decision {
            "error" => return ("error", v.message.clone().or(v.error.clone()).unwrap_or_default()),
            "deny" => return ("fail", v.message.clone().unwrap_or_default()),
            _ => {}
        }
    }
    ("pass", String::new())
}
