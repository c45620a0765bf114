//! What the registry does to an object after mutating admission and before validating admission.
//!
//! kube-apiserver's generic registry (`staging/src/k8s.io/apiserver/pkg/registry/generic/registry/
//! store.go`) runs, in `Store.Create`: `rest.FillObjectMetaSystemFields` (creationTimestamp now,
//! a new uid), the name from `generateName`, then `rest.BeforeCreate` (`rest/create.go`: the
//! object's namespace made the request's, the kind's `PrepareForCreate`, validation,
//! canonicalisation) — and only then the validating admission callback, which sees that object
//! (and, for a generated name, that name: `rest.AdmissionToValidateObjectFunc`). `Store.Update`
//! likewise runs `rest.BeforeUpdate` (`rest/update.go`: generation, uid, creationTimestamp and the
//! deletion fields carried over from the old object, the kind's `PrepareForUpdate`) before the
//! validating callback. Mutating admission runs earlier, in the handler, and sees none of it.
//!
//! [`before_validation`] models the deterministic part for the kinds listed in [`STRATEGIES`] and
//! custom resources. A clock reading and a random UUID are not deterministic: an object without
//! them gets the placeholders [`PLACEHOLDER_TIME`] and [`PLACEHOLDER_UID`], and a generated name
//! ends in [`NAME_SUFFIX`]; values the object already has stand for the server's (they are what a
//! user who knows them would write). Every change is reported with reason `registry`.

use serde_json::{Map, Value as Json};

use super::defaults::{add_quantity, Resources};
use super::model::Model;
use super::{ChangeReason, ObjectChange};
use crate::environment::KubeVersion;

/// `metadata.uid` of a created object that has none: the nil UUID, plainly not a server's.
pub const PLACEHOLDER_UID: &str = "00000000-0000-0000-0000-000000000000";
/// `metadata.creationTimestamp` of a created object that has none: the Unix epoch, plainly not
/// a clock reading (the apiserver's is the time of the request).
pub const PLACEHOLDER_TIME: &str = "1970-01-01T00:00:00Z";
/// The five random characters `names.SimpleNameGenerator` appends to `generateName` (from
/// `bcdfghjklmnpqrstvwxz2456789`), fixed here so results are reproducible.
pub const NAME_SUFFIX: &str = "xxxxx";

/// How a kind's strategy treats status and generation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    /// `PrepareForCreate` sets the zero status.
    Reset,
    /// Pod: `{phase: Pending, qosClass: …}` (and the SchedulingGated condition).
    Pod,
    /// Namespace: `{phase: Active}`, and the `kubernetes` finalizer.
    Namespace,
    /// Not touched (the kind has no status in the supported versions).
    Untouched,
}

/// When `PrepareForUpdate` bumps `metadata.generation`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bump {
    Never,
    /// A change of `spec`.
    Spec,
    /// A change of `spec` or of `metadata.annotations` (Deployment: annotations are copied to
    /// its ReplicaSets).
    SpecOrAnnotations,
}

/// `(group, kind, status on create, generation 1 on create from minor, generation bump on update)`.
/// Sources: kubernetes `pkg/registry/<group>/<kind>/strategy.go` `PrepareForCreate` /
/// `PrepareForUpdate` (on update every kind listed keeps the old object's status).
#[rustfmt::skip]
const STRATEGIES: &[(&str, &str, Status, u32, Bump)] = &[
    ("apps", "Deployment", Status::Reset, 0, Bump::SpecOrAnnotations),
    ("apps", "ReplicaSet", Status::Reset, 0, Bump::Spec),
    ("apps", "StatefulSet", Status::Reset, 0, Bump::Spec),
    ("apps", "DaemonSet", Status::Reset, 0, Bump::Spec),
    ("batch", "Job", Status::Reset, 0, Bump::Spec),
    ("batch", "CronJob", Status::Reset, 0, Bump::Spec),
    ("", "ReplicationController", Status::Reset, 0, Bump::Spec),
    ("", "Service", Status::Reset, u32::MAX, Bump::Never),
    ("", "PersistentVolumeClaim", Status::Reset, u32::MAX, Bump::Never),
    ("autoscaling", "HorizontalPodAutoscaler", Status::Reset, u32::MAX, Bump::Never),
    ("policy", "PodDisruptionBudget", Status::Reset, 0, Bump::Spec),
    ("networking.k8s.io", "Ingress", Status::Reset, 0, Bump::Spec),
    ("networking.k8s.io", "NetworkPolicy", Status::Untouched, 0, Bump::Spec),
    // Pod generation: set on create and bumped on spec changes since 1.33 (KEP-5067).
    ("", "Pod", Status::Pod, 33, Bump::Spec),
    ("", "Namespace", Status::Namespace, u32::MAX, Bump::Never),
];

