//! Kyverno policies (`ClusterPolicy`, `Policy`; kyverno.io/v1) with CEL validate rules,
//! evaluated for one admission request as Kyverno's admission controller does — a sibling of
//! the VAP pipeline over the same manifests, request, selectors, params and CEL compilation.
//! The contract is `docs/kyverno-semantics.md` (§ numbers below refer to it).
//!
//! 1. [`policy`] — read the policies and PolicyExceptions from the manifests (§1, §2.5).
//! 2. [`autogen`] — the rules Kyverno generates for Pod controllers (§4).
//! 3. [`matching`] — `match`/`exclude` and exceptions' `match`, with [`wildcard`]s and the
//!    user's roles (§3).
//! 4. [`engine`] — per policy: rules in order (prepared once per policy set), `applyRules`,
//!    exceptions, the CEL handler (§2, §5).
//! 5. [`webhook`] — which policies and rules each of Kyverno's webhooks evaluates, whether it
//!    blocks, its message ([`yaml_go`]) and warnings (§5, §6).
//!
//! [`evaluate`] is the entry point; [`evaluate_resource`] is the Kyverno CLI's view of one
//! resource (the `kyverno-test.yaml` support, §9).

pub mod autogen;
pub mod diagnostics;
pub mod engine;
pub mod matching;
pub mod policy;
pub mod vap;
pub mod webhook;
pub mod wildcard;
pub mod yaml_go;

use crate::admission::compile::{CelCompiler, CompiledPolicy};
use crate::admission::dispatcher::AdmissionResponse;
use crate::admission::manifests::{Manifests, Source};
use crate::admission::namespaces::Namespaces;
use crate::admission::policy_set::PolicySet;
use crate::admission::request::AdmissionRequest;
use crate::admission::trace::ParamEvaluation;
use crate::cel::compile::Compiled;
use crate::diagnostic::{Diagnostic, SourceRef};
use crate::environment::{EnvironmentMode, KubeVersion};
use crate::webhook::dispatcher::ConditionResult;
use engine::{Context, RuleStatus};
use matching::RequestInfo;
use policy::{is_enforce, KyvernoPolicy};
use serde::Serialize;
use serde_json::Value as Json;

/// The Kubernetes CEL environment Kyverno's CEL rules compile in: Kyverno 1.18 builds it from
/// `environment.DefaultCompatibilityVersion()` of the k8s.io/apiserver it vendors (v0.36 →
/// 1.35), whatever the cluster's version (§2.2).
pub const CEL_ENVIRONMENT_VERSION: KubeVersion = KubeVersion { minor: 35 };

/// What `evaluate(input).kyverno` holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct KyvernoResult {
    /// Every Kyverno policy of the manifests, in input order, evaluated with all its rules.
    pub policies: Vec<KyvernoPolicyResult>,
    /// Kyverno's two validating webhooks (`…-ignore`, `…-fail`): what each evaluated and
    /// answered.
    pub webhooks: Vec<KyvernoWebhookResult>,
    /// Kyverno's part of the response: denied when a webhook denied (the first, in the
    /// order above), with the apiserver's status; the warnings of both.
    pub response: AdmissionResponse,
}

/// One policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct KyvernoPolicyResult {
    /// `ClusterPolicy` or `Policy`.
    pub kind: String,
    pub name: String,
    /// Absent for a ClusterPolicy.
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub namespace: String,
    /// Why the policy was or was not evaluated.
    pub reason: String,
    /// The rules Kyverno reports (matched rules, in evaluation order, auto-generated ones
    /// included).
    pub rules: Vec<KyvernoRuleResult>,
    /// Rules that did not select the request, with Kyverno's reason.
    pub not_matched: Vec<KyvernoNotMatched>,
    /// ClusterPolicies: the ValidatingAdmissionPolicy Kyverno generates from the CEL rule, or
    /// why it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub validating_admission_policy: Option<KyvernoGeneratedVap>,
    /// `spec.webhookConfiguration.matchConditions`, as the apiserver evaluated them for the
    /// policy's own webhook (absent when the policy has none or they were not reached).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub match_conditions: Vec<ConditionResult>,
}

