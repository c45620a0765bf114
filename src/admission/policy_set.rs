//! A compiled set of manifests: loaded, defaulted, API-validated and compiled once, then
//! evaluated against any number of requests (what an editor extension keeps between keystrokes).

use super::compile::{CelCompiler, CompiledPolicy};
use super::manifests::{load_manifests, Manifests};
use super::matching::MatchResult;
#[cfg(not(target_arch = "wasm32"))]
use super::matching::{rules_result, MatchContext, RulesKey};
use super::params::{resolve_param_kind, ParamKindResolution};
use super::request::AdmissionRequest;
use super::resources::ResourceCatalog;
use super::typechecking::{check_policy, PolicyTypeCheck, SchemaSources};
use crate::cel::value::Value;
use crate::diagnostic::Diagnostic;
use crate::environment::{EnvironmentMode, KubeVersion};
use crate::library::authz::{
    authorizer_value, request_resource_value, Rbac, RequestResource, UserInfo,
};
use serde_json::Value as Json;
use std::rc::Rc;

/// What to do with a policy that no binding references (issue 13: "half a setup"); in JSON
/// `"skip"`, `"preview"` or `"bind"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify::Tsify),
    tsify(type = "\"skip\" | \"preview\" | \"bind\"")
)]
pub enum UnboundPolicies {
    /// The apiserver's behaviour: never evaluated (spec §1.3).
    #[default]
    Skip,
    /// Never evaluated for the response, and evaluated beside it as if bound with
    /// validationActions [Deny]: the trace shows that evaluation under a binding marked
    /// `hypothetical`; the response stays the apiserver's.
    Preview,
    /// As `preview`, and the hypothetical binding's decisions count in the response, as in
    /// Kyverno's CLI (which evaluates an unbound policy as if bound with Deny).
    Bind,
}

/// What to do when the request's Namespace was not supplied (issue 13); in JSON `"assume"` or
/// `"strict"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(type = "\"assume\" | \"strict\""))]
pub enum MissingNamespaces {
    /// Assume it exists with only its `kubernetes.io/metadata.name` label (in a cluster a
    /// request for a namespace that does not exist never reaches admission), with an info
    /// diagnostic `namespace-assumed` when the assumption was used.
    #[default]
    Assume,
    /// The apiserver's answer once admission runs without it: 404 NotFound (spec §1.5, §3.4).
    Strict,
}

/// Deserialised from its name (one string deserialiser for both option enums, instead of serde's
/// enum machinery per type: smaller wasm).
fn by_name<'de, D: serde::Deserializer<'de>, T: Copy>(
    d: D,
    names: &'static [&'static str],
    values: &[T],
) -> Result<T, D::Error> {
    let name = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
    match names.iter().position(|n| *n == name).and_then(|i| values.get(i)) {
        Some(v) => Ok(*v),
        None => Err(serde::de::Error::unknown_variant(&name, names)),
    }
}

impl<'de> serde::Deserialize<'de> for UnboundPolicies {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use UnboundPolicies::*;
        by_name(d, &["skip", "preview", "bind"], &[Skip, Preview, Bind])
    }
}

impl<'de> serde::Deserialize<'de> for MissingNamespaces {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use MissingNamespaces::*;
        by_name(d, &["assume", "strict"], &[Assume, Strict])
    }
}

/// Evaluation options beyond the apiserver's own behaviour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetupOptions {
    pub unbound_policies: UnboundPolicies,
    pub missing_namespaces: MissingNamespaces,
}

