//! Kyverno's `match`/`exclude` (`pkg/engine/utils/match.go` `MatchesResourceDescription`, with
//! `pkg/utils/match`: kinds, names, annotations, selectors, subjects) and the user's roles
//! (`pkg/userinfo` `GetRoleRef`). `docs/kyverno-semantics.md` §3.

use super::policy::{MatchResources, ResourceDescription, ResourceFilter, Rule, UserInfoFilter};
use super::wildcard::{contains_wildcard, matches as wildcard, replace_in_selector};
use crate::admission::labels::{object_labels, Selector};
use crate::admission::resources::GroupVersionKind;
use crate::admission::types::LabelSelector;
use serde_json::Value;
use std::collections::BTreeMap;

/// `kyvernov2.RequestInfo`: who sends the request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestInfo {
    pub username: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub has_extra: bool,
    /// `namespace:name` of the Roles bound to the user.
    pub roles: Vec<String>,
    pub cluster_roles: Vec<String>,
}

impl RequestInfo {
    /// `RequestInfo{}`: user filters are then ignored in `match` (not in `exclude`).
    fn is_empty(&self) -> bool {
        *self == RequestInfo::default()
    }
}

/// The resource and request a rule is matched against.
pub struct Target<'a> {
    /// The new object (the old one on DELETE).
    pub resource: &'a Value,
    /// The request's kind and subresource (`policyContext.ResourceKind`).
    pub gvk: &'a GroupVersionKind,
    pub subresource: &'a str,
    pub operation: &'a str,
    /// Labels of the request's namespace (empty for cluster-scoped requests and Namespaces).
    pub namespace_labels: &'a BTreeMap<String, String>,
    pub info: &'a RequestInfo,
    /// The policy's namespace (`Policy`); empty for a `ClusterPolicy`.
    pub policy_namespace: &'a str,
    /// Stop at the first reason a condition block does not match, and write no reasons (the
    /// audit's [`summary_trace`](crate::admission::policy_set::PolicySet::summary_trace)):
    /// whether it matches is all that decides; the reasons are only for the trace.
    pub first_reason_only: bool,
}

impl Target<'_> {
    /// [`Target::first_reason_only`], always false in the package (only the native audit sets
    /// it): whether a rule matches is all that is asked, so its reasons are not written out
    /// (each is an empty text, and a rule that does not match an empty message).
    fn terse(&self) -> bool {
        cfg!(not(target_arch = "wasm32")) && self.first_reason_only
    }

    /// A reason a block does not match: `text`, or an empty one ([`Target::terse`]).
    fn why(&self, text: impl FnOnce() -> String) -> String {
        if self.terse() {
            return String::new();
        }
        text()
    }
}

fn meta<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get("metadata").and_then(|m| m.get(key)).and_then(Value::as_str).unwrap_or_default()
}

/// `kubeutils.ParseKindSelector`: `Kind`, `version/Kind`, `group/version/Kind`, with an
/// optional `/subresource` (or `.subresource` after the kind); `*` anywhere. The parts are
/// slices of `input` (or `*`).
pub fn parse_kind_selector(input: &str) -> (&str, &str, &str, &str) {
    let mut parts: Vec<&str> = input.split('/').collect();
    if let Some(last) = parts.pop() {
        parts.extend(last.split('.'));
    }
    let is_version = |s: &str| s == "*" || is_version(s);
    match *parts.as_slice() {
        [k] => ("*", "*", k, ""),
        ["*", "*"] => ("*", "*", "*", "*"),
        // Go compares with strings.ToLower; gostr's copy keeps Rust's large Unicode
        // lowercasing out of the wasm.
        ["*", s] if vap_eval_k8s::library::gostr::to_lower(s) == s => ("*", "*", "*", s),
        [v, k] if is_version(v) => ("*", v, k, ""),
        [k, s] => ("*", "*", k, s),
        [v, k, s] if is_version(v) => ("*", v, k, s),
        [g, v, k] => (g, v, k, ""),
        [g, v, k, s] => (g, v, k, s),
        _ => ("", "", "", ""),
    }
}

/// `^v\d+((alpha|beta)\d+)?$`.
fn is_version(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else { return false };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let rest = &rest[digits..];
    if rest.is_empty() {
        return true;
    }
    let rest = rest.strip_prefix("alpha").or_else(|| rest.strip_prefix("beta"));
    rest.is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
}

/// `match.CheckKind` with ephemeral containers allowed for Pod rules.
pub fn check_kind(kinds: &[String], gvk: &GroupVersionKind, subresource: &str) -> bool {
    kinds.iter().any(|k| {
        let (g, v, kind, sub) = parse_kind_selector(k);
        wildcard(g, &gvk.group)
            && wildcard(v, &gvk.version)
            && wildcard(kind, &gvk.kind)
            && (wildcard(sub, subresource)
                || (gvk.group.is_empty()
                    && gvk.version == "v1"
                    && gvk.kind == "Pod"
                    && subresource == "ephemeralcontainers"))
    })
}

