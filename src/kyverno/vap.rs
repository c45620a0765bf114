//! The ValidatingAdmissionPolicy and binding Kyverno generates from a ClusterPolicy's CEL rule
//! (`pkg/admissionpolicy/kyvernopolicy_checker.go` `CanGenerateVAP`, `builder.go`
//! `BuildValidatingAdmissionPolicy(Binding)`, `pkg/controllers/admissionpolicygenerator`).
//! `docs/kyverno-semantics.md` §7.
//!
//! When Kyverno generates them, its own engine skips the rule (`validate_cel.go`: the policy's
//! status says the VAP was generated) and the apiserver evaluates the generated policy instead.

use super::matching::parse_kind_selector;
use super::policy::{
    is_enforce, ActionOverride, KyvernoPolicy, PolicyException, ResourceDescription,
    ResourceFilter, UserInfoFilter,
};
use super::wildcard::{contains_wildcard, matches as wildcard};
use crate::admission::resources::ResourceCatalog;
use crate::admission::types::{
    LabelSelector, LabelSelectorRequirement, MatchResources, NamedRuleWithOperations, ObjectMeta,
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingAdmissionPolicyBindingSpec, ValidatingAdmissionPolicySpec,
};

/// The generated pair.
#[derive(Clone, Debug)]
pub struct Generated {
    pub policy: ValidatingAdmissionPolicy,
    pub binding: ValidatingAdmissionPolicyBinding,
}

const SKIP: &str = "skip generating ValidatingAdmissionPolicy";

fn check_user_info(u: &UserInfoFilter) -> Result<(), String> {
    if u.is_empty() {
        Ok(())
    } else {
        Err(format!("{SKIP}: Roles / ClusterRoles / Subjects in `any/all` is not applicable."))
    }
}

fn check_resources(r: &ResourceDescription, is_match: bool) -> Result<(), String> {
    if !is_match && !r.kinds.is_empty() && !r.namespaces.is_empty() {
        return Err(format!("{SKIP}: excluding a resource within a namespace is not applicable."));
    }
    if r.annotations.as_ref().is_some_and(|a| !a.is_empty()) {
        return Err(format!("{SKIP}: Annotations in resource description is not applicable."));
    }
    if contains_wildcard(&r.name) || r.names.iter().any(|n| contains_wildcard(n)) {
        return Err(format!("{SKIP}: wildcards in resource name is not applicable."));
    }
    if r.namespaces.iter().any(|n| contains_wildcard(n)) {
        return Err(format!("{SKIP}: wildcards in namespace name is not applicable."));
    }
    Ok(())
}

fn check_filters(filters: &[ResourceFilter], is_match: bool) -> Result<(), String> {
    for f in filters {
        check_user_info(&f.user)?;
        check_resources(&f.resources, is_match)?;
    }
    let selectors = filters
        .iter()
        .any(|f| f.resources.namespace_selector.is_some() || f.resources.selector.is_some());
    if !is_match && selectors {
        return Err(format!(
            "{SKIP}: NamespaceSelector / ObjectSelector in the exclude block is not applicable."
        ));
    }
    if is_match && filters.len() > 1 && selectors {
        return Err(format!("{SKIP}: NamespaceSelector / ObjectSelector across multiple resources in the match block are not applicable."));
    }
    Ok(())
}

fn check_overrides(o: &[ActionOverride]) -> Result<(), String> {
    if o.len() > 1 {
        return Err(format!(
            "{SKIP}: multiple validationFailureActionOverrides are not applicable."
        ));
    }
    if o.first().and_then(|o| o.namespaces.as_ref()).is_some_and(|n| !n.is_empty()) {
        return Err(format!(
            "{SKIP}: Namespaces in validationFailureActionOverrides is not applicable."
        ));
    }
    Ok(())
}

