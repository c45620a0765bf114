//! Which webhooks kube-apiserver would call for a request, why not, and what each receives
//! (`docs/webhook-semantics.md`). Mirrors `generic/webhook.go` `ShouldCallHook` (predicates
//! and matchConditions), `mutating/dispatcher.go` (sequential calls) and
//! `validating/dispatcher.go` (all predicates first, then parallel calls).

use serde::Serialize;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

use crate::admission::decision::{Status, StatusCause, StatusDetails};
use crate::admission::field::{aggregate, go_quote};
use crate::admission::matching::{
    may_match_equivalent, name_matches, namespace_selector, object_selector, rule_mismatch,
    MatchContext, MatchError, NoMatchReason, RuleMismatch,
};
use crate::admission::request::{request_cel_value, AdmissionRequest};
use crate::admission::resources::{GroupVersionKind, GroupVersionResource};
use crate::admission::types::MatchCondition;
use crate::admission::validator::{OUT_OF_BUDGET, RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS};
use crate::cel::compile::Compiled;
use crate::cel::runtime::{Activation, CostTracker, DEFAULT_COST_LIMIT};
use crate::cel::value::Value;
use crate::diagnostic::Diagnostic;
use crate::environment::{var, KubeVersion};

use super::diagnostics;
use super::types::{Webhook, WebhookConfiguration, WebhookKind};
use super::validation::ACCEPTED_REVIEW_VERSIONS;

/// The `uid` every AdmissionReview built here carries (the apiserver generates a random one).
pub const PLACEHOLDER_UID: &str = "00000000-0000-0000-0000-000000000000";

/// One webhook, in the order the apiserver considers it (`evaluate(input).webhooks`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct WebhookTrace {
    /// The configuration's `metadata.name`.
    pub configuration: String,
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "\"MutatingWebhookConfiguration\" | \"ValidatingWebhookConfiguration\"")
    )]
    pub kind: &'static str,
    pub name: String,
    /// The apiserver would send this webhook the request.
    pub called: bool,
    /// Why it is not called (a skipped predicate, not reached, a refused dry run, a fail-open);
    /// absent when called.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub reason: Option<String>,
    /// Index of the first rule that matched (the request as sent, or an equivalent resource).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub matched_rule: Option<usize>,
    /// Set when the rule matched only through `matchPolicy: Equivalent`: the resource and kind
    /// the webhook is sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub equivalent_resource: Option<EquivalentResource>,
    /// Every matchCondition evaluated, in order (empty when they were not reached).
    pub match_conditions: Vec<ConditionResult>,
    /// The `AdmissionReview` request body the webhook receives; only when called.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "Record<string, unknown>"))]
    pub review: Option<Json>,
}

/// The resource and kind a webhook matched through `matchPolicy: Equivalent`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct EquivalentResource {
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "{ group: string; version: string; resource: string }")
    )]
    pub resource: Json,
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "{ group: string; version: string; kind: string }")
    )]
    pub kind: Json,
}

/// One matchCondition's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct ConditionResult {
    pub name: String,
    pub expression: String,
    /// Absent when the condition failed (then `error` is set).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub result: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub error: Option<String>,
    pub cost: u64,
}

/// A loaded configuration with its matchConditions compiled (StoredExpressions), per webhook.
pub struct CompiledConfiguration {
    pub configuration: WebhookConfiguration,
    /// `conditions[w][i]`: webhook `w`'s matchCondition `i`.
    pub conditions: Vec<Vec<Compiled>>,
}

/// What a phase (or both) produced.
#[derive(Default)]
pub struct PhaseOutcome {
    pub webhooks: Vec<WebhookTrace>,
    /// The rejection, when the phase rejects the request.
    pub status: Option<Status>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Values matchConditions see besides the request.
pub struct Env<'a> {
    pub version: KubeVersion,
    /// `authorizer` and `authorizer.requestResource` for the request's user.
    pub authorizer: (Value<'a>, Value<'a>),
    /// Build each called webhook's AdmissionReview for the trace (false: the audit's
    /// [`PolicySet::summary_trace`](crate::admission::policy_set::PolicySet::summary_trace);
    /// the review decides nothing). Nor, then, why a webhook is skipped.
    pub reviews: bool,
}

