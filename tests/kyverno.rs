//! Kyverno policies with CEL rules, through the public API. Every case names the section of
//! `docs/kyverno-semantics.md` it checks and, where there is one, the Kyverno test or code it
//! mirrors (kyverno/kyverno @ 111e07bb: `test/cli/…`, `test/conformance/chainsaw/…`,
//! `pkg/…_test.go`).

#![cfg(feature = "kyverno")]

use serde_json::{json, Value};
use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests};

fn run(manifests: &str, object: &str, request: Option<Value>) -> Value {
    run_full(manifests, Some(object), None, request)
}

fn run_full(
    manifests: &str,
    object: Option<&str>,
    old: Option<&str>,
    request: Option<Value>,
) -> Value {
    let input = EvaluateInput {
        manifests: Manifests::Text(manifests.to_string()),
        object: object.map(|o| Document::Text(o.to_string())),
        old_object: old.map(|o| Document::Text(o.to_string())),
        request: request.map(Document::Object),
        kubernetes_version: None,
        ..Default::default()
    };
    serde_json::to_value(evaluate(&input)).expect("serialise")
}

/// `(result, message)` of `policy`/`rule` in `kyverno.policies`.
fn rule(r: &Value, policy: &str, rule: &str) -> (String, String) {
    let p = r["kyverno"]["policies"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == policy))
        .unwrap_or_else(|| panic!("no policy {policy}: {r:#}"));
    let x = p["rules"]
        .as_array()
        .and_then(|rs| rs.iter().find(|x| x["name"] == rule))
        .unwrap_or_else(|| panic!("no rule {rule} in {p:#}"));
    (
        x["result"].as_str().unwrap_or("<none>").to_string(),
        x["message"].as_str().unwrap_or_default().to_string(),
    )
}

fn rule_names(r: &Value, policy: &str) -> Vec<String> {
    r["kyverno"]["policies"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == policy))
        .and_then(|p| p["rules"].as_array())
        .map(|rs| rs.iter().map(|x| x["name"].as_str().unwrap_or_default().to_string()).collect())
        .unwrap_or_default()
}

fn codes(r: &Value) -> Vec<String> {
    r["diagnostics"]
        .as_array()
        .map(|d| d.iter().map(|d| d["code"].as_str().unwrap_or_default().to_string()).collect())
        .unwrap_or_default()
}

// test/cli/test/cel-preconditions (disallow-host-path.yaml, resources.yaml, kyverno-test.yaml).
const HOST_PATH: &str = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: disallow-host-path
spec:
  background: false
  rules:
    - name: host-path
      match:
        any:
        - resources:
            kinds:
              - Pod
      celPreconditions:
        - expression: "object.metadata.labels['color'] == 'red'"
          name: "Label should be red"
      validate:
        failureAction: ACTION
        cel:
          expressions:
            - expression: "!has(object.spec.volumes) || object.spec.volumes.all(volume, !has(volume.hostPath))"
              message: "HostPath volumes are forbidden. The field spec.volumes[*].hostPath must be unset."
"#;

fn pod(name: &str, color: &str, host_path: bool) -> String {
    let volume = if host_path { "hostPath: {path: /var/log}" } else { "emptyDir: {}" };
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\n  labels: {{color: {color}}}\nspec:\n  containers: [{{name: c, image: nginx}}]\n  volumes:\n  - name: v\n    {volume}\n"
    )
}

// §2.3, §5.1: celPreconditions false → skip; the Audit rule's failure does not block and, without
// emitWarning, Kyverno returns no warning.
#[test]
fn cel_preconditions_skip_pass_and_fail_as_the_cli_test_expects() {
    let policy = HOST_PATH.replace("ACTION", "Audit");
    let bad = run(&policy, &pod("bad-pod", "red", true), None);
    assert_eq!(
        rule(&bad, "disallow-host-path", "host-path"),
        (
            "fail".into(),
            "HostPath volumes are forbidden. The field spec.volumes[*].hostPath must be unset."
                .into()
        )
    );
    assert_eq!(bad["response"]["allowed"], true);
    assert_eq!(bad["response"]["warnings"], json!([]));
    let good = run(&policy, &pod("good-pod", "red", false), None);
    assert_eq!(
        rule(&good, "disallow-host-path", "host-path"),
        ("pass".into(), "Validation rule 'host-path' passed.".into())
    );
    let skipped = run(&policy, &pod("skipped-pod", "blue", true), None);
    assert_eq!(
        rule(&skipped, "disallow-host-path", "host-path"),
        ("skip".into(), "cel preconditions not met".into())
    );
}

// §6: the denial message of pkg/webhooks/utils/block_test.go (TestGetBlockedMessages) behind the
// apiserver's webhook prefix, code 400.
#[test]
fn an_enforce_failure_is_denied_with_kyvernos_message() {
    let policy = HOST_PATH.replace("ACTION", "Enforce");
    let r = run(&policy, &pod("bad-pod", "red", true), None);
    assert_eq!(r["response"]["allowed"], false);
    assert_eq!(r["response"]["status"]["code"], 400);
    assert_eq!(
        r["response"]["status"]["message"],
        "admission webhook \"validate.kyverno.svc-fail\" denied the request: \n\nresource Pod/default/bad-pod was blocked due to the following policies \n\ndisallow-host-path:\n  host-path: HostPath volumes are forbidden. The field spec.volumes[*].hostPath must be unset.\n"
    );
    assert_eq!(r["kyverno"]["webhooks"][1]["allowed"], false);
    assert_eq!(
        r["kyverno"]["webhooks"][1]["policies"],
        json!(["ClusterPolicy/disallow-host-path"])
    );
    // A rule failure without explanation quotes the message as YAML does (": ").
    let plain = policy.replace(
        "              message: \"HostPath volumes are forbidden. The field spec.volumes[*].hostPath must be unset.\"\n",
        "",
    );
    let r = run(&plain, &pod("bad-pod", "red", true), None);
    let msg = r["response"]["status"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.ends_with("disallow-host-path:\n  host-path: 'failed expression: !has(object.spec.volumes) || object.spec.volumes.all(volume, !has(volume.hostPath))'\n"),
        "{msg}"
    );
}

// test/cli/test/check-deployment-namespace-cel: namespaceObject is the request's namespace.
#[test]
fn namespace_object_is_the_requests_namespace() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: disallow-default-namespace
spec:
  rules:
  - name: validate-deployment-namespace
    match:
      any:
      - resources:
          kinds:
          - Deployment
    validate:
      failureAction: Audit
      cel:
        expressions:
          - expression: "namespaceObject.metadata.name != 'default'"
            message: "Using 'default' namespace is not allowed for deployments."
"#;
    let deployment = |ns: &str| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d, namespace: {ns}}}\nspec: {{template: {{spec: {{containers: []}}}}}}\n")
    };
    let bad = run(policy, &deployment("default"), None);
    assert_eq!(rule(&bad, "disallow-default-namespace", "validate-deployment-namespace").0, "fail");
    // Not supplied: assumed to exist (`missingNamespaces: assume`), as for the VAPs and the
    // webhooks of the same request, with the pipeline's one `namespace-assumed` diagnostic.
    let assumed = codes(&bad).iter().filter(|c| c.contains("namespace-assumed")).count();
    assert_eq!(assumed, 1, "{:#}", bad["diagnostics"]);
    let good = run(policy, &deployment("team-a"), None);
    assert_eq!(
        rule(&good, "disallow-default-namespace", "validate-deployment-namespace").0,
        "pass"
    );
    // The assumed namespace is the one a cluster has: with its kubernetes.io/metadata.name label.
    let labelled = policy.replace(
        "namespaceObject.metadata.name != 'default'",
        "namespaceObject.metadata.labels['kubernetes.io/metadata.name'] == 'team-a'",
    );
    let r = run(&labelled, &deployment("team-a"), None);
    assert_eq!(rule(&r, "disallow-default-namespace", "validate-deployment-namespace").0, "pass");
    // `missingNamespaces: strict`: the namespace does not exist; Kyverno's CEL handler fails to
    // get it (pkg/engine/handlers/validation/validate_cel.go, `GetNamespace`): a rule error.
    let input = EvaluateInput {
        manifests: Manifests::Text(policy.to_string()),
        object: Some(Document::Text(deployment("team-a"))),
        missing_namespaces: Some(vap_eval::api::MissingNamespaces::Strict),
        ..Default::default()
    };
    let strict = serde_json::to_value(evaluate(&input)).expect("serialise");
    assert_eq!(
        rule(&strict, "disallow-default-namespace", "validate-deployment-namespace"),
        (
            "error".to_string(),
            "Error getting the resource's namespace: namespaces \"team-a\" not found".to_string()
        )
    );
    assert!(!codes(&strict).iter().any(|c| c.contains("namespace-assumed")));
}

