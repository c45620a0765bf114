//! Matching (§3) and the request pre-filters (§1.2): does a policy's `matchConstraints` (or a
//! binding's `matchResources`) select a request, and if not, why.
//!
//! Order inside [`matches`] is the apiserver's (`policy/matching/matching.go`, §3.1):
//! namespaceSelector → objectSelector → excludeResourceRules → resourceRules → only then
//! selector errors.

#[cfg(not(target_arch = "wasm32"))]
use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::labels::Selector;
use super::request::{AdmissionRequest, Operation};
use super::resources::{GroupVersionKind, GroupVersionResource, ResourceCatalog};
use super::types::{LabelSelector, MatchResources, NamedRuleWithOperations};

/// Namespaces known offline (the informer / live GET of the apiserver).
pub trait NamespaceSource {
    /// The Namespace object named `name`, if supplied.
    fn namespace(&self, name: &str) -> Option<&Value>;
}

impl NamespaceSource for BTreeMap<String, Value> {
    fn namespace(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

/// The resource a policy matched (used to pick the version of `object` and `request.kind`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchedResource {
    pub resource: GroupVersionResource,
    pub kind: GroupVersionKind,
    /// Matched only through `matchPolicy: Equivalent` under another version/group: the
    /// apiserver would **convert** the object to `kind` before evaluating. This evaluator has
    /// no converters, so callers must report "needs conversion" rather than evaluate (§3.3).
    pub via_equivalent: bool,
}

/// Which part of a single rule rejected the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RuleMismatch {
    Scope,
    Operation,
    ApiGroup,
    ApiVersion,
    Resource,
    ResourceName,
}

impl RuleMismatch {
    /// The rule's field that did not match, as the API names it.
    pub fn field(&self) -> &'static str {
        match self {
            RuleMismatch::Scope => "scope",
            RuleMismatch::Operation => "operations",
            RuleMismatch::ApiGroup => "apiGroups",
            RuleMismatch::ApiVersion => "apiVersions",
            RuleMismatch::Resource => "resources",
            RuleMismatch::ResourceName => "resourceNames",
        }
    }
}

/// Why a MatchResources did not select the request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "reason")]
pub enum NoMatchReason {
    /// The namespace's labels (`namespace`) do not satisfy the selector; `requirement` is the
    /// first failing requirement, rendered like `env in (prod)`.
    NamespaceSelector { namespace: String, requirement: String },
    /// Neither object's labels satisfy the selector (or the object has no metadata).
    ObjectSelector { requirement: String },
    /// `excludeResourceRules[rule]` matched.
    Excluded { rule: usize },
    /// No `resourceRules` entry matched: for each rule, its first failing check.
    NoRule { rules: Vec<(usize, RuleMismatch)> },
}

/// A matcher error: becomes a policy or binding configuration error (§1.9).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchError {
    /// The error text as the apiserver prints it (e.g. `namespaces "x" not found`).
    pub message: String,
    /// HTTP code of the underlying status error (404 namespace not found, 500 internal).
    pub code: u16,
}

/// Result of matching one MatchResources against a request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "result")]
pub enum MatchResult {
    Matched(MatchedResource),
    NotMatched(NoMatchReason),
    Error(MatchError),
}

/// Everything matching needs besides the MatchResources.
#[derive(Clone, Copy)]
pub struct MatchContext<'a> {
    pub request: &'a AdmissionRequest,
    pub namespaces: &'a dyn NamespaceSource,
    pub catalog: &'a ResourceCatalog,
}

/// Why a request is never seen by API-created policies (§1.2), or `None`.
pub fn prefilter(req: &AdmissionRequest) -> Option<&'static str> {
    let gr = (req.resource.group.as_str(), req.resource.resource.as_str());
    match gr {
        ("authentication.k8s.io", "selfsubjectreviews" | "tokenreviews")
        | (
            "authorization.k8s.io",
            "localsubjectaccessreviews"
            | "selfsubjectaccessreviews"
            | "selfsubjectrulesreviews"
            | "subjectaccessreviews",
        ) => Some("this resource is excluded from all admission policies by kube-apiserver"),
        (
            "admissionregistration.k8s.io",
            "validatingadmissionpolicies"
            | "validatingadmissionpolicybindings"
            | "mutatingadmissionpolicies"
            | "mutatingadmissionpolicybindings",
        ) => Some("admission policy resources are never evaluated by API-created policies"),
        _ => None,
    }
}

