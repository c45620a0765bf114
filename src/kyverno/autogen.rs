//! Kyverno's auto-generation of rules for Pod controllers (`pkg/autogen/v1`: `CanAutoGen`,
//! `ComputeRules`, `generateRuleForControllers`, `generateCronJobRule`, `updateFields`).
//! `docs/kyverno-semantics.md` §4.
//!
//! A rule written for Pods also applies, through a generated rule, to the controllers whose
//! pod template it then checks: `autogen-<rule>` for DaemonSet, Deployment, Job, StatefulSet,
//! ReplicaSet and ReplicationController (paths shifted to `spec.template`), and
//! `autogen-cronjob-<rule>` for CronJob (`spec.jobTemplate.spec.template`). The rewriting is
//! textual, over the rule's JSON, as Kyverno does it.

use super::matching::contains_kind;
use super::policy::{KyvernoPolicy, ResourceDescription, Rule};
use serde_json::{Map, Value};

/// `pod-policies.kyverno.io/autogen-controllers`.
pub const ANNOTATION: &str = "pod-policies.kyverno.io/autogen-controllers";

const CONTROLLERS: [&str; 7] = [
    "DaemonSet",
    "Deployment",
    "Job",
    "StatefulSet",
    "ReplicaSet",
    "ReplicationController",
    "CronJob",
];

/// `internal.PodControllerGVKMap`.
fn to_gvk(kind: &str) -> String {
    match kind {
        "DaemonSet" => "apps/v1/DaemonSet",
        "Deployment" => "apps/v1/Deployment",
        "Job" => "batch/v1/Job",
        "StatefulSet" => "apps/v1/StatefulSet",
        "ReplicaSet" => "apps/v1/ReplicaSet",
        "ReplicationController" => "v1/ReplicationController",
        "CronJob" => "batch/v1/CronJob",
        "Pod" => "v1/Pod",
        other => other,
    }
    .to_string()
}

/// `checkAutogenSupport` for one description; sets `needed` when it names Pod or a controller.
fn supports(d: &ResourceDescription, needed: &mut bool) -> bool {
    let other_than_pod = d.kinds.len() > 1 && contains_kind(&d.kinds, "Pod");
    if !d.name.is_empty()
        || !d.names.is_empty()
        || d.selector.is_some()
        || d.annotations.is_some()
        || other_than_pod
    {
        return false;
    }
    *needed |= d.kinds.iter().any(|k| k == "Pod" || CONTROLLERS.contains(&k.as_str()));
    true
}

/// `CanAutoGen`: whether rules are generated at all (any rule's descriptions name Pod or a
/// controller, none selects by name, selector or annotations, no generate rule and no JSON6902
/// patch).
pub fn can_autogen<'r>(rules: impl IntoIterator<Item = &'r Rule>) -> bool {
    let mut needed = false;
    for rule in rules {
        if rule.has_generate {
            return false;
        }
        let mutate = rule.raw.get("mutate");
        let json6902 = |m: &Value| {
            m.get("patchesJson6902").and_then(Value::as_str).is_some_and(|s| !s.is_empty())
        };
        if let Some(m) = mutate {
            let foreach = m.get("foreach").and_then(Value::as_array);
            if json6902(m) || foreach.is_some_and(|f| f.iter().any(json6902)) {
                return false;
            }
        }
        let mut descriptions = vec![&rule.match_resources.top.resources];
        descriptions.extend(rule.match_resources.any.iter().map(|f| &f.resources));
        descriptions.extend(rule.match_resources.all.iter().map(|f| &f.resources));
        if let Some(x) = &rule.exclude {
            descriptions.push(&x.top.resources);
            descriptions.extend(x.any.iter().map(|f| &f.resources));
            descriptions.extend(x.all.iter().map(|f| &f.resources));
        }
        for d in descriptions {
            if !supports(d, &mut needed) {
                return false;
            }
        }
    }
    needed
}

/// The controllers rules are generated for: the annotation's list when present and
/// auto-generation applies, else all seven (or none).
/// `rules`: the policy's rules as the engine is handed them (the policy cache may pass a copy of
/// the policy with only some of its rules; `CanAutoGen` then looks at those).
pub fn controllers<'r>(
    policy: &KyvernoPolicy,
    rules: impl IntoIterator<Item = &'r Rule>,
) -> Vec<String> {
    if !can_autogen(rules) {
        return vec!["none".into()];
    }
    match policy.annotations.get(ANNOTATION) {
        Some(list) => list.split(',').map(str::to_string).collect(),
        None => CONTROLLERS.iter().map(|s| s.to_string()).collect(),
    }
}

