//! Input manifests: YAML or JSON text with any number of `---`-separated documents, classified
//! by apiVersion/kind into policies, bindings, namespaces, CRDs, RBAC objects and param
//! candidates. Every object remembers where it came from, so later diagnostics (including CEL
//! errors inside an expression) can point into the text.

use std::collections::BTreeMap;

use serde_json::Value;

use super::defaults::{default_binding, default_policy, AppliedDefault};
use super::diagnostics;
use super::field::FieldError;
use super::params::ParamObject;
use super::resources::ResourceCatalog;
use super::types::{Decoder, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding};
use super::validation::{validate_binding, validate_policy, ExpressionCompiler};
use super::yaml::{parse_stream, NodePos, RawDocument};
use crate::diagnostic::{Diagnostic, SourceRef, Span};

/// Where an object is in the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// 0-based `---` document index.
    pub document: usize,
    /// Path of the object inside the document: `""`, or `items[3]` for a `List` item.
    pub path: String,
}

/// A decoded, defaulted API object and its origin.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded<T> {
    pub object: T,
    pub source: Source,
    /// Defaults the apiserver would have applied (§7.1).
    pub defaults: Vec<AppliedDefault>,
}

/// Everything read from the input text.
#[derive(Clone, Debug, Default)]
pub struct Manifests {
    /// The parsed documents (positions live here).
    pub documents: Vec<RawDocument>,
    /// Sorted by name; for duplicate names the later document wins.
    pub policies: Vec<Loaded<ValidatingAdmissionPolicy>>,
    /// Sorted by name; for duplicate names the later document wins.
    pub bindings: Vec<Loaded<ValidatingAdmissionPolicyBinding>>,
    /// Namespace objects by name.
    pub namespaces: BTreeMap<String, Value>,
    pub crds: Vec<Value>,
    /// Role, ClusterRole, RoleBinding, ClusterRoleBinding, kept as JSON.
    pub rbac: Vec<Value>,
    /// Every object other than policies and bindings (param candidates), sorted by
    /// (namespace, name).
    pub params: Vec<ParamObject>,
    /// Problems found while loading (syntax, decoding); API validation is separate
    /// ([`Manifests::validate`]).
    pub diagnostics: Vec<Diagnostic>,
}

pub(crate) const GROUP: &str = "admissionregistration.k8s.io";

/// Parse and classify `text`.
pub fn load_manifests(text: &str) -> Manifests {
    let (documents, errors) = parse_stream(text);
    let mut m = Manifests {
        diagnostics: errors.iter().map(diagnostics::yaml_syntax).collect(),
        ..Default::default()
    };
    let mut policies: BTreeMap<String, Loaded<ValidatingAdmissionPolicy>> = BTreeMap::new();
    let mut bindings: BTreeMap<String, Loaded<ValidatingAdmissionPolicyBinding>> = BTreeMap::new();
    for doc in &documents {
        if doc.value.is_null() {
            continue;
        }
        let mut objects: Vec<(String, &Value)> = Vec::new();
        let kind = doc.value.get("kind").and_then(Value::as_str).unwrap_or_default();
        match doc.value.get("items").and_then(Value::as_array) {
            Some(items) if kind.ends_with("List") => list_items(items, &mut objects),
            _ => objects.push((String::new(), &doc.value)),
        }
        for (prefix, obj) in objects {
            let span = doc.positions.get(&prefix).map(|p| p.span).unwrap_or(doc.span);
            let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
            let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
            if api_version.is_empty() || kind.is_empty() {
                m.diagnostics.push(missing_type_meta(doc.index, kind, span));
                continue;
            }
            let source = Source { document: doc.index, path: prefix.clone() };
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            let vap =
                matches!(kind, "ValidatingAdmissionPolicy" | "ValidatingAdmissionPolicyBinding")
                    && group == GROUP;
            if vap {
                let supported = matches!(version, "v1" | "v1beta1" | "v1alpha1");
                if version != "v1" {
                    m.diagnostics.push(version_diagnostic(
                        api_version,
                        kind,
                        supported,
                        span,
                        doc.index,
                    ));
                }
                if !supported {
                    continue;
                }
                let mut dec = Decoder::new(Some(doc), &prefix);
                if kind == "ValidatingAdmissionPolicy" {
                    let mut p = dec.policy(obj);
                    let defaults = default_policy(&mut p);
                    let name = p.metadata.name.clone();
                    if policies.contains_key(&name) {
                        m.diagnostics.push(duplicate_object(kind, &name));
                    }
                    policies.insert(name, Loaded { object: p, source, defaults });
                } else {
                    let mut b = dec.binding(obj);
                    let defaults = default_binding(&mut b, api_version);
                    let name = b.metadata.name.clone();
                    if bindings.contains_key(&name) {
                        m.diagnostics.push(duplicate_object(kind, &name));
                    }
                    bindings.insert(name, Loaded { object: b, source, defaults });
                }
                m.diagnostics.append(&mut dec.diagnostics);
                continue;
            }
            let name = obj["metadata"]["name"].as_str().unwrap_or_default();
            if let Some(d) = diagnostics::not_evaluated(group, kind, name) {
                m.diagnostics.push(d.with_span(span, SourceRef::Manifest { document: doc.index }));
            }
            match (group, kind) {
                ("", "Namespace") => {
                    let name = obj["metadata"]["name"].as_str().unwrap_or_default().to_string();
                    m.namespaces.insert(name, obj.clone());
                }
                ("apiextensions.k8s.io", "CustomResourceDefinition") => m.crds.push(obj.clone()),
                (
                    "rbac.authorization.k8s.io",
                    "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding",
                ) => m.rbac.push(obj.clone()),
                _ => {}
            }
            if let Some(p) = ParamObject::from_value(obj) {
                m.params.push(p);
            }
        }
    }
    vap_eval_cel::sort::sort_by(&mut m.params, |a, b| {
        (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name))
    });
    m.policies = policies.into_values().collect();
    m.bindings = bindings.into_values().collect();
    m.documents = documents;
    m
}

