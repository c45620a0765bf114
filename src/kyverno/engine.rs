//! Kyverno's engine for one policy and one admission request (`pkg/engine/validation.go`,
//! `engine.go` `invokeRuleHandler`/`matches`, `pkg/engine/internal/match.go`) and its CEL
//! rule handler (`pkg/engine/handlers/validation/validate_cel.go`).
//! `docs/kyverno-semantics.md` §2, §5.
//!
//! The CEL handler builds, from the rule, what the apiserver's VAP validator evaluates
//! (validations, variables, auditAnnotations, matchConditions from `celPreconditions`,
//! failurePolicy `Fail`) and runs it: here that is the VAP [`validate`] step itself, through a
//! [`ValidatingAdmissionPolicy`] value built in memory.

use super::autogen::{compute_rules, generate_rule};
use super::matching::{exception_matches, rule_matches, RequestInfo, Target};
use super::policy::{Cel, KyvernoPolicy, Rule};
use super::KyvernoSet;
use crate::admission::compile::{CelCompiler, CompiledPolicy};
use crate::admission::decision::{PolicyDecisionAction, PolicyDecisionEvaluation};
use crate::admission::namespaces::Namespaces;
use crate::admission::params::{resolve_param_kind, ParamKindResolution};
use crate::admission::policy_set::PolicySet;
use crate::admission::request::{request_cel_value, AdmissionRequest};
use crate::admission::trace::ParamEvaluation;
use crate::admission::types::{
    ObjectMeta, ParamKind, ParamRef, ValidatingAdmissionPolicy, ValidatingAdmissionPolicySpec,
};
use crate::admission::validator::{validate, Bound, RequestValue};
use crate::cel::value::Value;
use serde_json::{json, Value as Json};
use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

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

/// A rule ready to evaluate, made once per policy set: the rule (written or generated) and, for
/// a `validate.cel` rule, the in-memory ValidatingAdmissionPolicy its handler evaluates
/// ([`policy_for_rule`]), compiled.
pub struct PreparedRule {
    pub rule: Rule,
    /// Index of the written rule (for a generated rule: of the rule it comes from).
    pub origin: usize,
    pub cel: Option<(ValidatingAdmissionPolicy, CompiledPolicy)>,
}

impl PreparedRule {
    pub fn new(rule: Rule, origin: usize, compiler: &CelCompiler) -> Rc<PreparedRule> {
        let cel = rule.validate.as_ref().and_then(|v| {
            let vap = policy_for_rule(&rule, v.cel.as_ref()?, &v.message);
            let compiled = CompiledPolicy::new(&vap, compiler);
            Some((vap, compiled))
        });
        Rc::new(PreparedRule { rule, origin, cel })
    }
}

/// One policy's rules, prepared once per policy set; the rules auto-generation makes from them
/// are prepared on first use and kept.
pub struct PreparedPolicy {
    /// The written rules, in order.
    pub rules: Vec<Rc<PreparedRule>>,
    /// `(written rule index, controller kind)` → the rule generated for that kind, if any.
    generated: RefCell<HashMap<(usize, String), Generated>>,
    /// Resource kind → `(subset, computed rules)`: [`PreparedPolicy::computed`] made once (not
    /// in the package, which evaluates one request per set).
    #[cfg(not(target_arch = "wasm32"))]
    computed: RefCell<HashMap<String, Subsets>>,
}

/// `(subset of the written rules, computed rules)` for one kind.
#[cfg(not(target_arch = "wasm32"))]
type Subsets = Vec<(Vec<usize>, Computed)>;

/// The rules `ComputeRules` gives for one subset of a policy's rules and one kind.
pub type Computed = Rc<[Rc<PreparedRule>]>;

/// The rule auto-generation makes from a written rule for one kind, if any.
type Generated = Option<Rc<PreparedRule>>;

impl PreparedPolicy {
    pub fn new(policy: &KyvernoPolicy, compiler: &CelCompiler) -> PreparedPolicy {
        let rules = (policy.spec.rules.iter().enumerate())
            .map(|(i, r)| PreparedRule::new(r.clone(), i, compiler))
            .collect();
        PreparedPolicy {
            rules,
            generated: RefCell::default(),
            #[cfg(not(target_arch = "wasm32"))]
            computed: RefCell::default(),
        }
    }