/// The ValidatingAdmissionPolicy Kyverno generates from a ClusterPolicy (§7).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct KyvernoGeneratedVap {
    pub generated: bool,
    /// Kyverno's reason when not generated.
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub message: String,
    /// The policy and binding (`cpol-<name>`, `cpol-<name>-binding`); they are evaluated with
    /// the other ValidatingAdmissionPolicies (top-level `policies`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "Record<string, unknown>"))]
    pub policy: Option<crate::admission::types::ValidatingAdmissionPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional, type = "Record<string, unknown>"))]
    pub binding: Option<crate::admission::types::ValidatingAdmissionPolicyBinding>,
}

/// One rule's result in Kyverno's terms.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct KyvernoRuleResult {
    pub name: String,
    /// Absent when vap-eval could not evaluate the rule (`unsupported` says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(optional, type = "\"pass\" | \"fail\" | \"warn\" | \"error\" | \"skip\"")
    )]
    pub result: Option<&'static str>,
    /// Kyverno's message (`Validation rule 'x' passed.`, the failed validation's message, …).
    #[serde(skip_serializing_if = "String::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub message: String,
    /// `Enforce` or `Audit`: the failure action that applies to this request.
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub unsupported: Option<String>,
    /// `spec.rules[i]` of the written rule (generated rules name the rule they come from).
    pub path: String,
    /// The CEL evaluation, one per param (the VAP trace format).
    pub evaluations: Vec<ParamEvaluation>,
}

/// A rule that did not match.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct KyvernoNotMatched {
    pub rule: String,
    pub reason: String,
}

/// One of Kyverno's webhooks.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub struct KyvernoWebhookResult {
    pub name: String,
    /// The Enforce-path policies it evaluated.
    pub policies: Vec<String>,
    pub allowed: bool,
    /// Kyverno's denial message (before the apiserver's prefix).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub message: Option<String>,
    pub warnings: Vec<String>,
    /// Why the apiserver did not call it; absent when called.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub reason: Option<String>,
    /// A policy's own webhook (`…-finegrained-…`): its matchConditions, as evaluated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub match_conditions: Vec<ConditionResult>,
}

/// What every request of a policy set shares: the Kyverno policies, loaded once, their rules
/// prepared (CEL compiled; auto-generated rules made and compiled on first use), and the set
/// extended with the ValidatingAdmissionPolicies Kyverno generates from them (`None` when it
/// generates none).
pub struct KyvernoSet {
    pub loaded: Loaded,
    /// `prepared[i]` belongs to `loaded.policies[i]`.
    pub prepared: Vec<engine::PreparedPolicy>,
    /// Kyverno's CEL environment.
    pub compiler: CelCompiler,
    /// `conditions[i]`: policy `i`'s `webhookConfiguration.matchConditions`, compiled as the
    /// apiserver compiles a webhook's (the cluster's version, StoredExpressions).
    pub conditions: Vec<Vec<Compiled>>,
    pub extended: Option<Box<PolicySet>>,
    /// Whether the CEL rules may read `request` and `authorizer`: Kyverno's values for them are
    /// made for a request only then. A rule written out holds the word when one of its
    /// expressions reads it (an identifier has no other spelling); the rules auto-generation
    /// makes from it only move the object's paths. Always both in the package (one request
    /// per set: the check would cost more than it saves).
    pub reads: (bool, bool),
}

/// Whether any document (or List item) of the manifests is a kyverno.io object: when none is,
/// [`load`] finds nothing and says nothing and [`evaluate`] is `None`, so callers skip Kyverno
/// altogether (nor does the wasm engine compile its code on a page's first evaluation).
/// Worked out once per set ([`mentioned`]).
pub fn present(set: &PolicySet) -> bool {
    set.kyverno_objects
}

/// [`present`] of a set with these manifests.
pub fn mentioned(manifests: &Manifests) -> bool {
    manifests.any_object(|v| {
        let api_version = v.get("apiVersion").and_then(Json::as_str).unwrap_or_default();
        api_version.split_once('/').is_some_and(|(group, _)| group == policy::GROUP)
    })
}

