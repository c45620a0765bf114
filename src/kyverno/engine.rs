//! Kyverno's engine for one policy and one admission request (`pkg/engine/validation.go`,
//! `engine.go` `invokeRuleHandler`/`matches`, `pkg/engine/internal/match.go`) and its CEL
//! rule handler (`pkg/engine/handlers/validation/validate_cel.go`).
//! `docs/kyverno-semantics.md` §2, §5.
//!
//! The CEL handler builds, from the rule, what the apiserver's VAP validator evaluates
//! (validations, variables, auditAnnotations, matchConditions from `celPreconditions`,
//! failurePolicy `Fail`) and runs it: here that is the VAP [`validate`] step itself, through a
//! [`ValidatingAdmissionPolicy`] value built in memory.

use super::autogen::compute_rules;
use super::matching::{rule_matches, RequestInfo, Target};
use super::policy::{Cel, KyvernoPolicy, Rule};
use crate::admission::compile::{CelCompiler, CompiledPolicy};
use crate::admission::decision::{PolicyDecisionAction, PolicyDecisionEvaluation};
use crate::admission::params::{resolve_param_kind, ParamKindResolution};
use crate::admission::policy_set::PolicySet;
use crate::admission::request::{request_cel_value, AdmissionRequest};
use crate::admission::trace::ParamEvaluation;
use crate::admission::types::{
    ObjectMeta, ParamKind, ParamRef, ValidatingAdmissionPolicy, ValidatingAdmissionPolicySpec,
};
use crate::admission::validator::{validate, Bound};
use crate::cel::value::Value;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;

/// `engineapi.RuleStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleStatus {
    Pass,
    Fail,
    Warn,
    Error,
    Skip,
}

impl RuleStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleStatus::Pass => "pass",
            RuleStatus::Fail => "fail",
            RuleStatus::Warn => "warn",
            RuleStatus::Error => "error",
            RuleStatus::Skip => "skip",
        }
    }
}

/// One rule's response (`engineapi.RuleResponse`), or a rule vap-eval cannot evaluate.
#[derive(Clone, Debug)]
pub struct RuleResponse {
    pub name: String,
    /// `None` for a rule vap-eval does not evaluate (`unsupported` says why).
    pub status: Option<RuleStatus>,
    pub message: String,
    pub unsupported: Option<String>,
    /// `spec.rules[i]` of the written rule (also for generated rules).
    pub path: String,
    /// The VAP validator's trace, one per param.
    pub evaluations: Vec<ParamEvaluation>,
}

/// What the engine returned for one policy.
#[derive(Clone, Debug, Default)]
pub struct EngineResponse {
    pub rules: Vec<RuleResponse>,
    /// Rules of the computed set that did not match, with Kyverno's reason.
    pub not_matched: Vec<(String, String)>,
    /// The rules evaluated (after auto-generation), for failure-action resolution.
    pub computed: Vec<Rule>,
}

/// Everything the engine reads besides the policy.
pub struct Context<'a> {
    pub set: &'a PolicySet,
    pub request: &'a AdmissionRequest,
    pub info: &'a RequestInfo,
    /// Labels of the request's namespace.
    pub namespace_labels: &'a BTreeMap<String, String>,
    /// Kyverno's CEL environment.
    pub compiler: &'a CelCompiler,
}

impl Context<'_> {
    /// The resource the engine works on: the new object, or the old one on DELETE.
    pub fn resource(&self) -> &Json {
        static NULL: Json = Json::Null;
        self.request.object.as_ref().or(self.request.old_object.as_ref()).unwrap_or(&NULL)
    }
}

fn meta<'a>(v: &'a Json, key: &str) -> &'a str {
    v.get("metadata").and_then(|m| m.get(key)).and_then(Json::as_str).unwrap_or_default()
}

