//! Kubernetes `Authz` library (since Kubernetes 1.27; `fieldSelector`/`labelSelector` since
//! 1.31): an offline RBAC authorizer behind the CEL `authorizer` variable.
//!
//! ```text
//! authorizer.path(<string>) <PathCheck>                        -> check_path_arg ("path must not be empty")
//! authorizer.group(<string>) <GroupCheck>
//! authorizer.serviceAccount(<string> ns, <string> name) <Authorizer> -> service_account_user
//! <GroupCheck>.resource(<string>) <ResourceCheck>              -> check_resource_arg ("resource must not be empty")
//! <ResourceCheck>.subresource/namespace/name(<string>) <ResourceCheck>   ("" = unset)
//! <ResourceCheck>.fieldSelector/labelSelector(<string>) <ResourceCheck>  (RBAC ignores both)
//! <PathCheck>.check(<string> httpVerb) <Decision>              -> Rbac::authorize(NonResource)
//! <ResourceCheck>.check(<string> apiVerb) <Decision>           -> Rbac::authorize(Resource)
//! <Decision>.allowed() <bool>, .reason() <string>, .errored() <bool>, .error() <string>
//! ```
//!
//! Examples:
//!
//! ```text
//! authorizer.group('').resource('pods').namespace('default').check('create').allowed()
//!   // true when a RoleBinding in "default" grants create on pods;
//!   // reason: RBAC: allowed by RoleBinding "rb/default" of Role "r" to User "alice"
//! authorizer.path('/healthz').check('get').allowed()  // NonResourceURLs "/healthz" or "/health*"
//! authorizer.serviceAccount('default', 'Bad_Name')    // error: Invalid service account name
//! ```
//!
//! Decision rules are RBAC's (k/k `plugin/pkg/auth/authorizer/rbac/rbac.go`,
//! `pkg/registry/rbac/validation/rule.go`, `pkg/apis/rbac/v1/evaluation_helpers.go`):
//! ClusterRoleBindings are visited before RoleBindings of the request namespace; the first rule
//! that allows wins and names its binding in the reason; otherwise NoOpinion with an empty
//! reason, or `RBAC: <errors>` when bindings referenced missing roles. Members of
//! `system:masters` are allowed with an empty reason, as the apiserver's privileged-group
//! authorizer (ahead of RBAC) does.
//!
//! Determinism: the apiserver walks bindings in informer order, which only changes *which*
//! binding the reason names. We visit bindings sorted by (namespace, name).
//! ClusterRole `aggregationRule`s are resolved the way the aggregation controller would
//! (rules of the selected ClusterRoles, de-duplicated, selected roles in name order).

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::format::{dns1123_label, dns1123_subdomain};
use super::gostr::quote;

/// `rbacv1.PolicyRule`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicyRule {
    pub verbs: Vec<String>,
    pub api_groups: Vec<String>,
    pub resources: Vec<String>,
    pub resource_names: Vec<String>,
    #[serde(rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
}

/// The metadata fields RBAC reads.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectMeta {
    pub name: String,
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
}

/// `metav1.LabelSelectorRequirement`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LabelSelectorRequirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

/// `metav1.LabelSelector`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LabelSelector {
    pub match_labels: BTreeMap<String, String>,
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

impl LabelSelector {
    /// `LabelSelectorAsSelector(..).Matches`; `None` when the selector is invalid.
    fn matches(&self, labels: &BTreeMap<String, String>) -> Option<bool> {
        for (k, v) in &self.match_labels {
            if labels.get(k) != Some(v) {
                return Some(false);
            }
        }
        for r in &self.match_expressions {
            let value = labels.get(&r.key);
            let ok = match r.operator.as_str() {
                "In" => value.is_some_and(|v| r.values.contains(v)),
                "NotIn" => value.is_none_or(|v| !r.values.contains(v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                _ => return None,
            };
            if !ok {
                return Some(false);
            }
        }
        Some(true)
    }
}

/// `rbacv1.AggregationRule`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AggregationRule {
    pub cluster_role_selectors: Vec<LabelSelector>,
}

/// `rbacv1.Role` / `rbacv1.ClusterRole`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Role {
    pub metadata: ObjectMeta,
    pub rules: Vec<PolicyRule>,
    pub aggregation_rule: Option<AggregationRule>,
}

