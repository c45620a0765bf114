//! Type checking against resource schemas (`status.typeChecking.expressionWarnings`), mirroring
//! the apiserver's `pkg/admission/plugin/policy/validating/typechecking_test.go`
//! (`TestExtractTypeNames`, `TestTypeCheck`) plus the built-in schemas, CRDs and vap-eval's own
//! checks. Rules: docs/typechecking-semantics.md (§ numbers below).

use serde_json::{json, Map, Value};
use std::path::Path;
use vap_eval::admission::policy_set::{PolicySet, SetupOptions};
use vap_eval::api::{
    evaluate, evaluate_with, typecheck, EvaluateInput, Manifests, RequestDocuments, TypecheckResult,
};
use vap_eval::environment::KubeVersion;

#[path = "cases.rs"]
#[allow(dead_code)]
mod cases;

/// A policy with `rules` (`[groups, versions, resources]`) and `spec` merged in.
fn policy(rules: &[(&[&str], &[&str], &[&str])], spec: Value) -> String {
    let rules: Vec<Value> = rules
        .iter()
        .map(|(g, v, r)| {
            json!({"apiGroups": g, "apiVersions": v, "resources": r, "operations": ["CREATE"]})
        })
        .collect();
    let mut s = json!({"matchConstraints": {"resourceRules": rules}, "validations": []});
    if let (Some(o), Some(extra)) = (s.as_object_mut(), spec.as_object()) {
        for (k, v) in extra {
            o.insert(k.clone(), v.clone());
        }
    }
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
           "metadata": {"name": "p.example.com"}, "spec": s})
    .to_string()
}

fn validations(exprs: &[&str]) -> Value {
    json!({"validations": exprs.iter().map(|e| json!({"expression": e})).collect::<Vec<_>>()})
}

fn check(manifests: &str, schemas: Option<Value>) -> TypecheckResult {
    typecheck(&EvaluateInput {
        manifests: Manifests::Text(manifests.to_string()),
        schemas: schemas.map(vap_eval::api::Document::Object),
        ..Default::default()
    })
}

/// The `(fieldRef, warning)` pairs of the first policy.
fn warnings(r: &TypecheckResult) -> Vec<(String, String)> {
    r.policies[0]
        .type_checking
        .expression_warnings
        .iter()
        .map(|w| (w.field_ref.clone(), w.warning.clone()))
        .collect()
}

const DEPLOY: (&[&str], &[&str], &[&str]) = (&["apps"], &["v1"], &["deployments"]);

/// Each version types against its own bundle (§2.5): `PodSpec.schedulingGroup` is in the
/// kubernetes/api Go types from v0.36 on (1.36 and 1.37 bundles are generated from them by
/// scripts/gen-schemas-go.mjs), not in 1.35's published spec.
#[test]
fn builtin_schemas_per_version() {
    let manifests = policy(
        &[(&[""], &["v1"], &["pods"])],
        validations(&["object.spec.schedulingGroup.podGroupName != ''"]),
    );
    let at = |version: &str| {
        warnings(&typecheck(&EvaluateInput {
            manifests: Manifests::Text(manifests.clone()),
            kubernetes_version: Some(version.to_string()),
            ..Default::default()
        }))
    };
    let old = at("1.35");
    assert_eq!(old.len(), 1, "{old:?}");
    assert!(old[0].1.contains("undefined field 'schedulingGroup'"), "{}", old[0].1);
    assert_eq!(at("1.36"), []);
    assert_eq!(at("1.37"), []);
    // A misspelt field is still found with the generated bundles.
    let typo = policy(
        &[(&[""], &["v1"], &["pods"])],
        validations(&["object.spec.schedulingGroup.podGroupNam != ''"]),
    );
    let w = warnings(&typecheck(&EvaluateInput {
        manifests: Manifests::Text(typo),
        kubernetes_version: Some("1.37".to_string()),
        ..Default::default()
    }));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].1.contains("undefined field 'podGroupNam'"), "{}", w[0].1);
}