/// Kinds served by REST storage that is not the generic registry's create/update (or not
/// created at all): left alone.
const NOT_STORED: &[&str] =
    &["Binding", "Eviction", "Scale", "ComponentStatus", "PodStatusResult", "RangeAllocation"];

/// The request an object arrives with.
pub struct Request<'a> {
    /// CREATE (true) or UPDATE (false); other operations are not modelled.
    pub create: bool,
    /// The request's namespace (empty for cluster-scoped resources).
    pub namespace: &'a str,
    /// Whether the resource is namespaced, when known.
    pub namespaced: Option<bool>,
}

/// The object validating admission sees, and the changes made, or `None` when the registry
/// changes nothing modelled (an unknown kind, a subresource, DELETE, CONNECT).
pub fn before_validation(
    request: &Request,
    object: &Json,
    old: Option<&Json>,
    version: KubeVersion,
    crds: &[Json],
) -> Option<(Json, Vec<ObjectChange>)> {
    let mut out = object.clone();
    let changes = before_validation_in_place(request, &mut out, old, version, crds)?;
    Some((out, changes))
}

/// [`before_validation`] on `out` itself (the request path owns its object: no copy of it).
/// The steps of other kinds and of updates are `#[inline(never)]`: V8 compiles a wasm function
/// whole on its first call, and a page's first `evaluate()` creates a Deployment.
pub fn before_validation_in_place(
    request: &Request,
    out: &mut Json,
    old: Option<&Json>,
    version: KubeVersion,
    crds: &[Json],
) -> Option<Vec<ObjectChange>> {
    let api_version = out.get("apiVersion")?.as_str()?.to_string();
    let kind = out.get("kind")?.as_str()?.to_string();
    let (api_version, kind) = (api_version.as_str(), kind.as_str());
    let (group, ver) = api_version.split_once('/').unwrap_or(("", api_version));
    if NOT_STORED.contains(&kind) || !out.get("metadata").is_none_or(Json::is_object) {
        return None;
    }
    let model = super::model::model(version);
    let root = model.kind(group, ver, kind);
    let crd = if root.is_none() { super::crd::schema_for(crds, group, ver, kind) } else { None };
    if root.is_none() && crd.is_none() {
        return None;
    }
    let old = if request.create { None } else { Some(old?) };
    let daemon_set = group == "apps" && kind == "DaemonSet";
    let mut r = Run { changes: Vec::new(), version, model };
    let strategy = STRATEGIES.iter().find(|s| s.0 == group && s.1 == kind);
    meta_common(&mut r, out, request, old);
    if kind == "Pod" && super::defaults::gate_enabled("PodLevelResourcesFixDefaulting", version) {
        pod_level_resources(&mut r, out, old);
    }
    if daemon_set {
        template_generation(&mut r, out, old);
    }
    match (old, strategy, root) {
        (None, Some(s), Some(root)) => {
            if version.minor >= s.3 {
                r.set(out, &["metadata", "generation"], Some(Json::from(1)));
            }
            let status = match s.2 {
                Status::Reset => Some(Json::Object(Map::new())),
                Status::Pod => Some(pod_status(out, version)),
                Status::Namespace => Some(serde_json::json!({"phase": "Active"})),
                Status::Untouched => None,
            };
            if let Some(status) = status {
                let status = r.encoded(root, "status", status);
                r.set(out, &["status"], Some(status));
            }
            if s.2 == Status::Namespace {
                namespace_finalizer(&mut r, out);
            }
            if kind == "Job" && out.pointer("/spec/manualSelector") != Some(&Json::Bool(true)) {
                job_selector(&mut r, out);
            }
        }
        (Some(old), Some(s), _) => {
            if s.2 == Status::Namespace {
                let f = old.pointer("/spec/finalizers").cloned();
                r.set(out, &["spec", "finalizers"], f);
            }
            if s.2 != Status::Untouched {
                r.set(out, &["status"], old.get("status").cloned());
            }
            let changed = match s.4 {
                Bump::Never => false,
                Bump::Spec => out.get("spec") != old.get("spec"),
                Bump::SpecOrAnnotations => {
                    out.get("spec") != old.get("spec")
                        || out.pointer("/metadata/annotations")
                            != old.pointer("/metadata/annotations")
                }
            };
            if changed && version.minor >= s.3 {
                bump(&mut r, out, old);
            }
        }
        (None, None, None) => {
            // A custom resource (customResourceStrategy.PrepareForCreate): no status when the
            // version has the status subresource; generation 1.
            if crd_status(crds, group, ver, kind) {
                r.set(out, &["status"], None);
            }
            r.set(out, &["metadata", "generation"], Some(Json::from(1)));
        }
        (Some(old), None, None) => {
            // customResourceStrategy.PrepareForUpdate: status kept with the status subresource;
            // generation bumped when anything but metadata (and that status) changed.
            let status = crd_status(crds, group, ver, kind);
            if status {
                r.set(out, &["status"], old.get("status").cloned());
            }
            let content = |v: &Json| {
                let mut m = v.as_object().cloned().unwrap_or_default();
                m.remove("metadata");
                if status {
                    m.remove("status");
                }
                m
            };
            if content(out) != content(old) {
                bump(&mut r, out, old);
            }
        }
        _ => {}
    }
    Some(r.changes)
}