/// `rbacv1.Subject`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Subject {
    pub kind: String,
    pub api_group: String,
    pub name: String,
    pub namespace: String,
}

/// `rbacv1.RoleRef`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RoleRef {
    pub api_group: String,
    pub kind: String,
    pub name: String,
}

/// `rbacv1.RoleBinding` / `rbacv1.ClusterRoleBinding`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Binding {
    pub metadata: ObjectMeta,
    pub subjects: Vec<Subject>,
    pub role_ref: RoleRef,
}

/// The requesting user (`user.Info`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UserInfo {
    #[serde(alias = "username")]
    pub name: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

/// What is being asked (`authorizer.Attributes`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attributes {
    Resource {
        verb: String,
        api_group: String,
        resource: String,
        subresource: String,
        namespace: String,
        name: String,
    },
    NonResource {
        verb: String,
        path: String,
    },
}

/// `authorizer.Decision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    NoOpinion,
    Deny,
}

/// What the CEL `Decision` value exposes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthzDecision {
    pub decision: Decision,
    /// `reason()`; empty for NoOpinion unless RBAC met errors.
    pub reason: String,
    /// `error()`; `None` means `errored()` is false. RBAC itself never returns one.
    pub error: Option<String>,
}

impl AuthzDecision {
    /// `allowed()`: only Allow.
    pub fn allowed(&self) -> bool {
        self.decision == Decision::Allow
    }
}

/// All RBAC objects of a cluster.
#[derive(Clone, Debug, Default)]
pub struct Rbac {
    pub roles: Vec<Role>,
    pub cluster_roles: Vec<Role>,
    pub role_bindings: Vec<Binding>,
    pub cluster_role_bindings: Vec<Binding>,
}

pub const SERVICE_ACCOUNT_NAME_ERROR: &str = "Invalid service account name";
pub const SERVICE_ACCOUNT_NAMESPACE_ERROR: &str = "Invalid service account namespace";

/// `authorizer.serviceAccount(namespace, name)`: the impersonated service-account user
/// (`serviceaccount.UserInfo`), after apimachinery name validation.
pub fn service_account_user(namespace: &str, name: &str) -> Result<UserInfo, String> {
    if !dns1123_subdomain(name).is_empty() {
        return Err(SERVICE_ACCOUNT_NAME_ERROR.to_string());
    }
    if !dns1123_label(namespace).is_empty() {
        return Err(SERVICE_ACCOUNT_NAMESPACE_ERROR.to_string());
    }
    Ok(UserInfo {
        name: format!("system:serviceaccount:{namespace}:{name}"),
        uid: String::new(),
        groups: vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{namespace}"),
        ],
        extra: BTreeMap::new(),
    })
}

/// `authorizer.path(p)` argument check (blank after Go `strings.TrimSpace`).
pub fn check_path_arg(path: &str) -> Result<(), String> {
    if path.trim().is_empty() {
        return Err("path must not be empty".to_string());
    }
    Ok(())
}

/// `group.resource(r)` argument check (blank after Go `strings.TrimSpace`).
pub fn check_resource_arg(resource: &str) -> Result<(), String> {
    if resource.trim().is_empty() {
        return Err("resource must not be empty".to_string());
    }
    Ok(())
}

fn has_all_or(list: &[String], want: &str) -> bool {
    list.iter().any(|x| x == "*" || x == want)
}

/// RBAC `RuleAllows`.
pub fn rule_allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    match attrs {
        Attributes::Resource { verb, api_group, resource, subresource, name, .. } => {
            let combined = if subresource.is_empty() {
                resource.clone()
            } else {
                format!("{resource}/{subresource}")
            };
            let resource_ok = rule.resources.iter().any(|r| {
                r == "*"
                    || *r == combined
                    || (!subresource.is_empty()
                        && r.len() == subresource.len() + 2
                        && r.starts_with("*/")
                        && r.ends_with(subresource.as_str()))
            });
            has_all_or(&rule.verbs, verb)
                && has_all_or(&rule.api_groups, api_group)
                && resource_ok
                && (rule.resource_names.is_empty() || rule.resource_names.contains(name))
        }
        Attributes::NonResource { verb, path } => {
            has_all_or(&rule.verbs, verb)
                && rule.non_resource_urls.iter().any(|u| {
                    u == "*"
                        || u == path
                        || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
                })
        }
    }
}

