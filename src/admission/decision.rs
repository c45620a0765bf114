//! Decision rules and output formats: everything between "a CEL expression produced a value"
//! and "the apiserver answered". Pure functions, in the apiserver's order and wording
//! (`validating/validator.go`, `validating/dispatcher.go`, `endpoints/filters/warning.go`).
//!
//! * §1.6/§2.2 — one validation's [`PolicyDecision`] ([`validation_decision`], [`select_message`]);
//! * §1.9 — configuration errors and failurePolicy ([`configuration_error`]);
//! * §1.10 — routing through `validationActions` ([`Response::route`]);
//! * §1.11 — matchConditions outcome ([`match_conditions_outcome`]);
//! * §2.1 — the rejection [`Status`] ([`forbidden_status`]);
//! * §2.4 — the `Warning` header ([`WarningRecorder`]);
//! * §2.5 — policy audit annotations ([`AuditAnnotationCollector`]);
//! * §2.6 — `validation.policy.admission.k8s.io/validation_failure` ([`validation_failure_annotation`]).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::field::{aggregate, go_quote};

/// `spec.failurePolicy`. Unset means `Fail`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum FailurePolicy {
    Fail,
    Ignore,
}

impl FailurePolicy {
    /// Parse the written value; `None` (unset) is `Fail`. `Err` carries an unrecognised string
    /// (API validation rejects it, but the runtime handles it: §1.9).
    pub fn parse(written: Option<&str>) -> Result<FailurePolicy, String> {
        match written {
            None | Some("Fail") => Ok(FailurePolicy::Fail),
            Some("Ignore") => Ok(FailurePolicy::Ignore),
            Some(other) => Err(other.to_string()),
        }
    }
}

/// The action for an evaluation error (`policyDecisionActionForError`): only `Ignore` admits;
/// unrecognised policies deny like `Fail`.
pub fn action_for_error(failure_policy: Option<&str>) -> PolicyDecisionAction {
    if failure_policy == Some("Ignore") {
        PolicyDecisionAction::Admit
    } else {
        PolicyDecisionAction::Deny
    }
}

/// One entry of a binding's `validationActions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ValidationAction {
    Deny,
    Warn,
    Audit,
}

impl ValidationAction {
    /// `None` for strings the dispatcher ignores.
    pub fn parse(s: &str) -> Option<ValidationAction> {
        match s {
            "Deny" => Some(ValidationAction::Deny),
            "Warn" => Some(ValidationAction::Warn),
            "Audit" => Some(ValidationAction::Audit),
            _ => None,
        }
    }
}

/// `PolicyDecisionAction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PolicyDecisionAction {
    Admit,
    Deny,
}

/// `PolicyDecisionEvaluation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PolicyDecisionEvaluation {
    Admit,
    Deny,
    Error,
}

/// The outcome of one validation for one (policy, binding, param).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyDecision {
    pub action: PolicyDecisionAction,
    pub evaluation: PolicyDecisionEvaluation,
    /// Empty for admits.
    pub message: String,
    /// Status reason (`Invalid`, `Forbidden`, `RequestEntityTooLarge`, …); empty for admits
    /// and error decisions (which then reject with `Invalid`).
    pub reason: String,
}

impl PolicyDecision {
    pub fn admit() -> Self {
        PolicyDecision {
            action: PolicyDecisionAction::Admit,
            evaluation: PolicyDecisionEvaluation::Admit,
            message: String::new(),
            reason: String::new(),
        }
    }
    /// An evaluation error (§1.6): deny unless failurePolicy is `Ignore`.
    pub fn error(failure_policy: Option<&str>, message: impl Into<String>) -> Self {
        PolicyDecision {
            action: action_for_error(failure_policy),
            evaluation: PolicyDecisionEvaluation::Error,
            message: message.into(),
            reason: String::new(),
        }
    }
}

/// `celconfig.MaxEvaluatedMessageExpressionSizeBytes`.
pub const MAX_EVALUATED_MESSAGE_EXPRESSION_BYTES: usize = 5 * 1024;