/// `kubeutils.ContainsKind`: whether `kind` is one of `list` (by kind, ignoring group,
/// version and subresource).
pub fn contains_kind(list: &[String], kind: &str) -> bool {
    list.iter().any(|e| {
        let parts: Vec<&str> = e.split('/').collect();
        let k = match parts.as_slice() {
            [k] => k.replacen('.', "/", 1),
            ["*", "*"] => "*/*".to_string(),
            [v, k] if is_version(v) || *v == "*" => k.replacen('.', "/", 1),
            [a, b] => format!("{a}/{b}"),
            [v, k, s] if is_version(v) || *v == "*" => format!("{k}/{s}"),
            [_, _, k] => k.replacen('.', "/", 1),
            [_, _, k, s] => format!("{k}/{s}"),
            _ => String::new(),
        };
        k.split_once('/').map_or(k.as_str(), |(k, _)| k) == kind
    })
}

/// `match.CheckSelector` (with Kyverno's wildcard `matchLabels`).
pub(super) fn check_selector(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
) -> Result<bool, String> {
    // Without a wildcard in matchLabels the replacement is the selector itself: no copy.
    let wild =
        selector.match_labels.iter().any(|(k, v)| contains_wildcard(k) || contains_wildcard(v));
    let replaced;
    let s = if wild {
        replaced = replace_in_selector(selector, labels);
        &replaced
    } else {
        selector
    };
    Selector::with_parsed(s, |s| s.map(|s| s.matches(labels)).map_err(String::clone))
}

/// `match.CheckSubjects`.
fn check_subjects(filter: &UserInfoFilter, info: &RequestInfo) -> bool {
    filter.subjects.iter().any(|s| match s.kind.as_str() {
        "ServiceAccount" => {
            wildcard(&format!("system:serviceaccount:{}:{}", s.namespace, s.name), &info.username)
        }
        "Group" => info.groups.iter().any(|g| wildcard(&s.name, g)),
        "User" => wildcard(&s.name, &info.username),
        _ => false,
    })
}

/// `doesResourceMatchConditionBlock`: the reasons the block does not select the target.
fn condition_block(d: &ResourceDescription, user: &UserInfoFilter, t: &Target<'_>) -> Vec<String> {
    if !d.operations.is_empty() && !d.operations.iter().any(|o| o == t.operation) {
        return vec![t.why(|| "operation does not match".into())];
    }
    let mut errs = Vec::new();
    let kind = t.resource.get("kind").and_then(Value::as_str).unwrap_or_default();
    if !d.kinds.is_empty() && !check_kind(&d.kinds, t.gvk, t.subresource) {
        errs.push(t.why(|| format!("kind does not match [{}]", d.kinds.join(" "))));
    }
    let done = |errs: &Vec<String>| t.terse() && !errs.is_empty();
    if done(&errs) {
        return errs;
    }
    let mut name = meta(t.resource, "name");
    if name.is_empty() {
        name = meta(t.resource, "generateName");
    }
    if !d.name.is_empty() && !wildcard(&d.name, name) {
        errs.push(t.why(|| "name does not match".into()));
    }
    if !d.names.is_empty() && !d.names.iter().any(|n| wildcard(n, name)) {
        errs.push(t.why(|| "none of the names match".into()));
    }
    if !d.namespaces.is_empty() {
        let ns = if kind == "Namespace" { name } else { meta(t.resource, "namespace") };
        if !d.namespaces.iter().any(|n| wildcard(n, ns)) {
            errs.push(t.why(|| "namespace does not match".into()));
        }
    }
    if done(&errs) {
        return errs;
    }
    if let Some(expected) = d.annotations.as_ref().filter(|a| !a.is_empty()) {
        let actual = t
            .resource
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(Value::as_object);
        let ok = expected.iter().all(|(k, v)| {
            actual.is_some_and(|a| {
                a.iter().any(|(k1, v1)| wildcard(k, k1) && wildcard(v, v1.as_str().unwrap_or("")))
            })
        });
        if !ok {
            errs.push(t.why(|| "annotations does not match".into()));
        }
    }
    if done(&errs) {
        return errs;
    }
    if let Some(sel) = &d.selector {
        match check_selector(sel, &object_labels(t.resource)) {
            Err(e) => errs.push(t.why(|| format!("failed to parse selector: {e}"))),
            Ok(false) => errs.push(t.why(|| "selector does not match".into())),
            Ok(true) => {}
        }
    }
    if done(&errs) {
        return errs;
    }
    if let Some(sel) = &d.namespace_selector {
        if kind == "Namespace" {
            errs.push(
                t.why(|| "namespace selector is not applicable for namespace resource".into()),
            );
        } else if !kind.is_empty() || d.kinds.iter().any(|k| k == "*") {
            match check_selector(sel, t.namespace_labels) {
                Err(e) => errs.push(t.why(|| format!("failed to parse namespace selector: {e}"))),
                Ok(false) => errs.push(t.why(|| "namespace selector does not match labels".into())),
                Ok(true) => {}
            }
        }
    }
    let contains_any = |list: &[String], have: &[String]| have.iter().any(|h| list.contains(h));
    if !user.roles.is_empty() && !contains_any(&user.roles, &t.info.roles) {
        errs.push(t.why(|| "user info does not match roles for the given conditionBlock".into()));
    }
    if !user.cluster_roles.is_empty() && !contains_any(&user.cluster_roles, &t.info.cluster_roles) {
        errs.push(
            t.why(|| "user info does not match clustersRoles for the given conditionBlock".into()),
        );
    }
    if !user.subjects.is_empty() && !check_subjects(user, t.info) {
        errs.push(t.why(|| "user info does not match subject for the given conditionBlock".into()));
    }
    errs
}