fn applies_to(user: &UserInfo, s: &Subject, namespace: &str) -> bool {
    match s.kind.as_str() {
        "User" => user.name == s.name,
        "Group" => user.groups.contains(&s.name),
        "ServiceAccount" => {
            let ns = if s.namespace.is_empty() { namespace } else { &s.namespace };
            !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{}", s.name)
        }
        _ => false,
    }
}

fn describe_subject(s: &Subject, binding_namespace: &str) -> String {
    if s.kind == "ServiceAccount" {
        let ns = if s.namespace.is_empty() { binding_namespace } else { &s.namespace };
        return format!("{} {}", s.kind, quote(&format!("{}/{}", s.name, ns)));
    }
    format!("{} {}", s.kind, quote(&s.name))
}

impl Rbac {
    /// Sorts Kubernetes objects (`kind` = Role, ClusterRole, RoleBinding, ClusterRoleBinding;
    /// others ignored) into a policy.
    // `#[inline]` so that this, and the serde derives it instantiates, are compiled in the
    // calling crate (the admission pipeline, built for size) rather than in this one, which is
    // built for speed: loading RBAC objects runs once per policy set.
    #[inline]
    pub fn from_objects(objects: &[serde_json::Value]) -> Result<Rbac, String> {
        let mut rbac = Rbac::default();
        for o in objects {
            let kind = o.get("kind").and_then(|k| k.as_str()).unwrap_or("");
            let parse_err = |e: serde_json::Error| format!("invalid {kind}: {e}");
            match kind {
                "Role" => rbac.roles.push(Role::deserialize(o).map_err(parse_err)?),
                "ClusterRole" => rbac.cluster_roles.push(Role::deserialize(o).map_err(parse_err)?),
                "RoleBinding" => {
                    rbac.role_bindings.push(Binding::deserialize(o).map_err(parse_err)?)
                }
                "ClusterRoleBinding" => {
                    rbac.cluster_role_bindings.push(Binding::deserialize(o).map_err(parse_err)?)
                }
                _ => {}
            }
        }
        Ok(rbac)
    }

    fn cluster_role_rules(
        &self,
        name: &str,
        seen: &mut BTreeSet<String>,
    ) -> Option<Vec<PolicyRule>> {
        let role = self.cluster_roles.iter().find(|r| r.metadata.name == name)?;
        let Some(agg) = &role.aggregation_rule else {
            return Some(role.rules.clone());
        };
        if !seen.insert(name.to_string()) {
            return Some(role.rules.clone());
        }
        let mut rules: Vec<PolicyRule> = Vec::new();
        for selector in &agg.cluster_role_selectors {
            let mut matched: Vec<&Role> = self
                .cluster_roles
                .iter()
                .filter(|r| r.metadata.name != name)
                .filter(|r| selector.matches(&r.metadata.labels) == Some(true))
                .collect();
            crate::sort::sort_by(&mut matched, |a, b| a.metadata.name.cmp(&b.metadata.name));
            for m in matched {
                for rule in self.cluster_role_rules(&m.metadata.name, seen).unwrap_or_default() {
                    if !rules.contains(&rule) {
                        rules.push(rule);
                    }
                }
            }
        }
        Some(rules)
    }

    /// `GetRoleReferenceRules`, with apiserver's NotFound texts.
    fn role_ref_rules(&self, r: &RoleRef, namespace: &str) -> Result<Vec<PolicyRule>, String> {
        match r.kind.as_str() {
            "Role" => self
                .roles
                .iter()
                .find(|x| x.metadata.name == r.name && x.metadata.namespace == namespace)
                .map(|x| x.rules.clone())
                .ok_or_else(|| {
                    format!("role.rbac.authorization.k8s.io {} not found", quote(&r.name))
                }),
            "ClusterRole" => {
                self.cluster_role_rules(&r.name, &mut BTreeSet::new()).ok_or_else(|| {
                    format!("clusterrole.rbac.authorization.k8s.io {} not found", quote(&r.name))
                })
            }
            other => Err(format!("unsupported role reference kind: {}", quote(other))),
        }
    }

