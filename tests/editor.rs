//! `complete` and `hover` tables (docs/typechecking-semantics.md §6).
#![cfg(feature = "editor")]

use serde_json::{json, Map, Value};
use vap_eval::api::{EvaluateInput, ExpressionOptions, Manifests};
use vap_eval::editor::{complete, hover, CompletionResult, HoverResult, Source};

fn deployment_vars() -> Map<String, Value> {
    json!({"object": {"metadata": {"name": "x", "labels": {"app": "web", "tier": "front"}},
        "spec": {"replicas": 3}}})
    .as_object()
    .cloned()
    .unwrap_or_default()
}

fn deployment_options(kind: Option<&str>) -> ExpressionOptions {
    ExpressionOptions {
        object_kind: Some("apps/v1/Deployment".into()),
        kind: kind.map(str::to_string),
        ..Default::default()
    }
}

fn complete_expr(expression: &str, position: u32, kind: Option<&str>) -> CompletionResult {
    let (variables, options) = (deployment_vars(), deployment_options(kind));
    complete(&Source::Expression { expression, variables: &variables, options: &options }, position)
}

fn hover_expr(expression: &str, position: u32) -> HoverResult {
    let (variables, options) = (deployment_vars(), deployment_options(None));
    hover(&Source::Expression { expression, variables: &variables, options: &options }, position)
}

/// Completion at the `|` of `marked`.
fn complete_at(marked: &str) -> CompletionResult {
    let pos = marked.find('|').expect("marker");
    let expr = marked.replace('|', "");
    complete_expr(&expr, expr[..pos].encode_utf16().count() as u32, None)
}

fn labels(r: &CompletionResult, kind: &str) -> Vec<String> {
    r.items.iter().filter(|i| i.kind == kind).map(|i| i.label.clone()).collect()
}

#[test]
fn fields_of_the_schema_with_types_and_descriptions() {
    let r = complete_at("object.spec.|");
    let fields = labels(&r, "field");
    for f in ["replicas", "selector", "template", "strategy", "minReadySeconds", "paused"] {
        assert!(fields.contains(&f.to_string()), "{f} in {fields:?}");
    }
    let replicas = r.items.iter().find(|i| i.label == "replicas").unwrap();
    assert_eq!(replicas.detail, "int");
    assert!(replicas.documentation.contains("desired pods"), "{}", replicas.documentation);
    // The word being typed filters and is the replaced range.
    let r = complete_at("object.spec.rep|");
    assert_eq!(labels(&r, "field"), ["replicas"]);
    assert_eq!((r.from, r.to), (12, 15));
    // Inside a macro: the comprehension variable's element type.
    let r = complete_at("object.spec.template.spec.containers.all(c, c.|)");
    assert!(labels(&r, "field").contains(&"image".to_string()));
    // Nested in an unfinished expression.
    let r = complete_at("object.metadata.name == 'x' && object.spec.template.metadata.|");
    assert!(labels(&r, "field").contains(&"labels".to_string()));
}

#[test]
fn map_keys_methods_and_macros() {
    let r = complete_at("object.metadata.labels.|");
    assert_eq!(labels(&r, "key"), ["app", "tier"]);
    assert!(labels(&r, "macro").contains(&"all".to_string()));
    let r = complete_at("object.metadata.name.|");
    let methods = labels(&r, "method");
    assert!(methods.contains(&"startsWith".to_string()), "{methods:?}");
    assert!(!methods.contains(&"isSorted".to_string()), "list method offered on a string");
    let sw = r.items.iter().find(|i| i.label == "startsWith").unwrap();
    assert_eq!(sw.detail, "string.startsWith(string) -> bool");
}

/// A schema field and the same key of the supplied object are one item: the field's, with its
/// type and description (§6.1); without a schema the key is still offered.
#[test]
fn one_item_per_label_the_schema_field_winning() {
    for marked in ["object.spec.|", "object.metadata.|", "object.spec.rep|"] {
        let r = complete_at(marked);
        let mut seen = std::collections::HashSet::new();
        for i in &r.items {
            assert!(seen.insert(i.label.clone()), "{} twice at {marked}: {:?}", i.label, r.items);
        }
    }
    let r = complete_at("object.spec.|");
    let replicas: Vec<_> = r.items.iter().filter(|i| i.label == "replicas").collect();
    assert_eq!(replicas.len(), 1);
    assert_eq!((replicas[0].kind, replicas[0].detail.as_str()), ("field", "int"));
    assert!(replicas[0].documentation.contains("desired pods"), "{}", replicas[0].documentation);
    let r = complete_at("object.metadata.|");
    let name = r.items.iter().find(|i| i.label == "name").unwrap();
    assert_eq!((name.kind, name.detail.as_str()), ("field", "string"));
    // No schema: the object's keys, as keys.
    let variables = deployment_vars();
    let options = ExpressionOptions::default();
    let e = "object.spec.";
    let r = complete(
        &Source::Expression { expression: e, variables: &variables, options: &options },
        12,
    );
    assert_eq!(labels(&r, "key"), ["replicas"]);
}