/// `policy_matcher.DefinitionMatches`: a policy's `matchConstraints` (§1.4).
pub fn policy_matches(constraints: Option<&MatchResources>, cx: MatchContext<'_>) -> MatchResult {
    match constraints {
        None => MatchResult::Error(MatchError {
            message: "policy contained no match constraints, a required field".into(),
            code: 500,
        }),
        Some(mr) => matches(mr, cx),
    }
}

/// `policy_matcher.BindingMatches`: `None` matches; an empty `resourceRules` means all
/// resources (§1.5). The matched resource is discarded by the caller.
pub fn binding_matches(
    match_resources: Option<&MatchResources>,
    cx: MatchContext<'_>,
) -> MatchResult {
    match match_resources {
        None => MatchResult::Matched(MatchedResource {
            resource: cx.request.resource.clone(),
            kind: cx.request.kind.clone(),
            via_equivalent: false,
        }),
        Some(mr) => matches(mr, cx),
    }
}

fn render_requirement(r: &super::labels::Requirement) -> String {
    use super::labels::Operator::*;
    match r.operator {
        Equals => format!("{}={}", r.key, r.values.first().cloned().unwrap_or_default()),
        In => format!("{} in ({})", r.key, r.values.join(",")),
        NotIn => format!("{} notin ({})", r.key, r.values.join(",")),
        Exists => r.key.clone(),
        DoesNotExist => format!("!{}", r.key),
    }
}

fn internal(err: String) -> MatchError {
    MatchError { message: format!("Internal error occurred: {err}"), code: 500 }
}

/// `namespace.Matcher.MatchNamespaceSelector` (§3.4): `Ok(None)` = matches,
/// `Ok(Some(reason))` = does not, `Err` = error.
pub fn namespace_selector(
    selector: &LabelSelector,
    cx: MatchContext<'_>,
) -> Result<Option<NoMatchReason>, MatchError> {
    let req = cx.request;
    if (req.namespace.is_empty() && req.resource.resource != "namespaces")
        || is_everything(selector)
    {
        return Ok(None);
    }
    Selector::with_parsed(selector, |sel| {
        namespace_selector_parsed(sel.map_err(|e| internal(e.clone()))?, cx)
    })
}

/// [`namespace_selector`] with the selector parsed.
fn namespace_selector_parsed(
    sel: &Selector,
    cx: MatchContext<'_>,
) -> Result<Option<NoMatchReason>, MatchError> {
    let req = cx.request;
    if sel.requirements.is_empty() {
        return Ok(None);
    }
    // The labels are read in place (`Selector::first_failing_in`), not copied.
    let labelled = if req.resource.resource == "namespaces"
        && req.sub_resource.is_empty()
        && matches!(req.operation, Operation::Create | Operation::Update)
    {
        req.object.as_ref()
    } else {
        match cx.namespaces.namespace(&req.namespace) {
            Some(ns) => Some(ns),
            None => {
                return Err(MatchError {
                    message: format!("namespaces \"{}\" not found", req.namespace),
                    code: 404,
                });
            }
        }
    };
    Ok(sel.first_failing_in(labelled).map(|r| NoMatchReason::NamespaceSelector {
        namespace: req.namespace.clone(),
        requirement: render_requirement(r),
    }))
}

/// `{}`: it parses to no requirement (and never fails), so it selects everything.
fn is_everything(selector: &LabelSelector) -> bool {
    selector.match_labels.is_empty() && selector.match_expressions.is_empty()
}

fn has_object_meta(obj: &Value) -> bool {
    match obj.get("metadata") {
        Some(m) => m.is_object(),
        None => {
            let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
            obj.is_object() && !kind.ends_with("Options") && kind != "DeploymentRollback"
        }
    }
}

/// `object.Matcher.MatchObjectSelector` (§3.5).
pub fn object_selector(
    selector: &LabelSelector,
    req: &AdmissionRequest,
) -> Result<Option<NoMatchReason>, MatchError> {
    if is_everything(selector) {
        return Ok(None);
    }
    Selector::with_parsed(selector, |sel| {
        object_selector_parsed(sel.map_err(|e| internal(e.clone()))?, req)
    })
}

