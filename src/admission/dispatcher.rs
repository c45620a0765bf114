//! The request-level loop (apiserver `generic/plugin.go` `Dispatch` and
//! `validating/dispatcher.go`; spec §1.2–§1.8): for each policy (sorted by name) that has a
//! binding and matches, for each of its bindings (sorted) that matches, for each param —
//! [`validate`](super::validator::validate), route the decisions through the binding's
//! validationActions, collect audit annotations; then build the response from the first denial.

use super::compile::CompiledPolicy;
use super::decision::{
    configuration_error, forbidden_status, resource_name_for_error, AuditAnnotationAction,
    AuditAnnotationCollector, BindingRef, ConfigErrorScope, PolicyDecisionAction, Response, Status,
    StatusCause, StatusDetails, VALIDATION_FAILURE_ANNOTATION_KEY,
};
use super::manifests::{Loaded, Manifests};
#[cfg(not(target_arch = "wasm32"))]
use super::matching::matches_given;
use super::matching::{
    binding_matches, policy_matches, prefilter, MatchContext, MatchResult, NoMatchReason,
};
use super::namespaces::Namespaces;
use super::params::{collect_params, ParamKindResolution, Params};
use super::policy_set::{PolicySet, UnboundPolicies};
use super::request::{request_cel_value, AdmissionRequest};
use super::trace::{BindingTrace, ParamEvaluation, ParamRefTrace, PolicyTrace};
use super::types::{ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding};
use super::validator::{validate, Authorizer, Bound, RequestValue};
use crate::cel::value::Value;
use crate::diagnostic::{Diagnostic, SourceRef, Span};
use serde::Serialize;
use serde_json::Value as Json;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// What the client receives (spec §1.8, §2).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct AdmissionResponse {
    pub allowed: bool,
    /// The rejection, exactly as the apiserver builds it; absent when allowed.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::out_of_line::option"
    )]
    pub status: Option<Status>,
    /// Warning texts in emission order (those the apiserver would drop as headers are dropped).
    pub warnings: Vec<String>,
    pub audit_annotations: BTreeMap<String, String>,
}