/// `getAutogenRuleName`: `prefix-name`, cut to 63 bytes (Go cuts bytes; a split character
/// becomes one U+FFFD per byte when the rule is marshalled).
fn rule_name(prefix: &str, name: &str) -> String {
    let full = format!("{prefix}-{name}");
    if full.len() <= 63 {
        return full;
    }
    let bytes = &full.as_bytes()[..63];
    let mut end = 63;
    while std::str::from_utf8(&bytes[..end]).is_err() {
        end -= 1;
    }
    let mut out = String::from_utf8_lossy(&bytes[..end]).into_owned();
    out.extend(std::iter::repeat_n('\u{FFFD}', 63 - end));
    out
}

/// Replace every occurrence of the `from` strings in every string (and key) of `v`.
fn replace_strings(v: &Value, rules: &[(&str, &str)]) -> Value {
    let fix = |s: &str| rules.iter().fold(s.to_string(), |acc, (from, to)| acc.replace(from, to));
    match v {
        Value::String(s) => Value::String(fix(s)),
        Value::Array(a) => Value::Array(a.iter().map(|x| replace_strings(x, rules)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (fix(k), replace_strings(x, rules))).collect())
        }
        other => other.clone(),
    }
}

const POD_CEL: [(&str, &str); 4] = [
    ("object.spec", "object.spec.template.spec"),
    ("oldObject.spec", "oldObject.spec.template.spec"),
    ("object.metadata", "object.spec.template.metadata"),
    ("oldObject.metadata", "oldObject.spec.template.metadata"),
];
const CRONJOB_CEL: [(&str, &str); 4] = [
    ("object.spec", "object.spec.jobTemplate.spec.template.spec"),
    ("oldObject.spec", "oldObject.spec.jobTemplate.spec.template.spec"),
    ("object.metadata", "object.spec.jobTemplate.spec.template.metadata"),
    ("oldObject.metadata", "oldObject.spec.jobTemplate.spec.template.metadata"),
];
const POD_JMESPATH: [(&str, &str); 4] = [
    ("request.object.spec", "request.object.spec.template.spec"),
    ("request.oldObject.spec", "request.oldObject.spec.template.spec"),
    ("request.object.metadata", "request.object.spec.template.metadata"),
    ("request.oldObject.metadata", "request.oldObject.spec.template.metadata"),
];
const CRONJOB_JMESPATH: [(&str, &str); 4] = [
    ("request.object.spec", "request.object.spec.jobTemplate.spec.template.spec"),
    ("request.oldObject.spec", "request.oldObject.spec.jobTemplate.spec.template.spec"),
    ("request.object.metadata", "request.object.spec.jobTemplate.spec.template.metadata"),
    ("request.oldObject.metadata", "request.oldObject.spec.jobTemplate.spec.template.metadata"),
];

/// Set the kinds of the filters in `m[key]` (`any`/`all`): all of them (CronJob), or those
/// naming Pod (the others).
fn set_filter_kinds(list: &mut Value, kinds: &[String], only_pod: bool) {
    let Some(items) = list.as_array_mut() else { return };
    for f in items {
        let names_pod = f
            .get("resources")
            .and_then(|r| r.get("kinds"))
            .and_then(Value::as_array)
            .map(|k| k.iter().filter_map(Value::as_str).map(str::to_string).collect::<Vec<_>>())
            .is_some_and(|k| contains_kind(&k, "Pod"));
        if !only_pod || names_pod {
            if let Some(r) = f.get_mut("resources").and_then(Value::as_object_mut) {
                r.insert("kinds".into(), kinds.iter().cloned().map(Value::String).collect());
            }
        }
    }
}

/// `generateRule`: a copy of `rule` named `name`, matching `kinds` instead of Pods, with its
/// validation kept (CEL and the other validation kinds, whose shift vap-eval does not model:
/// they are reported as not supported anyway). `None` when there is nothing to generate.
fn generate(rule: &Rule, name: String, kinds: &[String], cronjob: bool) -> Option<Value> {
    // generateRule keeps pattern, deny, podSecurity, anyPattern, foreach and cel validations;
    // a validation with none of them (manifests, assert) generates nothing.
    let kept = ["pattern", "anyPattern", "deny", "podSecurity", "foreach"];
    let has_validation = rule
        .validate
        .as_ref()
        .is_some_and(|v| v.cel.is_some() || v.other.iter().any(|o| kept.contains(o)));
    if !has_validation && !rule.has_verify_images && !rule.has_mutate {
        return None;
    }
    let mut raw = rule.raw.clone();
    let obj = raw.as_object_mut()?;
    obj.insert("name".into(), Value::String(name));
    let kinds_json: Value = kinds.iter().cloned().map(Value::String).collect();
    let mut fix = |key: &str, top_only_if_set: bool| {
        let Some(m) = obj.get_mut(key).and_then(Value::as_object_mut) else { return };
        if let Some(any) = m.get_mut("any").filter(|a| a.as_array().is_some_and(|a| !a.is_empty()))
        {
            set_filter_kinds(any, kinds, !cronjob);
        } else if let Some(all) =
            m.get_mut("all").filter(|a| a.as_array().is_some_and(|a| !a.is_empty()))
        {
            set_filter_kinds(all, kinds, !cronjob);
        } else {
            let has = m
                .get("resources")
                .and_then(|r| r.get("kinds"))
                .and_then(Value::as_array)
                .is_some_and(|k| !k.is_empty());
            if top_only_if_set && !has {
                return;
            }
            let r = m.entry("resources").or_insert_with(|| Value::Object(Map::new()));
            if let Some(r) = r.as_object_mut() {
                r.insert("kinds".into(), kinds_json.clone());
            }
        }
    };
    fix("match", false);
    fix("exclude", true);
    let cel = rule.validate.as_ref().is_some_and(|v| v.cel.is_some());
    let rules: &[(&str, &str)] = match (cronjob, cel) {
        (false, true) => &POD_CEL,
        (true, true) => &CRONJOB_CEL,
        (false, false) => &POD_JMESPATH,
        (true, false) => &CRONJOB_JMESPATH,
    };
    Some(replace_strings(&raw, rules))
}