/// §2.2: the message of a validation that did not evaluate to true.
///
/// `message_expression_string` is the messageExpression's result **only if** it evaluated
/// without error to a CEL string (pass `None` for errors, null and other types).
pub fn select_message(
    message_expression_string: Option<&str>,
    message: &str,
    expression: &str,
) -> String {
    let mut chosen = String::new();
    if let Some(s) = message_expression_string {
        let t = s.trim();
        if t.len() <= MAX_EVALUATED_MESSAGE_EXPRESSION_BYTES && !t.contains('\n') {
            chosen = t.to_string();
        }
    }
    if chosen.is_empty() && !message.is_empty() {
        chosen = message.trim().to_string();
    }
    if chosen.is_empty() {
        chosen = format!("failed expression: {}", expression.trim());
    }
    chosen
}

/// How one validation expression evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValidationOutcome {
    /// Compile or runtime error, with its text (§2.3).
    Error(String),
    /// `true` admits; anything else (including non-bool) denies.
    Value(bool),
}

/// §1.6 step 5: the decision for validation `i`.
///
/// `message_expressions_failure` is the error of the messageExpression pass as a whole
/// (out of budget / internal), which turns **every** non-error validation into an error
/// decision `failed messageExpression: <err>` [quirk].
pub fn validation_decision(
    failure_policy: Option<&str>,
    outcome: &ValidationOutcome,
    message_expressions_failure: Option<&str>,
    validation: &super::types::Validation,
    message_expression_string: Option<&str>,
) -> PolicyDecision {
    match outcome {
        ValidationOutcome::Error(e) => PolicyDecision::error(failure_policy, e.clone()),
        _ if message_expressions_failure.is_some() => PolicyDecision::error(
            failure_policy,
            format!(
                "failed messageExpression: {}",
                message_expressions_failure.unwrap_or_default()
            ),
        ),
        ValidationOutcome::Value(true) => PolicyDecision::admit(),
        ValidationOutcome::Value(false) => PolicyDecision {
            action: PolicyDecisionAction::Deny,
            evaluation: PolicyDecisionEvaluation::Deny,
            message: select_message(
                message_expression_string,
                &validation.message,
                &validation.expression,
            ),
            reason: validation.reason.clone().unwrap_or_else(|| "Invalid".to_string()),
        },
    }
}

/// §1.11: result of a policy's matchConditions for one param.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "outcome")]
pub enum MatchConditionsOutcome {
    Match,
    /// The first condition (by index) that evaluated to false; `None` when errors were
    /// swallowed by failurePolicy `Ignore`.
    NoMatch {
        condition: Option<usize>,
    },
    /// Becomes one error decision whose message is `message`.
    Error {
        message: String,
    },
}

/// §1.11: combine per-condition results (`Ok(bool)` or `Err(error text)`, in order).
/// `whole_error` is set when the evaluation as a whole failed (budget exhausted).
pub fn match_conditions_outcome(
    failure_policy: Option<&str>,
    results: &[Result<bool, String>],
    whole_error: Option<&str>,
) -> MatchConditionsOutcome {
    let fail = failure_policy != Some("Ignore");
    if let Some(e) = whole_error {
        return if fail {
            MatchConditionsOutcome::Error { message: e.to_string() }
        } else {
            MatchConditionsOutcome::NoMatch { condition: None }
        };
    }
    let mut errors = Vec::new();
    for (i, r) in results.iter().enumerate() {
        match r {
            Ok(false) => return MatchConditionsOutcome::NoMatch { condition: Some(i) },
            Ok(true) => {}
            Err(e) => errors.push(e.clone()),
        }
    }
    if errors.is_empty() {
        MatchConditionsOutcome::Match
    } else if failure_policy == Some("Fail") || failure_policy.is_none() {
        MatchConditionsOutcome::Error { message: aggregate(&errors) }
    } else {
        MatchConditionsOutcome::NoMatch { condition: None }
    }
}

/// Whether a configuration error belongs to the policy or to one of its bindings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigErrorScope {
    Policy,
    Binding,
}

/// §1.9: the denied decision for a configuration error, or `None` when failurePolicy is
/// `Ignore`. These bypass `validationActions` [quirk].
pub fn configuration_error(
    failure_policy: Option<&str>,
    scope: ConfigErrorScope,
    err: &str,
) -> Option<PolicyDecision> {
    let message = match FailurePolicy::parse(failure_policy) {
        Ok(FailurePolicy::Ignore) => return None,
        Ok(FailurePolicy::Fail) => match scope {
            ConfigErrorScope::Policy => format!("failed to configure policy: {err}"),
            ConfigErrorScope::Binding => format!("failed to configure binding: {err}"),
        },
        Err(other) => format!("unrecognized failure policy: '{other}'"),
    };
    Some(PolicyDecision {
        action: PolicyDecisionAction::Deny,
        evaluation: PolicyDecisionEvaluation::Error,
        message,
        reason: String::new(),
    })
}