    /// `ComputeRules` over the written rules `subset` (indices) for a resource of `kind`, made
    /// once per (subset, kind).
    pub(super) fn computed(
        &self,
        policy: &KyvernoPolicy,
        subset: &[usize],
        kind: &str,
        compiler: &CelCompiler,
    ) -> Computed {
        #[cfg(not(target_arch = "wasm32"))]
        {
            let known = self.computed.borrow().get(kind).and_then(|subsets| {
                subsets.iter().find(|(s, _)| s.as_slice() == subset).map(|(_, c)| c.clone())
            });
            if let Some(c) = known {
                return c;
            }
            let c: Computed = self.compute(policy, subset, kind, compiler).into();
            let mut cache = self.computed.borrow_mut();
            cache.entry(kind.to_string()).or_default().push((subset.to_vec(), c.clone()));
            c
        }
        #[cfg(target_arch = "wasm32")]
        self.compute(policy, subset, kind, compiler).into()
    }

    fn compute(
        &self,
        policy: &KyvernoPolicy,
        subset: &[usize],
        kind: &str,
        compiler: &CelCompiler,
    ) -> Vec<Rc<PreparedRule>> {
        let rules: Vec<Rc<PreparedRule>> =
            subset.iter().filter_map(|&i| self.rules.get(i).cloned()).collect();
        let generate = |r: &Rc<PreparedRule>| {
            let key = (r.origin, kind.to_string());
            if let Some(hit) = self.generated.borrow().get(&key) {
                return hit.clone();
            }
            // Kept with the set: not in the per-call arena.
            crate::arena::outside(|| {
                let made =
                    generate_rule(&r.rule, kind).map(|g| PreparedRule::new(g, r.origin, compiler));
                // The key made here, not the one made in the arena above.
                self.generated
                    .borrow_mut()
                    .insert((key.0, key.1.as_str().to_owned()), made.clone());
                made
            })
        };
        compute_rules(policy, &rules, |r| &r.rule, generate, kind)
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
#[derive(Clone, Default)]
pub struct EngineResponse {
    pub rules: Vec<RuleResponse>,
    /// Rules of the computed set that did not match, with Kyverno's reason.
    pub not_matched: Vec<(String, String)>,
    /// The rules evaluated (after auto-generation), for failure-action resolution.
    pub computed: Computed,
}

/// Everything the engine reads besides the policy.
pub struct Context<'a> {
    pub set: &'a PolicySet,
    pub kyverno: &'a KyvernoSet,
    pub request: &'a AdmissionRequest,
    pub info: &'a RequestInfo,
    /// Labels of the request's namespace.
    pub namespace_labels: &'a BTreeMap<String, String>,
    /// The Namespace objects, as every plugin of the request sees them.
    pub namespaces: &'a Namespaces<'a>,
    /// Evaluated as the Kyverno CLI does ([`super::Cli`]).
    pub cli: bool,
    /// What the CEL handler binds for this request, made on first use.
    bound: OnceCell<Bindings<'a>>,
    /// Each rule's outcome for this request (`Err`: not matched, with why; `Ok(None)`: left to
    /// the generated ValidatingAdmissionPolicy). The policies' own evaluation and each webhook
    /// evaluate the same rules of the same request: once is enough.
    memo: RefCell<Vec<(*const PreparedRule, Outcome)>>,
}

/// A rule's outcome for one request ([`Context`]'s memo).
type Outcome = Result<Option<RuleResponse>, String>;

/// The values Kyverno's CEL handler binds, the same for every rule of one request.
struct Bindings<'a> {
    object: Option<Cow<'a, Json>>,
    old_object: Option<Cow<'a, Json>>,
    namespace_object: Option<Cow<'a, Json>>,
    /// The resource's namespace does not exist (`missingNamespaces: strict`).
    namespace_missing: bool,
    /// The resource's namespace (empty for a Namespace and cluster-scoped resources).
    namespace: String,
    /// Made from the attributes Kyverno builds when a rule of the set may read them
    /// ([`KyvernoSet::reads`]; `null` and `None` otherwise).
    request: Json,
    authorizer: Option<(Value<'static>, Value<'static>)>,
}