const REPLICAS: &str = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: replicas
spec:
  validationFailureAction: Audit
  SPEC
  rules:
  - name: max-replicas
    match:
      any:
      - resources:
          kinds: [Deployment]
    validate:
      RULE
      cel:
        expressions:
        - expression: "object.spec.replicas <= 3"
          message: "at most 3 replicas"
"#;

fn deployment(ns: &str, replicas: u32) -> String {
    format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: {ns}}}\nspec:\n  replicas: {replicas}\n  template: {{spec: {{containers: [{{name: c, image: nginx}}]}}}}\n")
}

fn replicas_policy(spec: &str, rule: &str) -> String {
    REPLICAS.replace("SPEC", spec).replace("RULE", rule)
}

const NAMESPACES: &str = "\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: prod-1, labels: {env: prod}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: dev, labels: {env: dev}}\n";

// §5.1 (pkg/policycache/cache.go checkValidationFailureActionOverrides,
// engineresponse.go matchOverride): validationFailureActionOverrides by namespace pattern and
// by namespaceSelector.
#[test]
fn failure_action_overrides_enforce_by_namespace() {
    let by_name = replicas_policy(
        "validationFailureActionOverrides: [{action: Enforce, namespaces: [\"prod-*\"]}]",
        "",
    ) + NAMESPACES;
    let prod = run(&by_name, &deployment("prod-1", 5), None);
    assert_eq!(prod["response"]["allowed"], false);
    assert_eq!(prod["kyverno"]["policies"][0]["rules"][0]["action"], "Enforce");
    let dev = run(&by_name, &deployment("dev", 5), None);
    assert_eq!(dev["response"]["allowed"], true);
    assert_eq!(dev["kyverno"]["policies"][0]["rules"][0]["action"], "Audit");
    assert_eq!(rule(&dev, "replicas", "max-replicas").0, "fail");
    let by_selector = replicas_policy(
        "validationFailureActionOverrides: [{action: Enforce, namespaceSelector: {matchLabels: {env: prod}}}]",
        "",
    ) + NAMESPACES;
    assert_eq!(run(&by_selector, &deployment("prod-1", 5), None)["response"]["allowed"], false);
    assert_eq!(run(&by_selector, &deployment("dev", 5), None)["response"]["allowed"], true);
    // A rule's failureActionOverrides replace the policy's.
    let rule_level = replicas_policy(
        "validationFailureActionOverrides: [{action: Enforce, namespaces: [dev]}]",
        "failureActionOverrides: [{action: Audit, namespaces: [dev]}]",
    ) + NAMESPACES;
    assert_eq!(run(&rule_level, &deployment("dev", 5), None)["response"]["allowed"], true);
}

// §5.2, §6 (webhookutils.GetWarningMessages, NewRuleResponse sets emitWarning for fail/error/
// warn): an Audit rule of an Enforce policy is evaluated at admission and its failure is a
// warning; an Audit policy warns only with spec.emitWarning.
#[test]
fn audit_failures_warn_only_where_kyverno_evaluates_them() {
    let mixed = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: mixed
spec:
  rules:
  - name: enforced
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      failureAction: Enforce
      cel: {expressions: [{expression: "object.spec.replicas <= 10"}]}
  - name: audited
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      failureAction: Audit
      cel: {expressions: [{expression: "object.spec.replicas <= 3", message: "prefer 3 replicas"}]}
"#;
    let r = run(mixed, &deployment("dev", 5), None);
    assert_eq!(r["response"]["allowed"], true);
    assert_eq!(
        r["response"]["warnings"],
        json!([]),
        "audit rules of an enforce policy warn only with emitWarning"
    );
    let warn = mixed.replace("spec:\n  rules:", "spec:\n  emitWarning: true\n  rules:");
    let r = run(&warn, &deployment("dev", 5), None);
    assert_eq!(r["response"]["warnings"], json!(["policy mixed.audited: prefer 3 replicas"]));
    let audit = replicas_policy("emitWarning: true", "");
    let r = run(&audit, &deployment("dev", 5), None);
    assert_eq!(r["response"]["allowed"], true);
    assert_eq!(
        r["response"]["warnings"],
        json!(["policy replicas.max-replicas: at most 3 replicas"])
    );
    let r = run(&replicas_policy("", ""), &deployment("dev", 5), None);
    assert_eq!(r["response"]["warnings"], json!([]));
}

// §5.1 (engine.go invokeRuleHandler, BlockRequest): a rule error blocks through the "fail"
// webhook, and is only a warning through the "ignore" one.
// test/conformance/.../cel/parameter-resources/namespaced/match-clusterscoped-resource.
#[test]
fn rule_errors_follow_the_policys_failure_policy() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: check-namespace-name-02
spec:
  FAILURE
  background: false
  rules:
    - name: namespace-name-02
      match:
        any:
        - resources:
            kinds:
              - Namespace
            operations:
              - CREATE
              - UPDATE
      validate:
        failureAction: Enforce
        cel:
          paramKind:
            apiVersion: rules.example.com/v1
            kind: NameConstraint
          paramRef:
            name: "name-constraint-test.example.com"
            parameterNotFoundAction: "Deny"
          expressions:
            - expression: "object.metadata.name == params.name"
              messageExpression:  "'Namespace name must be ' + params.name"
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: nameconstraints.rules.example.com}
spec:
  group: rules.example.com
  names: {kind: NameConstraint, plural: nameconstraints}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
"#;
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: testing}\n";
    let r = run(&policy.replace("FAILURE", ""), ns, None);
    let (result, message) = rule(&r, "check-namespace-name-02", "namespace-name-02");
    assert_eq!(result, "error");
    assert_eq!(
        message,
        "error in parameterized resource: can't use namespaced paramRef to match cluster-scoped resources"
    );
    assert_eq!(r["response"]["allowed"], false);
    let ignore = run(&policy.replace("FAILURE", "failurePolicy: Ignore"), ns, None);
    assert_eq!(ignore["response"]["allowed"], true);
    assert_eq!(
        ignore["response"]["warnings"],
        json!(["policy check-namespace-name-02.namespace-name-02: error in parameterized resource: can't use namespaced paramRef to match cluster-scoped resources"])
    );
}

// §2.4 (admissionpolicy.CollectParams): a ConfigMap param by name, in the request's namespace;
// a missing one is an error naming the resource.
#[test]
fn params_by_name_and_not_found() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: limits}
spec:
  validationFailureAction: Enforce
  rules:
  - name: max
    match: {any: [{resources: {kinds: [Deployment]}}]}
    validate:
      cel:
        paramKind: {apiVersion: v1, kind: ConfigMap}
        paramRef: {name: limits, parameterNotFoundAction: Deny}
        expressions:
        - expression: "object.spec.replicas <= int(params.data.max)"
          messageExpression: "'at most ' + params.data.max + ' replicas'"
