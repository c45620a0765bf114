//! The admission request (the apiserver's `admission.Attributes`, §1.1), derivation of the
//! parts a user leaves out, and the JSON form of `request` that CEL sees (§4.3).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::diagnostics;
use super::resources::{GroupVersionKind, GroupVersionResource, ResourceCatalog};
use crate::diagnostic::Diagnostic;

/// The four operations admission sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    pub fn parse(s: &str) -> Option<Operation> {
        match s {
            "CREATE" => Some(Operation::Create),
            "UPDATE" => Some(Operation::Update),
            "DELETE" => Some(Operation::Delete),
            "CONNECT" => Some(Operation::Connect),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// `authenticationv1.UserInfo`. Every field may be empty.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UserInfo {
    pub username: String,
    pub uid: String,
    pub groups: Vec<String>,
    pub extra: BTreeMap<String, Vec<String>>,
}

/// What the user supplies: any field may be left out and is then derived
/// ([`derive_request`]). JSON/YAML keys are those of `admission.k8s.io/v1` `AdmissionRequest`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RequestInput {
    pub operation: Option<String>,
    pub kind: Option<GroupVersionKind>,
    pub resource: Option<GroupVersionResource>,
    pub sub_resource: Option<String>,
    pub request_kind: Option<GroupVersionKind>,
    pub request_resource: Option<GroupVersionResource>,
    pub request_sub_resource: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub user_info: Option<UserInfo>,
    pub dry_run: Option<bool>,
    pub options: Option<Value>,
    pub object: Option<Value>,
    pub old_object: Option<Value>,
}

/// A complete admission request.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    pub operation: Operation,
    /// Kind of the request (for subresources the subresource's kind, e.g. `autoscaling/v1 Scale`).
    pub kind: GroupVersionKind,
    pub resource: GroupVersionResource,
    /// Empty when the request is not for a subresource.
    pub sub_resource: String,
    /// The originally requested kind/resource (differs only when the apiserver converted).
    pub request_kind: GroupVersionKind,
    pub request_resource: GroupVersionResource,
    pub request_sub_resource: String,
    /// Empty for `generateName` creates.
    pub name: String,
    /// Empty for cluster-scoped resources; the namespace's own name for `namespaces` requests.
    pub namespace: String,
    pub user_info: UserInfo,
    pub dry_run: bool,
    /// The options object (`CreateOptions`, …); `None` renders as `null`.
    pub options: Option<Value>,
    /// `None` on DELETE.
    pub object: Option<Value>,
    /// `None` on CREATE and CONNECT.
    pub old_object: Option<Value>,
    /// Scope of `resource` when known from the catalog.
    pub namespaced: Option<bool>,
}

impl AdmissionRequest {
    /// The request targets core `v1` `namespaces` (any subresource).
    pub fn is_namespace_resource(&self) -> bool {
        self.resource.group.is_empty() && self.resource.resource == "namespaces"
    }
}

// Paths of `derive_request_owned` the usual request does not take, out of line (V8 compiles a
// function whole on its first call, so cold code inlined into it costs a page's first
// `evaluate()`).

#[cold]
#[inline(never)]
fn unsupported_operation(s: &str) -> Diagnostic {
    diagnostics::request_underivable(
        "operation",
        format!(
            "unsupported operation {}: admission sees CREATE, UPDATE, DELETE and CONNECT",
            super::field::go_quote(s)
        ),
    )
}

/// The kind, resource and scope of a request that names its resource (`k` its kind, if given).
#[cold]
#[inline(never)]
fn given_resource(
    k: Option<&GroupVersionKind>,
    r: &GroupVersionResource,
    catalog: &ResourceCatalog,
    sub_resource: &str,
    object_gvk: Option<GroupVersionKind>,
    diags: &mut Vec<Diagnostic>,
) -> Option<(GroupVersionKind, GroupVersionResource, Option<bool>)> {
    let ns = catalog.by_resource(r).map(|e| e.namespaced);
    let kind = match k.cloned().or_else(|| catalog.kind_for(r, sub_resource)).or(object_gvk) {
        Some(kind) => kind,
        None => {
            diags.push(diagnostics::request_underivable(
                "kind",
                format!("cannot derive the kind of resource {r} (subresource {sub_resource:?}): supply kind"),
            ));
            return None;
        }
    };
    Some((kind, r.clone(), ns))
}