/// `engine.Validate` for `policy` restricted to `rules` (the policy cache hands the webhook a
/// copy of the policy with only the rules of one failure action). `None` when the policy does
/// not apply to the resource's namespace (`MatchPolicyContext`).
pub fn validate_policy(
    cx: &Context<'_>,
    policy: &KyvernoPolicy,
    rules: &[Rule],
) -> Option<EngineResponse> {
    if !policy.namespace.is_empty() {
        let in_ns = [cx.request.object.as_ref(), cx.request.old_object.as_ref()]
            .into_iter()
            .flatten()
            .any(|o| meta(o, "namespace") == policy.namespace);
        if !in_ns {
            return None;
        }
    }
    let mut restricted = policy.clone();
    restricted.spec.rules = rules.to_vec();
    let (computed, _) = compute_rules(&restricted, &cx.request.kind.kind);
    let mut out = EngineResponse { computed: computed.clone(), ..EngineResponse::default() };
    let mut applied = 0usize;
    for rule in &computed {
        let validates = rule.validate.is_some();
        if !validates && !rule.has_verify_images {
            continue; // no validation handler: no response
        }
        if let Err(why) = matches(cx, policy, rule) {
            out.not_matched.push((rule.name.clone(), why));
            continue;
        }
        // The generated ValidatingAdmissionPolicy replaces the CEL rule: no response.
        if policy.vap_generated && rule.validate.as_ref().is_some_and(|v| v.cel.is_some()) {
            continue;
        }
        let response = handle(cx, policy, rule);
        if matches!(response.status, Some(RuleStatus::Pass | RuleStatus::Fail)) {
            applied += 1;
        }
        out.rules.push(response);
        if policy.spec.apply_one && applied > 0 {
            break;
        }
    }
    Some(out)
}

/// `engine.matches`: the new resource, else (DELETE) the old one.
fn matches(cx: &Context<'_>, policy: &KyvernoPolicy, rule: &Rule) -> Result<(), String> {
    let r = cx.request;
    let target = |resource: &Json| -> Result<(), String> {
        rule_matches(
            rule,
            &Target {
                resource,
                gvk: &r.kind,
                subresource: &r.sub_resource,
                operation: r.operation.as_str(),
                namespace_labels: cx.namespace_labels,
                info: cx.info,
                policy_namespace: &policy.namespace,
            },
        )
    };
    let first = target(r.object.as_ref().unwrap_or(&Json::Null));
    match (&r.object, &r.old_object) {
        (None, Some(old)) if first.is_err() => target(old).or(first),
        _ => first,
    }
}

fn unsupported(rule: &Rule, what: String) -> RuleResponse {
    RuleResponse {
        name: rule.name.clone(),
        status: None,
        message: String::new(),
        unsupported: Some(what),
        path: rule.path.clone(),
        evaluations: Vec::new(),
    }
}

fn response(rule: &Rule, status: RuleStatus, message: String) -> RuleResponse {
    RuleResponse {
        name: rule.name.clone(),
        status: Some(status),
        message,
        unsupported: None,
        path: rule.path.clone(),
        evaluations: Vec::new(),
    }
}

/// The handler Kyverno picks for a matched rule; only the CEL one is evaluated here.
fn handle(cx: &Context<'_>, policy: &KyvernoPolicy, rule: &Rule) -> RuleResponse {
    let Some(v) = &rule.validate else {
        return unsupported(
            rule,
            "verifyImages (image verification) is not evaluated by vap-eval".into(),
        );
    };
    if !v.other.is_empty() {
        return unsupported(
            rule,
            format!(
                "validate.{} is evaluated by Kyverno without CEL; vap-eval does not evaluate it",
                v.other[0]
            ),
        );
    }
    let Some(cel) = &v.cel else {
        return unsupported(
            rule,
            "the validate rule has no cel block; vap-eval evaluates only validate.cel".into(),
        );
    };
    if rule.has_context {
        return unsupported(
            rule,
            "context (JMESPath variables, API calls, ConfigMaps) is loaded by Kyverno before the rule runs; vap-eval does not load it".into(),
        );
    }
    if rule.has_preconditions {
        return unsupported(
            rule,
            "preconditions are JMESPath conditions; vap-eval evaluates only celPreconditions"
                .into(),
        );
    }
    validate_cel(cx, policy, rule, cel, &v.message)
}