"#;
    let with_param = format!(
        "{policy}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: limits, namespace: dev}}\ndata: {{max: \"4\"}}\n"
    );
    let r = run(&with_param, &deployment("dev", 5), None);
    assert_eq!(rule(&r, "limits", "max"), ("fail".into(), "at most 4 replicas".into()));
    assert_eq!(
        r["kyverno"]["policies"][0]["rules"][0]["evaluations"][0]["param"]["name"],
        "limits"
    );
    let r = run(&with_param, &deployment("dev", 4), None);
    assert_eq!(rule(&r, "limits", "max").0, "pass");
    // The param lives in another namespace than the request: not found.
    let r = run(&with_param, &deployment("prod", 1), None);
    assert_eq!(
        rule(&r, "limits", "max"),
        ("error".into(), "error in parameterized resource: configmaps \"limits\" not found".into())
    );
}

const MATCHING: &str = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: m}
spec:
  rules:
  - name: r
    MATCH
    validate:
      cel: {expressions: [{expression: "false", message: "matched"}]}
"#;

fn matched(matching: &str, object: &str, request: Option<Value>, extra: &str) -> bool {
    let policy = MATCHING.replace("MATCH", matching) + extra;
    let r = run(&policy, object, request);
    !rule_names(&r, "m").is_empty()
}

fn labelled_pod(name: &str, ns: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: {ns}\n  labels: {{app: web, tier: front}}\n  annotations: {{team.example.com/owner: alice}}\nspec: {{containers: []}}\n")
}

// §3 (pkg/engine/utils/match.go doesResourceMatchConditionBlock, pkg/utils/match): every
// resource description field, with wildcards.
#[test]
fn resource_descriptions_match_field_by_field() {
    let pod = labelled_pod("web-1", "prod-1");
    let m = |s: &str| matched(s, &pod, None, NAMESPACES);
    assert!(m("match: {any: [{resources: {kinds: [Pod]}}]}"));
    assert!(m("match: {any: [{resources: {kinds: [v1/Pod]}}]}"));
    assert!(!m("match: {any: [{resources: {kinds: [apps/v1/Pod]}}]}"));
    assert!(!m("match: {any: [{resources: {kinds: [Pod/status]}}]}"));
    assert!(m("match: {any: [{resources: {kinds: [Pod], names: [\"web-?\"]}}]}"));
    assert!(!m("match: {any: [{resources: {kinds: [Pod], names: [\"web-??\"]}}]}"));
    assert!(m("match: {any: [{resources: {kinds: [Pod], name: \"web*\"}}]}"));
    assert!(m("match: {any: [{resources: {kinds: [Pod], namespaces: [\"prod-*\"]}}]}"));
    assert!(!m("match: {any: [{resources: {kinds: [Pod], namespaces: [dev]}}]}"));
    assert!(m("match: {any: [{resources: {kinds: [Pod], annotations: {\"team.example.com/*\": \"ali*\"}}}]}"));
    assert!(!m("match: {any: [{resources: {kinds: [Pod], annotations: {owner: alice}}}]}"));
    assert!(m("match: {any: [{resources: {kinds: [Pod], selector: {matchLabels: {app: web}}}}]}"));
    // Kyverno's wildcard matchLabels (pkg/engine/wildcards ReplaceInSelector).
    assert!(m(
        "match: {any: [{resources: {kinds: [Pod], selector: {matchLabels: {\"ti*\": \"fr*\"}}}}]}"
    ));
    assert!(!m("match: {any: [{resources: {kinds: [Pod], selector: {matchLabels: {\"ti*\": \"back*\"}}}}]}"));
    assert!(m("match: {any: [{resources: {kinds: [Pod], namespaceSelector: {matchLabels: {env: prod}}}}]}"));
    assert!(m("match: {any: [{resources: {kinds: [Pod], namespaceSelector: {matchExpressions: [{key: env, operator: In, values: [prod]}]}}}]}"));
    assert!(!m(
        "match: {any: [{resources: {kinds: [Pod], namespaceSelector: {matchLabels: {env: dev}}}}]}"
    ));
    assert!(m("match: {any: [{resources: {kinds: [Pod], operations: [CREATE]}}]}"));
    assert!(!m("match: {any: [{resources: {kinds: [Pod], operations: [UPDATE]}}]}"));
    // any: one filter suffices; all: every filter; the deprecated top-level description.
    assert!(m("match: {any: [{resources: {kinds: [Service]}}, {resources: {kinds: [Pod]}}]}"));
    assert!(!m("match: {all: [{resources: {kinds: [Service]}}, {resources: {kinds: [Pod]}}]}"));
    assert!(m("match: {all: [{resources: {kinds: [Pod]}}, {resources: {namespaces: [prod-1]}}]}"));
    assert!(m("match: {resources: {kinds: [Pod]}}"));
    // An empty match selects nothing ("match cannot be empty").
    assert!(!m("match: {any: [{}]}"));
    // exclude: any excluding filter excludes; all only when every filter excludes.
    assert!(!m("match: {any: [{resources: {kinds: [Pod]}}]}\n    exclude: {any: [{resources: {namespaces: [\"prod-*\"]}}]}"));
    assert!(m("match: {any: [{resources: {kinds: [Pod]}}]}\n    exclude: {all: [{resources: {namespaces: [\"prod-*\"]}}, {resources: {names: [other]}}]}"));
    assert!(!m("match: {any: [{resources: {kinds: [Pod]}}]}\n    exclude: {all: [{resources: {namespaces: [\"prod-*\"]}}, {resources: {names: [\"web-*\"]}}]}"));
}

// §3.2, §3.3 (match.CheckSubjects, userinfo.GetRoleRef): subjects with wildcards; roles and
// clusterRoles resolved from the supplied bindings.
#[test]
fn user_info_subjects_roles_and_cluster_roles() {
    let pod = labelled_pod("web-1", "prod-1");
    let user = |name: &str, groups: &[&str]| {
        Some(json!({"userInfo": {"username": name, "groups": groups}}))
    };
    let rbac = r#"
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: b, namespace: prod-1}
subjects: [{kind: User, name: alice}, {kind: ServiceAccount, name: deployer}]
roleRef: {kind: Role, name: editor, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: c}
subjects: [{kind: Group, name: ops}]
roleRef: {kind: ClusterRole, name: cluster-admin, apiGroup: rbac.authorization.k8s.io}
"#;
    let m = |s: &str, u| matched(s, &pod, u, rbac);
    let subjects =
        "match: {any: [{resources: {kinds: [Pod]}, subjects: [{kind: User, name: \"al*\"}]}]}";
    assert!(m(subjects, user("alice", &[])));
    assert!(!m(subjects, user("bob", &[])));
    let sa = "match: {any: [{resources: {kinds: [Pod]}, subjects: [{kind: ServiceAccount, name: deployer, namespace: prod-1}]}]}";
    assert!(m(sa, user("system:serviceaccount:prod-1:deployer", &[])));
    let group =
        "match: {any: [{resources: {kinds: [Pod]}, subjects: [{kind: Group, name: \"op?\"}]}]}";
    assert!(m(group, user("bob", &["ops"])));
    let roles = "match: {any: [{resources: {kinds: [Pod]}, roles: [\"prod-1:editor\"]}]}";
    assert!(m(roles, user("alice", &[])));
    assert!(m(roles, user("system:serviceaccount:prod-1:deployer", &[])));
    assert!(!m(roles, user("bob", &[])));
    let cluster_roles =
        "match: {any: [{resources: {kinds: [Pod]}, clusterRoles: [cluster-admin]}]}";
    assert!(m(cluster_roles, user("bob", &["ops"])));
    assert!(!m(cluster_roles, user("alice", &[])));
    // exclude by subject
    let excluded = "match: {any: [{resources: {kinds: [Pod]}}]}\n    exclude: {any: [{subjects: [{kind: User, name: alice}]}]}";
    assert!(!m(excluded, user("alice", &[])));
    assert!(m(excluded, user("bob", &[])));
}

// §3 (MatchesResourceDescription): the reason Kyverno gives for a rule that does not match.
#[test]
fn not_matched_rules_carry_kyvernos_reason() {
    let policy =
        MATCHING.replace("MATCH", "match: {all: [{resources: {kinds: [Service], names: [x]}}]}");
    let r = run(&policy, &labelled_pod("web-1", "dev"), None);
    assert_eq!(
        r["kyverno"]["policies"][0]["notMatched"][0]["reason"],
        "rule r not matched:\n 1. kind does not match [Service]\n 2. none of the names match"
    );
}