/// `CanGenerateVAP(spec, no exceptions, validate=false)` for a ClusterPolicy.
pub fn can_generate(p: &KyvernoPolicy) -> Result<(), String> {
    if p.kind != "ClusterPolicy" {
        return Err(
            "Kyverno generates ValidatingAdmissionPolicies only from ClusterPolicies".into()
        );
    }
    let rules = &p.spec.rules;
    let rule = match rules.as_slice() {
        [] => return Err(format!("{SKIP}: no rules found.")),
        [r] => r,
        _ => return Err(format!("{SKIP}: multiple rules are not applicable.")),
    };
    let Some(cel) = rule.validate.as_ref().and_then(|v| v.cel.as_ref()) else {
        return Err(format!("{SKIP} for non CEL rules."));
    };
    if !cel.generate {
        return Err(format!("{SKIP}: validate.cel.generate is not set to true."));
    }
    check_overrides(&p.spec.validation_failure_action_overrides)?;
    if let Some(v) = &rule.validate {
        check_overrides(&v.failure_action_overrides)?;
    }
    let m = &rule.match_resources;
    check_user_info(&m.top.user)?;
    check_resources(&m.top.resources, true)?;
    check_filters(&m.any, true)?;
    if m.all.len() > 1 {
        return Err(format!("{SKIP}: multiple 'all' in the match block is not applicable."));
    }
    check_filters(&m.all, true)?;
    if let Some(x) = &rule.exclude {
        check_user_info(&x.top.user)?;
        check_resources(&x.top.resources, false)?;
        check_filters(&x.any, false)?;
        if x.all.len() > 1 {
            return Err(format!("{SKIP}: multiple 'all' in the exclude block is not applicable."));
        }
        check_filters(&x.all, false)?;
    }
    Ok(())
}

/// `checkExceptions`: the PolicyExceptions naming the policy's rule must translate into
/// exclude rules.
fn check_exceptions(exceptions: &[&PolicyException]) -> Result<(), String> {
    for e in exceptions {
        if e.exceptions.iter().any(|(_, rules)| rules.len() > 1) {
            return Err(format!(
                "{SKIP}: multiple ruleNames in PolicyException is not applicable."
            ));
        }
        if e.has_conditions {
            return Err(format!("{SKIP}: Conditions in PolicyException is not applicable."));
        }
        let m = &e.match_resources;
        check_filters(&m.any, false)?;
        if m.all.len() > 1 {
            return Err(format!(
                "{SKIP}: multiple 'all' in the PolicyException's match block is not applicable."
            ));
        }
        check_filters(&m.all, false)?;
    }
    Ok(())
}

/// `translateOperations`: CREATE, UPDATE, CONNECT, DELETE when none is given.
fn operations(ops: &[String]) -> Vec<String> {
    let out: Vec<String> = ops
        .iter()
        .filter(|o| matches!(o.as_str(), "CREATE" | "UPDATE" | "CONNECT" | "DELETE"))
        .cloned()
        .collect();
    if out.is_empty() {
        ["CREATE", "UPDATE", "CONNECT", "DELETE"].iter().map(|s| s.to_string()).collect()
    } else {
        out
    }
}

fn named_rule(
    names: &[String],
    group: &str,
    version: &str,
    ops: &[String],
    mut resources: Vec<String>,
) -> NamedRuleWithOperations {
    vap_eval_cel::sort::sort_by(&mut resources, |a, b| a.cmp(b));
    NamedRuleWithOperations {
        resource_names: names.to_vec(),
        operations: ops.to_vec(),
        api_groups: vec![group.to_string()],
        api_versions: vec![version.to_string()],
        resources,
        scope: None,
    }
}

/// `constructValidatingAdmissionPolicyRules`: kinds become resource rules through discovery
/// (the catalog); rules of the same group and version are merged.
fn construct_rules(
    catalog: &ResourceCatalog,
    rules: &mut Vec<NamedRuleWithOperations>,
    r: &ResourceDescription,
    is_match: bool,
) -> Result<(), String> {
    let ops = operations(&r.operations);
    let mut names = r.names.clone();
    if !r.name.is_empty() {
        names.push(r.name.clone());
    }
    for kind in &r.kinds {
        if kind == "*" {
            rules.push(named_rule(&names, "*", "*", &ops, vec!["*".into()]));
            continue;
        }
        let (g, v, k, sub) = parse_kind_selector(kind);
        let found: Vec<_> = catalog
            .entries()
            .iter()
            .filter(|e| wildcard(g, &e.group) && wildcard(v, &e.version) && wildcard(k, &e.kind))
            .collect();
        let [e] = found.as_slice() else {
            return Err(format!("no unique match for kind {k}"));
        };
        let mut resources =
            vec![if sub.is_empty() { e.resource.clone() } else { format!("{}/{sub}", e.resource) }];
        if e.resource == "pods" && sub.is_empty() {
            resources.push("pods/ephemeralcontainers".into());
        }
        match rules
            .iter_mut()
            .find(|x| x.api_groups.contains(&e.group) && x.api_versions.contains(&e.version))
        {
            Some(x) => {
                x.resources.extend(resources);
                vap_eval_cel::sort::sort_by(&mut x.resources, |a, b| a.cmp(b));
            }
            None => rules.push(named_rule(&names, &e.group, &e.version, &ops, resources)),
        }
    }
    if !is_match && !r.namespaces.is_empty() && r.kinds.is_empty() {
        rules.push(NamedRuleWithOperations {
            resource_names: r.namespaces.clone(),
            operations: ops,
            api_groups: vec![String::new()],
            api_versions: vec!["v1".into()],
            resources: vec!["namespaces".into()],
            scope: None,
        });
    }
    Ok(())
}