impl<'a> Context<'a> {
    pub fn new(
        set: &'a PolicySet,
        kyverno: &'a KyvernoSet,
        request: &'a AdmissionRequest,
        info: &'a RequestInfo,
        namespace_labels: &'a BTreeMap<String, String>,
        namespaces: &'a Namespaces<'a>,
    ) -> Self {
        Context {
            set,
            kyverno,
            request,
            info,
            namespace_labels,
            namespaces,
            cli: false,
            bound: OnceCell::new(),
            memo: RefCell::default(),
        }
    }

    /// The resource the engine works on: the new object, or the old one on DELETE.
    pub fn resource(&self) -> &Json {
        static NULL: Json = Json::Null;
        self.request.object.as_ref().or(self.request.old_object.as_ref()).unwrap_or(&NULL)
    }
}

fn meta<'a>(v: &'a Json, key: &str) -> &'a str {
    v.get("metadata").and_then(|m| m.get(key)).and_then(Json::as_str).unwrap_or_default()
}

/// `engine.Validate` for policy `index` of the set restricted to its written rules `subset`
/// (the policy cache hands the webhook a copy of the policy with only the rules of one failure
/// action). `None` when the policy does not apply to the resource's namespace
/// (`MatchPolicyContext`).
pub fn validate_policy(cx: &Context<'_>, index: usize, subset: &[usize]) -> Option<EngineResponse> {
    let policy = cx.kyverno.loaded.policies.get(index)?;
    let prepared = cx.kyverno.prepared.get(index)?;
    if !policy.namespace.is_empty() {
        let in_ns = [cx.request.object.as_ref(), cx.request.old_object.as_ref()]
            .into_iter()
            .flatten()
            .any(|o| meta(o, "namespace") == policy.namespace);
        if !in_ns {
            return None;
        }
    }
    let computed = prepared.computed(policy, subset, &cx.request.kind.kind, &cx.kyverno.compiler);
    let mut out = EngineResponse::default();
    let mut applied = 0usize;
    for p in computed.iter() {
        let rule = &p.rule;
        let validates = rule.validate.is_some();
        if !validates && !rule.has_verify_images {
            continue; // no validation handler: no response
        }
        let key = Rc::as_ptr(p);
        let memo = cx.memo.borrow().iter().find(|(k, _)| *k == key).map(|(_, o)| o.clone());
        let outcome = match memo {
            Some(o) => o,
            None => {
                let o = matches(cx, policy, rule).map(|()| handle(cx, policy, p));
                cx.memo.borrow_mut().push((key, o.clone()));
                o
            }
        };
        let response = match outcome {
            Err(why) => {
                out.not_matched.push((rule.name.clone(), why));
                continue;
            }
            Ok(None) => continue,
            Ok(Some(r)) => r,
        };
        if matches!(response.status, Some(RuleStatus::Pass | RuleStatus::Fail)) {
            applied += 1;
        }
        out.rules.push(response);
        if policy.spec.apply_one && applied > 0 {
            break;
        }
    }
    out.computed = computed;
    Some(out)
}

impl<'a> Context<'a> {
    /// What a rule or exception of `policy` is matched against: the new resource.
    fn target<'t>(&'t self, policy: &'t KyvernoPolicy) -> Target<'t> {
        self.target_of(policy, self.request.object.as_ref().unwrap_or(&Json::Null))
    }

    fn target_of<'t>(&'t self, policy: &'t KyvernoPolicy, resource: &'t Json) -> Target<'t> {
        let r = self.request;
        Target {
            resource,
            gvk: &r.kind,
            subresource: &r.sub_resource,
            operation: r.operation.as_str(),
            namespace_labels: self.namespace_labels,
            info: self.info,
            policy_namespace: &policy.namespace,
            first_reason_only: self.set.summary(),
        }
    }
}