/// The set's [`KyvernoSet`], made on first use and kept with the set.
pub fn compiled(set: &PolicySet) -> &KyvernoSet {
    // Kept with the set: not in the per-call arena.
    set.kyverno.get_or_init(|| crate::arena::outside(|| build(set)))
}

/// [`compiled`] on first use.
fn build(set: &PolicySet) -> KyvernoSet {
    let loaded = load_with(set, false);
    let compiler = compiler();
    let prepared: Vec<engine::PreparedPolicy> =
        loaded.policies.iter().map(|p| engine::PreparedPolicy::new(p, &compiler)).collect();
    let conditions = loaded
        .policies
        .iter()
        .map(|p| {
            let scope = crate::environment::VariableScope::default();
            let kind = crate::environment::ExpressionKind::MatchCondition;
            let mcs = p.spec.match_conditions.iter();
            mcs.map(|m| set.compiler.compile(&m.expression, kind, &scope)).collect()
        })
        .collect();
    let generated = loaded.generated_documents();
    let extended = (!generated.is_empty()).then(|| {
        let text = format!("{}{generated}", set.text);
        let mut s = PolicySet::build(&text, set.version, None, set.normalize_objects);
        s.setup = set.setup;
        s.summary_trace = set.summary_trace;
        Box::new(s)
    });
    let reads = |word: &str| {
        let rules = prepared.iter().flat_map(|p| &p.rules);
        cfg!(target_arch = "wasm32")
            || rules
                .filter_map(|r| r.cel.as_ref())
                .any(|(vap, _)| serde_json::to_string(&vap.spec).map_or(true, |t| t.contains(word)))
    };
    let reads = (reads(crate::environment::var::REQUEST), reads("authorizer"));
    KyvernoSet { loaded, prepared, compiler, conditions, extended, reads }
}

/// The Kyverno policies of the manifests, with their load problems.
pub struct Loaded {
    pub policies: Vec<KyvernoPolicy>,
    /// `vaps[i]`: what VAP generation gave for `policies[i]`.
    pub vaps: Vec<Result<vap::Generated, String>>,
    /// The PolicyExceptions of the manifests, in input order.
    pub exceptions: Vec<policy::PolicyException>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    /// The generated policies and bindings as one JSON document each (`---`-separated), to be
    /// evaluated with the other ValidatingAdmissionPolicies; empty when none is generated.
    pub fn generated_documents(&self) -> String {
        let mut out = String::new();
        for g in self.vaps.iter().flatten() {
            // The same serializer the result goes through (no second one in the wasm).
            let docs = [
                vap_eval_json::ser::to_string(&g.policy),
                vap_eval_json::ser::to_string(&g.binding),
            ];
            for v in docs.into_iter().flatten() {
                out.push_str("\n---\n");
                out.push_str(&v);
            }
        }
        out
    }
}

fn located(set: &PolicySet, d: Diagnostic, source: &Source, path: &str) -> Diagnostic {
    match set.manifests.locate(source, path) {
        Some((document, pos)) => d.with_span(pos.span, SourceRef::Manifest { document }),
        None => d,
    }
}

/// Read every `ClusterPolicy`/`Policy` (kyverno.io) of the manifests, in input order.
pub fn load(set: &PolicySet) -> Loaded {
    load_with(set, true)
}