struct Run<'m> {
    changes: Vec<ObjectChange>,
    version: KubeVersion,
    model: &'m Model,
}

impl Run<'_> {
    /// Set (`Some`) or remove (`None`) the value at `path`, creating objects on the way, and
    /// record it when it differs.
    fn set(&mut self, v: &mut Json, path: &[&str], value: Option<Json>) {
        let Some((last, parents)) = path.split_last() else { return };
        let mut cur = &mut *v;
        for p in parents {
            let Json::Object(m) = cur else { return };
            if !m.contains_key(*p) {
                if value.is_none() {
                    return;
                }
                m.insert(p.to_string(), Json::Object(Map::new()));
            }
            // The key's string made only when it is added (above), not for every step.
            let Some(next) = m.get_mut(*p) else { return };
            cur = next;
            if cur.is_null() {
                *cur = Json::Object(Map::new());
            }
        }
        let Json::Object(m) = cur else { return };
        let old = m.get_mut(*last);
        if old.as_deref() == value.as_ref() {
            return;
        }
        // The value replaced, taken from the map (not a copy of it).
        let before = match (&value, old) {
            (Some(x), Some(old)) => Some(std::mem::replace(old, x.clone())),
            (Some(x), None) => m.insert(last.to_string(), x.clone()),
            (None, _) => m.remove(*last),
        };
        self.changes.push(ObjectChange {
            object: "object".into(),
            path: path.join("."),
            before,
            after: value,
            reason: ChangeReason::Registry,
        });
    }

    /// Set map key `key` under `path` (created as needed), rendered `path[key]`.
    fn set_key(&mut self, v: &mut Json, path: &[&str], key: &str, value: Json) {
        let mut cur = &mut *v;
        for p in path {
            let Json::Object(m) = cur else { return };
            cur = m.entry(p.to_string()).or_insert_with(|| Json::Object(Map::new()));
            if cur.is_null() {
                *cur = Json::Object(Map::new());
            }
        }
        let Json::Object(m) = cur else { return };
        let before = m.insert(key.to_string(), value.clone());
        if before.as_ref() == Some(&value) {
            return;
        }
        self.changes.push(ObjectChange {
            object: "object".into(),
            path: format!("{}[{key}]", path.join(".")),
            before,
            after: Some(value),
            reason: ChangeReason::Registry,
        });
    }

    /// `value` (a struct of field `field` of type `root`) as the converter writes it.
    fn encoded(&self, root: &str, field: &str, mut value: Json) -> Json {
        let shape = self
            .model
            .fields(root)
            .and_then(|f| f.iter().find(|f| f.name == field))
            .map(|f| f.shape);
        if let Some(shape) = shape {
            let mut w = super::gojson::Walk::new(self.model, self.version, "object");
            // Its changes are the registry's own, listed by `set` (native only: see
            // `Walk::record`).
            #[cfg(not(target_arch = "wasm32"))]
            {
                w.record = false;
            }
            w.encode_value(&mut value, shape);
        }
        value
    }
}