const PODS_ONLY: &str = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: no-latest
  ANNOTATIONS
spec:
  validationFailureAction: Enforce
  rules:
  - name: no-latest-tag
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      cel:
        expressions:
        - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
          message: "the :latest tag is not allowed"
"#;

// §4 (pkg/autogen/v1, test/conformance/chainsaw/autogen): a Pod rule applies to controllers
// through autogen-<rule> (pod template) and autogen-cronjob-<rule> (job template).
#[test]
fn pod_rules_apply_to_controllers_through_generated_rules() {
    let policy = PODS_ONLY.replace("ANNOTATIONS", "annotations: {}");
    let d = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: dev}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: \"nginx:latest\"}]\n";
    let r = run(&policy, d, None);
    assert_eq!(rule_names(&r, "no-latest"), vec!["autogen-no-latest-tag"]);
    assert_eq!(rule(&r, "no-latest", "autogen-no-latest-tag").0, "fail");
    assert_eq!(r["kyverno"]["policies"][0]["rules"][0]["path"], "spec.rules[0]");
    assert_eq!(
        r["kyverno"]["policies"][0]["rules"][0]["evaluations"][0]["validations"][0]["expression"],
        "object.spec.template.spec.containers.all(c, !c.image.endsWith(':latest'))"
    );
    assert_eq!(r["response"]["allowed"], false);
    let cj = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: job, namespace: dev}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: c, image: \"nginx:1.27\"}]\n";
    let r = run(&policy, cj, None);
    assert_eq!(rule(&r, "no-latest", "autogen-cronjob-no-latest-tag").0, "pass");
    // The annotation restricts the controllers; "none" turns auto-generation off.
    let only_ds = PODS_ONLY.replace(
        "ANNOTATIONS",
        "annotations: {pod-policies.kyverno.io/autogen-controllers: DaemonSet}",
    );
    assert!(rule_names(&run(&only_ds, d, None), "no-latest").is_empty());
    let none = PODS_ONLY
        .replace("ANNOTATIONS", "annotations: {pod-policies.kyverno.io/autogen-controllers: none}");
    assert!(rule_names(&run(&none, d, None), "no-latest").is_empty());
    // A name selector disables auto-generation (CanAutoGen).
    let named = policy.replace("kinds: [Pod]", "kinds: [Pod], names: [\"web*\"]");
    assert!(rule_names(&run(&named, d, None), "no-latest").is_empty());
}

// §2, §4: a compiled set prepares each rule once and the rules generated for each controller
// kind on first use; a request evaluated through the set gets what a fresh evaluation gets, in
// any order of kinds (Pod, Deployment, CronJob, then a Deployment again) and for an Enforce
// policy evaluated both by the policies' own evaluation and by the webhooks.
#[test]
fn a_compiled_set_evaluates_as_a_fresh_evaluation_does() {
    use vap_eval::api::{compile, evaluate_with, PolicySetOptions, RequestDocuments};
    let policy = PODS_ONLY.replace("ANNOTATIONS", "annotations: {}");
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: dev}\nspec:\n  containers: [{name: c, image: \"nginx:latest\"}]\n";
    let deploy = |image: &str| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: dev}}\nspec:\n  template:\n    spec:\n      containers: [{{name: c, image: \"{image}\"}}]\n")
    };
    let cj = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: job, namespace: dev}\nspec:\n  schedule: '* * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: c, image: \"nginx:latest\"}]\n";
    let set = compile(&Manifests::Text(policy.clone()), &PolicySetOptions::default());
    let objects = [
        pod.to_string(),
        deploy("nginx:latest"),
        cj.to_string(),
        deploy("nginx:1.27"),
        pod.to_string(),
    ];
    for object in &objects {
        let docs = RequestDocuments {
            object: Some(Document::Text(object.clone())),
            old_object: None,
            request: None,
        };
        let cached = serde_json::to_value(evaluate_with(&set, &docs)).expect("serialise");
        let fresh = run(&policy, object, None);
        assert_eq!(cached["kyverno"], fresh["kyverno"], "{object}");
        assert_eq!(cached["response"], fresh["response"], "{object}");
    }
    let last = run(&policy, &deploy("nginx:1.27"), None);
    assert_eq!(rule(&last, "no-latest", "autogen-no-latest-tag").0, "pass");
}

// §2.5 (pkg/engine/utils/exceptions.go `MatchesException`, api/kyverno/v2
// `Exception.Contains`, handlers/validation/validate_cel.go): the test
// test/cli/test-exceptions/exceptions-1 with its pattern rule written in CEL — the exception names
// the rule and its generated rule, and selects Deployments named important-tool* in delta.
#[test]
fn policy_exceptions_skip_the_rules_they_name_for_the_resources_they_select() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: disallow-host-namespaces
spec:
  background: false
  rules:
    - name: host-namespaces
      match:
        any:
        - resources:
            kinds: [Pod]
      validate:
        failureAction: Enforce
        cel:
          expressions:
          - expression: "!(object.spec.?hostIPC.orValue(false) || object.spec.?hostPID.orValue(false) || object.spec.?hostNetwork.orValue(false))"
            message: Sharing the host namespaces is disallowed.
---
apiVersion: kyverno.io/v2
kind: PolicyException
metadata:
  name: delta-exception
  namespace: delta
spec:
  exceptions:
  - policyName: disallow-host-namespaces
    ruleNames:
    - host-namespaces
    - autogen-host-namespaces
  match:
    any:
    - resources:
        kinds: [Pod, Deployment]
        namespaces: [delta]
        names: ["important-tool*"]
"#;
    let deployment = |name: &str, ns: &str, host_ipc: bool| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  selector: {{matchLabels: {{app: b}}}}\n  template:\n    metadata: {{labels: {{app: b}}}}\n    spec:\n      hostIPC: {host_ipc}\n      containers: [{{name: b, image: \"busybox:1.35\"}}]\n")
    };
    let r = run(policy, &deployment("important-tool", "delta", true), None);
    assert_eq!(
        rule(&r, "disallow-host-namespaces", "autogen-host-namespaces"),
        (
            "skip".to_string(),
            "rule is skipped due to policy exceptionsdelta/delta-exception".to_string()
        )
    );
    // A skipped Enforce rule neither denies nor warns.
    assert_eq!(r["response"]["allowed"], true);
    assert!(codes(&r).contains(&"kyverno-exceptions-applied".to_string()));
    let r = run(policy, &deployment("bad-deployment", "delta", true), None);
    assert_eq!(rule(&r, "disallow-host-namespaces", "autogen-host-namespaces").0, "fail");
    assert_eq!(r["response"]["allowed"], false);
    let r = run(policy, &deployment("important-tool", "other", true), None);
    assert_eq!(rule(&r, "disallow-host-namespaces", "autogen-host-namespaces").0, "fail");
    let r = run(policy, &deployment("good-deployment", "delta", false), None);
    assert_eq!(rule(&r, "disallow-host-namespaces", "autogen-host-namespaces").0, "pass");
    // ruleNames are wildcards (`wildcard.Match`); an exception naming another rule does not apply.
    let wild = policy
        .replace("    - host-namespaces\n    - autogen-host-namespaces\n", "    - \"*host-*\"\n");
    let r = run(&wild, &deployment("important-tool", "delta", true), None);
    assert_eq!(rule(&r, "disallow-host-namespaces", "autogen-host-namespaces").0, "skip");
    let other = policy.replace("    - autogen-host-namespaces\n", "");
    let r = run(&other, &deployment("important-tool", "delta", true), None);
    assert_eq!(rule(&r, "disallow-host-namespaces", "autogen-host-namespaces").0, "fail");
    // Exceptions have no operations: `operations` in their match is not checked.
    let ops = policy.replace(
        "names: [\"important-tool*\"]",
        "names: [\"important-tool*\"]\n        operations: [DELETE]",
    );
    let r = run(&ops, &deployment("important-tool", "delta", true), None);
    assert_eq!(rule(&r, "disallow-host-namespaces", "autogen-host-namespaces").0, "skip");
    // JMESPath conditions are not evaluated: the rule is reported as not supported.
    let cond = policy.replace("spec:\n  exceptions:", "spec:\n  conditions: {any: [{key: \"{{ request.operation }}\", operator: Equals, value: CREATE}]}\n  exceptions:");
    let r = run(&cond, &deployment("important-tool", "delta", true), None);
    let x = &r["kyverno"]["policies"][0]["rules"][0];
    assert!(x.get("result").is_none(), "{x:#}");
    assert!(x["unsupported"]
        .as_str()
        .unwrap_or_default()
        .contains("PolicyException delta/delta-exception"));
}

