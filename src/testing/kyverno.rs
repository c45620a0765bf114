//! Kyverno CLI's `kyverno-test.yaml`, with the semantics of `kyverno test`. Results for Kyverno
//! ClusterPolicies/Policies: [`KyvernoRun`] (docs/kyverno-semantics.md §9). Results for
//! ValidatingAdmissionPolicies (cmd/cli/kubectl-kyverno, `pkg/admissionpolicy/validate.go`):
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
    let user_file = match root.get("userinfo").and_then(Json::as_str) {
        Some(f) if !f.is_empty() => Some(files.document(f)?),
        _ => None,
    };
    let user = user_file.as_ref().and_then(|d| d.get("userInfo")).cloned();
    let request = user.clone().map(|u| json!({"userInfo": u}));
    #[cfg(feature = "kyverno")]
    let mut kyverno = {
        // PolicyExceptions (`exceptions:` files) join the Kyverno policies.
        let mut with_exceptions = policies.clone();
        for f in strings(root.get("exceptions")) {
            with_exceptions.extend(files.objects(&f)?);
        }
        KyvernoRun::new(&with_exceptions, &params, &namespaces, user_file.as_ref(), version)
    };

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
        #[cfg(feature = "kyverno")]
        if !is_vap && kyverno.has_policy(policy) {
            kyverno.check(i, r, &expected, &names, &resources, &mut out);
            continue;
        }
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
                    "{policy:?} is neither a ValidatingAdmissionPolicy nor a Kyverno ClusterPolicy/Policy of the policies files: vap-eval does not evaluate it"
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

/// The Kyverno `ClusterPolicy`/`Policy` results of a test file, checked as `kyverno test` checks
/// them (cmd/cli/kubectl-kyverno/commands/test `printTestResult`, `lookupRuleResponses`,
/// `checkResult`; docs/kyverno-semantics.md §9).
#[cfg(feature = "kyverno")]
struct KyvernoRun {
    /// The Kyverno policies of the policies files, with the params and the values' namespaces.
    set: PolicySet,
    user: Option<crate::admission::request::UserInfo>,
    cli: crate::kyverno::Cli,
    /// `(resource index, operation)` → its evaluation (all policies at once, as the CLI does).
    done: std::collections::HashMap<(usize, String), Result<crate::kyverno::Evaluation, String>>,
}

#[cfg(feature = "kyverno")]
impl KyvernoRun {
    fn new(
        policies: &[Json],
        params: &[Json],
        namespaces: &[Json],
        user_file: Option<&Json>,
        version: Option<&str>,
    ) -> Self {
        let is_kyverno = |p: &&Json| {
            str_of(p, &["apiVersion"]).starts_with("kyverno.io/")
                && matches!(str_of(p, &["kind"]), "ClusterPolicy" | "Policy" | "PolicyException")
        };
        let mut objects: Vec<Json> = policies.iter().filter(is_kyverno).cloned().collect();
        objects.extend(params.iter().cloned());
        objects.extend(namespaces.iter().cloned());
        let set = compile_objects(&objects, version, true);
        // The user-info file: `userInfo` (username, groups) and the user's `roles` and
        // `clusterRoles` as written (no RBAC lookup).
        let user = user_file
            .and_then(|u| u.get("userInfo"))
            .and_then(|u| serde_json::from_value(u.clone()).ok());
        let cli = crate::kyverno::Cli {
            roles: user_file.map(|u| strings(u.get("roles"))).unwrap_or_default(),
            cluster_roles: user_file.map(|u| strings(u.get("clusterRoles"))).unwrap_or_default(),
        };
        KyvernoRun { set, user, cli, done: Default::default() }
    }

    /// `policy` (`name`, or `namespace/name` for a Policy) is a Kyverno policy of the files.
    fn has_policy(&self, policy: &str) -> bool {
        let name = policy.rsplit('/').next().unwrap_or_default();
        crate::kyverno::compiled(&self.set).loaded.policies.iter().any(|p| p.name == name)
    }