/// `rules.IsExemptAdmissionConfigurationResource`: requests for these kinds never reach any
/// webhook. The MutatingAdmissionPolicy kinds were added with that API (1.32).
pub fn exempt(req: &AdmissionRequest, version: KubeVersion) -> bool {
    req.kind.group == "admissionregistration.k8s.io"
        && match req.kind.kind.as_str() {
            "ValidatingWebhookConfiguration"
            | "MutatingWebhookConfiguration"
            | "ValidatingAdmissionPolicy"
            | "ValidatingAdmissionPolicyBinding" => true,
            "MutatingAdmissionPolicy" | "MutatingAdmissionPolicyBinding" => version.minor >= 32,
            _ => false,
        }
}

/// What `ShouldCallHook` decided for one webhook.
enum Should {
    Call(Invocation),
    Skip(String),
    /// The request is rejected with this status (predicate or matchCondition error).
    Reject(Status, String),
}

struct Invocation {
    rule: usize,
    resource: GroupVersionResource,
    kind: GroupVersionKind,
    equivalent: bool,
}

fn internal_error(err: &str) -> Status {
    status(500, "InternalError", format!("Internal error occurred: {err}"), {
        StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            causes: vec![StatusCause { reason: "", message: err.to_string(), field: "" }],
        }
    })
}

fn status(code: u16, reason: &str, message: String, details: StatusDetails) -> Status {
    Status {
        kind: "Status",
        api_version: "v1",
        metadata: BTreeMap::new(),
        status: "Failure",
        message,
        reason: reason.to_string(),
        details,
        code,
    }
}

fn empty_details() -> StatusDetails {
    StatusDetails { name: String::new(), group: String::new(), kind: String::new(), causes: vec![] }
}

/// The status a predicate error becomes: a namespace that does not exist keeps its 404; other
/// errors are internal errors.
fn match_error_status(e: &MatchError) -> Status {
    if e.code == 404 {
        let ns = e.message.split('"').nth(1).unwrap_or_default().to_string();
        return status(
            404,
            "NotFound",
            e.message.clone(),
            StatusDetails {
                name: ns,
                group: String::new(),
                kind: "namespaces".into(),
                causes: vec![],
            },
        );
    }
    let inner = e.message.strip_prefix("Internal error occurred: ").unwrap_or(&e.message);
    internal_error(inner)
}

/// `apierrors.NewForbidden(resource.GroupResource(), name, err)`.
fn forbidden(req: &AdmissionRequest, err: &str) -> Status {
    let r = &req.resource;
    let qualified =
        if r.group.is_empty() { r.resource.clone() } else { format!("{}.{}", r.resource, r.group) };
    let message = if r.group.is_empty() && r.resource.is_empty() {
        format!("forbidden: {err}")
    } else if req.name.is_empty() {
        format!("{qualified} is forbidden: {err}")
    } else {
        format!("{qualified} {} is forbidden: {err}", go_quote(&req.name))
    };
    status(
        403,
        "Forbidden",
        message,
        StatusDetails {
            name: req.name.clone(),
            group: r.group.clone(),
            kind: r.resource.clone(),
            causes: vec![],
        },
    )
}

fn describe_rules(rules: &[(usize, RuleMismatch)]) -> String {
    if rules.is_empty() {
        return "the webhook has no rules".into();
    }
    let parts: Vec<String> = rules
        .iter()
        .map(|(i, m)| {
            let what = m.field();
            format!("rules[{i}] differs in {what}")
        })
        .collect();
    format!("no rule matches the request: {}", parts.join("; "))
}

/// Why a webhook is skipped (`text`), for the trace only: not written under the summary trace
/// (`Env::reviews` false), whose reader (the audit) reads no webhook's trace. Always in the
/// package.
fn skip_reason(env: &Env<'_>, text: impl FnOnce() -> String) -> String {
    match cfg!(target_arch = "wasm32") || env.reviews {
        true => text(),
        false => String::new(),
    }
}

