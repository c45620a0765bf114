//! Kyverno's validating webhook for one request: which policies and rules it evaluates
//! (`pkg/policycache`: enforce / audit-warn selection and the per-namespace failure-action
//! filter), whether it blocks (`pkg/utils/engine.BlockRequest`, `EngineResponse
//! .HasEnforcedFailure`), its denial message (`webhookutils.GetBlockedMessages`) and warnings
//! (`GetWarningMessages`), and what the apiserver makes of them (`ToStatusErr`).
//! `docs/kyverno-semantics.md` §5, §6.

use super::engine::{validate_policy, Context, EngineResponse, PreparedRule, RuleStatus};
use super::matching::{check_selector, parse_kind_selector};
use super::policy::{is_enforce, is_valid_action, ActionOverride, KyvernoPolicy, Rule, Spec};
use super::wildcard::matches as wildcard;
use crate::admission::decision::{Status, StatusDetails};
use crate::admission::labels::Selector;
use crate::webhook::dispatcher::{match_conditions, ConditionResult, Env};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Kyverno's resource validating webhooks, in the order its configuration lists them.
pub const WEBHOOKS: [(&str, bool); 2] =
    [("validate.kyverno.svc-ignore", true), ("validate.kyverno.svc-fail", false)];

/// The request's namespace as the policy cache sees it: `None` for cluster-scoped requests
/// (and unknown namespaces).
pub struct Namespace<'a> {
    pub name: &'a str,
    pub labels: &'a BTreeMap<String, String>,
}

/// `computeEnforcePolicy` and the rules' own actions: whether the policy is cached as an
/// Enforce policy.
pub fn is_enforce_policy(spec: &Spec, computed: &[Rule]) -> bool {
    is_enforce(&spec.validation_failure_action)
        || spec.validation_failure_action_overrides.iter().any(|o| is_enforce(&o.action))
        || computed.iter().filter_map(|r| r.validate.as_ref()).any(|v| {
            v.failure_action.as_deref().is_some_and(is_enforce)
                || v.failure_action_overrides.iter().any(|o| is_enforce(&o.action))
        })
}

/// `checkValidationFailureActionOverrides(enforce, namespace, policy)`: the validate rules
/// whose action for this namespace is Enforce (`enforce`) or Audit, by index.
pub fn rules_with_action(spec: &Spec, enforce: bool, ns: Option<&Namespace<'_>>) -> Vec<usize> {
    let mut out = Vec::new();
    for (index, rule) in spec.rules.iter().enumerate() {
        let Some(v) = &rule.validate else { continue };
        let action = v.failure_action.as_deref().unwrap_or(&spec.validation_failure_action);
        let overrides = if v.failure_action_overrides.is_empty() {
            &spec.validation_failure_action_overrides
        } else {
            &v.failure_action_overrides
        };
        let mut matched = false;
        for o in overrides {
            let names = o.namespaces.as_deref().unwrap_or_default();
            let hit = if names.is_empty() && o.namespace_selector.is_none() {
                true
            } else if let Some(ns) = ns {
                names.iter().any(|p| wildcard(p, ns.name))
                    || o.namespace_selector.as_ref().is_some_and(|s| {
                        Selector::from_label_selector(s).is_ok_and(|s| s.matches(ns.labels))
                    })
            } else {
                false
            };
            if hit {
                matched = true;
                if is_enforce(&o.action) == enforce {
                    out.push(index);
                }
                break;
            }
        }
        if !matched && is_enforce(action) == enforce {
            out.push(index);
        }
    }
    out
}

/// `matchOverride`: the action of the first valid override that applies to the resource's
/// namespace.
fn match_override(
    overrides: &[ActionOverride],
    resource_ns: &str,
    labels: &BTreeMap<String, String>,
) -> Option<String> {
    let selector_ok = |o: &ActionOverride| {
        o.namespace_selector.as_ref().is_none_or(|s| check_selector(s, labels).unwrap_or(false))
    };
    for o in overrides.iter().filter(|o| is_valid_action(&o.action)) {
        let applies = match &o.namespaces {
            None => selector_ok(o),
            Some(names) => names.iter().any(|n| wildcard(n, resource_ns)) && selector_ok(o),
        };
        if applies {
            return Some(o.action.clone());
        }
    }
    None
}

/// `ruleAction` for a validate rule.
fn rule_action(
    rule: &Rule,
    resource_ns: &str,
    labels: &BTreeMap<String, String>,
) -> Option<String> {
    let v = rule.validate.as_ref()?;
    match_override(&v.failure_action_overrides, resource_ns, labels)
        .or_else(|| v.failure_action.clone())
}