// §2.5, §7 (pkg/admissionpolicy/kyvernopolicy_checker.go `checkExceptions`, builder.go: the
// exceptions' match filters become exclude rules): a PolicyException naming a generated
// policy's rule is folded into the generated ValidatingAdmissionPolicy, or prevents generation.
#[test]
fn policy_exceptions_join_the_generated_validating_admission_policy() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: check-replicas}
spec:
  validationFailureAction: Enforce
  rules:
  - name: max
    match:
      any:
      - resources: {kinds: [Deployment], operations: [CREATE]}
    validate:
      cel:
        generate: true
        expressions:
        - expression: "object.spec.replicas <= 3"
          message: "at most 3 replicas"
---
apiVersion: kyverno.io/v2
kind: PolicyException
metadata: {name: big-ok, namespace: kyverno}
spec:
  exceptions:
  - policyName: check-replicas
    ruleNames: [RULES]
  match:
    any:
    - resources: {kinds: [Deployment], names: [big]}
"#;
    let big = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: big, namespace: prod}\nspec: {replicas: 5}\n";
    let r = run(&policy.replace("RULES", "max"), big, None);
    let vap = &r["kyverno"]["policies"][0]["validatingAdmissionPolicy"];
    assert_eq!(vap["generated"], true, "{vap:#}");
    assert_eq!(
        vap["policy"]["spec"]["matchConstraints"]["excludeResourceRules"],
        json!([{"resourceNames": ["big"], "operations": ["CREATE", "UPDATE", "CONNECT", "DELETE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}])
    );
    // The generated policy excludes the object, and Kyverno's engine skips the rule.
    assert_eq!(r["response"]["allowed"], true, "{:#}", r["response"]);
    assert_eq!(rule(&r, "check-replicas", "max").0, "skip");
    let r = run(&policy.replace("RULES", "max, other"), big, None);
    assert_eq!(
        r["kyverno"]["policies"][0]["validatingAdmissionPolicy"]["message"],
        "skip generating ValidatingAdmissionPolicy: multiple ruleNames in PolicyException is not applicable."
    );
}

// §2.1 (engine.go: rules Kyverno evaluates without CEL): reported, never passed or skipped.
#[test]
fn non_cel_rules_are_reported_as_not_supported() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  validationFailureAction: Enforce
  rules:
  - name: pattern-rule
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      pattern: {metadata: {labels: {app: "?*"}}}
  - name: with-preconditions
    match: {any: [{resources: {kinds: [Pod]}}]}
    preconditions: {all: [{key: "{{ request.operation }}", operator: Equals, value: CREATE}]}
    validate:
      cel: {expressions: [{expression: "true"}]}
"#;
    let r = run(policy, &labelled_pod("web-1", "dev"), None);
    let rules = &r["kyverno"]["policies"][0]["rules"];
    assert_eq!(rules[0]["name"], "pattern-rule");
    assert!(rules[0].get("result").is_none());
    assert!(rules[0]["unsupported"].as_str().unwrap_or_default().starts_with("validate.pattern "));
    assert!(rules[1]["unsupported"].as_str().unwrap_or_default().starts_with("preconditions "));
    let c = codes(&r);
    assert_eq!(c.iter().filter(|c| *c == "kyverno-unsupported-rule").count(), 2);
    assert!(c.contains(&"kyverno-response-incomplete".to_string()));
    assert_eq!(r["response"]["allowed"], true);
}

// §1 (pkg/validation/policy/validate.go `validateRuleContext`): a validate.cel rule with
// `context` entries is rejected — the CEL expressions have no access to Kyverno's JSON context —
// so the policy never exists in a cluster and is not evaluated.
#[test]
fn a_cel_rule_with_context_is_rejected_as_kyverno_rejects_the_policy() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  validationFailureAction: Enforce
  rules:
  - name: plain
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      cel: {expressions: [{expression: "false"}]}
  - name: with-context
    match: {any: [{resources: {kinds: [Pod]}}]}
    context: [{name: cm, configMap: {name: c, namespace: default}}]
    validate:
      cel: {expressions: [{expression: "true"}]}
"#;
    let r = run(policy, &labelled_pod("web-1", "dev"), None);
    let p = &r["kyverno"]["policies"][0];
    assert_eq!(p["rules"], json!([]));
    let why = "path: spec.rules[1]: context variables are not supported for CEL expressions in validate rules";
    assert_eq!(p["reason"], format!("Kyverno rejects this policy ({why}): it is not evaluated"));
    // Not evaluated by the webhooks either: the failing `plain` rule does not deny.
    assert_eq!(r["response"]["allowed"], true);
    let d = r["diagnostics"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["code"] == "kyverno-policy-rejected"))
        .unwrap_or_else(|| panic!("{:#}", r["diagnostics"]));
    assert_eq!(d["message"], format!("Kyverno rejects this policy: {why}"));
    assert!(d["field"].as_str().unwrap_or_default().ends_with("spec.rules[1].context"));
}

// §2.1 (validation.go: applyRules One stops after the first rule that passed or failed).
#[test]
fn apply_rules_one_stops_after_the_first_applied_rule() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: one}
spec:
  applyRules: One
  rules:
  - name: skipped
    match: {any: [{resources: {kinds: [Pod]}}]}
    celPreconditions: [{name: never, expression: "false"}]
    validate: {cel: {expressions: [{expression: "false"}]}}
  - name: first
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {cel: {expressions: [{expression: "true"}]}}
  - name: second
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate: {cel: {expressions: [{expression: "false"}]}}
"#;
    let r = run(policy, &labelled_pod("web-1", "dev"), None);
    assert_eq!(rule_names(&r, "one"), vec!["skipped", "first"]);
    let all = policy.replace("applyRules: One", "applyRules: All");
    assert_eq!(rule_names(&run(&all, &labelled_pod("web-1", "dev"), None), "one").len(), 3);
}

// §5.3: a Policy applies only to resources of its namespace.
#[test]
fn a_namespaced_policy_applies_in_its_namespace_only() {
    let policy = MATCHING
        .replace("kind: ClusterPolicy", "kind: Policy")
        .replace("metadata: {name: m}", "metadata: {name: m, namespace: dev}")
        .replace("MATCH", "match: {any: [{resources: {kinds: [Pod]}}]}")
        .replace("spec:\n", "spec:\n  validationFailureAction: Enforce\n");
    let r = run(&policy, &labelled_pod("web-1", "dev"), None);
    assert_eq!(rule(&r, "m", "r"), ("fail".into(), "matched".into()));
    assert_eq!(r["response"]["allowed"], false);
    let r = run(&policy, &labelled_pod("web-1", "prod-1"), None);
    assert!(rule_names(&r, "m").is_empty());
    assert_eq!(r["response"]["allowed"], true);
}

// §2.3: on DELETE the old object is matched and is `oldObject`; `object` is null.
#[test]
fn delete_matches_the_old_object() {
    let policy = MATCHING.replace(
        "MATCH",
        "match: {any: [{resources: {kinds: [Pod], operations: [DELETE], names: [\"web-*\"]}}]}",
    );
    let policy = policy.replace(
        "expression: \"false\"",
        "expression: \"object == null && oldObject.metadata.name == 'web-1'\"",
    );
    let r = run_full(&policy, None, Some(&labelled_pod("web-1", "dev")), None);
    assert_eq!(rule(&r, "m", "r").0, "pass");
}

