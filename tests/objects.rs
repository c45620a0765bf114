//! The object normaliser (`vap_eval::objects`): the Go json-tag round trip, defaulting, CRD
//! structural defaults and pruning, and the generated data's agreement with its generator.

use serde_json::{json, Value};
use vap_eval::environment::KubeVersion;
use vap_eval::objects::{normalize, ChangeReason};

fn run(mut v: Value, minor: u32) -> (Value, vap_eval::objects::Normalized) {
    let n = normalize(&mut v, KubeVersion::new(minor), &[], "object");
    (v, n)
}

fn reasons(n: &vap_eval::objects::Normalized) -> Vec<(String, ChangeReason)> {
    n.changes.iter().map(|c| (c.path.clone(), c.reason)).collect()
}

#[test]
fn json_tags_decide_presence() {
    // kubernetes/api apps/v1 DeploymentSpec: `paused,omitempty`, `minReadySeconds,omitempty`
    // (zero values dropped); `selector` (pointer, no omitempty: null); `template`, `strategy`
    // (non-pointer structs: always there); schemas.md §5.
    let (v, n) = run(
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"replicas": 2, "paused": false, "minReadySeconds": 0}}),
        37,
    );
    assert!(n.modelled);
    let spec = &v["spec"];
    assert!(spec.get("paused").is_none() && spec.get("minReadySeconds").is_none());
    assert_eq!(spec["selector"], Value::Null);
    assert_eq!(
        spec["template"]["spec"]["containers"],
        Value::Null,
        "PodSpec.containers has no omitempty"
    );
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
    assert_eq!(v["status"], json!({}));
    let r = reasons(&n);
    assert!(r.contains(&("spec.paused".into(), ChangeReason::DroppedZeroValue)));
    assert!(r.contains(&("spec.selector".into(), ChangeReason::NullForNonOmitempty)));
    assert!(!r.contains(&("spec.replicas".into(), ChangeReason::Default)));
    // A non-pointer scalar without omitempty is its zero value: Container.name.
    let (v, _) = run(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"image": "nginx:1"}]}}),
        37,
    );
    assert_eq!(v["spec"]["containers"][0]["name"], "");
    assert_eq!(v["spec"]["containers"][0]["resources"], json!({}));
}

#[test]
fn decoding_converts_numbers_and_canonicalises() {
    // YAML 3.0 for an int32 field is 3; a float field given 1 is a double; times are UTC
    // seconds (metav1.Time MarshalJSON); quantities canonical.
    let (v, n) = run(
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "d", "creationTimestamp": "2024-01-02T03:04:05.678+02:00"},
               "spec": {"replicas": 3.0}}),
        33,
    );
    assert_eq!(v["spec"]["replicas"], json!(3));
    assert!(v["spec"]["replicas"].is_i64());
    assert_eq!(v["metadata"]["creationTimestamp"], "2024-01-02T01:04:05Z");
    assert!(reasons(&n).contains(&("spec.replicas".into(), ChangeReason::Canonical)));
    let (v, _) = run(
        json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
               "spec": {"hard": {"cpu": "1000m", "memory": 1073741824}}}),
        37,
    );
    // A number is a DecimalSI quantity: 2^30 has no shorter exact decimal form.
    assert_eq!(v["spec"]["hard"], json!({"cpu": "1", "memory": "1073741824"}));
}

#[test]
fn values_that_do_not_decode_are_reported_and_kept() {
    let (v, n) = run(
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"replicas": "three", "template": {"spec": {"containers": [{"name": "c",
               "resources": {"limits": {"cpu": "lots"}}}]}}}}),
        37,
    );
    assert_eq!(v["spec"]["replicas"], "three");
    let codes: Vec<&str> = n.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["object-wrong-type", "object-invalid-value"]);
    assert_eq!(n.diagnostics[0].field, "spec.replicas");
    assert_eq!(n.diagnostics[1].field, "spec.template.spec.containers[0].resources.limits[cpu]");
}

#[test]
fn creation_timestamp_by_version() {
    // apimachinery ObjectMeta.CreationTimestamp: omitempty (null when zero) up to 1.33,
    // omitempty,omitzero (absent) since 1.34; schemas.md §5.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let (v, _) = run(cm.clone(), 33);
    assert_eq!(v["metadata"].get("creationTimestamp"), Some(&Value::Null));
    let (v, _) = run(cm, 34);
    assert_eq!(v["metadata"].get("creationTimestamp"), None);
}

#[test]
fn unknown_kinds_and_malformed_objects_are_left_alone() {
    for bad in [
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"x": 1}}),
        json!({"kind": "Pod"}),
        json!([1, 2]),
        json!("text"),
    ] {
        let (v, n) = run(bad.clone(), 37);
        assert_eq!(v, bad);
        assert!(!n.modelled && n.changes.is_empty());
    }
    // Wrong shapes everywhere: diagnostics, no panic.
    for metadata in [json!([]), json!("m"), json!(null), json!({"labels": [1]})] {
        let (_, n) = run(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"containers": {"a": 1}, "volumes": [null, 3]}}),
            30,
        );
        assert!(n.modelled);
        assert!(!n.diagnostics.is_empty());
    }
}

#[test]
fn custom_resources_follow_their_structural_schema() {
    // apiextensions-apiserver structural pruning and defaulting; Kubernetes docs "Specifying
    // a structural schema", "Defaulting", "Defaulting and Nullable".
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"},
          "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {
              "spec": {"type": "object", "properties": {
                "size": {"type": "string", "default": "small"},
                "note": {"type": "string", "nullable": true},
                "gone": {"type": "string"},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "items": {"type": "array", "items": {"type": "object", "properties": {
                  "n": {"type": "integer", "default": 1}}}}}}}}}}]}});
    let mut v = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"note": null, "gone": null, "extra": 1, "free": {"any": {"thing": 1}},
                 "labels": {"a": "b"}, "items": [{}, {"n": 5, "x": 0}]}, "status": {"s": 1}});
    let n = normalize(&mut v, KubeVersion::new(37), &[crd], "object");
    assert!(n.modelled);
    assert_eq!(
        v,
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"note": null, "free": {"any": {"thing": 1}}, "labels": {"a": "b"},
                     "items": [{"n": 1}, {"n": 5}], "size": "small"}})
    );
    let r = reasons(&n);
    assert!(r.contains(&("spec.extra".into(), ChangeReason::Pruned)));
    assert!(r.contains(&("spec.gone".into(), ChangeReason::Pruned)));
    assert!(r.contains(&("status".into(), ChangeReason::Pruned)));
    assert!(r.contains(&("spec.items[0].n".into(), ChangeReason::Default)));
    assert_eq!(n.diagnostics.len(), 3, "{:?}", n.diagnostics);
}

/// The committed `data/objects/types.txt` is what `scripts/gen-objects.py` makes of the sources
/// `data/objects/sources.txt` names. Needs a kubernetes/api and a kubernetes/apimachinery clone (git dirs):
/// `VAP_K8S_API`, `VAP_K8S_APIMACHINERY` (default: the snapshots under /work/.mirror, where this
/// project's machine keeps them). Without them the test says so and checks only the header.
#[test]
fn generated_data_matches_its_generator() {
    let root = env!("CARGO_MANIFEST_DIR");
    let data =
        std::fs::read_to_string(format!("{root}/data/objects/sources.txt")).expect("sources.txt");
    let header: Vec<&str> = data.lines().take_while(|l| l.starts_with('#')).collect();
    for minor in 30..=37 {
        let line =
            header.iter().find(|l| l.starts_with(&format!("# 1.{minor}: "))).expect("version");
        let commits = line
            .split([' ', ','])
            .filter(|w| w.len() == 40 && w.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(commits.count(), 2, "{line}");
    }
    let var =
        |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.to_string());
    let api = var("VAP_K8S_API", "/work/.mirror/kubernetes+api/repo");
    let apim = var("VAP_K8S_APIMACHINERY", "/work/.mirror/kubernetes+apimachinery/repo");
    if !std::path::Path::new(&api).exists() || !std::path::Path::new(&apim).exists() {
        eprintln!("generated_data_matches_its_generator: sources not found ({api}, {apim}); only the header was checked");
        return;
    }
    let out = std::process::Command::new("python3")
        .args([
            &format!("{root}/scripts/gen-objects.py"),
            "--api",
            &api,
            "--apimachinery",
            &apim,
            "--check",
        ])
        .output()
        .expect("python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn default_at(n: &vap_eval::objects::Normalized, path: &str) -> Option<Value> {
    n.changes
        .iter()
        .find(|c| c.path == path && c.reason == ChangeReason::Default)
        .and_then(|c| c.after.clone())
}

#[test]
fn autoscaling_v1_hpa_defaults() {
    // kubernetes pkg/apis/autoscaling/v1/defaults.go SetDefaults_HorizontalPodAutoscaler
    // (minReplicas 1) and conversion.go Convert_v1_HorizontalPodAutoscaler_To_autoscaling_…
    // ("autoscaling/v1 formerly had an implicit default": no metrics is 80% CPU, which the
    // conversion back to v1 writes as targetCPUUtilizationPercentage).
    let hpa = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h", "namespace": "d"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 5}});
    let (v, n) = run(hpa.clone(), 30);
    assert_eq!(v["spec"]["minReplicas"], 1);
    assert_eq!(v["spec"]["targetCPUUtilizationPercentage"], 80);
    assert_eq!(default_at(&n, "spec.targetCPUUtilizationPercentage"), Some(json!(80)));
    // Given values stay.
    let mut given = hpa.clone();
    given["spec"]["minReplicas"] = json!(2);
    given["spec"]["targetCPUUtilizationPercentage"] = json!(50);
    let (v, _) = run(given, 37);
    assert_eq!(
        (v["spec"]["minReplicas"].clone(), v["spec"]["targetCPUUtilizationPercentage"].clone()),
        (json!(2), json!(50))
    );
    // Other metrics in the annotation: the CPU default does not apply.
    let mut other = hpa;
    other["metadata"]["annotations"] =
        json!({"autoscaling.alpha.kubernetes.io/metrics": "[{\"type\":\"Pods\"}]"});
    let (v, _) = run(other, 37);
    assert!(v["spec"].get("targetCPUUtilizationPercentage").is_none());
}

#[test]
fn validating_admission_policy_defaults() {
    // kubernetes pkg/apis/admissionregistration/v1 SetDefaults_ValidatingAdmissionPolicySpec
    // (failurePolicy Fail) and SetDefaults_MatchResources (matchPolicy Equivalent, empty
    // selectors), called for policies and bindings by zz_generated.defaults.go.
    let (v, n) = run(
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
               "metadata": {"name": "p"},
               "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                         "operations": ["CREATE"], "resources": ["pods"]}]},
                        "validations": [{"expression": "true"}]}}),
        30,
    );
    assert_eq!(v["spec"]["failurePolicy"], "Fail");
    let mc = &v["spec"]["matchConstraints"];
    assert_eq!(
        (mc["matchPolicy"].clone(), mc["namespaceSelector"].clone(), mc["objectSelector"].clone()),
        (json!("Equivalent"), json!({}), json!({}))
    );
    assert_eq!(mc["resourceRules"][0]["scope"], "*");
    assert_eq!(default_at(&n, "spec.failurePolicy"), Some(json!("Fail")));
    let (v, _) = run(
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": "b"},
               "spec": {"policyName": "p", "validationActions": ["Deny"], "matchResources": {"matchPolicy": "Exact"}}}),
        37,
    );
    let mr = &v["spec"]["matchResources"];
    assert_eq!(
        (mr["matchPolicy"].clone(), mr["namespaceSelector"].clone()),
        (json!("Exact"), json!({}))
    );
}

