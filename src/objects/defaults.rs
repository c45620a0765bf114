//! The imperative defaulting functions of the API groups, ported by hand from kubernetes/kubernetes
//! `pkg/apis/<group>/<version>/defaults.go` (each function cites its original). The declarative
//! `+default` markers need no port: they are in the generated data ([`super::model`]).
//!
//! [`apply`] runs at every struct of the walk, before its fields' markers and before its
//! children, as `zz_generated.defaults.go` orders the calls. Go nil and zero values are an absent
//! key here ([`super::gojson`]). Where a default depends on a field newer than some supported
//! version, it is set only where the version's type has the field. A feature-gated default is
//! set in the versions whose gate is on by default ([`GATES`], from the versioned feature specs
//! of kubernetes/kubernetes `pkg/features/kube_features.go`); [`NOT_PORTED`] lists what is left
//! out.
//!
//! Sources read (kubernetes/kubernetes, as stored by the project's code index): core/v1
//! 023f88a3, apps/v1 04791b49, batch/v1 (PodFailurePolicy and JobPodReplacementPolicy version),
//! rbac/v1 7c30c06e, networking/v1 030880a5, storage/v1 01aa0f3f, autoscaling/v2 1adaa753,
//! admissionregistration/v1 08433067 (+ the ValidatingAdmissionPolicy defaults its
//! zz_generated.defaults.go 2595aa13 calls), discovery/v1 650c573d, scheduling/v1 24e5d1fd,
//! autoscaling/v1 (defaults.go with `autoscalingv1` types, and conversion.go's CPU default).
//! policy/v1, coordination/v1, node/v1 and events/v1 have no defaults.go (their
//! zz_generated.defaults.go registers nothing); certificates/v1's defaults.go defines no
//! `SetDefaults_*` (its one default, PodCertificateRequest's, is a `+default` marker).

use serde_json::{Map, Value as Json};

use super::gojson::Walk;
use super::{ChangeReason, Seg};
use crate::library::quantity::Quantity;

/// The `SetDefaults_*` functions ported here, by `group/version` (core: `core/v1`), as
/// `data/objects/setdefaults.txt` names them.
pub const PORTED: &[(&str, &str)] = &[
    ("core/v1", "SetDefaults_ConfigMap"),
    ("core/v1", "SetDefaults_ConfigMapVolumeSource"),
    ("core/v1", "SetDefaults_Container"),
    ("core/v1", "SetDefaults_DownwardAPIVolumeSource"),
    ("core/v1", "SetDefaults_Endpoints"),
    ("core/v1", "SetDefaults_EphemeralContainer"),
    ("core/v1", "SetDefaults_HTTPGetAction"),
    ("core/v1", "SetDefaults_HostPathVolumeSource"),
    ("core/v1", "SetDefaults_LimitRangeItem"),
    ("core/v1", "SetDefaults_Namespace"),
    ("core/v1", "SetDefaults_NamespaceStatus"),
    ("core/v1", "SetDefaults_NodeStatus"),
    ("core/v1", "SetDefaults_ObjectFieldSelector"),
    ("core/v1", "SetDefaults_PersistentVolume"),
    ("core/v1", "SetDefaults_PersistentVolumeClaim"),
    ("core/v1", "SetDefaults_PersistentVolumeClaimSpec"),
    ("core/v1", "SetDefaults_Pod"),
    ("core/v1", "SetDefaults_PodSpec"),
    ("core/v1", "SetDefaults_Probe"),
    ("core/v1", "SetDefaults_ProjectedVolumeSource"),
    ("core/v1", "SetDefaults_ReplicationController"),
    // In the walk (`gojson`): a map field, not a struct.
    ("core/v1", "SetDefaults_ResourceList"),
    ("core/v1", "SetDefaults_Secret"),
    ("core/v1", "SetDefaults_SecretVolumeSource"),
    ("core/v1", "SetDefaults_Service"),
    ("core/v1", "SetDefaults_ServiceAccountTokenProjection"),
    ("core/v1", "SetDefaults_Volume"),
    ("apps/v1", "SetDefaults_DaemonSet"),
    ("apps/v1", "SetDefaults_Deployment"),
    ("apps/v1", "SetDefaults_ReplicaSet"),
    ("apps/v1", "SetDefaults_StatefulSet"),
    ("batch/v1", "SetDefaults_CronJob"),
    ("batch/v1", "SetDefaults_Job"),
    ("batch/v1", "SetDefaults_PodFailurePolicyOnPodConditionsPattern"),
    ("rbac/v1", "SetDefaults_ClusterRoleBinding"),
    ("rbac/v1", "SetDefaults_RoleBinding"),
    ("rbac/v1", "SetDefaults_Subject"),
    ("networking/v1", "SetDefaults_IngressClass"),
    ("networking/v1", "SetDefaults_NetworkPolicy"),
    ("networking/v1", "SetDefaults_NetworkPolicyPort"),
    ("storage/v1", "SetDefaults_CSIDriver"),
    ("storage/v1", "SetDefaults_StorageClass"),
    ("autoscaling/v2", "SetDefaults_HorizontalPodAutoscaler"),
    ("autoscaling/v2", "SetDefaults_HorizontalPodAutoscalerBehavior"),
    ("admissionregistration/v1", "SetDefaults_MatchResources"),
    ("admissionregistration/v1", "SetDefaults_MutatingWebhook"),
    ("admissionregistration/v1", "SetDefaults_Rule"),
    ("admissionregistration/v1", "SetDefaults_ServiceReference"),
    ("admissionregistration/v1", "SetDefaults_ValidatingAdmissionPolicySpec"),
    ("admissionregistration/v1", "SetDefaults_ValidatingWebhook"),
    ("autoscaling/v1", "SetDefaults_HorizontalPodAutoscaler"),
    ("discovery/v1", "SetDefaults_EndpointPort"),
    ("scheduling/v1", "SetDefaults_PriorityClass"),
];

/// `SetDefaults_*` functions deliberately not ported, with the reason.
pub const NOT_PORTED: &[(&str, &str, &str)] = &[(
    "core/v1",
    "SetDefaults_PodLogOptions",
    "not an object admission sees (a subresource's options)",
)];