fn translate(
    catalog: &ResourceCatalog,
    m: &mut MatchResources,
    rules: &mut Vec<NamedRuleWithOperations>,
    r: &ResourceDescription,
    is_match: bool,
) -> Result<(), String> {
    construct_rules(catalog, rules, r, is_match)?;
    if is_match {
        m.resource_rules = rules.clone();
        m.namespace_selector = if r.namespaces.is_empty() {
            r.namespace_selector.clone()
        } else {
            Some(LabelSelector {
                match_expressions: vec![LabelSelectorRequirement {
                    key: "kubernetes.io/metadata.name".into(),
                    operator: "In".into(),
                    values: r.namespaces.clone(),
                }],
                ..LabelSelector::default()
            })
        };
        m.object_selector = r.selector.clone();
    } else {
        m.exclude_resource_rules = rules.clone();
    }
    Ok(())
}

/// The generated ValidatingAdmissionPolicy (`cpol-<name>`) and binding
/// (`cpol-<name>-binding`), or Kyverno's reason for not generating them.
///
/// `exceptions`: the PolicyExceptions that name the policy and its rule (the generator's
/// `getExceptions`); their `match` filters become exclude rules of the generated policy.
pub fn generate(
    p: &KyvernoPolicy,
    catalog: &ResourceCatalog,
    exceptions: &[&PolicyException],
) -> Result<Generated, String> {
    can_generate(p)?;
    check_exceptions(exceptions)?;
    let rule = &p.spec.rules[0];
    let (Some(v), Some(cel)) =
        (&rule.validate, rule.validate.as_ref().and_then(|v| v.cel.as_ref()))
    else {
        return Err(format!("{SKIP} for non CEL rules."));
    };
    let mut m = MatchResources::default();
    let (mut match_rules, mut exclude_rules) = (Vec::new(), Vec::new());
    let mr = &rule.match_resources;
    if !mr.top.resources.is_empty() {
        translate(catalog, &mut m, &mut match_rules, &mr.top.resources, true)?;
    }
    for f in mr.any.iter().chain(&mr.all) {
        translate(catalog, &mut m, &mut match_rules, &f.resources, true)?;
    }
    if let Some(x) = &rule.exclude {
        if !x.top.resources.is_empty() {
            translate(catalog, &mut m, &mut exclude_rules, &x.top.resources, false)?;
        }
        for f in x.any.iter().chain(&x.all) {
            translate(catalog, &mut m, &mut exclude_rules, &f.resources, false)?;
        }
    }
    for e in exceptions {
        for f in e.match_resources.any.iter().chain(&e.match_resources.all) {
            translate(catalog, &mut m, &mut exclude_rules, &f.resources, false)?;
        }
    }
    let name = format!("cpol-{}", p.name);
    let meta = |n: String| {
        let mut labels = std::collections::BTreeMap::new();
        labels.insert("app.kubernetes.io/managed-by".to_string(), "kyverno".to_string());
        ObjectMeta { name: n, labels, ..ObjectMeta::default() }
    };
    let action = v.failure_action.as_deref().unwrap_or(&p.spec.validation_failure_action);
    let actions: Vec<String> =
        if is_enforce(action) { vec!["Deny".into()] } else { vec!["Audit".into(), "Warn".into()] };
    Ok(Generated {
        policy: ValidatingAdmissionPolicy {
            api_version: "admissionregistration.k8s.io/v1".into(),
            kind: "ValidatingAdmissionPolicy".into(),
            metadata: meta(name.clone()),
            spec: ValidatingAdmissionPolicySpec {
                param_kind: cel.param_kind.clone(),
                match_constraints: Some(m),
                validations: cel.expressions.clone(),
                failure_policy: None,
                audit_annotations: cel.audit_annotations.clone(),
                match_conditions: rule.cel_preconditions.clone(),
                variables: cel.variables.clone(),
            },
        },
        binding: ValidatingAdmissionPolicyBinding {
            api_version: "admissionregistration.k8s.io/v1".into(),
            kind: "ValidatingAdmissionPolicyBinding".into(),
            metadata: meta(format!("{name}-binding")),
            spec: ValidatingAdmissionPolicyBindingSpec {
                policy_name: name,
                param_ref: cel.param_ref.clone(),
                match_resources: None,
                validation_actions: actions,
            },
        },
    })
}