/// `engine.matches`: the new resource, else (DELETE) the old one.
fn matches(cx: &Context<'_>, policy: &KyvernoPolicy, rule: &Rule) -> Result<(), String> {
    let r = cx.request;
    let first = rule_matches(rule, &cx.target(policy));
    match (&r.object, &r.old_object) {
        (None, Some(old)) if first.is_err() => {
            rule_matches(rule, &cx.target_of(policy, old)).or(first)
        }
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

/// The handler Kyverno picks for a matched rule; only the CEL one is evaluated here. `None`:
/// no response (the generated ValidatingAdmissionPolicy evaluates the rule).
fn handle(
    cx: &Context<'_>,
    policy: &KyvernoPolicy,
    prepared: &PreparedRule,
) -> Option<RuleResponse> {
    let rule = &prepared.rule;
    let Some(v) = &rule.validate else {
        let why = "verifyImages (image verification) is not evaluated by vap-eval";
        return Some(unsupported(rule, why.into()));
    };
    if let Some(other) = v.other.first() {
        let why = format!(
            "validate.{other} is evaluated by Kyverno without CEL; vap-eval does not evaluate it"
        );
        return Some(unsupported(rule, why));
    }
    let (Some(cel), Some((vap, compiled))) = (&v.cel, &prepared.cel) else {
        let why = "the validate rule has no cel block; vap-eval evaluates only validate.cel";
        return Some(unsupported(rule, why.into()));
    };
    // A CEL rule with `context` never gets here: Kyverno rejects the policy (mod.rs).
    if rule.has_preconditions {
        let why = "preconditions are JMESPath conditions; vap-eval evaluates only celPreconditions";
        return Some(unsupported(rule, why.into()));
    }
    // The CEL handler's first step: the PolicyExceptions naming this policy and rule that
    // select the resource (`engineutils.MatchesException`) skip the rule.
    let mut keys = Vec::new();
    for e in &cx.kyverno.loaded.exceptions {
        let target = cx.target_of(policy, cx.resource());
        if !e.contains(&policy.key(), &rule.name) || !exception_matches(&e.match_resources, &target)
        {
            continue;
        }
        if e.has_conditions {
            let why = format!(
                "PolicyException {} selects the resource but has conditions (JMESPath), which vap-eval does not evaluate",
                e.key()
            );
            return Some(unsupported(rule, why));
        }
        keys.push(e.key());
    }
    if !keys.is_empty() {
        // Kyverno's message, without a separator before the keys [quirk].
        let message = format!("rule is skipped due to policy exceptions{}", keys.join(", "));
        return Some(response(rule, RuleStatus::Skip, message));
    }
    // The generated ValidatingAdmissionPolicy replaces the CEL rule: no response (a policy
    // read by the CLI has no status saying so).
    if policy.vap_generated && !cx.cli {
        return None;
    }
    Some(validate_cel(cx, rule, cel, vap, compiled))
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

impl<'a> Context<'a> {
    /// The values Kyverno's CEL handler binds for this request.
    fn bindings(&self) -> &Bindings<'a> {
        self.bound.get_or_init(|| {
            let r: &'a AdmissionRequest = self.request;
            let gvk = &r.kind;
            let api_version = gvk.api_version();
            // An object that already has the request's apiVersion and kind is bound as it is
            // (setting them again would change nothing): no copy.
            let with_gvk = |o: &'a Json| {
                let has = |k: &str, v: &str| o.get(k).and_then(Json::as_str) == Some(v);
                if has("apiVersion", &api_version) && has("kind", &gvk.kind) {
                    return Cow::Borrowed(o);
                }
                let mut o = o.clone();
                if let Some(m) = o.as_object_mut() {
                    m.insert("apiVersion".into(), Json::String(api_version.clone()));
                    m.insert("kind".into(), Json::String(gvk.kind.clone()));
                }
                Cow::Owned(o)
            };
            let object = r.object.as_ref().map(with_gvk);
            let old_object = r.old_object.as_ref().map(with_gvk);
            let source: &Json = object.as_deref().or(old_object.as_deref()).unwrap_or(&Json::Null);
            let mut ns = meta(source, "namespace").to_string();
            if gvk.group.is_empty() && gvk.version == "v1" && gvk.kind == "Namespace" {
                ns.clear();
            }
            // The admission controller reads the namespace from the cluster: the supplied one,
            // or the one `missingNamespaces: assume` assumes; under `strict` there is none.
            let namespace_object = match self.cli {
                _ if ns.is_empty() => None,
                // No cluster client: a Namespace with only its name.
                true => Some(Cow::Owned(
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
                )),
                false => self.namespaces.get(&ns).map(Cow::Borrowed),
            };
            let namespace_missing = !ns.is_empty() && namespace_object.is_none();
            // The attributes Kyverno builds: no subresource, no options, never a dry run (the
            // objects are not part of them).
            let reads = self.kyverno.reads;
            let make_attrs = || AdmissionRequest {
                sub_resource: String::new(),
                request_sub_resource: String::new(),
                request_kind: r.kind.clone(),
                request_resource: r.resource.clone(),
                name: meta(source, "name").to_string(),
                namespace: ns.clone(),
                dry_run: false,
                options: None,
                object: None,
                old_object: None,
                operation: r.operation,
                kind: r.kind.clone(),
                resource: r.resource.clone(),
                user_info: r.user_info.clone(),
                namespaced: r.namespaced,
            };
            // Made only for the values that read them (`reads`).
            let attrs = (reads.0 || reads.1).then(make_attrs);
            let request = match &attrs {
                Some(a) if reads.0 => request_cel_value(a, &a.kind, &a.resource),
                _ => Json::Null,
            };
            let authorizer = attrs.as_ref().filter(|_| reads.1).map(|a| self.set.authorizer(a));
            Bindings {
                object,
                old_object,
                namespace_object,
                namespace_missing,
                namespace: ns,
                request,
                authorizer,
            }
        })
    }
}

fn validate_cel(
    cx: &Context<'_>,
    rule: &Rule,
    cel: &Cel,
    vap: &ValidatingAdmissionPolicy,
    compiled: &CompiledPolicy,
) -> RuleResponse {
    let b = cx.bindings();
    let ns = &b.namespace;
    if b.namespace_missing {
        // `h.client.GetNamespace` fails: a rule error (validate_cel.go).
        let message =
            format!("Error getting the resource's namespace: namespaces \"{ns}\" not found");
        return response(rule, RuleStatus::Error, message);
    }
    let params: Vec<Option<Json>> = if cel.has_param() {
        match (&cel.param_kind, &cel.param_ref) {
            (Some(pk), Some(pr)) => match collect_params(cx, pk, pr, ns) {
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
    let object_v = b.object.as_deref().map(Value::from_json).unwrap_or(Value::Null);
    let old_v = b.old_object.as_deref().map(Value::from_json).unwrap_or(Value::Null);
    let ns_v = b.namespace_object.as_deref().map(Value::from_json).unwrap_or(Value::Null);
    let authz = b.authorizer.clone();
    let mut evaluations = Vec::new();
    let mut outcome: Option<RuleResponse> = None;
    for param in &params {
        let bound = Bound {
            object: object_v.clone(),
            old_object: old_v.clone(),
            params: param.as_ref().map(Value::from_json).unwrap_or(Value::Null),
            request: RequestValue::Ready(Value::from_json(&b.request)),
            namespace_object: ns_v.clone(),
            authorizer: authz.clone().into(),
            summary_trace: cx.set.summary(),
        };
        let out = validate(vap, compiled, &bound);
        // The summary trace lists no policy, so nothing reads the rule's evaluations.
        if !cx.set.summary() {
            let mut trace = out.trace;
            if let Some(p) = param {
                trace.param = Some(crate::admission::trace::ParamRefTrace {
                    namespace: meta(p, "namespace").to_string(),
                    name: meta(p, "name").to_string(),
                });
            }
            evaluations.push(trace);
        }
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