/// The whole outcome of dispatching one request.
pub struct Dispatched {
    pub response: AdmissionResponse,
    pub policies: Vec<PolicyTrace>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Where the first denial sits in the trace.
#[derive(Clone, Copy)]
struct TraceIndex {
    policy: usize,
    binding: usize,
    evaluation: usize,
    validation: usize,
}

/// Dispatch `request` over the policies and bindings of `set`.
pub fn dispatch(
    set: &PolicySet,
    request: &AdmissionRequest,
    namespaces: &Namespaces,
) -> Dispatched {
    let mut out = Dispatched {
        response: AdmissionResponse::default(),
        policies: Vec::with_capacity(set.manifests.policies.len()),
        diagnostics: Vec::new(),
    };
    let manifests = &set.manifests;
    let mut real_response = Response::default();
    let catalog = &set.catalog;
    let cx = MatchContext { request, namespaces, catalog };
    let prefiltered = prefilter(request);
    let mut first: Option<TraceIndex> = None;
    // The policies evaluated through a hypothetical binding (their trace index).
    let mut unbound = Vec::new();
    // Per request, not per policy or binding: the CEL views of the objects, the `request`
    // values, the stripped namespace object and the authorizer.
    let object = request.object.as_ref().map(Value::from_json).unwrap_or(Value::Null);
    let old_object = request.old_object.as_ref().map(Value::from_json).unwrap_or(Value::Null);
    // `request` depends only on the request and the matched (kind, resource), which is always
    // the request's own where it is read (a match only through an equivalent is not
    // evaluated, and any other match is as the request's resource and kind,
    // `matching::rules_result`): built once per request, and only when an expression reads it.
    let own_request_value: std::cell::OnceCell<Json> = std::cell::OnceCell::new();
    let make_request = || request_cel_value(request, &request.kind, &request.resource);
    let namespace_stripped: std::cell::OnceCell<Option<Cow<'_, Json>>> = std::cell::OnceCell::new();
    let authorizer = std::cell::OnceCell::new();
    // The request's namespace, looked up once (for the first binding that needs it).
    let namespace_json: std::cell::OnceCell<Option<&Json>> = std::cell::OnceCell::new();
    let make_authorizer = || set.authorizer(request);
    // The resource rules' results for requests of this kind (the audit), or `None`.
    let rules = set.rules_for(request);
    let rules = rules.as_deref();

    for (policy_at, (((policy, compiled), param_kind), own_bindings)) in (manifests.policies.iter())
        .zip(&set.compiled)
        .zip(&set.param_kinds)
        .zip(&set.policy_bindings)
        .enumerate()
    {
        let p = &policy.object;
        let name = p.metadata.name.as_str();
        let mut trace = PolicyTrace { name: name.to_string(), ..PolicyTrace::default() };
        if let Some(why) = prefiltered {
            trace.reason = why.to_string();
            out.policies.push(trace);
            continue;
        }
        // The policy's bindings (with their index in the manifests), or the hypothetical one.
        let own_bindings = own_bindings
            .iter()
            .filter_map(|&i| manifests.bindings.get(i).map(|b| (Some(i), &b.object)));
        // Half a setup (issue 13): an unbound policy may be evaluated as if bound with Deny;
        // under `preview` its decisions go to a scratch response, never the real one.
        let mut hypothetical_binding = None;
        let mut scratch;
        let hypothetical = own_bindings.clone().next().is_none();
        let response = if hypothetical {
            if set.setup.unbound_policies == UnboundPolicies::Skip {
                trace.reason = NEVER_EVALUATED.into();
                out.policies.push(trace);
                continue;
            }
            hypothetical_binding = Some(hypothetical_binding_for(name));
            unbound.push(out.policies.len());
            match set.setup.unbound_policies {
                UnboundPolicies::Bind => &mut real_response,
                _ => {
                    scratch = Response::default();
                    &mut scratch
                }
            }
        } else {
            &mut real_response
        };
        // Only decisions that reach the real response can be its first denial.
        let counts = !hypothetical || set.setup.unbound_policies == UnboundPolicies::Bind;
        let fp = p.spec.failure_policy.as_deref();
        if let ParamKindResolution::Dropped { reason } = param_kind {
            trace.reason = dropped_reason(reason);
            out.policies.push(trace);
            continue;
        }
        let given = rules.and_then(|r| r.policies.get(policy_at)).and_then(Option::as_ref);
        let result = match (p.spec.match_constraints.as_ref(), given) {
            #[cfg(not(target_arch = "wasm32"))]
            (Some(mr), Some(given)) => matches_given(mr, cx, given),
            (constraints, _) => Cow::Owned(policy_matches(constraints, cx)),
        };
        let matched = match &*result {
            MatchResult::Matched(m) => m,
            MatchResult::NotMatched(why) => {
                if !set.summary() {
                    trace.reason = describe(why);
                }
                out.policies.push(trace);
                continue;
            }
            MatchResult::Error(e) => {
                trace.matched = true;
                policy_config_error(response, &mut trace, name, fp, &e.message);
                out.policies.push(trace);
                continue;
            }
        };
        trace.matched = true;
        if !set.summary() {
            trace.reason = format!("matched {} ({})", matched.resource, matched.kind);
        }
        if matched.via_equivalent {
            needs_conversion(&mut out, trace, &matched.kind, name);
            continue;
        }
        if let ParamKindResolution::Unresolvable { message } = param_kind {
            policy_config_error(response, &mut trace, name, fp, message);
            out.policies.push(trace);
            continue;
        }

        let mut collector = AuditAnnotationCollector::default();
        let policy_index = out.policies.len();

        let bindings = own_bindings.chain(hypothetical_binding.iter().map(|b| (None, b)));
        for (binding_at, b) in bindings {
            let mut bt = BindingTrace {
                name: b.metadata.name.clone(),
                // (Not read from the summary trace.)
                validation_actions: match set.summary() {
                    true => Vec::new(),
                    false => b.spec.validation_actions.clone(),
                },
                hypothetical,
                ..BindingTrace::default()
            };
            let given = binding_at
                .and_then(|j| rules.and_then(|r| r.bindings.get(j)))
                .and_then(Option::as_ref);
            let result = match (b.spec.match_resources.as_ref(), given) {
                // No matchResources matches (`binding_matches`), as the request's own.
                (None, _) => None,
                #[cfg(not(target_arch = "wasm32"))]
                (Some(mr), Some(given)) => Some(matches_given(mr, cx, given)),
                (match_resources, _) => Some(Cow::Owned(binding_matches(match_resources, cx))),
            };
            match result.as_deref() {
                None | Some(MatchResult::Matched(_)) => {}
                Some(MatchResult::NotMatched(why)) => {
                    if !set.summary() {
                        bt.reason = describe(why);
                    }
                    trace.bindings.push(bt);
                    continue;
                }
                Some(MatchResult::Error(e)) => {
                    bt.matched = true;
                    binding_config_error(response, &mut bt, name, fp, &e.message);
                    trace.bindings.push(bt);
                    continue;
                }
            }
            bt.matched = true;
            if hypothetical {
                bt.reason = HYPOTHETICAL.into();
            } else if !set.summary() {
                bt.reason = "matched".into();
            }
            let params = match collect_params(
                param_kind,
                b.spec.param_ref.as_ref(),
                &request.namespace,
                &manifests.params,
            ) {
                Ok(params) => params,
                Err(e) => {
                    binding_config_error(response, &mut bt, name, fp, &e);
                    trace.bindings.push(bt);
                    continue;
                }
            };
            // The namespace fetch (spec §1.5 step 4): a missing namespace is the admission error
            // itself — no failurePolicy, no validationActions [quirk].
            let ns_name = if request.is_namespace_resource() && request.kind.kind == "Namespace" {
                ""
            } else {
                request.namespace.as_str()
            };
            let namespace_json = *namespace_json.get_or_init(|| {
                if ns_name.is_empty() {
                    None
                } else {
                    namespaces.get(ns_name)
                }
            });
            if !ns_name.is_empty() && namespace_json.is_none() {
                if !counts {
                    bt.reason = hypothetical_namespace_missing(ns_name);
                    trace.bindings.push(bt);
                    continue;
                }
                namespace_missing(&mut out, trace, bt, hypothetical, response, ns_name);
                return out;
            }
            // The same namespace (the request's) for every binding that reaches here.
            let namespace_object = namespace_stripped
                .get_or_init(|| namespace_json.map(strip_namespace))
                .as_deref()
                .map(Value::from_json)
                .unwrap_or(Value::Null);

            let evaluations: Vec<(Option<ParamRefTrace>, Value<'_>)> = match &params {
                Params::Undeclared | Params::Null => vec![(None, Value::Null)],
                Params::Objects(objects) => objects
                    .iter()
                    .map(|o| (Some(param_ref(o)), Value::from_json(o.as_ref())))
                    .collect(),
            };
            if evaluations.is_empty() {
                bt.reason =
                    "matched; no params found and parameterNotFoundAction is Allow: not evaluated"
                        .into();
            }
            for (param, params_value) in evaluations {
                let bound = Bound {
                    object: object.clone(),
                    old_object: old_object.clone(),
                    params: params_value,
                    request: RequestValue::Lazy { cell: &own_request_value, make: &make_request },
                    namespace_object: namespace_object.clone(),
                    authorizer: Authorizer::Lazy { cell: &authorizer, make: &make_authorizer },
                    summary_trace: set.summary(),
                };
                let outcome = validate(p, compiled, &bound);
                let mut evaluation: ParamEvaluation = ParamEvaluation { param, ..outcome.trace };
                let denied_before = response.denied.len();
                response.route(
                    name,
                    BindingRef {
                        name: &b.metadata.name,
                        policy_name: &b.spec.policy_name,
                        validation_actions: &b.spec.validation_actions,
                    },
                    &outcome.decisions,
                );
                // Record what validationActions did with each non-admit decision (made only
                // when there is one).
                let deny =
                    |d: &&super::decision::PolicyDecision| d.action == PolicyDecisionAction::Deny;
                if outcome.decisions.iter().any(|d| deny(&d)) {
                    let actions: Vec<String> = b
                        .spec
                        .validation_actions
                        .iter()
                        .filter(|a| matches!(a.as_str(), "Deny" | "Warn" | "Audit"))
                        .cloned()
                        .collect();
                    for (i, d) in outcome.decisions.iter().enumerate() {
                        if deny(&d) {
                            if let Some(v) = evaluation.validations.get_mut(i) {
                                v.actions = actions.clone();
                            }
                        }
                    }
                }
                if counts && first.is_none() && response.denied.len() > denied_before {
                    let validation = outcome
                        .decisions
                        .iter()
                        .position(|d| d.action == PolicyDecisionAction::Deny)
                        .unwrap_or(0);
                    first = Some(TraceIndex {
                        policy: policy_index,
                        binding: trace.bindings.len(),
                        evaluation: bt.evaluations.len(),
                        validation,
                    });
                }
                for (key, action) in &outcome.audit {
                    match action {
                        AuditAnnotationAction::Publish(v) => collector.add(key, v),
                        AuditAnnotationAction::Error(e) => {
                            response.deny_audit_annotation_error(name, &b.metadata.name, e);
                        }
                        AuditAnnotationAction::Exclude => {}
                    }
                }
                bt.evaluations.push(evaluation);
            }
            trace.bindings.push(bt);
        }
        response.publish(name, collector);
        out.policies.push(trace);
    }

    // §1.8: the validation_failure annotation, then the first denial.
    for i in unbound {
        if let Some(t) = out.policies.get_mut(i) {
            t.reason = format!("{NEVER_EVALUATED}; {}", t.reason);
        }
    }
    let mut response = real_response;
    if let Some(v) = response.validation_failure() {
        response.audit_annotations.insert(VALIDATION_FAILURE_ANNOTATION_KEY.to_string(), v);
    }
    let status = response.denied.first().map(|d| denial_status(d, request));
    if let (Some(at), Some(_)) = (first, &status) {
        if let Some(v) = out
            .policies
            .get_mut(at.policy)
            .and_then(|p| p.bindings.get_mut(at.binding))
            .and_then(|b| b.evaluations.get_mut(at.evaluation))
            .and_then(|e| e.validations.get_mut(at.validation))
        {
            v.first_denial = true;
        }
    }
    out.response = AdmissionResponse {
        allowed: status.is_none(),
        status,
        warnings: response.warnings.texts(),
        audit_annotations: response.audit_annotations,
    };
    out
}

/// The trace reason of a policy whose paramKind does not parse (out of line, as the other
/// paths below that the usual request does not take: V8 compiles a function whole on its first
/// call, so cold code inlined here costs a page's first `evaluate()`).
#[cold]
#[inline(never)]
fn dropped_reason(reason: &str) -> String {
    format!("paramKind.apiVersion does not parse ({reason}): the apiserver drops the policy")
}

/// A policy matched only through an equivalent resource: not evaluated, said so.
#[cold]
#[inline(never)]
fn needs_conversion(
    out: &mut Dispatched,
    mut trace: PolicyTrace,
    kind: &super::resources::GroupVersionKind,
    name: &str,
) {
    trace.reason = format!(
        "matched only through matchPolicy: Equivalent as {kind}; the apiserver would convert the object to that version first, which vap-eval cannot do, so the policy was not evaluated",
    );
    out.diagnostics.push(
        Diagnostic::warning("policy-needs-conversion", trace.reason.clone())
            .with_field(format!("ValidatingAdmissionPolicy/{name}: spec.matchConstraints")),
    );
    out.policies.push(trace);
}

/// The reason of a hypothetical binding whose namespace is missing.
#[cold]
#[inline(never)]
fn hypothetical_namespace_missing(ns_name: &str) -> String {
    format!("{HYPOTHETICAL}; namespaces \"{ns_name}\" not found")
}

/// The request's namespace is missing: the 404 is the response, nothing after it runs.
#[cold]
#[inline(never)]
fn namespace_missing(
    out: &mut Dispatched,
    mut trace: PolicyTrace,
    bt: BindingTrace,
    hypothetical: bool,
    response: &Response,
    ns_name: &str,
) {
    trace.bindings.push(bt);
    if hypothetical {
        trace.reason = format!("{NEVER_EVALUATED}; {}", trace.reason);
    }
    out.policies.push(trace);
    out.response = AdmissionResponse {
        allowed: false,
        status: Some(namespace_not_found(ns_name)),
        warnings: response.warnings.texts(),
        audit_annotations: BTreeMap::new(),
    };
    out.diagnostics.push(
        Diagnostic::error(
            "namespace-not-found",
            format!("namespaces \"{ns_name}\" not found: supply the Namespace object with the manifests"),
        )
        .with_help("kube-apiserver fetches the request's namespace for every evaluated binding; when it does not exist the request fails with 404 NotFound"),
    );
}

/// The response's status for the first denial (out of line: a first `evaluate()` that admits
/// need not compile it).
#[inline(never)]
fn denial_status(d: &super::decision::DeniedDecision, request: &AdmissionRequest) -> Status {
    let name = resource_name_for_error(
        &request.name,
        request.object.as_ref().or(request.old_object.as_ref()),
    );
    forbidden_status(d, &request.resource.group, &request.resource.resource, &name)
}

/// The trace reason of a policy no binding references.
const NEVER_EVALUATED: &str =
    "no binding references this policy: it is never evaluated (spec §1.3)";

/// The reason of the hypothetical binding an unbound policy is evaluated with.
const HYPOTHETICAL: &str =
    "hypothetical: no binding exists; evaluated as if bound with validationActions [Deny] (option unboundPolicies)";

/// The binding an unbound policy is evaluated with under `unboundPolicies: preview | bind`:
/// validationActions [Deny], no matchResources, no paramRef (Kyverno CLI's assumption). Its
/// name cannot be a real binding's (object names have no parentheses).
#[inline(never)]
fn hypothetical_binding_for(policy: &str) -> ValidatingAdmissionPolicyBinding {
    let mut b = ValidatingAdmissionPolicyBinding::default();
    b.metadata.name = "(hypothetical)".into();
    b.spec.policy_name = policy.to_string();
    b.spec.validation_actions = vec!["Deny".into()];
    b
}

#[cold]
#[inline(never)]
fn policy_config_error(
    response: &mut Response,
    trace: &mut PolicyTrace,
    policy: &str,
    fp: Option<&str>,
    err: &str,
) {
    trace.configuration_error = Some(err.to_string());
    trace.reason = format!("configuration error: {err}");
    if let Some(d) = configuration_error(fp, ConfigErrorScope::Policy, err) {
        response.deny_configuration(policy, None, d);
    }
}

#[cold]
#[inline(never)]
fn binding_config_error(
    response: &mut Response,
    trace: &mut BindingTrace,
    policy: &str,
    fp: Option<&str>,
    err: &str,
) {
    trace.configuration_error = Some(err.to_string());
    trace.reason = format!("configuration error: {err}");
    if let Some(d) = configuration_error(fp, ConfigErrorScope::Binding, err) {
        response.deny_configuration(policy, Some(&trace.name), d);
    }
}

/// The 404 the apiserver returns when the request's namespace does not exist.
fn namespace_not_found(ns: &str) -> Status {
    Status {
        kind: "Status",
        api_version: "v1",
        metadata: BTreeMap::new(),
        status: "Failure",
        message: format!("namespaces \"{ns}\" not found"),
        reason: "NotFound".into(),
        details: StatusDetails {
            name: ns.to_string(),
            group: String::new(),
            kind: "namespaces".into(),
            causes: Vec::<StatusCause>::new(),
        },
        code: 404,
    }
}

/// The fields of `namespaceObject.metadata` the apiserver strips (spec §4.2).
const STRIPPED: [&str; 3] = ["managedFields", "ownerReferences", "selfLink"];

/// `namespaceObject` without the fields the apiserver strips: the namespace itself when it has
/// none of them (no copy per request).
fn strip_namespace(ns: &Json) -> Cow<'_, Json> {
    let meta = ns.get("metadata").and_then(Json::as_object);
    match meta.is_some_and(|m| STRIPPED.iter().any(|k| m.contains_key(*k))) {
        true => Cow::Owned(stripped_copy(ns)),
        false => Cow::Borrowed(ns),
    }
}

