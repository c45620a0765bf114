//! The schema → CEL type conversion (docs/typechecking-semantics.md §2), case by case.

use super::*;
use serde_json::json;

fn convert(root: Value, defs: Value) -> DeclTypes {
    let bundle = SchemaBundle {
        kinds: Map::new(),
        definitions: defs.as_object().cloned().unwrap_or_default(),
    };
    decl_types(&root, &bundle, "T")
}

fn field(d: &DeclTypes, object: &str, name: &str) -> Option<Type> {
    d.object(object)?.field(name).cloned()
}

/// apiserver `escaping_test.go`: reserved words, `__`, `.`, `-`, `/`, inaccessible names.
#[test]
fn escaping() {
    for (name, want) in [
        ("foo", Some("foo")),
        ("namespace", Some("__namespace__")),
        ("if", Some("__if__")),
        ("x-prop", Some("x__dash__prop")),
        ("redact__d", Some("redact__underscores__d")),
        ("a.b/c", Some("a__dot__b__slash__c")),
        ("_under", Some("_under")),
        ("1st", None),
        ("", None),
        ("a b", None),
        ("ünï", None),
    ] {
        assert_eq!(escape(name).as_deref(), want, "{name}");
    }
}

/// SchemaDeclType: scalars, formats, int-or-string → dyn, type-less (Quantity) dropped,
/// arrays, maps, and a resource root gaining kind/apiVersion/metadata.
#[test]
fn scalar_formats_and_dropped_fields() {
    let d = convert(
        json!({"type": "object", "properties": {
            "s": {"type": "string"}, "i": {"type": "integer", "format": "int32"},
            "n": {"type": "number"}, "b": {"type": "boolean"},
            "t": {"type": "string", "format": "date-time"}, "d": {"type": "string", "format": "date"},
            "dur": {"type": "string", "format": "duration"}, "by": {"type": "string", "format": "byte"},
            "ios": {"$ref": "IntOrString"}, "ios2": {"x-kubernetes-int-or-string": true},
            "q": {"$ref": "Quantity"},
            "limits": {"type": "object", "additionalProperties": {"$ref": "Quantity"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "list": {"type": "array", "items": {"type": "integer"}},
            "noitems": {"type": "array"},
            "namespace": {"type": "string"},
        }}),
        json!({"IntOrString": {"format": "int-or-string"}, "Quantity": {}}),
    );
    assert_eq!(d.root, Some(Type::object("T")));
    let f = |n| field(&d, "T", n);
    assert_eq!(f("s"), Some(Type::String));
    assert_eq!(f("i"), Some(Type::Int));
    assert_eq!(f("n"), Some(Type::Double));
    assert_eq!(f("b"), Some(Type::Bool));
    assert_eq!(f("t"), Some(Type::Timestamp));
    assert_eq!(f("d"), Some(Type::Timestamp));
    assert_eq!(f("dur"), Some(Type::Duration));
    assert_eq!(f("by"), Some(Type::Bytes));
    assert_eq!(f("ios"), Some(Type::Dyn));
    assert_eq!(f("ios2"), Some(Type::Dyn));
    assert_eq!(f("q"), None, "Quantity has no type: dropped");
    assert_eq!(f("limits"), None, "a map of Quantity is dropped with it");
    assert_eq!(f("labels"), Some(Type::map(Type::String, Type::String)));
    assert_eq!(f("list"), Some(Type::list(Type::Int)));
    assert_eq!(f("noitems"), None);
    assert_eq!(f("namespace"), None);
    assert_eq!(f("__namespace__"), Some(Type::String));
    // Resource root: kind, apiVersion and metadata{name, generateName} are added.
    assert_eq!(f("kind"), Some(Type::String));
    assert_eq!(f("apiVersion"), Some(Type::String));
    assert_eq!(f("metadata"), Some(Type::object("T.metadata")));
    let meta = d.object("T.metadata").unwrap();
    let names: Vec<&str> = meta.fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["generateName", "name"]);
}

/// Type names follow `MaybeAssignTypeName`: `.field`, `.@idx`, `.@elem`; a circular reference is
/// an empty object (`PopulateRefs`); an embedded resource is a resource root.
#[test]
fn names_cycles_and_embedded() {
    let d = convert(
        json!({"$ref": "Root"}),
        json!({
            "Root": {"type": "object", "properties": {
                "kind": {"type": "string"}, "apiVersion": {"type": "string"},
                "metadata": {"$ref": "Meta"},
                "items": {"type": "array", "items": {"$ref": "Item"}},
                "byName": {"type": "object", "additionalProperties": {"$ref": "Item"}},
                "self": {"$ref": "Root"},
                "raw": {"type": "object", "x-kubernetes-embedded-resource": true,
                         "x-kubernetes-preserve-unknown-fields": true},
            }},
            "Meta": {"type": "object", "properties": {"name": {"type": "string"},
                     "generateName": {"type": "string"}, "labels": {"type": "object",
                     "additionalProperties": {"type": "string"}}}},
            "Item": {"type": "object", "properties": {"x": {"type": "integer"}}},
        }),
    );
    assert_eq!(field(&d, "T", "items"), Some(Type::list(Type::object("T.items.@idx"))));
    assert_eq!(
        field(&d, "T", "byName"),
        Some(Type::map(Type::String, Type::object("T.byName.@elem")))
    );
    assert_eq!(field(&d, "T.items.@idx", "x"), Some(Type::Int));
    // The root already has typed kind/apiVersion/metadata: metadata keeps all its fields.
    assert!(field(&d, "T.metadata", "labels").is_some());
    // Circular: Root → self → Root is an empty object.
    assert_eq!(field(&d, "T", "self"), Some(Type::object("T.self")));
    assert!(d.object("T.self").unwrap().fields.is_empty());
    // Embedded resource without properties: gains kind, apiVersion, metadata.
    let raw = d.object("T.raw").unwrap();
    let names: Vec<&str> = raw.fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["apiVersion", "kind", "metadata"]);
    assert_eq!(d.origin("T.items.@idx").map(|o| o.0), Some("Item"));
    assert_eq!(d.origin("T.metadata").map(|o| o.0), Some("Meta"));
}