/// A denied decision with the policy/binding it came from (`policyDecisionWithMetadata`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeniedDecision {
    pub policy: String,
    /// `None` for policy-level configuration errors.
    pub binding: Option<String>,
    pub decision: PolicyDecision,
}

/// One Audit-action failure (§2.6), serialised in Go field order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValidationFailureValue {
    pub message: String,
    /// The binding's `spec.policyName`.
    pub policy: String,
    pub binding: String,
    pub expression_index: usize,
    /// The binding's list as written.
    pub validation_actions: Vec<String>,
}

/// A binding as the router needs it.
#[derive(Clone, Copy, Debug)]
pub struct BindingRef<'a> {
    pub name: &'a str,
    pub policy_name: &'a str,
    pub validation_actions: &'a [String],
}

/// Accumulates the outcome of a request across policies (§1.8).
#[derive(Clone, Debug, Default)]
pub struct Response {
    /// In iteration order; the first one rejects the request.
    pub denied: Vec<DeniedDecision>,
    pub warnings: WarningRecorder,
    pub audit_failures: Vec<ValidationFailureValue>,
    /// `<policy>/<key>` → value (§2.5), published per policy.
    pub audit_annotations: BTreeMap<String, String>,
}

impl Response {
    /// §1.10: route one (policy, binding, param) evaluation's decisions.
    pub fn route(&mut self, policy: &str, binding: BindingRef<'_>, decisions: &[PolicyDecision]) {
        for (i, d) in decisions.iter().enumerate() {
            if d.action != PolicyDecisionAction::Deny {
                continue;
            }
            for a in binding.validation_actions {
                match ValidationAction::parse(a) {
                    Some(ValidationAction::Deny) => self.denied.push(DeniedDecision {
                        policy: policy.to_string(),
                        binding: Some(binding.name.to_string()),
                        decision: d.clone(),
                    }),
                    Some(ValidationAction::Warn) => {
                        self.warnings.add(&warning_text(policy, binding.name, &d.message))
                    }
                    Some(ValidationAction::Audit) => {
                        self.audit_failures.push(ValidationFailureValue {
                            message: d.message.clone(),
                            policy: binding.policy_name.to_string(),
                            binding: binding.name.to_string(),
                            expression_index: i,
                            validation_actions: binding.validation_actions.to_vec(),
                        })
                    }
                    None => {}
                }
            }
        }
    }

    /// §1.9: a configuration error (already turned into a decision by
    /// [`configuration_error`]) goes straight to the denied list.
    pub fn deny_configuration(
        &mut self,
        policy: &str,
        binding: Option<&str>,
        decision: PolicyDecision,
    ) {
        self.denied.push(DeniedDecision {
            policy: policy.to_string(),
            binding: binding.map(str::to_string),
            decision,
        });
    }

    /// §1.6 step 6 / §1.10: an audit-annotation error always denies, bypassing validationActions.
    pub fn deny_audit_annotation_error(&mut self, policy: &str, binding: &str, message: &str) {
        self.denied.push(DeniedDecision {
            policy: policy.to_string(),
            binding: Some(binding.to_string()),
            decision: PolicyDecision {
                action: PolicyDecisionAction::Deny,
                evaluation: PolicyDecisionEvaluation::Error,
                message: message.to_string(),
                reason: String::new(),
            },
        });
    }

    /// §2.5: publish one policy's collected audit annotations.
    pub fn publish(&mut self, policy: &str, collector: AuditAnnotationCollector) {
        for (key, value) in collector.values() {
            self.audit_annotations.entry(format!("{policy}/{key}")).or_insert(value);
        }
    }

    /// §2.6: the `validation_failure` annotation value, if any Audit failure was collected.
    pub fn validation_failure(&self) -> Option<String> {
        validation_failure_annotation(&self.audit_failures)
    }
}

/// §1.10 warning text.
pub fn warning_text(policy: &str, binding: &str, message: &str) -> String {
    format!("Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{binding}': {message}")
}

/// The audit annotation key for Audit failures.
pub const VALIDATION_FAILURE_ANNOTATION_KEY: &str =
    "validation.policy.admission.k8s.io/validation_failure";
/// At most this many Audit failures are reported.
pub const MAX_AUDIT_FAILURES: usize = 50;

