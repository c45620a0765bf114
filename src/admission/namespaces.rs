//! The Namespace objects a request's matching and CEL may read (spec §3.2, §5): the supplied
//! ones and, under `missingNamespaces: assume`, the request's own namespace. One value per
//! request, shared by the policies and the webhooks, so both see the same namespace.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value as Json;
use vap_eval_cel::diagnostic::Diagnostic;

use super::matching::NamespaceSource;
use super::policy_set::{MissingNamespaces, PolicySet};
use super::request::AdmissionRequest;

/// The namespace `name` as `missingNamespaces: assume` has it (see [`Namespaces`]). Text
/// parsed rather than `json!`: smaller wasm; [`PolicySet::assumed_namespace`] makes it once
/// per name.
pub fn assumed(name: &str) -> Option<Json> {
    let name = Json::String(name.to_string()).to_string();
    let text = format!(
        r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":{name},"labels":{{"kubernetes.io/metadata.name":{name}}}}},"spec":{{"finalizers":["kubernetes"]}},"status":{{"phase":"Active"}}}}"#
    );
    vap_eval_json::from_str(&text).ok()
}

/// The Namespace objects the request may need: the supplied ones, and under
/// `missingNamespaces: assume` the request's own namespace when it was not supplied, as a
/// cluster would have it — only the `kubernetes.io/metadata.name` label (which the apiserver
/// sets on every namespace), `spec.finalizers: [kubernetes]` and `status.phase: Active`.
pub struct Namespaces<'a> {
    supplied: &'a BTreeMap<String, Json>,
    assumed: Option<(String, Rc<Json>)>,
    /// The assumed namespace was read (by a namespaceSelector or as `namespaceObject`).
    used: std::cell::Cell<bool>,
}

impl<'a> Namespaces<'a> {
    #[inline(never)]
    pub fn new(set: &'a PolicySet, request: &AdmissionRequest) -> Self {
        let supplied = &set.manifests.namespaces;
        let ns = &request.namespace;
        let assumed = (set.setup.missing_namespaces == MissingNamespaces::Assume
            && !ns.is_empty()
            && !supplied.contains_key(ns))
        .then(|| assume(set, ns))
        .flatten();
        Namespaces { supplied, assumed, used: std::cell::Cell::new(false) }
    }

    pub fn get(&self, name: &str) -> Option<&Json> {
        match &self.assumed {
            Some((n, ns)) if n == name => {
                self.used.set(true);
                Some(&**ns)
            }
            _ => self.supplied.get(name),
        }
    }

    /// The info diagnostic, when the assumption was used.
    pub fn assumed_diagnostic(&self) -> Option<Diagnostic> {
        let (name, _) = self.assumed.as_ref().filter(|_| self.used.get())?;
        Some(super::diagnostics::namespace_assumed(name))
    }
}

/// The assumed namespace `ns` (out of line: most requests' namespaces are supplied or not
/// assumed, and a page's first `evaluate()` compiles whatever sits in [`Namespaces::new`]).
#[inline(never)]
fn assume(set: &PolicySet, ns: &str) -> Option<(String, Rc<Json>)> {
    set.assumed_namespace(ns).map(|v| (ns.to_string(), v))
}

impl NamespaceSource for Namespaces<'_> {
    fn namespace(&self, name: &str) -> Option<&Json> {
        self.get(name)
    }
}
