//! Custom resources as the apiserver stores them: structural pruning and defaulting against the
//! CRD's `openAPIV3Schema` for the object's version (apiextensions-apiserver `structural/pruning`
//! and `structural/defaulting`, as the CRD handler applies them when decoding a request).
//!
//! - **pruning**: a field its object's schema does not declare is dropped — unless that schema
//!   has `x-kubernetes-preserve-unknown-fields: true`; `additionalProperties` declares every key
//!   of a map; `apiVersion`, `kind` and `metadata` at the root are kept;
//! - **null**: a `null` value of a field that is not `nullable: true` is dropped before
//!   defaulting (Kubernetes docs, "Defaulting and Nullable");
//! - **defaulting**: an absent property with a `default` gets a copy of it, top-down (a default
//!   that is an object is then itself walked, so its own properties' defaults apply).

use serde_json::{Map, Value as Json};

use super::{diagnostics, ChangeReason, Event, Seg};
use crate::diagnostic::Diagnostic;

/// The `openAPIV3Schema` of `group/version` `kind` among the supplied CRDs.
pub fn schema_for<'c>(
    crds: &'c [Json],
    group: &str,
    version: &str,
    kind: &str,
) -> Option<&'c Json> {
    let crd = crds.iter().find(|c| {
        c["spec"]["group"].as_str() == Some(group)
            && c["spec"]["names"]["kind"].as_str() == Some(kind)
    })?;
    let v =
        crd["spec"]["versions"].as_array()?.iter().find(|v| v["name"].as_str() == Some(version))?;
    v["schema"]["openAPIV3Schema"].as_object().map(|_| &v["schema"]["openAPIV3Schema"])
}

/// One walk over one custom resource.
pub struct Walk {
    label: String,
    path: Vec<Seg>,
    map_keys: Vec<bool>,
    pub events: Vec<Event>,
    pub diagnostics: Vec<Diagnostic>,
    /// The path in the object of each of [`Self::diagnostics`] (where to place it in the
    /// object's text).
    pub diagnostic_paths: Vec<Vec<Seg>>,
    /// The paths of the pruned fields ([`super::Normalized::unknown_fields`]).
    pub unknown_fields: Vec<Vec<Seg>>,
}

impl Walk {
    pub fn new(label: &str) -> Self {
        Walk {
            label: label.to_string(),
            path: Vec::new(),
            map_keys: Vec::new(),
            events: Vec::new(),
            diagnostics: Vec::new(),
            diagnostic_paths: Vec::new(),
            unknown_fields: Vec::new(),
        }
    }

    fn event(&mut self, key: &str, map_key: bool, reason: ChangeReason) {
        let mut path = self.path.clone();
        path.push(Seg::Key(key.to_string()));
        let mut map_keys = self.map_keys.clone();
        map_keys.push(map_key);
        self.events.push(Event { path, map_keys, reason, absent: false });
    }

    /// Prune and default a whole object against its root schema.
    pub fn object(&mut self, v: &mut Json, schema: &Json) {
        self.value(v, schema, true);
    }

    fn value(&mut self, v: &mut Json, schema: &Json, root: bool) {
        match v {
            Json::Object(m) => self.map(m, schema, root),
            Json::Array(items) => {
                let item_schema = &schema["items"];
                if item_schema.is_object() {
                    for (i, it) in items.iter_mut().enumerate() {
                        self.path.push(Seg::Index(i));
                        self.map_keys.push(false);
                        self.value(it, item_schema, false);
                        self.path.pop();
                        self.map_keys.pop();
                    }
                }
            }
            _ => {}
        }
    }

    fn map(&mut self, m: &mut Map<String, Json>, schema: &Json, root: bool) {
        let preserve = schema["x-kubernetes-preserve-unknown-fields"] == Json::Bool(true);
        let props = schema["properties"].as_object();
        let additional = &schema["additionalProperties"];
        let keys: Vec<String> = m.keys().cloned().collect();
        for k in keys {
            let declared = props.and_then(|p| p.get(&k));
            let child_schema = match declared {
                Some(s) => Some(s),
                None if additional.is_object() => Some(additional),
                None => None,
            };
            let is_map_key = declared.is_none() && additional.is_object();
            match child_schema {
                None if root && matches!(k.as_str(), "apiVersion" | "kind" | "metadata") => {}
                None if preserve || additional == &Json::Bool(true) => {}
                None => {
                    let mut p = self.path.clone();
                    p.push(Seg::Key(k.clone()));
                    let mut mk = self.map_keys.clone();
                    mk.push(false);
                    let field = super::render_path(&p, &mk);
                    self.diagnostics.push(diagnostics::unknown_field(&self.label, &field));
                    self.diagnostic_paths.push(p.clone());
                    self.unknown_fields.push(p);
                    self.event(&k, false, ChangeReason::Pruned);
                    m.remove(&k);
                }
                Some(cs) => {
                    if m.get(&k).is_some_and(Json::is_null) && cs["nullable"] != Json::Bool(true) {
                        self.event(&k, is_map_key, ChangeReason::Pruned);
                        m.remove(&k);
                    }
                }
            }
        }
        // Defaults, then the children (a default is walked like a given value).
        if let Some(props) = props {
            for (k, ps) in props {
                if !m.contains_key(k) {
                    if let Some(d) = ps.get("default") {
                        m.insert(k.clone(), d.clone());
                        self.event(k, false, ChangeReason::Default);
                    }
                }
            }
        }
        let keys: Vec<String> = m.keys().cloned().collect();
        for k in keys {
            let declared = props.and_then(|p| p.get(&k));
            let cs = match declared {
                Some(s) => s,
                None if additional.is_object() => additional,
                None => continue,
            };
            if root && k == "metadata" {
                continue;
            }
            if let Some(child) = m.get_mut(&k) {
                self.path.push(Seg::Key(k.clone()));
                self.map_keys.push(declared.is_none());
                self.value(child, cs, false);
                self.path.pop();
                self.map_keys.pop();
            }
        }
    }
}