/// Feature gates that decide a default, with the first supported minor version in which each is
/// on by default (`u32::MAX`: off in every supported version). From the versioned feature specs
/// of kubernetes/kubernetes `pkg/features/kube_features.go` (the copy stored by the code index
/// lists every release's `{Version, Default, PreRelease}`). A gate that is off by default in a
/// version sets no default there, as a cluster at its defaults does.
pub const GATES: &[(&str, u32)] = &[
    // Beta on since 1.28 (`SetDefaults_CSIDriver`: seLinuxMount false).
    ("SELinuxMountReadWriteOncePod", 30),
    // Beta on since 1.27, GA 1.32 (`SetDefaults_StatefulSet`: PVC retention policy).
    ("StatefulSetAutoDeletePVC", 30),
    // Beta on since 1.29, GA 1.34 (`SetDefaults_Job`: podReplacementPolicy).
    ("JobPodReplacementPolicy", 30),
    // Beta on since 1.30, GA 1.32 (`SetDefaults_Service`: status ingress ipMode VIP).
    ("LoadBalancerIPMode", 30),
    // Alpha 1.32, beta on since 1.34 (`SetDefaults_Pod`: pod-level requests and limits).
    ("PodLevelResources", 34),
    // Beta on since 1.37 (kubernetes#140514): the pod-level defaults leave `SetDefaults_Pod`
    // for the Pod strategy's PrepareForCreate/PrepareForUpdate (the registry step).
    ("PodLevelResourcesFixDefaulting", 37),
    // Beta on since 1.37 (kubernetes#137150; the registry's Pod QoS class): pod-level resources
    // decide the class only when they request or limit a supported resource, not when empty.
    ("PodLevelResourcesFixKubeletQOSClass", 37),
    // Alpha 1.31, beta off 1.33, beta on since 1.35 (`SetDefaults_Volume`: image pullPolicy).
    ("ImageVolume", 35),
    // Alpha since 1.24, beta on since 1.35 (`SetDefaults_StatefulSet`: rollingUpdate
    // maxUnavailable 1).
    ("MaxUnavailableStatefulSet", 35),
];

/// Whether `gate` is on by default in `version` ([`GATES`]; an unknown gate is off).
pub fn gate_enabled(gate: &str, version: crate::environment::KubeVersion) -> bool {
    GATES.iter().any(|(g, since)| *g == gate && version.minor >= *since)
}

/// Declarative form of the simple defaults: `(type, path, when, value, guard)`.
///
/// - `path`: field names separated by spaces, relative to the struct of `type`; `*` is every
///   element of a list, a number one element, `#key` a map key;
/// - `when`: `n` — the field is nil (absent); `e` — it is nil or holds its zero value (`""`,
///   `0`, `false`, an empty list); (`o`, for code only: always);
/// - `value`: JSON text;
/// - `guard`: conditions joined by `&`, all must hold: `path=text` (the string at path, `""`
///   when absent), `path!` (present and not empty), `path-` (absent), `?Type.field` (the
///   version's type has the field), `%Gate` (the feature gate is on by default in the
///   version, [`GATES`]). Rows of one type run in order.
type Rule = (&'static str, &'static str, u8, &'static str, &'static str);