fn object_with(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

/// `TestExtractTypeNames` (§3.1): specific, multiple (sorted by group), all resources (`*`),
/// sub resources, mixtures (a wildcard version gives up on that rule only).
#[test]
fn extract_type_names() {
    let kinds = |rules: &[(&[&str], &[&str], &[&str])]| {
        let r = check(&policy(rules, validations(&["true"])), None);
        r.policies[0].checked_kinds.clone()
    };
    assert_eq!(kinds(&[DEPLOY]), ["apps/v1, Kind=Deployment"]);
    assert_eq!(
        kinds(&[DEPLOY, (&[""], &["v1"], &["pods"])]),
        ["/v1, Kind=Pod", "apps/v1, Kind=Deployment"]
    );
    assert!(kinds(&[(&["apps"], &["v1"], &["*"])]).is_empty());
    assert!(kinds(&[(&["apps"], &["v1"], &["pods/*"])]).is_empty());
    assert_eq!(
        kinds(&[DEPLOY, (&["apps"], &["*"], &["deployments"])]),
        ["apps/v1, Kind=Deployment"]
    );
    assert!(kinds(&[(&["*"], &["v1"], &["deployments"])]).is_empty());
    // The REST mapper also takes singular and mixed-case resource names (§3.1).
    assert_eq!(kinds(&[(&["apps"], &["v1"], &["Deployment"])]), ["apps/v1, Kind=Deployment"]);
}

/// §3.1: at most 10 kinds per rule; the rest of the rule is not looked at.
#[test]
fn cap_of_ten_kinds_per_rule() {
    let resources: &[&str] = &[
        "configmaps",
        "endpoints",
        "events",
        "limitranges",
        "namespaces",
        "nodes",
        "persistentvolumeclaims",
        "persistentvolumes",
        "pods",
        "podtemplates",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "serviceaccounts",
        "services",
    ];
    let r = check(&policy(&[(&[""], &["v1"], resources)], validations(&["true"])), None);
    // An empty group matches every group's v1 of that resource: `events` also names
    // events.k8s.io/v1 Event, which counts towards the ten.
    let kinds = &r.policies[0].checked_kinds;
    assert_eq!(kinds.len(), 10, "{kinds:?}");
    assert!(kinds.contains(&"events.k8s.io/v1, Kind=Event".to_string()), "{kinds:?}");
    assert!(!kinds.contains(&"/v1, Kind=Secret".to_string()), "{kinds:?}");
}

/// `TestTypeCheck`, case by case, with the fake resolver's schema supplied as `schemas`.
#[test]
fn type_check_upstream_table() {
    let foo_string = json!({"apps/v1/Deployment": object_with(json!({"foo": {"type": "string"}}))});
    let foo_int = json!({"apps/v1/Deployment": object_with(json!({"foo": {"type": "integer", "format": "int64"}}))});
    let deploy = |spec: Value| policy(&[DEPLOY], spec);
    let bad_foo = deploy(validations(&["object.foo == 'bar'"]));

    // empty: no policy content, nothing.
    let r = check(&policy(&[], json!({})), Some(foo_string.clone()));
    assert!(warnings(&r).is_empty());
    // unresolved schema (a CRD kind nobody supplied): nothing checked.
    let r = check(
        &policy(
            &[(&["example.com"], &["v1"], &["widgets"])],
            validations(&["object.foo == 'bar'"]),
        ),
        None,
    );
    assert!(r.policies[0].checked_kinds.is_empty());
    assert!(warnings(&r).is_empty());
    // passed check
    assert!(warnings(&check(&bad_foo, Some(foo_string.clone()))).is_empty());
    // undefined field: the whole status text, byte for byte (§4).
    let r = check(
        &bad_foo,
        Some(json!({"apps/v1/Deployment": object_with(json!({"bar": {"type": "string"}}))})),
    );
    assert_eq!(
        warnings(&r),
        [(
            "spec.validations[0].expression".to_string(),
            "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'foo'\n | object.foo == 'bar'\n | ......^\n".to_string()
        )]
    );
    // field type mismatch
    let r = check(&bad_foo, Some(foo_int.clone()));
    assert_eq!(warnings(&r).len(), 1);
    assert!(warnings(&r)[0]
        .1
        .contains("found no matching overload for '_==_' applied to '(int, string)'"));
    // params: paramKind's schema types `params`.
    let params_policy = deploy(json!({
        "paramKind": {"apiVersion": "v1", "kind": "DoesNotMatter"},
        "validations": [{"expression": "object.foo == params.bar"}]}));
    let schema = object_with(json!({"foo": {"type": "string"}}));
    let r = check(
        &params_policy,
        Some(json!({"apps/v1/Deployment": schema.clone(), "v1/DoesNotMatter": schema})),
    );
    assert_eq!(warnings(&r).len(), 1);
    assert_eq!(warnings(&r)[0].0, "spec.validations[0].expression");
    assert!(warnings(&r)[0].1.contains("undefined field 'bar'"));
    // multiple expressions: only the failing one.
    let r = check(
        &deploy(validations(&["object.foo == 'bar'", "object.bar == 'foo'"])),
        Some(foo_string.clone()),
    );
    assert_eq!(
        warnings(&r).iter().map(|w| w.0.as_str()).collect::<Vec<_>>(),
        ["spec.validations[1].expression"]
    );
    // message expressions
    let r = check(
        &deploy(
            json!({"validations": [{"expression": "object.foo == 'bar'", "messageExpression": "object.foo + 114514"}]}),
        ),
        Some(foo_string.clone()),
    );
    assert_eq!(
        warnings(&r).iter().map(|w| w.0.as_str()).collect::<Vec<_>>(),
        ["spec.validations[0].messageExpression"]
    );
    // authorizer
    let r = check(
        &deploy(validations(&[
            "authorizer.group('').resource('endpoints').check('create').allowed()",
        ])),
        Some(foo_string.clone()),
    );
    assert!(warnings(&r).is_empty());
    // authorizer invalid
    let r = check(&deploy(validations(&["authorizer.allowed()"])), Some(foo_string.clone()));
    assert_eq!(warnings(&r).len(), 1);
    assert!(warnings(&r)[0].1.contains(
        "found no matching overload for 'allowed' applied to 'kubernetes.authorization.Authorizer"
    ));
    // variables valid / missing field / field wrong type / error in variables not reported.
    let with_vars = |vars: Value, expr: &str| {
        deploy(json!({"variables": vars, "validations": [{"expression": expr}]}))
    };
    let r = check(
        &with_vars(json!([{"name": "works", "expression": "true"}]), "variables.works"),
        Some(foo_int.clone()),
    );
    assert!(warnings(&r).is_empty());
    let r = check(
        &with_vars(json!([{"name": "works", "expression": "true"}]), "variables.nonExisting"),
        Some(foo_int.clone()),
    );
    assert_eq!(warnings(&r).len(), 1);
    assert!(warnings(&r)[0].1.contains("undefined field 'nonExisting'"));
    let r = check(
        &with_vars(
            json!([{"name": "name", "expression": "'something'"}]),
            "variables.name == object.foo",
        ),
        Some(foo_int.clone()),
    );
    assert_eq!(warnings(&r).len(), 1);
    assert!(warnings(&r)[0]
        .1
        .contains("found no matching overload for '_==_' applied to '(string, int)'"));
    let r = check(
        &with_vars(
            json!([{"name": "name", "expression": "object.foo == 'str'"}]),
            "variables.name == object.foo",
        ),
        Some(foo_int),
    );
    assert!(warnings(&r).is_empty(), "{:?}", warnings(&r));
    // ... but vap-eval's own check reports the variable (§5).
    assert!(r
        .diagnostics
        .iter()
        .any(|d| d.code == "cel-typecheck-vap-eval"
            && d.field.ends_with("spec.variables[0].expression")));
}

/// Built-in schemas (§2): a typo, a wrong method, Quantity maps dropped, date-time → timestamp,
/// `metadata.namespace` escaped, several matched kinds joined in order.
#[test]
fn builtin_schemas() {
    let r = check(
        &policy(
            &[DEPLOY],
            validations(&[
                "object.spec.replica > 1",
                "object.spec.replicas.startsWith('x')",
                "object.spec.replicas > 1 && object.metadata.name != ''",
                "object.spec.template.spec.containers.all(c, c.resources.limits['cpu'] != '')",
                "object.metadata.creationTimestamp > '2020'",
                "object.metadata.namespace == 'default'",
                "object.spec.strategy.rollingUpdate.maxSurge == 1",
            ]),
        ),
        None,
    );
    let w = warnings(&r);
    let refs: Vec<&str> = w.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(
        refs,
        [
            "spec.validations[0].expression",
            "spec.validations[1].expression",
            "spec.validations[3].expression",
            "spec.validations[4].expression",
            "spec.validations[5].expression",
        ]
    );
    assert!(w[0].1.contains("undefined field 'replica'"));
    assert_eq!(
        w[1].1,
        "apps/v1, Kind=Deployment: ERROR: <input>:1:32: found no matching overload for 'startsWith' applied to 'int.(string)'\n | object.spec.replicas.startsWith('x')\n | ...............................^\n"
    );
    assert!(w[2].1.contains("undefined field 'limits'"), "{}", w[2].1);
    assert!(w[3].1.contains("applied to '(timestamp, string)'"), "{}", w[3].1);
    assert!(w[4].1.contains("undefined field 'namespace'"), "{}", w[4].1);
    // Diagnostics: one warning per issue, positioned in the manifest.
    let d: Vec<_> = r.diagnostics.iter().filter(|d| d.code == "cel-typecheck").collect();
    assert_eq!(d.len(), 5);
    assert!(d.iter().all(|d| d.span.is_some()));

    // Several kinds: a part per kind, in group order, joined by "\n".
    let r = check(
        &policy(&[DEPLOY, (&[""], &["v1"], &["pods"])], validations(&["object.spec.nope"])),
        None,
    );
    let w = warnings(&r);
    assert_eq!(
        w[0].1,
        "/v1, Kind=Pod: ERROR: <input>:1:12: undefined field 'nope'\n | object.spec.nope\n | ...........^\n\napps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'nope'\n | object.spec.nope\n | ...........^\n"
    );
}

/// §3.2: a paramKind whose schema does not resolve leaves `params` undeclared.
#[test]
fn unresolved_param_kind() {
    let p = policy(
        &[DEPLOY],
        json!({
        "paramKind": {"apiVersion": "example.com/v1", "kind": "Missing"},
        "validations": [{"expression": "params.x == 1"}]}),
    );
    let w = warnings(&check(&p, None));
    assert!(w[0].1.contains("undeclared reference to 'params'"), "{w:?}");
    let p = policy(
        &[DEPLOY],
        json!({
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "validations": [{"expression": "params.data['x'] == 'y' && params.spec == 1"}]}),
    );
    let w = warnings(&check(&p, None));
    assert_eq!(w.len(), 1);
    assert!(w[0].1.contains("undefined field 'spec'"), "{w:?}");
}

/// §2.4: a CRD in the manifests gives its served version's schema; metadata is ObjectMeta.
#[test]
fn crd_schema() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema":
                {"type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "size": {"type": "integer"}, "port": {"x-kubernetes-int-or-string": true},
                    "x-name": {"type": "string"}}}}}}}]}});
    let p = policy(
        &[(&["example.com"], &["v1"], &["widgets"])],
        validations(&[
            "object.spec.size > 'x'",
            "object.spec.port == 'a' && object.spec.x__dash__name == '' && object.metadata.labels['a'] == 'b'",
        ]),
    );
    let r = check(&format!("{}\n---\n{}", crd, p), None);
    assert_eq!(r.policies[0].checked_kinds, ["example.com/v1, Kind=Widget"]);
    let w = warnings(&r);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].1.contains("found no matching overload for '_>_' applied to '(int, string)'"));
    // `schemas` input comes before the CRD.
    let r = check(
        &format!("{}\n---\n{}", crd, p),
        Some(
            json!({"example.com/v1/Widget": object_with(json!({"spec": {"type": "object", "properties": {"size": {"type": "string"}}}}))}),
        ),
    );
    let w = warnings(&r);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "spec.validations[1].expression");
}

