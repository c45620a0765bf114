//! The standard benchmark's workload (`shared/bench`: a Deployment and 14 VAP expressions), one
//! implementation for both the native example (`examples/vap_bench.rs`) and the bench-only wasm
//! export (`src/wasm_bench.rs`), so both measure exactly the same code path. Compiled only with
//! the cargo feature `bench`: the shipped package does not contain it.
//!
//! Expressions compile as a VAP validation does at evaluation time: [`CelCompiler`] with the
//! StoredExpressions environment of the default (newest) Kubernetes version, every Kubernetes
//! library declared, `variables` declared (the runtime compiler always declares it).

use crate::admission::compile::CelCompiler;
use crate::cel::compile::Compiled;
use crate::cel::runtime::{Bindings, CostTracker};
use crate::cel::value::Value;
use crate::environment::{var, EnvironmentMode, ExpressionKind, KubeVersion, VariableScope};
use serde_json::Value as Json;

/// Result codes of the fast paths (one byte per expression).
pub const FALSE: u8 = 0;
pub const TRUE: u8 = 1;
/// A value that is not a bool.
pub const OTHER: u8 = 2;
/// An evaluation error.
pub const ERROR: u8 = 3;

/// JSON text to a document, as the request path reads an object's text: the one-pass reader
/// ([`crate::admission::yaml::parse_json_object`]), and serde_json for what it declines.
pub fn parse_json(text: &str) -> Result<Json, String> {
    crate::admission::yaml::parse_json_object(text).map_or_else(|| parse_json_serde(text), Ok)
}

/// JSON text to a document through serde_json alone (`FromStr`, which is not generic, so
/// serde_json's deserializer is compiled in serde_json rather than instantiated in this crate;
/// the same function `serde_json::from_str` calls).
pub fn parse_json_serde(text: &str) -> Result<Json, String> {
    text.parse::<Json>().map_err(|e| e.to_string())
}

/// The compiled expressions of the benchmark.
pub struct Workload {
    compiler: CelCompiler,
    scope: VariableScope,
    sources: Vec<String>,
    programs: Vec<Compiled>,
}

impl Workload {
    /// Compile `expressions`; an expression that does not compile is an error naming it.
    pub fn new(expressions: &[String]) -> Result<Self, String> {
        let compiler = CelCompiler::new(KubeVersion::default(), EnvironmentMode::StoredExpressions);
        let scope =
            VariableScope { has_params: false, variables: Some(Vec::new()), ..Default::default() };
        let mut programs = Vec::with_capacity(expressions.len());
        for e in expressions {
            let c = compiler.compile(e, ExpressionKind::Validation, &scope);
            if let Some(err) = &c.error {
                return Err(format!("{e}: {err}"));
            }
            programs.push(c);
        }
        Ok(Workload { compiler, scope, sources: expressions.to_vec(), programs })
    }

    /// The expressions of a `shared/bench/expressions.json` text (`[{id, expr, expect}]`).
    pub fn expressions_of(json: &str) -> Result<Vec<String>, String> {
        let list: Json = serde_json::from_str(json).map_err(|e| e.to_string())?;
        list.as_array()
            .ok_or("expressions.json: not a list")?
            .iter()
            .map(|c| c["expr"].as_str().map(str::to_string).ok_or_else(|| "no expr".to_string()))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.programs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.programs.is_empty()
    }

    /// Compile every expression again (parse, check, plan); returns how many compiled.
    pub fn compile_all(&self) -> usize {
        self.sources
            .iter()
            .map(|e| self.compiler.compile(e, ExpressionKind::Validation, &self.scope))
            .filter(|c| c.program.is_some())
            .count()
    }

    /// Evaluate the 14 on a parsed object, one code per expression into `out`.
    pub fn eval_into(&self, object: &Json, out: &mut Vec<u8>) {
        out.clear();
        let act = Bindings::new().with(var::OBJECT, Value::from_json(object));
        for c in &self.programs {
            let Some(p) = &c.program else {
                out.push(ERROR);
                continue;
            };
            let mut cost = CostTracker::default();
            out.push(match p.eval(&act, &mut cost) {
                Ok(Value::Bool(false)) => FALSE,
                Ok(Value::Bool(true)) => TRUE,
                Ok(_) => OTHER,
                Err(_) => ERROR,
            });
        }
    }

    /// Evaluate expression `i` alone on a parsed object (per-expression timings).
    pub fn eval_one(&self, i: usize, object: &Json) -> u8 {
        let act = Bindings::new().with(var::OBJECT, Value::from_json(object));
        let Some(p) = &self.programs[i].program else { return ERROR };
        match p.eval(&act, &mut CostTracker::default()) {
            Ok(Value::Bool(false)) => FALSE,
            Ok(Value::Bool(true)) => TRUE,
            Ok(_) => OTHER,
            Err(_) => ERROR,
        }
    }

    /// End to end: JSON text → parsed document → the 14 codes.
    pub fn end_to_end(&self, text: &str, out: &mut Vec<u8>) -> Result<(), String> {
        let object = parse_json(text)?;
        self.eval_into(&object, out);
        Ok(())
    }

    /// The 14 results as JSON values (`{"error": …}` for an error), for verification.
    pub fn results(&self, object: &Json) -> Vec<Json> {
        let act = Bindings::new().with(var::OBJECT, Value::from_json(object));
        self.programs
            .iter()
            .map(|c| match &c.program {
                None => serde_json::json!({ "error": c.error }),
                Some(p) => match p.eval(&act, &mut CostTracker::default()) {
                    Ok(v) => v.to_json(),
                    Err(e) => serde_json::json!({ "error": e.message }),
                },
            })
            .collect()
    }
}