#[rustfmt::skip]
const RULES: &[Rule] = &[
    // core/v1 defaults.go
    ("core.v1.HTTPGetAction", "path", b'e', "\"/\"", ""), // SetDefaults_HTTPGetAction
    ("core.v1.HTTPGetAction", "scheme", b'e', "\"HTTP\"", ""),
    ("core.v1.SecretVolumeSource", "defaultMode", b'n', "420", ""), // SetDefaults_SecretVolumeSource (0644)
    ("core.v1.ConfigMapVolumeSource", "defaultMode", b'n', "420", ""), // SetDefaults_ConfigMapVolumeSource
    ("core.v1.DownwardAPIVolumeSource", "defaultMode", b'n', "420", ""), // SetDefaults_DownwardAPIVolumeSource
    ("core.v1.ProjectedVolumeSource", "defaultMode", b'n', "420", ""), // SetDefaults_ProjectedVolumeSource
    ("core.v1.ServiceAccountTokenProjection", "expirationSeconds", b'n', "3600", ""), // SetDefaults_ServiceAccountTokenProjection
    ("core.v1.Secret", "type", b'e', "\"Opaque\"", ""), // SetDefaults_Secret
    ("core.v1.ConfigMap", "data", b'n', "{}", "?core.v1.ConfigMap.data"), // SetDefaults_ConfigMap
    ("core.v1.HostPathVolumeSource", "type", b'n', "\"\"", ""), // SetDefaults_HostPathVolumeSource (HostPathUnset)
    ("core.v1.PersistentVolume", "status phase", b'e', "\"Pending\"", ""), // SetDefaults_PersistentVolume
    ("core.v1.PersistentVolume", "spec persistentVolumeReclaimPolicy", b'e', "\"Retain\"", ""),
    ("core.v1.PersistentVolume", "spec volumeMode", b'n', "\"Filesystem\"", ""),
    ("core.v1.PersistentVolumeClaim", "status phase", b'e', "\"Pending\"", ""), // SetDefaults_PersistentVolumeClaim
    ("core.v1.PersistentVolumeClaimSpec", "volumeMode", b'n', "\"Filesystem\"", ""), // SetDefaults_PersistentVolumeClaimSpec
    ("core.v1.Endpoints", "subsets * ports * protocol", b'e', "\"TCP\"", ""), // SetDefaults_Endpoints
    ("core.v1.NamespaceStatus", "phase", b'e', "\"Active\"", ""), // SetDefaults_NamespaceStatus
    ("core.v1.ObjectFieldSelector", "apiVersion", b'e', "\"v1\"", ""), // SetDefaults_ObjectFieldSelector
    ("core.v1.Container", "terminationMessagePath", b'e', "\"/dev/termination-log\"", ""), // SetDefaults_Container
    ("core.v1.Container", "terminationMessagePolicy", b'e', "\"File\"", ""),
    ("core.v1.EphemeralContainer", "terminationMessagePath", b'e', "\"/dev/termination-log\"", ""), // SetDefaults_EphemeralContainer
    ("core.v1.EphemeralContainer", "terminationMessagePolicy", b'e', "\"File\"", ""),
    ("core.v1.Pod", "spec enableServiceLinks", b'n', "true", ""), // SetDefaults_Pod
    ("core.v1.PodSpec", "dnsPolicy", b'e', "\"ClusterFirst\"", ""), // SetDefaults_PodSpec
    ("core.v1.PodSpec", "restartPolicy", b'e', "\"Always\"", ""),
    ("core.v1.PodSpec", "securityContext", b'n', "{}", ""),
    ("core.v1.PodSpec", "terminationGracePeriodSeconds", b'n', "30", ""),
    ("core.v1.PodSpec", "schedulerName", b'e', "\"default-scheduler\"", ""),
    ("core.v1.Probe", "timeoutSeconds", b'e', "1", ""), // SetDefaults_Probe
    ("core.v1.Probe", "periodSeconds", b'e', "10", ""),
    ("core.v1.Probe", "successThreshold", b'e', "1", ""),
    ("core.v1.Probe", "failureThreshold", b'e', "3", ""),
    ("core.v1.Service", "spec sessionAffinity", b'e', "\"None\"", ""), // SetDefaults_Service
    ("core.v1.Service", "spec sessionAffinityConfig", b'n', "{\"clientIP\":{\"timeoutSeconds\":10800}}", "spec sessionAffinity=ClientIP"),
    ("core.v1.Service", "spec sessionAffinityConfig clientIP timeoutSeconds", b'n', "10800", "spec sessionAffinity=ClientIP"),
    ("core.v1.Service", "spec type", b'e', "\"ClusterIP\"", ""),
    ("core.v1.Service", "spec ports * protocol", b'e', "\"TCP\"", ""),
    ("core.v1.Service", "spec externalTrafficPolicy", b'e', "\"Cluster\"", "spec type=LoadBalancer"),
    ("core.v1.Service", "spec externalTrafficPolicy", b'e', "\"Cluster\"", "spec type=NodePort"),
    ("core.v1.Service", "spec externalTrafficPolicy", b'e', "\"Cluster\"", "spec type=ClusterIP&spec externalIPs!"),
    ("core.v1.Service", "spec internalTrafficPolicy", b'n', "\"Cluster\"", "spec type=ClusterIP"),
    ("core.v1.Service", "spec internalTrafficPolicy", b'n', "\"Cluster\"", "spec type=NodePort"),
    ("core.v1.Service", "spec internalTrafficPolicy", b'n', "\"Cluster\"", "spec type=LoadBalancer"),
    ("core.v1.Service", "spec allocateLoadBalancerNodePorts", b'n', "true", "spec type=LoadBalancer"),
    // apps/v1 defaults.go
    ("apps.v1.Deployment", "spec replicas", b'n', "1", ""), // SetDefaults_Deployment
    ("apps.v1.Deployment", "spec strategy type", b'e', "\"RollingUpdate\"", ""),
    ("apps.v1.Deployment", "spec strategy rollingUpdate maxUnavailable", b'n', "\"25%\"", "spec strategy type=RollingUpdate"),
    ("apps.v1.Deployment", "spec strategy rollingUpdate maxSurge", b'n', "\"25%\"", "spec strategy type=RollingUpdate"),
    ("apps.v1.Deployment", "spec revisionHistoryLimit", b'n', "10", ""),
    ("apps.v1.Deployment", "spec progressDeadlineSeconds", b'n', "600", ""),
    ("apps.v1.DaemonSet", "spec updateStrategy type", b'e', "\"RollingUpdate\"", ""), // SetDefaults_DaemonSet
    ("apps.v1.DaemonSet", "spec updateStrategy rollingUpdate maxUnavailable", b'n', "1", "spec updateStrategy type=RollingUpdate"),
    ("apps.v1.DaemonSet", "spec updateStrategy rollingUpdate maxSurge", b'n', "0", "spec updateStrategy type=RollingUpdate"),
    ("apps.v1.DaemonSet", "spec revisionHistoryLimit", b'n', "10", ""),
    ("apps.v1.StatefulSet", "spec podManagementPolicy", b'e', "\"OrderedReady\"", ""), // SetDefaults_StatefulSet
    ("apps.v1.StatefulSet", "spec updateStrategy rollingUpdate", b'n', "{}", "spec updateStrategy type="),
    ("apps.v1.StatefulSet", "spec updateStrategy type", b'e', "\"RollingUpdate\"", ""),
    ("apps.v1.StatefulSet", "spec updateStrategy rollingUpdate partition", b'n', "0", "spec updateStrategy type=RollingUpdate&spec updateStrategy rollingUpdate!"),
    ("apps.v1.StatefulSet", "spec updateStrategy rollingUpdate maxUnavailable", b'n', "1", "spec updateStrategy type=RollingUpdate&spec updateStrategy rollingUpdate!&%MaxUnavailableStatefulSet"),
    ("apps.v1.StatefulSet", "spec persistentVolumeClaimRetentionPolicy whenDeleted", b'e', "\"Retain\"", "%StatefulSetAutoDeletePVC"),
    ("apps.v1.StatefulSet", "spec persistentVolumeClaimRetentionPolicy whenScaled", b'e', "\"Retain\"", "%StatefulSetAutoDeletePVC"),
    ("apps.v1.StatefulSet", "spec replicas", b'n', "1", ""),
    ("apps.v1.StatefulSet", "spec revisionHistoryLimit", b'n', "10", ""),
    ("apps.v1.ReplicaSet", "spec replicas", b'n', "1", ""), // SetDefaults_ReplicaSet
    // batch/v1 defaults.go
    ("batch.v1.Job", "spec completions", b'n', "1", "spec parallelism-"), // SetDefaults_Job
    ("batch.v1.Job", "spec parallelism", b'n', "1", ""),
    ("batch.v1.Job", "spec backoffLimit", b'n', "2147483647", "spec backoffLimitPerIndex!"),
    ("batch.v1.Job", "spec backoffLimit", b'n', "6", ""),
    ("batch.v1.Job", "spec completionMode", b'n', "\"NonIndexed\"", ""),
    ("batch.v1.Job", "spec suspend", b'n', "false", ""),
    ("batch.v1.Job", "spec podReplacementPolicy", b'n', "\"Failed\"", "?batch.v1.JobSpec.podReplacementPolicy&%JobPodReplacementPolicy&spec podFailurePolicy!"),
    ("batch.v1.Job", "spec podReplacementPolicy", b'n', "\"TerminatingOrFailed\"", "?batch.v1.JobSpec.podReplacementPolicy&%JobPodReplacementPolicy"),
    ("batch.v1.Job", "spec manualSelector", b'n', "false", ""),
    ("batch.v1.CronJob", "spec concurrencyPolicy", b'e', "\"Allow\"", ""), // SetDefaults_CronJob
    ("batch.v1.CronJob", "spec suspend", b'n', "false", ""),
    ("batch.v1.CronJob", "spec successfulJobsHistoryLimit", b'n', "3", ""),
    ("batch.v1.CronJob", "spec failedJobsHistoryLimit", b'n', "1", ""),
    ("batch.v1.PodFailurePolicyOnPodConditionsPattern", "status", b'e', "\"True\"", ""), // SetDefaults_PodFailurePolicyOnPodConditionsPattern
    // rbac/v1 defaults.go
    ("rbac.v1.ClusterRoleBinding", "roleRef apiGroup", b'e', "\"rbac.authorization.k8s.io\"", ""), // SetDefaults_ClusterRoleBinding
    ("rbac.v1.RoleBinding", "roleRef apiGroup", b'e', "\"rbac.authorization.k8s.io\"", ""), // SetDefaults_RoleBinding
    ("rbac.v1.Subject", "apiGroup", b'e', "\"rbac.authorization.k8s.io\"", "kind=User"), // SetDefaults_Subject
    ("rbac.v1.Subject", "apiGroup", b'e', "\"rbac.authorization.k8s.io\"", "kind=Group"),
    // networking/v1 defaults.go
    ("networking.v1.NetworkPolicyPort", "protocol", b'n', "\"TCP\"", ""), // SetDefaults_NetworkPolicyPort
    ("networking.v1.NetworkPolicy", "spec policyTypes", b'e', "[\"Ingress\",\"Egress\"]", "spec egress!"), // SetDefaults_NetworkPolicy
    ("networking.v1.NetworkPolicy", "spec policyTypes", b'e', "[\"Ingress\"]", ""),
    ("networking.v1.IngressClass", "spec parameters scope", b'n', "\"Cluster\"", "spec parameters!"), // SetDefaults_IngressClass
    // storage/v1 defaults.go
    ("storage.v1.StorageClass", "reclaimPolicy", b'n', "\"Delete\"", ""), // SetDefaults_StorageClass
    ("storage.v1.StorageClass", "volumeBindingMode", b'n', "\"Immediate\"", ""),
    ("storage.v1.CSIDriver", "spec attachRequired", b'n', "true", ""), // SetDefaults_CSIDriver (its gates are GA)
    ("storage.v1.CSIDriver", "spec podInfoOnMount", b'n', "false", ""),
    ("storage.v1.CSIDriver", "spec storageCapacity", b'n', "false", ""),
    ("storage.v1.CSIDriver", "spec fsGroupPolicy", b'n', "\"ReadWriteOnceWithFSType\"", ""),
    ("storage.v1.CSIDriver", "spec volumeLifecycleModes", b'e', "[\"Persistent\"]", ""),
    ("storage.v1.CSIDriver", "spec requiresRepublish", b'n', "false", ""),
    // seLinuxMount false: the storage fuzzer's "match defaulting" (pkg/apis/storage/fuzzer)
    ("storage.v1.CSIDriver", "spec seLinuxMount", b'n', "false", "?storage.v1.CSIDriverSpec.seLinuxMount&%SELinuxMountReadWriteOncePod"),
    // autoscaling/v1 defaults.go SetDefaults_HorizontalPodAutoscaler; the CPU target is
    // conversion.go's (v1 → internal: no metrics at all is 80% CPU, written back to v1 as
    // targetCPUUtilizationPercentage), unless the other-metrics annotation carries metrics.
    ("autoscaling.v1.HorizontalPodAutoscaler", "spec minReplicas", b'n', "1", ""),
    ("autoscaling.v1.HorizontalPodAutoscaler", "spec targetCPUUtilizationPercentage", b'n', "80", "metadata annotations #autoscaling.alpha.kubernetes.io/metrics-"),
    // autoscaling/v2 defaults.go
    ("autoscaling.v2.HorizontalPodAutoscaler", "spec minReplicas", b'n', "1", ""), // SetDefaults_HorizontalPodAutoscaler
    ("autoscaling.v2.HorizontalPodAutoscaler", "spec metrics", b'e', "[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\",\"target\":{\"type\":\"Utilization\",\"averageUtilization\":80}}}]", ""),
    // admissionregistration/v1 defaults.go: SetDefaults_ValidatingWebhook, SetDefaults_MutatingWebhook
    ("admissionregistration.v1.ValidatingWebhook", "failurePolicy", b'n', "\"Fail\"", ""),
    ("admissionregistration.v1.ValidatingWebhook", "matchPolicy", b'n', "\"Equivalent\"", ""),
    ("admissionregistration.v1.ValidatingWebhook", "namespaceSelector", b'n', "{}", ""),
    ("admissionregistration.v1.ValidatingWebhook", "objectSelector", b'n', "{}", ""),
    ("admissionregistration.v1.ValidatingWebhook", "sideEffects", b'n', "\"Unknown\"", ""),
    ("admissionregistration.v1.ValidatingWebhook", "timeoutSeconds", b'n', "30", ""),
    ("admissionregistration.v1.ValidatingWebhook", "admissionReviewVersions", b'e', "[\"v1\"]", ""),
    ("admissionregistration.v1.MutatingWebhook", "failurePolicy", b'n', "\"Fail\"", ""),
    ("admissionregistration.v1.MutatingWebhook", "matchPolicy", b'n', "\"Equivalent\"", ""),
    ("admissionregistration.v1.MutatingWebhook", "namespaceSelector", b'n', "{}", ""),
    ("admissionregistration.v1.MutatingWebhook", "objectSelector", b'n', "{}", ""),
    ("admissionregistration.v1.MutatingWebhook", "sideEffects", b'n', "\"Unknown\"", ""),
    ("admissionregistration.v1.MutatingWebhook", "timeoutSeconds", b'n', "30", ""),
    ("admissionregistration.v1.MutatingWebhook", "reinvocationPolicy", b'n', "\"Never\"", ""),
    ("admissionregistration.v1.MutatingWebhook", "admissionReviewVersions", b'e', "[\"v1\"]", ""),
    // SetDefaults_ValidatingAdmissionPolicySpec, SetDefaults_MatchResources
    ("admissionregistration.v1.ValidatingAdmissionPolicySpec", "failurePolicy", b'n', "\"Fail\"", ""),
    ("admissionregistration.v1.MatchResources", "matchPolicy", b'n', "\"Equivalent\"", ""),
    ("admissionregistration.v1.MatchResources", "namespaceSelector", b'n', "{}", ""),
    ("admissionregistration.v1.MatchResources", "objectSelector", b'n', "{}", ""),
    // SetDefaults_Rule, on Rule and the types that embed it (their fields are inlined)
    ("admissionregistration.v1.Rule", "scope", b'n', "\"*\"", ""),
    ("admissionregistration.v1.RuleWithOperations", "scope", b'n', "\"*\"", ""),
    ("admissionregistration.v1.NamedRuleWithOperations", "scope", b'n', "\"*\"", ""),
    ("admissionregistration.v1.ServiceReference", "port", b'n', "443", ""), // SetDefaults_ServiceReference
    ("discovery.v1.EndpointPort", "name", b'n', "\"\"", ""), // SetDefaults_EndpointPort
    ("discovery.v1.EndpointPort", "protocol", b'n', "\"TCP\"", ""),
    ("scheduling.v1.PriorityClass", "preemptionPolicy", b'n', "\"PreemptLowerPriority\"", ""), // SetDefaults_PriorityClass
];