/// The in-memory ValidatingAdmissionPolicy Kyverno's CEL handler evaluates for `rule`: a
/// validation without message takes the rule's `validate.message`; `params` is declared only
/// when both paramKind and paramRef are set; failurePolicy is `Fail` (the handler passes none).
pub fn policy_for_rule(rule: &Rule, cel: &Cel, message: &str) -> ValidatingAdmissionPolicy {
    let mut validations = cel.expressions.clone();
    for v in &mut validations {
        if v.message.is_empty() {
            v.message = message.to_string();
        }
    }
    ValidatingAdmissionPolicy {
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: "ValidatingAdmissionPolicy".into(),
        metadata: ObjectMeta { name: rule.name.clone(), ..ObjectMeta::default() },
        spec: ValidatingAdmissionPolicySpec {
            param_kind: if cel.has_param() { cel.param_kind.clone() } else { None },
            match_constraints: None,
            validations,
            failure_policy: Some("Fail".into()),
            audit_annotations: cel.audit_annotations.clone(),
            match_conditions: rule.cel_preconditions.clone(),
            variables: cel.variables.clone(),
        },
    }
}

fn validate_cel(
    cx: &Context<'_>,
    policy: &KyvernoPolicy,
    rule: &Rule,
    cel: &Cel,
    message: &str,
) -> RuleResponse {
    let _ = policy;
    let vap = policy_for_rule(rule, cel, message);
    let compiled = CompiledPolicy::new(&vap, cx.compiler);
    let r = cx.request;
    let gvk = &r.kind;
    let with_gvk = |o: &Json| {
        let mut o = o.clone();
        if let Some(m) = o.as_object_mut() {
            m.insert("apiVersion".into(), Json::String(gvk.api_version()));
            m.insert("kind".into(), Json::String(gvk.kind.clone()));
        }
        o
    };
    let object = r.object.as_ref().map(with_gvk);
    let old_object = r.old_object.as_ref().map(with_gvk);
    let source = object.as_ref().or(old_object.as_ref()).cloned().unwrap_or(Json::Null);
    let mut ns = meta(&source, "namespace").to_string();
    let name = meta(&source, "name").to_string();
    if gvk.group.is_empty() && gvk.version == "v1" && gvk.kind == "Namespace" {
        ns.clear();
    }
    // The admission controller reads the namespace from the cluster; one not supplied is
    // taken as a Namespace with only its name (what the Kyverno CLI uses).
    let namespace = (!ns.is_empty()).then(|| {
        cx.set.manifests.namespaces.get(&ns).cloned().unwrap_or_else(
            || json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        )
    });
    // The attributes Kyverno builds: no subresource, no options, never a dry run.
    let mut attrs = r.clone();
    attrs.sub_resource.clear();
    attrs.request_sub_resource.clear();
    attrs.request_kind = r.kind.clone();
    attrs.request_resource = r.resource.clone();
    attrs.name = name;
    attrs.namespace = ns.clone();
    attrs.dry_run = false;
    attrs.options = None;
    let request_value = request_cel_value(&attrs, &attrs.kind, &attrs.resource);
    let params: Vec<Option<Json>> = if cel.has_param() {
        match (&cel.param_kind, &cel.param_ref) {
            (Some(pk), Some(pr)) => match collect_params(cx, pk, pr, &ns) {
                Ok(p) => p.into_iter().map(Some).collect(),
                Err(e) => {
                    return response(
                        rule,
                        RuleStatus::Error,
                        format!("error in parameterized resource: {e}"),
                    )
                }
            },
            _ => vec![None],
        }
    } else {
        vec![None]
    };
    let object_v = object.as_ref().map(Value::from_json).unwrap_or(Value::Null);
    let old_v = old_object.as_ref().map(Value::from_json).unwrap_or(Value::Null);
    let ns_v = namespace.as_ref().map(Value::from_json).unwrap_or(Value::Null);
    let authz = Some(cx.set.authorizer(&attrs));
    let mut evaluations = Vec::new();
    let mut outcome: Option<RuleResponse> = None;
    for param in &params {
        let bound = Bound {
            object: object_v.clone(),
            old_object: old_v.clone(),
            params: param.as_ref().map(Value::from_json).unwrap_or(Value::Null),
            request: Value::from_json(&request_value),
            namespace_object: ns_v.clone(),
            authorizer: authz.clone(),
        };
        let out = validate(&vap, &compiled, &bound);
        let mut trace = out.trace;
        if let Some(p) = param {
            trace.param = Some(crate::admission::trace::ParamRefTrace {
                namespace: meta(p, "namespace").to_string(),
                name: meta(p, "name").to_string(),
            });
        }
        evaluations.push(trace);
        if outcome.is_some() {
            continue;
        }
        // An empty result (preconditions not met, or nothing to evaluate) skips the rule.
        if out.decisions.is_empty() && out.audit.is_empty() {
            outcome = Some(response(rule, RuleStatus::Skip, "cel preconditions not met".into()));
            continue;
        }
        for d in &out.decisions {
            match d.action {
                PolicyDecisionAction::Admit if d.evaluation == PolicyDecisionEvaluation::Error => {
                    outcome = Some(response(rule, RuleStatus::Error, d.message.clone()));
                    break;
                }
                PolicyDecisionAction::Deny => {
                    outcome = Some(response(rule, RuleStatus::Fail, d.message.clone()));
                    break;
                }
                _ => {}
            }
        }
    }
    let mut r = outcome.unwrap_or_else(|| {
        response(rule, RuleStatus::Pass, format!("Validation rule '{}' passed.", rule.name))
    });
    r.evaluations = evaluations;
    r
}

