//! What the evaluation did, step by step: the trace a user reads to understand a decision.
//! Serialised as the `policies` part of the result (`docs/result-format.md`).

use serde::Serialize;
use serde_json::Value;

/// One policy, in evaluation order (sorted by name).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct PolicyTrace {
    pub name: String,
    pub matched: bool,
    /// Why it matched (the matched resource) or why not.
    pub reason: String,
    /// The policy configuration error, if any (spec §1.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configuration_error: Option<String>,
    pub bindings: Vec<BindingTrace>,
}

/// One binding of a matched policy, sorted by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct BindingTrace {
    pub name: String,
    pub matched: bool,
    pub reason: String,
    pub validation_actions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configuration_error: Option<String>,
    pub evaluations: Vec<ParamEvaluation>,
    /// `true`: no such binding exists; the policy has no binding and was evaluated as if bound
    /// with validationActions [Deny] (option `unboundPolicies`). Absent otherwise.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub hypothetical: bool,
}

/// The param an evaluation ran with.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct ParamRefTrace {
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub namespace: String,
    pub name: String,
}

/// One (policy, binding, param) evaluation (spec §1.6).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct ParamEvaluation {
    /// `None`: no param (no paramKind, or paramKind without paramRef: `params` is null).
    pub param: Option<ParamRefTrace>,
    pub match_conditions: Vec<ExprResult>,
    /// `false`: a matchCondition excluded the request; nothing else ran.
    pub matched: bool,
    /// Variables as evaluated while running the validations (lazily: unread ones are not
    /// evaluated).
    pub variables: Vec<ExprResult>,
    pub validations: Vec<ValidationResult>,
    pub audit_annotations: Vec<AuditResult>,
    /// Set when the whole evaluation produced one error decision instead of per-validation
    /// decisions (matchConditions error, budget exhausted, audit annotation pass failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub cost: Costs,
}

/// Actual cost per activation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct Costs {
    pub match_conditions: u64,
    pub validations: u64,
    pub message_expressions: u64,
    pub audit_annotations: u64,
}

/// One expression's outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct ExprResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub expression: String,
    pub evaluated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(type = "unknown"))]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none", rename = "type")]
    pub type_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub cost: u64,
}

/// One validation's outcome and what happened to its decision.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct ValidationResult {
    pub index: usize,
    // The compiled expression's text, shared (not copied for every request).
    #[cfg_attr(target_arch = "wasm32", tsify(type = "string"))]
    pub expression: std::rc::Rc<str>,
    /// The boolean result; absent on error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `admit`, `deny` or `error`.
    #[cfg_attr(target_arch = "wasm32", tsify(type = "\"admit\" | \"deny\" | \"error\""))]
    pub decision: &'static str,
    /// The decision's message (spec §2.2) when it is not an admit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_expression: Option<ExprResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the binding's validationActions did with a non-admit decision.
    pub actions: Vec<String>,
    /// This decision is the one the response reports.
    pub first_denial: bool,
    pub cost: u64,
}

/// One audit annotation's outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct AuditResult {
    pub key: String,
    pub value_expression: String,
    /// The published (trimmed) value; absent when excluded or on error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub published: bool,
    pub cost: u64,
}