    /// Check result `i` (`r`) against every resource it names.
    fn check(
        &mut self,
        i: usize,
        r: &Json,
        expected: &str,
        names: &[String],
        resources: &[Json],
        out: &mut Vec<CaseResult>,
    ) {
        let policy = str_of(r, &["policy"]);
        let name = policy.rsplit('/').next().unwrap_or_default();
        let rule = str_of(r, &["rule"]);
        let operation = match str_of(r, &["operation"]) {
            "" => "CREATE",
            op => op,
        };
        // Resources by name or `namespace/name` (the result's `kind` is not used to select
        // them); when none is named, or none of the names is found, every resource [quirk].
        let mut selected: Vec<usize> = Vec::new();
        for n in names {
            for (k, o) in resources.iter().enumerate() {
                let hit = match n.split('/').collect::<Vec<_>>()[..] {
                    [name] => name_of(o) == name,
                    [ns, name] => namespace_of(o) == ns && name_of(o) == name,
                    _ => false,
                };
                if hit && !selected.contains(&k) {
                    selected.push(k);
                }
            }
        }
        let every = selected.is_empty();
        if every {
            selected = (0..resources.len()).collect();
        }
        for (k, object) in resources.iter().enumerate().filter(|(k, _)| selected.contains(k)) {
            let shown = format!(
                "{}/{}/{}",
                str_of(object, &["kind"]),
                namespace_of(object),
                name_of(object)
            );
            let label = |rule: &str| format!("results[{i}] {policy}/{rule} {shown}");
            let (set, user, cli) = (&self.set, &self.user, &self.cli);
            let ev = self.done.entry((k, operation.to_string())).or_insert_with(|| {
                let (ev, diags) = crate::kyverno::evaluate_resource(
                    set,
                    object,
                    Some(operation),
                    user.clone(),
                    cli,
                );
                ev.ok_or_else(|| {
                    let why: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
                    format!("the request for {shown} could not be formed: {}", why.join("; "))
                })
            });
            let ev = match ev {
                Ok(ev) => ev,
                Err(e) => {
                    out.push(CaseResult::setup_error(label(rule), expected.into(), e.clone()));
                    continue;
                }
            };
            let loaded = &crate::kyverno::compiled(&self.set).loaded;
            let mut rows = Vec::new();
            let mut rejected = None;
            for (p, pr) in loaded.policies.iter().zip(&ev.result.policies) {
                if p.name != name {
                    continue;
                }
                if let Some(why) = &p.rejected {
                    rejected = Some(why.clone());
                    continue;
                }
                // Only policies with validate (or verifyImages) rules give a response.
                if !p.spec.rules.iter().any(|r| r.validate.is_some() || r.has_verify_images) {
                    continue;
                }
                let before = rows.len();
                for x in &pr.rules {
                    let named = rule.is_empty()
                        || x.name == rule
                        || x.name == format!("autogen-{rule}")
                        || x.name == format!("autogen-cronjob-{rule}");
                    if !named {
                        continue;
                    }
                    let mut c = match (x.result, &x.unsupported) {
                        (Some(got), _) => {
                            CaseResult::new(label(&x.name), expected.into(), got.into())
                        }
                        (None, why) => {
                            let mut c =
                                CaseResult::new(label(&x.name), expected.into(), expected.into());
                            c.status = Status::Skipped;
                            c.actual = "not evaluated".into();
                            c.details.push(why.clone().unwrap_or_default());
                            c
                        }
                    };
                    if !x.message.is_empty() {
                        c.details.push(x.message.clone());
                    }
                    rows.push(c);
                }
                if rows.len() == before {
                    // No rule response: Kyverno counts the resource as excluded, a pass.
                    let mut c = CaseResult::new(label(rule), expected.into(), expected.into());
                    c.actual = "excluded".into();
                    c.details.push(format!(
                        "no rule of {policy} reported a result for {shown}: Kyverno's CLI counts the resource as excluded, whatever the expected result"
                    ));
                    rows.push(c);
                }
            }
            if rows.is_empty() {
                match &rejected {
                    // Kyverno's CLI skips a policy its validation rejects: a skip, not a failure.
                    Some(why) => {
                        let mut c = CaseResult::new(label(rule), expected.into(), expected.into());
                        c.actual = "skipped: invalid policy".into();
                        c.details.push(why.clone());
                        rows.push(c);
                    }
                    None => {
                        let mut c =
                            CaseResult::new(label(rule), expected.into(), "not found".into());
                        c.details.push(format!("{policy} gave no response for {shown}"));
                        rows.push(c);
                    }
                }
            }
            if every && !names.is_empty() {
                for c in &mut rows {
                    c.warnings.push(format!(
                        "none of the resources {names:?} is in the resources files: Kyverno's CLI then checks the result against every resource"
                    ));
                }
            }
            out.extend(rows);
        }
    }
}
