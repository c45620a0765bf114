//! Bench-only wasm exports (cargo feature `bench`; not in the shipped package): the standard
//! benchmark's workload ([`crate::bench`]) driven from JavaScript, which does the timing.
//! `bench/run.mjs` builds a package with this feature into `bench/.out/pkg-bench/`.
#![cfg(all(target_arch = "wasm32", feature = "bench"))]

use crate::bench::Workload;
use serde_json::Value as Json;
use wasm_bindgen::prelude::*;

/// The 14 expressions compiled once; the object parsed once for `evalAll`, or per call in
/// `endToEnd` (JSON text in, parsed inside wasm).
#[wasm_bindgen]
pub struct Bench {
    workload: Workload,
    object: Json,
    out: Vec<u8>,
}

#[wasm_bindgen]
impl Bench {
    /// `expressions_json`: the text of `expressions.json` (`[{id, expr, expect}]`).
    #[wasm_bindgen(constructor)]
    pub fn new(expressions_json: &str) -> Result<Bench, JsError> {
        let exprs = Workload::expressions_of(expressions_json).map_err(|e| JsError::new(&e))?;
        let workload = Workload::new(&exprs).map_err(|e| JsError::new(&e))?;
        Ok(Bench { workload, object: Json::Null, out: Vec::new() })
    }

    /// Compile all expressions again; returns how many compiled.
    #[wasm_bindgen(js_name = compileAll)]
    pub fn compile_all(&self) -> u32 {
        self.workload.compile_all() as u32
    }

    /// Parse the object for `evalAll` (not timed).
    #[wasm_bindgen(js_name = setObject)]
    pub fn set_object(&mut self, text: &str) -> Result<(), JsError> {
        self.object = crate::bench::parse_json(text).map_err(|e| JsError::new(&e))?;
        Ok(())
    }

    /// Evaluate the 14 on the parsed object: one code per expression (0 false, 1 true, 2 other
    /// value, 3 error).
    #[wasm_bindgen(js_name = evalAll)]
    pub fn eval_all(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.out);
        self.workload.eval_into(&self.object, &mut out);
        let codes = out.clone();
        self.out = out;
        codes
    }

    /// Evaluate expression `i` alone on the parsed object.
    #[wasm_bindgen(js_name = evalOne)]
    pub fn eval_one(&self, i: usize) -> u8 {
        self.workload.eval_one(i, &self.object)
    }

    /// End to end: the JSON text crosses into wasm, is parsed there, and the 14 are evaluated.
    #[wasm_bindgen(js_name = endToEnd)]
    pub fn end_to_end(&mut self, text: &str) -> Result<Vec<u8>, JsError> {
        let mut out = std::mem::take(&mut self.out);
        self.workload.end_to_end(text, &mut out).map_err(|e| JsError::new(&e))?;
        let codes = out.clone();
        self.out = out;
        Ok(codes)
    }

    /// The results on the parsed object as a JSON list (for verification).
    #[wasm_bindgen(js_name = resultsJson)]
    pub fn results_json(&self) -> String {
        Json::Array(self.workload.results(&self.object)).to_string()
    }
}

/// The benchmark policy (5 validations, a messageExpression) as YAML.
#[wasm_bindgen(js_name = benchPolicyYaml)]
pub fn bench_policy_yaml() -> String {
    crate::bench::POLICY_YAML.to_string()
}

/// `api::evaluate_expression` with no variables: the value as JSON, or `{"error": message}`
/// (bench/tz-check.mjs compares it with the native build).
#[wasm_bindgen(js_name = benchEvaluateExpression)]
pub fn bench_evaluate_expression(expression: &str) -> String {
    let opts = crate::api::ExpressionOptions::default();
    let r = crate::api::evaluate_expression(expression, &serde_json::Map::new(), &opts);
    match r.value {
        Some(v) => v.to_string(),
        None => serde_json::json!({ "error": r.diagnostics.first().map(|d| d.message.clone()) })
            .to_string(),
    }
}

/// The policy holding the benchmark's expressions as validations (`expressions_json`: the text
/// of `expressions.json`), for the user-path figures through the shipped package's `PolicySet`.
#[wasm_bindgen(js_name = benchPolicyYamlFor)]
pub fn bench_policy_yaml_for(expressions_json: &str) -> Result<String, JsError> {
    let exprs = Workload::expressions_of(expressions_json).map_err(|e| JsError::new(&e))?;
    Ok(crate::bench::policy_yaml_for(&exprs))
}

/// The user path split into stages (bench/README.md's breakdown): the same policy set as
/// `PolicySet`, each stage timed by JavaScript.
#[wasm_bindgen]
pub struct PolicyBench {
    workload: crate::bench::PolicyWorkload,
    object: Json,
    last: Option<crate::api::EvaluateResult>,
}

#[wasm_bindgen]
impl PolicyBench {
    #[wasm_bindgen(constructor)]
    pub fn new(expressions_json: &str, object_text: &str) -> Result<PolicyBench, JsError> {
        let exprs = Workload::expressions_of(expressions_json).map_err(|e| JsError::new(&e))?;
        let object = crate::bench::parse_json(object_text).map_err(|e| JsError::new(&e))?;
        let workload = crate::bench::PolicyWorkload::new(&exprs);
        Ok(PolicyBench { workload, object, last: None })
    }

    /// `api::evaluate_with` on the object text (no conversion to JS); the validations evaluated.
    #[wasm_bindgen(js_name = evaluateText)]
    pub fn evaluate_text(&mut self, text: &str) -> u32 {
        let r = self.workload.evaluate_text(text);
        let n = crate::bench::PolicyWorkload::summary(&r).1 as u32;
        self.last = Some(r);
        n
    }

    /// `api::evaluate_with` on the object parsed once (no conversion to JS).
    #[wasm_bindgen(js_name = evaluateParsed)]
    pub fn evaluate_parsed(&self) -> u32 {
        let r = self.workload.evaluate_object(&self.object);
        crate::bench::PolicyWorkload::summary(&r).1 as u32
    }

    /// The object text through the YAML-with-positions loader.
    #[wasm_bindgen(js_name = parsePositions)]
    pub fn parse_positions(&self, text: &str) -> u32 {
        crate::bench::PolicyWorkload::parse_positions(text) as u32
    }

    /// The object text as `Document::parse` reads it.
    #[wasm_bindgen(js_name = parseDocument)]
    pub fn parse_document(&self, text: &str) -> bool {
        crate::bench::PolicyWorkload::parse_document(text)
    }

    /// The text through serde_json alone.
    #[wasm_bindgen(js_name = parseJson)]
    pub fn parse_json(&self, text: &str) -> bool {
        crate::bench::parse_json_serde(text).is_ok()
    }

    /// A copy of the parsed object normalised (`objects::normalize_json` with `text`, the
    /// object's text); the number of changes.
    #[wasm_bindgen(js_name = normalizeObject)]
    pub fn normalize_object(&self, text: &str) -> u32 {
        self.workload.normalize(&self.object, text) as u32
    }

    /// A deep copy of the parsed object.
    #[wasm_bindgen(js_name = cloneObject)]
    pub fn clone_object(&self) -> bool {
        std::hint::black_box(self.object.clone()).is_object()
    }

    /// The last result of `evaluateText` serialised to JSON text; its length.
    #[wasm_bindgen(js_name = serializeLast)]
    pub fn serialize_last(&self) -> u32 {
        self.last.as_ref().map_or(0, crate::bench::PolicyWorkload::serialize) as u32
    }
}
