//! apiserver defaulting (§7.1), applied before validation and before use.
//!
//! * policy: `failurePolicy` → `Fail`; `matchConstraints.matchPolicy` → `Equivalent`;
//!   `namespaceSelector`/`objectSelector` → `{}`; every rule's `scope` → `*`;
//! * binding: the same MatchResources defaults for `matchResources` when present;
//!   `paramRef.parameterNotFoundAction` → `Deny` **only for v1alpha1** (required in v1/v1beta1).

use serde::Serialize;

use super::types::{MatchResources, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding};

/// One default that was applied (for the trace).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppliedDefault {
    /// Field path, e.g. `spec.failurePolicy`.
    pub field: String,
    /// The value set, as JSON text (`"Fail"`, `{}`).
    pub value: String,
}

fn set(out: &mut Vec<AppliedDefault>, field: String, value: &str) {
    out.push(AppliedDefault { field, value: value.to_string() });
}

fn default_match_resources(mr: &mut MatchResources, path: &str, out: &mut Vec<AppliedDefault>) {
    if mr.match_policy.is_none() {
        mr.match_policy = Some("Equivalent".into());
        set(out, format!("{path}.matchPolicy"), "\"Equivalent\"");
    }
    if mr.namespace_selector.is_none() {
        mr.namespace_selector = Some(Default::default());
        set(out, format!("{path}.namespaceSelector"), "{}");
    }
    if mr.object_selector.is_none() {
        mr.object_selector = Some(Default::default());
        set(out, format!("{path}.objectSelector"), "{}");
    }
    for (list, rules) in [
        ("resourceRules", &mut mr.resource_rules),
        ("excludeResourceRules", &mut mr.exclude_resource_rules),
    ] {
        for (i, r) in rules.iter_mut().enumerate() {
            if r.scope.is_none() {
                r.scope = Some("*".into());
                set(out, format!("{path}.{list}[{i}].scope"), "\"*\"");
            }
        }
    }
}

/// Default a policy in place; returns what was set.
pub fn default_policy(p: &mut ValidatingAdmissionPolicy) -> Vec<AppliedDefault> {
    let mut out = Vec::new();
    if p.spec.failure_policy.is_none() {
        p.spec.failure_policy = Some("Fail".into());
        set(&mut out, "spec.failurePolicy".into(), "\"Fail\"");
    }
    if let Some(mr) = p.spec.match_constraints.as_mut() {
        default_match_resources(mr, "spec.matchConstraints", &mut out);
    }
    out
}

/// Default a binding in place. `api_version` is the version it was written in.
pub fn default_binding(
    b: &mut ValidatingAdmissionPolicyBinding,
    api_version: &str,
) -> Vec<AppliedDefault> {
    let mut out = Vec::new();
    if let Some(mr) = b.spec.match_resources.as_mut() {
        default_match_resources(mr, "spec.matchResources", &mut out);
    }
    if api_version.ends_with("/v1alpha1") {
        if let Some(pr) = b.spec.param_ref.as_mut() {
            if pr.parameter_not_found_action.is_none() {
                pr.parameter_not_found_action = Some("Deny".into());
                set(&mut out, "spec.paramRef.parameterNotFoundAction".into(), "\"Deny\"");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::types::{NamedRuleWithOperations, ParamRef};

    #[test]
    fn policy_defaults() {
        let mut p = ValidatingAdmissionPolicy::default();
        p.spec.match_constraints = Some(MatchResources {
            resource_rules: vec![NamedRuleWithOperations::default()],
            ..Default::default()
        });
        let applied = default_policy(&mut p);
        assert_eq!(applied.len(), 5);
        let mc = p.spec.match_constraints.unwrap();
        assert_eq!(p.spec.failure_policy.as_deref(), Some("Fail"));
        assert_eq!(mc.match_policy.as_deref(), Some("Equivalent"));
        assert_eq!(mc.resource_rules[0].scope.as_deref(), Some("*"));
        assert_eq!(mc.namespace_selector, Some(Default::default()));
    }

    #[test]
    fn binding_param_not_found_action_only_v1alpha1() {
        let mut b = ValidatingAdmissionPolicyBinding::default();
        b.spec.param_ref = Some(ParamRef { name: "x".into(), ..Default::default() });
        default_binding(&mut b, "admissionregistration.k8s.io/v1");
        assert_eq!(b.spec.param_ref.as_ref().unwrap().parameter_not_found_action, None);
        default_binding(&mut b, "admissionregistration.k8s.io/v1alpha1");
        assert_eq!(b.spec.param_ref.unwrap().parameter_not_found_action.as_deref(), Some("Deny"));
    }
}