/// Manifests ready to evaluate.
pub struct PolicySet {
    /// The manifest text every manifest diagnostic's span indexes.
    pub text: String,
    pub manifests: Manifests,
    /// The built-in resources and the supplied CRDs (`manifests.catalog()`), built once.
    pub catalog: ResourceCatalog,
    pub version: KubeVersion,
    /// The StoredExpressions compiler evaluation uses.
    pub compiler: CelCompiler,
    /// `compiled[i]` belongs to `manifests.policies[i]`.
    pub compiled: Vec<CompiledPolicy>,
    /// `param_kinds[i]`: how the `paramKind` of `manifests.policies[i]` resolves (it depends
    /// on the set only, not on the request).
    pub param_kinds: Vec<ParamKindResolution>,
    /// `policy_bindings[i]`: the indexes in `manifests.bindings` of the bindings whose
    /// `policyName` is `manifests.policies[i]`'s name, in their order (found once per set,
    /// not per request).
    pub policy_bindings: Vec<Vec<usize>>,
    /// Loading, API validation and compile problems (request-independent).
    pub diagnostics: Vec<Diagnostic>,
    /// The webhook configurations of the manifests (`crate::webhook`).
    pub webhooks: crate::webhook::WebhookSet,
    /// The Kyverno policies and the policies they generate, made on the first request
    /// (`crate::kyverno::compiled`).
    #[cfg(feature = "kyverno")]
    pub kyverno: std::cell::OnceCell<crate::kyverno::KyvernoSet>,
    /// Whether the manifests hold a kyverno.io object (`crate::kyverno::present`).
    #[cfg(feature = "kyverno")]
    pub kyverno_objects: bool,
    /// The RBAC objects supplied with the manifests, for the offline authorizer; `None` when
    /// there are none (every check is then a NoOpinion decision).
    pub rbac: Option<Rc<Rbac>>,
    /// Unbound policies and missing namespaces (default: skip, assume).
    pub setup: SetupOptions,
    /// Objects are evaluated as the apiserver stores them (crate::objects); false: as given.
    pub normalize_objects: bool,
    /// What that changed in the param and namespace objects of the manifests.
    pub object_changes: Vec<crate::objects::ObjectChange>,
    /// The namespaces assumed so far (`missingNamespaces: assume`), by name
    /// ([`PolicySet::assumed_namespace`]).
    assumed_namespaces: std::cell::RefCell<std::collections::HashMap<String, std::rc::Rc<Json>>>,
    /// `type_checks[i]` is the type checking of `manifests.policies[i]` (its status warnings).
    pub type_checks: Vec<PolicyTypeCheck>,
    /// Build only the trace that decisions and per-binding summaries need (the audit's
    /// mode): the same evaluation, without the reasons of policies and bindings that do not
    /// match, the expressions' texts and values, the variables or the webhooks'
    /// AdmissionReviews; a result holds only the request's own diagnostics, no object
    /// changes and no type checking. Default false: the full trace.
    pub summary_trace: bool,
    /// The resource rules' results per request key ([`PolicySet::rules_for`]; native only:
    /// the package evaluates one request per set).
    #[cfg(not(target_arch = "wasm32"))]
    rules_memo: std::cell::RefCell<Vec<(RulesKey, Rc<SetRules>)>>,
    /// Some policy's or binding's rule lists `resourceNames`: the results depend on the
    /// request's name, and are not kept.
    #[cfg(not(target_arch = "wasm32"))]
    names_matter: bool,
}

/// What the resource rules of every policy's `matchConstraints` (`policies[i]`) and every
/// binding's `matchResources` (`bindings[j]`) decide for one request key
/// ([`super::matching::rules_result`]); `None` where there is no MatchResources.
pub struct SetRules {
    pub policies: Vec<Option<MatchResult>>,
    pub bindings: Vec<Option<MatchResult>>,
}

/// Most keys kept per set: an audit's objects are of few kinds.
#[cfg(not(target_arch = "wasm32"))]
const RULES_MEMO_KEYS: usize = 64;

impl PolicySet {
    pub fn new(text: &str, version: KubeVersion) -> PolicySet {
        Self::build(text, version, Some(&serde_json::Map::new()), true)
    }