/// `generateRuleForControllers` + `generateCronJobRule` for one rule and the resource's kind:
/// the generated rule's JSON, if any.
fn generate_for(rule: &Rule, kind: &str) -> Option<Value> {
    if rule.name.starts_with("autogen-") {
        return None;
    }
    let match_kinds = rule.match_resources.kinds();
    let exclude_kinds = rule.exclude.as_ref().map(|x| x.kinds()).unwrap_or_default();
    if !contains_kind(&match_kinds, "Pod")
        || (!exclude_kinds.is_empty() && !contains_kind(&exclude_kinds, "Pod"))
    {
        return None;
    }
    if kind == "CronJob" {
        return generate(
            rule,
            rule_name("autogen-cronjob", &rule.name),
            &[to_gvk("CronJob")],
            true,
        );
    }
    generate(rule, rule_name("autogen", &rule.name), &[to_gvk(kind)], false)
}

/// The rule `ComputeRules` generates from `rule` for a controller of `kind`, read back as a
/// rule (with the path of the written rule); `None` when it generates none.
pub fn generate_rule(rule: &Rule, kind: &str) -> Option<Rule> {
    let json = generate_for(rule, kind)?;
    let mut r = Rule::from_json(&json, &rule.path, &mut Vec::new());
    r.path = rule.path.clone();
    Some(r)
}

/// `ComputeRules(policy, kind)`: the rules Kyverno evaluates for a resource of `kind`. For a
/// controller kind auto-generation applies to: the written rules (without any `autogen-`
/// ones) followed by the generated rules; otherwise the written rules. Generated rules keep the
/// path of the rule they come from.
///
/// `rules` are the rules the engine was handed (all of the policy's, or the policy cache's
/// subset), as any handle `rule` reads a [`Rule`] from; `generate(r)` is the rule generated
/// from `r` for `kind` ([`generate_rule`], possibly cached by the caller).
pub fn compute_rules<T: Clone>(
    policy: &KyvernoPolicy,
    rules: &[T],
    rule: impl Fn(&T) -> &Rule,
    mut generate: impl FnMut(&T) -> Option<T>,
    kind: &str,
) -> Vec<T> {
    if kind.is_empty() || kind == "none" {
        return rules.to_vec();
    }
    if !controllers(policy, rules.iter().map(&rule)).iter().any(|c| c == kind) {
        return rules.to_vec();
    }
    let generated: Vec<T> = rules.iter().filter_map(&mut generate).collect();
    if generated.is_empty() {
        return rules.to_vec();
    }
    let mut out: Vec<T> =
        rules.iter().filter(|r| !rule(r).name.starts_with("autogen-")).cloned().collect();
    out.extend(generated);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_are_cut_to_63_bytes() {
        assert_eq!(rule_name("autogen", "check"), "autogen-check");
        let long = "x".repeat(70);
        assert_eq!(rule_name("autogen", &long).len(), 63);
        // A 2-byte character split at byte 63: one replacement character per byte kept.
        let name = format!("{}é", "x".repeat(54));
        assert_eq!(rule_name("autogen", &name), format!("autogen-{}\u{FFFD}", "x".repeat(54)));
    }

    #[test]
    fn cel_paths_move_to_the_pod_template() {
        let v = serde_json::json!({"e": "object.spec.containers.all(c, oldObject.metadata.name == '')"});
        assert_eq!(
            replace_strings(&v, &POD_CEL)["e"],
            "object.spec.template.spec.containers.all(c, oldObject.spec.template.metadata.name == '')"
        );
        assert_eq!(
            replace_strings(&v, &CRONJOB_CEL)["e"],
            "object.spec.jobTemplate.spec.template.spec.containers.all(c, oldObject.spec.jobTemplate.spec.template.metadata.name == '')"
        );
    }
}