/// §2.6: Go `encoding/json` of the first 50 failures; `None` if there are none.
pub fn validation_failure_annotation(failures: &[ValidationFailureValue]) -> Option<String> {
    if failures.is_empty() {
        return None;
    }
    let capped = &failures[..failures.len().min(MAX_AUDIT_FAILURES)];
    let json = vap_eval_json::ser::to_string(capped).ok()?;
    Some(go_json_escape(&json))
}

/// Apply Go `encoding/json`'s HTML-safe escaping to serde_json output: `<`, `>`, `&`,
/// U+2028 and U+2029 only occur inside strings there, so replacing them is safe.
pub fn go_json_escape(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Longest audit annotation value, in bytes.
pub const MAX_AUDIT_ANNOTATION_VALUE_BYTES: usize = 10 * 1024;

/// §2.5: per-policy audit annotation values, across bindings and params.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditAnnotationCollector {
    /// key → distinct values in first-seen order (keys in first-seen order too).
    entries: Vec<(String, Vec<String>)>,
}

impl AuditAnnotationCollector {
    /// Add a published value: trimmed by the caller (§1.6), empty values excluded here; cut to
    /// 10240 bytes (a byte slice upstream; here cut back to a char boundary, since Rust strings
    /// are UTF-8 — a difference only when the cut splits a character); exact duplicates dropped.
    pub fn add(&mut self, key: &str, value: &str) {
        if value.is_empty() {
            return;
        }
        let mut end = value.len().min(MAX_AUDIT_ANNOTATION_VALUE_BYTES);
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        let v = value[..end].to_string();
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, vals)) => {
                if !vals.contains(&v) {
                    vals.push(v);
                }
            }
            None => self.entries.push((key.to_string(), vec![v])),
        }
    }
    /// key → published value (several values joined with `", "`).
    pub fn values(&self) -> Vec<(String, String)> {
        self.entries.iter().map(|(k, v)| (k.clone(), v.join(", "))).collect()
    }
}

/// How one auditAnnotation valueExpression evaluated.
#[derive(Clone, Debug, PartialEq)]
pub enum AuditAnnotationOutcome {
    Error(String),
    /// The CEL result (string, null, or — with dyn — anything else).
    Value(Value),
}

/// What to do with one audit annotation result (§1.6 step 6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditAnnotationAction {
    Publish(String),
    Exclude,
    Error(String),
}

/// §1.6 step 6. `type_name` is the CEL type name of a non-string, non-null result.
pub fn audit_annotation_action(
    failure_policy: Option<&str>,
    value_expression: &str,
    outcome: &AuditAnnotationOutcome,
    type_name: &str,
) -> AuditAnnotationAction {
    match outcome {
        AuditAnnotationOutcome::Error(e) => {
            if failure_policy == Some("Ignore") {
                AuditAnnotationAction::Exclude
            } else {
                AuditAnnotationAction::Error(e.clone())
            }
        }
        AuditAnnotationOutcome::Value(Value::String(s)) => {
            let t = s.trim();
            if t.is_empty() {
                AuditAnnotationAction::Exclude
            } else {
                AuditAnnotationAction::Publish(t.to_string())
            }
        }
        AuditAnnotationOutcome::Value(Value::Null) => AuditAnnotationAction::Exclude,
        AuditAnnotationOutcome::Value(_) => AuditAnnotationAction::Error(format!(
            "valueExpression '{value_expression}' resulted in unsupported return type: {type_name}. Return type must be either string or null."
        )),
    }
}

/// The rejection response (`metav1.Status`), §2.1.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct Status {
    #[cfg_attr(target_arch = "wasm32", tsify(type = "\"Status\""))]
    pub kind: &'static str,
    #[cfg_attr(target_arch = "wasm32", tsify(type = "\"v1\""))]
    pub api_version: &'static str,
    pub metadata: BTreeMap<String, String>,
    #[cfg_attr(target_arch = "wasm32", tsify(type = "\"Failure\""))]
    pub status: &'static str,
    pub message: String,
    pub reason: String,
    /// Absent when the status has none (`NewBadRequest`), as Go omits an empty `details`.
    #[serde(skip_serializing_if = "StatusDetails::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub details: StatusDetails,
    pub code: u16,
}

/// `metav1.StatusDetails`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct StatusDetails {
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub group: String,
    /// The resource (plural), not the kind.
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub kind: String,
    /// Absent when empty (`omitempty`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub causes: Vec<StatusCause>,
}