/// A path walked inside one struct: its steps as given (space-separated; split as walked, not
/// collected: rules' guards are read at every struct of every request).
fn resolve<'v>(v: &'v Json, path: &str) -> Option<&'v Json> {
    let mut cur = v;
    for s in path.split(' ') {
        cur = super::gojson::get(cur.as_object()?, s.trim_start_matches('#'))?;
    }
    Some(cur)
}

/// The Go zero check of a decoded value (absent, "", 0, false, empty list or map).
fn empty(v: Option<&Json>) -> bool {
    match v {
        None | Some(Json::Null) => true,
        Some(Json::String(s)) => s.is_empty(),
        Some(Json::Number(n)) => n.as_f64() == Some(0.0),
        Some(Json::Bool(b)) => !b,
        Some(Json::Array(a)) => a.is_empty(),
        Some(Json::Object(_)) => false,
    }
}

fn guard_holds(w: &Walk, v: &Json, guard: &str) -> bool {
    guard.split('&').filter(|g| !g.is_empty()).all(|g| {
        if let Some(gate) = g.strip_prefix('%') {
            return gate_enabled(gate, w.version);
        }
        if let Some(f) = g.strip_prefix('?') {
            let (ty, field) = f.rsplit_once('.').unwrap_or((f, ""));
            return w.model.has_field(ty, field);
        }
        if let Some(p) = g.strip_suffix('!') {
            return !empty(resolve(v, p));
        }
        if let Some(p) = g.strip_suffix('-') {
            return resolve(v, p).is_none();
        }
        let (p, want) = g.split_once('=').unwrap_or((g, ""));
        let got = resolve(v, p).and_then(Json::as_str);
        got.unwrap_or("") == want
    })
}

