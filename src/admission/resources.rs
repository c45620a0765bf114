//! What the apiserver's REST mapper and discovery know: kinds ↔ resources, scope,
//! subresource kinds and equivalent resources — for built-in kinds (table below) and for the
//! CustomResourceDefinitions supplied with the input.
//!
//! The built-in table lists the kinds served **by default** by recent Kubernetes (1.33–1.37);
//! beta/alpha APIs that are off by default are left out.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// `schema.GroupVersionKind`. JSON form `{group, version, kind}` (as in `request.kind`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct GroupVersionKind {
    /// `""` is the core group.
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl GroupVersionKind {
    pub fn new(group: &str, version: &str, kind: &str) -> Self {
        GroupVersionKind { group: group.into(), version: version.into(), kind: kind.into() }
    }
    /// From `apiVersion` (`group/version` or `version`) and `kind`. `None` if `apiVersion` has
    /// more than one `/` (`schema.ParseGroupVersion` error).
    pub fn from_api_version(api_version: &str, kind: &str) -> Option<Self> {
        let (g, v) = parse_group_version(api_version).ok()?;
        Some(GroupVersionKind { group: g, version: v, kind: kind.into() })
    }
    /// `apiVersion` form: `version` for the core group, else `group/version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// `schema.GroupVersionKind.String()`: `example.com/v1, Kind=Foo`; core prints `/v1, Kind=Pod`.
impl fmt::Display for GroupVersionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// `schema.GroupVersionResource`. JSON form `{group, version, resource}`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct GroupVersionResource {
    /// `""` is the core group.
    pub group: String,
    pub version: String,
    /// Plural resource name, without subresource.
    pub resource: String,
}

impl GroupVersionResource {
    pub fn new(group: &str, version: &str, resource: &str) -> Self {
        GroupVersionResource {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
        }
    }
}

impl fmt::Display for GroupVersionResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}, Resource={}", self.group, self.version, self.resource)
    }
}

/// `schema.ParseGroupVersion`: `""` and `"/"` are the empty group-version; `v` is core;
/// `g/v`; more slashes: `unexpected GroupVersion string: <s>`.
pub fn parse_group_version(s: &str) -> Result<(String, String), String> {
    if s.is_empty() || s == "/" {
        return Ok((String::new(), String::new()));
    }
    match s.matches('/').count() {
        0 => Ok((String::new(), s.to_string())),
        1 => {
            let (g, v) = s.split_once('/').unwrap_or((s, ""));
            Ok((g.to_string(), v.to_string()))
        }
        _ => Err(format!("unexpected GroupVersion string: {s}")),
    }
}

/// Where a resource definition came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceSource {
    Builtin,
    /// A supplied CustomResourceDefinition (its `metadata.name`).
    Crd(String),
}

/// One served (group, version, resource) and its kind and scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceInfo {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Plural resource name.
    pub resource: String,
    pub namespaced: bool,
    pub source: ResourceSource,
    /// Subresources with their request kinds (`None`: same kind as the resource).
    pub subresources: Vec<(String, Option<GroupVersionKind>)>,
}

impl ResourceInfo {
    pub fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::new(&self.group, &self.version, &self.kind)
    }
    pub fn gvr(&self) -> GroupVersionResource {
        GroupVersionResource::new(&self.group, &self.version, &self.resource)
    }
}