#[test]
fn csi_driver_selinux_mount_default() {
    // SetDefaults_CSIDriver's seLinuxMount false (SELinuxMountReadWriteOncePod, on since 1.28;
    // kubernetes pkg/apis/storage/fuzzer "match defaulting").
    let (v, _) = run(
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "c"}, "spec": {}}),
        30,
    );
    assert_eq!(v["spec"]["seLinuxMount"], false);
    assert_eq!(v["spec"]["attachRequired"], true);
}

#[test]
fn feature_gated_defaults_follow_the_version() {
    // pkg/features/kube_features.go: MaxUnavailableStatefulSet beta on since 1.35
    // (apps/v1 SetDefaults_StatefulSet: rollingUpdate.maxUnavailable 1).
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s", "namespace": "d"},
        "spec": {"serviceName": "s", "selector": {"matchLabels": {"a": "b"}},
                 "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}});
    for minor in 30..=37 {
        let (v, _) = run(sts.clone(), minor);
        let ru = &v["spec"]["updateStrategy"]["rollingUpdate"];
        assert_eq!(ru["partition"], 0, "1.{minor}");
        assert_eq!(ru.get("maxUnavailable").is_some(), minor >= 35, "1.{minor}: {ru}");
        assert_eq!(v["spec"]["persistentVolumeClaimRetentionPolicy"]["whenDeleted"], "Retain");
    }
    // ImageVolume beta on since 1.35 (core/v1 SetDefaults_Volume: an image volume's
    // pullPolicy by tag, as for containers); the field exists since 1.31.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
        "spec": {"containers": [{"name": "c", "image": "x:1"}],
                 "volumes": [{"name": "a", "image": {"reference": "quay.io/x/data:latest"}},
                             {"name": "b", "image": {"reference": "quay.io/x/data:v1", "pullPolicy": ""}}]}});
    for minor in 31..=37 {
        let (v, n) = run(pod.clone(), minor);
        let vols = &v["spec"]["volumes"];
        if minor >= 35 {
            assert_eq!(vols[0]["image"]["pullPolicy"], "Always", "1.{minor}");
            assert_eq!(vols[1]["image"]["pullPolicy"], "IfNotPresent", "1.{minor}");
            assert!(default_at(&n, "spec.volumes[0].image.pullPolicy").is_some());
        } else {
            assert!(vols[0]["image"].get("pullPolicy").is_none(), "1.{minor}: {vols}");
            assert!(vols[1]["image"].get("pullPolicy").is_none(), "1.{minor}: {vols}");
        }
    }
    // An explicit empty imagePullPolicy is defaulted too (SetDefaults_Container tests `== ""`).
    let (v, _) = run(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "nginx", "imagePullPolicy": ""}]}}),
        30,
    );
    assert_eq!(v["spec"]["containers"][0]["imagePullPolicy"], "Always");
}

/// A Pod with pod-level `resources` and these containers.
fn pod_with(resources: Value, containers: Value, init: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
           "spec": {"resources": resources, "containers": containers, "initContainers": init}})
}

#[test]
fn pod_level_resource_defaults_follow_the_version() {
    // kubernetes pkg/apis/core/v1/defaults.go SetDefaults_Pod → defaultPodRequests behind
    // PodLevelResources (alpha off 1.32–1.33, beta on since 1.34); since 1.37 the defaults are
    // the Pod strategy's (PodLevelResourcesFixDefaulting, kubernetes#140514), not defaulting's:
    // `registry::pod_level_defaults_in_the_strategy_from_1_37`.
    // KEP-2837 table row 5: pod limits, no requests anywhere → the pod's requests are its limits.
    let pod = pod_with(
        json!({"limits": {"cpu": "2m", "memory": "1Mi"}}),
        json!([{"name": "c", "image": "x:1"}]),
        json!([]),
    );
    for minor in 32..=37 {
        let (v, n) = run(pod.clone(), minor);
        let requests = &v["spec"]["resources"]["requests"];
        if (34..=36).contains(&minor) {
            assert_eq!(*requests, json!({"cpu": "2m", "memory": "1Mi"}), "1.{minor}");
            assert_eq!(default_at(&n, "spec.resources.requests[cpu]"), Some(json!("2m")));
        } else {
            assert!(requests.is_null(), "1.{minor}: {v}");
        }
        assert_eq!(v["spec"]["resources"]["limits"], json!({"cpu": "2m", "memory": "1Mi"}));
    }
    // No pod-level resources (absent, null or empty): nothing at the pod level.
    for resources in [None, Some(json!(null)), Some(json!({})), Some(json!({"requests": {}}))] {
        let mut p = pod_with(
            json!({}),
            json!([{"name": "c", "image": "x:1", "resources": {"limits": {"cpu": "1"}}}]),
            json!([]),
        );
        match &resources {
            Some(r) => p["spec"]["resources"] = r.clone(),
            None => _ = p["spec"].as_object_mut().map(|s| s.remove("resources")),
        }
        let (v, _) = run(p, 35);
        assert!(
            v["spec"]["resources"].get("requests").is_none_or(|r| r == &json!({})),
            "{resources:?}: {v}"
        );
        assert!(v["spec"]["resources"].get("limits").is_none(), "{resources:?}: {v}");
        assert_eq!(v["spec"]["containers"][0]["resources"]["requests"]["cpu"], "1");
    }
}

#[test]
fn pod_level_requests_from_the_containers() {
    // defaults.go defaultPodRequests: with pod-level limits, a missing cpu or memory request is
    // the containers' aggregate (component-helpers AggregateContainerRequests, after the
    // containers' requests are defaulted from their limits), else the pod-level limit. KEP-2837
    // examples 2 and 6: containers' limits become their requests and then the pod's.
    let (v, n) = run(
        pod_with(
            json!({"limits": {"cpu": "5m", "memory": "7Mi"}, "requests": {}}),
            json!([{"name": "a", "image": "x:1", "resources": {"limits": {"cpu": "2m", "memory": "1Mi"}}},
                   {"name": "b", "image": "x:1", "resources": {"limits": {"cpu": "1m", "memory": "5Mi"}}}]),
            json!([]),
        ),
        34,
    );
    assert_eq!(v["spec"]["resources"]["requests"], json!({"cpu": "3m", "memory": "6Mi"}));
    assert_eq!(v["spec"]["resources"]["limits"], json!({"cpu": "5m", "memory": "7Mi"}));
    assert_eq!(default_at(&n, "spec.resources.requests[memory]"), Some(json!("6Mi")));
    // One container requests memory only: memory from the containers, cpu from the pod limit;
    // a given pod-level request stays; sums keep the first operand's format (Quantity.Add).
    let (v, _) = run(
        pod_with(
            json!({"limits": {"cpu": 1, "memory": "2Gi"}, "requests": {"ephemeral-storage": "1Gi"}}),
            json!([{"name": "a", "image": "x:1", "resources": {"requests": {"memory": "1Gi"}}},
                   {"name": "b", "image": "x:1", "resources": {"requests": {"memory": "512Mi"}}},
                   {"name": "c", "image": "x:1"}]),
            json!([]),
        ),
        36,
    );
    assert_eq!(
        v["spec"]["resources"]["requests"],
        json!({"cpu": "1", "memory": "1536Mi", "ephemeral-storage": "1Gi"})
    );
    // A `null` requests list is Go's nil map: made for the defaults.
    let (v, _) =
        run(pod_with(json!({"limits": {"cpu": "1"}, "requests": null}), json!([]), json!([])), 35);
    assert_eq!(v["spec"]["resources"]["requests"], json!({"cpu": "1"}));
    // Pod-level requests without pod-level limits: nothing (defaultPodRequests needs limits, and
    // no release before 1.37 defaults pod-level cpu or memory limits).
    let (v, _) = run(
        pod_with(
            json!({"requests": {"cpu": "1"}}),
            json!([{"name": "a", "image": "x:1", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]),
            json!([]),
        ),
        35,
    );
    assert_eq!(v["spec"]["resources"], json!({"requests": {"cpu": "1"}}));
}

#[test]
fn pod_level_requests_count_init_containers_and_sidecars() {
    // component-helpers aggregateContainerResourcesByFn (KEP-753 "resources calculation"): the
    // sum of the containers and sidecars (restartPolicy Always), raised to each init container's
    // own request plus the sidecars started before it. Here 1 + 500m = 1500m, then the init
    // container needs 2 + 500m = 2500m while it runs.
    let (v, _) = run(
        pod_with(
            json!({"limits": {"cpu": "4", "memory": "1Gi"}}),
            json!([{"name": "c", "image": "x:1", "resources": {"requests": {"cpu": "1"}}}]),
            json!([{"name": "s", "image": "x:1", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
                   {"name": "i", "image": "x:1", "resources": {"limits": {"cpu": "2", "memory": "100Mi"}}}]),
        ),
        35,
    );
    assert_eq!(v["spec"]["resources"]["requests"], json!({"cpu": "2500m", "memory": "100Mi"}));
    assert_eq!(v["spec"]["initContainers"][1]["resources"]["requests"]["cpu"], "2");
}

#[test]
fn pod_level_hugepage_limits_from_the_containers() {
    // defaults.go defaultHugePagePodLimits (runs first): with pod-level requests or limits
    // given, a hugepage size the pod level neither requests nor limits gets the containers'
    // aggregated limit; defaultPodRequests then copies it to the requests (hugepages do not
    // overcommit: never from the containers' requests).
    let containers = json!([{"name": "a", "image": "x:1",
        "resources": {"limits": {"cpu": "1", "hugepages-2Mi": "4Mi"}}},
        {"name": "b", "image": "x:1", "resources": {"limits": {"hugepages-2Mi": "2Mi"}}}]);
    let (v, n) =
        run(pod_with(json!({"requests": {"cpu": "2"}}), containers.clone(), json!([])), 34);
    assert_eq!(
        v["spec"]["resources"],
        json!({"requests": {"cpu": "2", "hugepages-2Mi": "6Mi"}, "limits": {"hugepages-2Mi": "6Mi"}})
    );
    assert_eq!(default_at(&n, "spec.resources.limits[hugepages-2Mi]"), Some(json!("6Mi")));
    // A pod-level hugepage request keeps the limit from being defaulted (and, with no pod-level
    // limits, no request is defaulted either).
    let (v, _) = run(
        pod_with(json!({"requests": {"hugepages-2Mi": "6Mi"}}), containers.clone(), json!([])),
        35,
    );
    assert_eq!(v["spec"]["resources"], json!({"requests": {"hugepages-2Mi": "6Mi"}}));
    // Gate off (1.33): nothing.
    let (v, _) = run(pod_with(json!({"requests": {"cpu": "2"}}), containers, json!([])), 33);
    assert_eq!(v["spec"]["resources"], json!({"requests": {"cpu": "2"}}));
}

#[test]
fn pod_level_defaults_are_for_pods_only() {
    // SetDefaults_Pod runs for Pods; pod templates get SetDefaults_PodSpec only (defaults.go:
    // "we only want this defaulting semantic to take place on a v1.Pod and not a
    // v1.PodTemplate").
    let (v, _) = run(
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "d"},
               "spec": {"selector": {"matchLabels": {"a": "b"}},
                        "template": {"metadata": {"labels": {"a": "b"}},
                                     "spec": {"resources": {"limits": {"cpu": "1"}},
                                              "containers": [{"name": "c", "image": "x:1",
                                                  "resources": {"limits": {"cpu": "1"}}}]}}}}),
        35,
    );
    let spec = &v["spec"]["template"]["spec"];
    assert_eq!(spec["resources"], json!({"limits": {"cpu": "1"}}));
    assert!(spec["containers"][0]["resources"].get("requests").is_none());
}