/// The policy of the per-request `evaluate` figure: 5 validations on the benchmark Deployment,
/// one with a messageExpression, bound with Deny. All pass on the benchmark object.
pub const POLICY_YAML: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: bench.example.com
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    messageExpression: "'spec.replicas is ' + string(object.spec.replicas) + ', the limit is 5'"
  - expression: "object.spec.template.spec.containers.all(c, c.image.startsWith('registry.example.com/'))"
    message: "images must come from registry.example.com"
  - expression: "has(object.metadata.labels) && 'app' in object.metadata.labels"
    message: "the app label is required"
  - expression: "object.spec.template.spec.containers.filter(c, !has(c.resources) || !has(c.resources.limits) || !('memory' in c.resources.limits)).size() == 0"
    message: "every container needs a memory limit"
  - expression: "object.spec.template.spec.containers.all(c, object.spec.template.spec.containers.exists_one(d, d.name == c.name))"
    message: "container names must be unique"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: bench-binding.example.com
spec:
  policyName: bench.example.com
  validationActions: ["Deny"]
---
apiVersion: v1
kind: Namespace
metadata:
  name: payments
  labels:
    kubernetes.io/metadata.name: payments
"#;

/// Full `evaluate` of [`POLICY_YAML`] on an object given as JSON text; `(allowed, evaluated
/// validations)`.
pub fn evaluate_policy(object_text: &str) -> (bool, usize) {
    let input = crate::api::EvaluateInput {
        manifests: crate::api::Manifests::Text(POLICY_YAML.to_string()),
        object: Some(crate::api::Document::Text(object_text.to_string())),
        ..Default::default()
    };
    let r = crate::api::evaluate(&input);
    let validations = r
        .policies
        .iter()
        .flat_map(|p| &p.bindings)
        .flat_map(|b| &b.evaluations)
        .map(|e| e.validations.len())
        .sum();
    (r.response.allowed, validations)
}

/// The user-path workload: one policy holding the benchmark's expressions as validations (bound
/// with Deny, matching the Deployment), compiled once into a [`PolicySet`], evaluated per request
/// as `PolicySet.evaluate` does. The stage functions split that path for the breakdown in
/// `bench/README.md`.
pub struct PolicyWorkload {
    pub set: crate::admission::policy_set::PolicySet,
}

impl PolicyWorkload {
    pub fn new(expressions: &[String]) -> Self {
        let set = crate::api::compile(
            &crate::api::Manifests::Text(policy_yaml_for(expressions)),
            &crate::api::PolicySetOptions::default(),
        );
        PolicyWorkload { set }
    }

    /// `PolicySet.evaluate({ object: text })` without the conversion to JavaScript.
    pub fn evaluate_text(&self, text: &str) -> crate::api::EvaluateResult {
        let docs = crate::api::RequestDocuments {
            object: Some(crate::api::Document::Text(text.to_string())),
            ..Default::default()
        };
        crate::api::evaluate_with(&self.set, &docs)
    }

    /// The same with the object already parsed (what a JavaScript object becomes); includes
    /// one copy of it (`evaluate_owned` takes the document).
    pub fn evaluate_object(&self, object: &Json) -> crate::api::EvaluateResult {
        let docs = crate::api::RequestDocuments {
            object: Some(crate::api::Document::Object(object.clone())),
            ..Default::default()
        };
        crate::api::evaluate_owned(&self.set, docs)
    }

    /// Stage: the object text through the YAML-with-positions loader (what `Document::Text`
    /// used for every object before the fast path); returns the number of documents.
    pub fn parse_positions(text: &str) -> usize {
        crate::admission::yaml::parse_stream(text).0.len()
    }

    /// Stage: the object text as `Document::parse` reads it now.
    pub fn parse_document(text: &str) -> bool {
        matches!(crate::api::Document::Text(text.to_string()).parse("object"), Ok(Some(_)))
    }

    /// Stage: a copy of `object` (the benchmark object as parsed from `text`) normalised as the
    /// request path does ([`crate::objects::normalize_json`]); returns the number of changes.
    pub fn normalize(&self, object: &Json, text: &str) -> usize {
        let mut v = object.clone();
        let crds = &self.set.manifests.crds;
        crate::objects::normalize_json(&mut v, text, self.set.version, crds, "object").changes.len()
    }

    /// Stage: the result serialised to JSON text (what the wasm layer hands to `JSON.parse`);
    /// returns its length.
    pub fn serialize(result: &crate::api::EvaluateResult) -> usize {
        serde_json::to_string(result).map_or(0, |s| s.len())
    }

    /// The number of validations evaluated and whether the request was allowed (verification).
    pub fn summary(result: &crate::api::EvaluateResult) -> (bool, usize) {
        let validations = result
            .policies
            .iter()
            .flat_map(|p| &p.bindings)
            .flat_map(|b| &b.evaluations)
            .map(|e| e.validations.len())
            .sum();
        (result.response.allowed, validations)
    }
}

/// A policy with `expressions` as its validations, matching the benchmark Deployment, bound with
/// Deny, and the Deployment's namespace.
pub fn policy_yaml_for(expressions: &[String]) -> String {
    let mut y = String::from(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: workload.example.com\nspec:\n  failurePolicy: Fail\n  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"apps\"]\n      apiVersions: [\"v1\"]\n      operations: [\"CREATE\", \"UPDATE\"]\n      resources: [\"deployments\"]\n  validations:\n",
    );
    for e in expressions {
        // A JSON string is a YAML double-quoted scalar.
        y.push_str(&format!("  - expression: {}\n", Json::String(e.clone())));
    }
    y.push_str("---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: workload-binding.example.com\nspec:\n  policyName: workload.example.com\n  validationActions: [\"Deny\"]\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: payments\n  labels:\n    kubernetes.io/metadata.name: payments\n");
    y
}
