//! Param resolution: the policy's `paramKind` (§1.3) and the binding's `paramRef` (§1.7,
//! `CollectParams`), over the param objects supplied with the input.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::labels::Selector;
use super::resources::{GroupVersionKind, ResourceCatalog, ResourceSource};
use super::types::{ParamKind, ParamRef};

/// A candidate param object from the input documents.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParamObject {
    pub gvk: GroupVersionKind,
    /// Empty for cluster-scoped objects.
    pub namespace: String,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// The whole object as written.
    pub value: Value,
}

impl ParamObject {
    /// Build from a JSON object; `None` without `apiVersion`/`kind`.
    pub fn from_value(value: &Value) -> Option<ParamObject> {
        let av = value.get("apiVersion")?.as_str()?;
        let kind = value.get("kind")?.as_str()?;
        let gvk = GroupVersionKind::from_api_version(av, kind)?;
        let meta = value.get("metadata");
        let s = |k: &str| {
            meta.and_then(|m| m.get(k)).and_then(Value::as_str).unwrap_or_default().to_string()
        };
        Some(ParamObject {
            gvk,
            namespace: s("namespace"),
            name: s("name"),
            labels: super::labels::object_labels(value),
            value: value.clone(),
        })
    }
}

/// How a policy's `paramKind` resolves (§1.3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "resolution")]
pub enum ParamKindResolution {
    /// No paramKind: `params` is undeclared.
    None,
    /// `apiVersion` is not a group/version: the apiserver drops the policy silently (only a
    /// log line) [quirk]; the text is for our trace.
    Dropped { reason: String },
    /// Not resolvable to a resource: policy configuration error with this message.
    Unresolvable { message: String },
    Resolved {
        gvk: GroupVersionKind,
        namespaced: bool,
        /// Built-in kinds lack TypeMeta in the informer; `apiVersion`/`kind` are injected.
        builtin: bool,
        /// Scope guessed from the supplied objects (no CRD): see `params-scope-inferred`.
        inferred: bool,
    },
}

/// Resolve `paramKind` against the catalog; for kinds neither built in nor defined by a
/// supplied CRD, fall back to the supplied objects of that kind (scope inferred) before
/// reporting `failed to find resource referenced by paramKind: '<gvk>'`.
pub fn resolve_param_kind(
    pk: Option<&ParamKind>,
    catalog: &ResourceCatalog,
    supplied: &[ParamObject],
) -> ParamKindResolution {
    let Some(pk) = pk else {
        return ParamKindResolution::None;
    };
    let (group, version) = match super::resources::parse_group_version(&pk.api_version) {
        Ok(gv) => gv,
        Err(e) => return ParamKindResolution::Dropped { reason: e },
    };
    let gvk = GroupVersionKind { group, version, kind: pk.kind.clone() };
    if let Some(e) = catalog.by_kind(&gvk) {
        return ParamKindResolution::Resolved {
            gvk,
            namespaced: e.namespaced,
            builtin: e.source == ResourceSource::Builtin,
            inferred: false,
        };
    }
    let same: Vec<&ParamObject> = supplied.iter().filter(|p| p.gvk == gvk).collect();
    if !same.is_empty() {
        let namespaced = same.iter().any(|p| !p.namespace.is_empty());
        return ParamKindResolution::Resolved { gvk, namespaced, builtin: false, inferred: true };
    }
    ParamKindResolution::Unresolvable {
        message: format!("failed to find resource referenced by paramKind: '{gvk}'"),
    }
}

/// What a binding evaluates with.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase", tag = "params", content = "objects")]
pub enum Params<'a> {
    /// The policy has no paramKind: one evaluation, `params` undeclared.
    Undeclared,
    /// paramKind set, no paramRef: one evaluation with `params == null`.
    Null,
    /// One evaluation per object, sorted by (namespace, name); empty = no evaluation
    /// (parameterNotFoundAction `Allow` or unset). The supplied object itself unless a
    /// built-in kind's object needs its paramKind's apiVersion and kind set.
    Objects(Vec<Cow<'a, Value>>),
}