/// [`load`], with the CEL compile diagnostics (`compile`) or without (evaluation, which
/// compiles each rule as Kyverno does).
pub fn load_with(set: &PolicySet, compile: bool) -> Loaded {
    let mut out = Loaded {
        policies: Vec::new(),
        vaps: Vec::new(),
        exceptions: Vec::new(),
        diagnostics: Vec::new(),
    };
    let catalog = &set.catalog;
    for doc in &set.manifests.documents {
        let kind = doc.value.get("kind").and_then(Json::as_str).unwrap_or_default();
        let objects: Vec<(String, &Json)> = match doc.value.get("items").and_then(Json::as_array) {
            Some(items) if kind.ends_with("List") => {
                items.iter().enumerate().map(|(i, it)| (format!("items[{i}]"), it)).collect()
            }
            _ => vec![(String::new(), &doc.value)],
        };
        for (path, obj) in objects {
            let api_version = obj.get("apiVersion").and_then(Json::as_str).unwrap_or_default();
            let kind = obj.get("kind").and_then(Json::as_str).unwrap_or_default();
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            if group == policy::GROUP && kind == "PolicyException" {
                let source = Source { document: doc.index, path };
                if !matches!(version, "v2" | "v2beta1") {
                    let d = diagnostics::unsupported_api_version(api_version, kind);
                    out.diagnostics.push(located(set, d, &source, ""));
                    continue;
                }
                let (e, problems) = policy::decode_exception(obj, source.clone());
                let object = format!("PolicyException/{}", e.key());
                for (path, message) in problems {
                    let d = diagnostics::invalid_field(&object, &path, &message);
                    out.diagnostics.push(located(set, d, &source, &path));
                }
                out.exceptions.push(e);
                continue;
            }
            if group != policy::GROUP || !matches!(kind, "ClusterPolicy" | "Policy") {
                continue;
            }
            let source = Source { document: doc.index, path };
            if !matches!(version, "v1" | "v2beta1") {
                let d = diagnostics::unsupported_api_version(api_version, kind);
                out.diagnostics.push(located(set, d, &source, ""));
                continue;
            }
            let (mut p, problems) = policy::decode(obj, source.clone());
            let object = p.display();
            if p.kind == "Policy" && p.namespace.is_empty() {
                p.namespace = "default".into();
                let d = diagnostics::policy_without_namespace(&object);
                out.diagnostics.push(located(set, d, &source, "metadata"));
            }
            for (path, message) in problems {
                let d = diagnostics::invalid_field(&object, &path, &message);
                out.diagnostics.push(located(set, d, &source, &path));
            }
            // `ValidateCustomWebhookMatchConditions`, checked before the rules.
            let mcs = match_condition_check(&p);
            if let Some(i) = mcs.iter().position(|c| c.error.is_some()) {
                let errors: Vec<&str> = mcs.iter().filter_map(|c| c.error.as_deref()).collect();
                let message =
                    format!("match conditions compilation errors: [{}]", errors.join(" "));
                let path = format!("spec.webhookConfiguration.matchConditions[{i}].expression");
                let d = diagnostics::policy_rejected(&object, &path, &message);
                out.diagnostics.push(located(set, d, &source, &path));
                p.rejected = Some(message);
                if compile {
                    for (i, c) in mcs.iter().enumerate() {
                        let path =
                            format!("spec.webhookConfiguration.matchConditions[{i}].expression");
                        out.diagnostics.extend(positioned(set, &p, &object, &path, c));
                    }
                }
            }
            // `validateRuleContext`: a validate.cel rule may not have context entries (the CEL
            // expressions could not see them).
            if let Some(r) = p.spec.rules.iter().find(|r| {
                p.rejected.is_none()
                    && r.has_context
                    && r.validate.as_ref().is_some_and(|v| v.cel.is_some())
            }) {
                let message = format!(
                    "path: {}: context variables are not supported for CEL expressions in validate rules",
                    r.path
                );
                let path = format!("{}.context", r.path);
                let d = diagnostics::policy_rejected(&object, &path, &message);
                out.diagnostics.push(located(set, d, &source, &path));
                p.rejected = Some(message);
            }
            if compile {
                out.diagnostics.extend(compile_diagnostics(set, &p));
            }
            out.policies.push(p);
        }
    }
    // VAP generation, once every PolicyException is read: those naming the policy and its
    // (only) rule are checked and folded into the generated policy's exclude rules.
    for p in &mut out.policies {
        let generated = match (&p.rejected, p.spec.rules.first()) {
            (Some(_), _) => Err("the policy is rejected by Kyverno".to_string()),
            (None, rule) => {
                let rule = rule.map(|r| r.name.as_str()).unwrap_or_default();
                let exceptions: Vec<&policy::PolicyException> =
                    out.exceptions.iter().filter(|e| e.contains(&p.name, rule)).collect();
                vap::generate(p, catalog, &exceptions)
            }
        };
        p.vap_generated = generated.is_ok();
        out.vaps.push(generated);
    }
    if !out.exceptions.is_empty() && compile {
        out.diagnostics.push(diagnostics::exceptions_applied(out.exceptions.len()));
    }
    out
}