impl StatusDetails {
    /// No field set: Go's `omitempty` pointer is nil and the JSON has no `details`.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
            && self.group.is_empty()
            && self.kind.is_empty()
            && self.causes.is_empty()
    }
}

/// `metav1.StatusCause` (the dispatcher sets only `message`; `reason` and `field` are absent
/// when empty, as Go's `omitempty`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct StatusCause {
    /// The cause's type (`FieldValueNotSupported`, …).
    #[serde(skip_serializing_if = "str::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string"))]
    pub reason: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "string"))]
    pub field: &'static str,
}

/// `reasonToCode`.
pub fn reason_to_code(reason: &str) -> u16 {
    match reason {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    }
}

/// The name used in the rejection (`admission.extractResourceName`): the request name; else
/// the object's `metadata.name`, else its `metadata.generateName`, else `Unknown`; an object
/// without metadata (options kinds such as `DeleteOptions`, `PodExecOptions`) gives
/// `Unknown/errorGettingName`.
pub fn resource_name_for_error(request_name: &str, object: Option<&Value>) -> String {
    if !request_name.is_empty() {
        return request_name.to_string();
    }
    let Some(obj) = object.filter(|o| !o.is_null()) else {
        return "Unknown".into();
    };
    let Some(meta) = obj.get("metadata").filter(|m| m.is_object()) else {
        let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
        if !obj.is_object() || kind.ends_with("Options") {
            return "Unknown/errorGettingName".into();
        }
        return "Unknown".into();
    };
    for key in ["name", "generateName"] {
        if let Some(s) = meta.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()) {
            return s.to_string();
        }
    }
    "Unknown".into()
}

/// The message inside the Forbidden error (before `<resource> "<name>" is forbidden: `).
pub fn denial_message(d: &DeniedDecision) -> String {
    // Joined, not formatted: made for every denied request.
    let (policy, message) = (d.policy.as_str(), d.decision.message.as_str());
    match &d.binding {
        Some(b) => [
            "ValidatingAdmissionPolicy '",
            policy,
            "' with binding '",
            b,
            "' denied request: ",
            message,
        ]
        .concat(),
        None => ["ValidatingAdmissionPolicy '", policy, "' denied request: ", message].concat(),
    }
}

/// §2.1: the Status for the first denied decision. `group`/`resource` are the request's
/// (original) resource; `name` comes from [`resource_name_for_error`].
pub fn forbidden_status(d: &DeniedDecision, group: &str, resource: &str, name: &str) -> Status {
    let inner = denial_message(d);
    let qualified =
        if group.is_empty() { resource.to_string() } else { [resource, ".", group].concat() };
    let message = if group.is_empty() && resource.is_empty() {
        ["forbidden: ", &inner].concat()
    } else if name.is_empty() {
        [&qualified, " is forbidden: ", &inner].concat()
    } else {
        [&qualified, " ", &go_quote(name), " is forbidden: ", &inner].concat()
    };
    let reason = if d.decision.reason.is_empty() {
        "Invalid".to_string()
    } else {
        d.decision.reason.clone()
    };
    Status {
        kind: "Status",
        api_version: "v1",
        metadata: BTreeMap::new(),
        status: "Failure",
        message,
        code: reason_to_code(&reason),
        reason,
        details: StatusDetails {
            name: name.to_string(),
            group: group.to_string(),
            kind: resource.to_string(),
            causes: vec![StatusCause { reason: "", message: inner, field: "" }],
        },
    }
}

/// Total warning budget in runes.
pub const MAX_WARNING_RUNES: usize = 4096;
/// Per-warning length once truncating.
pub const MAX_WARNING_ITEM_RUNES: usize = 256;

/// §2.4: the apiserver's warning recorder (`endpoints/filters/warning.go`): dedupe, drop texts
/// that are not valid header values (control characters), 4096-rune budget then 256-rune
/// truncation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WarningRecorder {
    /// Every distinct text added, in order (including dropped ones).
    recorded: Vec<String>,
    /// The texts actually sent (each a `Warning` header, [`warning_header`]), truncated.
    sent: Vec<String>,
    written: usize,
    truncating: bool,
}