    /// RBAC `Authorize` (preceded by the `system:masters` privileged-group check).
    pub fn authorize(&self, user: &UserInfo, attrs: &Attributes) -> AuthzDecision {
        if user.groups.iter().any(|g| g == "system:masters") {
            return AuthzDecision { decision: Decision::Allow, reason: String::new(), error: None };
        }
        let namespace = match attrs {
            Attributes::Resource { namespace, .. } => namespace.as_str(),
            Attributes::NonResource { .. } => "",
        };
        let mut errors = Vec::new();
        let mut crbs: Vec<&Binding> = self.cluster_role_bindings.iter().collect();
        crate::sort::sort_by(&mut crbs, |a, b| a.metadata.name.cmp(&b.metadata.name));
        let mut rbs: Vec<&Binding> = if namespace.is_empty() {
            Vec::new()
        } else {
            self.role_bindings.iter().filter(|b| b.metadata.namespace == namespace).collect()
        };
        crate::sort::sort_by(&mut rbs, |a, b| a.metadata.name.cmp(&b.metadata.name));
        let visits = crbs.into_iter().map(|b| (b, true)).chain(rbs.into_iter().map(|b| (b, false)));
        for (binding, cluster) in visits {
            let scope = if cluster { "" } else { namespace };
            let Some(subject) = binding.subjects.iter().find(|s| applies_to(user, s, scope)) else {
                continue;
            };
            let rules = match self.role_ref_rules(&binding.role_ref, scope) {
                Ok(rules) => rules,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            if rules.iter().any(|r| rule_allows(attrs, r)) {
                let source = if cluster {
                    format!(
                        "ClusterRoleBinding {} of {} {} to {}",
                        quote(&binding.metadata.name),
                        binding.role_ref.kind,
                        quote(&binding.role_ref.name),
                        describe_subject(subject, "")
                    )
                } else {
                    format!(
                        "RoleBinding {} of {} {} to {}",
                        quote(&format!("{}/{}", binding.metadata.name, binding.metadata.namespace)),
                        binding.role_ref.kind,
                        quote(&binding.role_ref.name),
                        describe_subject(subject, &binding.metadata.namespace)
                    )
                };
                return AuthzDecision {
                    decision: Decision::Allow,
                    reason: format!("RBAC: allowed by {source}"),
                    error: None,
                };
            }
        }
        let reason = match errors.len() {
            0 => String::new(),
            1 => format!("RBAC: {}", errors[0]),
            _ => format!("RBAC: [{}]", errors.join(", ")),
        };
        AuthzDecision { decision: Decision::NoOpinion, reason, error: None }
    }
}

/// Cost of `check()`: 350,000 (apiserver `cost.go`); other authz builder calls cost 1.
pub const CHECK_COST: u64 = 350_000;

// ---------------------------------------------------------------------------------------------
// CEL declarations (apiserver overload ids, in the apiserver's declaration order)

/// Declare the authorizer functions (apiserver `authzLibraryDecls`). The authorizer types are
/// object types without fields (apiserver `cel.ObjectType`), so selecting a field on them is an
/// `undefined field` error.
pub fn declare(d: &mut crate::cel::decls::Declarations) {
    crate::cel::signature::declare(d, DECLS);
}

/// The authorizer library's overloads (`authz.go`), in its declaration order.
const DECLS: &[crate::cel::signature::Row] = &[
    ("path", "authorizer_path", "kubernetes.authorization.Authorizer.(string) -> kubernetes.authorization.PathCheck"),
    ("group", "authorizer_group", "kubernetes.authorization.Authorizer.(string) -> kubernetes.authorization.GroupCheck"),
    (
        "serviceAccount",
        "authorizer_serviceaccount",
        "kubernetes.authorization.Authorizer.(string, string) -> kubernetes.authorization.Authorizer",
    ),
    ("resource", "groupcheck_resource", "kubernetes.authorization.GroupCheck.(string) -> kubernetes.authorization.ResourceCheck"),
    ("subresource", "resourcecheck_subresource", "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck"),
    ("namespace", "resourcecheck_namespace", "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck"),
    ("name", "resourcecheck_name", "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck"),
    ("check", "pathcheck_check", "kubernetes.authorization.PathCheck.(string) -> kubernetes.authorization.Decision"),
    ("check", "resourcecheck_check", "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.Decision"),
    ("errored", "decision_errored", "kubernetes.authorization.Decision.() -> bool"),
    ("error", "decision_error", "kubernetes.authorization.Decision.() -> string"),
    ("allowed", "decision_allowed", "kubernetes.authorization.Decision.() -> bool"),
    ("reason", "decision_reason", "kubernetes.authorization.Decision.() -> string"),
];

/// Declare `fieldSelector` and `labelSelector` (apiserver `authzSelectorsLibraryDecls`, 1.31).
pub fn declare_selectors(d: &mut crate::cel::decls::Declarations) {
    crate::cel::signature::declare(d, SELECTOR_DECLS);
}

/// The selector overloads (1.31).
const SELECTOR_DECLS: &[crate::cel::signature::Row] = &[
    (
        "fieldSelector",
        "authorizer_fieldselector",
        "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck",
    ),
    (
        "labelSelector",
        "authorizer_labelselector",
        "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck",
    ),
];

// ---------------------------------------------------------------------------------------------
// CEL implementations

use crate::cel::stdlib::{Ctx, Fail, Overload, R};
use crate::cel::value::{OpaqueValue, Value};
use crate::library::bind::{self, opaque, wrap};
use crate::library::type_name;
use std::rc::Rc;

/// `reason()` of every check when no RBAC objects were supplied with the input: the offline
/// authorizer then has no opinion (NoOpinion: `allowed()` is false, `errored()` false).
pub const NO_RBAC_REASON: &str =
    "no RBAC objects supplied: the offline authorizer has no opinion on any request";

/// The request fields `authorizer.requestResource` is pre-filled with (spec §4.2: the
/// request's original group, resource, subresource, namespace and name).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestResource {
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
}