/// A step of a rule's path below the struct, borrowed from the rule: a rule is tried at every
/// struct of its type on every request, and its path is copied only when it sets something.
#[derive(Clone, Copy)]
enum Rel<'s> {
    Key(&'s str),
    Index(usize),
}

/// Record a default set at `at` (below the current struct); `absent`: nothing was there.
fn record(w: &mut Walk, at: &[Rel], maps: &[bool], absent: bool) {
    if !w.recording() {
        return;
    }
    let segs: Vec<Seg> = at
        .iter()
        .map(|r| match r {
            Rel::Key(k) => Seg::Key((*k).to_string()),
            Rel::Index(i) => Seg::Index(*i),
        })
        .collect();
    w.event_rel(&segs, maps, ChangeReason::Default, absent);
}

/// A step of a rule's path, split once: as written, then its key without a map key's `#` and
/// whether it is a map key (`#`).
type RuleStep<'s> = (&'s str, &'s str, bool);

/// [`RuleStep`] of `step`.
fn rule_step(step: &str) -> RuleStep<'_> {
    (step, step.trim_start_matches('#'), step.starts_with('#'))
}

/// Apply one rule below `v` (the struct, or a value inside it), expanding `*` over lists. The
/// path so far (`at`, `maps`) is only kept where a change can be recorded below: most rules
/// are one step whose field is there.
fn apply_rule<'s>(
    w: &mut Walk,
    v: &mut Json,
    steps: &[RuleStep<'s>],
    at: &mut Vec<Rel<'s>>,
    maps: &mut Vec<bool>,
    when: u8,
    value: &str,
) {
    let Some((&(first, key, map_key), rest)) = steps.split_first() else { return };
    // `*` (bytes: a string comparison is a call at the size opt-level) and indices only
    // apply to lists; a list has no keys.
    let each = matches!(first.as_bytes(), [b'*']);
    if let Json::Array(items) = v {
        let one = if each { None } else { first.parse::<usize>().ok() };
        for (i, item) in items.iter_mut().enumerate() {
            if !each && one != Some(i) {
                continue;
            }
            at.push(Rel::Index(i));
            maps.push(false);
            apply_rule(w, item, rest, at, maps, when, value);
            at.pop();
            maps.pop();
        }
        return;
    }
    if each {
        return;
    }
    let Json::Object(m) = v else { return };
    if rest.is_empty() {
        let unset = when == b'o'
            || match super::gojson::get(m, key) {
                None => true,
                Some(cur) => when == b'e' && empty(Some(cur)),
            };
        if unset {
            if let Ok(val) = vap_eval_json::from_str(value) {
                let absent = m.insert(key.to_string(), val).is_none();
                at.push(Rel::Key(key));
                maps.push(map_key);
                record(w, at, maps, absent);
                at.pop();
                maps.pop();
            }
        }
    } else {
        // The key copied only when the step is created (it is there in most objects).
        if super::gojson::get(m, key).is_none() {
            m.insert(key.to_string(), Json::Object(Map::new()));
        }
        if let Some(child) = super::gojson::get_mut(m, key) {
            at.push(Rel::Key(key));
            maps.push(map_key);
            apply_rule(w, child, rest, at, maps, when, value);
            at.pop();
            maps.pop();
        }
    }
}

/// Set `path` (space-separated, relative to the struct) to `value` where it is absent,
/// recorded as a default.
fn set(w: &mut Walk, v: &mut Json, path: &str, value: Json) {
    set_when(w, v, path, value, b'n');
}

/// [`set`] with the rule's `when` (`e`: also over a zero value such as `""`).
fn set_when(w: &mut Walk, v: &mut Json, path: &str, value: Json, when: u8) {
    let steps: Vec<RuleStep> = path.split(' ').map(rule_step).collect();
    let (mut at, mut maps) = (Vec::new(), Vec::new());
    let text = value.to_string();
    apply_rule(w, v, &steps, &mut at, &mut maps, when, &text);
}

/// `SetDefaults_<T>` for struct type `ty` (qualified, `core.v1.Container`), if there is one:
/// the type's [`RULES`] (`rules`, [`rules_of`]), then the defaults that need code (`coded`,
/// [`is_coded`]). The walk looks both up once per type.
pub fn apply(w: &mut Walk, ty: &str, rules: &[usize], coded: bool, m: &mut Map<String, Json>) {
    let mut v = Json::Object(std::mem::take(m));
    // One pair of path buffers for all the rules (each rule leaves them empty).
    let (mut at, mut maps) = (Vec::new(), Vec::new());
    let split = rule_steps();
    for &i in rules {
        let (Some((_, _, when, value, guard)), Some(steps)) = (RULES.get(i), split.get(i)) else {
            continue;
        };
        if guard.is_empty() || guard_holds(w, &v, guard) {
            apply_rule(w, &mut v, steps, &mut at, &mut maps, *when, value);
        }
    }
    if coded {
        self::coded(w, ty, &mut v);
    }
    if let Json::Object(o) = v {
        *m = o;
    }
}

/// The indices into [`RULES`] of `ty`'s rules, in order. The walk asks at every struct of every
/// request; the index is built on first use.
pub(super) fn rules_of(ty: &str) -> &'static [usize] {
    static INDEX: std::sync::OnceLock<Vec<(&str, Vec<usize>)>> = std::sync::OnceLock::new();
    // Kept for the process: not in the per-call arena.
    let index = INDEX.get_or_init(|| crate::arena::outside(build_rules_index));
    match index.binary_search_by(|(t, _)| (*t).cmp(ty)) {
        Ok(i) => index.get(i).map_or(&[], |(_, list)| list.as_slice()),
        Err(_) => &[],
    }
}

/// [`rules_of`]' index.
fn build_rules_index() -> Vec<(&'static str, Vec<usize>)> {
    // Kept sorted by inserting in place (no sort instantiated in the wasm for this).
    let mut index: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, r) in RULES.iter().enumerate() {
        match index.binary_search_by(|(t, _)| (*t).cmp(r.0)) {
            Ok(at) => index.get_mut(at).into_iter().for_each(|(_, list)| list.push(i)),
            Err(at) => index.insert(at, (r.0, vec![i])),
        }
    }
    index
}