/// [`strip_namespace`]'s copy (out of line: supplied namespaces rarely carry those fields).
#[cold]
#[inline(never)]
fn stripped_copy(ns: &Json) -> Json {
    let mut ns = ns.clone();
    if let Some(meta) = ns.get_mut("metadata").and_then(Json::as_object_mut) {
        for k in STRIPPED.iter() {
            meta.remove(*k);
        }
    }
    ns
}

fn param_ref(o: &Json) -> ParamRefTrace {
    let meta = o.get("metadata");
    let get = |k: &str| {
        meta.and_then(|m| m.get(k)).and_then(Json::as_str).unwrap_or_default().to_string()
    };
    ParamRefTrace { namespace: get("namespace"), name: get("name") }
}

/// A sentence for why a MatchResources did not select the request.
#[inline(never)]
pub fn describe(why: &NoMatchReason) -> String {
    match why {
        NoMatchReason::NamespaceSelector { namespace, requirement } => {
            format!(
                "namespace {namespace:?} does not satisfy the namespaceSelector ({requirement})"
            )
        }
        NoMatchReason::ObjectSelector { requirement } => {
            format!("the object's labels do not satisfy the objectSelector ({requirement})")
        }
        NoMatchReason::Excluded { rule } => format!("excluded by excludeResourceRules[{rule}]"),
        NoMatchReason::NoRule { rules } => {
            let parts: Vec<String> = rules
                .iter()
                .map(|(i, m)| {
                    let what = m.field();
                    format!("resourceRules[{i}] differs in {what}")
                })
                .collect();
            if parts.is_empty() {
                "no resourceRules".into()
            } else {
                parts.join("; ")
            }
        }
    }
}