/// `kubernetes.authorization.Authorizer`: who asks, and the RBAC objects that answer.
#[derive(Clone, Debug)]
pub struct AuthorizerValue {
    rbac: Option<Rc<Rbac>>,
    user: Rc<UserInfo>,
}

impl AuthorizerValue {
    pub fn new(rbac: Option<Rc<Rbac>>, user: UserInfo) -> Self {
        AuthorizerValue { rbac, user: Rc::new(user) }
    }

    fn authorize(&self, attrs: &Attributes) -> AuthzDecision {
        match &self.rbac {
            Some(rbac) => rbac.authorize(&self.user, attrs),
            None => AuthzDecision {
                decision: Decision::NoOpinion,
                reason: NO_RBAC_REASON.to_string(),
                error: None,
            },
        }
    }
}

/// `kubernetes.authorization.PathCheck`.
#[derive(Clone, Debug)]
pub struct PathCheckValue {
    authorizer: AuthorizerValue,
    path: String,
}

/// `kubernetes.authorization.GroupCheck`.
#[derive(Clone, Debug)]
pub struct GroupCheckValue {
    authorizer: AuthorizerValue,
    group: String,
}

/// `kubernetes.authorization.ResourceCheck`. Field and label selectors are kept but RBAC
/// ignores them (an unparsable selector is not an error either, spec §8.2).
#[derive(Clone, Debug)]
pub struct ResourceCheckValue {
    authorizer: AuthorizerValue,
    group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
    field_selector: String,
    label_selector: String,
}

/// `kubernetes.authorization.Decision`.
#[derive(Clone, Debug)]
pub struct DecisionValue(pub AuthzDecision);

macro_rules! authz_opaque {
    ($t:ty, $name:expr) => {
        impl OpaqueValue for $t {
            fn type_name(&self) -> &str {
                $name
            }
            fn equals(&self, _: &dyn OpaqueValue) -> bool {
                false
            }
            /// The apiserver's authorizer values embed a receiver-only base whose `Equal` never
            /// matches them: `==` is always `no such overload`.
            fn equal_to(&self, _: &Value<'_>) -> Result<bool, String> {
                Err("no such overload".into())
            }
            fn display(&self) -> String {
                $name.to_string()
            }
            fn as_any(&self) -> &dyn std::any::Any {
                self
            }
        }
    };
}
authz_opaque!(AuthorizerValue, type_name::AUTHORIZER);
authz_opaque!(PathCheckValue, type_name::PATH_CHECK);
authz_opaque!(GroupCheckValue, type_name::GROUP_CHECK);
authz_opaque!(ResourceCheckValue, type_name::RESOURCE_CHECK);
authz_opaque!(DecisionValue, type_name::DECISION);