/// Kyverno's CEL compiler (StoredExpressions of [`CEL_ENVIRONMENT_VERSION`]).
pub fn compiler() -> CelCompiler {
    CelCompiler::new(CEL_ENVIRONMENT_VERSION, EnvironmentMode::StoredExpressions)
}

/// Kyverno's policy validation of `webhookConfiguration.matchConditions`
/// (`pkg/validation/policy` `ValidateCustomWebhookMatchConditions`): compiled in Kyverno's
/// environment with no optional variable declared — neither `params` nor `authorizer` [quirk] —
/// and `variables` declared empty (the composited compiler's).
fn match_condition_check(p: &KyvernoPolicy) -> Vec<Compiled> {
    use crate::environment::{ExpressionKind, VariableScope};
    if p.spec.match_conditions.is_empty() {
        return Vec::new();
    }
    let c = compiler();
    let scope = VariableScope { variables: Some(Vec::new()), ..Default::default() };
    // A messageExpression's declarations are the ones without `authorizer`.
    let decls = c.declarations(ExpressionKind::MessageExpression, &scope);
    let bool = crate::cel::checker::ExpectedResult::Bool;
    let kind = ExpressionKind::MatchCondition;
    p.spec
        .match_conditions
        .iter()
        .map(|m| c.compile_in(&m.expression, kind, &decls, bool))
        .collect()
}

/// `cel-compile` diagnostics for `c`, compiled from the policy's field `path`, each at its
/// issue's position.
fn positioned(
    set: &PolicySet,
    p: &KyvernoPolicy,
    object: &str,
    path: &str,
    c: &Compiled,
) -> Vec<Diagnostic> {
    let (text, m) = (&set.text, &set.manifests);
    crate::admission::dispatcher::cel_compile_diagnostics(text, m, &p.source, object, path, c)
}

/// Positioned `cel-compile` diagnostics for the CEL rules of `p` as written.
fn compile_diagnostics(set: &PolicySet, p: &KyvernoPolicy) -> Vec<Diagnostic> {
    let compiler = compiler();
    let object = p.display();
    let mut out = Vec::new();
    for rule in &p.spec.rules {
        let Some(v) = &rule.validate else { continue };
        let Some(cel) = &v.cel else { continue };
        let vap = engine::policy_for_rule(rule, cel, &v.message);
        let compiled = CompiledPolicy::new(&vap, &compiler);
        let base = &rule.path;
        let mut push =
            |path: String, c: &Compiled| out.extend(positioned(set, p, &object, &path, c));
        let cp = format!("{base}.validate.cel");
        for (i, v) in compiled.variables.iter().enumerate() {
            push(format!("{cp}.variables[{i}].expression"), &v.compiled);
        }
        for (i, (_, c)) in compiled.match_conditions.iter().enumerate() {
            push(format!("{base}.celPreconditions[{i}].expression"), c);
        }
        for (i, v) in compiled.validations.iter().enumerate() {
            push(format!("{cp}.expressions[{i}].expression"), &v.expression);
            if let Some(m) = &v.message_expression {
                push(format!("{cp}.expressions[{i}].messageExpression"), m);
            }
        }
        for (i, (_, c)) in compiled.audit_annotations.iter().enumerate() {
            push(format!("{cp}.auditAnnotations[{i}].valueExpression"), c);
        }
    }
    out
}

/// What [`evaluate`] returns.
pub struct Evaluation {
    pub result: KyvernoResult,
    /// Request-dependent diagnostics (unsupported rules, an assumed namespace); load
    /// diagnostics come from [`load`].
    pub diagnostics: Vec<Diagnostic>,
}

