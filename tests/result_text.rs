//! The package's result text (`vap_eval_json::ser::to_string`, what `src/wasm.rs` hands to
//! `JSON.parse`) is serde_json's, byte for byte, on every playground example and every pipeline
//! case, and on values with every kind of scalar and escape.

use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests, UnboundPolicies};

fn same<T: serde::Serialize>(label: &str, value: &T) {
    let expected = serde_json::to_string(value).expect("serde_json");
    let got = vap_eval_json::ser::to_string(value).expect("ser");
    assert!(got == expected, "{label}:\n{got}\n!=\n{expected}");
}

#[test]
fn results_are_serde_json_text() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("www/examples");
    let index: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("index.json")).expect("index.json"))
            .expect("json");
    let read = |v: Option<&Value>| {
        v.and_then(Value::as_str).map(|f| fs::read_to_string(dir.join(f)).expect("read"))
    };
    let mut n = 0;
    for ex in index["examples"].as_array().expect("examples") {
        for files in [Some(ex), ex.get("passing"), ex.get("failing")].into_iter().flatten() {
            let file = |k: &str| read(files.get(k).or_else(|| ex.get(k)));
            let input = EvaluateInput {
                manifests: Manifests::Text(file("manifests").unwrap_or_default()),
                object: file("object").map(Document::Text),
                old_object: file("oldObject").map(Document::Text),
                request: file("request").map(Document::Text),
                unbound_policies: Some(UnboundPolicies::Preview),
                ..Default::default()
            };
            same(ex["name"].as_str().unwrap_or_default(), &evaluate(&input));
            n += 1;
        }
    }
    for entry in fs::read_dir(root.join("tests/cases")).expect("cases") {
        let path = entry.expect("entry").path();
        if !path.is_dir() {
            continue;
        }
        let mut input = EvaluateInput::default();
        let mut manifests = Vec::new();
        for f in fs::read_dir(&path).expect("case") {
            let f = f.expect("file").path();
            let text = fs::read_to_string(&f).expect("read");
            match f.file_name().and_then(|n| n.to_str()).unwrap_or_default() {
                "object.yaml" => input.object = Some(Document::Text(text)),
                "oldObject.yaml" => input.old_object = Some(Document::Text(text)),
                "case.yaml" | "expected.json" => {}
                _ => manifests.push(Document::Text(text)),
            }
        }
        input.manifests = Manifests::List(manifests);
        same(&path.display().to_string(), &evaluate(&input));
        n += 1;
    }
    assert!(n > 100, "{n} results");
}

#[test]
fn scalars_escapes_and_keys_are_serde_json_text() {
    let v = json!({
        "s": "quote \" backslash \\ controls \u{0} \u{8} \t \n \u{c} \r \u{1f} del \u{7f} é 😀",
        "n": [0, 1, -1, u64::MAX, i64::MIN, 0.5, -0.0, 1e300, 2.5e-8, 123456789.0],
        "b": [true, false, null], "e": {}, "a": [], "nested": [{"k": [{}]}],
        "\"key\"\n": 1
    });
    same("value", &v);
    let mut m = std::collections::BTreeMap::new();
    m.insert(3u32, "x");
    m.insert(10u32, "y");
    same("integer keys", &m);
    same("option", &(Some(1.5f32), None::<u8>, 'c', "t", ()));
    #[derive(serde::Serialize)]
    enum E {
        Unit,
        New(u8),
        Tuple(u8, i8),
        Struct { a: bool },
    }
    same("enums", &[E::Unit, E::New(1), E::Tuple(2, -3), E::Struct { a: true }]);
}