/// `failureActionForRule`: the rule's own action, else the policy's override or action; a
/// name not among the computed rules gets the policy-wide action.
pub fn failure_action_for_rule(
    spec: &Spec,
    computed: &[Rc<PreparedRule>],
    name: &str,
    resource_ns: &str,
    labels: &BTreeMap<String, String>,
) -> String {
    let policy_wide = || {
        match_override(&spec.validation_failure_action_overrides, resource_ns, labels)
            .unwrap_or_else(|| spec.validation_failure_action.clone())
    };
    match computed.iter().find(|r| r.rule.name == name) {
        Some(r) => rule_action(&r.rule, resource_ns, labels).unwrap_or_else(policy_wide),
        None => computed
            .iter()
            .find_map(|r| rule_action(&r.rule, resource_ns, labels))
            .unwrap_or_else(policy_wide),
    }
}

/// One policy's response in a webhook call.
pub struct Evaluated<'p> {
    pub policy: &'p KyvernoPolicy,
    pub response: EngineResponse,
}

/// What one webhook returned.
pub struct WebhookResponse {
    /// The rejection message (`GetBlockedMessages`), when it blocks.
    pub denied: Option<String>,
    pub warnings: Vec<String>,
    /// Enforce-path policies evaluated (`namespace/name` or `name`).
    pub evaluated: Vec<String>,
    /// A rule it evaluates is one vap-eval does not evaluate.
    pub incomplete: bool,
}

fn resource_ns(cx: &Context<'_>) -> String {
    cx.resource()
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string()
}

/// `HasEnforcedFailure`.
fn has_enforced_failure(cx: &Context<'_>, e: &Evaluated<'_>) -> bool {
    let ns = resource_ns(cx);
    e.response.rules.iter().filter(|r| r.status == Some(RuleStatus::Fail)).any(|r| {
        is_enforce(&failure_action_for_rule(
            &e.policy.spec,
            &e.response.computed,
            &r.name,
            &ns,
            cx.namespace_labels,
        ))
    })
}

/// `GetBlockedMessages`.
fn blocked_message(cx: &Context<'_>, responses: &[Evaluated<'_>]) -> String {
    let mut failures: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for e in responses {
        let rules: Vec<(String, String)> = e
            .response
            .rules
            .iter()
            .filter(|r| {
                matches!(r.status, Some(RuleStatus::Fail | RuleStatus::Error | RuleStatus::Warn))
            })
            .map(|r| (r.name.clone(), r.message.clone()))
            .collect();
        if !rules.is_empty() {
            // Keyed by policy name only: a Policy and a ClusterPolicy of the same name share an
            // entry, the later one wins [quirk].
            failures.retain(|(p, _)| *p != e.policy.name);
            failures.push((e.policy.name.clone(), rules));
        }
    }
    let r = cx.resource();
    let get = |k: &str| {
        r.get("metadata").and_then(|m| m.get(k)).and_then(Json::as_str).unwrap_or_default()
    };
    let kind = r.get("kind").and_then(Json::as_str).unwrap_or_default();
    format!(
        "\n\nresource {kind}/{}/{} was blocked due to the following policies \n\n{}",
        get("namespace"),
        get("name"),
        super::yaml_go::encode(&failures)
    )
}