/// FillObjectMetaSystemFields, the generated name and the namespace on create; BeforeUpdate's
/// carried-over metadata on update.
fn meta_common(r: &mut Run, out: &mut Json, request: &Request, old: Option<&Json>) {
    // `metadata.<k>`, looked at in place (copied only to be set).
    fn at<'v>(v: &'v Json, k: &str) -> Option<&'v Json> {
        v.get("metadata")?.get(k)
    }
    let meta = |v: &Json, k: &str| at(v, k).cloned();
    fn given<'v>(v: &'v Json, k: &str) -> Option<&'v Json> {
        at(v, k).filter(|x| !x.is_null() && x.as_str().is_none_or(|s| !s.is_empty()))
    }
    // EnsureObjectNamespaceMatchesRequestNamespace (create) / ValidNamespace (update).
    match request.namespaced {
        Some(true) if given(out, "namespace").is_none() && !request.namespace.is_empty() => {
            r.set(out, &["metadata", "namespace"], Some(Json::from(request.namespace)));
        }
        Some(false) if given(out, "namespace").is_some() => {
            r.set(out, &["metadata", "namespace"], None);
        }
        _ => {}
    }
    match old {
        None => {
            if given(out, "creationTimestamp").is_none() {
                r.set(out, &["metadata", "creationTimestamp"], Some(Json::from(PLACEHOLDER_TIME)));
            }
            if given(out, "uid").is_none() {
                r.set(out, &["metadata", "uid"], Some(Json::from(PLACEHOLDER_UID)));
            }
            if given(out, "name").is_none() {
                if let Some(base) =
                    given(out, "generateName").and_then(|g| g.as_str().map(str::to_string))
                {
                    // SimpleNameGenerator: the prefix cut to 58 bytes (63 − 5) plus five characters.
                    let cut: String = base
                        .chars()
                        .scan(0, |n, c| {
                            *n += c.len_utf8();
                            (*n <= 58).then_some(c)
                        })
                        .collect();
                    r.set(
                        out,
                        &["metadata", "name"],
                        Some(Json::from(format!("{cut}{NAME_SUFFIX}"))),
                    );
                }
            }
        }
        Some(old) => {
            // BeforeUpdate: requests cannot set generation; an empty uid is the old one; the
            // creation and deletion timestamps and the grace period cannot change.
            r.set(out, &["metadata", "generation"], meta(old, "generation"));
            if given(out, "uid").is_none() && given(old, "uid").is_some() {
                r.set(out, &["metadata", "uid"], meta(old, "uid"));
            }
            for k in ["creationTimestamp", "deletionTimestamp"] {
                if given(old, k).is_some() {
                    r.set(out, &["metadata", k], meta(old, k));
                }
            }
            if given(old, "deletionGracePeriodSeconds").is_some()
                && given(out, "deletionGracePeriodSeconds").is_none()
            {
                r.set(
                    out,
                    &["metadata", "deletionGracePeriodSeconds"],
                    meta(old, "deletionGracePeriodSeconds"),
                );
            }
        }
    }
}

/// `metadata.generation` = the old one + 1.
#[inline(never)]
fn bump(r: &mut Run, out: &mut Json, old: &Json) {
    let g = old.pointer("/metadata/generation").and_then(Json::as_i64).unwrap_or(0);
    r.set(out, &["metadata", "generation"], Some(Json::from(g.saturating_add(1))));
}