/// §5: matchConditions and auditAnnotations are checked as vap-eval's own (never in the status).
#[test]
fn own_checks_are_not_status() {
    let p = policy(
        &[DEPLOY],
        json!({
        "matchConditions": [{"name": "m", "expression": "object.spec.replicaz > 1"}],
        "auditAnnotations": [{"key": "k", "valueExpression": "string(object.spec.replicaz)"}],
        "validations": [{"expression": "true"}]}),
    );
    let r = check(&p, None);
    assert!(warnings(&r).is_empty());
    let own: Vec<_> = r.diagnostics.iter().filter(|d| d.code == "cel-typecheck-vap-eval").collect();
    assert_eq!(own.len(), 2, "{:?}", r.diagnostics);
    assert!(own[0].message.contains("undefined field 'replicaz'"));
    assert!(own[1].field.ends_with("spec.auditAnnotations[0].valueExpression"));
}

/// §1: type checking never changes a decision: every pipeline case evaluates to the same
/// response and policy traces with and without it; only `cel-typecheck*` diagnostics differ.
#[test]
fn pipeline_decisions_unchanged() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut n = 0;
    let mut with_warnings = 0;
    for entry in std::fs::read_dir(&root).expect("tests/cases") {
        let dir = entry.expect("entry").path();
        if !dir.is_dir() {
            continue;
        }
        let (input, _) = cases::case_input(&dir);
        let typed = serde_json::to_value(evaluate(&input)).expect("json");
        let version = input
            .kubernetes_version
            .as_deref()
            .map(|v| KubeVersion::parse(v).expect("version"))
            .unwrap_or_default();
        // The same set as `evaluate` compiles, without type checking.
        let mut set =
            PolicySet::build(&input.manifests.to_text(), version, None, !input.objects_as_given);
        set.setup = SetupOptions {
            unbound_policies: input.unbound_policies.unwrap_or_default(),
            missing_namespaces: input.missing_namespaces.unwrap_or_default(),
        };
        let plain =
            serde_json::to_value(evaluate_with(&set, &RequestDocuments::from_input(&input)))
                .expect("json");
        assert_eq!(typed["response"], plain["response"], "{}", dir.display());
        assert_eq!(typed["policies"], plain["policies"], "{}", dir.display());
        let strip = |v: &Value| -> Vec<Value> {
            v["diagnostics"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| !d["code"].as_str().unwrap_or("").starts_with("cel-typecheck"))
                .cloned()
                .collect()
        };
        assert_eq!(strip(&typed), strip(&plain), "{}", dir.display());
        if strip(&typed).len() != typed["diagnostics"].as_array().map_or(0, Vec::len) {
            with_warnings += 1;
        }
        n += 1;
    }
    assert!(n >= 40, "{n} cases");
    // Some cases do get warnings, so the comparison above is not vacuous.
    assert!(with_warnings > 0);
    let _ = Map::<String, Value>::new();
}