#[test]
fn resource_lists_round_up_to_milli_units() {
    // core/v1 defaults.go SetDefaults_ResourceList: `val.RoundUp(-3)` on every entry (TODO
    // kubernetes#18538), called by zz_generated.defaults.go for every ResourceList field it
    // reaches: containers' and the pod level's requests and limits, overhead, statuses, PVC
    // and PV capacities, LimitRange items, ResourceQuota hard/used, Node capacity. RoundUp
    // rounds away from zero; a value already in milli units or coarser keeps its text.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
        "spec": {"containers": [{"name": "c", "image": "x:1",
            "resources": {"limits": {"cpu": "0.0001", "memory": "1.5Ki", "example.com/n": "1e-7"},
                          "requests": {"cpu": "-1n"}}}],
            "overhead": {"cpu": "250u"}}});
    for minor in [30, 37] {
        let (v, n) = run(pod.clone(), minor);
        let c = &v["spec"]["containers"][0]["resources"];
        assert_eq!(c["limits"], json!({"cpu": "1m", "memory": "1536", "example.com/n": "1e-3"}));
        // The request copied from the limit by SetDefaults_Pod (which runs first) is rounded too.
        assert_eq!(c["requests"], json!({"cpu": "-1m", "memory": "1536", "example.com/n": "1e-3"}));
        assert_eq!(v["spec"]["overhead"], json!({"cpu": "1m"}));
        let change =
            n.changes.iter().find(|c| c.path == "spec.containers[0].resources.limits[cpu]");
        let change = change.map(|c| (c.before.clone(), c.after.clone(), c.reason));
        assert_eq!(change, Some((Some(json!("0.0001")), Some(json!("1m")), ChangeReason::Default)));
        // Already milli or coarser: only the decoder's canonical form.
        let memory =
            n.changes.iter().find(|c| c.path == "spec.containers[0].resources.limits[memory]");
        assert_eq!(memory.map(|c| c.reason), Some(ChangeReason::Canonical));
    }
    // 1.34–1.36: SetDefaults_Pod aggregates the containers' requests before their lists are
    // rounded (500u + 500u = 1m), then the containers' round to 1m each; the 1.37 Pod
    // strategy runs after defaulting and sums the rounded ones (2m).
    let two = |minor| {
        let p = pod_with(
            json!({"limits": {"cpu": "2"}}),
            json!([{"name": "a", "image": "x:1", "resources": {"requests": {"cpu": "500u"}}},
                   {"name": "b", "image": "x:1", "resources": {"requests": {"cpu": "500u"}}}]),
            json!([]),
        );
        let (mut v, _) = run(p, minor);
        use vap_eval::objects::registry::{before_validation, Request};
        let req = Request { create: true, namespace: "d", namespaced: Some(true) };
        if let Some((out, _)) = before_validation(&req, &v, None, KubeVersion::new(minor), &[]) {
            v = out;
        }
        assert_eq!(v["spec"]["containers"][1]["resources"]["requests"]["cpu"], "1m");
        v["spec"]["resources"]["requests"]["cpu"].clone()
    };
    assert_eq!(two(35), "1m");
    assert_eq!(two(37), "2m");
    // Other kinds' lists; node/v1 registers no defaults, so a RuntimeClass overhead is not.
    let (v, _) = run(
        json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l", "namespace": "d"},
               "spec": {"limits": [{"type": "Container", "max": {"cpu": "0.5m"}}]}}),
        33,
    );
    assert_eq!(v["spec"]["limits"][0]["max"]["cpu"], "1m");
    assert_eq!(v["spec"]["limits"][0]["default"]["cpu"], "1m");
    let (v, _) = run(
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "d"},
               "spec": {"resources": {"requests": {"storage": "1.0000001"}}}}),
        33,
    );
    assert_eq!(v["spec"]["resources"]["requests"]["storage"], "1001m");
    let (v, _) = run(
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "r"},
               "handler": "h", "overhead": {"podFixed": {"cpu": "0.0001"}}}),
        33,
    );
    assert_eq!(v["overhead"]["podFixed"]["cpu"], "100u");
}

#[test]
fn gate_table_matches_the_versioned_feature_specs() {
    use vap_eval::objects::defaults::gate_enabled;
    // kube_features.go: {1.31 alpha off, 1.33 beta off, 1.35 beta on} etc.
    let on = |g: &str, m: u32| gate_enabled(g, KubeVersion::new(m));
    assert!(!on("ImageVolume", 34) && on("ImageVolume", 35));
    assert!(!on("PodLevelResources", 33) && on("PodLevelResources", 34));
    assert!(!on("PodLevelResourcesFixDefaulting", 36) && on("PodLevelResourcesFixDefaulting", 37));
    assert!(!on("MaxUnavailableStatefulSet", 34) && on("MaxUnavailableStatefulSet", 35));
    assert!(on("JobPodReplacementPolicy", 30) && on("StatefulSetAutoDeletePVC", 30));
    assert!(!on("NoSuchGate", 37));
}

mod registry {
    //! `vap_eval::objects::registry`: what the generic registry does before validating
    //! admission (kubernetes staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go
    //! create/Update, rest/create.go BeforeCreate, rest/update.go BeforeUpdate, and the kinds'
    //! pkg/registry/<group>/<kind>/strategy.go PrepareForCreate/PrepareForUpdate).
    use super::*;
    use vap_eval::objects::registry::{
        before_validation, Request, PLACEHOLDER_TIME, PLACEHOLDER_UID,
    };

    fn create(v: Value, minor: u32) -> (Value, Vec<(String, ChangeReason)>) {
        let (v, _) = run(v, minor);
        let req = Request { create: true, namespace: "d", namespaced: Some(true) };
        let (out, changes) =
            before_validation(&req, &v, None, KubeVersion::new(minor), &[]).expect("modelled");
        (out, changes.into_iter().map(|c| (c.path, c.reason)).collect())
    }

    fn update(v: Value, old: Value, crds: &[Value]) -> Value {
        let req = Request { create: false, namespace: "d", namespaced: Some(true) };
        before_validation(&req, &v, Some(&old), KubeVersion::new(37), crds).expect("modelled").0
    }

