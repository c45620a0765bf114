//! wasm-bindgen tests of the exports in `src/wasm.rs`, called with JS values as JavaScript calls
//! them. No `wasm_bindgen_test_configure!`: the same tests run in Node (default) and in a
//! headless browser when `WASM_BINDGEN_USE_BROWSER=1` is set for the test runner.
#![cfg(target_arch = "wasm32")]

use serde_json::{json, Value};
use vap_eval::wasm;
use wasm_bindgen::{JsError, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

const POLICY: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-replicas.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    message: "at most 5 replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-replicas-binding.example.com
spec:
  policyName: max-replicas.example.com
  validationActions: ["Deny"]
---
apiVersion: v1
kind: Namespace
metadata:
  name: default
"#;

fn js(v: Value) -> JsValue {
    js_sys::JSON::parse(&v.to_string()).unwrap()
}

fn rust(v: Result<JsValue, JsError>) -> Value {
    let v = v.map_err(error_message).unwrap();
    serde_json::from_str(&String::from(js_sys::JSON::stringify(&v).unwrap())).unwrap()
}

fn error_message(e: JsError) -> String {
    let e = js_sys::Error::from(JsValue::from(e));
    String::from(e.message())
}

fn deployment(replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": replicas},
    })
}

/// The built-in schemas, registered as the package's users do (`loadSchemas`): the wasm does not
/// embed them (without them, an info diagnostic `schemas-not-loaded` says so).
fn load_schemas() {
    for (version, text) in [
        ("1.33", include_str!("../data/schemas/1.33.json")),
        ("1.35", include_str!("../data/schemas/1.35.json")),
    ] {
        wasm::load_schemas(version, text).map_err(error_message).unwrap();
    }
}

#[wasm_bindgen_test]
fn version_and_supported_versions() {
    assert_eq!(wasm::version(), env!("CARGO_PKG_VERSION"));
    let versions = wasm::supported_versions();
    assert_eq!(versions.first().map(String::as_str), Some("1.30"));
    assert_eq!(versions.last().map(String::as_str), Some("1.37"));
}

#[wasm_bindgen_test]
fn evaluate_denies_and_admits() {
    load_schemas();
    let r = rust(wasm::evaluate(js(json!({"manifests": POLICY, "object": deployment(9)}))));
    assert_eq!(r["response"]["allowed"], json!(false));
    assert_eq!(r["response"]["status"]["code"], json!(422));
    assert_eq!(
        r["response"]["status"]["details"]["causes"][0]["message"],
        json!("ValidatingAdmissionPolicy 'max-replicas.example.com' with binding 'max-replicas-binding.example.com' denied request: at most 5 replicas")
    );
    let severities: Vec<&Value> =
        r["diagnostics"].as_array().unwrap().iter().map(|d| &d["severity"]).collect();
    assert_eq!(severities, [&json!("info")]); // the operation was derived
                                              // The input as YAML text.
    let text = format!(
        "manifests: {}\nobject: {}\n",
        serde_json::to_string(POLICY).unwrap(),
        deployment(1)
    );
    let r = rust(wasm::evaluate(JsValue::from_str(&text)));
    assert_eq!(r["response"]["allowed"], json!(true));
    assert_eq!(r["kubernetesVersion"], json!("1.37"));
}

#[wasm_bindgen_test]
fn policy_set_is_reused() {
    load_schemas();
    let set =
        wasm::JsPolicySet::new(JsValue::from_str(POLICY), js(json!({"kubernetesVersion": "1.33"})))
            .map_err(error_message)
            .unwrap();
    assert_eq!(set.kubernetes_version(), "1.33");
    assert_eq!(rust(set.diagnostics()), json!([]));
    let allowed: Vec<Value> = (3..8)
        .map(|n| {
            rust(set.evaluate(js(json!({"object": deployment(n)}))))["response"]["allowed"].clone()
        })
        .collect();
    assert_eq!(allowed, [true, true, true, false, false].map(Value::from));
}