/// `ShouldCallHook`: namespaceSelector → objectSelector (their errors held back) → rules as
/// sent → equivalent resources (Equivalent only) → held errors → matchConditions.
fn should_call(
    h: &Webhook,
    conditions: &[Compiled],
    cx: MatchContext<'_>,
    env: &Env<'_>,
    trace: &mut WebhookTrace,
) -> Should {
    let req = cx.request;
    let empty = Default::default();
    let ns_err = match namespace_selector(h.namespace_selector.as_ref().unwrap_or(&empty), cx) {
        Ok(Some(r)) => {
            return Should::Skip(skip_reason(env, || crate::admission::dispatcher::describe(&r)))
        }
        Ok(None) => None,
        Err(e) => Some(e),
    };
    let obj_err = match object_selector(h.object_selector.as_ref().unwrap_or(&empty), req) {
        Ok(Some(NoMatchReason::ObjectSelector { requirement })) => {
            return Should::Skip(skip_reason(env, || {
                format!(
                "neither the object's nor the old object's labels satisfy the objectSelector ({requirement})"
            )
            }))
        }
        Ok(Some(r)) => {
            return Should::Skip(skip_reason(env, || crate::admission::dispatcher::describe(&r)))
        }
        Ok(None) => None,
        Err(e) => Some(e),
    };
    let mut mismatches = Vec::new();
    let mut inv = None;
    for (i, r) in h.rules.iter().enumerate() {
        match rule_mismatch(r, req, &req.resource) {
            None if name_matches(r, req) => {
                inv = Some(Invocation {
                    rule: i,
                    resource: req.resource.clone(),
                    kind: req.kind.clone(),
                    equivalent: false,
                });
                break;
            }
            None => mismatches.push((i, RuleMismatch::ResourceName)),
            Some(m) => mismatches.push((i, m)),
        }
    }
    // An equivalent resource differs from the request's only in group or version: a rule
    // whose operations or resources do not select the request matches none of them, and
    // without another rule the catalog is not asked (natively: the audit asks it for every
    // object; the package's wasm is kept smaller).
    let may_match_equivalent =
        || cfg!(target_arch = "wasm32") || h.rules.iter().any(|r| may_match_equivalent(r, req));
    if inv.is_none() && h.match_policy.as_deref() == Some("Equivalent") && may_match_equivalent() {
        let equivalents = cx.catalog.equivalents(&req.resource, &req.sub_resource);
        'rules: for (i, r) in h.rules.iter().enumerate() {
            for eq in equivalents.iter().filter(|e| **e != req.resource) {
                if rule_mismatch(r, req, eq).is_none() {
                    let Some(kind) = cx.catalog.kind_for(eq, &req.sub_resource) else {
                        let e = format!("unable to convert to {eq}: unknown kind");
                        return Should::Reject(internal_error(&e), e);
                    };
                    inv =
                        Some(Invocation { rule: i, resource: eq.clone(), kind, equivalent: true });
                    break 'rules;
                }
            }
        }
    }
    let Some(inv) = inv else {
        return Should::Skip(skip_reason(env, || describe_rules(&mismatches)));
    };
    trace.matched_rule = Some(inv.rule);
    if inv.equivalent {
        trace.equivalent_resource = Some(EquivalentResource {
            resource: json!({"group": inv.resource.group, "version": inv.resource.version, "resource": inv.resource.resource}),
            kind: json!({"group": inv.kind.group, "version": inv.kind.version, "kind": inv.kind.kind}),
        });
    }
    if let Some(e) = ns_err.or(obj_err) {
        let why = format!("the request is rejected: {}", e.message);
        return Should::Reject(match_error_status(&e), why);
    }
    if h.match_conditions.is_empty() {
        return Should::Call(inv);
    }
    let fail = h.failure_policy.as_deref() != Some("Ignore");
    let mcs = &h.match_conditions;
    match match_conditions(mcs, conditions, req, &inv.kind, env, fail, &mut trace.match_conditions)
    {
        Ok(()) => Should::Call(inv),
        Err((None, why)) => Should::Skip(why),
        Err((Some(s), why)) => Should::Reject(*s, why),
    }
}