/// `admissionpolicy.CollectParams`: the params a rule evaluates with. `Err` is the text after
/// `error in parameterized resource: `.
fn collect_params(
    cx: &Context<'_>,
    kind: &ParamKind,
    r: &ParamRef,
    namespace: &str,
) -> Result<Vec<Json>, String> {
    let manifests = &cx.set.manifests;
    if crate::admission::resources::parse_group_version(&kind.api_version).is_err() {
        return Err("can't parse the parameter resource group version".into());
    }
    let catalog = &cx.set.catalog;
    let (gvk, namespaced) = match resolve_param_kind(Some(kind), catalog, &manifests.params) {
        ParamKindResolution::Resolved { gvk, namespaced, .. } => (gvk, namespaced),
        ParamKindResolution::Unresolvable { message }
        | ParamKindResolution::Dropped { reason: message } => {
            return Err(format!("failed to check if resource is namespaced or not ({message})"))
        }
        ParamKindResolution::None => return Ok(Vec::new()),
    };
    let search_ns = if namespaced {
        if !r.namespace.is_empty() {
            r.namespace.as_str()
        } else if namespace.is_empty() {
            return Err("can't use namespaced paramRef to match cluster-scoped resources".into());
        } else {
            namespace
        }
    } else {
        if !r.namespace.is_empty() {
            return Err(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into()
            );
        }
        ""
    };
    let in_scope = |p: &&crate::admission::params::ParamObject| {
        p.gvk.group == gvk.group && p.gvk.kind == gvk.kind && p.namespace == search_ns
    };
    let mut found: Vec<Json> = Vec::new();
    if !r.name.is_empty() {
        match manifests.params.iter().filter(in_scope).find(|p| p.name == r.name) {
            Some(p) => return Ok(vec![p.value.clone()]),
            None => {
                let resource = catalog
                    .by_kind(&gvk)
                    .map(|e| e.gvr().resource)
                    .unwrap_or_else(|| format!("{}s", gvk.kind.to_ascii_lowercase()));
                let gr = if gvk.group.is_empty() {
                    resource
                } else {
                    format!("{resource}.{}", gvk.group)
                };
                return Err(format!("{gr} \"{}\" not found", r.name));
            }
        }
    } else if let Some(sel) = &r.selector {
        let sel = crate::admission::labels::Selector::from_label_selector(sel)?;
        found = manifests
            .params
            .iter()
            .filter(in_scope)
            .filter(|p| sel.matches(&p.labels))
            .map(|p| p.value.clone())
            .collect();
    }
    if found.is_empty() && r.parameter_not_found_action.as_deref() == Some("Deny") {
        return Err("no params found".into());
    }
    Ok(found)
}