// (group, versions, kind, plural, namespaced)
const BUILTIN: &[(&str, &[&str], &str, &str, bool)] = &[
    ("", &["v1"], "Pod", "pods", true),
    ("", &["v1"], "Service", "services", true),
    ("", &["v1"], "Endpoints", "endpoints", true),
    ("", &["v1"], "ConfigMap", "configmaps", true),
    ("", &["v1"], "Secret", "secrets", true),
    ("", &["v1"], "ServiceAccount", "serviceaccounts", true),
    ("", &["v1"], "PersistentVolumeClaim", "persistentvolumeclaims", true),
    ("", &["v1"], "PersistentVolume", "persistentvolumes", false),
    ("", &["v1"], "Namespace", "namespaces", false),
    ("", &["v1"], "Node", "nodes", false),
    ("", &["v1"], "Event", "events", true),
    ("", &["v1"], "LimitRange", "limitranges", true),
    ("", &["v1"], "ResourceQuota", "resourcequotas", true),
    ("", &["v1"], "ReplicationController", "replicationcontrollers", true),
    ("", &["v1"], "PodTemplate", "podtemplates", true),
    ("", &["v1"], "Binding", "bindings", true),
    ("", &["v1"], "ComponentStatus", "componentstatuses", false),
    ("apps", &["v1"], "Deployment", "deployments", true),
    ("apps", &["v1"], "StatefulSet", "statefulsets", true),
    ("apps", &["v1"], "DaemonSet", "daemonsets", true),
    ("apps", &["v1"], "ReplicaSet", "replicasets", true),
    ("apps", &["v1"], "ControllerRevision", "controllerrevisions", true),
    ("batch", &["v1"], "Job", "jobs", true),
    ("batch", &["v1"], "CronJob", "cronjobs", true),
    ("autoscaling", &["v2", "v1"], "HorizontalPodAutoscaler", "horizontalpodautoscalers", true),
    ("networking.k8s.io", &["v1"], "Ingress", "ingresses", true),
    ("networking.k8s.io", &["v1"], "IngressClass", "ingressclasses", false),
    ("networking.k8s.io", &["v1"], "NetworkPolicy", "networkpolicies", true),
    ("networking.k8s.io", &["v1"], "IPAddress", "ipaddresses", false),
    ("networking.k8s.io", &["v1"], "ServiceCIDR", "servicecidrs", false),
    ("policy", &["v1"], "PodDisruptionBudget", "poddisruptionbudgets", true),
    ("rbac.authorization.k8s.io", &["v1"], "Role", "roles", true),
    ("rbac.authorization.k8s.io", &["v1"], "RoleBinding", "rolebindings", true),
    ("rbac.authorization.k8s.io", &["v1"], "ClusterRole", "clusterroles", false),
    ("rbac.authorization.k8s.io", &["v1"], "ClusterRoleBinding", "clusterrolebindings", false),
    ("storage.k8s.io", &["v1"], "StorageClass", "storageclasses", false),
    ("storage.k8s.io", &["v1"], "VolumeAttachment", "volumeattachments", false),
    ("storage.k8s.io", &["v1"], "CSIDriver", "csidrivers", false),
    ("storage.k8s.io", &["v1"], "CSINode", "csinodes", false),
    ("storage.k8s.io", &["v1"], "CSIStorageCapacity", "csistoragecapacities", true),
    ("storage.k8s.io", &["v1"], "VolumeAttributesClass", "volumeattributesclasses", false),
    (
        "admissionregistration.k8s.io",
        &["v1"],
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
    ),
    (
        "admissionregistration.k8s.io",
        &["v1"],
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
    ),
    (
        "admissionregistration.k8s.io",
        &["v1"],
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        false,
    ),
    (
        "admissionregistration.k8s.io",
        &["v1"],
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        false,
    ),
    (
        "apiextensions.k8s.io",
        &["v1"],
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
    ),
    ("apiregistration.k8s.io", &["v1"], "APIService", "apiservices", false),
    ("coordination.k8s.io", &["v1"], "Lease", "leases", true),
    ("discovery.k8s.io", &["v1"], "EndpointSlice", "endpointslices", true),
    ("events.k8s.io", &["v1"], "Event", "events", true),
    ("scheduling.k8s.io", &["v1"], "PriorityClass", "priorityclasses", false),
    ("node.k8s.io", &["v1"], "RuntimeClass", "runtimeclasses", false),
    (
        "certificates.k8s.io",
        &["v1"],
        "CertificateSigningRequest",
        "certificatesigningrequests",
        false,
    ),
    ("flowcontrol.apiserver.k8s.io", &["v1"], "FlowSchema", "flowschemas", false),
    (
        "flowcontrol.apiserver.k8s.io",
        &["v1"],
        "PriorityLevelConfiguration",
        "prioritylevelconfigurations",
        false,
    ),
    ("resource.k8s.io", &["v1"], "DeviceClass", "deviceclasses", false),
    ("resource.k8s.io", &["v1"], "ResourceClaim", "resourceclaims", true),
    ("resource.k8s.io", &["v1"], "ResourceClaimTemplate", "resourceclaimtemplates", true),
    ("resource.k8s.io", &["v1"], "ResourceSlice", "resourceslices", false),
    ("authentication.k8s.io", &["v1"], "TokenReview", "tokenreviews", false),
    ("authentication.k8s.io", &["v1"], "SelfSubjectReview", "selfsubjectreviews", false),
    ("authorization.k8s.io", &["v1"], "SubjectAccessReview", "subjectaccessreviews", false),
    ("authorization.k8s.io", &["v1"], "SelfSubjectAccessReview", "selfsubjectaccessreviews", false),
    ("authorization.k8s.io", &["v1"], "SelfSubjectRulesReview", "selfsubjectrulesreviews", false),
    (
        "authorization.k8s.io",
        &["v1"],
        "LocalSubjectAccessReview",
        "localsubjectaccessreviews",
        true,
    ),
];