// The paths of `load_manifests` the usual manifests do not take, out of line: V8 compiles a
// function whole on its first call, so cold code inlined into `load_manifests` costs a page's
// first `evaluate()`.

/// A `…List` document's items, each with its path.
#[cold]
#[inline(never)]
fn list_items<'v>(items: &'v [Value], objects: &mut Vec<(String, &'v Value)>) {
    for (i, it) in items.iter().enumerate() {
        objects.push((format!("items[{i}]"), it));
    }
}

/// An object without `kind` (`kind` empty) or without `apiVersion`.
#[cold]
#[inline(never)]
fn missing_type_meta(document: usize, kind: &str, span: Span) -> Diagnostic {
    let what = if kind.is_empty() { "Kind" } else { "apiVersion" };
    diagnostics::missing_type_meta(document, what, span)
}

/// A policy or binding of a version other than v1: converted, or not `supported`.
#[cold]
#[inline(never)]
fn version_diagnostic(
    api_version: &str,
    kind: &str,
    supported: bool,
    span: Span,
    document: usize,
) -> Diagnostic {
    let d = match supported {
        true => diagnostics::converted_version(api_version, kind),
        false => diagnostics::unsupported_api_version(api_version, kind),
    };
    d.with_span(span, SourceRef::Manifest { document })
}

/// A second policy or binding of the same name.
#[cold]
#[inline(never)]
fn duplicate_object(kind: &str, name: &str) -> Diagnostic {
    diagnostics::duplicate_object(kind, "", name)
}

impl Manifests {
    /// Whether any object of the manifests satisfies `pred`: each document, or for a `…List`
    /// document each of its items, as the loaders of webhook configurations and Kyverno
    /// policies read them.
    pub fn any_object(&self, pred: impl Fn(&Value) -> bool) -> bool {
        self.documents.iter().any(|doc| {
            let kind = doc.value.get("kind").and_then(Value::as_str).unwrap_or_default();
            match doc.value.get("items").and_then(Value::as_array) {
                Some(items) if kind.ends_with("List") => items.iter().any(&pred),
                _ => pred(&doc.value),
            }
        })
    }

    /// Built-in kinds plus the supplied CRDs.
    pub fn catalog(&self) -> ResourceCatalog {
        let mut c = ResourceCatalog::builtin();
        for crd in &self.crds {
            c.add_crd(crd);
        }
        c
    }

    /// Position of `path` (a field path inside the object at `source`), or of its nearest
    /// ancestor. Returns the document index and node position.
    pub fn locate(&self, source: &Source, path: &str) -> Option<(usize, NodePos)> {
        let doc = self.documents.iter().find(|d| d.index == source.document)?;
        let full = match (source.path.is_empty(), path.is_empty()) {
            (true, _) => path.to_string(),
            (false, true) => source.path.clone(),
            (false, false) => format!("{}.{}", source.path, path),
        };
        doc.positions.nearest(&full).map(|p| (doc.index, *p))
    }

    /// The byte offset in the input text of byte `offset` inside the string at `path` of the
    /// object at `source` (e.g. a CEL error column inside `spec.validations[0].expression`).
    pub fn locate_in_string(
        &self,
        text: &str,
        source: &Source,
        path: &str,
        value: &str,
        offset: usize,
    ) -> Option<Span> {
        let (_, pos) = self.locate(source, path)?;
        let b = pos.locate(text, value, offset)?;
        Some(Span::new(b, b))
    }

    fn with_position(&self, d: Diagnostic, source: &Source, path: &str) -> Diagnostic {
        match self.locate(source, path) {
            Some((document, pos)) => d.with_span(pos.span, SourceRef::Manifest { document }),
            None => d,
        }
    }