    /// Load, validate and compile `text`. `schemas` (`"<apiVersion>/<Kind>"` → OpenAPI v3
    /// schema) are used for type checking before the CRDs and built-in schemas; `None` skips
    /// type checking altogether (tests use it to show that type checking never changes a
    /// decision). `normalize_objects` false evaluates every object exactly as given.
    pub fn build(
        text: &str,
        version: KubeVersion,
        schemas: Option<&serde_json::Map<String, serde_json::Value>>,
        normalize_objects: bool,
    ) -> PolicySet {
        let mut manifests = load_manifests(text);
        let mut object_changes = Vec::new();
        let mut object_diagnostics = Vec::new();
        if normalize_objects {
            let crds = manifests.crds.clone();
            // A Namespace is both a param candidate and a namespace object: report it once.
            let mut done: Vec<String> = Vec::new();
            let mut run = |v: &mut serde_json::Value, label: String| {
                let n = crate::objects::normalize(v, version, &crds, &label);
                if !done.contains(&label) {
                    object_changes.extend(n.changes);
                    object_diagnostics.extend(n.diagnostics);
                    done.push(label);
                }
            };
            // Only objects some policy can read as params (by paramKind's group and kind; any
            // object in the manifests is a param candidate, most are never read).
            let param_kinds: Vec<(String, String)> = manifests
                .policies
                .iter()
                .filter_map(|p| p.object.spec.param_kind.as_ref())
                .map(|k| {
                    let group = k.api_version.rsplit_once('/').map_or("", |(g, _)| g);
                    (group.to_string(), k.kind.clone())
                })
                .collect();
            for p in manifests.params.iter_mut() {
                if !param_kinds.iter().any(|(g, k)| *g == p.gvk.group && *k == p.gvk.kind) {
                    continue;
                }
                let label = if p.namespace.is_empty() {
                    format!("{} {}", p.gvk.kind, p.name)
                } else {
                    format!("{} {}/{}", p.gvk.kind, p.namespace, p.name)
                };
                run(&mut p.value, label);
            }
            for (name, ns) in manifests.namespaces.iter_mut() {
                run(ns, format!("Namespace {name}"));
            }
        }
        let compiler = CelCompiler::new(version, EnvironmentMode::StoredExpressions);
        let compiled: Vec<CompiledPolicy> =
            manifests.policies.iter().map(|p| CompiledPolicy::new(&p.object, &compiler)).collect();
        let mut diagnostics = manifests.diagnostics.clone();
        diagnostics.extend(object_diagnostics);
        let mut cel = Vec::new();
        for (p, c) in manifests.policies.iter().zip(&compiled) {
            cel.extend(super::dispatcher::compile_diagnostics(text, &manifests, p, c));
        }
        // API validation compiles new expressions with the NewExpressions environment (spec §7.4).
        // Expressions that fail at evaluation too are reported once, with positions, by `cel`;
        // what remains are the version-gate rejections and the non-CEL rules.
        let validation = CelCompiler::new(version, EnvironmentMode::NewExpressions);
        for d in manifests.validate(&validation) {
            let duplicate = cel.iter().any(|c| c.field == d.field);
            if !duplicate {
                diagnostics.push(d);
            }
        }
        // Type checking against the matched kinds' schemas (warnings; evaluation unaffected).
        let no_schemas = serde_json::Map::new();
        let sources = SchemaSources {
            user: schemas.unwrap_or(&no_schemas),
            crds: &manifests.crds,
            builtin: schemas.and_then(|_| SchemaSources::builtin_for(version)),
        };
        let type_checks: Vec<PolicyTypeCheck> = manifests
            .policies
            .iter()
            .filter(|_| schemas.is_some())
            .map(|p| {
                let prefix = format!("ValidatingAdmissionPolicy/{}: ", p.object.metadata.name);
                let failed = |path: &str| {
                    cel.iter().any(|d| d.field.strip_prefix(prefix.as_str()) == Some(path))
                };
                check_policy(text, &manifests, p, &sources, version, &failed)
            })
            .collect();
        diagnostics.extend(cel);
        let webhooks = crate::webhook::WebhookSet::new(text, &manifests, &compiler, &validation);
        diagnostics.extend(webhooks.diagnostics.iter().cloned());
        for t in &type_checks {
            diagnostics.extend(t.diagnostics.iter().cloned());
        }
        if schemas.is_some() && sources.builtin.is_none() && !manifests.policies.is_empty() {
            diagnostics.push(super::diagnostics::schemas_not_loaded(&version.to_string()));
        }
        let rbac = if manifests.rbac.is_empty() {
            None
        } else {
            load_rbac(&manifests.rbac, &mut diagnostics)
        };
        let catalog = manifests.catalog();
        let param_kinds = manifests
            .policies
            .iter()
            .map(|p| {
                resolve_param_kind(p.object.spec.param_kind.as_ref(), &catalog, &manifests.params)
            })
            .collect();
        let mut policy_bindings = vec![Vec::new(); manifests.policies.len()];
        for (i, b) in manifests.bindings.iter().enumerate() {
            for (p, own) in manifests.policies.iter().zip(&mut policy_bindings) {
                if p.object.metadata.name == b.object.spec.policy_name {
                    own.push(i);
                }
            }
        }
        #[cfg(feature = "kyverno")]
        let kyverno_objects = crate::kyverno::mentioned(&manifests);
        #[cfg(not(target_arch = "wasm32"))]
        let names_matter = {
            let named = |m: Option<&super::types::MatchResources>| {
                m.is_some_and(|m| {
                    m.resource_rules
                        .iter()
                        .chain(&m.exclude_resource_rules)
                        .any(|r| !r.resource_names.is_empty())
                })
            };
            manifests.policies.iter().any(|p| named(p.object.spec.match_constraints.as_ref()))
                || manifests.bindings.iter().any(|b| named(b.object.spec.match_resources.as_ref()))
        };
        PolicySet {
            text: text.to_string(),
            catalog,
            param_kinds,
            policy_bindings,
            manifests,
            version,
            compiler,
            compiled,
            diagnostics,
            webhooks,
            #[cfg(feature = "kyverno")]
            kyverno: std::cell::OnceCell::new(),
            #[cfg(feature = "kyverno")]
            kyverno_objects,
            rbac,
            setup: SetupOptions::default(),
            normalize_objects,
            object_changes,
            assumed_namespaces: Default::default(),
            type_checks,
            summary_trace: false,
            #[cfg(not(target_arch = "wasm32"))]
            rules_memo: Default::default(),
            #[cfg(not(target_arch = "wasm32"))]
            names_matter,
        }
    }