impl WarningRecorder {
    /// `AddWarning("", text)`.
    pub fn add(&mut self, text: &str) {
        if text.is_empty() || (self.written >= MAX_WARNING_RUNES && self.truncating) {
            return;
        }
        if self.recorded.iter().any(|t| t == text) {
            return;
        }
        self.recorded.push(text.to_string());
        let mut text = text.to_string();
        let mut runes = text.chars().count();
        if self.truncating && runes > MAX_WARNING_ITEM_RUNES {
            text = text.chars().take(MAX_WARNING_ITEM_RUNES).collect();
            runes = MAX_WARNING_ITEM_RUNES;
        }
        if !valid_warning(&text) {
            return;
        }
        if self.written + runes <= MAX_WARNING_RUNES {
            self.written += runes;
            self.sent.push(text);
            return;
        }
        if self.truncating {
            return;
        }
        self.truncating = true;
        self.written = 0;
        self.sent.clear();
        for t in &self.recorded {
            let mut t: String = t.clone();
            let mut n = t.chars().count();
            if n > MAX_WARNING_ITEM_RUNES {
                t = t.chars().take(MAX_WARNING_ITEM_RUNES).collect();
                n = MAX_WARNING_ITEM_RUNES;
            }
            if self.written + n > MAX_WARNING_RUNES {
                break;
            }
            if !valid_warning(&t) {
                continue;
            }
            self.written += n;
            self.sent.push(t);
        }
    }

    /// The `Warning` header values, in order.
    pub fn headers(&self) -> Vec<String> {
        self.sent.iter().filter_map(|t| warning_header(t)).collect()
    }

    /// The warning texts as sent (the headers' texts, not quoted).
    pub fn texts(&self) -> Vec<String> {
        self.sent.clone()
    }
}

/// A warning's text can be a header value (no control character): what [`warning_header`]
/// refuses, tested without quoting the text.
fn valid_warning(text: &str) -> bool {
    !text.chars().any(char::is_control)
}