    /// API validation (§7) of every policy and binding, as diagnostics with positions.
    pub fn validate(&self, compiler: &dyn ExpressionCompiler) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut push = |errs: Vec<FieldError>, source: &Source, object: String| {
            for e in errs {
                let mut d = diagnostics::api_validation(&e);
                d.field = format!("{object}: {}", e.field);
                out.push(self.with_position(d, source, e.field.as_str()));
            }
        };
        for p in &self.policies {
            let object = format!("ValidatingAdmissionPolicy/{}", p.object.metadata.name);
            push(validate_policy(&p.object, compiler), &p.source, object);
        }
        for b in &self.bindings {
            let object = format!("ValidatingAdmissionPolicyBinding/{}", b.object.metadata.name);
            push(validate_binding(&b.object), &b.source, object);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::validation::AcceptAllCompiler;

    const INPUT: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: demo
spec:
  failurePolicy: Sometimes
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1alpha1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: demo-binding}
spec:
  policyName: demo
  validationActions: [Deny]
  paramRef: {name: limits}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Namespace
  metadata: {name: prod, labels: {env: prod}}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: limits, namespace: prod}
  data: {max: "3"}
---
kind: Broken: [
"#;

    #[test]
    fn loads_and_classifies() {
        let m = load_manifests(INPUT);
        assert_eq!(m.policies.len(), 1);
        assert_eq!(m.bindings.len(), 1);
        let b = &m.bindings[0].object;
        assert_eq!(
            b.spec.param_ref.as_ref().unwrap().parameter_not_found_action.as_deref(),
            Some("Deny")
        );
        assert!(m.namespaces.contains_key("prod"));
        assert_eq!(m.params.len(), 2);
        assert!(m.diagnostics.iter().any(|d| d.code == "manifest-yaml-syntax"));
        assert!(m.diagnostics.iter().any(|d| d.code == "manifest-converted-version"));
        let v = m.validate(&AcceptAllCompiler);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].message, "spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\"");
        let sp = v[0].span.unwrap();
        assert_eq!(&INPUT[sp.start as usize..sp.end as usize], "Sometimes");
        // a CEL column inside the expression maps into the text
        let p = &m.policies[0];
        let expr = &p.object.spec.validations[0].expression;
        let at = m
            .locate_in_string(INPUT, &p.source, "spec.validations[0].expression", expr, 7)
            .unwrap();
        assert!(INPUT[at.start as usize..].starts_with("spec.replicas"));
    }

    #[test]
    fn admission_kinds_it_does_not_evaluate_are_said_not_to_be() {
        // The apiserver runs MutatingAdmissionPolicies before the webhooks and validating
        // policies (AllOrderedPlugins, kube-apiserver's pkg/kubeapiserver/options/plugins.go);
        // Kyverno and Gatekeeper run their own kinds in their webhooks. None is evaluated here,
        // and each says so where it is, instead of being taken as a param in silence.
        let text = "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: vpol}\n---\n\
            apiVersion: admissionregistration.k8s.io/v1beta1\nkind: MutatingAdmissionPolicy\nmetadata: {name: map}\n---\n\
            apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: k8srequiredlabels}\n---\n\
            apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: kpol}\n---\n\
            apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sRequiredLabels\nmetadata: {name: owner}\n";
        let m = load_manifests(text);
        let said: Vec<_> = m
            .diagnostics
            .iter()
            .filter(|d| d.code == "manifest-not-evaluated")
            .map(|d| (d.message.split(':').next().unwrap().to_string(), d.span.unwrap().start))
            .collect();
        assert_eq!(
            said,
            [
                ("ValidatingPolicy \"vpol\" (policies.kyverno.io) is not evaluated".to_string(), 0),
                ("MutatingAdmissionPolicy \"map\" (admissionregistration.k8s.io) is not evaluated".to_string(), text.find("apiVersion: admissionregistration").unwrap() as u32),
                ("ConstraintTemplate \"k8srequiredlabels\" (templates.gatekeeper.sh) is not evaluated".to_string(), text.find("apiVersion: templates").unwrap() as u32),
            ]
        );
        // A constraint stays a param (the Gatekeeper examples bind it as one), unflagged.
        assert!(m.params.iter().any(|p| p.name == "owner"));
    }
}

#[cfg(test)]
mod robustness {
    use super::*;

    #[test]
    fn odd_inputs_do_not_panic() {
        for t in [
            "", "---", "--- \n---\n", "[", "{", "a: *x", "? [a]\n: b", "- - -", "kind: List\nitems: 3",
            "apiVersion: v1\nkind: List\nitems: [1, {kind: X}]", "é: ü\n---\n\t", ".5: .inf", "\u{feff}{\"a\": 1}",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nspec: [1]\nmetadata: 3",
        ] {
            let m = load_manifests(t);
            let _ = m.validate(&crate::admission::validation::AcceptAllCompiler);
        }
    }
}
