//! Webhook configurations through the whole pipeline: which webhooks are called, why not, what
//! the response is and what each receives. Each test names the section of
//! `docs/webhook-semantics.md` (W§) it pins and the upstream test it mirrors.

use serde_json::{json, Value};
use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests, MissingNamespaces};

fn run(manifests: &str, object: Value, old: Option<Value>, request: Value) -> Value {
    let input = EvaluateInput {
        manifests: Manifests::Text(manifests.to_string()),
        object: (!object.is_null()).then_some(Document::Object(object)),
        old_object: old.map(Document::Object),
        request: (!request.is_null()).then_some(Document::Object(request)),
        kubernetes_version: None,
        ..Default::default()
    };
    serde_json::to_value(evaluate(&input)).expect("serialise")
}

fn run_version(manifests: &str, object: Value, request: Value, version: &str) -> Value {
    let input = EvaluateInput {
        manifests: Manifests::Text(manifests.to_string()),
        object: Some(Document::Object(object)),
        old_object: None,
        request: Some(Document::Object(request)),
        kubernetes_version: Some(version.into()),
        ..Default::default()
    };
    serde_json::to_value(evaluate(&input)).expect("serialise")
}

/// `(name, called, reason)` of every webhook in order.
fn hooks(r: &Value) -> Vec<(String, bool, String)> {
    r["webhooks"]
        .as_array()
        .expect("webhooks")
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap_or_default().to_string(),
                w["called"].as_bool().unwrap_or_default(),
                w["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn hook<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["webhooks"]
        .as_array()
        .and_then(|a| a.iter().find(|w| w["name"] == name))
        .unwrap_or_else(|| panic!("no webhook {name} in {r:#}"))
}

fn codes(r: &Value) -> Vec<String> {
    r["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A configuration of `kind` named `config` with webhooks given as YAML list items (indented
/// for the `webhooks:` list).
fn config(kind: &str, config: &str, webhooks: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: {kind}\nmetadata:\n  name: {config}\nwebhooks:\n{webhooks}"
    )
}

fn webhook(name: &str, extra: &str) -> String {
    format!(
        "- name: {name}\n  clientConfig:\n    url: https://hooks.example.com/{name}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n  rules:\n  - operations: [CREATE, UPDATE]\n    apiGroups: ['']\n    apiVersions: [v1]\n    resources: [pods]\n{extra}"
    )
}

fn pod(ns: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": ns, "labels": labels}})
}

const NAMESPACES: &str = "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: prod, labels: {env: prod}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: dev, labels: {env: dev}}\n";

/// W§2: mutating before validating; configurations by name; webhooks in written order.
/// (configuration managers' `sort.SliceStable` by name.)
#[test]
fn order_is_mutating_then_validating_each_by_configuration_name() {
    let m = [
        config("ValidatingWebhookConfiguration", "a-validate", &webhook("v.a.example.com", "")),
        config(
            "MutatingWebhookConfiguration",
            "z-mutate",
            &(webhook("m2.z.example.com", "") + &webhook("m1.z.example.com", "")),
        ),
        config("MutatingWebhookConfiguration", "b-mutate", &webhook("m.b.example.com", "")),
    ]
    .join("---\n");
    let r = run(&m, pod("default", json!({})), None, json!(null));
    let names: Vec<String> = hooks(&r).into_iter().map(|h| h.0).collect();
    assert_eq!(
        names,
        ["m.b.example.com", "m2.z.example.com", "m1.z.example.com", "v.a.example.com"]
    );
    assert!(hooks(&r).iter().all(|h| h.1), "{r:#}");
    assert_eq!(hook(&r, "v.a.example.com")["kind"], "ValidatingWebhookConfiguration");
    assert_eq!(hook(&r, "m.b.example.com")["configuration"], "b-mutate");
    assert_eq!(r["response"]["allowed"], true);
}

/// W§3 step 3, VAP§3.2 (rules_test.go `TestOperation`, `TestResource`, `TestScope`).
#[test]
fn rules_operations_scope_and_subresources() {
    let rule = |ops: &str, res: &str, scope: &str| {
        format!("- name: w.example.com\n  clientConfig: {{url: https://h.example.com}}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n  rules:\n  - {{operations: [{ops}], apiGroups: ['*'], apiVersions: ['*'], resources: [{res}], scope: '{scope}'}}\n")
    };
    let call = |ops: &str, res: &str, scope: &str, obj: Value, req: Value| {
        let m = config("ValidatingWebhookConfiguration", "c", &rule(ops, res, scope));
        let r = run(&m, obj, None, req);
        hooks(&r).remove(0)
    };
    let p = pod("default", json!({}));
    assert!(call("CREATE", "pods", "*", p.clone(), json!(null)).1);
    let h = call("DELETE", "pods", "*", p.clone(), json!(null));
    assert_eq!(
        (h.1, h.2.as_str()),
        (false, "no rule matches the request: rules[0] differs in operations")
    );
    assert_eq!(
        call("CREATE", "pods", "Cluster", p.clone(), json!(null)).2,
        "no rule matches the request: rules[0] differs in scope"
    );
    assert!(call("CREATE", "pods", "Namespaced", p.clone(), json!(null)).1);
    // A Namespace is cluster-scoped although its requests carry a namespace (its own name).
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}});
    assert!(call("CREATE", "namespaces", "Cluster", ns.clone(), json!(null)).1);
    assert!(!call("CREATE", "namespaces", "Namespaced", ns, json!(null)).1);
    // `pods` does not match the status subresource; `pods/*` and `*/status` do; `*` does not.
    let status = json!({"subResource": "status", "operation": "UPDATE"});
    let upd = |res: &str| {
        let m = config("ValidatingWebhookConfiguration", "c", &rule("UPDATE", res, "*"));
        let r = run(&m, pod("default", json!({})), Some(pod("default", json!({}))), status.clone());
        hooks(&r).remove(0).1
    };
    assert!(!upd("pods"));
    assert!(upd("pods/*"));
    assert!(upd("'*/status'"));
    assert!(!upd("'*'"));
    assert!(upd("'*/*'"));
    // A webhook without rules is never called.
    let m = config(
        "ValidatingWebhookConfiguration",
        "c",
        "- name: w.example.com\n  clientConfig: {url: https://h.example.com}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n",
    );
    let r = run(&m, pod("default", json!({})), None, json!(null));
    assert_eq!(hooks(&r)[0].2, "the webhook has no rules");
}