    fn deployment(spec: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "d"},
               "spec": spec, "status": {"replicas": 7}})
    }

    #[test]
    fn create_fills_system_fields_and_resets_status() {
        // FillObjectMetaSystemFields (placeholders), deploymentStrategy.PrepareForCreate
        // (status {}, generation 1).
        let (v, changes) = create(deployment(json!({"replicas": 2})), 37);
        assert_eq!(v["metadata"]["uid"], PLACEHOLDER_UID);
        assert_eq!(v["metadata"]["creationTimestamp"], PLACEHOLDER_TIME);
        assert_eq!(v["metadata"]["generation"], 1);
        assert_eq!(v["status"], json!({}));
        for p in ["metadata.uid", "metadata.creationTimestamp", "metadata.generation", "status"] {
            assert!(changes.contains(&(p.to_string(), ChangeReason::Registry)), "{p}: {changes:?}");
        }
        // Values given stand for the server's clock and UUID.
        let mut given = deployment(json!({}));
        given["metadata"]["uid"] = json!("0b3c…");
        given["metadata"]["creationTimestamp"] = json!("2025-01-02T03:04:05Z");
        let (v, _) = create(given, 37);
        assert_eq!(
            (v["metadata"]["uid"].clone(), v["metadata"]["creationTimestamp"].clone()),
            (json!("0b3c…"), json!("2025-01-02T03:04:05Z"))
        );
    }

    #[test]
    fn generate_name_and_namespace() {
        // store.go create: the name from generateName (SimpleNameGenerator: prefix cut to 58
        // bytes + 5 characters); EnsureObjectNamespaceMatchesRequestNamespace: the request's
        // namespace on an object without one.
        let long = "a".repeat(70);
        let (v, _) = create(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": long}}),
            37,
        );
        let name = v["metadata"]["name"].as_str().unwrap_or_default().to_string();
        assert_eq!(name.len(), 63);
        assert!(name.ends_with("xxxxx"));
        assert_eq!(v["metadata"]["namespace"], "d");
        // Cluster-scoped: a namespace in the object is cleared.
        let req = Request { create: true, namespace: "", namespaced: Some(false) };
        let cr = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                        "metadata": {"name": "r", "namespace": "x"}, "rules": []});
        let (out, _) =
            before_validation(&req, &cr, None, KubeVersion::new(37), &[]).expect("modelled");
        assert!(out["metadata"].get("namespace").is_none());
    }

    #[test]
    fn pod_status_on_create() {
        // podStrategy.PrepareForCreate: phase Pending, QoS class (qos.ComputePodQOS),
        // SchedulingGated condition; generation 1 since 1.33.
        let pod = |res: Value, extra: Value| {
            let mut p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
                "spec": {"containers": [{"name": "c", "image": "x:1", "resources": res}]}, "status": {"phase": "Running"}});
            if let (Some(s), Some(e)) = (p["spec"].as_object_mut(), extra.as_object()) {
                s.extend(e.clone());
            }
            p
        };
        let qos = |res: Value| create(pod(res, json!({})), 37).0["status"]["qosClass"].clone();
        assert_eq!(qos(json!({})), "BestEffort");
        assert_eq!(qos(json!({"limits": {"cpu": "1", "memory": "1Gi"}})), "Guaranteed");
        assert_eq!(
            qos(json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}})),
            "Burstable"
        );
        assert_eq!(qos(json!({"requests": {"cpu": "0"}})), "BestEffort");
        assert_eq!(qos(json!({"limits": {"cpu": "1"}})), "Burstable");
        let (v, _) = create(pod(json!({}), json!({"schedulingGates": [{"name": "g"}]})), 37);
        assert_eq!(v["status"]["phase"], "Pending");
        assert_eq!(v["status"]["conditions"][0]["reason"], "SchedulingGated");
        assert_eq!(v["metadata"]["generation"], 1);
        let (v, _) = create(pod(json!({}), json!({})), 32);
        assert!(v["metadata"].get("generation").is_none());
    }

    #[test]
    fn pod_qos_from_pod_level_resources() {
        // qos.ComputePodQOS under PodLevelResources (beta on from 1.34): a Pod with
        // spec.resources is classed by the pod level; before PodLevelResourcesFixKubeletQOSClass
        // (beta on from 1.37, kubernetes#137150) even an empty spec.resources is, which made
        // kubernetes#135082's pod with Guaranteed containers BestEffort.
        let guaranteed = json!({"requests": {"cpu": "100m", "memory": "50Mi"},
                                "limits": {"cpu": "100m", "memory": "50Mi"}});
        let pod = |level: Value, res: Value| {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
                "spec": {"resources": level, "containers": [{"name": "c", "image": "x:1", "resources": res}]}})
        };
        let qos = |level: Value, res: Value, minor: u32| {
            create(pod(level, res), minor).0["status"]["qosClass"]
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        // kubernetes#135082: empty pod-level resources, Guaranteed containers.
        assert_eq!(qos(json!({}), guaranteed.clone(), 33), "Guaranteed");
        assert_eq!(qos(json!({}), guaranteed.clone(), 36), "BestEffort");
        assert_eq!(qos(json!({}), guaranteed.clone(), 37), "Guaranteed");
        // Pod-level requests and limits equal for cpu and memory: Guaranteed whatever the
        // containers give. Limits alone: 1.34–1.36 default the requests from them first
        // (SetDefaults_Pod), 1.37's Pod strategy does before it computes the class
        // (PodLevelResourcesFixDefaulting).
        let level = json!({"limits": {"cpu": "1", "memory": "1Gi"}});
        for minor in [34, 36, 37] {
            assert_eq!(qos(level.clone(), json!({}), minor), "Guaranteed", "1.{minor}");
        }
        let both = json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}});
        assert_eq!(qos(both, json!({}), 37), "Guaranteed");
        assert_eq!(qos(level.clone(), json!({}), 33), "BestEffort");
        // Requests without limits at the pod level: Burstable in 1.36. In 1.37 the strategy
        // defaults the memory request (50Mi, the containers') and, every container limiting
        // both, the limits to max(pod-level request, containers' limits) = cpu 1, memory 50Mi:
        // Guaranteed (the implication tallclair raised on kubernetes#136676). A limit on cpu
        // only: Burstable.
        assert_eq!(qos(json!({"requests": {"cpu": "1"}}), guaranteed.clone(), 36), "Burstable");
        assert_eq!(qos(json!({"requests": {"cpu": "1"}}), guaranteed.clone(), 37), "Guaranteed");
        assert_eq!(qos(json!({"limits": {"cpu": "1"}}), json!({}), 37), "Burstable");
        // From 1.37 a pod level with only unsupported resources leaves the containers to decide;
        // in 1.36 it decides: its cpu and memory requests defaulted from the containers', no
        // cpu or memory limit, so Burstable.
        let other = json!({"limits": {"example.com/x": "1"}});
        assert_eq!(qos(other.clone(), guaranteed.clone(), 37), "Guaranteed");
        assert_eq!(qos(other, guaranteed, 36), "Burstable");
    }

    /// A Pod's `spec.resources` after the registry step of a create at `minor`, and the
    /// paths the registry changed.
    fn pod_level_after(
        level: Value,
        containers: Value,
        init: Value,
        minor: u32,
    ) -> (Value, Vec<String>) {
        let (v, changes) = create(pod_with(level, containers, init), minor);
        let changed = changes.into_iter().filter(|(p, _)| p.starts_with("spec.resources"));
        (v["spec"]["resources"].clone(), changed.map(|(p, _)| p).collect())
    }

    #[test]
    fn pod_level_defaults_in_the_strategy_from_1_37() {
        // kubernetes#140514 (PodLevelResourcesFixDefaulting, beta on in 1.37): SetDefaults_Pod
        // no longer sets pod-level resources; podStrategy.PrepareForCreate does
        // (pkg/api/pod DefaultPodLevelResources), after mutating admission. Not both: 1.36
        // defaults (reason default) and the registry adds nothing; 1.37 the other way round.
        let level = json!({"limits": {"cpu": "2", "memory": "2Gi"}});
        let containers = json!([{"name": "app", "image": "x:1", "resources": {"limits": {"memory": "1Gi"}}},
                                {"name": "cache", "image": "x:1", "resources": {"requests": {"memory": "512Mi"}}}]);
        let want = json!({"requests": {"cpu": "2", "memory": "1536Mi"}, "limits": {"cpu": "2", "memory": "2Gi"}});
        let (r, changed) = pod_level_after(level.clone(), containers.clone(), json!([]), 36);
        assert_eq!((r, changed), (want.clone(), vec![]));
        let (r, changed) = pod_level_after(level.clone(), containers.clone(), json!([]), 37);
        assert_eq!(r, want);
        assert_eq!(changed, ["spec.resources.requests[memory]", "spec.resources.requests[cpu]"]);
        let (v, n) = run(pod_with(level, containers, json!([])), 37);
        assert!(v["spec"]["resources"].get("requests").is_none(), "{v}");
        assert!(default_at(&n, "spec.resources.requests[cpu]").is_none());
        // Templates are not strategy-processed (a Deployment's pod template keeps its own).
        let (v, _) = create(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "d"},
                   "spec": {"selector": {"matchLabels": {"a": "b"}},
                            "template": {"metadata": {"labels": {"a": "b"}},
                                         "spec": {"resources": {"limits": {"cpu": "1"}},
                                                  "containers": [{"name": "c", "image": "x:1"}]}}}}),
            37,
        );
        assert_eq!(v["spec"]["template"]["spec"]["resources"], json!({"limits": {"cpu": "1"}}));
    }

    #[test]
    fn pod_level_limits_from_the_containers_from_1_37() {
        // kubernetes#136120, fixed by kubernetes#140514: with pod-level requests only, a missing
        // cpu or memory request is the containers' aggregate (also without pod-level limits,
        // kubernetes#140850), and a resource every container limits gets the pod-level limit
        // max(pod-level request, the containers' aggregated limit) ("Default pod-level limits
        // to max(pod-level requests, aggregated container limits) for resources where all
        // containers have limits", the PR's DefaultPodLevelResources steps 1-3).
        let containers = json!([{"name": "a", "image": "x:1",
                                 "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}, "requests": {"cpu": "50m"}}},
                                {"name": "b", "image": "x:1",
                                 "resources": {"limits": {"cpu": "200m"}, "requests": {"cpu": "50m", "memory": "32Mi"}}}]);
        let (r, _) =
            pod_level_after(json!({"requests": {"cpu": "1"}}), containers.clone(), json!([]), 37);
        // cpu: max(1, 300m) = 1; memory: b has no limit, so none; its request is 64Mi + 32Mi.
        assert_eq!(r, json!({"requests": {"cpu": "1", "memory": "96Mi"}, "limits": {"cpu": "1"}}));
        let (r, changed) = pod_level_after(
            json!({"requests": {"cpu": "250m"}}),
            containers.clone(),
            json!([]),
            37,
        );
        assert_eq!(r["limits"], json!({"cpu": "300m"}));
        assert!(changed.contains(&"spec.resources.limits[cpu]".to_string()), "{changed:?}");
        // 1.36: nothing without pod-level limits.
        let (r, _) = pod_level_after(json!({"requests": {"cpu": "1"}}), containers, json!([]), 36);
        assert_eq!(r, json!({"requests": {"cpu": "1"}}));
        // A given pod-level limit stays; unsupported resources get no limit.
        let (r, _) = pod_level_after(
            json!({"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}),
            json!([{"name": "a", "image": "x:1", "resources": {"limits": {"cpu": "1", "example.com/x": "1"}}}]),
            json!([]),
            37,
        );
        assert_eq!(r, json!({"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}));
    }

    #[test]
    fn pod_level_hugepages_and_init_containers_from_1_37() {
        // DefaultPodLevelResources step 1 as defaultHugePagePodLimits (a hugepage size the pod
        // level neither requests nor limits: the containers' aggregated limit), step 2 its
        // request from that limit; the aggregates are component-helpers
        // AggregateContainerRequests/Limits: sidecars add up, an init container counts with the
        // sidecars started before it.
        let (r, _) = pod_level_after(
            json!({"requests": {"cpu": "2"}}),
            json!([{"name": "a", "image": "x:1", "resources": {"limits": {"cpu": "1", "hugepages-2Mi": "4Mi"}}},
                   {"name": "b", "image": "x:1", "resources": {"limits": {"cpu": "1", "hugepages-2Mi": "2Mi"}}}]),
            json!([]),
            37,
        );
        assert_eq!(
            r,
            json!({"requests": {"cpu": "2", "hugepages-2Mi": "6Mi"},
                   "limits": {"cpu": "2", "hugepages-2Mi": "6Mi"}})
        );
        // Sidecar 500m + container 1 = 1500m; the init container needs 2 + 500m = 2500m.
        let (r, _) = pod_level_after(
            json!({"requests": {"memory": "1Gi"}}),
            json!([{"name": "c", "image": "x:1", "resources": {"limits": {"cpu": "1", "memory": "100Mi"}}}]),
            json!([{"name": "s", "image": "x:1", "restartPolicy": "Always",
                    "resources": {"limits": {"cpu": "500m", "memory": "100Mi"}}},
                   {"name": "i", "image": "x:1", "resources": {"limits": {"cpu": "2", "memory": "50Mi"}}}]),
            37,
        );
        assert_eq!(
            r,
            json!({"requests": {"cpu": "2500m", "memory": "1Gi"}, "limits": {"cpu": "2500m", "memory": "1Gi"}})
        );
        // An init container without a cpu limit: no pod-level cpu limit.
        let (r, _) = pod_level_after(
            json!({"limits": {"memory": "1Gi"}}),
            json!([{"name": "c", "image": "x:1", "resources": {"limits": {"cpu": "1"}}}]),
            json!([{"name": "i", "image": "x:1"}]),
            37,
        );
        assert_eq!(
            r,
            json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "1Gi"}})
        );
    }

    #[test]
    fn pod_level_defaults_on_update_from_1_37() {
        // kubernetes#140514: podStrategy.PrepareForUpdate defaults when the update sets
        // pod-level resources the Pod did not have, and keeps a Pod's existing ones as they are.
        let containers = json!([{"name": "a", "image": "x:1", "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}}]);
        let old = pod_with(json!(null), containers.clone(), json!([]));
        let new = pod_with(json!({"requests": {"memory": "1Gi"}}), containers.clone(), json!([]));
        let v = update(new.clone(), old, &[]);
        assert_eq!(
            v["spec"]["resources"],
            json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1"}})
        );
        let old = pod_with(json!({"requests": {"memory": "1Gi"}}), containers.clone(), json!([]));
        let v = update(new.clone(), old, &[]);
        assert_eq!(v["spec"]["resources"], json!({"requests": {"memory": "1Gi"}}));
        // v1.37.0 also visits ephemeral containers, which have no limits: no limit is defaulted
        // (kubernetes#142212).
        let old = pod_with(json!(null), containers, json!([]));
        let mut new = new;
        new["spec"]["ephemeralContainers"] = json!([{"name": "debug", "image": "x:1"}]);
        let v = update(new, old, &[]);
        assert_eq!(v["spec"]["resources"], json!({"requests": {"cpu": "1", "memory": "1Gi"}}));
    }

    #[test]
    fn daemon_set_template_generation() {
        // apps/v1 conversion.go: spec.templateGeneration travels as the annotation
        // deprecated.daemonset.template.generation; daemonSetStrategy: 1 on create, + 1 on a
        // template change.
        let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d", "namespace": "d"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
                     "spec": {"containers": [{"name": "c", "image": "x:1"}]}}}});
        let (v, _) = create(ds.clone(), 37);
        assert_eq!(v["metadata"]["annotations"]["deprecated.daemonset.template.generation"], "1");
        let (old, _) = run(v, 37);
        let mut new = old.clone();
        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("x:2");
        let v = update(new, old.clone(), &[]);
        assert_eq!(v["metadata"]["annotations"]["deprecated.daemonset.template.generation"], "2");
        let v = update(old.clone(), old, &[]);
        assert_eq!(v["metadata"]["annotations"]["deprecated.daemonset.template.generation"], "1");
    }

    #[test]
    fn more_kinds_on_create() {
        // persistentvolumeclaimStrategy.PrepareForCreate resets the status the defaulting just
        // set (SetDefaults_PersistentVolumeClaim's phase Pending); the HPA's status reset is
        // written with its non-omitempty counters; PDB and Ingress get generation 1, the HPA
        // none.
        let (v, _) = create(
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "d"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
            37,
        );
        assert_eq!(v["status"], json!({}));
        let (v, _) = create(
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h", "namespace": "d"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "w"}, "maxReplicas": 3}, "status": {"desiredReplicas": 5}}),
            37,
        );
        assert_eq!(v["status"]["desiredReplicas"], 0);
        assert!(v["metadata"].get("generation").is_none());
        let (v, _) = create(
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p", "namespace": "d"},
            "spec": {"minAvailable": 1}}),
            37,
        );
        assert_eq!(v["metadata"]["generation"], 1);
        let (v, _) = create(
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "n", "namespace": "d"},
            "spec": {"podSelector": {}}}),
            37,
        );
        assert_eq!(v["metadata"]["generation"], 1);
    }

    #[test]
    fn namespace_on_create() {
        // namespaceStrategy.PrepareForCreate: status Active, the kubernetes finalizer added.
        let (v, _) = create(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}, "spec": {"finalizers": ["a"]}}),
            37,
        );
        assert_eq!(v["spec"]["finalizers"], json!(["a", "kubernetes"]));
        assert_eq!(v["status"]["phase"], "Active");
    }

    #[test]
    fn update_keeps_old_status_and_bumps_generation() {
        // BeforeUpdate: generation, uid and creationTimestamp from the old object;
        // deploymentStrategy.PrepareForUpdate: status kept, generation + 1 on a spec or an
        // annotation change.
        let mut old = deployment(json!({"replicas": 2}));
        old["metadata"]["generation"] = json!(4);
        old["metadata"]["uid"] = json!("u-1");
        old["metadata"]["creationTimestamp"] = json!("2025-01-02T03:04:05Z");
        let mut new = deployment(json!({"replicas": 3}));
        new["status"] = json!({"replicas": 99});
        let v = update(new.clone(), old.clone(), &[]);
        assert_eq!(v["metadata"]["generation"], 5);
        assert_eq!(v["status"], json!({"replicas": 7}));
        assert_eq!(v["metadata"]["uid"], "u-1");
        assert_eq!(v["metadata"]["creationTimestamp"], "2025-01-02T03:04:05Z");
        // Only a label changed: generation stays; an annotation: it bumps (Deployment only).
        let mut labels = old.clone();
        labels["metadata"]["labels"] = json!({"a": "b"});
        assert_eq!(update(labels, old.clone(), &[])["metadata"]["generation"], 4);
        let mut ann = old.clone();
        ann["metadata"]["annotations"] = json!({"a": "b"});
        assert_eq!(update(ann, old.clone(), &[])["metadata"]["generation"], 5);
    }

    #[test]
    fn custom_resources() {
        // customResourceStrategy.PrepareForCreate/PrepareForUpdate: generation 1; status
        // dropped on create and kept from the old object with the status subresource;
        // generation + 1 when anything but metadata and status changed.
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "spec": {"group": "ex.com", "names": {"kind": "W"}, "scope": "Namespaced",
                     "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}});
        let crds = [crd];
        let w = json!({"apiVersion": "ex.com/v1", "kind": "W", "metadata": {"name": "w", "namespace": "d"},
                       "spec": {"n": 1}, "status": {"ok": true}});
        let req = Request { create: true, namespace: "d", namespaced: Some(true) };
        let (v, _) = before_validation(&req, &w, None, KubeVersion::new(37), &crds).expect("crd");
        assert!(v.get("status").is_none());
        assert_eq!(v["metadata"]["generation"], 1);
        let mut old = w.clone();
        old["metadata"]["generation"] = json!(2);
        let mut new = w.clone();
        new["spec"]["n"] = json!(2);
        new["status"] = json!({"ok": false});
        let v = update(new, old.clone(), &crds);
        assert_eq!(
            (v["metadata"]["generation"].clone(), v["status"].clone()),
            (json!(3), json!({"ok": true}))
        );
        // Unknown kinds are left alone.
        let other = json!({"apiVersion": "ex.com/v1", "kind": "Other", "metadata": {"name": "o"}});
        assert!(before_validation(&req, &other, None, KubeVersion::new(37), &crds).is_none());
    }
}