// §6: ValidatingAdmissionPolicy runs before the webhooks: its denial is the response.
#[test]
fn a_vap_denial_comes_before_kyvernos() {
    let vap = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: vap}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  validations: [{expression: "false", message: "vap says no"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: vap-binding}
spec: {policyName: vap, validationActions: [Deny]}
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
"#;
    let policy = HOST_PATH.replace("ACTION", "Enforce");
    let both = format!("{vap}{policy}");
    let r = run(&both, &pod("bad-pod", "red", true), None);
    let msg = r["response"]["status"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("vap says no"), "{msg}");
    assert_eq!(r["kyverno"]["webhooks"][1]["allowed"], false);
}

// §1: CEL compile errors point into the Kyverno policy.
#[test]
fn compile_errors_are_located_in_the_policy() {
    let policy = MATCHING
        .replace("MATCH", "match: {any: [{resources: {kinds: [Pod]}}]}")
        .replace("expression: \"false\"", "expression: \"1 + 'x' == 2\"");
    let r = run(&policy, &labelled_pod("web-1", "dev"), None);
    let d = r["diagnostics"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["code"] == "cel-compile"))
        .cloned()
        .unwrap_or_else(|| panic!("{:#}", r["diagnostics"]));
    assert_eq!(d["field"], "ClusterPolicy/m: spec.rules[0].validate.cel.expressions[0].expression");
    assert!(
        d["message"].as_str().unwrap_or_default().contains("found no matching overload"),
        "{d}"
    );
    // The span covers the failing call inside the expression's text in the manifest.
    let start = d["span"]["start"].as_u64().expect("span") as usize;
    let end = d["span"]["end"].as_u64().expect("span") as usize;
    assert_eq!(&policy[start..end], "1 + 'x'", "{d:#}");
    // Evaluated, the rule fails with the compile error (failurePolicy Fail).
    let (result, message) = rule(&r, "m", "r");
    assert_eq!(result, "fail");
    assert!(message.starts_with("compilation error: "), "{message}");
}

// §7 (pkg/admissionpolicy/builder.go, kyvernopolicy_checker.go; builder_test.go's shapes):
// a ClusterPolicy with one CEL rule and `generate: true` becomes cpol-<name> and its binding;
// the apiserver evaluates them and Kyverno's engine skips the rule.
#[test]
fn generated_validating_admission_policy_replaces_the_rule() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: check-replicas}
spec:
  validationFailureAction: Enforce
  rules:
  - name: max
    match:
      any:
      - resources:
          kinds: [Deployment, Pod]
          namespaces: [prod]
          operations: [CREATE]
    validate:
      cel:
        generate: GENERATE
        expressions:
        - expression: "!has(object.spec.replicas) || object.spec.replicas <= 3"
          message: "at most 3 replicas"
---
apiVersion: v1
kind: Namespace
metadata: {name: prod, labels: {kubernetes.io/metadata.name: prod}}
"#;
    let r = run(&policy.replace("GENERATE", "true"), &deployment("prod", 5), None);
    let vap = &r["kyverno"]["policies"][0]["validatingAdmissionPolicy"];
    assert_eq!(vap["generated"], true);
    assert_eq!(vap["policy"]["metadata"]["name"], "cpol-check-replicas");
    assert_eq!(
        vap["policy"]["spec"]["matchConstraints"]["resourceRules"],
        json!([
            {"resourceNames": [], "operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]},
            {"resourceNames": [], "operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods", "pods/ephemeralcontainers"]}
        ])
    );
    assert_eq!(
        vap["policy"]["spec"]["matchConstraints"]["namespaceSelector"],
        json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["prod"]}]})
    );
    assert_eq!(vap["binding"]["metadata"]["name"], "cpol-check-replicas-binding");
    assert_eq!(vap["binding"]["spec"]["validationActions"], json!(["Deny"]));
    // Kyverno's engine reports nothing for the rule; the generated VAP denies.
    assert!(rule_names(&r, "check-replicas").is_empty());
    assert_eq!(r["response"]["allowed"], false);
    let msg = r["response"]["status"]["message"].as_str().unwrap_or_default();
    assert!(msg.contains("ValidatingAdmissionPolicy 'cpol-check-replicas' with binding 'cpol-check-replicas-binding' denied request: at most 3 replicas"), "{msg}");
    // Without generate: Kyverno's own rule, Kyverno's message.
    let r = run(&policy.replace("GENERATE", "false"), &deployment("prod", 5), None);
    assert_eq!(
        r["kyverno"]["policies"][0]["validatingAdmissionPolicy"]["message"],
        "skip generating ValidatingAdmissionPolicy: validate.cel.generate is not set to true."
    );
    assert_eq!(rule(&r, "check-replicas", "max").0, "fail");
    let msg = r["response"]["status"]["message"].as_str().unwrap_or_default();
    assert!(msg.starts_with("admission webhook \"validate.kyverno.svc-fail\""), "{msg}");
    // Conditions: a wildcard namespace prevents generation.
    let wild =
        policy.replace("GENERATE", "true").replace("namespaces: [prod]", "namespaces: [\"prod*\"]");
    let r = run(&wild, &deployment("prod", 5), None);
    assert_eq!(
        r["kyverno"]["policies"][0]["validatingAdmissionPolicy"]["message"],
        "skip generating ValidatingAdmissionPolicy: wildcards in namespace name is not applicable."
    );
}