/// What a call makes is freed by its end, or made outside the per-call arena when it is kept
/// (caches of quantities, regexps, the result builder's names): a block kept from the arena
/// would keep its chunk from being reused. Quantities to make canonical, a regexp, a denial.
#[wasm_bindgen_test]
fn a_call_leaves_no_block_in_the_arena() {
    load_schemas();
    let policy = POLICY.replace(
        "object.spec.replicas <= 5",
        "object.spec.replicas <= 5 && object.metadata.name.matches('^[a-z0-9-]+$') && object.spec.template.spec.containers.all(c, c.name.find('[0-9]+') == '' && c.image.matches(c.name + ':[0-9]'))",
    );
    let set = wasm::JsPolicySet::new(JsValue::from_str(&policy), JsValue::UNDEFINED)
        .map_err(error_message)
        .unwrap();
    for (n, cpu) in [(3, "0.5"), (7, "1500m"), (2, "250m")] {
        let mut object = deployment(n);
        object["spec"]["template"] = json!({"spec": {"containers": [{
            "name": "app", "image": "registry.example.com/app:1",
            "resources": {"limits": {"cpu": cpu, "memory": "0.5Gi"}, "requests": {"cpu": "100m"}},
        }]}});
        let text = serde_json::to_string(&object).unwrap();
        let r = rust(set.evaluate(js(json!({ "object": text }))));
        assert_eq!(r["response"]["allowed"], json!(n <= 5), "{r}");
        assert_eq!(vap_eval::arena_live(), 0, "blocks of the arena live after a call");
        let r = rust(wasm::evaluate(js(json!({"manifests": policy, "object": object}))));
        assert_eq!(r["response"]["allowed"], json!(n <= 5), "{r}");
        assert_eq!(vap_eval::arena_live(), 0, "blocks of the arena live after evaluate()");
    }
}

#[wasm_bindgen_test]
fn utf16_positions_of_an_expression_error() {
    // "é" is 1 UTF-16 unit (2 UTF-8 bytes), "😀" 2 units (4 bytes).
    let expr = "\"é😀\" == \"x\" ||\n  1 + \"a\" == 2";
    let r =
        rust(wasm::evaluate_expression(JsValue::from_str(expr), JsValue::NULL, JsValue::UNDEFINED));
    let d = &r["diagnostics"][0];
    assert_eq!(d["code"], json!("cel-compile"));
    let at = |k: &str| d[k].as_u64().unwrap();
    assert_eq!([at("start"), at("end"), at("line"), at("column")], [18, 25, 2, 3]);
    let units: Vec<u16> = expr.encode_utf16().collect();
    assert_eq!(String::from_utf16_lossy(&units[18..25]), "1 + \"a\"");
}

#[wasm_bindgen_test]
fn malformed_input_throws_and_the_instance_keeps_working() {
    let bad = [
        wasm::evaluate(JsValue::NULL),
        wasm::evaluate(JsValue::from_f64(1.0)),
        wasm::evaluate(JsValue::from_str("a: [")),
        wasm::evaluate(js(json!({"manifests": 1}))),
        wasm::evaluate(js(json!({"manifests": "", "extra": 1}))),
        wasm::typecheck(js(json!([]))),
        wasm::evaluate_expression(JsValue::TRUE, JsValue::NULL, JsValue::NULL),
        wasm::evaluate_expression(JsValue::from_str("1"), JsValue::from_str("x"), JsValue::NULL),
    ];
    let messages: Vec<String> = bad.into_iter().map(|r| error_message(r.unwrap_err())).collect();
    assert_eq!(messages[0], "evaluate(input): expected an object or its YAML/JSON text, got null");
    assert_eq!(
        messages[3],
        "evaluate(input).manifests: invalid type: integer `1`, expected YAML/JSON text or a list of texts and objects"
    );
    assert!(messages[4].starts_with("evaluate(input).extra: unknown field `extra`"));
    assert_eq!(messages[6], "evaluateExpression(expression): expected a string, got boolean");
    let r = rust(wasm::evaluate(js(json!({"manifests": POLICY, "object": deployment(6)}))));
    assert_eq!(r["response"]["allowed"], json!(false));
}

#[wasm_bindgen_test]
fn ten_thousand_deep_inputs_are_diagnostics() {
    let n = 10_000;
    let cases = [
        (vec!["1"; n].join(" + ") + " == 1", "max recursion depth exceeded"),
        ("(".repeat(n) + "true" + &")".repeat(n), "expression recursion limit exceeded: 250"),
        (
            "[".repeat(n) + "1" + &"]".repeat(n) + " == []",
            "expression recursion limit exceeded: 250",
        ),
    ];
    for (expr, message) in cases {
        let r = rust(wasm::evaluate_expression(
            JsValue::from_str(&expr),
            JsValue::UNDEFINED,
            JsValue::UNDEFINED,
        ));
        assert_eq!(r["diagnostics"][0]["message"], json!(message));
    }
    let deep = "[".repeat(n) + &"]".repeat(n);
    let r = rust(wasm::evaluate(js(json!({"manifests": deep, "object": deep}))));
    assert!(r["diagnostics"][0]["message"].as_str().unwrap().contains("recursion limit exceeded"));
}