/// [`object_selector`] with the selector parsed.
fn object_selector_parsed(
    sel: &Selector,
    req: &AdmissionRequest,
) -> Result<Option<NoMatchReason>, MatchError> {
    if sel.requirements.is_empty() {
        return Ok(None);
    }
    // The labels are read in place (`Selector::first_failing_in`), not copied.
    let matches_obj = |o: Option<&Value>| {
        o.filter(|o| has_object_meta(o)).is_some_and(|o| sel.first_failing_in(Some(o)).is_none())
    };
    if matches_obj(req.object.as_ref()) || matches_obj(req.old_object.as_ref()) {
        return Ok(None);
    }
    let labelled = req.object.as_ref().or(req.old_object.as_ref());
    let requirement = sel.first_failing_in(labelled).map(render_requirement).unwrap_or_default();
    Ok(Some(NoMatchReason::ObjectSelector { requirement }))
}

fn exact_or_wildcard(items: &[String], requested: &str) -> bool {
    items.iter().any(|i| i == "*" || i == requested)
}

/// `rules.Matcher.Matches` for a request whose resource is `gvr` (§3.2); the first failing
/// check, or `None` when the rule matches.
pub fn rule_mismatch(
    rule: &NamedRuleWithOperations,
    req: &AdmissionRequest,
    gvr: &GroupVersionResource,
) -> Option<RuleMismatch> {
    let is_ns_resource =
        gvr.group.is_empty() && gvr.version == "v1" && gvr.resource == "namespaces";
    let scope_ok = match rule.scope.as_deref() {
        None | Some("*") => true,
        Some("Namespaced") => !is_ns_resource && !req.namespace.is_empty(),
        Some("Cluster") => is_ns_resource || req.namespace.is_empty(),
        Some(_) => false,
    };
    if !scope_ok {
        return Some(RuleMismatch::Scope);
    }
    if !rule.operations.iter().any(|o| o == "*" || o == req.operation.as_str()) {
        return Some(RuleMismatch::Operation);
    }
    if !exact_or_wildcard(&rule.api_groups, &gvr.group) {
        return Some(RuleMismatch::ApiGroup);
    }
    if !exact_or_wildcard(&rule.api_versions, &gvr.version) {
        return Some(RuleMismatch::ApiVersion);
    }
    if !resources_match(rule, &gvr.resource, &req.sub_resource) {
        return Some(RuleMismatch::Resource);
    }
    None
}

/// A rule's `resources` select `resource` / `sub_resource`.
fn resources_match(rule: &NamedRuleWithOperations, resource: &str, sub_resource: &str) -> bool {
    rule.resources.iter().any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r.as_str(), ""));
        (res == "*" || res == resource) && (sub == "*" || sub == sub_resource)
    })
}

/// Whether `rule` may match a resource equivalent to the request's (`matchPolicy:
/// Equivalent`): an equivalent has the request's resource name and subresource (only its group
/// or version differ), so a rule whose operations or resources do not select the request
/// selects none of them.
pub fn may_match_equivalent(rule: &NamedRuleWithOperations, req: &AdmissionRequest) -> bool {
    rule.operations.iter().any(|o| o == "*" || o == req.operation.as_str())
        && resources_match(rule, &req.resource.resource, &req.sub_resource)
}

pub fn name_matches(rule: &NamedRuleWithOperations, req: &AdmissionRequest) -> bool {
    rule.resource_names.is_empty() || rule.resource_names.contains(&req.name)
}