// The fuzz corpus's Kyverno policies (tests/node/fixtures/kyverno-corpus.yaml) evaluate, with
// every policy reported; the rule with a pattern is reported as not supported.
#[test]
fn the_fuzz_corpus_policies_evaluate() {
    let corpus = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/node/fixtures/kyverno-corpus.yaml"),
    )
    .expect("corpus");
    let d = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {replicas: 5, template: {spec: {containers: []}}}\n";
    let r = run(&corpus, d, None);
    let names: Vec<&str> = r["kyverno"]["policies"]
        .as_array()
        .map(|p| p.iter().filter_map(|p| p["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        names,
        [
            "corpus-cluster",
            "corpus-namespaced",
            "corpus-generate",
            "corpus-rejected",
            "corpus-webhook-conditions"
        ]
    );
    assert!(r["kyverno"]["policies"][3]["reason"]
        .as_str()
        .is_some_and(|why| why.starts_with("Kyverno rejects this policy")));
    assert!(codes(&r).contains(&"kyverno-exceptions-applied".to_string()));
    assert!(r["kyverno"]["policies"][0]["rules"].as_array().is_some_and(|rules| rules
        .iter()
        .any(|x| x["name"] == "pattern" && x["unsupported"].is_string())));
    assert_eq!(
        rule(&r, "corpus-namespaced", "replicas"),
        ("fail".into(), "failed expression: object.spec.replicas <= int(params.data.max)".into())
    );
    assert_eq!(r["kyverno"]["policies"][2]["validatingAdmissionPolicy"]["generated"], true);
}

// The library entry point for kyverno-test.yaml support: test/cli/test/cel-preconditions's
// three resources and expected results, through kyverno::evaluate_resource.
#[test]
fn evaluate_resource_gives_the_cli_tests_results() {
    use vap_eval::admission::policy_set::PolicySet;
    use vap_eval::environment::KubeVersion;
    let set = PolicySet::new(&HOST_PATH.replace("ACTION", "Audit"), KubeVersion::default());
    for (name, color, host_path, want) in [
        ("bad-pod", "red", true, "fail"),
        ("good-pod", "red", false, "pass"),
        ("skipped-pod", "blue", true, "skip"),
    ] {
        let text = pod(name, color, host_path);
        let (docs, _) = vap_eval::admission::yaml::parse_stream(&text);
        let cli = vap_eval::kyverno::Cli::default();
        let (out, diags) =
            vap_eval::kyverno::evaluate_resource(&set, &docs[0].value, None, None, &cli);
        let out = out.unwrap_or_else(|| panic!("{diags:?}"));
        let rule = &out.result.policies[0].rules[0];
        assert_eq!((rule.name.as_str(), rule.result), ("host-path", Some(want)), "{name}");
    }
}

// §6: Kyverno's warnings reach the client through the apiserver's warning recorder: a warning
// with a line break is not a valid header value and is dropped (vap-semantics.md §2.4).
#[test]
fn kyverno_warnings_go_through_the_apiservers_recorder() {
    let policy = replicas_policy("emitWarning: true", "").replace(
        "message: \"at most 3 replicas\"",
        "message: \"at most 3 replicas\\nsee the runbook\"",
    );
    let r = run(&policy, &deployment("dev", 5), None);
    assert_eq!(
        r["kyverno"]["webhooks"][1]["warnings"],
        json!(["policy replicas.max-replicas: at most 3 replicas\nsee the runbook"])
    );
    assert_eq!(r["response"]["warnings"], json!([]));
}

// §1: versions, `admission: false`, a Policy without namespace, fields of the wrong type.
#[test]
fn loading_versions_admission_and_bad_fields() {
    let v2 = HOST_PATH.replace("ACTION", "Enforce").replace("kyverno.io/v1", "kyverno.io/v2beta1");
    let r = run(&v2, &pod("bad-pod", "red", true), None);
    assert_eq!(rule(&r, "disallow-host-path", "host-path").0, "fail");
    let v3 = HOST_PATH.replace("ACTION", "Enforce").replace("kyverno.io/v1", "kyverno.io/v3");
    let r = run(&v3, &pod("bad-pod", "red", true), None);
    assert!(codes(&r).contains(&"kyverno-unsupported-api-version".to_string()));
    assert_eq!(r["response"]["allowed"], true);
    let off = HOST_PATH
        .replace("ACTION", "Enforce")
        .replace("spec:\n  background: false", "spec:\n  admission: false");
    let r = run(&off, &pod("bad-pod", "red", true), None);
    assert_eq!(r["response"]["allowed"], true);
    assert!(rule_names(&r, "disallow-host-path").is_empty());
    assert_eq!(
        r["kyverno"]["policies"][0]["reason"],
        "spec.admission is false: Kyverno does not evaluate it at admission"
    );
    let no_ns = MATCHING
        .replace("kind: ClusterPolicy", "kind: Policy")
        .replace("MATCH", "match: {any: [{resources: {kinds: [Pod]}}]}");
    let r = run(&no_ns, &labelled_pod("web-1", "default"), None);
    assert!(codes(&r).contains(&"kyverno-policy-namespace-default".to_string()));
    assert_eq!(r["kyverno"]["policies"][0]["namespace"], "default");
    assert_eq!(rule(&r, "m", "r").0, "fail");
    let bad =
        MATCHING.replace("MATCH", "match: {any: [{resources: {kinds: [Pod], selector: [1]}}]}");
    let r = run(&bad, &labelled_pod("web-1", "default"), None);
    let d = r["diagnostics"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["code"] == "kyverno-invalid-field"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(d["field"], "ClusterPolicy/m: spec.rules[0].match.any[0].resources.selector");
    assert!(d["span"].is_object(), "{d}");
}

// §5.5: `spec.webhookConfiguration.matchConditions` (api/kyverno/v1/spec_types.go
// `CustomWebhookMatchConditions`). Kyverno registers a webhook of the policy's own carrying them
// (pkg/controllers/webhook/controller.go `buildForPoliciesValidation`, utils_webhook.go
// `newWebhookPerPolicy`, utils.go `webhookNameAndPath`), leaves the policy out of its policy
// cache (pkg/controllers/policycache/controller.go `reconcile`) and evaluates it whole when that
// webhook is called (pkg/webhooks/resource/handlers.go `retrieveAndCategorizePolicies`); the
// apiserver evaluates the conditions as any webhook's (k8s.io/apiserver
// plugin/webhook/matchconditions/matcher.go).
const WEBHOOK_CONDITIONS: &str = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-team
spec:
  webhookConfiguration:
    failurePolicy: FAILURE_POLICY
    matchConditions:
    - name: not-kube-system
      expression: "request.namespace != 'kube-system'"
    - name: web-tier
      expression: "object.metadata.labels['tier'] == 'web'"
  rules:
  - name: team
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      failureAction: Enforce
      cel:
        expressions:
        - expression: "has(object.metadata.labels.team)"
          message: "label team is required"
"#;

fn tier_pod(ns: &str, labels: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}, labels: {{{labels}}}}}\nspec: {{containers: [{{name: c, image: nginx}}]}}\n")
}

fn policy_webhook(r: &Value) -> Value {
    let hooks = r["kyverno"]["webhooks"].as_array().cloned().unwrap_or_default();
    let name = "validate.kyverno.svc-fail-finegrained-require-team";
    let ignore = "validate.kyverno.svc-ignore-finegrained-require-team";
    hooks.into_iter().find(|w| w["name"] == name || w["name"] == ignore).unwrap_or_default()
}

// §5.5: a false matchCondition — the policy's webhook is not called, the policy not applied.
#[test]
fn a_false_webhook_match_condition_keeps_the_request_from_the_policy() {
    let policy = WEBHOOK_CONDITIONS.replace("FAILURE_POLICY", "Fail");
    let r = run(&policy, &tier_pod("kube-system", "tier: web"), None);
    assert_eq!(r["response"]["allowed"], true, "{:#}", r["kyverno"]);
    let p = &r["kyverno"]["policies"][0];
    assert_eq!(
        p["reason"],
        "its webhook validate.kyverno.svc-fail-finegrained-require-team is not called: matchCondition \"not-kube-system\" evaluated to false"
    );
    assert_eq!(p["rules"], json!([]));
    let results: Vec<&Value> =
        p["matchConditions"].as_array().map(|m| m.iter().map(|c| &c["result"]).collect()).unwrap();
    assert_eq!(results, [&json!(false), &json!(true)]);
    let w = policy_webhook(&r);
    assert_eq!(
        w["reason"],
        p["reason"].as_str().unwrap().split(" is not called: ").nth(1).unwrap()
    );
    assert_eq!(w["matchConditions"], p["matchConditions"]);
    // Not in the policy cache: Kyverno's shared webhooks never evaluate it.
    assert_eq!(r["kyverno"]["webhooks"][1]["policies"], json!([]));
}

