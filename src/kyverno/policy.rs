//! Kyverno `ClusterPolicy` and `Policy` (kyverno.io/v1, and v2beta1 where it has the same
//! shape), read from the manifests' documents: the fields the admission path of Kyverno's
//! engine reads (`api/kyverno/v1`: `spec_types.go`, `rule_types.go`,
//! `match_resources_types.go`, `resource_description_types.go`, `user_info_types.go`,
//! `common_types.go`). `docs/kyverno-semantics.md` §1.
//!
//! A rule keeps its JSON (`raw`): auto-generation rewrites it as Kyverno does, as JSON, and the
//! generated rule is read back through [`Rule::from_json`].

use crate::admission::manifests::Source;
use crate::admission::types::{
    AuditAnnotation, LabelSelector, LabelSelectorRequirement, MatchCondition, ParamKind, ParamRef,
    Validation, Variable,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// The group of Kyverno's policy kinds.
pub const GROUP: &str = "kyverno.io";

/// A `ClusterPolicy` or `Policy`.
#[derive(Clone, Debug)]
pub struct KyvernoPolicy {
    /// `ClusterPolicy` or `Policy`.
    pub kind: String,
    pub name: String,
    /// Empty for a `ClusterPolicy`.
    pub namespace: String,
    pub annotations: BTreeMap<String, String>,
    pub spec: Spec,
    pub source: Source,
    /// Kyverno generated a ValidatingAdmissionPolicy from the policy's CEL rule: its engine
    /// then skips that rule ([`super::vap`]).
    pub vap_generated: bool,
    /// Kyverno's policy validation rejects the policy (`pkg/validation/policy`): it never
    /// exists in a cluster, and the CLI skips it. Kyverno's error text.
    pub rejected: Option<String>,
}

impl KyvernoPolicy {
    /// `cache.MetaObjectToName`: `namespace/name` for a Policy, `name` for a ClusterPolicy
    /// (what PolicyExceptions' `policyName` names).
    pub fn key(&self) -> String {
        if self.namespace.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }

    /// `ClusterPolicy/name` or `Policy/namespace/name`, for diagnostics.
    pub fn display(&self) -> String {
        if self.namespace.is_empty() {
            format!("{}/{}", self.kind, self.name)
        } else {
            format!("{}/{}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// `Spec`.
#[derive(Clone, Debug, Default)]
pub struct Spec {
    pub rules: Vec<Rule>,
    /// `applyRules: One`: stop after the first rule that passed or failed.
    pub apply_one: bool,
    /// `GetFailurePolicy`: `webhookConfiguration.failurePolicy`, else `failurePolicy`, else
    /// `Fail`. True for `Ignore`.
    pub failure_policy_ignore: bool,
    /// `validationFailureAction` as written; `Audit` when absent (the CRD default).
    pub validation_failure_action: String,
    pub validation_failure_action_overrides: Vec<ActionOverride>,
    pub emit_warning: bool,
    /// `admission` (default true): evaluated in the admission webhook at all.
    pub admission: bool,
    /// `background` (default true): only affects background scans, not modelled.
    pub background: bool,
    /// `webhookConfiguration.matchConditions`: when set, Kyverno registers a webhook of the
    /// policy's own carrying them (`CustomWebhookMatchConditions`; [`super::webhook`]).
    pub match_conditions: Vec<MatchCondition>,
}

/// `ValidationFailureActionOverride`.
#[derive(Clone, Debug, Default)]
pub struct ActionOverride {
    pub action: String,
    /// `None` when not set (`nil` in Go: distinct from an empty list).
    pub namespaces: Option<Vec<String>>,
    pub namespace_selector: Option<LabelSelector>,
}

/// `true` for `Enforce`/`enforce` (`ValidationFailureAction.Enforce`).
pub fn is_enforce(action: &str) -> bool {
    action == "Enforce" || action == "enforce"
}

/// `ValidationFailureAction.IsValid`.
pub fn is_valid_action(action: &str) -> bool {
    matches!(action, "Enforce" | "enforce" | "Audit" | "audit")
}

/// `Rule`.
#[derive(Clone, Debug, Default)]
pub struct Rule {
    pub name: String,
    pub match_resources: MatchResources,
    pub exclude: Option<MatchResources>,
    pub cel_preconditions: Vec<MatchCondition>,
    /// Present when the rule has `validate`.
    pub validate: Option<Validate>,
    pub has_mutate: bool,
    pub has_generate: bool,
    pub has_verify_images: bool,
    /// `context` entries (JMESPath context; loaded from the cluster by Kyverno).
    pub has_context: bool,
    /// JMESPath `preconditions`.
    pub has_preconditions: bool,
    /// The rule as written (or as generated).
    pub raw: Value,
    /// `spec.rules[i]` of the rule this one is (or was generated from).
    pub path: String,
}

/// `Validation` (the part this evaluator reads).
#[derive(Clone, Debug, Default)]
pub struct Validate {
    pub failure_action: Option<String>,
    pub failure_action_overrides: Vec<ActionOverride>,
    pub message: String,
    /// The non-CEL ways of validating present in the rule, by field name (`pattern`,
    /// `anyPattern`, `deny`, `foreach`, `podSecurity`, `manifests`, `assert`).
    pub other: Vec<&'static str>,
    pub cel: Option<Cel>,
}

/// `CEL`.
#[derive(Clone, Debug, Default)]
pub struct Cel {
    pub generate: bool,
    pub expressions: Vec<Validation>,
    pub param_kind: Option<ParamKind>,
    pub param_ref: Option<ParamRef>,
    pub audit_annotations: Vec<AuditAnnotation>,
    pub variables: Vec<Variable>,
}

impl Cel {
    /// `HasParam`: both paramKind and paramRef are set.
    pub fn has_param(&self) -> bool {
        self.param_kind.is_some() && self.param_ref.is_some()
    }
}

/// `MatchResources`: `any`, else `all`, else the deprecated top-level description.
#[derive(Clone, Debug, Default)]
pub struct MatchResources {
    pub any: Vec<ResourceFilter>,
    pub all: Vec<ResourceFilter>,
    pub top: ResourceFilter,
}

impl MatchResources {
    /// `IsEmpty`.
    pub fn is_empty(&self) -> bool {
        self.any.is_empty() && self.all.is_empty() && self.top.is_empty()
    }

    /// `GetKinds`: the kinds of the top-level description, then of `any`, then of `all`.
    pub fn kinds(&self) -> Vec<String> {
        let mut k = self.top.resources.kinds.clone();
        for f in self.any.iter().chain(&self.all) {
            k.extend(f.resources.kinds.iter().cloned());
        }
        k
    }
}

/// `ResourceFilter`: user info and a resource description.
#[derive(Clone, Debug, Default)]
pub struct ResourceFilter {
    pub user: UserInfoFilter,
    pub resources: ResourceDescription,
}

impl ResourceFilter {
    pub fn is_empty(&self) -> bool {
        self.user.is_empty() && self.resources.is_empty()
    }
}

/// `ResourceDescription`.
#[derive(Clone, Debug, Default)]
pub struct ResourceDescription {
    pub kinds: Vec<String>,
    pub name: String,
    pub names: Vec<String>,
    pub namespaces: Vec<String>,
    /// `None` when not set (autogen distinguishes an empty map from none).
    pub annotations: Option<BTreeMap<String, String>>,
    pub selector: Option<LabelSelector>,
    pub namespace_selector: Option<LabelSelector>,
    pub operations: Vec<String>,
}

impl ResourceDescription {
    /// `IsEmpty` (every field unset).
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
            && self.name.is_empty()
            && self.names.is_empty()
            && self.namespaces.is_empty()
            && self.annotations.as_ref().is_none_or(BTreeMap::is_empty)
            && self.selector.is_none()
            && self.namespace_selector.is_none()
            && self.operations.is_empty()
    }
}

/// `UserInfo` of a filter.
#[derive(Clone, Debug, Default)]
pub struct UserInfoFilter {
    /// `namespace:name` of Roles.
    pub roles: Vec<String>,
    pub cluster_roles: Vec<String>,
    pub subjects: Vec<Subject>,
}

impl UserInfoFilter {
    pub fn is_empty(&self) -> bool {
        self.roles.is_empty() && self.cluster_roles.is_empty() && self.subjects.is_empty()
    }
}

/// `rbacv1.Subject`.
#[derive(Clone, Debug, Default)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

/// A decoding problem: the field path inside the policy and the message.
pub type Problem = (String, String);

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn string_map(v: Option<&Value>) -> Option<BTreeMap<String, String>> {
    // Inserted one by one: collecting into a BTreeMap would add a sort to the wasm.
    v.and_then(Value::as_object).map(|m| {
        let mut out = BTreeMap::new();
        for (k, v) in m {
            if let Some(s) = v.as_str() {
                out.insert(k.clone(), s.to_string());
            }
        }
        out
    })
}

fn text(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_string()
}

// Hand-written readers for the admissionregistration types a CEL rule embeds: serde's
// `from_value` would add a deserializer per type to the wasm (docs/kyverno-semantics.md §1).

/// A value that is present but not an object/list where one is required is a problem.
fn wrong(path: &str, what: &str, out: &mut Vec<Problem>) {
    out.push((path.to_string(), format!("{path}: expected {what}")));
}

fn object_list<'a>(v: Option<&'a Value>, path: &str, out: &mut Vec<Problem>) -> &'a [Value] {
    match v {
        None | Some(Value::Null) => &[],
        Some(Value::Array(a)) => a.as_slice(),
        Some(_) => {
            wrong(path, "a list", out);
            &[]
        }
    }
}

fn label_selector(v: Option<&Value>, path: &str, out: &mut Vec<Problem>) -> Option<LabelSelector> {
    let v = v.filter(|v| !v.is_null())?;
    if !v.is_object() {
        wrong(path, "a label selector object", out);
        return None;
    }
    let exprs = object_list(v.get("matchExpressions"), &format!("{path}.matchExpressions"), out);
    Some(LabelSelector {
        match_labels: string_map(v.get("matchLabels")).unwrap_or_default(),
        match_expressions: exprs
            .iter()
            .map(|e| LabelSelectorRequirement {
                key: text(e.get("key")),
                operator: text(e.get("operator")),
                values: strings(e.get("values")),
            })
            .collect(),
    })
}

fn validations(v: Option<&Value>, path: &str, out: &mut Vec<Problem>) -> Vec<Validation> {
    object_list(v, path, out)
        .iter()
        .map(|e| Validation {
            expression: text(e.get("expression")),
            message: text(e.get("message")),
            message_expression: text(e.get("messageExpression")),
            reason: e.get("reason").and_then(Value::as_str).map(str::to_string),
        })
        .collect()
}

/// `name`/`expression` pairs (variables, matchConditions).
fn named(v: Option<&Value>, path: &str, out: &mut Vec<Problem>) -> Vec<(String, String)> {
    object_list(v, path, out)
        .iter()
        .map(|e| (text(e.get("name")), text(e.get("expression"))))
        .collect()
}

fn conditions(v: Option<&Value>, path: &str, out: &mut Vec<Problem>) -> Vec<MatchCondition> {
    let named = named(v, path, out).into_iter();
    named.map(|(name, expression)| MatchCondition { name, expression }).collect()
}

fn named_keys(items: &[Value]) -> Vec<AuditAnnotation> {
    items
        .iter()
        .map(|e| AuditAnnotation {
            key: text(e.get("key")),
            value_expression: text(e.get("valueExpression")),
        })
        .collect()
}

fn param_kind(v: Option<&Value>) -> Option<ParamKind> {
    let v = v.filter(|v| v.is_object())?;
    Some(ParamKind { api_version: text(v.get("apiVersion")), kind: text(v.get("kind")) })
}

fn param_ref(v: Option<&Value>, path: &str, out: &mut Vec<Problem>) -> Option<ParamRef> {
    let v = v.filter(|v| v.is_object())?;
    Some(ParamRef {
        name: text(v.get("name")),
        namespace: text(v.get("namespace")),
        selector: label_selector(v.get("selector"), &format!("{path}.selector"), out),
        parameter_not_found_action: v
            .get("parameterNotFoundAction")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

fn overrides(v: Option<&Value>, path: &str, out: &mut Vec<Problem>) -> Vec<ActionOverride> {
    let Some(items) = v.and_then(Value::as_array) else { return Vec::new() };
    items
        .iter()
        .enumerate()
        .map(|(i, o)| ActionOverride {
            action: text(o.get("action")),
            namespaces: o.get("namespaces").filter(|n| !n.is_null()).map(|n| strings(Some(n))),
            namespace_selector: label_selector(
                o.get("namespaceSelector"),
                &format!("{path}[{i}].namespaceSelector"),
                out,
            ),
        })
        .collect()
}

fn description(v: &Value, path: &str, out: &mut Vec<Problem>) -> ResourceDescription {
    ResourceDescription {
        kinds: strings(v.get("kinds")),
        name: text(v.get("name")),
        names: strings(v.get("names")),
        namespaces: strings(v.get("namespaces")),
        annotations: string_map(v.get("annotations")),
        selector: label_selector(v.get("selector"), &format!("{path}.selector"), out),
        namespace_selector: label_selector(
            v.get("namespaceSelector"),
            &format!("{path}.namespaceSelector"),
            out,
        ),
        operations: strings(v.get("operations")),
    }
}

fn user_info(v: &Value) -> UserInfoFilter {
    UserInfoFilter {
        roles: strings(v.get("roles")),
        cluster_roles: strings(v.get("clusterRoles")),
        subjects: v
            .get("subjects")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|s| Subject {
                        kind: text(s.get("kind")),
                        name: text(s.get("name")),
                        namespace: text(s.get("namespace")),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

fn filter(v: &Value, path: &str, out: &mut Vec<Problem>) -> ResourceFilter {
    ResourceFilter {
        user: user_info(v),
        resources: v
            .get("resources")
            .map(|r| description(r, &format!("{path}.resources"), out))
            .unwrap_or_default(),
    }
}

fn match_resources(v: &Value, path: &str, out: &mut Vec<Problem>) -> MatchResources {
    let list = |key: &str, out: &mut Vec<Problem>| -> Vec<ResourceFilter> {
        v.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .enumerate()
                    .map(|(i, f)| filter(f, &format!("{path}.{key}[{i}]"), out))
                    .collect()
            })
            .unwrap_or_default()
    };
    MatchResources { any: list("any", out), all: list("all", out), top: filter(v, path, out) }
}

impl Rule {
    /// Read a rule written at `path` (`spec.rules[i]`).
    pub fn from_json(v: &Value, path: &str, out: &mut Vec<Problem>) -> Rule {
        let present = |k: &str| v.get(k).is_some_and(|x| !x.is_null());
        let validate = v.get("validate").filter(|x| x.is_object()).map(|val| {
            let vp = format!("{path}.validate");
            let mut other = Vec::new();
            for (key, name) in [
                ("pattern", "pattern"),
                ("anyPattern", "anyPattern"),
                ("deny", "deny"),
                ("foreach", "foreach"),
                ("podSecurity", "podSecurity"),
                ("manifests", "manifests"),
                ("assert", "assert"),
            ] {
                if val.get(key).is_some_and(|x| !x.is_null()) {
                    other.push(name);
                }
            }
            let cel = val.get("cel").filter(|c| c.is_object()).map(|c| {
                let cp = format!("{vp}.cel");
                Cel {
                    generate: c.get("generate").and_then(Value::as_bool).unwrap_or(false),
                    expressions: validations(
                        c.get("expressions"),
                        &format!("{cp}.expressions"),
                        out,
                    ),
                    param_kind: param_kind(c.get("paramKind")),
                    param_ref: param_ref(c.get("paramRef"), &format!("{cp}.paramRef"), out),
                    audit_annotations: named_keys(object_list(
                        c.get("auditAnnotations"),
                        &format!("{cp}.auditAnnotations"),
                        out,
                    )),
                    variables: named(c.get("variables"), &format!("{cp}.variables"), out)
                        .into_iter()
                        .map(|(name, expression)| Variable { name, expression })
                        .collect(),
                }
            });
            Validate {
                failure_action: val
                    .get("failureAction")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                failure_action_overrides: overrides(
                    val.get("failureActionOverrides"),
                    &format!("{vp}.failureActionOverrides"),
                    out,
                ),
                message: text(val.get("message")),
                other,
                cel,
            }
        });
        Rule {
            name: text(v.get("name")),
            match_resources: v
                .get("match")
                .map(|m| match_resources(m, &format!("{path}.match"), out))
                .unwrap_or_default(),
            exclude: v
                .get("exclude")
                .filter(|e| !e.is_null())
                .map(|e| match_resources(e, &format!("{path}.exclude"), out)),
            cel_preconditions: conditions(
                v.get("celPreconditions"),
                &format!("{path}.celPreconditions"),
                out,
            ),
            validate,
            has_mutate: present("mutate"),
            has_generate: present("generate"),
            has_verify_images: v
                .get("verifyImages")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty()),
            has_context: v.get("context").and_then(Value::as_array).is_some_and(|a| !a.is_empty()),
            has_preconditions: present("preconditions"),
            raw: v.clone(),
            path: path.to_string(),
        }
    }
}

/// Read a `ClusterPolicy`/`Policy` object. Problems are returned with their field paths; what
/// could be read is kept.
pub fn decode(obj: &Value, source: Source) -> (KyvernoPolicy, Vec<Problem>) {
    let mut out = Vec::new();
    let meta = obj.get("metadata");
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let rules = spec
        .get("rules")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .enumerate()
                .map(|(i, r)| Rule::from_json(r, &format!("spec.rules[{i}]"), &mut out))
                .collect()
        })
        .unwrap_or_default();
    let webhook = spec.get("webhookConfiguration");
    let match_conditions = conditions(
        webhook.and_then(|w| w.get("matchConditions")),
        "spec.webhookConfiguration.matchConditions",
        &mut out,
    );
    let failure_policy = webhook
        .and_then(|w| w.get("failurePolicy"))
        .and_then(Value::as_str)
        .or_else(|| spec.get("failurePolicy").and_then(Value::as_str));
    let action = spec.get("validationFailureAction").and_then(Value::as_str).unwrap_or("Audit");
    let p = KyvernoPolicy {
        kind: text(obj.get("kind")),
        name: text(meta.and_then(|m| m.get("name"))),
        namespace: text(meta.and_then(|m| m.get("namespace"))),
        annotations: string_map(meta.and_then(|m| m.get("annotations"))).unwrap_or_default(),
        spec: Spec {
            rules,
            apply_one: spec.get("applyRules").and_then(Value::as_str) == Some("One"),
            failure_policy_ignore: failure_policy == Some("Ignore"),
            validation_failure_action: action.to_string(),
            validation_failure_action_overrides: overrides(
                spec.get("validationFailureActionOverrides"),
                "spec.validationFailureActionOverrides",
                &mut out,
            ),
            emit_warning: spec.get("emitWarning").and_then(Value::as_bool).unwrap_or(false),
            admission: spec.get("admission").and_then(Value::as_bool).unwrap_or(true),
            background: spec.get("background").and_then(Value::as_bool).unwrap_or(true),
            match_conditions,
        },
        source,
        vap_generated: false,
        rejected: None,
    };
    (p, out)
}

/// A `PolicyException` (kyverno.io/v2, v2beta1; `api/kyverno/v2/policy_exception_types.go`).
#[derive(Clone, Debug)]
pub struct PolicyException {
    pub name: String,
    pub namespace: String,
    /// `spec.match` (`any`/`all` only: the deprecated top-level description is not read).
    pub match_resources: MatchResources,
    /// `spec.conditions` is set (JMESPath conditions, which vap-eval does not evaluate).
    pub has_conditions: bool,
    /// `spec.exceptions`: `(policyName, ruleNames)`.
    pub exceptions: Vec<(String, Vec<String>)>,
    pub source: Source,
}

impl PolicyException {
    /// `cache.MetaNamespaceKeyFunc`: `namespace/name`, or `name`.
    pub fn key(&self) -> String {
        if self.namespace.is_empty() {
            self.name.clone()
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }

    /// `Contains(policy, rule)`: an entry names the policy (`namespace/name` for a Policy) and
    /// one of its rule names wildcard-matches the rule.
    pub fn contains(&self, policy: &str, rule: &str) -> bool {
        self.exceptions.iter().any(|(p, rules)| {
            p == policy && rules.iter().any(|r| super::wildcard::matches(r, rule))
        })
    }
}

/// Read a `PolicyException`. Problems are returned with their field paths.
pub fn decode_exception(obj: &Value, source: Source) -> (PolicyException, Vec<Problem>) {
    let mut out = Vec::new();
    let meta = obj.get("metadata");
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let mut m =
        spec.get("match").map(|m| match_resources(m, "spec.match", &mut out)).unwrap_or_default();
    m.top = ResourceFilter::default();
    let exceptions = object_list(spec.get("exceptions"), "spec.exceptions", &mut out)
        .iter()
        .map(|e| (text(e.get("policyName")), strings(e.get("ruleNames"))))
        .collect();
    let e = PolicyException {
        name: text(meta.and_then(|m| m.get("name"))),
        namespace: text(meta.and_then(|m| m.get("namespace"))),
        match_resources: m,
        has_conditions: spec.get("conditions").is_some_and(|c| !c.is_null()),
        exceptions,
        source,
    };
    (e, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // docs/kyverno-semantics.md §2.5 (api/kyverno/v2 `Exception.Contains`: the policy's
    // `cache.MetaObjectToName` key, ruleNames as wildcards).
    #[test]
    fn an_exception_names_the_policy_by_key_and_rules_by_wildcard() {
        let e = PolicyException {
            name: "e".into(),
            namespace: "team".into(),
            match_resources: MatchResources::default(),
            has_conditions: false,
            exceptions: vec![
                ("team/local".into(), vec!["check-*".into()]),
                ("cluster".into(), vec!["exact".into()]),
            ],
            source: Source { document: 0, path: String::new() },
        };
        assert_eq!(e.key(), "team/e");
        for (policy, rule, want) in [
            ("team/local", "check-image", true),
            ("team/local", "autogen-check-image", false),
            ("local", "check-image", false),
            ("cluster", "exact", true),
            ("cluster", "exact-not", false),
        ] {
            assert_eq!(e.contains(policy, rule), want, "{policy} {rule}");
        }
    }
}