/// Evaluate `request` against the Kyverno policies of `set` as Kyverno's admission controller
/// does: each policy with all its rules (`result.policies`), and each webhook with the
/// policies and rules it evaluates (`result.webhooks`, `result.response`). `None` when the
/// manifests hold no Kyverno policy. (Kyverno's CLI view of one resource, for
/// `kyverno-test.yaml`, is [`evaluate_resource`].)
///
/// `namespaces` is the request's view of the Namespace objects shared with the other plugins
/// (`missingNamespaces`: an assumed namespace is the one the VAPs and webhooks see, and the
/// caller reports `namespace-assumed` once for all of them).
pub fn evaluate(
    set: &PolicySet,
    request: &AdmissionRequest,
    namespaces: &Namespaces<'_>,
) -> Option<Evaluation> {
    evaluate_as(set, request, namespaces, None)
}

/// How the Kyverno CLI (`apply`, `test`) differs from the admission controller: every policy is
/// evaluated whatever its `admission` field and whether a ValidatingAdmissionPolicy would be
/// generated (the policy read from a file has no status); the namespace's labels are only those
/// the values file gives, and the CEL rules see the namespace as a Namespace with only its name
/// (`validate_cel.go`, no cluster client). The user's roles come from the user-info file.
#[derive(Clone, Debug, Default)]
pub struct Cli {
    pub roles: Vec<String>,
    pub cluster_roles: Vec<String>,
}