/// Each of [`RULES`]' paths split into its steps, once (the rules are tried at every struct of
/// their type on every request).
fn rule_steps() -> &'static [Vec<RuleStep<'static>>] {
    static STEPS: std::sync::OnceLock<Vec<Vec<RuleStep>>> = std::sync::OnceLock::new();
    // Kept for the process: not in the per-call arena.
    STEPS.get_or_init(|| {
        crate::arena::outside(|| {
            RULES.iter().map(|r| r.1.split(' ').map(rule_step).collect()).collect()
        })
    })
}

fn str_at<'v>(v: &'v Json, path: &str) -> &'v str {
    resolve(v, path).and_then(Json::as_str).unwrap_or("")
}

/// The types [`coded`] handles. `coded` returns at once for any other type, so a new arm there
/// does nothing until its type is listed here too.
const CODED: &[&str] = &[
    "core.v1.Container",
    "core.v1.EphemeralContainer",
    "core.v1.Pod",
    "core.v1.Volume",
    "core.v1.Namespace",
    "core.v1.NodeStatus",
    "core.v1.ReplicationController",
    "batch.v1.Job",
    "core.v1.Service",
    "core.v1.LimitRangeItem",
    "autoscaling.v2.HorizontalPodAutoscaler",
];

/// Whether `ty` has defaults that need code ([`coded`]); with [`rules_of`], whether [`apply`]
/// can change a struct of the type: the walk calls it only for those.
pub(super) fn is_coded(ty: &str) -> bool {
    CODED.contains(&ty)
}

/// The defaults that compute their value.
fn coded(w: &mut Walk, ty: &str, v: &mut Json) {
    if !CODED.contains(&ty) {
        return;
    }
    match ty {
        // SetDefaults_Container: `Always` for the `latest` tag (also when no tag is given).
        // (The test inside the arm: a container with a policy does not go on to `coded_kinds`'
        // comparisons.)
        "core.v1.Container" | "core.v1.EphemeralContainer" => {
            if str_at(v, "imagePullPolicy").is_empty() {
                let policy = if image_tag(str_at(v, "image")) == "latest" {
                    "Always"
                } else {
                    "IfNotPresent"
                };
                set_when(w, v, "imagePullPolicy", Json::from(policy), b'e');
            }
        }
        // SetDefaults_Volume: no source at all is an emptyDir; an image volume's pullPolicy as a
        // container's imagePullPolicy (behind ImageVolume).
        "core.v1.Volume" => {
            if v.as_object().is_some_and(|m| m.keys().all(|k| k == "name")) {
                set(w, v, "emptyDir", Json::Object(Map::new()));
            }
            if resolve(v, "image").is_some_and(Json::is_object)
                && str_at(v, "image pullPolicy").is_empty()
                && gate_enabled("ImageVolume", w.version)
            {
                let tag = image_tag(str_at(v, "image reference"));
                let policy = if tag == "latest" { "Always" } else { "IfNotPresent" };
                set_when(w, v, "image pullPolicy", Json::from(policy), b'e');
            }
        }
        // SetDefaults_Namespace: the kubernetes.io/metadata.name label.
        "core.v1.Namespace" => {
            let name = str_at(v, "metadata name").to_string();
            if !name.is_empty() && str_at(v, "metadata labels #kubernetes.io/metadata.name") != name
            {
                let steps = ["metadata", "labels", "#kubernetes.io/metadata.name"].map(rule_step);
                let (mut at, mut maps) = (Vec::new(), Vec::new());
                apply_rule(w, v, &steps, &mut at, &mut maps, b'o', &Json::from(name).to_string());
            }
        }
        _ => coded_kinds(w, ty, v),
    }
}

/// [`coded`]'s defaults of whole kinds and of rarer types, out of line: a page's first
/// `evaluate()` (a Deployment) compiles only the code it runs, and `coded` runs for every
/// container and volume.
#[inline(never)]
fn coded_kinds(w: &mut Walk, ty: &str, v: &mut Json) {
    match ty {
        "core.v1.Pod" => pod(w, v),
        // SetDefaults_NodeStatus: allocatable is the capacity when not given.
        "core.v1.NodeStatus" => {
            if let (None, Some(c)) = (v.get("allocatable"), v.get("capacity").cloned()) {
                set(w, v, "allocatable", c);
            }
        }
        // SetDefaults_ReplicationController and SetDefaults_Job: labels (and the RC's
        // selector) from the pod template's labels.
        "core.v1.ReplicationController" | "batch.v1.Job" => {
            if let Some(l) = resolve(v, "spec template metadata labels").cloned() {
                if ty == "core.v1.ReplicationController" && empty_map(v, "spec selector") {
                    set(w, v, "spec selector", l.clone());
                }
                if empty_map(v, "metadata labels") {
                    set(w, v, "metadata labels", l);
                }
            }
        }
        // SetDefaults_Service: targetPort is the port when zero or empty; ipMode VIP.
        "core.v1.Service" => {
            fn ports(v: &Json) -> Option<&Vec<Json>> {
                v.get("spec")?.get("ports")?.as_array()
            }
            let n = ports(v).map_or(0, Vec::len);
            for i in 0..n {
                let port = ports(v).and_then(|p| p.get(i)).cloned().unwrap_or_default();
                let target = port.get("targetPort");
                if empty(target) {
                    set(
                        w,
                        v,
                        &format!("spec ports {i} targetPort"),
                        port.get("port").cloned().unwrap_or(Json::from(0)),
                    );
                }
            }
            if str_at(v, "spec sessionAffinity") == "None" {
                if let Some(Json::Object(spec)) = v.get_mut("spec") {
                    if spec.remove("sessionAffinityConfig").is_some() {
                        let at =
                            [Seg::Key("spec".into()), Seg::Key("sessionAffinityConfig".into())];
                        w.event_rel(&at, &[], ChangeReason::Default, false);
                    }
                }
            }
            if str_at(v, "spec type") == "LoadBalancer"
                && w.model.has_field("core.v1.LoadBalancerIngress", "ipMode")
                && gate_enabled("LoadBalancerIPMode", w.version)
            {
                let n = v
                    .pointer("/status/loadBalancer/ingress")
                    .and_then(Json::as_array)
                    .map_or(0, Vec::len);
                for i in 0..n {
                    let ing = v
                        .pointer(&format!("/status/loadBalancer/ingress/{i}"))
                        .cloned()
                        .unwrap_or_default();
                    if !empty(ing.get("ip")) && ing.get("ipMode").is_none() {
                        set(
                            w,
                            v,
                            &format!("status loadBalancer ingress {i} ipMode"),
                            Json::from("VIP"),
                        );
                    }
                }
            }
        }
        "core.v1.LimitRangeItem" if str_at(v, "type") == "Container" => limit_range_item(w, v),
        "autoscaling.v2.HorizontalPodAutoscaler" => hpa_behavior(w, v),
        _ => {}
    }
}