#[test]
fn job_selector_is_generated_on_create() {
    // batch/v1 SetDefaults_Job: manualSelector false; jobStrategy.PrepareForCreate
    // generateSelector: template labels job-name/controller-uid (legacy and
    // batch.kubernetes.io/), selector on batch.kubernetes.io/controller-uid.
    use vap_eval::objects::registry::{before_validation, Request, PLACEHOLDER_UID};
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "d"},
        "spec": {"template": {"metadata": {"labels": {"app": "pi"}},
                 "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "perl:5"}]}}}});
    let (v, _) = run(job.clone(), 37);
    assert_eq!(v["spec"]["manualSelector"], false);
    let req = Request { create: true, namespace: "d", namespaced: Some(true) };
    let (v, changes) = before_validation(&req, &v, None, KubeVersion::new(37), &[]).expect("job");
    let labels = &v["spec"]["template"]["metadata"]["labels"];
    assert_eq!(labels["app"], "pi");
    assert_eq!(labels["job-name"], "pi");
    assert_eq!(labels["batch.kubernetes.io/job-name"], "pi");
    assert_eq!(labels["batch.kubernetes.io/controller-uid"], PLACEHOLDER_UID);
    assert_eq!(
        v["spec"]["selector"]["matchLabels"],
        json!({"batch.kubernetes.io/controller-uid": PLACEHOLDER_UID})
    );
    assert!(changes.iter().any(|c| c.path == "spec.template.metadata.labels[job-name]"));
    // manualSelector: true leaves selector and labels alone.
    let mut manual = job;
    manual["spec"]["manualSelector"] = json!(true);
    manual["spec"]["selector"] = json!({"matchLabels": {"app": "pi"}});
    let (m, _) = run(manual, 37);
    let (v, _) = before_validation(&req, &m, None, KubeVersion::new(37), &[]).expect("job");
    assert_eq!(v["spec"]["selector"]["matchLabels"], json!({"app": "pi"}));
    assert!(v["spec"]["template"]["metadata"]["labels"].get("job-name").is_none());
}

/// `normalize_unlisted` (the audit's, which records no changes) makes the same object, the
/// same diagnostics and the same `modelled` as `normalize`, on every example and case object,
/// on every version, and on objects with nulls, wrong types and unknown fields.
#[test]
fn unlisted_normalisation_is_the_same_object() {
    use vap_eval::objects::normalize_unlisted;
    let mut objects: Vec<Value> = vec![
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": null},
            "spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "x",
                "ports": [{"containerPort": 80}], "resources": {"limits": {"cpu": "1.5"}},
                "bogus": 1, "env": null}], "volumes": [{"name": "v"}], "priority": 3.0}}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": "3", "template": {"spec": {"containers": null}}}}),
        json!({"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80}],
            "sessionAffinity": "None", "sessionAffinityConfig": {}}}),
    ];
    let mut dirs = vec![std::path::PathBuf::from("www/examples")];
    for e in std::fs::read_dir("tests/cases").expect("tests/cases").flatten() {
        dirs.push(e.path());
    }
    for dir in dirs {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            let n = p.to_string_lossy().to_string();
            if !(n.ends_with("object.yaml")
                || n.ends_with(".passing.yaml")
                || n.ends_with(".failing.yaml"))
            {
                continue;
            }
            let text = std::fs::read_to_string(&p).expect("object");
            if let Ok(v) = vap_eval::audit::parse_document(&text) {
                objects.push(v);
            }
        }
    }
    assert!(objects.len() > 50, "{} objects", objects.len());
    for minor in 30..=37 {
        for o in &objects {
            let (mut a, mut b) = (o.clone(), o.clone());
            let na = normalize(&mut a, KubeVersion::new(minor), &[], "object");
            let nb = normalize_unlisted(&mut b, KubeVersion::new(minor), &[], "object");
            assert_eq!(a, b, "1.{minor}: {o}");
            assert_eq!(format!("{:?}", na.diagnostics), format!("{:?}", nb.diagnostics), "{o}");
            assert_eq!(na.modelled, nb.modelled);
            assert!(nb.changes.is_empty());
        }
    }
}