/// Positioned diagnostics for every expression of `policy` that failed to compile.
pub(super) fn compile_diagnostics(
    text: &str,
    manifests: &Manifests,
    policy: &Loaded<ValidatingAdmissionPolicy>,
    compiled: &CompiledPolicy,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let object = format!("ValidatingAdmissionPolicy/{}", policy.object.metadata.name);
    let mut push = |path: String, c: &crate::cel::compile::Compiled| {
        out.extend(cel_compile_diagnostics(text, manifests, &policy.source, &object, &path, c));
    };
    for (i, v) in compiled.variables.iter().enumerate() {
        push(format!("spec.variables[{i}].expression"), &v.compiled);
    }
    for (i, (_, c)) in compiled.match_conditions.iter().enumerate() {
        push(format!("spec.matchConditions[{i}].expression"), c);
    }
    for (i, v) in compiled.validations.iter().enumerate() {
        push(format!("spec.validations[{i}].expression"), &v.expression);
        if let Some(m) = &v.message_expression {
            push(format!("spec.validations[{i}].messageExpression"), m);
        }
    }
    for (i, (_, c)) in compiled.audit_annotations.iter().enumerate() {
        push(format!("spec.auditAnnotations[{i}].valueExpression"), c);
    }
    out
}

/// `cel-compile` diagnostics for the expression at `path` of `object` (as diagnostics name it,
/// e.g. `ValidatingAdmissionPolicy/x`), read from `source`: one per issue, at its position;
/// none when it compiled.
pub(crate) fn cel_compile_diagnostics(
    text: &str,
    manifests: &Manifests,
    source: &super::manifests::Source,
    object: &str,
    path: &str,
    c: &crate::cel::compile::Compiled,
) -> Vec<Diagnostic> {
    if c.error.is_none() {
        return Vec::new();
    }
    let field = format!("{object}: {path}");
    let at = |issue: &crate::cel::compile::Issue| {
        let d = Diagnostic::error("cel-compile", issue.message.clone()).with_field(field.clone());
        position_issue(text, manifests, source, path, c, issue, d)
    };
    c.issues.iter().map(at).collect()
}