fn evaluate_as(
    set: &PolicySet,
    request: &AdmissionRequest,
    namespaces: &Namespaces<'_>,
    cli: Option<&Cli>,
) -> Option<Evaluation> {
    let kyverno = compiled(set);
    let loaded = &kyverno.loaded;
    if loaded.policies.is_empty() {
        return None;
    }
    let mut diags = Vec::new();
    let manifests = &set.manifests;
    let resource = request.object.as_ref().or(request.old_object.as_ref());
    let ns_name = if request.kind.kind == "Namespace" { "" } else { request.namespace.as_str() };
    let ns_object = match cli {
        _ if ns_name.is_empty() => None,
        Some(_) => manifests.namespaces.get(ns_name),
        None => namespaces.get(ns_name),
    };
    let labels = ns_object.map(crate::admission::labels::object_labels).unwrap_or_default();
    let u = &request.user_info;
    let (roles, cluster_roles) = match cli {
        Some(c) => (c.roles.clone(), c.cluster_roles.clone()),
        None => matching::role_refs(&manifests.rbac, &u.username, &u.groups, &request.namespace),
    };
    let info = RequestInfo {
        username: u.username.clone(),
        uid: u.uid.clone(),
        groups: u.groups.clone(),
        has_extra: !u.extra.is_empty(),
        roles,
        cluster_roles,
    };
    let mut cx = Context::new(set, kyverno, request, &info, &labels, namespaces);
    cx.cli = cli.is_some();
    let resource_ns = resource
        .and_then(|r| r.get("metadata"))
        .and_then(|m| m.get("namespace"))
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    let mut result = KyvernoResult::default();
    // The CLI knows nothing of webhooks: its engine ignores matchConditions.
    let mut own = if cli.is_none() { webhook::policy_webhooks(&cx) } else { Vec::new() };
    let rejected = own.iter_mut().find_map(|w| w.rejected.take());
    // The summary trace (the audit) reads Kyverno's response only: no policy is listed. Each
    // policy's own evaluation decides nothing (the webhooks below evaluate the rules they
    // answer with; its results were shared with them, not made for them).
    let listed = if set.summary() { 0 } else { loaded.policies.len() };
    let policies = loaded.policies.iter().zip(&loaded.vaps).take(listed);
    for (index, (p, generated)) in policies.enumerate() {
        let mut pr = KyvernoPolicyResult {
            kind: p.kind.clone(),
            name: p.name.clone(),
            namespace: p.namespace.clone(),
            ..Default::default()
        };
        if p.kind == "ClusterPolicy" {
            pr.validating_admission_policy = Some(match generated {
                Ok(g) => KyvernoGeneratedVap {
                    generated: true,
                    message: String::new(),
                    policy: Some(g.policy.clone()),
                    binding: Some(g.binding.clone()),
                },
                Err(e) => KyvernoGeneratedVap { message: e.clone(), ..Default::default() },
            });
        }
        if let Some(why) = &p.rejected {
            pr.reason = format!("Kyverno rejects this policy ({why}): it is not evaluated");
            result.policies.push(pr);
            continue;
        }
        if !p.spec.admission && cli.is_none() {
            pr.reason = "spec.admission is false: Kyverno does not evaluate it at admission".into();
            result.policies.push(pr);
            continue;
        }
        if let Some(w) = own.iter().find(|w| w.index == index) {
            pr.match_conditions = w.conditions.clone();
            if let Some(why) = &w.skipped {
                pr.reason = format!("its webhook {} is not called: {why}", w.name);
                result.policies.push(pr);
                continue;
            }
        }
        let all: Vec<usize> = (0..p.spec.rules.len()).collect();
        match engine::validate_policy(&cx, index, &all) {
            None => {
                pr.reason =
                    format!("a Policy applies only to resources in its namespace {:?}", p.namespace)
            }
            Some(er) => {
                pr.reason = if p.vap_generated && cli.is_none() {
                    "its CEL rule is evaluated by the generated ValidatingAdmissionPolicy (see validatingAdmissionPolicy and the top-level policies)".into()
                } else if er.rules.is_empty() {
                    "no rule matched the request".into()
                } else {
                    "evaluated".into()
                };
                for r in &er.rules {
                    let action = webhook::failure_action_for_rule(
                        &p.spec,
                        &er.computed,
                        &r.name,
                        &resource_ns,
                        &labels,
                    );
                    if let Some(why) = &r.unsupported {
                        diags.push(located(
                            set,
                            diagnostics::unsupported_rule(&p.display(), &r.path, &r.name, why),
                            &p.source,
                            &r.path,
                        ));
                    }
                    pr.rules.push(KyvernoRuleResult {
                        name: r.name.clone(),
                        result: r.status.map(RuleStatus::as_str),
                        message: r.message.clone(),
                        action: if is_enforce(&action) { "Enforce" } else { "Audit" }.into(),
                        unsupported: r.unsupported.clone(),
                        path: r.path.clone(),
                        evaluations: r.evaluations.clone(),
                    });
                }
                pr.not_matched = er
                    .not_matched
                    .into_iter()
                    .map(|(rule, reason)| KyvernoNotMatched { rule, reason })
                    .collect();
            }
        }
        result.policies.push(pr);
    }
    // The webhooks: the policy cache sees the request's Namespace object (none for
    // cluster-scoped requests).
    let ns = (!ns_name.is_empty()).then_some(webhook::Namespace { name: ns_name, labels: &labels });
    let mut response = AdmissionResponse { allowed: true, ..Default::default() };
    let main = webhook::WEBHOOKS.into_iter().map(|(name, ignore)| {
        (name.to_string(), Some(webhook::call(&cx, ignore, ns.as_ref())), None, Vec::new())
    });
    let own = own.into_iter().map(|w| (w.name, w.response, w.skipped, w.conditions));
    for (name, w, reason, match_conditions) in main.chain(own) {
        let mut r = KyvernoWebhookResult {
            name,
            allowed: true,
            reason,
            match_conditions,
            ..Default::default()
        };
        if let Some(w) = w {
            if w.incomplete {
                diags.push(diagnostics::response_incomplete(&r.name));
            }
            if let (Some(message), true) = (&w.denied, response.allowed) {
                response.allowed = false;
                response.status = Some(webhook::denial_status(&r.name, message));
            }
            response.warnings.extend(w.warnings.iter().cloned());
            r.policies = w.evaluated;
            r.allowed = w.denied.is_none();
            r.message = w.denied;
            r.warnings = w.warnings;
        }
        result.webhooks.push(r);
    }
    // A matchCondition that failed under failurePolicy Fail: the apiserver rejects the request
    // before it calls any validating webhook.
    if let Some(status) = rejected {
        let why = "not called: the apiserver rejected the request on a matchCondition before calling any validating webhook";
        for r in result.webhooks.iter_mut().filter(|r| r.reason.is_none()) {
            *r = KyvernoWebhookResult {
                name: std::mem::take(&mut r.name),
                allowed: true,
                reason: Some(why.into()),
                ..Default::default()
            };
        }
        response = AdmissionResponse { allowed: false, status: Some(status), ..Default::default() };
    }
    result.response = response;
    Some(Evaluation { result, diagnostics: diags })
}