/// `GetWarningMessages`: every fail, error and warn rule of the responses.
fn warning_messages(responses: &[Evaluated<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    for e in responses {
        for r in &e.response.rules {
            if matches!(r.status, Some(RuleStatus::Fail | RuleStatus::Error | RuleStatus::Warn)) {
                out.push(format!("policy {}.{}: {}", e.policy.name, r.name, r.message));
            }
        }
    }
    out
}

/// One webhook call (`HandleValidationEnforce`) over the policies of its failure policy.
pub fn call(cx: &Context<'_>, ignore: bool, ns: Option<&Namespace<'_>>) -> WebhookResponse {
    let mut enforce: Vec<Evaluated<'_>> = Vec::new();
    let mut audit_warn: Vec<Evaluated<'_>> = Vec::new();
    let request_ns = ns.map(|n| n.name).unwrap_or_default();
    for (index, p) in cx.kyverno.loaded.policies.iter().enumerate() {
        if p.spec.failure_policy_ignore != ignore
            || !p.spec.admission
            || p.rejected.is_some()
            || !p.spec.match_conditions.is_empty()
        {
            // A policy with matchConditions is not in the policy cache: its own webhook
            // evaluates it ([`policy_webhooks`]).
            continue;
        }
        if !p.namespace.is_empty() && p.namespace != request_ns {
            continue;
        }
        // `ComputeRules` without a kind: the written rules.
        let enforce_policy = is_enforce_policy(&p.spec, &p.spec.rules);
        let (enforce_rules, warn_rules) = if enforce_policy {
            let e = rules_with_action(&p.spec, true, ns);
            let w = if p.spec.emit_warning {
                rules_with_action(&p.spec, false, ns)
            } else {
                Vec::new()
            };
            (e, w)
        } else {
            // The cache hands over an Audit policy whole.
            let w =
                if p.spec.emit_warning { (0..p.spec.rules.len()).collect() } else { Vec::new() };
            (Vec::new(), w)
        };
        for (rules, list) in [(enforce_rules, &mut enforce), (warn_rules, &mut audit_warn)] {
            if rules.is_empty() {
                continue;
            }
            if let Some(response) = validate_policy(cx, index, &rules) {
                list.push(Evaluated { policy: p, response });
            }
        }
    }
    respond(cx, ignore, enforce, audit_warn)
}

/// `HandleValidationEnforce` over the Enforce-path and audit-warn responses.
fn respond(
    cx: &Context<'_>,
    ignore: bool,
    enforce: Vec<Evaluated<'_>>,
    audit_warn: Vec<Evaluated<'_>>,
) -> WebhookResponse {
    let evaluated = enforce.iter().map(|e| e.policy.display()).collect();
    let incomplete = enforce
        .iter()
        .chain(&audit_warn)
        .any(|e| e.response.rules.iter().any(|r| r.unsupported.is_some()));
    let blocked = enforce.iter().any(|e| {
        has_enforced_failure(cx, e)
            || (!ignore && e.response.rules.iter().any(|r| r.status == Some(RuleStatus::Error)))
    });
    if blocked {
        return WebhookResponse {
            denied: Some(blocked_message(cx, &enforce)),
            warnings: Vec::new(),
            evaluated,
            incomplete,
        };
    }
    let mut all = enforce;
    all.extend(audit_warn);
    WebhookResponse { denied: None, warnings: warning_messages(&all), evaluated, incomplete }
}

/// The webhook Kyverno registers for a policy with `webhookConfiguration.matchConditions`
/// (`pkg/controllers/webhook`: `newWebhookPerPolicy`, `webhookNameAndPath`), and what the
/// apiserver did with it for this request.
pub struct PolicyWebhook {
    /// The policy's index in the set.
    pub index: usize,
    /// `validate.kyverno.svc-<ignore|fail>-finegrained-<namespace>-<name>`.
    pub name: String,
    /// Every matchCondition evaluated, in order.
    pub conditions: Vec<ConditionResult>,
    /// Why it was not called; `None` when called.
    pub skipped: Option<String>,
    /// The apiserver's rejection: a matchCondition failed under failurePolicy Fail.
    pub rejected: Option<Status>,
    /// Kyverno's answer when called.
    pub response: Option<WebhookResponse>,
}

/// `mergeWebhook` / `collectResourceDescriptions`: whether the rules of the policy's webhook
/// (the kinds and operations of its validate, generate and image-verification rules, all four
/// operations by default, less the `exclude.any` filters that name only kinds and operations)
/// send it this request. Kinds resolve against the catalog (discovery), with the policy's scope
/// for `*` kinds.
fn webhook_rules_cover(cx: &Context<'_>, rules: &[Rc<PreparedRule>], namespaced: bool) -> bool {
    let r = cx.request;
    let main = cx.set.catalog.kind_for(&r.resource, "").unwrap_or_else(|| r.kind.clone());
    let covers = |k: &str| {
        let (g, v, kind, sub) = parse_kind_selector(k);
        let sub_ok = match sub {
            "" => r.sub_resource.is_empty(),
            "*" => true,
            s => s == r.sub_resource,
        };
        let (group, version) = (r.resource.group.as_str(), r.resource.version.as_str());
        if kind == "*" {
            let scope_ok = !namespaced || r.namespaced != Some(false);
            return (g == "*" || g == group) && (v == "*" || v == version) && sub_ok && scope_ok;
        }
        wildcard(g, &main.group)
            && wildcard(v, &main.version)
            && wildcard(kind, &main.kind)
            && sub_ok
    };
    // An operation list holds `op`: all four by default.
    let op = r.operation.as_str();
    let has_op = |o: &[String]| o.is_empty() || o.iter().any(|x| x == op);
    rules.iter().map(|p| &p.rule).any(|rule| {
        if rule.validate.is_none() && !rule.has_generate && !rule.has_verify_images {
            return false;
        }
        // Kind `k` with `op` is removed by an `exclude.any` filter of only kinds and operations.
        let excluded = |k: &String| {
            rule.exclude.iter().flat_map(|x| &x.any).any(|f| {
                let d = &f.resources;
                f.user.is_empty()
                    && d.name.is_empty()
                    && d.names.is_empty()
                    && d.namespaces.is_empty()
                    && d.annotations.as_ref().is_none_or(BTreeMap::is_empty)
                    && d.selector.is_none()
                    && d.namespace_selector.is_none()
                    && (d.kinds.is_empty() || d.kinds.contains(k))
                    && has_op(&d.operations)
            })
        };
        let m = &rule.match_resources;
        let mut filters = std::iter::once(&m.top).chain(&m.all).chain(&m.any);
        filters.any(|f| {
            let d = &f.resources;
            has_op(&d.operations) && d.kinds.iter().any(|k| covers(k) && !excluded(k))
        })
    })
}

/// The webhooks Kyverno registers for the policies with `webhookConfiguration.matchConditions`,
/// in its order (those with failurePolicy Ignore, then Fail): the apiserver sends the request
/// when the webhook's rules cover it and every matchCondition is true (an error follows the
/// policy's failurePolicy); Kyverno then evaluates the whole policy — all its rules, whatever
/// their failure action — and, with `emitWarning`, again for warnings (`handlers.go`
/// `retrieveAndCategorizePolicies` with URL parameters). Not registered: policies with
/// `admission: false`, rejected ones, those whose rule Kyverno turned into a
/// ValidatingAdmissionPolicy, and those without validate, generate or image-verification rules.
pub fn policy_webhooks(cx: &Context<'_>) -> Vec<PolicyWebhook> {
    let mut out = Vec::new();
    let mut env = None;
    for ignore in [true, false] {
        for (index, p) in cx.kyverno.loaded.policies.iter().enumerate() {
            let s = &p.spec;
            if s.match_conditions.is_empty()
                || s.failure_policy_ignore != ignore
                || !s.admission
                || p.rejected.is_some()
                || p.vap_generated
                || !s
                    .rules
                    .iter()
                    .any(|r| r.validate.is_some() || r.has_generate || r.has_verify_images)
            {
                continue;
            }
            let Some(prepared) = cx.kyverno.prepared.get(index) else { continue };
            let all: Vec<usize> = (0..s.rules.len()).collect();
            let rules = prepared.computed(p, &all, &cx.request.kind.kind, &cx.kyverno.compiler);
            let fp = if ignore { "ignore" } else { "fail" };
            let mut w = PolicyWebhook {
                index,
                name: format!(
                    "validate.kyverno.svc-{fp}-finegrained-{}",
                    p.key().replace('/', "-")
                ),
                conditions: Vec::new(),
                skipped: None,
                rejected: None,
                response: None,
            };
            if !webhook_rules_cover(cx, &rules, !p.namespace.is_empty()) {
                w.skipped = Some("no rule of the webhook matches the request: Kyverno registers it for the kinds and operations of the policy's rules".into());
                out.push(w);
                continue;
            }
            let env = env.get_or_insert_with(|| Env {
                version: cx.set.version,
                authorizer: cx.set.authorizer(cx.request),
                reviews: false,
            });
            let compiled = cx.kyverno.conditions.get(index).map(Vec::as_slice).unwrap_or_default();
            let r = cx.request;
            match match_conditions(
                &s.match_conditions,
                compiled,
                r,
                &r.kind,
                env,
                !ignore,
                &mut w.conditions,
            ) {
                Err((None, why)) => w.skipped = Some(why),
                Err((Some(status), why)) => {
                    w.skipped = Some(why);
                    w.rejected = Some(*status);
                }
                Ok(()) => {
                    let evaluated = |on: bool| {
                        let response = on.then(|| validate_policy(cx, index, &all))??;
                        Some(Evaluated { policy: p, response })
                    };
                    let has_validate = s.rules.iter().any(|r| r.validate.is_some());
                    let enforce = evaluated(has_validate).into_iter().collect();
                    let warn = evaluated(has_validate && s.emit_warning).into_iter().collect();
                    w.response = Some(respond(cx, ignore, enforce, warn));
                }
            }
            out.push(w);
        }
    }
    out
}

/// The rejection the apiserver returns for a webhook's denial (`webhookerrors.ToStatusErr`):
/// code 400 (Kyverno sets none), no reason.
pub fn denial_status(webhook: &str, message: &str) -> Status {
    Status {
        kind: "Status",
        api_version: "v1",
        metadata: BTreeMap::new(),
        status: "Failure",
        message: format!("admission webhook \"{webhook}\" denied the request: {message}"),
        reason: String::new(),
        details: StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            causes: Vec::new(),
        },
        code: 400,
    }
}