/// The `authorizer` variable: checks run as `user` against `rbac` (`None`: no RBAC objects were
/// supplied; every check has no opinion, see [`NO_RBAC_REASON`]).
pub fn authorizer_value(rbac: Option<Rc<Rbac>>, user: UserInfo) -> Value<'static> {
    wrap(AuthorizerValue::new(rbac, user))
}

/// The `authorizer.requestResource` variable: a resource check pre-filled from the request
/// (apiserver `NewResourceAuthorizerVal`).
pub fn request_resource_value(
    rbac: Option<Rc<Rbac>>,
    user: UserInfo,
    request: &RequestResource,
) -> Value<'static> {
    wrap(ResourceCheckValue {
        authorizer: AuthorizerValue::new(rbac, user),
        group: request.group.clone(),
        resource: request.resource.clone(),
        subresource: request.subresource.clone(),
        namespace: request.namespace.clone(),
        name: request.name.clone(),
        field_selector: String::new(),
        label_selector: String::new(),
    })
}

fn path<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let authorizer = opaque::<AuthorizerValue>(&a[0])?;
    let path = bind::string(&a[1])?;
    check_path_arg(path).map_err(Fail::Err)?;
    Ok(wrap(PathCheckValue { authorizer: authorizer.clone(), path: path.to_string() }))
}
fn group<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let authorizer = opaque::<AuthorizerValue>(&a[0])?;
    let group = bind::string(&a[1])?.to_string();
    Ok(wrap(GroupCheckValue { authorizer: authorizer.clone(), group }))
}
fn service_account<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let authorizer = opaque::<AuthorizerValue>(&a[0])?;
    let (namespace, name) = (bind::string(&a[1])?, bind::string(&a[2])?);
    let user = service_account_user(namespace, name).map_err(Fail::Err)?;
    Ok(wrap(AuthorizerValue::new(authorizer.rbac.clone(), user)))
}
fn resource<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let g = opaque::<GroupCheckValue>(&a[0])?;
    let resource = bind::string(&a[1])?;
    check_resource_arg(resource).map_err(Fail::Err)?;
    Ok(wrap(ResourceCheckValue {
        authorizer: g.authorizer.clone(),
        group: g.group.clone(),
        resource: resource.to_string(),
        subresource: String::new(),
        namespace: String::new(),
        name: String::new(),
        field_selector: String::new(),
        label_selector: String::new(),
    }))
}
fn with_field<'a>(a: &[Value<'a>], set: fn(&mut ResourceCheckValue, String)) -> R<'a> {
    let mut r = opaque::<ResourceCheckValue>(&a[0])?.clone();
    set(&mut r, bind::string(&a[1])?.to_string());
    Ok(wrap(r))
}
fn subresource<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    with_field(a, |r, v| r.subresource = v)
}
fn namespace<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    with_field(a, |r, v| r.namespace = v)
}
fn name<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    with_field(a, |r, v| r.name = v)
}
fn field_selector<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    with_field(a, |r, v| r.field_selector = v)
}
fn label_selector<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    with_field(a, |r, v| r.label_selector = v)
}
fn path_check<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let p = opaque::<PathCheckValue>(&a[0])?;
    let verb = bind::string(&a[1])?.to_string();
    let attrs = Attributes::NonResource { verb, path: p.path.clone() };
    Ok(wrap(DecisionValue(p.authorizer.authorize(&attrs))))
}
fn resource_check<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let r = opaque::<ResourceCheckValue>(&a[0])?;
    let attrs = Attributes::Resource {
        verb: bind::string(&a[1])?.to_string(),
        api_group: r.group.clone(),
        resource: r.resource.clone(),
        subresource: r.subresource.clone(),
        namespace: r.namespace.clone(),
        name: r.name.clone(),
    };
    Ok(wrap(DecisionValue(r.authorizer.authorize(&attrs))))
}
fn decision<'v>(v: &'v Value<'_>) -> Result<&'v AuthzDecision, Fail> {
    opaque::<DecisionValue>(v).map(|d| &d.0)
}
fn errored<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(decision(&a[0])?.error.is_some()))
}
fn error<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::string(decision(&a[0])?.error.clone().unwrap_or_default()))
}
fn allowed<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(decision(&a[0])?.allowed()))
}
fn reason<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::string(decision(&a[0])?.reason.clone()))
}