/// `matchesResourceRules` (§3.3): `Ok(Ok(matched))`, `Ok(Err(per-rule mismatches))`, or a
/// conversion error.
fn resource_rules(
    rules: &[NamedRuleWithOperations],
    match_policy: Option<&str>,
    cx: MatchContext<'_>,
) -> Result<Result<MatchedResource, Vec<(usize, RuleMismatch)>>, MatchError> {
    let req = cx.request;
    let mut mismatches = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        match rule_mismatch(rule, req, &req.resource) {
            Some(m) => mismatches.push((i, m)),
            None if name_matches(rule, req) => {
                return Ok(Ok(MatchedResource {
                    resource: req.resource.clone(),
                    kind: req.kind.clone(),
                    via_equivalent: false,
                }))
            }
            None => mismatches.push((i, RuleMismatch::ResourceName)),
        }
    }
    if match_policy.is_none() || match_policy == Some("Exact") {
        return Ok(Err(mismatches));
    }
    // An equivalent resource has the request's resource name, subresource and scope (only
    // its group or version differ), so a rule that failed on scope, operations or resources
    // — or whose resources do not list the request's — fails on every equivalent too: only
    // the others need the catalog's equivalents. (Every rule has its one entry in
    // `mismatches`, in order.)
    let may_match_equivalent = |i: usize| {
        matches!(
            mismatches.get(i),
            Some((
                _,
                RuleMismatch::ApiGroup | RuleMismatch::ApiVersion | RuleMismatch::ResourceName
            ))
        ) && rules
            .get(i)
            .is_some_and(|r| resources_match(r, &req.resource.resource, &req.sub_resource))
    };
    if !(0..rules.len()).any(may_match_equivalent) {
        return Ok(Err(mismatches));
    }
    let equivalents = cx.catalog.equivalents(&req.resource, &req.sub_resource);
    for (_, rule) in rules.iter().enumerate().filter(|(i, _)| may_match_equivalent(*i)) {
        for eq in &equivalents {
            if *eq == req.resource || rule_mismatch(rule, req, eq).is_some() {
                continue;
            }
            let Some(kind) = cx.catalog.kind_for(eq, &req.sub_resource) else {
                return Err(MatchError {
                    message: format!("unable to convert to {eq}: unknown kind"),
                    code: 500,
                });
            };
            if name_matches(rule, req) {
                return Ok(Ok(MatchedResource {
                    resource: eq.clone(),
                    kind,
                    via_equivalent: true,
                }));
            }
        }
    }
    Ok(Err(mismatches))
}

/// `matching.Matcher.Matches` (§3.1).
pub fn matches(mr: &MatchResources, cx: MatchContext<'_>) -> MatchResult {
    let held = match selectors(mr, cx) {
        Selectors::Select(held) => held,
        Selectors::Decided(decided) => return decided,
    };
    match (rules_result(mr, cx), held) {
        (MatchResult::Matched(_), Some(e)) => MatchResult::Error(e),
        (result, _) => result,
    }
}

/// [`matches`] with the resource rules' part ([`rules_result`]) given, computed once for every
/// request of the same kind ([`RulesKey`]; native: the audit).
#[cfg(not(target_arch = "wasm32"))]
pub fn matches_given<'r>(
    mr: &MatchResources,
    cx: MatchContext<'_>,
    given: &'r MatchResult,
) -> Cow<'r, MatchResult> {
    match selectors(mr, cx) {
        Selectors::Decided(decided) => Cow::Owned(decided),
        Selectors::Select(Some(e)) if matches!(given, MatchResult::Matched(_)) => {
            Cow::Owned(MatchResult::Error(e))
        }
        Selectors::Select(_) => Cow::Borrowed(given),
    }
}

/// What the selectors of a MatchResources make of a request, before its rules.
enum Selectors {
    /// They select it; their error, if any, is held until the rules have matched.
    Select(Option<MatchError>),
    /// They decide: a selector does not select the request, or there is none.
    Decided(MatchResult),
}

/// The selectors' part of [`matches`].
fn selectors(mr: &MatchResources, cx: MatchContext<'_>) -> Selectors {
    let Some(ns_sel) = mr.namespace_selector.as_ref() else {
        return Selectors::Decided(MatchResult::Error(MatchError {
            message: "a nil namespace selector was passed, please ensure selectors are initialized properly".into(),
            code: 500,
        }));
    };
    let Some(obj_sel) = mr.object_selector.as_ref() else {
        return Selectors::Decided(MatchResult::Error(MatchError {
            message:
                "a nil object selector was passed, please ensure selectors are initialized properly"
                    .into(),
            code: 500,
        }));
    };
    let ns_err = match namespace_selector(ns_sel, cx) {
        Ok(Some(reason)) => return Selectors::Decided(MatchResult::NotMatched(reason)),
        Ok(None) => None,
        Err(e) => Some(e),
    };
    let obj_err = match object_selector(obj_sel, cx.request) {
        Ok(Some(reason)) => return Selectors::Decided(MatchResult::NotMatched(reason)),
        Ok(None) => None,
        Err(e) => Some(e),
    };
    Selectors::Select(ns_err.or(obj_err))
}