/// A schema with no CEL type, or an unresolvable reference, has no root type.
#[test]
fn untyped_roots() {
    assert_eq!(convert(json!({"$ref": "Missing"}), json!({})).root, None);
    assert_eq!(convert(json!({"type": "array"}), json!({})).root, None);
}

#[test]
fn bundle_parse_errors() {
    assert!(SchemaBundle::parse("[]").is_err());
    assert!(SchemaBundle::parse("{\"kinds\": 3}").is_err());
    assert!(SchemaBundle::parse("{").is_err());
    let b = SchemaBundle::parse(r#"{"kinds": {"v1/Pod": "P"}, "definitions": {"P": {}}}"#).unwrap();
    assert_eq!(b.kind("v1/Pod"), Some(json!({"$ref": "P"})));
    assert!(b.definition("#/components/schemas/P").is_some());
}

/// A bundle that is not JSON is reported with serde_json's message and location (the text is
/// read by `vap_eval_json::from_str`, serde_json's text parser is not in the wasm module).
#[test]
fn bundle_syntax_errors_are_located() {
    assert_eq!(
        SchemaBundle::parse("{").unwrap_err(),
        "schema bundle: EOF while parsing an object at line 1 column 1"
    );
    assert_eq!(
        SchemaBundle::parse("{\"kinds\": {},\n \"definitions\": {\"a\": [1,]}}").unwrap_err(),
        "schema bundle: trailing comma at line 2 column 26"
    );
    assert_eq!(
        register_descriptions("1.0", "[] x").unwrap_err(),
        "schema descriptions: trailing characters at line 1 column 4"
    );
    assert_eq!(SchemaBundle::parse("[]").unwrap_err(), "schema bundle: expected an object");
}