/// A webhook's matchConditions for a request matched as `kind` (`matchconditions.Matcher
/// .Match`, and what `ShouldCallHook` makes of it), each outcome pushed to `trace`: `Ok` — all
/// true, the webhook is called; `Err((None, why))` — one is false (the first false wins over
/// errors), or one failed and `fail` is false (failurePolicy Ignore): skipped;
/// `Err((Some(status), why))` — one failed under failurePolicy Fail: the request is rejected.
/// Shared by the manifests' webhooks and the ones Kyverno registers per policy.
pub fn match_conditions(
    conditions: &[MatchCondition],
    compiled: &[Compiled],
    req: &AdmissionRequest,
    kind: &GroupVersionKind,
    env: &Env<'_>,
    fail: bool,
    trace: &mut Vec<ConditionResult>,
) -> Result<(), (Option<Box<Status>>, String)> {
    // matchConditions see `request.kind` as matched and `request.resource` as sent [quirk].
    let request = request_cel_value(req, kind, &req.resource);
    let object = req.object.as_ref().map(Value::from_json).unwrap_or(Value::Null);
    let old_object = req.old_object.as_ref().map(Value::from_json).unwrap_or(Value::Null);
    let act = ConditionActivation {
        object,
        old_object,
        request: Value::from_json(&request),
        authorizer: env.authorizer.clone(),
    };
    let mut remaining = RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS;
    let mut whole_error = None;
    let mut results: Vec<Result<bool, String>> = Vec::new();
    for (mc, c) in conditions.iter().zip(compiled) {
        let mut r = ConditionResult {
            name: mc.name.clone(),
            expression: mc.expression.clone(),
            result: None,
            error: None,
            cost: 0,
        };
        let outcome = match &c.program {
            None => Err(format!("compilation error: {}", c.error.as_deref().unwrap_or_default())),
            Some(program) => {
                let mut tracker = CostTracker::new(Some(DEFAULT_COST_LIMIT));
                let v = program.eval(&act, &mut tracker);
                let cost = tracker.actual_cost();
                r.cost = cost;
                if cost > remaining {
                    whole_error = Some(OUT_OF_BUDGET);
                    r.error = Some(OUT_OF_BUDGET.into());
                    trace.push(r);
                    break;
                }
                remaining -= cost;
                match v {
                    Ok(Value::Bool(b)) => Ok(b),
                    Ok(other) => Err(format!(
                        "expression '{}' resulted in error: no such overload: match condition evaluated to {}",
                        c.source,
                        other.type_name()
                    )),
                    Err(e) => {
                        Err(format!("expression '{}' resulted in error: {}", c.source, e.message))
                    }
                }
            }
        };
        match &outcome {
            Ok(b) => r.result = Some(*b),
            Err(e) => r.error = Some(e.clone()),
        }
        trace.push(r);
        results.push(outcome);
    }
    let error = match whole_error {
        Some(e) => Some(e.to_string()),
        None => {
            // The first false wins over any error (matcher.go).
            if let Some(i) = results.iter().position(|r| matches!(r, Ok(false))) {
                let name = conditions.get(i).map(|m| m.name.as_str()).unwrap_or_default();
                return Err((None, format!("matchCondition {name:?} evaluated to false")));
            }
            let errors: Vec<String> = results.iter().filter_map(|r| r.clone().err()).collect();
            (!errors.is_empty()).then(|| aggregate(&errors))
        }
    };
    match error {
        None => Ok(()),
        Some(e) if fail => Err((
            Some(Box::new(forbidden(req, &e))),
            format!(
                "a matchCondition failed and failurePolicy is Fail: the request is rejected ({e})"
            ),
        )),
        Some(e) => Err((
            None,
            format!(
                "a matchCondition failed and failurePolicy is Ignore: the webhook is skipped ({e})"
            ),
        )),
    }
}

struct ConditionActivation<'a> {
    object: Value<'a>,
    old_object: Value<'a>,
    request: Value<'a>,
    authorizer: (Value<'a>, Value<'a>),
}