/// The resource rules' part of [`matches`]: excludeResourceRules, then resourceRules (§3.3).
/// It reads of the request only its operation, resource, kind, subresource, whether it has a
/// namespace and its name (with the set's catalog).
pub fn rules_result(mr: &MatchResources, cx: MatchContext<'_>) -> MatchResult {
    let policy = mr.match_policy.as_deref();
    match resource_rules(&mr.exclude_resource_rules, policy, cx) {
        Err(e) => return MatchResult::Error(e),
        Ok(Ok(_)) => {
            let rule = mr
                .exclude_resource_rules
                .iter()
                .position(|r| {
                    rule_mismatch(r, cx.request, &cx.request.resource).is_none()
                        && name_matches(r, cx.request)
                })
                .unwrap_or(0);
            return MatchResult::NotMatched(NoMatchReason::Excluded { rule });
        }
        Ok(Err(_)) => {}
    }
    if mr.resource_rules.is_empty() {
        return MatchResult::Matched(MatchedResource {
            resource: cx.request.resource.clone(),
            kind: cx.request.kind.clone(),
            via_equivalent: false,
        });
    }
    match resource_rules(&mr.resource_rules, policy, cx) {
        Err(e) => MatchResult::Error(e),
        Ok(Err(rules)) => MatchResult::NotMatched(NoMatchReason::NoRule { rules }),
        Ok(Ok(m)) => MatchResult::Matched(m),
    }
}

/// What [`rules_result`] reads of a request besides its name: requests with equal keys get
/// equal results from the same rules and catalog (when no rule lists `resourceNames`). The
/// audit evaluates many objects of few kinds and keeps the results per key
/// (`PolicySet::rules_for`).
#[cfg(not(target_arch = "wasm32"))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RulesKey {
    operation: Operation,
    namespaced: bool,
    resource: GroupVersionResource,
    sub_resource: String,
    kind: GroupVersionKind,
}

#[cfg(not(target_arch = "wasm32"))]
impl RulesKey {
    pub fn new(req: &AdmissionRequest) -> Self {
        RulesKey {
            operation: req.operation,
            namespaced: !req.namespace.is_empty(),
            resource: req.resource.clone(),
            sub_resource: req.sub_resource.clone(),
            kind: req.kind.clone(),
        }
    }

