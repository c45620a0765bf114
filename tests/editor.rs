//! `complete` and `hover` tables (docs/typechecking-semantics.md §6).

use serde_json::json;
use vap_eval::api::{Document, Manifests, ObjectKind};
use vap_eval::editor::{complete, hover, CompletionResult, EditorInput};

fn deployment_input(expression: &str) -> EditorInput {
    EditorInput {
        expression: Some(expression.to_string()),
        object_kind: Some(ObjectKind { api_version: "apps/v1".into(), kind: "Deployment".into() }),
        object: Some(Document::Object(
            json!({"metadata": {"name": "x", "labels": {"app": "web", "tier": "front"}},
            "spec": {"replicas": 3}}),
        )),
        ..Default::default()
    }
}

/// Completion at the `|` of `marked`.
fn complete_at(marked: &str) -> CompletionResult {
    let pos = marked.find('|').expect("marker");
    let expr = marked.replace('|', "");
    complete(&deployment_input(&expr), expr[..pos].encode_utf16().count() as u32)
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
    let mut input = deployment_input("");
    input.expression_kind = Some("messageExpression".into());
    let r = complete(&input, 0);
    assert!(!labels(&r, "variable").contains(&"authorizer".to_string()));
}

#[test]
fn hover_types_and_descriptions() {
    let input = deployment_input("object.spec.replicas > 1");
    let h = hover(&input, 14);
    assert_eq!(h.type_name.as_deref(), Some("int"));
    assert_eq!((h.from, h.to), (0, 20));
    assert!(h.documentation.contains("desired pods"));
    let h = hover(&input, 2);
    assert_eq!(h.type_name.as_deref(), Some("Deployment"));
    let h = hover(&deployment_input("object.metadata.name.startsWith('a')"), 24);
    assert_eq!(h.type_name.as_deref(), Some("bool"));
    assert_eq!(h.documentation, "string.startsWith(string) -> bool");
    // Untyped (no kind): dyn.
    let h = hover(&EditorInput { expression: Some("object.spec".into()), ..Default::default() }, 8);
    assert_eq!(h.type_name.as_deref(), Some("dyn"));
    // Outside any expression of the manifests: nothing.
    let h = hover(
        &EditorInput { manifests: Some(Manifests::Text("a: 1".into())), ..Default::default() },
        1,
    );
    assert_eq!(h.type_name, None);
}

#[test]
fn positions_inside_manifests() {
    let manifests = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: p\nspec:\n  matchConstraints:\n    resourceRules:\n    - apiGroups: [apps]\n      apiVersions: [v1]\n      operations: [CREATE]\n      resources: [deployments]\n  validations:\n  - expression: \"object.spec.repl > 1\"\n";
    let input =
        EditorInput { manifests: Some(Manifests::Text(manifests.into())), ..Default::default() };
    let at = manifests.find("repl >").unwrap() + 4;
    let r = complete(&input, at as u32);
    assert_eq!(labels(&r, "field"), ["replicas"]);
    let from = manifests.find("repl >").unwrap() as u32;
    assert_eq!((r.from, r.to), (from, from + 4));
    let h = hover(&input, (at - 6) as u32);
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
        let input = deployment_input(e);
        for p in 0..=e.encode_utf16().count() as u32 + 2 {
            let _ = complete(&input, p);
            let _ = hover(&input, p);
        }
    }
}
