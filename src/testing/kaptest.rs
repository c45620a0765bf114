//! pfnet/kaptest's test manifests, with kaptest's semantics (its README and
//! `internal/tester`): a policy's expressions are evaluated without its `matchConstraints`
//! and without bindings; objects, oldObjects and params are looked up by kind and name in the
//! `resources` files; the operation follows from what is given (object: CREATE; both: UPDATE;
//! oldObject: DELETE); `request.dryRun` is true; the namespace is the Namespace object of that
//! name in the resources, or one with no labels; failurePolicy changes nothing.
//!
//! Results: `skip` when a matchCondition is false; `error` when a matchCondition or a
//! validation cannot be evaluated (an error wins over a denial); `deny` when a validation is
//! false; else `admit`. `deniedMessage` (v0.2) must equal a denying validation's message.
//!
//! Both layouts are read: v0.2 (`version: v1alpha1`, `policies`, `vapTestSuites`) and v0.1
//! (`validatingAdmissionPolicies`, `testSuites`). MutatingAdmissionPolicy suites
//! (`mapTestSuites`) are reported as skipped.

use super::*;

/// kaptest's `NameWithGVK`: kind and name required; namespace, group and version match when
/// given.
struct Ref<'a>(&'a Json);

impl Ref<'_> {
    fn given(&self) -> bool {
        !str_of(self.0, &["kind"]).is_empty() && !str_of(self.0, &["name"]).is_empty()
    }

    fn matches(&self, o: &Json) -> bool {
        let (group, version) = match str_of(o, &["apiVersion"]).split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", str_of(o, &["apiVersion"])),
        };
        let q = |k: &str| str_of(self.0, &[k]);
        q("name") == name_of(o)
            && q("kind") == str_of(o, &["kind"])
            && (q("namespace").is_empty() || q("namespace") == namespace_of(o))
            && (q("group").is_empty()
                || q("group") == group && (q("version").is_empty() || q("version") == version))
    }

    fn describe(&self) -> String {
        let ns = str_of(self.0, &["namespace"]);
        let name = str_of(self.0, &["name"]);
        let nn = if ns.is_empty() { name.to_string() } else { format!("{ns}/{name}") };
        format!("{}:{nn}", str_of(self.0, &["kind"]))
    }
}

pub(crate) fn run(
    doc: &Json,
    files: &Files<'_>,
    version: Option<&str>,
) -> Result<Vec<CaseResult>, String> {
    let v2 = doc.get("vapTestSuites").is_some() || doc.get("mapTestSuites").is_some();
    if v2 {
        match str_of(doc, &["version"]) {
            "" => return Err("invalid manifest: version is required".into()),
            "v1alpha1" => {}
            v => {
                return Err(format!(
                    "invalid manifest: unsupported version {v:?}, supported versions: [v1alpha1]"
                ))
            }
        }
    }
    let policy_files =
        strings(doc.get(if v2 { "policies" } else { "validatingAdmissionPolicies" }));
    let mut policies = Vec::new();
    for f in &policy_files {
        policies.extend(files.objects(f)?);
    }
    let mut resources = Vec::new();
    for f in strings(doc.get("resources")) {
        resources.extend(files.objects(&f)?);
    }
    let suites = doc.get(if v2 { "vapTestSuites" } else { "testSuites" });
    let mut out = Vec::new();
    for suite in suites.and_then(Json::as_array).into_iter().flatten() {
        let policy_name = str_of(suite, &["policy"]);
        let Some(policy) = policies
            .iter()
            .find(|p| is_kind(p, "ValidatingAdmissionPolicy") && name_of(p) == policy_name)
        else {
            out.push(CaseResult::setup_error(
                format!("[VAP] {policy_name}"),
                "a policy".into(),
                "POLICY NOT FOUND".into(),
            ));
            continue;
        };
        for tc in suite.get("tests").and_then(Json::as_array).into_iter().flatten() {
            out.push(run_case(policy, &policies, &resources, tc, version));
        }
    }
    for suite in doc.get("mapTestSuites").and_then(Json::as_array).into_iter().flatten() {
        let mut c = CaseResult::new(
            format!("[MAP] {}", str_of(suite, &["policy"])),
            "mutate".into(),
            "not evaluated".into(),
        );
        c.status = Status::Skipped;
        c.diff.clear();
        c.details.push("MutatingAdmissionPolicy tests are not evaluated by vap-eval".into());
        out.push(c);
    }
    Ok(out)
}

