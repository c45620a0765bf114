//! The package's results are what `JSON.parse` makes of serde_json's text, on every playground
//! example and every pipeline case, and on values with every kind of scalar and escape: the
//! text writer (`vap_eval_json::ser::to_string`) writes serde_json's text byte for byte, and
//! the program `src/wasm.rs` hands to its JS builder (`vap_eval_json::ser::js`), read here as
//! the builder reads it, gives the value of that text with JavaScript's numbers (doubles) and
//! `JSON.parse`'s rule for a repeated name (the first position, the last value).

use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests, UnboundPolicies};

fn same<T: serde::Serialize>(label: &str, value: &T) {
    let expected = serde_json::to_string(value).expect("serde_json");
    let got = vap_eval_json::ser::to_string(value).expect("ser");
    assert!(got == expected, "{label}:\n{got}\n!=\n{expected}");
    let parsed = as_js(vap_eval_json::from_str(&expected).expect("parse"));
    let built = built(value);
    let (built, parsed) = (built.to_string(), parsed.to_string());
    assert!(built == parsed, "{label}, built:\n{built}\n!=\n{parsed}");
}

/// A JSON value with every number a double, as `JSON.parse` reads its digits.
fn as_js(v: Value) -> Value {
    match v {
        Value::Number(n) => {
            n.to_string().parse().ok().and_then(serde_json::Number::from_f64).into()
        }
        Value::Array(a) => Value::Array(a.into_iter().map(as_js).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, as_js(v))).collect()),
        v => v,
    }
}

/// What the JS builder (`vap_build` in `src/wasm.rs`) makes of `value`'s program. The table of
/// names (struct field names and map keys) is kept across the calls of a test, as the package
/// keeps it across calls: a program uses the names earlier programs defined.
fn built<T: serde::Serialize>(value: &T) -> Value {
    thread_local! {
        static TABLE: std::cell::RefCell<Option<(vap_eval_json::ser::js::Names, Vec<Option<String>>)>> =
            const { std::cell::RefCell::new(None) };
    }
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        let (names, js) = t.get_or_insert_with(Default::default);
        built_with(names, js, value)
    })
}

fn built_with<T: serde::Serialize>(
    table: &mut vap_eval_json::ser::js::Names,
    js_names: &mut Vec<Option<String>>,
    value: &T,
) -> Value {
    use vap_eval_json::ser::js::*;
    struct Reader<'a> {
        ops: &'a [u32],
        nums: &'a [f64],
        text: Vec<u16>,
        i: usize,
        c: usize,
        k: usize,
        names: &'a mut Vec<Option<String>>,
    }
    impl Reader<'_> {
        fn next(&mut self) -> u32 {
            self.i += 1;
            self.ops[self.i - 1]
        }
        fn str(&mut self, n: usize) -> String {
            self.c += n;
            String::from_utf16(&self.text[self.c - n..self.c]).expect("UTF-16")
        }
        fn value(&mut self) -> Value {
            let op = self.next();
            let a = (op >> 3) as usize;
            match op & 7 {
                STR => Value::String(self.str(a)),
                INT => (a as f64).into(),
                NUM => {
                    self.k += 1;
                    self.nums[self.k - 1].into()
                }
                LIT => [Value::Null, false.into(), true.into()][a].clone(),
                ARR => {
                    let mut r = Vec::new();
                    while self.ops[self.i] != END {
                        r.push(self.value());
                    }
                    self.i += 1;
                    Value::Array(r)
                }
                OBJ => {
                    let mut r = serde_json::Map::new();
                    loop {
                        let op = self.next();
                        let b = (op >> 3) as usize;
                        let key = match op & 7 {
                            _ if op == END => break,
                            KEY => {
                                if b & 1 == 1 {
                                    let n = self.next() as usize;
                                    let name = self.str(n);
                                    if self.names.len() <= b >> 1 {
                                        self.names.resize((b >> 1) + 1, None);
                                    }
                                    self.names[b >> 1] = Some(name);
                                }
                                self.names[b >> 1].clone().expect("a defined name")
                            }
                            KEYS => self.str(b),
                            _ => panic!("not a key op: {op}"),
                        };
                        // A repeated name keeps its first position and takes the last value.
                        let v = self.value();
                        r.insert(key, v);
                    }
                    Value::Object(r)
                }
                _ => panic!("not a value op: {op}"),
            }
        }
    }
    let mut p = Program::new(table);
    p.value(value).expect("program");
    let text = String::from_utf8(p.text.clone()).expect("UTF-8").encode_utf16().collect();
    let mut r = Reader { ops: &p.ops, nums: &p.nums, text, i: 0, c: 0, k: 0, names: js_names };
    let v = r.value();
    assert_eq!((r.i, r.c, r.k), (p.ops.len(), r.text.len(), p.nums.len()), "all read");
    p.built();
    v
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
    // Again: its field names and map keys are in the table now.
    same("value, again", &v);
    let mut m = std::collections::BTreeMap::new();
    m.insert(3u32, "x");
    m.insert(10u32, "y");
    same("integer keys", &m);
    same("option", &(Some(1.5f32), None::<u8>, 'c', "t", ()));
    same("f32", &[0.1f32, 1e-45, 3.4e38, -0.0, f32::NAN, f32::INFINITY]);
    same("large", &(u128::MAX, i128::MIN, 1u64 << 29, (1u64 << 29) - 1, u64::MAX - 1, -1i8));
    same("bytes", &serde_bytes_like(&[0, 1, 255]));
    #[derive(serde::Serialize)]
    enum E {
        Unit,
        New(u8),
        Tuple(u8, i8),
        Struct { a: bool },
    }
    same("enums", &[E::Unit, E::New(1), E::Tuple(2, -3), E::Struct { a: true }]);
}

/// `serialize_bytes` (serde_json writes an array of numbers).
fn serde_bytes_like(b: &[u8]) -> impl serde::Serialize + '_ {
    struct B<'a>(&'a [u8]);
    impl serde::Serialize for B<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }
    B(b)
}