fn empty_map(v: &Json, path: &str) -> bool {
    resolve(v, path).and_then(Json::as_object).is_none_or(Map::is_empty)
}

/// The tag of an image reference as `parsers.ParseImageName` finds it (`latest` when none;
/// a digest reference has no tag).
fn image_tag(image: &str) -> &str {
    let name = image.split('@').next().unwrap_or("");
    if image.contains('@') && !name.rsplit('/').next().unwrap_or("").contains(':') {
        return "";
    }
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag,
        None => "latest",
    }
}

/// SetDefaults_Pod: container requests from limits; host ports under hostNetwork; then the
/// pod-level resources ([`pod_level`]), which read the containers' requests as defaulted here.
fn pod(w: &mut Walk, v: &mut Json) {
    // Fields looked up in place (`Value::pointer` copies every step; this runs on every Pod).
    let host_network = v.get("spec").and_then(|s| s.get("hostNetwork")) == Some(&Json::Bool(true));
    for list in ["containers", "initContainers"] {
        let n =
            v.get("spec").and_then(|s| s.get(list)).and_then(Json::as_array).map_or(0, Vec::len);
        for i in 0..n {
            // The limits only, not the whole container (every container of every Pod).
            let at = format!("/spec/{list}/{i}");
            let c = v.get("spec").and_then(|s| s.get(list)).and_then(|l| l.get(i));
            // The limits whose request is given are left out first: `set` would find the
            // request there and change nothing (most Pods request what they limit). Copied are
            // only the others (the keys are distinct: setting one request cannot give another).
            let limits: Vec<(String, Json)> =
                match c.and_then(|c| c.get("resources")).and_then(|r| r.get("limits")) {
                    Some(Json::Object(limits)) => limits
                        .iter()
                        .filter(|(k, _)| !requested(v, list, i, k))
                        .map(|(k, q)| (k.clone(), q.clone()))
                        .collect(),
                    _ => Vec::new(),
                };
            for (k, q) in limits {
                set(w, v, &format!("spec {list} {i} resources requests #{k}"), q);
            }
            if host_network {
                // Setting requests above left the ports as they were.
                let c = v.pointer(&at).cloned().unwrap_or_default();
                let ports = c.get("ports").and_then(Json::as_array).map_or(0, Vec::len);
                for j in 0..ports {
                    let p = c.pointer(&format!("/ports/{j}")).cloned().unwrap_or_default();
                    if empty(p.get("hostPort")) {
                        if let Some(cp) = p.get("containerPort").cloned() {
                            set(w, v, &format!("spec {list} {i} ports {j} hostPort"), cp);
                        }
                    }
                }
            }
        }
    }
    if gate_enabled("PodLevelResources", w.version)
        && !gate_enabled("PodLevelResourcesFixDefaulting", w.version)
    {
        pod_level(w, v);
    }
}

/// Whether `set` of `spec <list> <i> resources requests #<k>` finds the request there and so
/// changes nothing: every step is an object member (or list item) as `apply_rule` walks it, the
/// last one too. A key `set`'s path would not carry as it is (a space, a leading `#`) is not
/// looked at.
fn requested(v: &Json, list: &str, i: usize, k: &str) -> bool {
    if k.contains(' ') || k.starts_with('#') {
        return false;
    }
    fn obj<'v>(v: &'v Json, key: &str) -> Option<&'v Json> {
        match v {
            Json::Object(m) => super::gojson::get(m, key),
            _ => None,
        }
    }
    let Some(Json::Array(items)) = obj(v, "spec").and_then(|s| obj(s, list)) else {
        return false;
    };
    (items.get(i).and_then(|c| obj(c, "resources")))
        .and_then(|r| obj(r, "requests"))
        .and_then(|r| obj(r, k))
        .is_some()
}

/// SetDefaults_Pod's pod-level resources (PodLevelResources, beta on 1.34–1.36; from 1.37
/// the Pod strategy's, [`pod_level_defaults`] with `fix`, see the registry).
fn pod_level(w: &mut Walk, v: &mut Json) {
    let put = v.get("spec").map(|spec| pod_level_defaults(spec, false)).unwrap_or_default();
    // (The decode pass before has dropped `null`s, Go's nil maps, and written quantities
    // canonically.)
    for (list, k, q) in put {
        set(w, v, &format!("spec resources {list} #{k}"), q);
    }
}

/// The pod-level resources a Pod's `spec` gets, as `(requests|limits, name, quantity)`, none of
/// them given, only when `spec.resources` gives requests or limits. 1.34–1.36 (`fix` false,
/// core/v1 SetDefaults_Pod): defaultHugePagePodLimits — a hugepage limit from the containers'
/// aggregate unless the pod level requests or limits that size — then, when the pod level has
/// limits, defaultPodRequests — cpu and memory requests from the containers' aggregate
/// requests, then any supported resource's request from its pod-level limit. 1.37 (`fix`,
/// PodLevelResourcesFixDefaulting, kubernetes#140514: pkg/api/pod DefaultPodLevelResources,
/// called by the Pod strategy): the same steps, the requests also without pod-level limits,
/// then a supported resource's limit, where every container (init and ephemeral ones too, as
/// v1.37.0 visits them, kubernetes#142212) limits it, to the larger of its pod-level request
/// and the containers' aggregated limit.
pub(super) fn pod_level_defaults(spec: &Json, fix: bool) -> Vec<(&'static str, String, Json)> {
    let Some(Json::Object(res)) = spec.get("resources") else { return Vec::new() };
    let given = |k: &str| res.get(k).and_then(Json::as_object).cloned().unwrap_or_default();
    let mut lists = [given("requests"), given("limits")];
    if lists.iter().all(Map::is_empty) {
        return Vec::new();
    }
    // IsSupportedPodLevelResource; corev1 IsOvercommitAllowed leaves cpu and memory.
    let supported = |k: &str| k == "cpu" || k == "memory" || k.starts_with("hugepages-");
    let mut put = Vec::new();
    let mut add = |lists: &mut [Map<String, Json>; 2], i: usize, k: &str, q: Json| {
        if !lists[i].contains_key(k) {
            lists[i].insert(k.to_string(), q.clone());
            put.push((["requests", "limits"][i], k.to_string(), q));
        }
    };
    let spec_limits = aggregate(spec, "limits");
    for (k, q) in &spec_limits {
        if k.starts_with("hugepages-") && !lists[0].contains_key(k) {
            add(&mut lists, 1, k, Json::from(q.canonical()));
        }
    }
    if fix || !lists[1].is_empty() {
        for (k, q) in aggregate(spec, "requests") {
            if k == "cpu" || k == "memory" {
                add(&mut lists, 0, &k, Json::from(q.canonical()));
            }
        }
        for (k, q) in lists[1].clone() {
            if supported(&k) {
                add(&mut lists, 0, &k, q);
            }
        }
    }
    let every = |k: &str| {
        ["containers", "initContainers", "ephemeralContainers"]
            .iter()
            .filter_map(|l| spec.get(l).and_then(Json::as_array))
            .flatten()
            .all(|c| c.pointer("/resources/limits").and_then(|m| m.get(k)).is_some())
    };
    for (k, q) in spec_limits.iter().filter(|(k, _)| fix && supported(k) && every(k)) {
        let request = lists[0].get(k).cloned();
        let larger = request.as_ref().and_then(quantity).is_some_and(|r| r.compare(q).is_gt());
        let q = if larger { request.unwrap_or_default() } else { Json::from(q.canonical()) };
        add(&mut lists, 1, k, q);
    }
    put
}