// §5.5: all true — the policy's webhook evaluates it and its denial carries its name.
#[test]
fn true_webhook_match_conditions_send_the_request_to_the_policy() {
    let policy = WEBHOOK_CONDITIONS.replace("FAILURE_POLICY", "Fail");
    let r = run(&policy, &tier_pod("default", "tier: web"), None);
    assert_eq!(rule(&r, "require-team", "team"), ("fail".into(), "label team is required".into()));
    assert_eq!(
        r["response"]["status"]["message"],
        "admission webhook \"validate.kyverno.svc-fail-finegrained-require-team\" denied the request: \n\nresource Pod/default/p was blocked due to the following policies \n\nrequire-team:\n  team: label team is required\n"
    );
    let w = policy_webhook(&r);
    assert_eq!(w["policies"], json!(["ClusterPolicy/require-team"]));
    assert!(w.get("reason").is_none(), "{w:#}");
    assert_eq!(r["kyverno"]["policies"][0]["reason"], "evaluated");
    let ok = run(&policy, &tier_pod("default", "tier: web, team: a"), None);
    assert_eq!(ok["response"]["allowed"], true);
    // Evaluated whole, with no split by failure action: an Audit rule's failure does not block
    // but is a warning even without emitWarning (`HandleValidationEnforce`, `GetWarningMessages`).
    let audit = policy.replace("failureAction: Enforce", "failureAction: Audit");
    let r = run(&audit, &tier_pod("default", "tier: web"), None);
    assert_eq!(r["response"]["allowed"], true);
    assert_eq!(
        r["response"]["warnings"],
        json!(["policy require-team.team: label team is required"])
    );
    // A kind none of its rules names: the webhook's rules do not send it the request, so even
    // a failing matchCondition is never evaluated.
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n";
    let r = run(&policy, cm, None);
    assert_eq!(r["response"]["allowed"], true);
    assert!(policy_webhook(&r)["reason"].as_str().unwrap().starts_with("no rule of the webhook"));
    assert!(policy_webhook(&r).get("matchConditions").is_none());
    // Nor an operation its rule excludes by kind and operation alone (`exclude.any`:
    // utils.go `collectResourceDescriptions`), though Kyverno's `match` would then say why.
    let excluded = policy.replace(
        "    match: {any: [{resources: {kinds: [Pod]}}]}\n",
        "    match: {any: [{resources: {kinds: [Pod]}}]}\n    exclude: {any: [{resources: {kinds: [Pod], operations: [CREATE]}}]}\n",
    );
    assert_ne!(excluded, policy);
    // A Policy's webhook is named `<namespace>-<name>` (`webhook.key("-")`).
    let namespaced = policy
        .replace("kind: ClusterPolicy", "kind: Policy")
        .replace("  name: require-team\n", "  name: require-team\n  namespace: default\n");
    let r = run(&namespaced, &tier_pod("default", "tier: web"), None);
    assert_eq!(
        r["kyverno"]["webhooks"][2]["name"],
        "validate.kyverno.svc-fail-finegrained-default-require-team"
    );
    assert_eq!(r["kyverno"]["webhooks"][2]["allowed"], false);
    let r = run(&excluded, &tier_pod("default", "app: a"), None);
    assert_eq!(r["response"]["allowed"], true, "{:#}", r["kyverno"]);
    assert!(policy_webhook(&r)["reason"].as_str().unwrap().starts_with("no rule of the webhook"));
}

// §5.5: an erroring matchCondition follows the webhook's failurePolicy — the policy's
// (`GetFailurePolicy`): Fail rejects the request (403, before any validating webhook is
// called), Ignore skips the webhook.
#[test]
fn an_erroring_webhook_match_condition_follows_the_failure_policy() {
    let pod = tier_pod("default", "app: a");
    let r = run(&WEBHOOK_CONDITIONS.replace("FAILURE_POLICY", "Fail"), &pod, None);
    assert_eq!(r["response"]["allowed"], false);
    assert_eq!(r["response"]["status"]["code"], 403);
    assert_eq!(
        r["response"]["status"]["message"],
        "pods \"p\" is forbidden: expression 'object.metadata.labels['tier'] == 'web'' resulted in error: no such key: tier"
    );
    let w = policy_webhook(&r);
    assert_eq!(
        w["matchConditions"][1]["error"],
        "expression 'object.metadata.labels['tier'] == 'web'' resulted in error: no such key: tier"
    );
    assert!(w["reason"].as_str().unwrap().contains("failurePolicy is Fail"), "{w:#}");
    let r = run(&WEBHOOK_CONDITIONS.replace("FAILURE_POLICY", "Ignore"), &pod, None);
    assert_eq!(r["response"]["allowed"], true, "{:#}", r["kyverno"]);
    let w = policy_webhook(&r);
    assert_eq!(w["name"], "validate.kyverno.svc-ignore-finegrained-require-team");
    assert!(w["reason"].as_str().unwrap().contains("failurePolicy is Ignore"), "{w:#}");
    assert_eq!(r["kyverno"]["policies"][0]["rules"], json!([]));
}

// §1, §5.5: Kyverno's policy validation compiles the matchConditions
// (pkg/validation/policy/validate.go `ValidateCustomWebhookMatchConditions`): one that does not
// compile rejects the policy, located, with the CEL error at its position. The environment
// declares no `authorizer` (`cel.OptionalVariableDeclarations{}`) [quirk].
#[test]
fn a_webhook_match_condition_that_does_not_compile_rejects_the_policy() {
    let policy = WEBHOOK_CONDITIONS
        .replace("FAILURE_POLICY", "Fail")
        .replace("request.namespace != 'kube-system'", "request.namespace != 1 + 'x'");
    let r = run(&policy, &tier_pod("default", "tier: web"), None);
    let find = |code: &str| {
        r["diagnostics"]
            .as_array()
            .and_then(|d| d.iter().find(|d| d["code"] == code))
            .cloned()
            .unwrap_or_else(|| panic!("{code}: {:#}", r["diagnostics"]))
    };
    let rejected = find("kyverno-policy-rejected");
    let field =
        "ClusterPolicy/require-team: spec.webhookConfiguration.matchConditions[0].expression";
    assert_eq!(rejected["field"], field);
    let message = rejected["message"].as_str().unwrap();
    assert!(
        message.starts_with("Kyverno rejects this policy: match conditions compilation errors: [compilation failed: ERROR: <input>:1:24: found no matching overload for '_+_'"),
        "{message}"
    );
    let d = find("cel-compile");
    assert_eq!(d["field"], field);
    let (start, end) = (d["span"]["start"].as_u64().unwrap(), d["span"]["end"].as_u64().unwrap());
    assert_eq!(&policy[start as usize..end as usize], "1 + 'x'", "{d:#}");
    assert!(r["kyverno"]["policies"][0]["reason"]
        .as_str()
        .is_some_and(|why| why.starts_with("Kyverno rejects this policy")));
    assert_eq!(r["response"]["allowed"], true);
    // `authorizer` is a webhook matchCondition variable, but not in Kyverno's check.
    let authz = WEBHOOK_CONDITIONS.replace("FAILURE_POLICY", "Fail").replace(
        "request.namespace != 'kube-system'",
        "authorizer.requestResource.check('create').allowed()",
    );
    let r = run(&authz, &tier_pod("default", "tier: web"), None);
    assert!(codes(&r).contains(&"kyverno-policy-rejected".to_string()), "{:#}", r["diagnostics"]);
    let message = r["kyverno"]["policies"][0]["reason"].as_str().unwrap_or_default();
    assert!(message.contains("undeclared reference to 'authorizer'"), "{message}");
}

// docs/kyverno-semantics.md §2.2: the CEL handler binds `request` (Kyverno's attributes: no
// subresource, no options) and `authorizer`. Natively they are made only when a rule of the
// set may read them (`KyvernoSet::reads`): a rule that reads neither, then rules that do, in
// one policy (also a messageExpression and a variable reading `request`).
#[test]
fn request_and_authorizer_are_bound_for_the_rules_that_read_them() {
    let policy = r#"
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: reads
spec:
  rules:
  - name: plain
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      failureAction: Audit
      cel:
        expressions:
        - expression: "object.metadata.name == 'p'"
  - name: request
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      failureAction: Audit
      cel:
        variables:
        - name: op
          expression: "request.operation"
        expressions:
        - expression: "variables.op == 'CREATE' && request.namespace == 'team-a' && request.name == 'p' && request.kind.kind == 'Pod' && request.options == null"
  - name: authorizer
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      failureAction: Audit
      cel:
        expressions:
        - expression: "authorizer.requestResource.check('create').allowed() || true"
  - name: message
    match: {any: [{resources: {kinds: [Pod]}}]}
    validate:
      failureAction: Audit
      cel:
        expressions:
        - expression: "false"
          messageExpression: "'operation ' + request.operation + ' in ' + request.namespace"
"#;
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team-a}\nspec: {containers: [{name: c, image: i}]}\n";
    let r = run(policy, pod, None);
    assert_eq!(rule(&r, "reads", "plain").0, "pass", "{:#}", r["kyverno"]);
    assert_eq!(rule(&r, "reads", "request").0, "pass", "{:#}", r["kyverno"]);
    assert_eq!(rule(&r, "reads", "authorizer").0, "pass", "{:#}", r["kyverno"]);
    assert_eq!(
        rule(&r, "reads", "message"),
        ("fail".to_string(), "operation CREATE in team-a".to_string())
    );
}