/// A subresource request without a resource: a subresource whose body is the parent object
/// itself (`status`, …): the object's kind names the parent resource. Other bodies (Scale,
/// Eviction) don't.
#[cold]
#[inline(never)]
fn subresource_parent(
    kind: GroupVersionKind,
    catalog: &ResourceCatalog,
    sub_resource: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<(GroupVersionKind, GroupVersionResource, Option<bool>)> {
    let parent = catalog
        .by_kind(&kind)
        .filter(|e| catalog.kind_for(&e.gvr(), sub_resource).is_none_or(|k| k == kind));
    let Some(e) = parent else {
        diags.push(diagnostics::request_underivable(
            "resource",
            "a subresource request needs resource (the parent resource, e.g. {group: apps, version: v1, resource: deployments})",
        ));
        return None;
    };
    diags.push(diagnostics::request_derived(
        "resource",
        format!(
            "resource {} derived from the object's kind for subresource {sub_resource:?}",
            e.gvr()
        ),
    ));
    let gvr = e.gvr();
    let namespaced = e.namespaced;
    Some((kind, gvr, Some(namespaced)))
}

#[cold]
#[inline(never)]
fn unknown_kind(kind: &GroupVersionKind) -> Diagnostic {
    diagnostics::request_underivable(
        "resource",
        format!("no resource is known for kind {kind}: supply resource, or the CustomResourceDefinition"),
    )
}

/// The options object admission gets for a request without one (`kind`: `CreateOptions`, …).
#[inline(never)]
fn options_object(kind: &str) -> Value {
    // Built directly, not with `json!` (which serializes each value): once a request.
    let mut m = serde_json::Map::with_capacity(2);
    m.insert("kind".to_string(), Value::String(kind.to_string()));
    m.insert("apiVersion".to_string(), Value::String("meta.k8s.io/v1".to_string()));
    Value::Object(m)
}

fn meta_str<'a>(obj: Option<&'a Value>, key: &str) -> Option<&'a str> {
    obj?.get("metadata")?.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// Fill in what the user left out (§1.1):
/// * `operation`: object only → CREATE, both → UPDATE, oldObject only → DELETE;
/// * `kind` from the object's `apiVersion`/`kind` (or from `resource` + `subResource`);
///   `resource` and scope from the catalog (built-ins and supplied CRDs);
/// * `name`/`namespace` from `metadata`; requests for `namespaces` use the namespace's own name
///   as namespace; namespaced requests without any namespace get `default` (kubectl's);
/// * `requestKind`/`requestResource`/`requestSubResource` default to `kind`/`resource`/`subResource`;
/// * `options` default to the options kind of the operation (`{"kind":"CreateOptions",
///   "apiVersion":"meta.k8s.io/v1"}` …; `null` for CONNECT).
///
/// Returns `None` (with error diagnostics) when the operation or resource cannot be determined.
pub fn derive_request(
    input: &RequestInput,
    catalog: &ResourceCatalog,
) -> (Option<AdmissionRequest>, Vec<Diagnostic>) {
    derive_request_owned(input.clone(), catalog)
}