/// The error the apiserver's decoder returns for `object` (minor 37), or `None`.
fn decode_error(object: Value) -> Option<String> {
    run(object, 37).1.decode_error.map(|e| e.message)
}

fn deployment(spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": spec})
}

fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
}

/// sigs.k8s.io/json decode.go: `UnmarshalTypeError` with the errorContext of the field
/// (the innermost struct's name, the JSON field names from the root without list indices or map
/// keys) and the value's Go type (`reflect.Type.String()`); ints carry the literal
/// (`number 3.5`), other kinds do not.
#[test]
fn type_errors_read_as_the_go_decoder_writes_them() {
    let cases = [
        (
            deployment(json!({"replicas": "3"})),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            deployment(json!({"replicas": 3.5})),
            "json: cannot unmarshal number 3.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            deployment(json!({"replicas": 3_000_000_000_i64})),
            "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            deployment(json!({"replicas": 1e20})),
            "json: cannot unmarshal number 100000000000000000000 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            deployment(json!({"template": {"spec": {"containers": [
                {"name": "c", "env": [{"name": "A", "value": true}]}]}}})),
            "json: cannot unmarshal bool into Go struct field EnvVar.spec.template.spec.containers.env.value of type string",
        ),
        (
            deployment(json!({"template": {"metadata": {"labels": {"app": 1}}}})),
            "json: cannot unmarshal number into Go struct field ObjectMeta.spec.template.metadata.labels of type string",
        ),
        (
            deployment(json!({"template": "x"})),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.template of type v1.PodTemplateSpec",
        ),
        (
            pod(json!({"containers": {"name": "c"}})),
            "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container",
        ),
        (
            pod(json!({"nodeSelector": ["a"]})),
            "json: cannot unmarshal array into Go struct field PodSpec.spec.nodeSelector of type map[string]string",
        ),
        // int-or-string decodes a non-string into its int32 (encoding/json), and that error
        // gets the field's context.
        (
            pod(json!({"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": true}}}]})),
            "json: cannot unmarshal bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.httpGet.port of type int32",
        ),
        // metav1.Time decodes a string first.
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "creationTimestamp": 5}}),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string",
        ),
        // []byte is base64 (encoding/base64's CorruptInputError, no field context).
        (
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "not base64!"}}),
            "illegal base64 data at input byte 3",
        ),
    ];
    for (object, want) in cases {
        assert_eq!(decode_error(object.clone()).as_deref(), Some(want), "{object}");
    }
    // int64 fields take what int32 ones do not, a whole float as the integer kubectl sends.
    assert_eq!(decode_error(pod(json!({"activeDeadlineSeconds": 1e16}))), None);
    assert_eq!(
        decode_error(pod(json!({"terminationGracePeriodSeconds": 3_000_000_000_i64}))),
        None
    );
    assert_eq!(
        decode_error(pod(json!({"terminationGracePeriodSeconds": "30"}))).as_deref(),
        Some("json: cannot unmarshal string into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type int64")
    );
    // A whole float is the integer kubectl sends; null is Go's zero value; both decode.
    assert_eq!(decode_error(deployment(json!({"replicas": 3.0, "paused": null}))), None);
}

/// Values of the right JSON type that do not parse: the type's own `UnmarshalJSON` error,
/// without field context (apimachinery resource.Quantity, metav1.Time → Go time.Parse).
#[test]
fn unmarshaler_errors_read_as_upstream_writes_them() {
    let limits = |cpu: Value| {
        pod(json!({"containers": [{"name": "c", "resources": {"limits": {"cpu": cpu}}}]}))
    };
    let format = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    assert_eq!(decode_error(limits(json!("lots"))).as_deref(), Some(format));
    assert_eq!(decode_error(limits(json!(true))).as_deref(), Some(format));
    assert_eq!(
        decode_error(limits(json!("10Mm"))).as_deref(),
        Some("unable to parse quantity's suffix")
    );
    // UnmarshalJSON trims the text.
    assert_eq!(decode_error(limits(json!(" 1 "))), None);
    let created = |t: &str| {
        decode_error(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "creationTimestamp": t}}),
        )
    };
    let layout = "\"2006-01-02T15:04:05Z07:00\"";
    assert_eq!(created("2024-01-02T03:04:05Z"), None);
    assert_eq!(
        created("yesterday").unwrap(),
        format!("parsing time \"yesterday\" as {layout}: cannot parse \"yesterday\" as \"2006\"")
    );
    assert_eq!(
        created("2024-01-02 10:00:00").unwrap(),
        format!(
            "parsing time \"2024-01-02 10:00:00\" as {layout}: cannot parse \" 10:00:00\" as \"T\""
        )
    );
    assert_eq!(
        created("2024-01-02T10:00:00").unwrap(),
        format!(
            "parsing time \"2024-01-02T10:00:00\" as {layout}: cannot parse \"\" as \"Z07:00\""
        )
    );
    assert_eq!(
        created("2024-13-02T10:00:00Z").unwrap(),
        "parsing time \"2024-13-02T10:00:00Z\": month out of range"
    );
    assert_eq!(
        created("2023-02-29T10:00:00Z").unwrap(),
        "parsing time \"2023-02-29T10:00:00Z\": day out of range"
    );
    assert_eq!(
        created("2024-01-02T25:00:00Z").unwrap(),
        "parsing time \"2024-01-02T25:00:00Z\": hour out of range"
    );
    assert_eq!(
        created("2024-01-02T10:00:00Zjunk").unwrap(),
        "parsing time \"2024-01-02T10:00:00Zjunk\": extra text: \"junk\""
    );
    // What Go's parse accepts beyond strict RFC 3339: a one-digit hour, a fraction.
    assert_eq!(created("2024-01-02T3:04:05Z"), None);
    assert_eq!(created("2024-01-02T03:04:05.5Z"), None);
}

/// Only one error is returned: an `UnmarshalJSON` error stops the decoder at once; type errors
/// are saved and the first is returned. The order is the body's, which kubectl writes with its
/// keys sorted (Go's encoding/json sorts map keys).
#[test]
fn the_decoder_returns_one_error() {
    let first = |object| decode_error(object).unwrap();
    // Two type errors: `minReadySeconds` sorts before `replicas`.
    assert!(first(deployment(json!({"replicas": "3", "minReadySeconds": "1"})))
        .contains("spec.minReadySeconds"));
    // A type error before an invalid quantity: the quantity's error is returned.
    let both = pod(json!({"activeDeadlineSeconds": "1",
                          "containers": [{"name": "c", "resources": {"limits": {"cpu": "lots"}}}]}));
    assert!(first(both).starts_with("quantities must match"));
    // Two list items: the first by index.
    let two = pod(json!({"containers": [{"name": "a", "image": 1}, {"name": "b", "image": 2}]}));
    assert_eq!(run(two, 37).1.decode_error.unwrap().path[2], vap_eval::objects::Seg::Index(0));
}