/// Subresources of built-in resources and their request kinds (`None`: the parent's kind).
fn builtin_subresources(group: &str, resource: &str) -> Vec<(String, Option<GroupVersionKind>)> {
    let scale = || Some(GroupVersionKind::new("autoscaling", "v1", "Scale"));
    let core = |k: &str| Some(GroupVersionKind::new("", "v1", k));
    let mut subs: Vec<(&str, Option<GroupVersionKind>)> = match (group, resource) {
        ("", "pods") => vec![
            ("status", None),
            ("ephemeralcontainers", None),
            ("resize", None),
            ("binding", core("Binding")),
            ("eviction", Some(GroupVersionKind::new("policy", "v1", "Eviction"))),
            ("exec", core("PodExecOptions")),
            ("attach", core("PodAttachOptions")),
            ("portforward", core("PodPortForwardOptions")),
            ("proxy", core("PodProxyOptions")),
        ],
        ("", "services") => vec![("status", None), ("proxy", core("ServiceProxyOptions"))],
        ("", "nodes") => vec![("status", None), ("proxy", core("NodeProxyOptions"))],
        ("", "namespaces") => vec![("status", None), ("finalize", None)],
        ("", "serviceaccounts") => {
            vec![(
                "token",
                Some(GroupVersionKind::new("authentication.k8s.io", "v1", "TokenRequest")),
            )]
        }
        ("", "replicationcontrollers") => vec![("status", None), ("scale", scale())],
        ("apps", "deployments" | "replicasets" | "statefulsets") => {
            vec![("status", None), ("scale", scale())]
        }
        (
            "",
            "configmaps" | "secrets" | "endpoints" | "events" | "limitranges" | "podtemplates",
        ) => {
            vec![]
        }
        (
            _,
            "controllerrevisions"
            | "clusterroles"
            | "roles"
            | "rolebindings"
            | "clusterrolebindings",
        ) => vec![],
        ("certificates.k8s.io", "certificatesigningrequests") => {
            vec![("status", None), ("approval", None)]
        }
        _ => vec![("status", None)],
    };
    subs.drain(..).map(|(s, k)| (s.to_string(), k)).collect()
}

/// The kinds and resources known offline: built-ins plus supplied CRDs.
#[derive(Clone, Debug)]
pub struct ResourceCatalog {
    entries: Vec<ResourceInfo>,
}

impl Default for ResourceCatalog {
    fn default() -> Self {
        Self::builtin()
    }
}

impl ResourceCatalog {
    /// The built-in kinds only.
    pub fn builtin() -> Self {
        let mut entries = Vec::new();
        for (group, versions, kind, plural, namespaced) in BUILTIN {
            for v in *versions {
                entries.push(ResourceInfo {
                    group: group.to_string(),
                    version: v.to_string(),
                    kind: kind.to_string(),
                    resource: plural.to_string(),
                    namespaced: *namespaced,
                    source: ResourceSource::Builtin,
                    subresources: builtin_subresources(group, plural),
                });
            }
        }
        ResourceCatalog { entries }
    }