/// `CollectParams` (§1.7). `Err` is the text of a binding configuration error (the caller
/// prefixes `failed to configure binding: `).
pub fn collect_params<'a>(
    kind: &ParamKindResolution,
    param_ref: Option<&ParamRef>,
    request_namespace: &str,
    supplied: &'a [ParamObject],
) -> Result<Params<'a>, String> {
    let (gvk, namespaced, builtin) = match kind {
        ParamKindResolution::None => return Ok(Params::Undeclared),
        ParamKindResolution::Resolved { gvk, namespaced, builtin, .. } => {
            (gvk, *namespaced, *builtin)
        }
        ParamKindResolution::Dropped { reason }
        | ParamKindResolution::Unresolvable { message: reason } => return Err(reason.clone()),
    };
    let Some(pr) = param_ref else {
        return Ok(Params::Null);
    };
    let mut search_ns: Option<&str> = None;
    if namespaced {
        if !pr.namespace.is_empty() {
            search_ns = Some(&pr.namespace);
        } else if request_namespace.is_empty() {
            return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into());
        } else {
            search_ns = Some(request_namespace);
        }
    }
    if !pr.namespace.is_empty() && !namespaced {
        return Err(
            "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into()
        );
    }
    let in_scope = |p: &&ParamObject| {
        p.gvk.group == gvk.group
            && p.gvk.kind == gvk.kind
            && search_ns.is_none_or(|ns| p.namespace == ns)
    };
    let mut found: Vec<&ParamObject> = if !pr.name.is_empty() {
        if pr.selector.is_some() {
            return Err("paramRef.name and paramRef.selector are mutually exclusive".into());
        }
        // The name first: it tells most objects apart at once (the same first match).
        supplied.iter().filter(|p| p.name == pr.name).filter(in_scope).take(1).collect()
    } else if let Some(sel) = &pr.selector {
        let sel = Selector::from_label_selector(sel)?;
        supplied.iter().filter(in_scope).filter(|p| sel.matches(&p.labels)).collect()
    } else {
        return Err("one of name or selector must be provided".into());
    };
    if found.is_empty() && pr.parameter_not_found_action.as_deref() == Some("Deny") {
        return Err("no params found for policy binding with `Deny` parameterNotFoundAction".into());
    }
    vap_eval_cel::sort::sort_by(&mut found, |a, b| {
        (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name))
    });
    let objects = found
        .into_iter()
        .map(|p| {
            if !builtin {
                return Cow::Borrowed(&p.value);
            }
            let mut v = p.value.clone();
            if let Some(m) = v.as_object_mut() {
                m.insert("apiVersion".into(), Value::String(gvk.api_version()));
                m.insert("kind".into(), Value::String(gvk.kind.clone()));
            }
            Cow::Owned(v)
        })
        .collect();
    Ok(Params::Objects(objects))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::types::LabelSelector;
    use serde_json::json;

    fn cm(ns: &str, name: &str, labels: Value) -> ParamObject {
        ParamObject::from_value(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"namespace": ns, "name": name, "labels": labels}, "data": {"max": "3"}}))
        .unwrap()
    }

    fn pref(
        name: &str,
        ns: &str,
        selector: Option<LabelSelector>,
        action: Option<&str>,
    ) -> ParamRef {
        ParamRef {
            name: name.into(),
            namespace: ns.into(),
            selector,
            parameter_not_found_action: action.map(str::to_string),
        }
    }

    /// Every row of the spec §1.7 table.
    #[test]
    fn collect_params_table() {
        let cat = ResourceCatalog::builtin();
        let store = vec![
            cm("b", "z", json!({"t": "1"})),
            cm("a", "y", json!({"t": "1"})),
            cm("a", "x", json!({})),
        ];
        let cmk = ParamKind { api_version: "v1".into(), kind: "ConfigMap".into() };
        let k = resolve_param_kind(Some(&cmk), &cat, &store);
        assert!(matches!(k, ParamKindResolution::Resolved { namespaced: true, builtin: true, .. }));
        assert_eq!(
            collect_params(&ParamKindResolution::None, None, "a", &store),
            Ok(Params::Undeclared)
        );
        assert_eq!(collect_params(&k, None, "a", &store), Ok(Params::Null));
        assert_eq!(
            collect_params(&k, Some(&pref("x", "", None, None)), "", &store),
            Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into())
        );
        let one = collect_params(&k, Some(&pref("x", "", None, None)), "a", &store).unwrap();
        assert!(
            matches!(one, Params::Objects(ref v) if v.len() == 1 && v[0]["kind"] == "ConfigMap")
        );
        assert_eq!(
            collect_params(&k, Some(&pref("x", "b", None, None)), "a", &store),
            Ok(Params::Objects(vec![]))
        );
        assert_eq!(
            collect_params(&k, Some(&pref("x", "b", None, Some("Deny"))), "a", &store),
            Err("no params found for policy binding with `Deny` parameterNotFoundAction".into())
        );
        let all = LabelSelector::default();
        match collect_params(&k, Some(&pref("", "a", Some(all.clone()), None)), "", &store).unwrap()
        {
            Params::Objects(v) => {
                let names: Vec<_> =
                    v.iter().map(|o| o["metadata"]["name"].as_str().unwrap()).collect();
                assert_eq!(names, vec!["x", "y"]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            collect_params(&k, Some(&pref("x", "a", Some(all), None)), "", &store),
            Err("paramRef.name and paramRef.selector are mutually exclusive".into())
        );
        assert_eq!(
            collect_params(&k, Some(&pref("", "a", None, None)), "", &store),
            Err("one of name or selector must be provided".into())
        );
        // cluster-scoped paramKind
        let crd = json!({"metadata": {"name": "limits.example.com"}, "spec": {"group": "example.com", "scope": "Cluster",
            "names": {"plural": "limits", "kind": "Limit"}, "versions": [{"name": "v1", "served": true}]}});
        let mut cat2 = ResourceCatalog::builtin();
        cat2.add_crd(&crd);
        let lk = ParamKind { api_version: "example.com/v1".into(), kind: "Limit".into() };
        let k2 = resolve_param_kind(Some(&lk), &cat2, &[]);
        assert_eq!(
            collect_params(&k2, Some(&pref("x", "ns", None, None)), "a", &[]),
            Err("paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into())
        );
        // spec §8.3 TestInvalidParamSourceGVK
        let bad = ParamKind { api_version: "example.com/v1".into(), kind: "BadParamKind".into() };
        assert_eq!(
            resolve_param_kind(Some(&bad), &cat, &[]),
            ParamKindResolution::Unresolvable {
                message: "failed to find resource referenced by paramKind: 'example.com/v1, Kind=BadParamKind'".into()
            }
        );
        let dropped = ParamKind { api_version: "a/b/c".into(), kind: "X".into() };
        assert!(matches!(
            resolve_param_kind(Some(&dropped), &cat, &[]),
            ParamKindResolution::Dropped { .. }
        ));
    }
}
