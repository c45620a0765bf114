//! The imperative defaulting functions of the API groups, ported by hand from kubernetes/kubernetes
//! `pkg/apis/<group>/<version>/defaults.go` (each function cites its original). The declarative
//! `+default` markers need no port: they are in the generated data ([`super::model`]).
//!
//! [`apply`] runs at every struct of the walk, before its fields' markers and before its
//! children, as `zz_generated.defaults.go` orders the calls. Go nil and zero values are an absent
//! key here ([`super::gojson`]). Where a default depends on a field newer than some supported
//! version, it is set only where the version's type has the field. Feature-gated defaults follow
//! the gate's default in the supported versions; [`NOT_PORTED`] lists what is left out.
//!
//! Sources read (kubernetes/kubernetes, as stored by the project's code index): core/v1
//! 023f88a3, apps/v1 04791b49, batch/v1 (PodFailurePolicy and JobPodReplacementPolicy version),
//! rbac/v1 7c30c06e, networking/v1 030880a5, storage/v1 01aa0f3f, autoscaling/v2 1adaa753,
//! admissionregistration/v1 08433067, discovery/v1 650c573d, scheduling/v1 24e5d1fd.

use serde_json::{json, Map, Value as Json};

use super::gojson::Walk;
use super::{ChangeReason, Seg};

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
    ("admissionregistration/v1", "SetDefaults_MutatingWebhook"),
    ("admissionregistration/v1", "SetDefaults_Rule"),
    ("admissionregistration/v1", "SetDefaults_ServiceReference"),
    ("admissionregistration/v1", "SetDefaults_ValidatingWebhook"),
    ("discovery/v1", "SetDefaults_EndpointPort"),
    ("scheduling/v1", "SetDefaults_PriorityClass"),
];

/// `SetDefaults_*` functions deliberately not ported, with the reason.
pub const NOT_PORTED: &[(&str, &str, &str)] = &[
    ("core/v1", "SetDefaults_ResourceList", "rounds quantities up to milli precision (`0.0001` → `1m`); quantities are canonicalised but not rounded"),
    ("core/v1", "SetDefaults_PodLogOptions", "not an object admission sees (a subresource's options)"),
];

/// A relative path step inside the struct being defaulted.
#[derive(Clone, Copy)]
enum P<'a> {
    /// A struct field.
    K(&'a str),
    /// A map key.
    M(&'a str),
    /// A list index.
    I(usize),
}

fn get<'v>(m: &'v Map<String, Json>, path: &[P]) -> Option<&'v Json> {
    let (first, rest) = path.split_first()?;
    let mut cur = match first {
        P::K(k) | P::M(k) => m.get(*k)?,
        P::I(_) => return None,
    };
    for p in rest {
        cur = match (p, cur) {
            (P::K(k) | P::M(k), Json::Object(o)) => o.get(*k)?,
            (P::I(i), Json::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// The string at `path`, `""` when absent (a Go zero string).
fn s<'v>(m: &'v Map<String, Json>, path: &[P]) -> &'v str {
    get(m, path).and_then(Json::as_str).unwrap_or("")
}

fn len(m: &Map<String, Json>, path: &[P]) -> usize {
    match get(m, path) {
        Some(Json::Array(a)) => a.len(),
        Some(Json::Object(o)) => o.len(),
        _ => 0,
    }
}

fn nil(m: &Map<String, Json>, path: &[P]) -> bool {
    get(m, path).is_none()
}

/// Set `path` to `value` (intermediate structs created), recorded as a default.
fn set(w: &mut Walk, m: &mut Map<String, Json>, path: &[P], value: Json) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut cur = m;
    for p in parents {
        let next = match p {
            P::K(k) | P::M(k) => cur.entry(k.to_string()).or_insert_with(|| json!({})),
            P::I(_) => return,
        };
        cur = match next {
            Json::Object(o) => o,
            _ => return,
        };
    }
    // A list element on the path: only `I` directly before the last key is supported.
    match last {
        P::K(k) | P::M(k) => {
            cur.insert(k.to_string(), value);
        }
        P::I(_) => return,
    }
    let segs: Vec<Seg> = path
        .iter()
        .map(|p| match p {
            P::K(k) | P::M(k) => Seg::Key(k.to_string()),
            P::I(i) => Seg::Index(*i),
        })
        .collect();
    let maps: Vec<bool> = path.iter().map(|p| matches!(p, P::M(_))).collect();
    w.event_rel(&segs, &maps, ChangeReason::Default);
}