    /// Add the served versions of a `CustomResourceDefinition` (JSON). Returns `false` if the
    /// object lacks `spec.group` / `spec.names.plural` / `spec.names.kind`. (Out of line: most
    /// manifests hold no CRD, and a page's first `evaluate()` compiles whatever its caller holds.)
    #[inline(never)]
    pub fn add_crd(&mut self, crd: &Value) -> bool {
        let spec = &crd["spec"];
        let (Some(group), Some(plural), Some(kind)) = (
            spec["group"].as_str(),
            spec["names"]["plural"].as_str(),
            spec["names"]["kind"].as_str(),
        ) else {
            return false;
        };
        let namespaced = spec["scope"].as_str() != Some("Cluster");
        let name = crd["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let versions = spec["versions"].as_array().cloned().unwrap_or_default();
        for v in versions {
            let Some(vname) = v["name"].as_str() else {
                continue;
            };
            if v["served"].as_bool() == Some(false) {
                continue;
            }
            let mut subresources = Vec::new();
            let subs = &v["subresources"];
            if subs.get("status").is_some() {
                subresources.push(("status".to_string(), None));
            }
            if subs.get("scale").is_some() {
                subresources.push((
                    "scale".to_string(),
                    Some(GroupVersionKind::new("autoscaling", "v1", "Scale")),
                ));
            }
            self.entries
                .retain(|e| !(e.group == group && e.version == vname && e.resource == plural));
            self.entries.push(ResourceInfo {
                group: group.into(),
                version: vname.into(),
                kind: kind.into(),
                resource: plural.into(),
                namespaced,
                source: ResourceSource::Crd(name.clone()),
                subresources,
            });
        }
        true
    }

    /// Every served (group, version, resource), built-ins first (discovery).
    pub fn entries(&self) -> &[ResourceInfo] {
        &self.entries
    }

    /// The resource serving `gvk` (REST mapper `RESTMapping`).
    pub fn by_kind(&self, gvk: &GroupVersionKind) -> Option<&ResourceInfo> {
        self.entries
            .iter()
            .find(|e| e.group == gvk.group && e.version == gvk.version && e.kind == gvk.kind)
    }

    /// REST mapper `KindsFor(group, version, resource)` as the VAP type checker calls it
    /// (`DefaultRESTMapper.ResourcesFor`): the resource matches a plural or the singular (the
    /// lower-cased kind), case-insensitively; an empty group matches every group.
    pub fn kinds_for(&self, group: &str, version: &str, resource: &str) -> Vec<GroupVersionKind> {
        // Resource names are ASCII (DNS labels); Go lower-cases with strings.ToLower.
        let resource = resource.to_ascii_lowercase();
        let mut out: Vec<GroupVersionKind> = Vec::new();
        for e in &self.entries {
            let matches = (group.is_empty() || e.group == group)
                && e.version == version
                && (e.resource == resource || e.kind.to_ascii_lowercase() == resource);
            if matches && !out.contains(&e.gvk()) {
                out.push(e.gvk());
            }
        }
        out
    }

    /// The entry for `gvr`.
    pub fn by_resource(&self, gvr: &GroupVersionResource) -> Option<&ResourceInfo> {
        self.entries.iter().find(|e| {
            e.group == gvr.group && e.version == gvr.version && e.resource == gvr.resource
        })
    }

    /// `KindFor(gvr, subresource)`: the request kind; `None` if unknown.
    pub fn kind_for(
        &self,
        gvr: &GroupVersionResource,
        subresource: &str,
    ) -> Option<GroupVersionKind> {
        let e = self.by_resource(gvr)?;
        if subresource.is_empty() {
            return Some(e.gvk());
        }
        e.subresources
            .iter()
            .find(|(s, _)| s == subresource)
            .map(|(_, k)| k.clone().unwrap_or_else(|| e.gvk()))
    }

    /// Equivalent resources of `gvr` + `subresource` (same storage), in registration order,
    /// **including** `gvr` itself when known. Supported equivalences: versions of the same
    /// built-in group-resource (e.g. `autoscaling/v2` ↔ `autoscaling/v1`
    /// horizontalpodautoscalers), core `events` ↔ `events.k8s.io` `events`, and the served
    /// versions of a CRD. Historical ones (`extensions/v1beta1` deployments …) are not served
    /// by current clusters and are not listed.
    pub fn equivalents(
        &self,
        gvr: &GroupVersionResource,
        subresource: &str,
    ) -> Vec<GroupVersionResource> {
        let same_storage = |e: &ResourceInfo| {
            (e.group == gvr.group && e.resource == gvr.resource)
                || (gvr.resource == "events"
                    && e.resource == "events"
                    && matches!(gvr.group.as_str(), "" | "events.k8s.io")
                    && matches!(e.group.as_str(), "" | "events.k8s.io"))
        };
        self.entries
            .iter()
            .filter(|e| same_storage(e))
            .filter(|e| {
                subresource.is_empty() || e.subresources.iter().any(|(s, _)| s == subresource)
            })
            .map(|e| e.gvr())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_lookups() {
        let c = ResourceCatalog::builtin();
        let d = c.by_kind(&GroupVersionKind::new("apps", "v1", "Deployment")).unwrap();
        assert_eq!(d.resource, "deployments");
        assert!(d.namespaced);
        assert_eq!(
            c.kind_for(&GroupVersionResource::new("apps", "v1", "deployments"), "scale"),
            Some(GroupVersionKind::new("autoscaling", "v1", "Scale"))
        );
        assert_eq!(
            c.equivalents(
                &GroupVersionResource::new("autoscaling", "v1", "horizontalpodautoscalers"),
                ""
            ),
            vec![
                GroupVersionResource::new("autoscaling", "v2", "horizontalpodautoscalers"),
                GroupVersionResource::new("autoscaling", "v1", "horizontalpodautoscalers")
            ]
        );
        assert_eq!(GroupVersionKind::new("", "v1", "ConfigMap").to_string(), "/v1, Kind=ConfigMap");
        assert!(parse_group_version("a/b/c").is_err());
    }

    #[test]
    fn crds() {
        let mut c = ResourceCatalog::builtin();
        let crd = serde_json::json!({"metadata": {"name": "widgets.example.com"}, "spec": {
            "group": "example.com", "scope": "Cluster",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "subresources": {"scale": {}}}, {"name": "v2", "served": true}]}});
        assert!(c.add_crd(&crd));
        let w = c.by_kind(&GroupVersionKind::new("example.com", "v2", "Widget")).unwrap();
        assert!(!w.namespaced);
        assert_eq!(c.equivalents(&w.gvr(), "").len(), 2);
        assert_eq!(c.equivalents(&w.gvr(), "scale").len(), 1);
    }
}