/// [`derive_request`], taking the input: its objects become the request's without a copy.
pub fn derive_request_owned(
    mut input: RequestInput,
    catalog: &ResourceCatalog,
) -> (Option<AdmissionRequest>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let has_obj = input.object.as_ref().is_some_and(|v| !v.is_null());
    let has_old = input.old_object.as_ref().is_some_and(|v| !v.is_null());

    let operation = match &input.operation {
        Some(s) => match Operation::parse(s) {
            Some(op) => op,
            None => {
                diags.push(unsupported_operation(s));
                return (None, diags);
            }
        },
        None => {
            let op = match (has_obj, has_old) {
                (true, false) => Operation::Create,
                (true, true) => Operation::Update,
                (false, true) => Operation::Delete,
                (false, false) => {
                    diags.push(diagnostics::request_underivable(
                        "operation",
                        "cannot derive the operation: supply object (CREATE), object and oldObject (UPDATE) or oldObject (DELETE)",
                    ));
                    return (None, diags);
                }
            };
            diags.push(diagnostics::request_derived(
                "operation",
                format!("operation {} derived from the objects supplied", op.as_str()),
            ));
            op
        }
    };
    let mut object = input.object.take().filter(|v| !v.is_null());
    let mut old_object = input.old_object.take().filter(|v| !v.is_null());
    match operation {
        Operation::Create | Operation::Connect if old_object.is_some() => {
            diags.push(diagnostics::request_inconsistent(
                "oldObject",
                format!("oldObject is ignored: it is null on {}", operation.as_str()),
            ));
            old_object = None;
        }
        Operation::Delete if object.is_some() => {
            diags.push(diagnostics::request_inconsistent(
                "object",
                "object is ignored: it is null on DELETE",
            ));
            object = None;
        }
        Operation::Update if object.is_none() || old_object.is_none() => {
            diags.push(diagnostics::request_inconsistent(
                "object",
                "UPDATE needs both object and oldObject",
            ));
        }
        _ => {}
    }
    let subject = object.as_ref().or(old_object.as_ref());
    let sub_resource = input.sub_resource.clone().unwrap_or_default();

    let object_gvk = subject.and_then(|o| {
        let av = o.get("apiVersion")?.as_str()?;
        let k = o.get("kind")?.as_str()?;
        GroupVersionKind::from_api_version(av, k)
    });

    let (kind, resource, namespaced) = match (&input.kind, &input.resource) {
        (k, Some(r)) => {
            match given_resource(k.as_ref(), r, catalog, &sub_resource, object_gvk, &mut diags) {
                Some(t) => t,
                None => return (None, diags),
            }
        }
        (k, None) => {
            let Some(kind) = k.clone().or(object_gvk.clone()) else {
                diags.push(diagnostics::request_underivable(
                    "kind",
                    "cannot derive kind: supply kind/resource, or an object with apiVersion and kind",
                ));
                return (None, diags);
            };
            let t = match sub_resource.is_empty() {
                false => subresource_parent(kind, catalog, &sub_resource, &mut diags),
                true => match catalog.by_kind(&kind) {
                    Some(e) => Some((kind, e.gvr(), Some(e.namespaced))),
                    None => {
                        diags.push(unknown_kind(&kind));
                        None
                    }
                },
            };
            match t {
                Some(t) => t,
                None => return (None, diags),
            }
        }
    };

    let is_namespaces = resource.group.is_empty() && resource.resource == "namespaces";
    // Subresource bodies (Scale, Eviction, …) carry the parent's name in their metadata too.
    let name = input
        .name
        .clone()
        .unwrap_or_else(|| meta_str(subject, "name").unwrap_or_default().to_string());
    let namespace = match &input.namespace {
        Some(ns) => ns.clone(),
        None if is_namespaces => name.clone(),
        None => match namespaced {
            Some(false) => String::new(),
            _ => match meta_str(subject, "namespace") {
                Some(ns) => ns.to_string(),
                None if namespaced == Some(true) => {
                    diags.push(diagnostics::request_derived(
                        "namespace",
                        "namespace not given and not in the object: using \"default\" as kubectl does",
                    ));
                    "default".to_string()
                }
                None => String::new(),
            },
        },
    };
    if namespaced == Some(false) && !is_namespaces && !namespace.is_empty() {
        diags.push(diagnostics::request_inconsistent(
            "namespace",
            format!(
                "{} is cluster-scoped but the request has namespace {namespace:?}",
                resource.resource
            ),
        ));
    }

    let options = match &input.options {
        Some(v) => Some(v.clone()).filter(|v| !v.is_null()),
        None => match operation {
            Operation::Create => Some(options_object("CreateOptions")),
            Operation::Update => Some(options_object("UpdateOptions")),
            Operation::Delete => Some(options_object("DeleteOptions")),
            Operation::Connect => None,
        },
    };

    let req = AdmissionRequest {
        operation,
        request_kind: input.request_kind.clone().unwrap_or_else(|| kind.clone()),
        request_resource: input.request_resource.clone().unwrap_or_else(|| resource.clone()),
        request_sub_resource: input
            .request_sub_resource
            .clone()
            .unwrap_or_else(|| sub_resource.clone()),
        kind,
        resource,
        sub_resource,
        name,
        namespace,
        user_info: input.user_info.clone().unwrap_or_default(),
        dry_run: input.dry_run.unwrap_or(false),
        options,
        object,
        old_object,
        namespaced,
    };
    (Some(req), diags)
}