/// `evaluateExpression` with `objectKind` / `objectSchema` (§7): typed warnings, same value.
#[test]
fn evaluate_expression_typed() {
    use vap_eval::api::{evaluate_expression, ExpressionOptions};
    let vars: Map<String, Value> =
        json!({"object": {"spec": {"replicas": 3}}}).as_object().cloned().unwrap_or_default();
    let plain =
        evaluate_expression("object.spec.replica == null", &vars, &ExpressionOptions::default());
    let typed = evaluate_expression(
        "object.spec.replica == null",
        &vars,
        &ExpressionOptions { object_kind: Some("apps/v1/Deployment".into()), ..Default::default() },
    );
    assert_eq!(typed.value, plain.value);
    assert_eq!(typed.type_name, plain.type_name);
    assert_eq!(typed.diagnostics.len(), plain.diagnostics.len() + 1);
    assert!(typed
        .diagnostics
        .iter()
        .any(|w| (w.code, w.message.as_str()) == ("cel-typecheck", "undefined field 'replica'")));
    let typed = evaluate_expression(
        "object.spec.replicas + 'x'",
        &vars,
        &ExpressionOptions {
            object_schema: Some(vap_eval::api::Document::Object(
                json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"replicas": {"type": "integer"}}}}}),
            )),
            ..Default::default()
        },
    );
    assert!(
        typed
            .diagnostics
            .iter()
            .any(|d| d.code == "cel-typecheck"
                && d.message.contains("'_+_' applied to '(int, string)'")),
        "{:?}",
        typed.diagnostics
    );
}