/// Go's `time.Parse` errors for metav1.Time (`time.RFC3339`) and MicroTime
/// (`2006-01-02T15:04:05.000000Z07:00`), checked against Go's own output (go1.19 agrees with
/// the newer time/format.go `parse` on every case here).
#[test]
fn time_parse_errors_are_gos() {
    use vap_eval::objects::gojson::go_time_error;
    let layout = "\"2006-01-02T15:04:05Z07:00\"";
    let cannot =
        |v: &str, elem: &str, l: &str| format!("parsing time {v:?} as {l}: cannot parse {elem}");
    let cases = [
        ("2024-1-02T03:04:05Z", cannot("2024-1-02T03:04:05Z", "\"1-02T03:04:05Z\" as \"01\"", layout)),
        ("2024-01-02T03:60:05Z", "parsing time \"2024-01-02T03:60:05Z\": minute out of range".into()),
        ("2024-01-02T03:04:61Z", "parsing time \"2024-01-02T03:04:61Z\": second out of range".into()),
        ("2024-01-32T03:04:05Z", "parsing time \"2024-01-32T03:04:05Z\": day out of range".into()),
        ("2024-01-02T03:04:05+0100", cannot("2024-01-02T03:04:05+0100", "\"+0100\" as \"Z07:00\"", layout)),
        ("2024-01-02T03:04:05+01:00x", "parsing time \"2024-01-02T03:04:05+01:00x\": extra text: \"x\"".into()),
        ("é2024", format!("parsing time \"\\xc3\\xa92024\" as {layout}: cannot parse \"\\xc3\\xa92024\" as \"2006\"")),
    ];
    for (value, want) in cases {
        assert_eq!(go_time_error(value, false).as_deref(), Some(want.as_str()), "{value}");
    }
    // The offset's range checks and the `hold` element came after go1.19 (time/format.go today).
    let newer = [
        (
            "2024-01-02T03:04:05+25:00",
            "parsing time \"2024-01-02T03:04:05+25:00\": time zone offset hour out of range"
                .to_string(),
        ),
        (
            "2024-01-02T03:04:05+01:61",
            "parsing time \"2024-01-02T03:04:05+01:61\": time zone offset minute out of range"
                .into(),
        ),
        (
            "2024-01-02T03:04:05+2x:00",
            cannot("2024-01-02T03:04:05+2x:00", "\"+2x:00\" as \"Z07:00\"", layout),
        ),
        (
            "24-01-02T03:04:05Z",
            cannot("24-01-02T03:04:05Z", "\"24-01-02T03:04:05Z\" as \"2006\"", layout),
        ),
    ];
    for (value, want) in newer {
        assert_eq!(go_time_error(value, false).as_deref(), Some(want.as_str()), "{value}");
    }
    for ok in ["2024-01-02T03:04:05,5Z", "2024-01-02T03:04:05+24:00", "2024-02-29T00:00:00Z"] {
        assert_eq!(go_time_error(ok, false), None, "{ok}");
    }
    let micro = "\"2006-01-02T15:04:05.000000Z07:00\"";
    let cases = [
        ("2024-01-02T03:04:05Z", cannot("2024-01-02T03:04:05Z", "\"Z\" as \".000000\"", micro)),
        (
            "2024-01-02T03:04:05.123Z",
            cannot("2024-01-02T03:04:05.123Z", "\".123Z\" as \".000000\"", micro),
        ),
        (
            "2024-01-02T03:04:05.1234567Z",
            cannot("2024-01-02T03:04:05.1234567Z", "\"7Z\" as \"Z07:00\"", micro),
        ),
        (
            "2024-01-02T03:04:05.-12345Z",
            "parsing time \"2024-01-02T03:04:05.-12345Z\": fractional second out of range".into(),
        ),
    ];
    for (value, want) in cases {
        assert_eq!(go_time_error(value, true).as_deref(), Some(want.as_str()), "{value}");
    }
    assert_eq!(go_time_error("2024-01-02T03:04:05.000000Z", true), None);
}

/// Under the apiserver's default field validation (`fieldValidation=Warn`) the request body's
/// unknown fields are warnings of the response (k8s.io/apiserver `handlers/create.go`
/// `addStrictDecodingWarnings`; the text is sigs.k8s.io/json's `strictError`: `unknown field`
/// and the quoted path), in the order the decoder meets them (kubectl sends the keys sorted),
/// before the admission warnings. Only for the body of a CREATE or UPDATE that decodes.
#[test]
fn unknown_fields_of_the_body_are_response_warnings() {
    use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests};
    let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "zeta": 1, "spec": {"zz": true, "containers": [{"name": "a", "image": "x"},
        {"name": "b", "image": "y", "bogus": {"x": 1}}], "aa": 2}, "alpha": 3}"#;
    let run = |object: Option<&str>, old: Option<&str>, op: &str| {
        let input = EvaluateInput {
            manifests: Manifests::Text(FIELD_VALIDATION_MANIFESTS.into()),
            object: object.map(|o| Document::Text(o.into())),
            old_object: old.map(|o| Document::Text(o.into())),
            request: Some(Document::Text(format!("{{\"operation\": \"{op}\"}}"))),
            ..Default::default()
        };
        evaluate(&input).response.warnings
    };
    let policy = POLICY_WARNING;
    assert_eq!(
        run(Some(pod), None, "CREATE"),
        vec![
            r#"unknown field "alpha""#.to_string(),
            r#"unknown field "spec.aa""#.to_string(),
            r#"unknown field "spec.containers[1].bogus""#.to_string(),
            r#"unknown field "spec.zz""#.to_string(),
            r#"unknown field "zeta""#.to_string(),
            policy.to_string(),
        ]
    );
    let clean = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "a", "image": "x"}]}}"#;
    // The old object is stored: its unknown fields are not the request's.
    assert_eq!(run(Some(clean), Some(pod), "UPDATE"), vec![policy.to_string()]);
    // DELETE sends no body.
    assert_eq!(run(None, Some(pod), "DELETE"), vec![policy.to_string()]);
    // A body that does not decode is a 400 without them.
    let bad = pod.replace(r#""name": "b""#, r#""name": 3"#);
    assert_eq!(run(Some(&bad), None, "CREATE"), Vec::<String>::new());
}

/// Manifests for the unknown-field and field-validation tests: a policy that warns on every request (so whether
/// admission ran shows in the warnings), its binding, the namespace, and a CRD.
const FIELD_VALIDATION_MANIFESTS: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: warn}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"]}
  validations:
  - {expression: "false", message: "always"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: warn}
spec: {policyName: warn, validationActions: [Warn]}
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              items: {type: array, items: {type: object, properties: {name: {type: string}}}}
"#;

const POLICY_WARNING: &str =
    "Validation failed for ValidatingAdmissionPolicy 'warn' with binding 'warn': always";

fn eval_with_request(
    object: Option<&str>,
    old: Option<&str>,
    request: &str,
) -> vap_eval::api::EvaluateResult {
    use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests};
    evaluate(&EvaluateInput {
        manifests: Manifests::Text(FIELD_VALIDATION_MANIFESTS.into()),
        object: object.map(|o| Document::Text(o.into())),
        old_object: old.map(|o| Document::Text(o.into())),
        request: Some(Document::Text(request.into())),
        ..Default::default()
    })
}