impl<'a> Activation<'a> for ConditionActivation<'a> {
    fn resolve(&self, name: &str) -> Option<Value<'a>> {
        match name {
            var::OBJECT => Some(self.object.clone()),
            var::OLD_OBJECT => Some(self.old_object.clone()),
            var::REQUEST => Some(self.request.clone()),
            // Declared by the shared admission environment, never bound for webhooks.
            var::NAMESPACE_OBJECT => Some(Value::Null),
            var::AUTHORIZER => Some(self.authorizer.0.clone()),
            var::REQUEST_RESOURCE_AUTHORIZER => Some(self.authorizer.1.clone()),
            _ => None,
        }
    }
}

/// The `AdmissionReview` body for an invocation (`request/admissionreview.go`
/// `CreateAdmissionObjects`): the first of `admissionReviewVersions` the apiserver knows.
fn review(req: &AdmissionRequest, inv: &Invocation, version: &str) -> Json {
    let mut r = match request_cel_value(req, &inv.kind, &inv.resource) {
        Json::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    r.insert("uid".into(), json!(PLACEHOLDER_UID));
    let options = r.remove("options").unwrap_or(Json::Null);
    let dry_run = r.remove("dryRun").unwrap_or(json!(false));
    r.insert("object".into(), req.object.clone().unwrap_or(Json::Null));
    r.insert("oldObject".into(), req.old_object.clone().unwrap_or(Json::Null));
    r.insert("dryRun".into(), dry_run);
    r.insert("options".into(), options);
    json!({
        "kind": "AdmissionReview",
        "apiVersion": format!("admission.k8s.io/{version}"),
        "request": Json::Object(r),
    })
}

/// What happens between "should call" and the HTTP call (`callHook`/`callAttrMutatingHook`):
/// the dry-run check, then building the review. `Err((status, is_call_error))`: a call error
/// (`ErrCallingWebhook`) obeys failurePolicy; any other error rejects.
fn prepare_call(
    h: &Webhook,
    req: &AdmissionRequest,
    inv: &Invocation,
    reviews: bool,
) -> Result<Option<Json>, Box<(Status, bool, String)>> {
    let call_error = |reason: &str| {
        let err = format!("failed calling webhook {}: {reason}", go_quote(&h.name));
        Box::new((internal_error(&err), true, err))
    };
    if req.dry_run {
        match h.side_effects.as_deref() {
            None => return Err(call_error("Webhook SideEffects is nil")),
            Some("None" | "NoneOnDryRun") => {}
            Some(_) => {
                let m = format!("admission webhook {} does not support dry run", go_quote(&h.name));
                return Err(Box::new((
                    status(400, "BadRequest", m.clone(), empty_details()),
                    false,
                    m,
                )));
            }
        }
    }
    let version =
        h.admission_review_versions.iter().find(|v| ACCEPTED_REVIEW_VERSIONS.contains(&v.as_str()));
    match version {
        Some(v) => Ok(reviews.then(|| review(req, inv, v))),
        None => Err(call_error(
            "could not create admission objects: webhook does not accept known AdmissionReview versions",
        )),
    }
}

fn new_trace(c: &WebhookConfiguration, h: &Webhook) -> WebhookTrace {
    WebhookTrace {
        configuration: c.name.clone(),
        kind: c.kind.configuration_kind(),
        name: h.name.clone(),
        called: false,
        reason: None,
        matched_rule: None,
        equivalent_resource: None,
        match_conditions: Vec::new(),
        review: None,
    }
}

/// Every webhook of `kind`, marked as never considered (the chain stopped before the phase).
pub fn not_reached(
    set: &[CompiledConfiguration],
    kind: WebhookKind,
    why: &str,
) -> Vec<WebhookTrace> {
    let mut out = Vec::new();
    for c in set.iter().filter(|c| c.configuration.kind == kind) {
        for h in &c.configuration.webhooks {
            let mut t = new_trace(&c.configuration, h);
            t.reason = Some(why.to_string());
            out.push(t);
        }
    }
    out
}

/// Run one plugin's phase over the configurations of `kind` (already in the apiserver's order).
pub fn dispatch_phase(
    set: &[CompiledConfiguration],
    kind: WebhookKind,
    cx: MatchContext<'_>,
    env: &Env<'_>,
) -> PhaseOutcome {
    if set.iter().all(|c| c.configuration.kind != kind) {
        return PhaseOutcome::default();
    }
    dispatch_configurations(set, kind, cx, env)
}

/// [`dispatch_phase`] when there is a configuration of `kind` (apart: requests without
/// webhooks do not reach this code, nor have the wasm engine compile it).
#[inline(never)]
fn dispatch_configurations(
    set: &[CompiledConfiguration],
    kind: WebhookKind,
    cx: MatchContext<'_>,
    env: &Env<'_>,
) -> PhaseOutcome {
    let req = cx.request;
    let mut out = PhaseOutcome::default();
    if exempt(req, env.version) {
        let why = format!(
            "{} requests are exempt from webhook admission: no webhook is ever called for them",
            req.kind.kind
        );
        out.webhooks = not_reached(set, kind, &why);
        return out;
    }
    let hooks: Vec<(&WebhookConfiguration, usize, &Webhook, &[Compiled])> = set
        .iter()
        .filter(|c| c.configuration.kind == kind)
        .flat_map(|c| {
            c.configuration.webhooks.iter().enumerate().map(move |(i, h)| {
                (&c.configuration, i, h, c.conditions.get(i).map(Vec::as_slice).unwrap_or(&[]))
            })
        })
        .collect();
    // Validating: every ShouldCallHook runs before any call; mutating: one after the other.
    let mut pending: Vec<(usize, Invocation)> = Vec::new();
    for (c, index, h, conds) in &hooks {
        let mut t = new_trace(c, h);
        if out.status.is_some() {
            t.reason = Some("not reached: the request was already rejected".into());
            out.webhooks.push(t);
            continue;
        }
        match should_call(h, conds, cx, env, &mut t) {
            Should::Skip(why) => t.reason = Some(why),
            Should::Reject(s, why) => {
                t.reason = Some(why);
                out.status = Some(s);
            }
            Should::Call(inv) => {
                if inv.equivalent {
                    let field =
                        format!("{}/{}: webhooks[{index}]", kind.configuration_kind(), c.name);
                    out.diagnostics
                        .push(diagnostics::needs_conversion(field, &inv.kind.to_string()));
                }
                if kind == WebhookKind::Validating {
                    pending.push((out.webhooks.len(), inv));
                } else {
                    call(h, req, &inv, env.reviews, &mut t, &mut out.status);
                }
            }
        }
        out.webhooks.push(t);
    }
    if kind == WebhookKind::Validating {
        if out.status.is_some() {
            for (i, _) in &pending {
                if let Some(t) = out.webhooks.get_mut(*i) {
                    t.reason = Some(
                        "not called: another validating webhook's predicates rejected the request before any validating webhook was called".into(),
                    );
                }
            }
            return out;
        }
        // Called in parallel; upstream returns whichever error arrives first [nondet]: the first
        // in order here.
        let mut first: Option<Status> = None;
        for (i, inv) in pending {
            let Some((_, _, h, _)) = hooks.get(i) else { continue };
            if let Some(t) = out.webhooks.get_mut(i) {
                let mut s = None;
                call(h, req, &inv, env.reviews, t, &mut s);
                if first.is_none() {
                    first = s;
                }
            }
        }
        out.status = first;
    }
    out
}

fn call(
    h: &Webhook,
    req: &AdmissionRequest,
    inv: &Invocation,
    reviews: bool,
    t: &mut WebhookTrace,
    status: &mut Option<Status>,
) {
    match prepare_call(h, req, inv, reviews).map_err(|b| *b) {
        Ok(review) => {
            t.called = true;
            t.review = review;
        }
        Err((_, true, err)) if h.failure_policy.as_deref() == Some("Ignore") => {
            t.reason = Some(format!("{err}; failurePolicy is Ignore: the apiserver fails open"));
        }
        Err((s, _, err)) => {
            t.reason = Some(format!("the request is rejected: {err}"));
            *status = Some(s);
        }
    }
}