fn run_case(
    policy: &Json,
    policies: &[Json],
    resources: &[Json],
    tc: &Json,
    version: Option<&str>,
) -> CaseResult {
    let policy_name = name_of(policy);
    let empty = Json::Null;
    let object_ref = Ref(tc.get("object").unwrap_or(&empty));
    let old_ref = Ref(tc.get("oldObject").unwrap_or(&empty));
    let expect = str_of(tc, &["expect"]).to_string();
    let op = match (object_ref.given(), old_ref.given()) {
        (true, true) => format!("(UPDATE) {} -> {}", old_ref.describe(), object_ref.describe()),
        (true, false) => format!("(CREATE) {}", object_ref.describe()),
        (false, true) => format!("(DELETE) {}", old_ref.describe()),
        (false, false) => String::new(),
    };
    let mut name = format!("[VAP] {policy_name} - {op}");
    let param = tc.get("param").filter(|p| !str_of(p, &["name"]).is_empty());
    if let Some(p) = param {
        name.push_str(&format!(" (Param: {})", Ref(p).describe().trim_start_matches(':')));
    }
    let find = |r: &Ref<'_>| resources.iter().find(|o| r.matches(o));
    let mut errors = Vec::new();
    if !object_ref.given() && !old_ref.given() {
        errors.push("object or oldObject must be given and valid".to_string());
    }
    let object = if object_ref.given() { find(&object_ref) } else { None };
    let old = if old_ref.given() { find(&old_ref) } else { None };
    if object_ref.given() && object.is_none() {
        errors.push(format!("get object: {} not found", object_ref.describe()));
    }
    if old_ref.given() && old.is_none() {
        errors.push(format!("get oldObject: {} not found", old_ref.describe()));
    }
    // The param: paramKind's group, version and kind, the test's name and namespace.
    let mut param_object = None;
    if policy.pointer("/spec/paramKind").is_some() {
        let api_version = str_of(policy, &["spec", "paramKind", "apiVersion"]);
        let (group, ver) = api_version.split_once('/').unwrap_or(("", api_version));
        match param {
            None => errors.push("get param: param name is empty".into()),
            Some(p) => {
                let query = json!({"group": group, "version": ver, "kind": str_of(policy, &["spec", "paramKind", "kind"]), "name": str_of(p, &["name"]), "namespace": str_of(p, &["namespace"])});
                match resources.iter().find(|o| Ref(&query).matches(o)) {
                    Some(o) => param_object = Some(o.clone()),
                    None => errors.push("get param: param not found".into()),
                }
            }
        }
    }
    let ns = match (object, old) {
        (Some(o), Some(p)) if namespace_of(o) != namespace_of(p) => {
            errors.push("get namespace: extract namespace: namespace is different between object and oldObject".into());
            String::new()
        }
        (Some(o), _) | (None, Some(o)) => namespace_of(o).to_string(),
        _ => String::new(),
    };
    if !errors.is_empty() {
        return CaseResult::setup_error(name, expect, errors.join("; "));
    }
    let namespace = (!ns.is_empty()).then(|| {
        resources
            .iter()
            .find(|o| {
                str_of(o, &["kind"]) == "Namespace"
                    && str_of(o, &["apiVersion"]) == "v1"
                    && name_of(o) == ns
            })
            .cloned()
            .unwrap_or_else(|| namespace_object(&ns, None))
    });
    let user = tc.get("userInfo").map(|u| {
        json!({"username": str_of(u, &["name"]), "groups": u.get("groups").cloned().unwrap_or(json!([])), "extra": u.get("extra").cloned().unwrap_or(json!({}))})
    });
    let mut request = json!({"dryRun": true});
    if let Some(u) = user {
        request["userInfo"] = u;
    }
    // kaptest hands the param over directly. Through a binding, a param without a namespace
    // would be looked up in the request's namespace: place the copy there.
    if let Some(p) = param_object.as_mut() {
        if namespace_of(p).is_empty() && !ns.is_empty() {
            p["metadata"]["namespace"] = json!(ns);
        }
    }
    let param_ref = param_object
        .as_ref()
        .map(|p| json!({"name": name_of(p), "namespace": namespace_of(p), "parameterNotFoundAction": "Deny"}));

    // kaptest's view: the policy alone, matching everything, through a synthesized binding.
    let mut objects = vec![policy.clone(), synthesized_binding(policy_name, param_ref.clone())];
    objects.extend(param_object.clone());
    objects.extend(namespace.clone());
    // kaptest evaluates the objects as written.
    let mut set = compile_objects(&objects, version, true);
    match_everything(&mut set, policy_name);
    let result = evaluate(&set, object, old, Some(request.clone()));
    let (actual, messages) = outcome(&result, policy_name);

    let mut c = CaseResult::new(name, expect.clone(), actual.to_string());
    c.details = messages.clone();
    if let Some(m) = tc.get("deniedMessage").and_then(Json::as_str).filter(|m| !m.is_empty()) {
        if expect == "deny" && actual == "deny" && !messages.iter().any(|x| x == m) {
            c.fail_with(
                format!("deniedMessage: {m}"),
                format!("messages: {}", messages.join(" | ")),
            );
        }
    }
    if actual != "skip" {
        // The apiserver's view: every policy file object, the real bindings or the synthesized one.
        let has_binding = policies.iter().any(|b| {
            is_kind(b, "ValidatingAdmissionPolicyBinding")
                && str_of(b, &["spec", "policyName"]) == policy_name
        });
        let mut objects = policies.to_vec();
        if !has_binding {
            objects.push(synthesized_binding(policy_name, param_ref));
        }
        objects.extend(param_object);
        objects.extend(namespace);
        let set = compile_objects(&objects, version, false);
        let apiserver = evaluate(&set, object, old, Some(request));
        c.warnings = shortcut_warnings(&set, &apiserver, policy_name, has_binding, "kaptest");
    }
    c
}

/// kaptest's result and the messages of the decisions that made it.
fn outcome(r: &EvaluateResult, policy: &str) -> (&'static str, Vec<String>) {
    let Some(b) = policy_trace(r, policy).and_then(|t| t.bindings.iter().find(|b| b.matched))
    else {
        let why = policy_trace(r, policy).map(|t| t.reason.clone()).unwrap_or_default();
        return ("error", vec![format!("not evaluated: {why}")]);
    };
    if let Some(e) = &b.configuration_error {
        return ("error", vec![e.clone()]);
    }
    let Some(e) = b.evaluations.first() else {
        return ("error", vec![b.reason.clone()]);
    };
    if let Some(err) = &e.error {
        return ("error", vec![err.clone()]);
    }
    if !e.matched {
        return ("skip", Vec::new());
    }
    let mut result = "admit";
    let mut messages = Vec::new();
    for v in &e.validations {
        match v.decision {
            "error" => {
                return ("error", vec![v.message.clone().or(v.error.clone()).unwrap_or_default()]);
            }
            "deny" => {
                result = "deny";
                messages.push(v.message.clone().unwrap_or_default());
            }
            _ => {}
        }
    }
    (result, messages)
}