/// Evaluate one resource as the Kyverno CLI's `apply`/`test` do ([`Cli`]): `operation` (CREATE
/// when `None`) of `resource` — UPDATE with the resource as old object too, DELETE with it as
/// the old object only (`makePolicyContext`) — its kind, resource and namespace derived from
/// the object and the catalog, by `user` (none: no request information, so user filters are
/// ignored in `match`). For `kyverno-test.yaml`, the expected `result` of (policy, rule,
/// resource) is the rule's `result` in `result.policies` (a rule Kyverno reports nothing for —
/// not matched — is absent). `None` when the request cannot be formed (the diagnostics say why)
/// or there is no Kyverno policy.
pub fn evaluate_resource(
    set: &PolicySet,
    resource: &Json,
    operation: Option<&str>,
    user: Option<crate::admission::request::UserInfo>,
    cli: &Cli,
) -> (Option<Evaluation>, Vec<Diagnostic>) {
    let operation = operation.unwrap_or("CREATE");
    let new = (operation != "DELETE").then(|| resource.clone());
    let old = matches!(operation, "UPDATE" | "DELETE").then(|| resource.clone());
    let input = crate::admission::request::RequestInput {
        operation: Some(operation.into()),
        user_info: user,
        object: new,
        old_object: old,
        ..Default::default()
    };
    let (request, diagnostics) = crate::admission::request::derive_request(&input, &set.catalog);
    let out = request.and_then(|r| {
        let namespaces = Namespaces::new(set, &r);
        evaluate_as(set, &r, &namespaces, Some(cli))
    });
    (out, diagnostics)
}

/// Combine the VAP plugin's response with Kyverno's webhooks as the apiserver orders them:
/// ValidatingAdmissionPolicy runs before the validating webhooks, so a VAP denial is the
/// answer (Kyverno is not called); otherwise Kyverno's denial, and the warnings of both through
/// the apiserver's warning recorder.
pub fn combine(vap: &mut AdmissionResponse, kyverno: &AdmissionResponse) {
    if !vap.allowed {
        return;
    }
    // The webhook's warnings go through the same recorder as the policies' (dedup, header
    // validity, size budget: vap-semantics.md §2.4).
    let mut recorder = crate::admission::decision::WarningRecorder::default();
    for w in vap.warnings.iter().chain(&kyverno.warnings) {
        recorder.add(w);
    }
    vap.warnings = recorder.texts();
    if !kyverno.allowed {
        vap.allowed = false;
        vap.status = kyverno.status.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::{load, present};
    use crate::admission::policy_set::PolicySet;
    use crate::environment::KubeVersion;

    /// The shortcut the admission chain takes: manifests without a kyverno.io object load no
    /// policy and say nothing; one inside a List, or of an API version Kyverno does not serve
    /// (which `load` reports), counts.
    #[test]
    fn only_manifests_without_kyverno_objects_skip_kyverno() {
        let cases = [
            ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", false),
            ("apiVersion: example.com/v1\nkind: ClusterPolicy\nmetadata: {name: a}\n", false),
            ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: kyverno.io/v1\n  kind: ClusterPolicy\n  metadata: {name: a}\n  spec: {rules: []}\n", true),
            ("apiVersion: kyverno.io/v9\nkind: ClusterPolicy\nmetadata: {name: a}\n", true),
        ];
        for (text, expected) in cases {
            let set = PolicySet::build(text, KubeVersion::default(), None, true);
            assert_eq!(present(&set), expected, "{text}");
            let loaded = load(&set);
            let found = !loaded.policies.is_empty() || !loaded.diagnostics.is_empty();
            assert_eq!(found, expected, "{text}");
        }
    }
}