/// Whether the CRD's version `ver` has the status subresource.
#[inline(never)]
fn crd_status(crds: &[Json], group: &str, ver: &str, kind: &str) -> bool {
    crds.iter()
        .filter(|c| {
            c.pointer("/spec/group").and_then(Json::as_str) == Some(group)
                && c.pointer("/spec/names/kind").and_then(Json::as_str) == Some(kind)
        })
        .filter_map(|c| c.pointer("/spec/versions").and_then(Json::as_array))
        .flatten()
        .find(|v| v.get("name").and_then(Json::as_str) == Some(ver))
        .is_some_and(|v| v.pointer("/subresources/status").is_some())
}

/// DaemonSet `spec.templateGeneration`, which apps/v1 carries in the annotation
/// `deprecated.daemonset.template.generation` (conversion.go: read into the internal field,
/// written back on every conversion to v1): at least 1 on create (daemonSetStrategy.
/// PrepareForCreate); the old one on update, + 1 when the pod template changed
/// (PrepareForUpdate).
#[inline(never)]
fn template_generation(r: &mut Run, out: &mut Json, old: Option<&Json>) {
    const KEY: &str = "deprecated.daemonset.template.generation";
    let read = |v: &Json| {
        v.pointer("/metadata/annotations/deprecated.daemonset.template.generation")
            .and_then(Json::as_str)
            .and_then(|s| s.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let g = match old {
        None => read(out).max(1),
        Some(old) if out.pointer("/spec/template") != old.pointer("/spec/template") => {
            read(old).saturating_add(1)
        }
        Some(old) => read(old),
    };
    r.set_key(out, &["metadata", "annotations"], KEY, Json::from(g.to_string()));
}

/// jobStrategy.PrepareForCreate's generateSelector (unless `manualSelector`): the pod template
/// labelled with the job's name and uid, the selector matching the uid.
#[inline(never)]
fn job_selector(r: &mut Run, out: &mut Json) {
    let name = out.pointer("/metadata/name").cloned().unwrap_or(Json::from(""));
    let uid = out.pointer("/metadata/uid").cloned().unwrap_or(Json::from(""));
    let labels = ["spec", "template", "metadata", "labels"];
    for (key, value) in [
        ("job-name", &name),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("batch.kubernetes.io/controller-uid", &uid),
    ] {
        if out
            .pointer(&format!("/spec/template/metadata/labels/{}", key.replace('/', "~1")))
            .is_none()
        {
            r.set_key(out, &labels, key, value.clone());
        }
    }
    let key = "batch.kubernetes.io/controller-uid";
    if out.pointer("/spec/selector/matchLabels/batch.kubernetes.io~1controller-uid").is_none() {
        r.set_key(out, &["spec", "selector", "matchLabels"], key, uid);
    }
}

/// namespaceStrategy.PrepareForCreate: the `kubernetes` finalizer is appended when missing.
#[inline(never)]
fn namespace_finalizer(r: &mut Run, out: &mut Json) {
    let mut list: Vec<Json> =
        out.pointer("/spec/finalizers").and_then(Json::as_array).cloned().unwrap_or_default();
    if !list.iter().any(|f| f.as_str() == Some("kubernetes")) {
        list.push(Json::from("kubernetes"));
        r.set(out, &["spec", "finalizers"], Some(Json::Array(list)));
    }
}

/// The Pod strategy's pod-level resource defaults from 1.37 (PodLevelResourcesFixDefaulting,
/// kubernetes#140514: pkg/api/pod DefaultPodLevelResources, [`super::defaults::pod_level_defaults`]):
/// on create before the QoS class is computed from them; on update only when the old Pod had no
/// pod-level requests or limits (the resize subresource, which also defaults, is not modelled).
#[inline(never)]
fn pod_level_resources(r: &mut Run, out: &mut Json, old: Option<&Json>) {
    let set = |v: &Json| {
        ["requests", "limits"].iter().any(|k| {
            v.pointer("/spec/resources")
                .and_then(|r| r.get(k))
                .and_then(Json::as_object)
                .is_some_and(|m| !m.is_empty())
        })
    };
    if old.is_some_and(set) {
        return;
    }
    let put = out.get("spec").map(|s| super::defaults::pod_level_defaults(s, true));
    for (list, k, q) in put.unwrap_or_default() {
        r.set_key(out, &["spec", "resources", list], &k, q);
    }
}

/// podStrategy.PrepareForCreate's status: phase Pending, the QoS class
/// (`pkg/apis/core/helper/qos` ComputePodQOS) and, with scheduling gates, the PodScheduled
/// condition `SchedulingGated` (`applySchedulingGatedCondition`).
#[inline(never)]
fn pod_status(pod: &Json, version: KubeVersion) -> Json {
    let mut status = Map::new();
    status.insert("phase".into(), Json::from("Pending"));
    status.insert("qosClass".into(), Json::from(pod_qos(pod, version)));
    let gated = pod
        .get("spec")
        .and_then(|s| s.get("schedulingGates"))
        .and_then(Json::as_array)
        .is_some_and(|g| !g.is_empty());
    if gated {
        status.insert(
            "conditions".into(),
            serde_json::json!([{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates"}]),
        );
    }
    Json::Object(status)
}

/// ComputePodQOS (pkg/apis/core/helper/qos): only cpu and memory count, and only positive
/// quantities; Guaranteed when every container limits both and the summed requests equal the
/// summed limits, BestEffort with neither, else Burstable. Under PodLevelResources (on from
/// 1.34) a Pod with `spec.resources` is classed by its pod-level requests and limits instead —
/// in 1.34–1.36 whenever `spec.resources` is there, even empty (kubernetes#135082); from 1.37
/// (PodLevelResourcesFixKubeletQOSClass, kubernetes#137150) only when it requests or limits cpu,
/// memory or a hugepage size.
fn pod_qos(pod: &Json, version: KubeVersion) -> &'static str {
    let mut requests = Resources::new();
    let mut limits = Resources::new();
    let mut guaranteed = true;
    let positive = |v: &Json| super::defaults::quantity(v).filter(|q| q.sign() > 0);
    let spec = pod.get("spec");
    let level = spec.and_then(|s| s.get("resources")).filter(|r| r.is_object());
    let pod_level = level.filter(|r| {
        use super::defaults::gate_enabled;
        let supported = |k: &String| k == "cpu" || k == "memory" || k.starts_with("hugepages-");
        let set = ["requests", "limits"].iter().any(|kind| {
            r.get(kind).and_then(Json::as_object).is_some_and(|m| m.keys().any(supported))
        });
        gate_enabled("PodLevelResources", version)
            && (!gate_enabled("PodLevelResourcesFixKubeletQOSClass", version) || set)
    });
    let containers =
        |list: &str| spec.and_then(|s| s.get(list)).and_then(Json::as_array).map(Vec::as_slice);
    // The pod level is one "container" here, except that it may give no limits at all.
    let lists: [&[Json]; 2] = match pod_level {
        Some(r) => [std::slice::from_ref(r), &[]],
        None => {
            [containers("containers").unwrap_or(&[]), containers("initContainers").unwrap_or(&[])]
        }
    };
    for cs in lists {
        for c in cs {
            let mut found = 0;
            let resources = if pod_level.is_some() { Some(c) } else { c.get("resources") };
            let limited = resources
                .and_then(|r| r.get("limits"))
                .and_then(Json::as_object)
                .is_some_and(|m| !m.is_empty());
            for (kind, sum) in [("requests", &mut requests), ("limits", &mut limits)] {
                let Some(m) = resources.and_then(|r| r.get(kind)).and_then(Json::as_object) else {
                    continue;
                };
                for (name, v) in m.iter().filter(|(n, _)| *n == "cpu" || *n == "memory") {
                    if let Some(q) = positive(v) {
                        if kind == "limits" {
                            found += 1;
                        }
                        add_quantity(sum, name, &q);
                    }
                }
            }
            // At the pod level, only limits that are given must hold both.
            if found < 2 && (pod_level.is_none() || limited) {
                guaranteed = false;
            }
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    let matches = requests.iter().all(|(n, r)| {
        limits.iter().any(|(m, l)| m == n && l.compare(r) == std::cmp::Ordering::Equal)
    });
    if guaranteed && matches && requests.len() == limits.len() {
        "Guaranteed"
    } else {
        "Burstable"
    }
}