/// W§3 step 1, 5 (namespace/matcher_test.go): selector over the namespace's labels; cluster-scoped
/// requests other than namespaces are never excluded; a missing namespace is a 404 — only when
/// a rule matches (generic/webhook.go holds the error back).
#[test]
fn namespace_selector() {
    let sel = "  namespaceSelector: {matchLabels: {env: prod}}\n";
    let m =
        config("MutatingWebhookConfiguration", "c", &webhook("w.example.com", sel)) + NAMESPACES;
    let r = run(&m, pod("prod", json!({})), None, json!(null));
    assert!(hooks(&r)[0].1);
    let r = run(&m, pod("dev", json!({})), None, json!(null));
    assert_eq!(
        hooks(&r)[0].2,
        "namespace \"dev\" does not satisfy the namespaceSelector (env=prod)"
    );
    // The apiserver's answer (`missingNamespaces: strict`).
    let strict = EvaluateInput {
        manifests: Manifests::Text(m.clone()),
        object: Some(Document::Object(pod("missing", json!({})))),
        missing_namespaces: Some(MissingNamespaces::Strict),
        ..Default::default()
    };
    let r = serde_json::to_value(evaluate(&strict)).expect("serialise");
    assert_eq!(r["response"]["status"]["code"], 404);
    assert_eq!(r["response"]["status"]["message"], "namespaces \"missing\" not found");
    assert_eq!(r["response"]["status"]["reason"], "NotFound");
    // By default the namespace is assumed to exist with only its name label, as in a cluster
    // (where the request could not have reached admission otherwise): the selector reads it.
    let r = run(&m, pod("missing", json!({})), None, json!(null));
    assert_eq!(r["response"]["allowed"], true);
    assert_eq!(
        hooks(&r)[0].2,
        "namespace \"missing\" does not satisfy the namespaceSelector (env=prod)"
    );
    assert!(r["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .any(|d| d["code"] == "namespace-assumed"));
    // Strict, the same missing namespace with a rule that does not match: the lookup error is
    // held back, the webhook skipped, the request allowed.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "missing"}});
    let input = EvaluateInput { object: Some(Document::Object(cm)), ..strict };
    let r = serde_json::to_value(evaluate(&input)).expect("serialise");
    assert_eq!(r["response"]["allowed"], true);
    assert_eq!(hooks(&r)[0].2, "no rule matches the request: rules[0] differs in resources");
}

/// W§3 step 1: namespace requests — CREATE/UPDATE read the object's labels, DELETE (and
/// subresources such as finalize) the stored namespace's.
#[test]
fn namespace_requests_pick_their_labels() {
    let hook = "- name: ns.example.com\n  clientConfig: {url: https://h.example.com}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n  namespaceSelector: {matchLabels: {env: prod}}\n  rules:\n  - {operations: ['*'], apiGroups: [''], apiVersions: [v1], resources: ['namespaces', 'namespaces/finalize']}\n";
    let m = config("ValidatingWebhookConfiguration", "c", hook) + NAMESPACES;
    let ns = |labels: Value| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dev", "labels": labels}});
    // CREATE of "dev" labelled env=prod: the new object's labels count (stored dev is env=dev).
    let r = run(&m, ns(json!({"env": "prod"})), None, json!(null));
    assert!(hooks(&r)[0].1, "{r:#}");
    // UPDATE of "dev" to env=prod: the new object's labels count too.
    let r = run(&m, ns(json!({"env": "prod"})), Some(ns(json!({"env": "dev"}))), json!(null));
    assert!(hooks(&r)[0].1, "{r:#}");
    // DELETE of "dev": the stored namespace (env=dev) counts.
    let r = run(&m, Value::Null, Some(ns(json!({"env": "prod"}))), json!(null));
    assert!(!hooks(&r)[0].1);
    // finalize (UPDATE of a subresource): the stored namespace too.
    let req = json!({"operation": "UPDATE", "subResource": "finalize", "resource": {"group": "", "version": "v1", "resource": "namespaces"}});
    let r = run(&m, ns(json!({"env": "prod"})), Some(ns(json!({"env": "prod"}))), req);
    assert!(!hooks(&r)[0].1, "{r:#}");
}

/// W§3 step 2 (object/matcher_test.go): the object's or the old object's labels.
#[test]
fn object_selector_reads_object_and_old_object() {
    let sel = "  objectSelector: {matchLabels: {app: web}}\n";
    let m = config("ValidatingWebhookConfiguration", "c", &webhook("w.example.com", sel));
    let r = run(
        &m,
        pod("default", json!({})),
        Some(pod("default", json!({"app": "web"}))),
        json!(null),
    );
    assert!(hooks(&r)[0].1, "old object's labels match");
    let r = run(&m, pod("default", json!({"app": "db"})), None, json!(null));
    assert_eq!(
        hooks(&r)[0].2,
        "neither the object's nor the old object's labels satisfy the objectSelector (app=web)"
    );
}

const HPA_V2: &str = "autoscaling/v2";

fn hpa() -> Value {
    json!({"apiVersion": HPA_V2, "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h", "namespace": "default"}})
}

fn hpa_hook(name: &str, versions: &str, policy: &str, extra: &str) -> String {
    format!("- name: {name}\n  clientConfig: {{url: https://h.example.com}}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n  matchPolicy: {policy}\n  rules:\n  - {{operations: [CREATE], apiGroups: [autoscaling], apiVersions: [{versions}], resources: [horizontalpodautoscalers]}}\n{extra}")
}

/// W§3.4 (generic/webhook_test.go `TestShouldCallHook`): Equivalent tries
/// other versions only when no rule matches as sent; the review carries the matched
/// resource/kind, `requestKind`/`requestResource` the original; matchConditions see the
/// matched kind and the original resource [quirk].
#[test]
fn equivalent_resources() {
    let cond = "  matchConditions:\n  - {name: sees, expression: \"request.kind.version == 'v1' && request.resource.version == 'v2'\"}\n";
    let m = config(
        "ValidatingWebhookConfiguration",
        "c",
        &(hpa_hook("eq.example.com", "v1", "Equivalent", cond)
            + &hpa_hook("exact.example.com", "v1", "Exact", "")
            + &hpa_hook("both.example.com", "v1, v2", "Equivalent", "")),
    );
    let r = run(&m, hpa(), None, json!(null));
    let eq = hook(&r, "eq.example.com");
    assert_eq!(eq["called"], true, "{r:#}");
    assert_eq!(eq["matchConditions"][0]["result"], true);
    assert_eq!(
        eq["equivalentResource"],
        json!({"resource": {"group": "autoscaling", "version": "v1", "resource": "horizontalpodautoscalers"},
               "kind": {"group": "autoscaling", "version": "v1", "kind": "HorizontalPodAutoscaler"}})
    );
    let req = &eq["review"]["request"];
    assert_eq!(req["resource"]["version"], "v1");
    assert_eq!(req["kind"]["version"], "v1");
    assert_eq!(req["requestResource"]["version"], "v2");
    assert_eq!(req["requestKind"]["version"], "v2");
    assert!(codes(&r).contains(&"webhook-needs-conversion".to_string()));
    assert_eq!(hook(&r, "exact.example.com")["called"], false);
    // `v1, v2`: matched as sent, no equivalent.
    let both = hook(&r, "both.example.com");
    assert_eq!(both["called"], true);
    assert!(both.get("equivalentResource").is_none());
    assert_eq!(both["review"]["request"]["resource"]["version"], "v2");
}

/// W§4 (matchconditions/matcher_test.go): false skips, a false wins over an error, an error
/// under Ignore skips, under Fail rejects with 403 Forbidden.
#[test]
fn match_conditions() {
    let conds = |fp: &str, exprs: &[(&str, &str)]| {
        let mut s = format!("  failurePolicy: {fp}\n  matchConditions:\n");
        for (n, e) in exprs {
            s += &format!("  - {{name: {n}, expression: \"{e}\"}}\n");
        }
        s
    };
    let one = |fp: &str, exprs: &[(&str, &str)]| {
        let m = config(
            "ValidatingWebhookConfiguration",
            "c",
            &webhook("w.example.com", &conds(fp, exprs)),
        );
        run(&m, pod("default", json!({"a": "b"})), None, json!(null))
    };
    let err = "object.metadata.labels.missing == 'x'";
    let r = one("Fail", &[("ok", "true"), ("nope", "false")]);
    assert_eq!(hooks(&r)[0].2, "matchCondition \"nope\" evaluated to false");
    let r = one("Fail", &[("boom", err), ("nope", "false")]);
    assert_eq!(hooks(&r)[0].2, "matchCondition \"nope\" evaluated to false");
    assert_eq!(r["response"]["allowed"], true);
    assert_eq!(r["webhooks"][0]["matchConditions"][0]["error"], "expression 'object.metadata.labels.missing == 'x'' resulted in error: no such key: missing");
    let r = one("Ignore", &[("boom", err)]);
    assert_eq!((hooks(&r)[0].1, r["response"]["allowed"].clone()), (false, json!(true)));
    assert!(hooks(&r)[0].2.starts_with("a matchCondition failed and failurePolicy is Ignore"));
    let r = one("Fail", &[("boom", err)]);
    let s = &r["response"]["status"];
    assert_eq!(s["code"], 403);
    assert_eq!(s["reason"], "Forbidden");
    assert_eq!(
        s["message"],
        "pods \"p\" is forbidden: expression 'object.metadata.labels.missing == 'x'' resulted in error: no such key: missing"
    );
    assert_eq!(s["details"], json!({"name": "p", "kind": "pods"}));
    // Two errors aggregate as `[e1, e2]`.
    let r = one("Fail", &[("a", err), ("b", "object.x == 1")]);
    assert!(r["response"]["status"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("is forbidden: [expression "));
}

/// W§4.2: a matchCondition error under Fail in a mutating webhook rejects after the earlier
/// mutating webhooks were called, and before any policy or validating webhook runs; in the
/// validating phase no webhook is called at all (all predicates run before the calls).
#[test]
fn match_condition_error_stops_the_chain() {
    let bad = "  matchConditions:\n  - {name: boom, expression: \"object.nope == 1\"}\n";
    let policy = "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: deny-all}\nspec:\n  matchConstraints:\n    resourceRules: [{operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]\n  validations: [{expression: 'false'}]\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: deny-all}\nspec: {policyName: deny-all, validationActions: [Deny]}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n";
    let m = config(
        "MutatingWebhookConfiguration",
        "m",
        &(webhook("first.example.com", "")
            + &webhook("bad.example.com", bad)
            + &webhook("after.example.com", "")),
    ) + "---\n"
        + &config("ValidatingWebhookConfiguration", "v", &webhook("v.example.com", ""))
        + policy;
    let r = run(&m, pod("default", json!({})), None, json!(null));
    let h = hooks(&r);
    assert_eq!((h[0].1, h[1].1, h[2].1, h[3].1), (true, false, false, false), "{r:#}");
    assert_eq!(h[2].2, "not reached: the request was already rejected");
    assert_eq!(h[3].2, "not reached: MutatingAdmissionWebhook rejected the request");
    assert_eq!(r["policies"], json!([]));
    assert_eq!(r["response"]["status"]["code"], 403);
    assert!(codes(&r).contains(&"admission-chain-stopped".to_string()));

    // Validating: the error in the second webhook means the first is not called either.
    let m = config(
        "ValidatingWebhookConfiguration",
        "v",
        &(webhook("first.example.com", "")
            + &webhook("bad.example.com", bad)
            + &webhook("after.example.com", "")),
    );
    let r = run(&m, pod("default", json!({})), None, json!(null));
    let h = hooks(&r);
    assert_eq!((h[0].1, h[1].1, h[2].1), (false, false, false), "{r:#}");
    assert!(h[0].2.starts_with("not called: another validating webhook's predicates rejected"));
    assert_eq!(r["webhooks"][0]["matchedRule"], 0);
    assert!(r["webhooks"][0].get("review").is_none());

    // A policy denial: validating webhooks are not reached; mutating ones were called.
    let m = config("MutatingWebhookConfiguration", "m", &webhook("m.example.com", ""))
        + "---\n"
        + &config("ValidatingWebhookConfiguration", "v", &webhook("v.example.com", ""))
        + policy;
    let r = run(&m, pod("default", json!({})), None, json!(null));
    assert_eq!(r["response"]["status"]["code"], 422);
    let h = hooks(&r);
    assert_eq!((h[0].1, h[1].1), (true, false));
    assert_eq!(h[1].2, "not reached: ValidatingAdmissionPolicy rejected the request");
}

/// W§6: dry run — None/NoneOnDryRun are called; Unknown/Some refuse the request with 400
/// whatever the failurePolicy (`NewDryRunUnsupportedErr`); a missing sideEffects is a call
/// error and obeys failurePolicy.
#[test]
fn dry_run() {
    let run_with = |side: &str, fp: &str| {
        let h = format!("- name: w.example.com\n  clientConfig: {{url: https://h.example.com}}\n  failurePolicy: {fp}\n  admissionReviewVersions: [v1]\n{side}  rules: [{{operations: ['*'], apiGroups: [''], apiVersions: [v1], resources: [pods]}}]\n");
        let m = config("MutatingWebhookConfiguration", "c", &h);
        run(&m, pod("default", json!({})), None, json!({"dryRun": true}))
    };
    for ok in ["None", "NoneOnDryRun"] {
        let r = run_with(&format!("  sideEffects: {ok}\n"), "Fail");
        assert!(hooks(&r)[0].1);
        assert_eq!(r["webhooks"][0]["review"]["request"]["dryRun"], true);
    }
    for refused in ["Some", "Unknown"] {
        let r = run_with(&format!("  sideEffects: {refused}\n"), "Ignore");
        let s = &r["response"]["status"];
        assert_eq!(s["code"], 400, "{r:#}");
        assert_eq!(s["reason"], "BadRequest");
        assert_eq!(s["message"], "admission webhook \"w.example.com\" does not support dry run");
        assert!(s.get("details").is_none());
        assert_eq!(
            hooks(&r)[0].2,
            "the request is rejected: admission webhook \"w.example.com\" does not support dry run"
        );
    }
    let r = run_with("", "Fail");
    assert_eq!(r["response"]["status"]["code"], 500);
    assert_eq!(
        r["response"]["status"]["message"],
        "Internal error occurred: failed calling webhook \"w.example.com\": Webhook SideEffects is nil"
    );
    let r = run_with("", "Ignore");
    assert_eq!(r["response"]["allowed"], true);
    assert!(hooks(&r)[0].2.ends_with("failurePolicy is Ignore: the apiserver fails open"));
}

/// W§3.5 (rules.go `IsExemptAdmissionConfigurationResource`): admission configuration kinds
/// never reach a webhook; the MutatingAdmissionPolicy kinds from 1.32.
#[test]
fn exempt_kinds() {
    let any = "- name: w.example.com\n  clientConfig: {url: https://h.example.com}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n  rules: [{operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*']}]\n";
    let m = config("ValidatingWebhookConfiguration", "c", any);
    let vwc = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "x"}});
    let r = run(&m, vwc, None, json!(null));
    assert!(!hooks(&r)[0].1);
    assert!(hooks(&r)[0].2.contains("exempt from webhook admission"));
    let vapb = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "x"}});
    assert!(!hooks(&run(&m, vapb, None, json!(null)))[0].1);
    let map = json!({"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy", "metadata": {"name": "x"}});
    let req = json!({"resource": {"group": "admissionregistration.k8s.io", "version": "v1beta1", "resource": "mutatingadmissionpolicies"}});
    assert!(!hooks(&run_version(&m, map.clone(), req.clone(), "1.32"))[0].1);
    assert!(hooks(&run_version(&m, map, req, "1.31"))[0].1);
}