/// Set `key` of the list element `list[i]` (a struct) to `value`.
fn set_in_list(
    w: &mut Walk,
    m: &mut Map<String, Json>,
    list: &[P],
    i: usize,
    key: &str,
    value: Json,
) {
    let Some(Json::Object(item)) = get_mut(m, list).and_then(|l| l.get_mut(i)) else { return };
    item.insert(key.to_string(), value);
    let mut segs: Vec<Seg> = list
        .iter()
        .map(|p| match p {
            P::K(k) | P::M(k) => Seg::Key(k.to_string()),
            P::I(i) => Seg::Index(*i),
        })
        .collect();
    segs.push(Seg::Index(i));
    segs.push(Seg::Key(key.to_string()));
    w.event_rel(&segs, &[], ChangeReason::Default);
}

fn get_mut<'v>(m: &'v mut Map<String, Json>, path: &[P]) -> Option<&'v mut Json> {
    let (first, rest) = path.split_first()?;
    let mut cur = match first {
        P::K(k) | P::M(k) => m.get_mut(*k)?,
        P::I(_) => return None,
    };
    for p in rest {
        cur = match (p, cur) {
            (P::K(k) | P::M(k), Json::Object(o)) => o.get_mut(*k)?,
            (P::I(i), Json::Array(a)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// `SetDefaults_<T>` for struct type `ty` (qualified, `core.v1.Container`), if there is one.
// One arm per upstream function, its body the function's: a guard would pull the function's
// first condition into the arm's pattern.
#[allow(clippy::collapsible_match)]
pub fn apply(w: &mut Walk, ty: &str, m: &mut Map<String, Json>) {
    match ty {
        "core.v1.Container" | "core.v1.EphemeralContainer" => container(w, m),
        "core.v1.Pod" => pod(w, m),
        "core.v1.PodSpec" => pod_spec(w, m),
        "core.v1.Probe" => probe(w, m),
        "core.v1.HTTPGetAction" => {
            // SetDefaults_HTTPGetAction
            if s(m, &[P::K("path")]).is_empty() {
                set(w, m, &[P::K("path")], json!("/"));
            }
            if s(m, &[P::K("scheme")]).is_empty() {
                set(w, m, &[P::K("scheme")], json!("HTTP"));
            }
        }
        // SetDefaults_{Secret,ConfigMap,DownwardAPI,Projected}VolumeSource: 0644.
        "core.v1.SecretVolumeSource"
        | "core.v1.ConfigMapVolumeSource"
        | "core.v1.DownwardAPIVolumeSource"
        | "core.v1.ProjectedVolumeSource" => {
            if nil(m, &[P::K("defaultMode")]) {
                set(w, m, &[P::K("defaultMode")], json!(0o644));
            }
        }
        "core.v1.ServiceAccountTokenProjection" => {
            // SetDefaults_ServiceAccountTokenProjection: one hour.
            if nil(m, &[P::K("expirationSeconds")]) {
                set(w, m, &[P::K("expirationSeconds")], json!(3600));
            }
        }
        "core.v1.Secret" => {
            // SetDefaults_Secret
            if s(m, &[P::K("type")]).is_empty() {
                set(w, m, &[P::K("type")], json!("Opaque"));
            }
        }
        "core.v1.ConfigMap" => {
            // SetDefaults_ConfigMap: an empty map (omitempty: the converter drops it again).
            if nil(m, &[P::K("data")]) && w.model.has_field(ty, "data") {
                m.insert("data".into(), json!({}));
            }
        }
        "core.v1.Volume" => {
            // SetDefaults_Volume: no source at all is an emptyDir.
            if m.keys().all(|k| k == "name") {
                set(w, m, &[P::K("emptyDir")], json!({}));
            }
        }
        "core.v1.HostPathVolumeSource" => {
            // SetDefaults_HostPathVolumeSource: HostPathUnset ("").
            if nil(m, &[P::K("type")]) {
                set(w, m, &[P::K("type")], json!(""));
            }
        }
        "core.v1.PersistentVolume" => {
            // SetDefaults_PersistentVolume
            if s(m, &[P::K("status"), P::K("phase")]).is_empty() {
                set(w, m, &[P::K("status"), P::K("phase")], json!("Pending"));
            }
            if s(m, &[P::K("spec"), P::K("persistentVolumeReclaimPolicy")]).is_empty() {
                set(w, m, &[P::K("spec"), P::K("persistentVolumeReclaimPolicy")], json!("Retain"));
            }
            if nil(m, &[P::K("spec"), P::K("volumeMode")]) {
                set(w, m, &[P::K("spec"), P::K("volumeMode")], json!("Filesystem"));
            }
        }
        "core.v1.PersistentVolumeClaim" => {
            // SetDefaults_PersistentVolumeClaim
            if s(m, &[P::K("status"), P::K("phase")]).is_empty() {
                set(w, m, &[P::K("status"), P::K("phase")], json!("Pending"));
            }
        }
        "core.v1.PersistentVolumeClaimSpec" => {
            // SetDefaults_PersistentVolumeClaimSpec
            if nil(m, &[P::K("volumeMode")]) {
                set(w, m, &[P::K("volumeMode")], json!("Filesystem"));
            }
        }
        "core.v1.Endpoints" => {
            // SetDefaults_Endpoints: every subset port's protocol TCP.
            for i in 0..len(m, &[P::K("subsets")]) {
                let ports = [P::K("subsets"), P::I(i), P::K("ports")];
                for j in 0..len(m, &ports) {
                    if s(m, &[P::K("subsets"), P::I(i), P::K("ports"), P::I(j), P::K("protocol")])
                        .is_empty()
                    {
                        set_in_list(w, m, &ports, j, "protocol", json!("TCP"));
                    }
                }
            }
        }
        "core.v1.Namespace" => {
            // SetDefaults_Namespace: the kubernetes.io/metadata.name label.
            let name = s(m, &[P::K("metadata"), P::K("name")]).to_string();
            if !name.is_empty()
                && s(m, &[P::K("metadata"), P::K("labels"), P::M("kubernetes.io/metadata.name")])
                    != name
            {
                let path = [P::K("metadata"), P::K("labels"), P::M("kubernetes.io/metadata.name")];
                set(w, m, &path, json!(name));
            }
        }
        "core.v1.NamespaceStatus" => {
            // SetDefaults_NamespaceStatus
            if s(m, &[P::K("phase")]).is_empty() {
                set(w, m, &[P::K("phase")], json!("Active"));
            }
        }
        "core.v1.NodeStatus" => {
            // SetDefaults_NodeStatus: allocatable is the capacity when not given.
            if nil(m, &[P::K("allocatable")]) {
                if let Some(c) = get(m, &[P::K("capacity")]).cloned() {
                    set(w, m, &[P::K("allocatable")], c);
                }
            }
        }
        "core.v1.ObjectFieldSelector" => {
            // SetDefaults_ObjectFieldSelector
            if s(m, &[P::K("apiVersion")]).is_empty() {
                set(w, m, &[P::K("apiVersion")], json!("v1"));
            }
        }
        "core.v1.LimitRangeItem" => limit_range_item(w, m),
        "core.v1.ReplicationController" => {
            // SetDefaults_ReplicationController: selector and labels from the template's labels.
            if let Some(labels) =
                get(m, &[P::K("spec"), P::K("template"), P::K("metadata"), P::K("labels")]).cloned()
            {
                if len(m, &[P::K("spec"), P::K("selector")]) == 0 {
                    set(w, m, &[P::K("spec"), P::K("selector")], labels.clone());
                }
                if len(m, &[P::K("metadata"), P::K("labels")]) == 0 {
                    set(w, m, &[P::K("metadata"), P::K("labels")], labels);
                }
            }
        }
        "core.v1.Service" => service(w, m),
        "apps.v1.Deployment" => deployment(w, m),
        "apps.v1.DaemonSet" => daemon_set(w, m),
        "apps.v1.StatefulSet" => stateful_set(w, m),
        "apps.v1.ReplicaSet" => {
            // SetDefaults_ReplicaSet
            if nil(m, &[P::K("spec"), P::K("replicas")]) {
                set(w, m, &[P::K("spec"), P::K("replicas")], json!(1));
            }
        }
        "batch.v1.Job" => job(w, m),
        "batch.v1.CronJob" => cron_job(w, m),
        "batch.v1.PodFailurePolicyOnPodConditionsPattern" => {
            // SetDefaults_PodFailurePolicyOnPodConditionsPattern
            if s(m, &[P::K("status")]).is_empty() {
                set(w, m, &[P::K("status")], json!("True"));
            }
        }
        "rbac.v1.ClusterRoleBinding" | "rbac.v1.RoleBinding" => {
            // SetDefaults_{Cluster,}RoleBinding
            if s(m, &[P::K("roleRef"), P::K("apiGroup")]).is_empty() {
                set(w, m, &[P::K("roleRef"), P::K("apiGroup")], json!("rbac.authorization.k8s.io"));
            }
        }
        "rbac.v1.Subject" => {
            // SetDefaults_Subject: User and Group subjects are in the RBAC group.
            if s(m, &[P::K("apiGroup")]).is_empty()
                && matches!(s(m, &[P::K("kind")]), "User" | "Group")
            {
                set(w, m, &[P::K("apiGroup")], json!("rbac.authorization.k8s.io"));
            }
        }
        "networking.v1.NetworkPolicyPort" => {
            // SetDefaults_NetworkPolicyPort
            if nil(m, &[P::K("protocol")]) {
                set(w, m, &[P::K("protocol")], json!("TCP"));
            }
        }
        "networking.v1.NetworkPolicy" => {
            // SetDefaults_NetworkPolicy: Ingress, and Egress when egress rules are given.
            if len(m, &[P::K("spec"), P::K("policyTypes")]) == 0 {
                let mut types = vec![json!("Ingress")];
                if len(m, &[P::K("spec"), P::K("egress")]) != 0 {
                    types.push(json!("Egress"));
                }
                set(w, m, &[P::K("spec"), P::K("policyTypes")], Json::Array(types));
            }
        }
        "networking.v1.IngressClass" => {
            // SetDefaults_IngressClass
            if !nil(m, &[P::K("spec"), P::K("parameters")])
                && nil(m, &[P::K("spec"), P::K("parameters"), P::K("scope")])
            {
                set(w, m, &[P::K("spec"), P::K("parameters"), P::K("scope")], json!("Cluster"));
            }
        }
        "storage.v1.StorageClass" => {
            // SetDefaults_StorageClass
            if nil(m, &[P::K("reclaimPolicy")]) {
                set(w, m, &[P::K("reclaimPolicy")], json!("Delete"));
            }
            if nil(m, &[P::K("volumeBindingMode")]) {
                set(w, m, &[P::K("volumeBindingMode")], json!("Immediate"));
            }
        }
        "storage.v1.CSIDriver" => {
            // SetDefaults_CSIDriver (CSIVolumeFSGroupPolicy and CSIInlineVolume are GA).
            for (k, v) in [
                ("attachRequired", json!(true)),
                ("podInfoOnMount", json!(false)),
                ("storageCapacity", json!(false)),
                ("fsGroupPolicy", json!("ReadWriteOnceWithFSType")),
                ("requiresRepublish", json!(false)),
            ] {
                if nil(m, &[P::K("spec"), P::K(k)]) {
                    set(w, m, &[P::K("spec"), P::K(k)], v);
                }
            }
            if len(m, &[P::K("spec"), P::K("volumeLifecycleModes")]) == 0 {
                set(w, m, &[P::K("spec"), P::K("volumeLifecycleModes")], json!(["Persistent"]));
            }
        }
        "autoscaling.v2.HorizontalPodAutoscaler" => hpa_v2(w, m),
        "admissionregistration.v1.ValidatingWebhook"
        | "admissionregistration.v1.MutatingWebhook" => {
            // SetDefaults_{Validating,Mutating}Webhook
            let mut d = vec![
                ("failurePolicy", json!("Fail")),
                ("matchPolicy", json!("Equivalent")),
                ("namespaceSelector", json!({})),
                ("objectSelector", json!({})),
                ("sideEffects", json!("Unknown")),
                ("timeoutSeconds", json!(30)),
            ];
            if ty.ends_with("MutatingWebhook") {
                d.push(("reinvocationPolicy", json!("Never")));
            }
            for (k, v) in d {
                if nil(m, &[P::K(k)]) {
                    set(w, m, &[P::K(k)], v);
                }
            }
            if len(m, &[P::K("admissionReviewVersions")]) == 0 {
                set(w, m, &[P::K("admissionReviewVersions")], json!(["v1"]));
            }
        }
        // SetDefaults_Rule, on Rule and the types that embed it (their fields are inlined).
        "admissionregistration.v1.Rule"
        | "admissionregistration.v1.RuleWithOperations"
        | "admissionregistration.v1.NamedRuleWithOperations" => {
            if nil(m, &[P::K("scope")]) {
                set(w, m, &[P::K("scope")], json!("*"));
            }
        }
        "admissionregistration.v1.ServiceReference" => {
            // SetDefaults_ServiceReference
            if nil(m, &[P::K("port")]) {
                set(w, m, &[P::K("port")], json!(443));
            }
        }
        "discovery.v1.EndpointPort" => {
            // SetDefaults_EndpointPort
            if nil(m, &[P::K("name")]) {
                set(w, m, &[P::K("name")], json!(""));
            }
            if nil(m, &[P::K("protocol")]) {
                set(w, m, &[P::K("protocol")], json!("TCP"));
            }
        }
        "scheduling.v1.PriorityClass" => {
            // SetDefaults_PriorityClass
            if nil(m, &[P::K("preemptionPolicy")]) {
                set(w, m, &[P::K("preemptionPolicy")], json!("PreemptLowerPriority"));
            }
        }
        _ => {}
    }
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

/// SetDefaults_Container (and SetDefaults_EphemeralContainer, which calls it).
fn container(w: &mut Walk, m: &mut Map<String, Json>) {
    if s(m, &[P::K("imagePullPolicy")]).is_empty() {
        // `Always` for the `latest` tag (also when no tag is given), else `IfNotPresent`.
        let policy =
            if image_tag(s(m, &[P::K("image")])) == "latest" { "Always" } else { "IfNotPresent" };
        set(w, m, &[P::K("imagePullPolicy")], json!(policy));
    }
    if s(m, &[P::K("terminationMessagePath")]).is_empty() {
        set(w, m, &[P::K("terminationMessagePath")], json!("/dev/termination-log"));
    }
    if s(m, &[P::K("terminationMessagePolicy")]).is_empty() {
        set(w, m, &[P::K("terminationMessagePolicy")], json!("File"));
    }
}

/// SetDefaults_Pod: container requests from limits, enableServiceLinks, host ports under
/// hostNetwork. (Pod-level resource defaults behind PodLevelResources are not ported.)
fn pod(w: &mut Walk, m: &mut Map<String, Json>) {
    for list in ["containers", "initContainers"] {
        for i in 0..len(m, &[P::K("spec"), P::K(list)]) {
            let base = [P::K("spec"), P::K(list), P::I(i), P::K("resources")];
            let Some(Json::Object(limits)) =
                get(m, &[base[0], base[1], base[2], base[3], P::K("limits")]).cloned()
            else {
                continue;
            };
            for (k, v) in limits {
                let req = [base[0], base[1], base[2], base[3], P::K("requests"), P::M(&k)];
                if nil(m, &req) {
                    set_nested_in_list(w, m, list, i, &k, v);
                }
            }
        }
    }
    if nil(m, &[P::K("spec"), P::K("enableServiceLinks")]) {
        set(w, m, &[P::K("spec"), P::K("enableServiceLinks")], json!(true));
    }
    if get(m, &[P::K("spec"), P::K("hostNetwork")]) == Some(&json!(true)) {
        for list in ["containers", "initContainers"] {
            for i in 0..len(m, &[P::K("spec"), P::K(list)]) {
                let ports = [P::K("spec"), P::K(list), P::I(i), P::K("ports")];
                for j in 0..len(m, &ports) {
                    let port = |k| [ports[0], ports[1], ports[2], ports[3], P::I(j), P::K(k)];
                    let host = get(m, &port("hostPort")).and_then(Json::as_i64).unwrap_or(0);
                    if host == 0 {
                        if let Some(c) = get(m, &port("containerPort")).cloned() {
                            set_in_list(w, m, &ports, j, "hostPort", c);
                        }
                    }
                }
            }
        }
    }
}

/// `spec.<list>[i].resources.requests[key] = value` (requests created when nil).
fn set_nested_in_list(
    w: &mut Walk,
    m: &mut Map<String, Json>,
    list: &str,
    i: usize,
    key: &str,
    value: Json,
) {
    let Some(Json::Object(c)) = get_mut(m, &[P::K("spec"), P::K(list), P::I(i)]) else { return };
    let res = c.entry("resources").or_insert_with(|| json!({}));
    let Json::Object(res) = res else { return };
    let req = res.entry("requests").or_insert_with(|| json!({}));
    let Json::Object(req) = req else { return };
    req.insert(key.to_string(), value);
    let segs = [
        Seg::Key("spec".into()),
        Seg::Key(list.into()),
        Seg::Index(i),
        Seg::Key("resources".into()),
        Seg::Key("requests".into()),
        Seg::Key(key.into()),
    ];
    w.event_rel(&segs, &[false, false, false, false, false, true], ChangeReason::Default);
}

/// SetDefaults_PodSpec
fn pod_spec(w: &mut Walk, m: &mut Map<String, Json>) {
    if s(m, &[P::K("dnsPolicy")]).is_empty() {
        set(w, m, &[P::K("dnsPolicy")], json!("ClusterFirst"));
    }
    if s(m, &[P::K("restartPolicy")]).is_empty() {
        set(w, m, &[P::K("restartPolicy")], json!("Always"));
    }
    if nil(m, &[P::K("securityContext")]) {
        set(w, m, &[P::K("securityContext")], json!({}));
    }
    if nil(m, &[P::K("terminationGracePeriodSeconds")]) {
        set(w, m, &[P::K("terminationGracePeriodSeconds")], json!(30));
    }
    if s(m, &[P::K("schedulerName")]).is_empty() {
        set(w, m, &[P::K("schedulerName")], json!("default-scheduler"));
    }
}

/// SetDefaults_Probe
fn probe(w: &mut Walk, m: &mut Map<String, Json>) {
    for (k, v) in [
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ] {
        if get(m, &[P::K(k)]).and_then(Json::as_i64).unwrap_or(0) == 0 {
            set(w, m, &[P::K(k)], json!(v));
        }
    }
}

/// SetDefaults_LimitRangeItem: for containers, default ← max, defaultRequest ← default ← min.
fn limit_range_item(w: &mut Walk, m: &mut Map<String, Json>) {
    if s(m, &[P::K("type")]) != "Container" {
        return;
    }
    let map = |m: &Map<String, Json>, k| {
        get(m, &[P::K(k)]).and_then(Json::as_object).cloned().unwrap_or_default()
    };
    let max = map(m, "max");
    let min = map(m, "min");
    let mut default = map(m, "default");
    let mut request = map(m, "defaultRequest");
    for (k, v) in &max {
        if !default.contains_key(k) {
            default.insert(k.clone(), v.clone());
            w.event_rel(
                &[Seg::Key("default".into()), Seg::Key(k.clone())],
                &[false, true],
                ChangeReason::Default,
            );
        }
    }
    for (k, v) in default.iter().chain(min.iter()) {
        if !request.contains_key(k) {
            request.insert(k.clone(), v.clone());
            w.event_rel(
                &[Seg::Key("defaultRequest".into()), Seg::Key(k.clone())],
                &[false, true],
                ChangeReason::Default,
            );
        }
    }
    m.insert("default".into(), Json::Object(default));
    m.insert("defaultRequest".into(), Json::Object(request));
}

/// SetDefaults_Service
fn service(w: &mut Walk, m: &mut Map<String, Json>) {
    let spec = |k| [P::K("spec"), P::K(k)];
    if s(m, &spec("sessionAffinity")).is_empty() {
        set(w, m, &spec("sessionAffinity"), json!("None"));
    }
    match s(m, &spec("sessionAffinity")) {
        "None" => {
            if let Some(Json::Object(sp)) = get_mut(m, &[P::K("spec")]) {
                if sp.remove("sessionAffinityConfig").is_some() {
                    w.event_rel(
                        &[Seg::Key("spec".into()), Seg::Key("sessionAffinityConfig".into())],
                        &[],
                        ChangeReason::Default,
                    );
                }
            }
        }
        "ClientIP" => {
            let t = [
                P::K("spec"),
                P::K("sessionAffinityConfig"),
                P::K("clientIP"),
                P::K("timeoutSeconds"),
            ];
            if nil(m, &t) {
                set(
                    w,
                    m,
                    &spec("sessionAffinityConfig"),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    if s(m, &spec("type")).is_empty() {
        set(w, m, &spec("type"), json!("ClusterIP"));
    }
    let ports = spec("ports");
    for i in 0..len(m, &ports) {
        let at = |k| [P::K("spec"), P::K("ports"), P::I(i), P::K(k)];
        if s(m, &at("protocol")).is_empty() {
            set_in_list(w, m, &ports, i, "protocol", json!("TCP"));
        }
        let target = get(m, &at("targetPort"));
        if target.is_none() || target == Some(&json!(0)) || target == Some(&json!("")) {
            let port = get(m, &at("port")).cloned().unwrap_or(json!(0));
            set_in_list(w, m, &ports, i, "targetPort", port);
        }
    }
    let ty = s(m, &spec("type")).to_string();
    // service.ExternallyAccessible
    let external = ty == "LoadBalancer"
        || ty == "NodePort"
        || (ty == "ClusterIP" && len(m, &spec("externalIPs")) > 0);
    if external && s(m, &spec("externalTrafficPolicy")).is_empty() {
        set(w, m, &spec("externalTrafficPolicy"), json!("Cluster"));
    }
    if nil(m, &spec("internalTrafficPolicy"))
        && matches!(ty.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP")
    {
        set(w, m, &spec("internalTrafficPolicy"), json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        if nil(m, &spec("allocateLoadBalancerNodePorts")) {
            set(w, m, &spec("allocateLoadBalancerNodePorts"), json!(true));
        }
        let ingress = [P::K("status"), P::K("loadBalancer"), P::K("ingress")];
        if w.model.has_field("core.v1.LoadBalancerIngress", "ipMode") {
            for i in 0..len(m, &ingress) {
                let at =
                    |k| [P::K("status"), P::K("loadBalancer"), P::K("ingress"), P::I(i), P::K(k)];
                if !s(m, &at("ip")).is_empty() && nil(m, &at("ipMode")) {
                    set_in_list(w, m, &ingress, i, "ipMode", json!("VIP"));
                }
            }
        }
    }
}

/// SetDefaults_Deployment
fn deployment(w: &mut Walk, m: &mut Map<String, Json>) {
    let spec = |k| [P::K("spec"), P::K(k)];
    if nil(m, &spec("replicas")) {
        set(w, m, &spec("replicas"), json!(1));
    }
    let ty = [P::K("spec"), P::K("strategy"), P::K("type")];
    if s(m, &ty).is_empty() {
        set(w, m, &ty, json!("RollingUpdate"));
    }
    if s(m, &ty) == "RollingUpdate" {
        let ru = |k| [P::K("spec"), P::K("strategy"), P::K("rollingUpdate"), P::K(k)];
        if nil(m, &ru("maxUnavailable")) {
            set(w, m, &ru("maxUnavailable"), json!("25%"));
        }
        if nil(m, &ru("maxSurge")) {
            set(w, m, &ru("maxSurge"), json!("25%"));
        }
    }
    if nil(m, &spec("revisionHistoryLimit")) {
        set(w, m, &spec("revisionHistoryLimit"), json!(10));
    }
    if nil(m, &spec("progressDeadlineSeconds")) {
        set(w, m, &spec("progressDeadlineSeconds"), json!(600));
    }
}

/// SetDefaults_DaemonSet
fn daemon_set(w: &mut Walk, m: &mut Map<String, Json>) {
    let ty = [P::K("spec"), P::K("updateStrategy"), P::K("type")];
    if s(m, &ty).is_empty() {
        set(w, m, &ty, json!("RollingUpdate"));
    }
    if s(m, &ty) == "RollingUpdate" {
        let ru = |k| [P::K("spec"), P::K("updateStrategy"), P::K("rollingUpdate"), P::K(k)];
        if nil(m, &ru("maxUnavailable")) {
            set(w, m, &ru("maxUnavailable"), json!(1));
        }
        if nil(m, &ru("maxSurge")) {
            set(w, m, &ru("maxSurge"), json!(0));
        }
    }
    if nil(m, &[P::K("spec"), P::K("revisionHistoryLimit")]) {
        set(w, m, &[P::K("spec"), P::K("revisionHistoryLimit")], json!(10));
    }
}

/// SetDefaults_StatefulSet (StatefulSetAutoDeletePVC: on in every supported version).
fn stateful_set(w: &mut Walk, m: &mut Map<String, Json>) {
    let spec = |k| [P::K("spec"), P::K(k)];
    if s(m, &spec("podManagementPolicy")).is_empty() {
        set(w, m, &spec("podManagementPolicy"), json!("OrderedReady"));
    }
    let ty = [P::K("spec"), P::K("updateStrategy"), P::K("type")];
    let ru = [P::K("spec"), P::K("updateStrategy"), P::K("rollingUpdate")];
    if s(m, &ty).is_empty() {
        set(w, m, &ty, json!("RollingUpdate"));
        if nil(m, &ru) {
            set(w, m, &ru, json!({}));
        }
    }
    let partition = [ru[0], ru[1], ru[2], P::K("partition")];
    if s(m, &ty) == "RollingUpdate" && !nil(m, &ru) && nil(m, &partition) {
        set(w, m, &partition, json!(0));
    }
    let policy = |k| [P::K("spec"), P::K("persistentVolumeClaimRetentionPolicy"), P::K(k)];
    for k in ["whenDeleted", "whenScaled"] {
        if s(m, &policy(k)).is_empty() {
            set(w, m, &policy(k), json!("Retain"));
        }
    }
    if nil(m, &spec("replicas")) {
        set(w, m, &spec("replicas"), json!(1));
    }
    if nil(m, &spec("revisionHistoryLimit")) {
        set(w, m, &spec("revisionHistoryLimit"), json!(10));
    }
}

/// SetDefaults_Job (JobPodReplacementPolicy: beta, on, in every supported version).
fn job(w: &mut Walk, m: &mut Map<String, Json>) {
    let spec = |k| [P::K("spec"), P::K(k)];
    if nil(m, &spec("completions")) && nil(m, &spec("parallelism")) {
        set(w, m, &spec("completions"), json!(1));
        set(w, m, &spec("parallelism"), json!(1));
    }
    if nil(m, &spec("parallelism")) {
        set(w, m, &spec("parallelism"), json!(1));
    }
    if nil(m, &spec("backoffLimit")) {
        let per_index = !nil(m, &spec("backoffLimitPerIndex"));
        set(w, m, &spec("backoffLimit"), json!(if per_index { i32::MAX as i64 } else { 6 }));
    }
    let labels = [P::K("spec"), P::K("template"), P::K("metadata"), P::K("labels")];
    if let Some(l) = get(m, &labels).cloned() {
        if len(m, &[P::K("metadata"), P::K("labels")]) == 0 {
            set(w, m, &[P::K("metadata"), P::K("labels")], l);
        }
    }
    if nil(m, &spec("completionMode")) {
        set(w, m, &spec("completionMode"), json!("NonIndexed"));
    }
    if nil(m, &spec("suspend")) {
        set(w, m, &spec("suspend"), json!(false));
    }
    if nil(m, &spec("podReplacementPolicy"))
        && w.model.has_field("batch.v1.JobSpec", "podReplacementPolicy")
    {
        let failed = !nil(m, &spec("podFailurePolicy"));
        set(
            w,
            m,
            &spec("podReplacementPolicy"),
            json!(if failed { "Failed" } else { "TerminatingOrFailed" }),
        );
    }
}

/// SetDefaults_CronJob
fn cron_job(w: &mut Walk, m: &mut Map<String, Json>) {
    let spec = |k| [P::K("spec"), P::K(k)];
    if s(m, &spec("concurrencyPolicy")).is_empty() {
        set(w, m, &spec("concurrencyPolicy"), json!("Allow"));
    }
    for (k, v) in [
        ("suspend", json!(false)),
        ("successfulJobsHistoryLimit", json!(3)),
        ("failedJobsHistoryLimit", json!(1)),
    ] {
        if nil(m, &spec(k)) {
            set(w, m, &spec(k), v);
        }
    }
}

/// SetDefaults_HorizontalPodAutoscaler and SetDefaults_HorizontalPodAutoscalerBehavior
/// (autoscaling/v2).
fn hpa_v2(w: &mut Walk, m: &mut Map<String, Json>) {
    let spec = |k| [P::K("spec"), P::K(k)];
    if nil(m, &spec("minReplicas")) {
        set(w, m, &spec("minReplicas"), json!(1));
    }
    if len(m, &spec("metrics")) == 0 {
        let cpu = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]);
        set(w, m, &spec("metrics"), cpu);
    }
    if nil(m, &spec("behavior")) {
        return;
    }
    // GenerateHPAScaleUpRules / GenerateHPAScaleDownRules: the defaults, with every non-nil
    // field of the given rules copied over.
    let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15}]});
    let down = json!({"selectPolicy": "Max", "policies": [
        {"type": "Percent", "value": 100, "periodSeconds": 15}]});
    for (k, defaults) in [("scaleUp", up), ("scaleDown", down)] {
        let path = [P::K("spec"), P::K("behavior"), P::K(k)];
        let Json::Object(mut rules) = defaults else { continue };
        let given = get(m, &path).and_then(Json::as_object).cloned().unwrap_or_default();
        let mut changed = false;
        for (f, v) in rules.iter_mut() {
            match given.get(f) {
                Some(g) => *v = g.clone(),
                None => changed = true,
            }
        }
        for (f, g) in given {
            rules.entry(f).or_insert(g);
        }
        if changed {
            set(w, m, &path, Json::Object(rules));
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