fn match_helper(f: &ResourceFilter, t: &Target<'_>) -> Vec<String> {
    // Without request information (background scans) user filters are dropped from `match`.
    let empty = UserInfoFilter::default();
    let user = if t.info.is_empty() { &empty } else { &f.user };
    if f.resources.is_empty() && user.is_empty() {
        return vec![t.why(|| "match cannot be empty".into())];
    }
    condition_block(&f.resources, user, t)
}

fn exclude_helper(f: &ResourceFilter, t: &Target<'_>) -> Vec<String> {
    if f.is_empty() {
        return Vec::new();
    }
    let errs = condition_block(&f.resources, &f.user, t);
    if errs.is_empty() {
        vec![t.why(|| "resource excluded since one of the criteria excluded it".into())]
    } else {
        Vec::new()
    }
}

/// Whether a PolicyException's `match` selects the target (`checkMatchesResources`,
/// pkg/engine/utils/exceptions.go): `any` (one filter), else `all` (every filter), else
/// nothing. A filter is its resource description — without `operations`, which exceptions do
/// not check — and its user info (never dropped); an empty filter selects nothing.
pub fn exception_matches(m: &MatchResources, t: &Target<'_>) -> bool {
    let one = |f: &ResourceFilter| {
        if f.is_empty() {
            return false;
        }
        let mut d = f.resources.clone();
        d.operations.clear();
        condition_block(&d, &f.user, t).is_empty()
    };
    if !m.any.is_empty() {
        m.any.iter().any(one)
    } else if !m.all.is_empty() {
        m.all.iter().all(one)
    } else {
        false
    }
}

/// `MatchesResourceDescription`: `Ok` when the rule selects the target, else Kyverno's
/// message (`rule <name> not matched:` and the numbered reasons).
pub fn rule_matches(rule: &Rule, t: &Target<'_>) -> Result<(), String> {
    if t.resource.is_null() {
        return Err("resource is empty".into());
    }
    if !t.policy_namespace.is_empty() && t.policy_namespace != meta(t.resource, "namespace") {
        return Err("policy and resource namespaces mismatch".into());
    }
    let m: &MatchResources = &rule.match_resources;
    let mut reasons: Vec<String> = Vec::new();
    if !m.any.is_empty() {
        if !m.any.iter().any(|f| match_helper(f, t).is_empty()) {
            reasons.push(t.why(|| "no resource matched".into()));
        }
    } else if !m.all.is_empty() {
        for f in &m.all {
            reasons.extend(match_helper(f, t));
        }
    } else {
        reasons.extend(match_helper(&m.top, t));
    }
    if let Some(x) = rule.exclude.as_ref().filter(|x| reasons.is_empty() && !x.is_empty()) {
        if !x.any.is_empty() {
            for f in &x.any {
                reasons.extend(exclude_helper(f, t));
            }
        } else if !x.all.is_empty() {
            if x.all.iter().all(|f| !exclude_helper(f, t).is_empty()) {
                reasons.push(t.why(|| {
                    "resource excluded since the combination of all criteria exclude it".into()
                }));
            }
        } else {
            reasons.extend(exclude_helper(&x.top, t));
        }
    }
    if reasons.is_empty() {
        return Ok(());
    }
    if t.terse() {
        return Err(String::new());
    }
    let mut msg = format!("rule {} not matched:", rule.name);
    for (i, r) in reasons.iter().enumerate() {
        msg.push_str(&format!("\n {}. {r}", i + 1));
    }
    Err(msg)
}