/// W§1, W§5 (v1beta1/defaults.go): v1beta1 is converted with its own defaults — Ignore, Exact,
/// Unknown side effects, 30 s, AdmissionReview v1beta1 — and Unknown fails v1 validation.
#[test]
fn v1beta1_defaults() {
    let m = "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: old}\nwebhooks:\n- name: old.example.com\n  clientConfig: {service: {namespace: ns, name: svc}}\n  rules: [{operations: [CREATE], apiGroups: [autoscaling], apiVersions: [v1], resources: [horizontalpodautoscalers]}]\n- name: pods.example.com\n  clientConfig: {service: {namespace: ns, name: svc}}\n  rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}]\n  matchConditions: [{name: boom, expression: 'object.nope'}]\n";
    // Exact: the v2 HPA does not reach a v1-only rule.
    let r = run(m, hpa(), None, json!(null));
    assert!(!hooks(&r)[0].1);
    let c = codes(&r);
    assert!(c.contains(&"webhook-converted-version".to_string()), "{c:?}");
    let msgs: Vec<&str> = r["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["message"].as_str())
        .collect();
    assert!(msgs.contains(&"webhooks[0].sideEffects: Unsupported value: \"Unknown\": supported values: \"None\", \"NoneOnDryRun\""), "{msgs:#?}");
    // Ignore: the failing matchCondition skips instead of rejecting; review version v1beta1.
    let r = run(m, pod("default", json!({})), None, json!(null));
    assert_eq!(r["response"]["allowed"], true);
    assert!(hooks(&r)[1].2.starts_with("a matchCondition failed and failurePolicy is Ignore"));
    let m2 = m.replace("  matchConditions: [{name: boom, expression: 'object.nope'}]\n", "");
    let r = run(&m2, pod("default", json!({})), None, json!(null));
    assert_eq!(r["webhooks"][1]["review"]["apiVersion"], "admission.k8s.io/v1beta1");
}

/// W§7: the AdmissionReview a webhook receives (request/admissionreview.go).
#[test]
fn review_body() {
    let m = config("ValidatingWebhookConfiguration", "c", &webhook("w.example.com", ""));
    let obj = pod("default", json!({"a": "b"}));
    let r =
        run(&m, obj.clone(), None, json!({"userInfo": {"username": "alice", "groups": ["dev"]}}));
    // The webhook is sent the object as the apiserver decoded and defaulted it (src/objects:
    // SetDefaults_PodSpec, json tags: `containers` is not omitempty), not the text as written.
    let mut stored = obj.clone();
    stored["spec"] = json!({"enableServiceLinks": true, "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "securityContext": {}, "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler", "containers": null});
    // A validating webhook is called after the registry's BeforeCreate (store.go create):
    // uid and creationTimestamp (vap-eval's placeholders), generation 1 and the Pending status
    // with its QoS class (pod strategy PrepareForCreate).
    stored["metadata"]["creationTimestamp"] = json!("1970-01-01T00:00:00Z");
    stored["metadata"]["uid"] = json!("00000000-0000-0000-0000-000000000000");
    stored["metadata"]["generation"] = json!(1);
    stored["status"] = json!({"phase": "Pending", "qosClass": "BestEffort"});
    assert_eq!(
        r["webhooks"][0]["review"],
        json!({
            "kind": "AdmissionReview",
            "apiVersion": "admission.k8s.io/v1",
            "request": {
                "uid": "00000000-0000-0000-0000-000000000000",
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
                "requestResource": {"group": "", "version": "v1", "resource": "pods"},
                "name": "p",
                "namespace": "default",
                "operation": "CREATE",
                "userInfo": {"username": "alice", "groups": ["dev"]},
                "object": stored,
                "oldObject": null,
                "dryRun": false,
                "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
            }
        })
    );
}

/// W§5: API validation, one positioned diagnostic per problem; nothing is lost.
#[test]
fn api_validation_is_positioned() {
    let m = "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: c}\nwebhooks:\n- name: short\n  clientConfig: {url: 'http://x', service: {namespace: a, name: b}}\n  timeoutSeconds: 31\n  reinvocationPolicy: Sometimes\n  rules: [{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}]\n  matchConditions: [{name: c, expression: 'object.x +'}]\n- name: short\n  sideEffects: None\n  clientConfig: {url: 'https://x'}\n  admissionReviewVersions: [v1]\n";
    let r = run(m, pod("default", json!({})), None, json!(null));
    let diags = r["diagnostics"].as_array().expect("diagnostics");
    let find = |needle: &str| {
        diags
            .iter()
            .find(|d| d["message"].as_str().is_some_and(|s| s.contains(needle)))
            .unwrap_or_else(|| panic!("no diagnostic containing {needle:?} in {diags:#?}"))
    };
    let t = find("the timeout value must be between 1 and 30 seconds");
    assert_eq!(t["message"], "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds");
    let span = (
        t["span"]["start"].as_u64().unwrap_or(0) as usize,
        t["span"]["end"].as_u64().unwrap_or(0) as usize,
    );
    assert_eq!(&m[span.0..span.1], "31");
    find("webhooks[0].name: Invalid value: \"short\": should be a domain with at least three segments separated by dots");
    find("webhooks[0].clientConfig: Required value: exactly one of url or service is required");
    find("webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun");
    find("webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1");
    find("webhooks[0].reinvocationPolicy: Unsupported value: \"Sometimes\": supported values: \"IfNeeded\", \"Never\"");
    find("webhooks[1].name: Duplicate value: \"short\"");
    let cel = diags.iter().find(|d| d["code"] == "cel-compile").expect("compile error");
    assert!(cel["field"]
        .as_str()
        .unwrap_or_default()
        .ends_with("webhooks[0].matchConditions[0].expression"));
    // The result is still complete: the second webhook is evaluated.
    assert_eq!(r["webhooks"].as_array().map(Vec::len), Some(2));
}

/// W§2: requests no configuration and no policy touches are allowed, with an empty list.
#[test]
fn untouched_requests_are_allowed() {
    let r = run("", pod("default", json!({})), None, json!(null));
    assert_eq!(r["response"]["allowed"], true);
    assert_eq!(r["webhooks"], json!([]));
}

/// W§5: `typecheck` reports webhook configuration diagnostics (decoding, validation, CEL).
#[test]
fn typecheck_reports_webhook_problems() {
    let m = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: c}\nwebhooks:\n- name: w.example.com\n  clientConfig: {url: 'https://x', caBundle: 'AA=A'}\n  sideEffects: None\n  admissionReviewVersions: [v1]\n  matchConditions: [{name: c, expression: 'object.x + 1 == \"a\"'}]\n";
    let input =
        EvaluateInput { manifests: Manifests::Text(m.to_string()), ..EvaluateInput::default() };
    let out = vap_eval::api::typecheck(&input);
    let found: Vec<(&str, &str)> =
        out.diagnostics.iter().map(|d| (d.code, d.message.as_str())).collect();
    assert!(
        found.contains(&("manifest-wrong-type", "illegal base64 data at input byte 2")),
        "{found:#?}"
    );
    let ca = out.diagnostics.iter().find(|d| d.code == "manifest-wrong-type").expect("caBundle");
    let span = ca.span.expect("positioned");
    assert_eq!(&m[span.start as usize..span.end as usize], "'AA=A'");
    assert!(out.diagnostics.iter().any(|d| d.code == "cel-compile"
        && d.field
            == "ValidatingWebhookConfiguration/c: webhooks[0].matchConditions[0].expression"));
}

/// W§6: no known AdmissionReview version is a call error (failurePolicy decides); W§3 step 5:
/// a selector that does not parse is a 500 once a rule matches.
#[test]
fn call_errors_and_selector_errors() {
    let h = |fp: &str, extra: &str| {
        format!("- name: w.example.com\n  clientConfig: {{url: https://h.example.com}}\n  sideEffects: None\n  failurePolicy: {fp}\n  rules: [{{operations: [CREATE], apiGroups: [''], apiVersions: [v1], resources: [pods]}}]\n{extra}")
    };
    let versions = "  admissionReviewVersions: [v2]\n";
    let m = config("ValidatingWebhookConfiguration", "c", &h("Fail", versions));
    let r = run(&m, pod("default", json!({})), None, json!(null));
    assert_eq!(r["response"]["status"]["code"], 500);
    assert_eq!(
        r["response"]["status"]["message"],
        "Internal error occurred: failed calling webhook \"w.example.com\": could not create admission objects: webhook does not accept known AdmissionReview versions"
    );
    let m = config("ValidatingWebhookConfiguration", "c", &h("Ignore", versions));
    let r = run(&m, pod("default", json!({})), None, json!(null));
    assert_eq!(r["response"]["allowed"], true);
    assert!(!hooks(&r)[0].1);

    let bad = "  admissionReviewVersions: [v1]\n  objectSelector: {matchExpressions: [{key: a, operator: Near}]}\n";
    let m = config("ValidatingWebhookConfiguration", "c", &h("Ignore", bad));
    let r = run(&m, pod("default", json!({})), None, json!(null));
    let s = &r["response"]["status"];
    assert_eq!(s["code"], 500, "{r:#}");
    assert_eq!(
        s["message"],
        "Internal error occurred: \"Near\" is not a valid label selector operator"
    );
    // The same selector on a webhook whose rules do not match: skipped, allowed.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}});
    assert_eq!(run(&m, cm, None, json!(null))["response"]["allowed"], true);
}

/// The registry runs between the two phases (store.go create: FillObjectMetaSystemFields,
/// generateName, BeforeCreate, then the validating callback): a mutating webhook is sent the
/// object and name without them, a validating webhook with them.
#[test]
fn registry_between_mutating_and_validating() {
    let m = format!(
        "{}\n---\n{}",
        config("MutatingWebhookConfiguration", "m", &webhook("m.example.com", "")),
        config("ValidatingWebhookConfiguration", "v", &webhook("v.example.com", ""))
    );
    let mut obj = pod("default", json!({}));
    obj["metadata"] = json!({"generateName": "web-", "namespace": "default"});
    let r = run(&m, obj, None, json!(null));
    let (mutating, validating) =
        (&r["webhooks"][0]["review"]["request"], &r["webhooks"][1]["review"]["request"]);
    assert!(mutating.get("name").is_none(), "{mutating}");
    assert!(mutating["object"]["metadata"].get("uid").is_none());
    assert_eq!(validating["name"], "web-xxxxx");
    assert_eq!(validating["object"]["metadata"]["name"], "web-xxxxx");
    assert_eq!(validating["object"]["status"]["phase"], "Pending");
}