/// Keys inside an index string, any spelling (§6.2).
#[test]
fn index_keys() {
    let (mut variables, options) = (deployment_vars(), deployment_options(None));
    variables.insert(
        "object".into(),
        json!({"metadata": {"labels": {"app.kubernetes.io/name": "web", "tier": "a"}}}),
    );
    let e = "object.metadata.labels['app']";
    let source = Source::Expression { expression: e, variables: &variables, options: &options };
    let r = complete(&source, 27);
    let keys: Vec<&str> = r.items.iter().map(|i| i.label.as_str()).collect();
    assert_eq!(keys, ["app.kubernetes.io/name"]);
    assert_eq!((r.from, r.to), (24, 27));
    let r = complete(&source, 24);
    assert_eq!(r.items.len(), 2);
}

#[test]
fn variables_and_functions_in_scope() {
    let r = complete_at("|");
    let vars = labels(&r, "variable");
    for v in ["object", "oldObject", "request", "params", "namespaceObject", "authorizer"] {
        assert!(vars.contains(&v.to_string()), "{v} in {vars:?}");
    }
    assert!(labels(&r, "function").contains(&"size".to_string()));
    assert!(labels(&r, "macro").contains(&"has".to_string()));
    // messageExpression: no authorizer.
    let r = complete_expr("", 0, Some("messageExpression"));
    assert!(!labels(&r, "variable").contains(&"authorizer".to_string()));
}

#[test]
fn hover_types_and_descriptions() {
    let e = "object.spec.replicas > 1";
    let h = hover_expr(e, 14);
    assert_eq!(h.type_name.as_deref(), Some("int"));
    assert_eq!((h.from, h.to), (0, 20));
    assert!(h.documentation.contains("desired pods"));
    let h = hover_expr(e, 2);
    assert_eq!(h.type_name.as_deref(), Some("Deployment"));
    let h = hover_expr("object.metadata.name.startsWith('a')", 24);
    assert_eq!(h.type_name.as_deref(), Some("bool"));
    assert_eq!(h.documentation, "string.startsWith(string) -> bool");
    // Untyped (no kind): dyn.
    let (variables, options) = (Map::new(), ExpressionOptions::default());
    let source =
        Source::Expression { expression: "object.spec", variables: &variables, options: &options };
    assert_eq!(hover(&source, 8).type_name.as_deref(), Some("dyn"));
    // Outside any expression of the manifests: nothing.
    let input = EvaluateInput { manifests: Manifests::Text("a: 1".into()), ..Default::default() };
    assert_eq!(hover(&Source::Manifests(&input), 1).type_name, None);
}

#[test]
fn positions_inside_manifests() {
    let manifests = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: p\nspec:\n  matchConstraints:\n    resourceRules:\n    - apiGroups: [apps]\n      apiVersions: [v1]\n      operations: [CREATE]\n      resources: [deployments]\n  validations:\n  - expression: \"object.spec.repl > 1\"\n";
    let input =
        EvaluateInput { manifests: Manifests::Text(manifests.into()), ..Default::default() };
    let at = manifests.find("repl >").unwrap() + 4;
    let r = complete(&Source::Manifests(&input), at as u32);
    assert_eq!(labels(&r, "field"), ["replicas"]);
    let from = manifests.find("repl >").unwrap() as u32;
    assert_eq!((r.from, r.to), (from, from + 4));
    let h = hover(&Source::Manifests(&input), (at - 6) as u32);
    assert_eq!(h.type_name.as_deref(), Some("Deployment.spec"));
}

#[test]
fn a_long_expression_in_manifests_completes_in_linear_time() {
    // The cursor was mapped by locating each character of the expression from the start of
    // its scalar: quadratic, a 2 MB expression never completed (the native fuzzer's hang); this
    // one, 90,000 characters (CEL's size limit is 100,000 code points), took minutes.
    let manifests = format!(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: p\nspec:\n  matchConstraints:\n    resourceRules:\n    - apiGroups: [apps]\n      apiVersions: [v1]\n      operations: [CREATE]\n      resources: [deployments]\n  validations:\n  - expression: \"'{}' != '' && object.spec.repl > 1\"\n",
        "\\\\\\\\x".repeat(30_000)
    );
    let input =
        EvaluateInput { manifests: Manifests::Text(manifests.clone()), ..Default::default() };
    let at = manifests.find("repl >").unwrap() + 4;
    let r = complete(&Source::Manifests(&input), at as u32);
    assert_eq!(labels(&r, "field"), ["replicas"]);
    let h = hover(&Source::Manifests(&input), (at - 6) as u32);
    assert_eq!(h.type_name.as_deref(), Some("Deployment.spec"));
}

#[test]
fn emoji_and_accents_count_utf16() {
    // 'é' is one UTF-16 unit, '😀' two.
    let r = complete_at("'é😀' == object.metadata.|");
    assert!(labels(&r, "field").contains(&"name".to_string()));
    assert_eq!(r.from, "'é😀' == object.metadata.".encode_utf16().count() as u32);
}

#[test]
fn bad_input_never_panics() {
    for e in [
        "",
        "(",
        "object.",
        "object..",
        "[1, 2].|",
        "'unterminated",
        "a.b.c(",
        "}}}",
        "object.spec.template.spec.containers[0].",
    ] {
        for p in 0..=e.encode_utf16().count() as u32 + 2 {
            let _ = complete_expr(e, p, None);
            let _ = hover_expr(e, p);
        }
    }
}