/// `net.NewWarningHeader(299, "", text)`: `None` if `text` contains a control character.
pub fn warning_header(text: &str) -> Option<String> {
    if !valid_warning(text) {
        return None;
    }
    Some(format!("299 - {}", go_quote(text)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::types::Validation;
    use serde_json::json;

    fn v(expression: &str, message: &str) -> Validation {
        Validation { expression: expression.into(), message: message.into(), ..Default::default() }
    }

    /// spec §2.2 and the `validator_test.go` cases it cites.
    #[test]
    fn message_selection() {
        let x5121 = "x".repeat(5121);
        let cases: &[(Option<&str>, &str, &str, &str)] = &[
            (Some("custom"), "", "1 < 0", "custom"),
            (Some("  custom  "), "msg", "1 < 0", "custom"),
            (Some(" "), "msg", "1 < 0", "msg"),
            (Some("a\nb"), "", "1 < 0", "failed expression: 1 < 0"),
            (Some("a\rb"), "", "1 < 0", "a\rb"),
            (Some(&x5121), "", " 1 < 0 ", "failed expression: 1 < 0"),
            (None, "  msg ", "1 < 0", "msg"),
            (None, "", "a &&\n b", "failed expression: a &&\n b"),
        ];
        for (me, m, e, want) in cases {
            assert_eq!(select_message(*me, m, e), *want);
        }
        assert_eq!(select_message(Some(&"x".repeat(5120)), "", "e").len(), 5120);
    }

    /// spec §1.6 step 5.
    #[test]
    fn validation_decisions() {
        let val = Validation { reason: Some("Forbidden".into()), ..v("e", "") };
        let d = validation_decision(None, &ValidationOutcome::Value(false), None, &val, None);
        assert_eq!(d.action, PolicyDecisionAction::Deny);
        assert_eq!(d.reason, "Forbidden");
        assert_eq!(d.message, "failed expression: e");
        let d = validation_decision(
            Some("Ignore"),
            &ValidationOutcome::Error("boom".into()),
            None,
            &val,
            None,
        );
        assert_eq!(
            (d.action, d.evaluation),
            (PolicyDecisionAction::Admit, PolicyDecisionEvaluation::Error)
        );
        let d = validation_decision(
            None,
            &ValidationOutcome::Value(true),
            Some("out of budget"),
            &val,
            None,
        );
        assert_eq!(d.message, "failed messageExpression: out of budget");
        assert_eq!(d.action, PolicyDecisionAction::Deny);
        let d =
            validation_decision(None, &ValidationOutcome::Value(false), None, &v("e", ""), None);
        assert_eq!(d.reason, "Invalid");
    }

    /// spec §1.11.
    #[test]
    fn match_conditions() {
        let e = |s: &str| Err(s.to_string());
        assert_eq!(
            match_conditions_outcome(None, &[Ok(true)], None),
            MatchConditionsOutcome::Match
        );
        assert_eq!(
            match_conditions_outcome(None, &[e("x"), Ok(false)], None),
            MatchConditionsOutcome::NoMatch { condition: Some(1) }
        );
        assert_eq!(
            match_conditions_outcome(None, &[e("a"), e("b"), e("a")], None),
            MatchConditionsOutcome::Error { message: "[a, b]".into() }
        );
        assert_eq!(
            match_conditions_outcome(None, &[e("a")], None),
            MatchConditionsOutcome::Error { message: "a".into() }
        );
        assert_eq!(
            match_conditions_outcome(Some("Ignore"), &[e("a")], None),
            MatchConditionsOutcome::NoMatch { condition: None }
        );
        assert_eq!(
            match_conditions_outcome(Some("Fail"), &[], Some("budget")),
            MatchConditionsOutcome::Error { message: "budget".into() }
        );
    }

    /// spec §1.9.
    #[test]
    fn configuration_errors() {
        let d = configuration_error(None, ConfigErrorScope::Binding, "x").unwrap();
        assert_eq!(d.message, "failed to configure binding: x");
        assert!(configuration_error(Some("Ignore"), ConfigErrorScope::Policy, "x").is_none());
        assert_eq!(
            configuration_error(Some("Sometimes"), ConfigErrorScope::Policy, "x").unwrap().message,
            "unrecognized failure policy: 'Sometimes'"
        );
    }

    /// spec §1.10, §8.3 (admission_test.go TestAuditValidationAction, Warn case).
    #[test]
    fn routing() {
        let mut r = Response::default();
        let actions =
            vec!["Deny".to_string(), "Warn".to_string(), "Audit".to_string(), "Bogus".to_string()];
        let b = BindingRef {
            name: "denybinding.example.com",
            policy_name: "denypolicy.example.com",
            validation_actions: &actions,
        };
        let deny = PolicyDecision {
            action: PolicyDecisionAction::Deny,
            evaluation: PolicyDecisionEvaluation::Deny,
            message: "I'm sorry Dave".into(),
            reason: "Invalid".into(),
        };
        r.route("denypolicy.example.com", b, &[PolicyDecision::admit(), deny]);
        assert_eq!(r.denied.len(), 1);
        assert_eq!(
            r.warnings.texts(),
            vec!["Validation failed for ValidatingAdmissionPolicy 'denypolicy.example.com' with binding 'denybinding.example.com': I'm sorry Dave"]
        );
        assert_eq!(
            r.validation_failure().unwrap(),
            r#"[{"message":"I'm sorry Dave","policy":"denypolicy.example.com","binding":"denybinding.example.com","expressionIndex":1,"validationActions":["Deny","Warn","Audit","Bogus"]}]"#
        );
        let st = forbidden_status(&r.denied[0], "apps", "deployments", "nginx");
        assert_eq!(st.code, 422);
        assert_eq!(
            st.message,
            "deployments.apps \"nginx\" is forbidden: ValidatingAdmissionPolicy 'denypolicy.example.com' with binding 'denybinding.example.com' denied request: I'm sorry Dave"
        );
        assert_eq!(st.details.causes.len(), 1);
    }

    /// spec §2.1 example JSON.
    #[test]
    fn status_json() {
        let d = DeniedDecision {
            policy: "demo-policy.example.com".into(),
            binding: Some("demo-binding-test.example.com".into()),
            decision: PolicyDecision::error(None, "failed expression: object.spec.replicas <= 5"),
        };
        let st = forbidden_status(&d, "apps", "deployments", "nginx");
        assert_eq!(
            serde_json::to_string(&st).unwrap(),
            r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \"nginx\" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5","reason":"Invalid","details":{"name":"nginx","group":"apps","kind":"deployments","causes":[{"message":"ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: failed expression: object.spec.replicas <= 5"}]},"code":422}"#
        );
        let pol = DeniedDecision { binding: None, ..d };
        assert_eq!(
            forbidden_status(&pol, "", "pods", "Unknown").message,
            "pods \"Unknown\" is forbidden: ValidatingAdmissionPolicy 'demo-policy.example.com' denied request: failed expression: object.spec.replicas <= 5"
        );
        assert_eq!(reason_to_code("Forbidden"), 403);
        assert_eq!(reason_to_code("RequestEntityTooLarge"), 413);
        assert_eq!(reason_to_code("Whatever"), 422);
    }

    #[test]
    fn names_for_errors() {
        assert_eq!(resource_name_for_error("n", None), "n");
        assert_eq!(
            resource_name_for_error("", Some(&json!({"metadata": {"generateName": "g-"}}))),
            "g-"
        );
        assert_eq!(resource_name_for_error("", None), "Unknown");
        assert_eq!(
            resource_name_for_error(
                "",
                Some(&json!({"kind": "PodExecOptions", "command": ["ls"]}))
            ),
            "Unknown/errorGettingName"
        );
    }

    /// spec §2.4.
    #[test]
    fn warnings() {
        let mut w = WarningRecorder::default();
        w.add("a \"q\" \\");
        w.add("a \"q\" \\");
        w.add("multi\nline");
        w.add("tab\there");
        assert_eq!(w.headers(), &[r#"299 - "a \"q\" \\""#.to_string()]);
        assert_eq!(w.texts(), ["a \"q\" \\"]);
        // The texts are the ones sent, not read back from the headers: Go quotes a character it
        // does not print as `\u00a0` or `\U000f0000` (strconv.Quote), and the second is no JSON
        // escape (the texts were once the header unquoted as JSON, which kept it escaped).
        let mut w = WarningRecorder::default();
        w.add("nb\u{a0}sp \u{f0000} pua");
        assert_eq!(w.headers(), [r#"299 - "nb\u00a0sp \U000f0000 pua""#]);
        assert_eq!(w.texts(), ["nb\u{a0}sp \u{f0000} pua"]);
        let mut w = WarningRecorder::default();
        let long = "x".repeat(3000);
        w.add(&long);
        w.add(&"y".repeat(2000));
        assert_eq!(w.headers().len(), 2);
        assert!(w.texts().iter().all(|t| t.chars().count() == 256));
        for i in 0..20 {
            w.add(&format!("{i}{}", "z".repeat(300)));
        }
        assert!(w.texts().iter().map(|t| t.chars().count()).sum::<usize>() <= 4096);
    }

    /// spec §2.5 and admission_test.go TestAuditAnnotations.
    #[test]
    fn audit_annotations() {
        let mut c = AuditAnnotationCollector::default();
        for v in ["normal-value", "special-value", "normal-value"] {
            c.add("example-key", v);
        }
        c.add("empty", "");
        c.add("big", &"é".repeat(6000));
        let mut r = Response::default();
        r.publish("p", c);
        assert_eq!(r.audit_annotations["p/example-key"], "normal-value, special-value");
        assert!(!r.audit_annotations.contains_key("p/empty"));
        assert!(r.audit_annotations["p/big"].len() <= 10240);
        assert_eq!(
            audit_annotation_action(None, "e", &AuditAnnotationOutcome::Value(json!("  v ")), ""),
            AuditAnnotationAction::Publish("v".into())
        );
        assert_eq!(
            audit_annotation_action(Some("Ignore"), "e", &AuditAnnotationOutcome::Value(json!(1)), "int"),
            AuditAnnotationAction::Error(
                "valueExpression 'e' resulted in unsupported return type: int. Return type must be either string or null.".into()
            )
        );
        assert_eq!(
            audit_annotation_action(
                Some("Ignore"),
                "e",
                &AuditAnnotationOutcome::Error("x".into()),
                ""
            ),
            AuditAnnotationAction::Exclude
        );
    }

    /// spec §2.6: Go escaping and the 50-entry cap.
    #[test]
    fn validation_failure_json() {
        let f = |i: usize| ValidationFailureValue {
            message: "a<b>&c\u{2028}\n".into(),
            policy: "p".into(),
            binding: "b".into(),
            expression_index: i,
            validation_actions: vec!["Audit".into()],
        };
        let s = validation_failure_annotation(&[f(0)]).unwrap();
        assert_eq!(
            s,
            r#"[{"message":"a\u003cb\u003e\u0026c\u2028\n","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Audit"]}]"#
        );
        let many: Vec<_> = (0..60).map(f).collect();
        let v: Vec<Value> =
            serde_json::from_str(&validation_failure_annotation(&many).unwrap()).unwrap();
        assert_eq!(v.len(), 50);
        assert!(validation_failure_annotation(&[]).is_none());
    }
}