/// The authorizer implementations (costs: apiserver estimator, by name: `check` 350,000,
/// builders and accessors 1, selectors by length).
pub static OVERLOADS: &[Overload] = &[
    Overload::member("path", "authorizer_path", 2, path),
    Overload::member("group", "authorizer_group", 2, group),
    Overload::member("serviceAccount", "authorizer_serviceaccount", 3, service_account),
    Overload::member("resource", "groupcheck_resource", 2, resource),
    Overload::member("subresource", "resourcecheck_subresource", 2, subresource),
    Overload::member("namespace", "resourcecheck_namespace", 2, namespace),
    Overload::member("name", "resourcecheck_name", 2, name),
    Overload::member("check", "pathcheck_check", 2, path_check),
    Overload::member("check", "resourcecheck_check", 2, resource_check),
    Overload::member("errored", "decision_errored", 1, errored),
    Overload::member("error", "decision_error", 1, error),
    Overload::member("allowed", "decision_allowed", 1, allowed),
    Overload::member("reason", "decision_reason", 1, reason),
    Overload::member("fieldSelector", "authorizer_fieldselector", 2, field_selector),
    Overload::member("labelSelector", "authorizer_labelselector", 2, label_selector),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect();
        PolicyRule {
            verbs: v(verbs),
            api_groups: v(groups),
            resources: v(resources),
            ..Default::default()
        }
    }

    fn res(verb: &str, group: &str, resource: &str, sub: &str, ns: &str, name: &str) -> Attributes {
        Attributes::Resource {
            verb: verb.into(),
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.into(),
            namespace: ns.into(),
            name: name.into(),
        }
    }

    // k/k pkg/apis/rbac/v1/evaluation_helpers_test.go / rbac_test.go TestRuleMatches (subset)
    #[test]
    fn rule_matching() {
        let r = rule(&["get"], &[""], &["pods"]);
        assert!(rule_allows(&res("get", "", "pods", "", "ns", ""), &r));
        assert!(!rule_allows(&res("list", "", "pods", "", "ns", ""), &r));
        assert!(!rule_allows(&res("get", "apps", "pods", "", "ns", ""), &r));
        assert!(!rule_allows(&res("get", "", "pods", "log", "ns", ""), &r));
        let star_sub = rule(&["*"], &["*"], &["*/scale"]);
        assert!(rule_allows(&res("update", "apps", "deployments", "scale", "", ""), &star_sub));
        assert!(!rule_allows(&res("update", "apps", "deployments", "", "", ""), &star_sub));
        let pods_log = rule(&["get"], &[""], &["pods/log"]);
        assert!(rule_allows(&res("get", "", "pods", "log", "", ""), &pods_log));
        let named =
            PolicyRule { resource_names: vec!["a".into()], ..rule(&["get"], &[""], &["pods"]) };
        assert!(rule_allows(&res("get", "", "pods", "", "", "a"), &named));
        assert!(!rule_allows(&res("get", "", "pods", "", "", "b"), &named));
        assert!(!rule_allows(&res("list", "", "pods", "", "", ""), &named));
        let urls = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/healthz".into(), "/api/*".into()],
            ..Default::default()
        };
        let path = |p: &str| Attributes::NonResource { verb: "get".into(), path: p.into() };
        assert!(rule_allows(&path("/healthz"), &urls));
        assert!(rule_allows(&path("/api/v1"), &urls));
        assert!(rule_allows(&path("/api/"), &urls));
        assert!(!rule_allows(&path("/apis"), &urls));
        assert!(!rule_allows(&path("/healthz/x"), &urls));
    }

    fn cluster() -> Rbac {
        Rbac::from_objects(&[
            json!({"kind": "ClusterRole", "metadata": {"name": "view", "labels": {"agg": "true"}},
                   "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]}),
            json!({"kind": "ClusterRole", "metadata": {"name": "aggregate"},
                   "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "true"}}]}}),
            json!({"kind": "Role", "metadata": {"name": "editor", "namespace": "dev"},
                   "rules": [{"verbs": ["create"], "apiGroups": ["apps"], "resources": ["deployments"]}]}),
            json!({"kind": "ClusterRoleBinding", "metadata": {"name": "viewers"},
                   "roleRef": {"kind": "ClusterRole", "name": "aggregate"},
                   "subjects": [{"kind": "Group", "name": "viewers"}]}),
            json!({"kind": "RoleBinding", "metadata": {"name": "edit", "namespace": "dev"},
                   "roleRef": {"kind": "Role", "name": "editor"},
                   "subjects": [{"kind": "User", "name": "alice"}, {"kind": "ServiceAccount", "name": "bot"}]}),
            json!({"kind": "RoleBinding", "metadata": {"name": "view-in-dev", "namespace": "dev"},
                   "roleRef": {"kind": "ClusterRole", "name": "view"},
                   "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "other"}]}),
            json!({"kind": "RoleBinding", "metadata": {"name": "broken", "namespace": "dev"},
                   "roleRef": {"kind": "ClusterRole", "name": "missing"},
                   "subjects": [{"kind": "User", "name": "carol"}]}),
        ])
        .unwrap()
    }

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
    }

    // k/k plugin/pkg/auth/authorizer/rbac/rbac_test.go (shapes of the decisions and reasons)
    #[test]
    fn decisions_and_reasons() {
        let rbac = cluster();
        let d = rbac.authorize(&user("bob", &["viewers"]), &res("list", "", "pods", "", "any", ""));
        assert!(d.allowed());
        assert_eq!(
            d.reason,
            r#"RBAC: allowed by ClusterRoleBinding "viewers" of ClusterRole "aggregate" to Group "viewers""#
        );

        let d = rbac
            .authorize(&user("alice", &[]), &res("create", "apps", "deployments", "", "dev", ""));
        assert_eq!(
            d.reason,
            r#"RBAC: allowed by RoleBinding "edit/dev" of Role "editor" to User "alice""#
        );
        assert!(!rbac
            .authorize(&user("alice", &[]), &res("create", "apps", "deployments", "", "prod", ""))
            .allowed());

        let bot = service_account_user("dev", "bot").unwrap();
        let d = rbac.authorize(&bot, &res("create", "apps", "deployments", "", "dev", ""));
        assert_eq!(
            d.reason,
            r#"RBAC: allowed by RoleBinding "edit/dev" of Role "editor" to ServiceAccount "bot/dev""#
        );

        let reader = service_account_user("other", "reader").unwrap();
        let d = rbac.authorize(&reader, &res("get", "", "pods", "", "dev", ""));
        assert_eq!(
            d.reason,
            r#"RBAC: allowed by RoleBinding "view-in-dev/dev" of ClusterRole "view" to ServiceAccount "reader/other""#
        );

        let d = rbac.authorize(&user("nobody", &[]), &res("get", "", "pods", "", "dev", ""));
        assert_eq!(
            d,
            AuthzDecision { decision: Decision::NoOpinion, reason: String::new(), error: None }
        );

        let d = rbac.authorize(&user("carol", &[]), &res("get", "", "pods", "", "dev", ""));
        assert_eq!(d.reason, r#"RBAC: clusterrole.rbac.authorization.k8s.io "missing" not found"#);
        assert!(!d.allowed());

        let d = rbac
            .authorize(&user("root", &["system:masters"]), &res("delete", "", "nodes", "", "", ""));
        assert!(d.allowed() && d.reason.is_empty());
    }

    // apiserver pkg/cel/library/authz.go serviceAccount validation
    #[test]
    fn service_account_validation() {
        let u = service_account_user("default", "builder").unwrap();
        assert_eq!(u.name, "system:serviceaccount:default:builder");
        assert_eq!(u.groups, ["system:serviceaccounts", "system:serviceaccounts:default"]);
        assert_eq!(
            service_account_user("default", "Bad_Name").unwrap_err(),
            SERVICE_ACCOUNT_NAME_ERROR
        );
        assert_eq!(
            service_account_user("Bad.NS", "ok").unwrap_err(),
            SERVICE_ACCOUNT_NAMESPACE_ERROR
        );
        assert_eq!(check_path_arg("").unwrap_err(), "path must not be empty");
        assert_eq!(check_resource_arg("").unwrap_err(), "resource must not be empty");
    }
}