/// The `request` value CEL sees (§4.3): the JSON of `admissionv1.AdmissionRequest` as built by
/// `CreateAdmissionRequest`, with `kind`/`resource` replaced by the policy-matched ones.
/// `omitempty` fields are absent when empty (`subResource`, `requestSubResource`, `name`,
/// `namespace`, `userInfo.*`); `uid` is `""`; `dryRun` is always present; `options` is the
/// options object or `null`. `object`/`oldObject` are not part of it.
///
/// For matchConditions pass the **original** resource with the matched kind [quirk, §1.11].
pub fn request_cel_value(
    req: &AdmissionRequest,
    kind: &GroupVersionKind,
    resource: &GroupVersionResource,
) -> Value {
    // Maps made at their size (at most 13 members; a group/version/kind has 3).
    let mut m = Map::with_capacity(13);
    m.insert("uid".into(), Value::String(String::new()));
    m.insert("kind".into(), gv_and("kind", &kind.group, &kind.version, &kind.kind));
    m.insert(
        "resource".into(),
        gv_and("resource", &resource.group, &resource.version, &resource.resource),
    );
    if !req.sub_resource.is_empty() {
        m.insert("subResource".into(), Value::String(req.sub_resource.clone()));
    }
    let rk = &req.request_kind;
    m.insert("requestKind".into(), gv_and("kind", &rk.group, &rk.version, &rk.kind));
    let rr = &req.request_resource;
    m.insert("requestResource".into(), gv_and("resource", &rr.group, &rr.version, &rr.resource));
    if !req.request_sub_resource.is_empty() {
        m.insert("requestSubResource".into(), Value::String(req.request_sub_resource.clone()));
    }
    if !req.name.is_empty() {
        m.insert("name".into(), Value::String(req.name.clone()));
    }
    if !req.namespace.is_empty() {
        m.insert("namespace".into(), Value::String(req.namespace.clone()));
    }
    m.insert("operation".into(), Value::String(req.operation.as_str().into()));
    let mut ui = Map::new();
    let u = &req.user_info;
    if !u.username.is_empty() {
        ui.insert("username".into(), Value::String(u.username.clone()));
    }
    if !u.uid.is_empty() {
        ui.insert("uid".into(), Value::String(u.uid.clone()));
    }
    if !u.groups.is_empty() {
        ui.insert("groups".into(), json!(u.groups));
    }
    if !u.extra.is_empty() {
        ui.insert("extra".into(), json!(u.extra));
    }
    m.insert("userInfo".into(), Value::Object(ui));
    m.insert("dryRun".into(), Value::Bool(req.dry_run));
    m.insert("options".into(), req.options.clone().unwrap_or(Value::Null));
    Value::Object(m)
}

/// `{"group": group, "version": version, <last>: name}`.
fn gv_and(last: &str, group: &str, version: &str, name: &str) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("group".into(), Value::String(group.into()));
    m.insert("version".into(), Value::String(version.into()));
    m.insert(last.into(), Value::String(name.into()));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn derive(input: Value) -> (Option<AdmissionRequest>, Vec<Diagnostic>) {
        let input: RequestInput = serde_json::from_value(input).unwrap();
        derive_request(&input, &ResourceCatalog::builtin())
    }

    #[test]
    fn derives_create_from_object() {
        let (r, _) = derive(json!({"object": {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "nginx", "namespace": "prod"}}}));
        let r = r.unwrap();
        assert_eq!(r.operation, Operation::Create);
        assert_eq!(r.resource, GroupVersionResource::new("apps", "v1", "deployments"));
        assert_eq!((r.name.as_str(), r.namespace.as_str()), ("nginx", "prod"));
        let v = request_cel_value(&r, &r.kind, &r.resource);
        assert_eq!(v["options"]["kind"], "CreateOptions");
        assert_eq!(v["dryRun"], false);
        assert!(v.get("subResource").is_none());
        assert_eq!(v["userInfo"], json!({}));
    }

    #[test]
    fn namespaces_use_their_own_name_and_generate_name_has_no_name() {
        let (r, _) = derive(
            json!({"object": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}}),
        );
        let r = r.unwrap();
        assert_eq!(r.namespace, "team-a");
        let (r, _) = derive(
            json!({"object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "p-"}}}),
        );
        let r = r.unwrap();
        assert_eq!(r.name, "");
        assert_eq!(r.namespace, "default");
        assert!(request_cel_value(&r, &r.kind, &r.resource).get("name").is_none());
    }

    #[test]
    fn update_delete_and_subresources() {
        let pod = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}});
        let (r, _) = derive(json!({"object": pod, "oldObject": pod}));
        assert_eq!(r.unwrap().operation, Operation::Update);
        let (r, _) = derive(json!({"oldObject": pod}));
        let r = r.unwrap();
        assert_eq!(r.operation, Operation::Delete);
        assert_eq!(r.name, "c");
        let (r, _) = derive(json!({"operation": "UPDATE", "subResource": "scale",
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "object": {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d", "namespace": "n"}},
            "oldObject": {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d", "namespace": "n"}}}));
        let r = r.unwrap();
        assert_eq!(r.kind, GroupVersionKind::new("autoscaling", "v1", "Scale"));
        assert_eq!(request_cel_value(&r, &r.kind, &r.resource)["subResource"], "scale");
        let (r, d) = derive(json!({"object": {"apiVersion": "example.com/v1", "kind": "Widget"}}));
        assert!(r.is_none());
        assert_eq!(d[d.len() - 1].code, "request-underivable");
        let (r, _) = derive(json!({"operation": "GET", "object": pod}));
        assert!(r.is_none());
    }
}