/// `fieldValidation: Strict` makes the body's strict decoding errors the decoder's error: the
/// create and update handlers answer `transformDecodeError`'s 400 and admission never runs
/// (k8s.io/apiserver `pkg/endpoints/handlers/create.go` `createHandler`, `update.go`
/// `UpdateResource`: only `isStrictError && validationDirective == Warn` goes on;
/// `rest.go` `transformDecodeError`: `<Kind> in version "<v>" cannot be handled as a <Kind>:
/// <err>`; apimachinery `pkg/runtime/error.go` `strictDecodingError.Error()`:
/// `strict decoding error: ` and the errors joined by `, `). The errors are sigs.k8s.io/json's
/// (`internal/golang/encoding/json/kubernetes_patch.go` `strictError.Error()`), in the order the
/// decoder meets the sorted keys, at most 100 (`saveStrictError`). A value that does not decode
/// wins (apimachinery `runtime/serializer/json/json.go` `unmarshal`: a fatal error is returned
/// before the strict ones). DELETE has no body and DeleteOptions no fieldValidation.
#[test]
fn field_validation_strict_is_the_decoders_400() {
    let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "zeta": 1, "spec": {"zz": true, "containers": [{"name": "a", "image": "x"},
        {"name": "b", "image": "y", "bogus": {"x": 1}}], "aa": 2}, "alpha": 3}"#;
    let clean = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "a", "image": "x"}]}}"#;
    let want = "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: \
        unknown field \"alpha\", unknown field \"spec.aa\", unknown field \"spec.containers[1].bogus\", \
        unknown field \"spec.zz\", unknown field \"zeta\"";
    for (old, op) in [(None, "CREATE"), (Some(clean), "UPDATE")] {
        let r = eval_with_request(
            Some(pod),
            old,
            &format!(r#"{{"operation": "{op}", "fieldValidation": "Strict"}}"#),
        );
        let status = r.response.status.as_ref().expect("a status");
        assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"), "{op}");
        assert_eq!(status.message, want, "{op}");
        assert!(r.response.warnings.is_empty() && r.policies.is_empty(), "{op}");
        let codes: Vec<_> = r.diagnostics.iter().map(|d| (d.severity, d.code)).collect();
        assert!(codes.contains(&(vap_eval::diagnostic::Severity::Error, "object-unknown-field")));
        assert!(codes.iter().any(|c| c.1 == "admission-chain-stopped"), "{codes:?}");
        assert_eq!(r.request.as_ref().map(|q| q.operation.as_str()), Some(op));
    }
    // Given in the request's options (an AdmissionRequest's `options`), the same.
    let r = eval_with_request(
        Some(pod),
        None,
        r#"{"options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldValidation": "Strict"}}"#,
    );
    assert_eq!(r.response.status.as_ref().map(|s| s.message.as_str()), Some(want));
    // A body without unknown fields goes on to admission.
    let r = eval_with_request(Some(clean), None, r#"{"fieldValidation": "Strict"}"#);
    assert_eq!(r.response.warnings, vec![POLICY_WARNING.to_string()]);
    // A value that does not decode wins over the strict errors.
    let bad = pod.replace(r#""name": "b""#, r#""name": 3"#);
    let r = eval_with_request(Some(&bad), None, r#"{"fieldValidation": "Strict"}"#);
    assert_eq!(
        r.response.status.map(|s| s.message),
        Some("Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field Container.spec.containers.name of type string".into())
    );
    // DELETE: no body, no fieldValidation (not even an invalid one is looked at).
    for fv in ["Strict", "bogus"] {
        let r = eval_with_request(
            None,
            Some(pod),
            &format!(r#"{{"operation": "DELETE", "fieldValidation": "{fv}"}}"#),
        );
        assert!(r.response.allowed, "{fv}");
        assert_eq!(r.response.warnings, vec![POLICY_WARNING.to_string()], "{fv}");
    }
    // At most 100 strict errors.
    let many: Vec<String> = (0..120).map(|i| format!("\"x{i:03}\": 1")).collect();
    let big = clean.replacen('{', &format!("{{{}, ", many.join(", ")), 1);
    let r = eval_with_request(Some(&big), None, r#"{"fieldValidation": "Strict"}"#);
    let message = r.response.status.map(|s| s.message).unwrap_or_default();
    assert_eq!(message.matches("unknown field").count(), 100, "{message}");
    assert!(message.ends_with("unknown field \"x099\""), "{message}");
    let r = eval_with_request(Some(&big), None, "{}");
    assert_eq!(r.response.warnings.len(), 101);
}

/// A custom resource's strict errors are its pruned fields (apiextensions-apiserver
/// `pkg/apiserver/customresource_handler.go` `schemaCoercingDecoder.Decode`:
/// `fmt.Errorf("unknown field \"%s\"", unknownField)`, the path not quoted;
/// `pkg/apiserver/schema/pruning/algorithm.go` `PruneWithOptions`: `sort.Strings` of the paths
/// built by `schema.UnknownFieldPathOptions`), warnings under Warn, the 400 under Strict.
#[test]
fn field_validation_of_a_custom_resource() {
    let widget = r#"{"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"items": [{"name": "a"}, {"name": "b"}, {"name": "c", "x": 1},
            {"name": "d"}, {"name": "e"}, {"name": "f"}, {"name": "g"}, {"name": "h"},
            {"name": "i"}, {"name": "j"}, {"name": "k", "x": 1}], "x-y": 1, "q\"": 2}}"#;
    let fields = [
        r#"unknown field "spec.items[10].x""#,
        r#"unknown field "spec.items[2].x""#,
        r#"unknown field "spec.q"""#,
        r#"unknown field "spec.x-y""#,
    ];
    let r = eval_with_request(Some(widget), None, "{}");
    let mut want: Vec<String> = fields.iter().map(|s| s.to_string()).collect();
    want.push(POLICY_WARNING.into());
    assert_eq!(r.response.warnings, want);
    let r = eval_with_request(Some(widget), None, r#"{"fieldValidation": "Strict"}"#);
    let status = r.response.status.expect("a status");
    assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        status.message,
        format!(
            "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: {}",
            fields.join(", ")
        )
    );
}

/// `fieldValidation: Ignore` decodes with the non-strict serializer: no strict errors, no
/// warnings (handlers/create.go: only Warn and Strict take `s.StrictSerializer`). `Warn` and
/// an empty value are the default (handlers/rest.go `fieldValidation`: `""` is Warn).
#[test]
fn field_validation_ignore_and_warn() {
    let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "a", "image": "x"}], "zz": 1}}"#;
    let r = eval_with_request(Some(pod), None, r#"{"fieldValidation": "Ignore"}"#);
    assert_eq!(r.response.warnings, vec![POLICY_WARNING.to_string()]);
    // The diagnostic stays: the field is dropped all the same.
    assert!(r.diagnostics.iter().any(|d| d.code == "object-unknown-field"));
    for request in [r#"{"fieldValidation": "Warn"}"#, r#"{"fieldValidation": ""}"#, "{}"] {
        let r = eval_with_request(Some(pod), None, request);
        assert_eq!(
            r.response.warnings,
            vec![r#"unknown field "spec.zz""#.to_string(), POLICY_WARNING.to_string()],
            "{request}"
        );
        let d = r.diagnostics.iter().find(|d| d.code == "object-unknown-field").unwrap();
        assert!(d.help.contains("--validate=strict"), "{}", d.help);
    }
}

/// A `fieldValidation` the apiserver does not know (the values are case-sensitive) is a 422
/// before the body is read (handlers/create.go: `validation.ValidateCreateOptions` →
/// `errors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "CreateOptions"}, "",
/// errs)`; update.go likewise with UpdateOptions; apimachinery
/// `pkg/apis/meta/v1/validation/validation.go` `ValidateFieldValidation`: `field.NotSupported`
/// with the sorted set `""`, `Ignore`, `Strict`, `Warn`).
#[test]
fn field_validation_invalid_value_is_a_422() {
    let pod = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "a", "image": "x"}]}}"#;
    for (old, op, kind) in
        [(None, "CREATE", "CreateOptions"), (Some(pod), "UPDATE", "UpdateOptions")]
    {
        let r = eval_with_request(
            Some(pod),
            old,
            &format!(r#"{{"operation": "{op}", "fieldValidation": "strict"}}"#),
        );
        let v = serde_json::to_value(&r.response.status).unwrap();
        let body =
            r#"Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn""#;
        assert_eq!(
            v,
            json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": format!("{kind}.meta.k8s.io \"\" is invalid: fieldValidation: {body}"),
                "reason": "Invalid",
                "details": {"group": "meta.k8s.io", "kind": kind, "causes": [
                    {"reason": "FieldValueNotSupported", "message": body, "field": "fieldValidation"}
                ]},
                "code": 422
            }),
            "{op}"
        );
        assert!(r.response.warnings.is_empty() && r.policies.is_empty(), "{op}");
        assert!(r.diagnostics.iter().any(|d| d.code == "request-rejected"), "{op}");
        // The body was never read: nothing decoded, defaulted or stored.
        assert!(r.object_changes.iter().all(|c| c.object != "object"), "{op}");
    }
}

/// `fieldValidation` is a query parameter: the handler decodes it into the CreateOptions or
/// UpdateOptions it hands admission, which policies read as `request.options` (k8s.io/apiserver
/// `handlers/create.go`, `update.go`: `DecodeParameters(values, …, options)`, then
/// `admission.NewAttributesRecord(…, options, …)`); DeleteOptions have no such field.
#[test]
fn field_validation_is_in_the_options() {
    use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests};
    let manifests = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: options}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["*"], resources: ["configmaps"]}
  validations:
  - expression: "false"
    messageExpression: "request.options.kind + ':' + (has(request.options.fieldValidation) ? request.options.fieldValidation : '-')"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: options}
spec: {policyName: options, validationActions: [Warn]}
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
"#;
    let cm = r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}}"#;
    let run = |old: Option<&str>, new: Option<&str>, request: &str| {
        let r = evaluate(&EvaluateInput {
            manifests: Manifests::Text(manifests.into()),
            object: new.map(|o| Document::Text(o.into())),
            old_object: old.map(|o| Document::Text(o.into())),
            request: Some(Document::Text(request.into())),
            ..Default::default()
        });
        let w = r.response.warnings.first().cloned().unwrap_or_default();
        w.rsplit(": ").next().unwrap_or_default().to_string()
    };
    assert_eq!(run(None, Some(cm), r#"{"fieldValidation": "Strict"}"#), "CreateOptions:Strict");
    assert_eq!(run(None, Some(cm), r#"{"fieldValidation": ""}"#), "CreateOptions:-");
    assert_eq!(run(None, Some(cm), "{}"), "CreateOptions:-");
    let given = r#"{"fieldValidation": "Ignore", "options": {"kind": "UpdateOptions", "fieldValidation": "Warn"}}"#;
    assert_eq!(run(Some(cm), Some(cm), given), "UpdateOptions:Ignore");
    assert_eq!(run(Some(cm), None, r#"{"fieldValidation": "Strict"}"#), "DeleteOptions:-");
}

/// The object's decoding diagnostics point into the text the object was given as: an unknown
/// field at its key, a value the decoder rejects at the value; for the request's object and for
/// the stored oldObject, from YAML and from JSON text (a JavaScript object has no text to point
/// into).
#[test]
fn decoding_diagnostics_are_located_in_the_objects_text() {
    use vap_eval::api::{evaluate, Document, EvaluateInput, Manifests};
    use vap_eval::diagnostic::SourceRef;
    let object = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\nspec:\n  containers:\n  - name: a\n    image: x\n    bogus: {x: 1}\n";
    let old = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "a", "image": "x"}], "priority": "high"}}"#;
    let input = EvaluateInput {
        manifests: Manifests::Text(FIELD_VALIDATION_MANIFESTS.into()),
        object: Some(Document::Text(object.into())),
        old_object: Some(Document::Text(old.into())),
        request: Some(Document::Text("{\"operation\": \"UPDATE\"}".into())),
        ..Default::default()
    };
    let r = evaluate(&input);
    let at = |code: &str, name: &str, text: &str| {
        let d = r
            .diagnostics
            .iter()
            .find(|d| d.code == code && d.source == Some(SourceRef::Input { name: name.into() }))
            .unwrap_or_else(|| panic!("no located {code} in {name}: {:#?}", r.diagnostics));
        let s = d.span.expect("a span");
        text[s.start as usize..s.end as usize].to_string()
    };
    assert_eq!(at("object-unknown-field", "object", object), "bogus");
    assert_eq!(at("object-wrong-type", "oldObject", old), "\"high\"");
    // The same object as a JavaScript object would come: no text, no span.
    let parsed: serde_json::Value = serde_json::from_str(old).unwrap();
    let input = EvaluateInput { old_object: Some(Document::Object(parsed)), ..input };
    let r = evaluate(&input);
    let d = r.diagnostics.iter().find(|d| d.code == "object-wrong-type").expect("the warning");
    assert_eq!((d.span, &d.source), (None, &None));
}