/// Give `d` the manifest position of `issue` inside the expression at `path` of the object at
/// `source` (the whole expression's position when the issue has none).
pub(crate) fn position_issue(
    text: &str,
    manifests: &Manifests,
    source: &super::manifests::Source,
    path: &str,
    c: &crate::cel::compile::Compiled,
    issue: &crate::cel::compile::Issue,
    mut d: Diagnostic,
) -> Diagnostic {
    let whole = manifests.locate(source, path);
    let located = issue.span.and_then(|span| {
        let at = |offset: u32| {
            manifests.locate_in_string(text, source, path, &c.source, offset as usize)
        };
        let start = at(span.start)?.start;
        let end = at(span.end).map(|s| s.start).unwrap_or(start);
        Some(Span { start, end: end.max(start) })
    });
    match (located, whole) {
        (Some(span), Some((document, _))) => {
            d = d.with_span(span, SourceRef::Manifest { document })
        }
        (None, Some((document, pos))) => {
            d = d.with_span(pos.span, SourceRef::Manifest { document })
        }
        _ => {}
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_object_strips_only_what_the_apiserver_strips() {
        let plain: Json = serde_json::from_str(
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a","labels":{"x":"y"}}}"#,
        )
        .unwrap();
        assert!(matches!(strip_namespace(&plain), Cow::Borrowed(v) if *v == plain));
        let full: Json = serde_json::from_str(
            r#"{"kind":"Namespace","metadata":{"name":"a","managedFields":[{"manager":"m"}],"uid":"u","ownerReferences":[],"selfLink":"/x","labels":{}}}"#,
        )
        .unwrap();
        let stripped = strip_namespace(&full);
        // The keys left in the order the removals leave them (a map removal moves the last key).
        let keys: Vec<&str> =
            stripped["metadata"].as_object().unwrap().keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, ["name", "labels", "uid"]);
        assert!(matches!(stripped, Cow::Owned(_)));
    }
}