/// §1.2: `schemas` may be YAML/JSON text; anything but an object is a diagnostic.
#[test]
fn schemas_input_forms() {
    use vap_eval::api::Document;
    let p = policy(&[DEPLOY], validations(&["object.foo == 1"]));
    let run = |schemas: Document| {
        typecheck(&EvaluateInput {
            manifests: Manifests::Text(p.clone()),
            schemas: Some(schemas),
            ..Default::default()
        })
    };
    let r = run(Document::Text(
        "apps/v1/Deployment: {type: object, properties: {foo: {type: string}}}".into(),
    ));
    assert!(warnings(&r)[0].1.contains("applied to '(string, int)'"), "{:?}", warnings(&r));
    let r = run(Document::Object(json!(3)));
    assert!(r.diagnostics.iter().any(|d| d.code == "input-schemas-invalid"));
    let r = run(Document::Text("a: [".into()));
    assert!(r.diagnostics.iter().any(|d| d.code == "input-yaml-syntax" && d.field == "schemas"));
}

/// `evaluate` reports the same `status.typeChecking` as `typecheck`, per policy and in order
/// (one computation, when the policies are compiled), with the warnings present.
#[test]
fn evaluate_carries_the_policies_type_checking() {
    let manifests = policy(&[DEPLOY], validations(&["object.spec.replica > 1"]));
    let input = EvaluateInput {
        manifests: Manifests::Text(manifests.clone()),
        object: Some(vap_eval::api::Document::Object(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "default"}, "spec": {"replicas": 2}
        }))),
        ..Default::default()
    };
    let checked = check(&manifests, None);
    assert_eq!(warnings(&checked).len(), 1, "{:?}", warnings(&checked));
    let evaluated = evaluate(&input);
    assert_eq!(
        serde_json::to_value(&evaluated.type_checking).expect("json"),
        serde_json::to_value(&checked.policies).expect("json")
    );
}