/// `GetRoleRef`: the Roles (`namespace:name`) and ClusterRoles bound to the user by the
/// supplied RoleBindings and ClusterRoleBindings. A RoleBinding to a ClusterRole counts only
/// in the request's namespace. Sorted, without duplicates.
pub fn role_refs(
    rbac: &[Value],
    username: &str,
    groups: &[String],
    request_namespace: &str,
) -> (Vec<String>, Vec<String>) {
    let mut roles = Vec::new();
    let mut cluster_roles = Vec::new();
    let subject_matches = |b: &Value, ns: &str| {
        b.get("subjects").and_then(Value::as_array).is_some_and(|subjects| {
            subjects.iter().any(|s| {
                let name = s.get("name").and_then(Value::as_str).unwrap_or_default();
                match s.get("kind").and_then(Value::as_str).unwrap_or_default() {
                    "ServiceAccount" => {
                        let sns = s.get("namespace").and_then(Value::as_str).unwrap_or_default();
                        let sns = if sns.is_empty() { ns } else { sns };
                        !sns.is_empty() && username == format!("system:serviceaccount:{sns}:{name}")
                    }
                    "Group" => groups.iter().any(|g| g == name),
                    "User" => username == name,
                    _ => false,
                }
            })
        })
    };
    for b in rbac {
        let kind = b.get("kind").and_then(Value::as_str).unwrap_or_default();
        let role_ref = |k: &str| {
            b.get("roleRef").and_then(|r| r.get(k)).and_then(Value::as_str).unwrap_or_default()
        };
        let (ref_kind, ref_name) = (role_ref("kind"), role_ref("name"));
        match kind {
            "RoleBinding" => {
                let ns = meta(b, "namespace");
                if !subject_matches(b, ns) {
                    continue;
                }
                match ref_kind {
                    "Role" => roles.push(format!("{ns}:{ref_name}")),
                    "ClusterRole" if ns == request_namespace => {
                        cluster_roles.push(ref_name.to_string())
                    }
                    _ => {}
                }
            }
            "ClusterRoleBinding" if subject_matches(b, "") && ref_kind == "ClusterRole" => {
                cluster_roles.push(ref_name.to_string())
            }
            _ => {}
        }
    }
    for list in [&mut roles, &mut cluster_roles] {
        vap_eval_cel::sort::sort_by(list, |a, b| a.cmp(b));
        list.dedup();
    }
    (roles, cluster_roles)
}

#[cfg(test)]
mod tests {
    use super::*;

    // pkg/utils/kube/kind_test.go (Test_ParseKindSelector).
    #[test]
    fn kind_selectors_parse_as_kyverno_does() {
        let p = |s| {
            let (g, v, k, r) = parse_kind_selector(s);
            format!("{g}|{v}|{k}|{r}")
        };
        assert_eq!(p("Pod"), "*|*|Pod|");
        assert_eq!(p("v1/Pod"), "*|v1|Pod|");
        assert_eq!(p("apps/v1/Deployment"), "apps|v1|Deployment|");
        assert_eq!(p("Pod/status"), "*|*|Pod|status");
        assert_eq!(p("Pod.status"), "*|*|Pod|status");
        assert_eq!(p("v1/Pod/status"), "*|v1|Pod|status");
        assert_eq!(p("*/*"), "*|*|*|*");
        assert_eq!(p("*/status"), "*|*|*|status");
        assert_eq!(p("apps/v1/Deployment/scale"), "apps|v1|Deployment|scale");
        assert_eq!(p("v2beta1/HorizontalPodAutoscaler"), "*|v2beta1|HorizontalPodAutoscaler|");
        assert_eq!(p("a/b/c/d/e"), "|||");
    }

    #[test]
    fn kinds_check_group_version_and_subresource() {
        let pod = GroupVersionKind::new("", "v1", "Pod");
        let k = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check_kind(&k(&["Pod"]), &pod, ""));
        assert!(!check_kind(&k(&["Pod"]), &pod, "status"));
        // Pod rules also apply to ephemeral containers (CheckKind's allowEphemeralContainers).
        assert!(check_kind(&k(&["Pod"]), &pod, "ephemeralcontainers"));
        assert!(check_kind(&k(&["Pod/status"]), &pod, "status"));
        assert!(check_kind(&k(&["*"]), &pod, ""));
        assert!(!check_kind(&k(&["apps/v1/Pod"]), &pod, ""));
        assert!(check_kind(&k(&["Po?"]), &pod, ""));
        assert!(contains_kind(&k(&["v1/Pod"]), "Pod"));
        assert!(contains_kind(&k(&["Pod/status"]), "Pod"));
        assert!(!contains_kind(&k(&["Deployment"]), "Pod"));
    }
}