/// A resource list, in its keys' order, of the quantities that parse.
pub(super) type Resources = Vec<(String, Quantity)>;

/// A quantity given as a JSON string or number.
pub(super) fn quantity(v: &Json) -> Option<Quantity> {
    match v {
        Json::String(s) => Quantity::parse(s).ok(),
        Json::Number(n) => Quantity::parse(&n.to_string()).ok(),
        _ => None,
    }
}

/// component-helpers `AggregateContainerRequests` / `AggregateContainerLimits` (without status
/// or overhead), `kind` `requests` or `limits`: the containers' sum, raised to what any init
/// container needs while it runs — its own plus the sidecars (`restartPolicy: Always`) before
/// it; a sidecar also adds to the sum.
fn aggregate(spec: &Json, kind: &str) -> Resources {
    let (mut sum, mut sidecars, mut init) = (Resources::new(), Resources::new(), Resources::new());
    for list in ["containers", "initContainers"] {
        for c in spec.get(list).and_then(Json::as_array).into_iter().flatten() {
            let mut own = Resources::new();
            if let Some(m) = c.get("resources").and_then(|r| r.get(kind)).and_then(Json::as_object)
            {
                for (k, q) in m {
                    if let Some(q) = quantity(q) {
                        own.push((k.clone(), q));
                    }
                }
            }
            let sidecar = c.get("restartPolicy").and_then(Json::as_str) == Some("Always");
            if list == "containers" || sidecar {
                merge(&mut sum, &own, true);
            }
            if list == "containers" {
                continue;
            }
            if sidecar {
                merge(&mut sidecars, &own, true);
                own.clone_from(&sidecars);
            } else {
                merge(&mut own, &sidecars, true);
            }
            merge(&mut init, &own, false);
        }
    }
    merge(&mut sum, &init, false);
    sum
}

/// `addResourceList` (`sum`: an existing key summed, keeping the first's format as
/// `Quantity.Add` does) or `maxResourceList` (the larger kept, the present one when equal); a
/// new key is copied.
fn merge(to: &mut Resources, from: &Resources, sum: bool) {
    for (k, q) in from {
        match to.iter_mut().find(|(n, _)| n == k) {
            Some((_, s)) if !sum => {
                if q.compare(s) == std::cmp::Ordering::Greater {
                    *s = q.clone();
                }
            }
            _ => add_quantity(to, k, q),
        }
    }
}

/// `addResourceList` for one quantity: added to `name`'s, keeping the first's format as
/// `Quantity.Add` does (kept as it was if the sum overflows), or a new entry.
pub(super) fn add_quantity(to: &mut Resources, name: &str, q: &Quantity) {
    match to.iter_mut().find(|(n, _)| n == name) {
        Some((_, s)) => {
            if let Ok(t) = s.add(q) {
                *s = t;
            }
        }
        None => to.push((name.to_string(), q.clone())),
    }
}

/// SetDefaults_LimitRangeItem (type Container): default ← max; defaultRequest ← default ← min.
fn limit_range_item(w: &mut Walk, v: &mut Json) {
    let map = |v: &Json, k: &str| v.get(k).and_then(Json::as_object).cloned().unwrap_or_default();
    for (target, sources) in [("default", ["max", "max"]), ("defaultRequest", ["default", "min"])] {
        for src in sources {
            for (k, q) in map(v, src) {
                set(w, v, &format!("{target} #{k}"), q);
            }
        }
    }
}

/// SetDefaults_HorizontalPodAutoscalerBehavior (autoscaling/v2): GenerateHPAScaleUpRules /
/// GenerateHPAScaleDownRules — the defaults, with every non-nil field given copied over.
fn hpa_behavior(w: &mut Walk, v: &mut Json) {
    // defaultHPAScaleUpRules, defaultHPAScaleDownRules
    const RULES: &str = r#"{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},"scaleDown":{"selectPolicy":"Max","policies":[{"type":"Percent","value":100,"periodSeconds":15}]}}"#;
    if v.pointer("/spec/behavior").is_none() {
        return;
    }
    let Ok(Json::Object(all)) = vap_eval_json::from_str(RULES) else { return };
    for (k, rules) in all {
        let Json::Object(d) = rules else { continue };
        for (f, val) in d {
            set(w, v, &format!("spec behavior {k} {f}"), val);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::image_tag;

    #[test]
    fn image_tags_as_parse_image_name_finds_them() {
        // kubernetes pkg/util/parsers ParseImageName: no tag means latest; a port is not a tag.
        assert_eq!(image_tag("nginx"), "latest");
        assert_eq!(image_tag("nginx:1.25"), "1.25");
        assert_eq!(image_tag("registry:5000/team/app"), "latest");
        assert_eq!(image_tag("registry:5000/team/app:v2"), "v2");
        assert_eq!(image_tag("nginx@sha256:abc"), "");
        assert_eq!(image_tag("nginx:latest"), "latest");
    }
}

#[cfg(test)]
mod coverage {
    use super::{NOT_PORTED, PORTED};

    /// Every `SetDefaults_*` function upstream has (as `scripts/gen-objects.py --defaults`
    /// recorded them in `data/objects/setdefaults.txt`) is ported or listed as not ported, and
    /// the port claims no function upstream does not have.
    #[test]
    fn every_upstream_defaulting_function_is_ported_or_listed() {
        let listed = include_str!("../../data/objects/setdefaults.txt");
        let upstream: Vec<(&str, &str)> = listed
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut parts = l.split(' ').skip(1);
                Some((parts.next()?, parts.next()?))
            })
            .collect();
        assert!(upstream.len() > 40, "{} functions listed", upstream.len());
        let known = |gv: &str, f: &str| {
            PORTED.contains(&(gv, f)) || NOT_PORTED.iter().any(|(g, n, _)| (*g, *n) == (gv, f))
        };
        let missing: Vec<_> = upstream.iter().filter(|(gv, f)| !known(gv, f)).collect();
        assert!(missing.is_empty(), "upstream defaulting functions not ported: {missing:?}");
        let stale: Vec<_> = PORTED.iter().filter(|p| !upstream.contains(p)).collect();
        assert!(stale.is_empty(), "ported functions upstream does not have: {stale:?}");
    }
}