    /// Whether `req` has this key.
    pub fn is(&self, req: &AdmissionRequest) -> bool {
        self.operation == req.operation
            && self.namespaced != req.namespace.is_empty()
            && self.resource == req.resource
            && self.sub_resource == req.sub_resource
            && self.kind == req.kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::request::UserInfo;
    use serde_json::json;

    fn req(
        op: Operation,
        gvr: (&str, &str, &str),
        sub: &str,
        ns: &str,
        name: &str,
    ) -> AdmissionRequest {
        let r = GroupVersionResource::new(gvr.0, gvr.1, gvr.2);
        AdmissionRequest {
            operation: op,
            kind: GroupVersionKind::new(gvr.0, gvr.1, "K"),
            resource: r.clone(),
            sub_resource: sub.into(),
            request_kind: GroupVersionKind::new(gvr.0, gvr.1, "K"),
            request_resource: r,
            request_sub_resource: sub.into(),
            name: name.into(),
            namespace: ns.into(),
            user_info: UserInfo::default(),
            dry_run: false,
            options: None,
            object: Some(json!({"metadata": {"labels": {"app": "web"}}})),
            old_object: None,
            namespaced: None,
        }
    }

    fn rule(
        groups: &[&str],
        versions: &[&str],
        resources: &[&str],
        scope: Option<&str>,
    ) -> NamedRuleWithOperations {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect();
        NamedRuleWithOperations {
            resource_names: vec![],
            operations: vec!["*".into()],
            api_groups: v(groups),
            api_versions: v(versions),
            resources: v(resources),
            scope: scope.map(str::to_string),
        }
    }

    fn mr(rules: Vec<NamedRuleWithOperations>) -> MatchResources {
        MatchResources {
            namespace_selector: Some(LabelSelector::default()),
            object_selector: Some(LabelSelector::default()),
            resource_rules: rules,
            exclude_resource_rules: vec![],
            match_policy: Some("Equivalent".into()),
        }
    }

    fn run(m: &MatchResources, r: &AdmissionRequest, nss: &BTreeMap<String, Value>) -> MatchResult {
        let cat = ResourceCatalog::builtin();
        matches(m, MatchContext { request: r, namespaces: nss, catalog: &cat })
    }

    /// rules_test.go TestResource, spec §8.5.
    #[test]
    fn resource_wildcards() {
        let r = |res: &str, sub: &str| req(Operation::Create, ("g", "v", res), sub, "ns", "n");
        let m = |rs: &[&str], rq: &AdmissionRequest| {
            rule_mismatch(&rule(&["*"], &["*"], rs, None), rq, &rq.resource).is_none()
        };
        assert!(m(&["*"], &r("r", "")));
        assert!(!m(&["*"], &r("r", "exec")));
        assert!(m(&["r/*"], &r("r", "")));
        assert!(m(&["r/*"], &r("r", "exec")));
        assert!(m(&["*/proxy"], &r("r2", "proxy")));
        assert!(!m(&["*/proxy"], &r("r4", "scale")));
        assert!(m(&["*/*"], &r("r4", "scale")));
        assert!(!m(&["pods"], &r("pods", "status")));
        // all-empty rule never matches
        let empty = NamedRuleWithOperations::default();
        assert!(rule_mismatch(&empty, &r("r", ""), &r("r", "").resource).is_some());
    }

    /// spec §3.2 / §8.5: scope and the namespaces special case.
    #[test]
    fn scope() {
        let ns_req = req(Operation::Create, ("", "v1", "namespaces"), "", "team-a", "team-a");
        let fin = req(Operation::Update, ("", "v1", "namespaces"), "finalize", "team-a", "team-a");
        let cluster = rule(&[""], &["v1"], &["*", "*/*"], Some("Cluster"));
        let namespaced = rule(&[""], &["v1"], &["*", "*/*"], Some("Namespaced"));
        assert!(rule_mismatch(&cluster, &ns_req, &ns_req.resource).is_none());
        assert!(rule_mismatch(&cluster, &fin, &fin.resource).is_none());
        assert_eq!(
            rule_mismatch(&namespaced, &ns_req, &ns_req.resource),
            Some(RuleMismatch::Scope)
        );
        let pod = req(Operation::Create, ("", "v1", "pods"), "", "x", "p");
        assert!(rule_mismatch(&namespaced, &pod, &pod.resource).is_none());
        assert_eq!(rule_mismatch(&cluster, &pod, &pod.resource), Some(RuleMismatch::Scope));
    }

    #[test]
    fn resource_names_and_excludes() {
        let nss = BTreeMap::new();
        let r = req(Operation::Create, ("apps", "v1", "deployments"), "", "", "web");
        let mut named = rule(&["apps"], &["v1"], &["deployments"], None);
        named.resource_names = vec!["other".into()];
        assert!(matches!(
            run(&mr(vec![named.clone()]), &r, &nss),
            MatchResult::NotMatched(NoMatchReason::NoRule { .. })
        ));
        named.resource_names.push("web".into());
        assert!(matches!(run(&mr(vec![named]), &r, &nss), MatchResult::Matched(_)));
        let mut m = mr(vec![rule(&["*"], &["*"], &["*"], None)]);
        m.exclude_resource_rules = vec![rule(&["apps"], &["v1"], &["deployments"], None)];
        assert_eq!(run(&m, &r, &nss), MatchResult::NotMatched(NoMatchReason::Excluded { rule: 0 }));
        // empty resourceRules (binding) match everything
        assert!(matches!(run(&mr(vec![]), &r, &nss), MatchResult::Matched(_)));
    }

    /// spec §3.3: Equivalent vs Exact, with the built-in autoscaling v1/v2 equivalence.
    #[test]
    fn equivalent_matching() {
        let nss = BTreeMap::new();
        let r =
            req(Operation::Create, ("autoscaling", "v2", "horizontalpodautoscalers"), "", "n", "h");
        let mut m = mr(vec![rule(&["autoscaling"], &["v1"], &["horizontalpodautoscalers"], None)]);
        match run(&m, &r, &nss) {
            MatchResult::Matched(mr) => {
                assert!(mr.via_equivalent);
                assert_eq!(
                    mr.kind,
                    GroupVersionKind::new("autoscaling", "v1", "HorizontalPodAutoscaler")
                );
            }
            other => panic!("{other:?}"),
        }
        m.match_policy = Some("Exact".into());
        assert!(matches!(run(&m, &r, &nss), MatchResult::NotMatched(_)));
    }

    /// spec §3.4 and matching_test.go "erroring namespace selector on otherwise non-matching rule".
    #[test]
    fn namespace_selector_rules() {
        let mut nss = BTreeMap::new();
        nss.insert(
            "prod".to_string(),
            json!({"metadata": {"name": "prod", "labels": {"env": "prod"}}}),
        );
        let mut m = mr(vec![rule(&[""], &["v1"], &["pods"], None)]);
        m.namespace_selector = Some(LabelSelector {
            match_labels: [("env".to_string(), "prod".to_string())].into(),
            match_expressions: vec![],
        });
        let pod = |ns: &str| req(Operation::Create, ("", "v1", "pods"), "", ns, "p");
        assert!(matches!(run(&m, &pod("prod"), &nss), MatchResult::Matched(_)));
        assert_eq!(
            run(&m, &pod("missing"), &nss),
            MatchResult::Error(MatchError {
                message: "namespaces \"missing\" not found".into(),
                code: 404
            })
        );
        // a non-matching rule hides the namespace error
        let cm = req(Operation::Create, ("", "v1", "configmaps"), "", "missing", "c");
        assert!(matches!(
            run(&m, &cm, &nss),
            MatchResult::NotMatched(NoMatchReason::NoRule { .. })
        ));
        // cluster-scoped requests are never excluded by a namespaceSelector
        let node = req(Operation::Create, ("", "v1", "nodes"), "", "", "n1");
        m.resource_rules = vec![rule(&[""], &["v1"], &["nodes"], None)];
        assert!(matches!(run(&m, &node, &nss), MatchResult::Matched(_)));
        // Namespace CREATE uses the object's own labels
        let mut ns_create = req(Operation::Create, ("", "v1", "namespaces"), "", "new", "new");
        ns_create.object = Some(json!({"metadata": {"name": "new", "labels": {"env": "prod"}}}));
        m.resource_rules = vec![rule(&[""], &["v1"], &["namespaces"], None)];
        assert!(matches!(run(&m, &ns_create, &nss), MatchResult::Matched(_)));
        let mut bad = m.clone();
        bad.namespace_selector = Some(LabelSelector {
            match_labels: BTreeMap::new(),
            match_expressions: vec![crate::admission::types::LabelSelectorRequirement {
                key: "a".into(),
                operator: "Bad".into(),
                values: vec![],
            }],
        });
        assert_eq!(
            run(&bad, &ns_create, &nss),
            MatchResult::Error(MatchError {
                message: "Internal error occurred: \"Bad\" is not a valid label selector operator"
                    .into(),
                code: 500
            })
        );
    }

    /// spec §3.5.
    #[test]
    fn object_selector_rules() {
        let nss = BTreeMap::new();
        let mut m = mr(vec![]);
        m.object_selector = Some(LabelSelector {
            match_labels: [("app".to_string(), "web".to_string())].into(),
            match_expressions: vec![],
        });
        let mut r = req(Operation::Update, ("", "v1", "pods"), "", "n", "p");
        assert!(matches!(run(&m, &r, &nss), MatchResult::Matched(_)));
        r.object = Some(json!({"metadata": {}}));
        r.old_object = Some(json!({"metadata": {"labels": {"app": "web"}}}));
        assert!(matches!(run(&m, &r, &nss), MatchResult::Matched(_)));
        r.old_object = None;
        assert!(matches!(
            run(&m, &r, &nss),
            MatchResult::NotMatched(NoMatchReason::ObjectSelector { .. })
        ));
        r.object = Some(json!({"kind": "PodExecOptions", "apiVersion": "v1"}));
        assert!(matches!(run(&m, &r, &nss), MatchResult::NotMatched(_)));
    }

    #[test]
    fn prefilters() {
        let r = req(
            Operation::Create,
            ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"),
            "status",
            "",
            "x",
        );
        assert!(prefilter(&r).is_some());
        let r = req(
            Operation::Create,
            ("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"),
            "",
            "",
            "x",
        );
        assert!(prefilter(&r).is_none());
    }
}