    /// The resource rules' results for `request`'s key, computed on the first request of that
    /// key and kept: the audit's (summary trace) sets, natively; `None` otherwise, or when a
    /// rule lists `resourceNames` (the set's manifests must not change once it is used).
    pub fn rules_for(&self, request: &AdmissionRequest) -> Option<Rc<SetRules>> {
        #[cfg(target_arch = "wasm32")]
        {
            let _ = request;
            None
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            if self.names_matter || !self.summary() {
                return None;
            }
            if let Some((_, r)) = self.rules_memo.borrow().iter().find(|(k, _)| k.is(request)) {
                return Some(r.clone());
            }
            if self.rules_memo.borrow().len() >= RULES_MEMO_KEYS {
                return None;
            }
            let namespaces = std::collections::BTreeMap::new();
            let cx = MatchContext { request, namespaces: &namespaces, catalog: &self.catalog };
            let rules = Rc::new(SetRules {
                policies: (self.manifests.policies.iter())
                    .map(|p| p.object.spec.match_constraints.as_ref().map(|m| rules_result(m, cx)))
                    .collect(),
                bindings: (self.manifests.bindings.iter())
                    .map(|b| b.object.spec.match_resources.as_ref().map(|m| rules_result(m, cx)))
                    .collect(),
            });
            self.rules_memo.borrow_mut().push((RulesKey::new(request), rules.clone()));
            Some(rules)
        }
    }

    /// [`PolicySet::summary_trace`], always false in the package (only the native audit sets
    /// it): the package's wasm then leaves the summary trace's branches out.
    pub fn summary(&self) -> bool {
        cfg!(not(target_arch = "wasm32")) && self.summary_trace
    }

    /// The namespace `name` as `missingNamespaces: assume` has it
    /// ([`super::namespaces::assumed`]), made once per name and kept with the set.
    pub fn assumed_namespace(&self, name: &str) -> Option<std::rc::Rc<Json>> {
        if let Some(v) = self.assumed_namespaces.borrow().get(name) {
            return Some(v.clone());
        }
        // Kept with the set: not in the per-call arena.
        crate::arena::outside(|| {
            let v = std::rc::Rc::new(super::namespaces::assumed(name)?);
            self.assumed_namespaces.borrow_mut().insert(name.to_string(), v.clone());
            Some(v)
        })
    }

    /// The `authorizer` and `authorizer.requestResource` values for `request`: the request's
    /// user, answered by the supplied RBAC objects (spec §4.2).
    pub fn authorizer(&self, request: &AdmissionRequest) -> (Value<'static>, Value<'static>) {
        let u = &request.user_info;
        let user = UserInfo {
            name: u.username.clone(),
            uid: u.uid.clone(),
            groups: u.groups.clone(),
            extra: u.extra.clone(),
        };
        let resource = RequestResource {
            group: request.request_resource.group.clone(),
            resource: request.request_resource.resource.clone(),
            subresource: request.request_sub_resource.clone(),
            namespace: request.namespace.clone(),
            name: request.name.clone(),
        };
        (
            authorizer_value(self.rbac.clone(), user.clone()),
            request_resource_value(self.rbac.clone(), user, &resource),
        )
    }
}

/// The RBAC objects of the manifests for the authorizer library (out of line: most manifests
/// hold none, and a page's first `evaluate()` compiles whatever sits in [`PolicySet::build`]).
#[inline(never)]
fn load_rbac(objects: &[serde_json::Value], diagnostics: &mut Vec<Diagnostic>) -> Option<Rc<Rbac>> {
    match Rbac::from_objects(objects) {
        Ok(r) => Some(Rc::new(r)),
        Err(e) => {
            diagnostics.push(Diagnostic::error("rbac-invalid", e));
            None
        }
    }
}
