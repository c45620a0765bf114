//! admissionregistration.k8s.io/v1 API types, and their decoding from positioned JSON.
//!
//! Field names and JSON keys are Kubernetes' own (`rename_all = "camelCase"`). Enum-like fields
//! (`failurePolicy`, `matchPolicy`, `scope`, `operations`, `validationActions`, `reason`,
//! `parameterNotFoundAction`) keep the **string as written**, like the Go string types, because
//! unsupported values must survive decoding: API validation reports them, and the runtime treats
//! an unknown failurePolicy specially (§1.9). [`crate::admission::decision`] parses them.
//!
//! Decoding ([`Decoder`]) is done by hand from a `serde_json::Value` so that an unknown field or
//! a wrong type yields one diagnostic (with field path and position) and the rest of the object
//! still loads. `null` is treated like an absent field (Go's JSON decoder does the same).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::diagnostics;
use super::field::FieldPath;
use super::yaml::RawDocument;
use crate::diagnostic::{Diagnostic, SourceRef};

/// The subset of `metav1.ObjectMeta` the evaluator uses. Other standard metadata fields are
/// accepted and ignored.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectMeta {
    /// May be empty (then `generateName` may be set).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// May be empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub generate_name: String,
    /// Empty for cluster-scoped objects.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// `metadata.generation`; 0 when absent.
    #[serde(skip_serializing_if = "is_zero")]
    pub generation: i64,
}

fn is_zero(i: &i64) -> bool {
    *i == 0
}

/// `ValidatingAdmissionPolicy` (v1; v1beta1/v1alpha1 are decoded into the same type).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ValidatingAdmissionPolicy {
    /// As written (`admissionregistration.k8s.io/v1`, `…/v1beta1`, `…/v1alpha1`).
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: ValidatingAdmissionPolicySpec,
}

/// `ValidatingAdmissionPolicySpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ValidatingAdmissionPolicySpec {
    /// `None`: the policy has no params (`params` is undeclared in its expressions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param_kind: Option<ParamKind>,
    /// `None` only before defaulting/validation (required by the API).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_constraints: Option<MatchResources>,
    pub validations: Vec<Validation>,
    /// `Fail` | `Ignore` (defaulted to `Fail`); any other string is kept as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<String>,
    pub audit_annotations: Vec<AuditAnnotation>,
    pub match_conditions: Vec<MatchCondition>,
    pub variables: Vec<Variable>,
}

/// `ParamKind`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ParamKind {
    /// `group/version` or `version` for the core group. May be empty before validation.
    pub api_version: String,
    /// May be empty before validation.
    pub kind: String,
}

/// `MatchResources` (policy `matchConstraints`, binding `matchResources`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MatchResources {
    /// `None` before defaulting (defaulted to `{}` = everything).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// `None` before defaulting (defaulted to `{}` = everything).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_selector: Option<LabelSelector>,
    /// Empty on a binding means "all resources" (§1.5).
    pub resource_rules: Vec<NamedRuleWithOperations>,
    pub exclude_resource_rules: Vec<NamedRuleWithOperations>,
    /// `Exact` | `Equivalent` (defaulted to `Equivalent`); kept as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_policy: Option<String>,
}

/// `NamedRuleWithOperations` (`RuleWithOperations` inlined, as in JSON).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NamedRuleWithOperations {
    /// Empty: any name.
    pub resource_names: Vec<String>,
    /// `*`, `CREATE`, `UPDATE`, `DELETE`, `CONNECT` as written.
    pub operations: Vec<String>,
    /// `""` is the core group.
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    /// `res`, `res/sub`, `*`, `res/*`, `*/sub`, `*/*`.
    pub resources: Vec<String>,
    /// `Cluster` | `Namespaced` | `*` (defaulted to `*`); kept as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// `metav1.LabelSelector`. An empty selector (`{}`) selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LabelSelector {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

impl LabelSelector {
    /// True for `{}`.
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }
}

/// `metav1.LabelSelectorRequirement`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LabelSelectorRequirement {
    pub key: String,
    /// `In` | `NotIn` | `Exists` | `DoesNotExist` as written.
    pub operator: String,
    pub values: Vec<String>,
}

/// `Validation`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Validation {
    /// Required by the API; may be empty before validation.
    pub expression: String,
    /// Empty: not set.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Empty: not set.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message_expression: String,
    /// `Forbidden` | `Invalid` | `RequestEntityTooLarge`; `None` means `Invalid` at runtime.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `AuditAnnotation`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AuditAnnotation {
    pub key: String,
    pub value_expression: String,
}

/// `MatchCondition`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MatchCondition {
    pub name: String,
    pub expression: String,
}

/// `Variable`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Variable {
    pub name: String,
    pub expression: String,
}

/// `ValidatingAdmissionPolicyBinding`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ValidatingAdmissionPolicyBinding {
    /// As written (`admissionregistration.k8s.io/v1`, `…/v1beta1`, `…/v1alpha1`).
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: ValidatingAdmissionPolicyBindingSpec,
}

/// `ValidatingAdmissionPolicyBindingSpec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ValidatingAdmissionPolicyBindingSpec {
    /// Required by the API; may be empty before validation.
    pub policy_name: String,
    /// `None`: `params` is null for this binding (if the policy has a paramKind).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub param_ref: Option<ParamRef>,
    /// `None`: the binding matches everything the policy matches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_resources: Option<MatchResources>,
    /// `Deny` | `Warn` | `Audit` as written, in the written order (it is echoed in audit output).
    pub validation_actions: Vec<String>,
}

/// `ParamRef`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ParamRef {
    /// Empty: not set (then `selector` must be set).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Empty: the request's namespace (for namespaced param kinds).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// `Allow` | `Deny`; required in v1/v1beta1, defaulted to `Deny` in v1alpha1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter_not_found_action: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/// Decodes API objects from JSON values, collecting one diagnostic per bad field.
pub struct Decoder<'a> {
    doc: Option<&'a RawDocument>,
    /// Path of the object inside its document (`""`, or `items[3]` for a `List` item).
    prefix: String,
    /// Problems found so far.
    pub diagnostics: Vec<Diagnostic>,
}

const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "labels",
    "annotations",
    "generation",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "finalizers",
    "ownerReferences",
    "managedFields",
    "selfLink",
];

impl<'a> Decoder<'a> {
    /// A decoder for an object at `prefix` inside `doc` (positions come from `doc`).
    pub fn new(doc: Option<&'a RawDocument>, prefix: &str) -> Self {
        Decoder { doc, prefix: prefix.to_string(), diagnostics: Vec::new() }
    }

    fn doc_path(&self, path: &FieldPath) -> String {
        match (self.prefix.is_empty(), path.as_str().is_empty()) {
            (true, _) => path.as_str().to_string(),
            (false, true) => self.prefix.clone(),
            (false, false) => format!("{}.{}", self.prefix, path),
        }
    }

    /// Attach the position of `path` (or of its nearest ancestor) to `d`.
    pub fn locate(&self, d: Diagnostic, path: &FieldPath, key: bool) -> Diagnostic {
        let Some(doc) = self.doc else { return d };
        match doc.positions.nearest(&self.doc_path(path)) {
            Some(pos) => {
                let span = if key { pos.key_span.unwrap_or(pos.span) } else { pos.span };
                d.with_span(span, SourceRef::Manifest { document: doc.index })
            }
            None => d,
        }
    }

    pub(crate) fn type_error(
        &mut self,
        v: &Value,
        path: &FieldPath,
        go_struct: &str,
        go_type: &str,
    ) {
        let d = diagnostics::wrong_type(json_type_name(v), go_struct, path, go_type);
        let d = self.locate(d, path, false);
        self.diagnostics.push(d);
    }

    /// Report fields of `map` not in `known`.
    pub(crate) fn unknown_fields(
        &mut self,
        map: &Map<String, Value>,
        path: &FieldPath,
        known: &[&str],
    ) {
        for k in map.keys() {
            if !known.contains(&k.as_str()) {
                let p = path.child(k);
                let d = self.locate(diagnostics::unknown_field(&p), &p, true);
                self.diagnostics.push(d);
            }
        }
    }

    pub(crate) fn object<'v>(
        &mut self,
        v: Option<&'v Value>,
        path: &FieldPath,
        go_struct: &str,
        go_type: &str,
    ) -> Option<&'v Map<String, Value>> {
        match v {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(other) => {
                self.type_error(other, path, go_struct, go_type);
                None
            }
        }
    }

    pub(crate) fn string(
        &mut self,
        m: &Map<String, Value>,
        key: &str,
        path: &FieldPath,
        go_struct: &str,
    ) -> String {
        self.opt_string(m, key, path, go_struct).unwrap_or_default()
    }

    pub(crate) fn opt_string(
        &mut self,
        m: &Map<String, Value>,
        key: &str,
        path: &FieldPath,
        go_struct: &str,
    ) -> Option<String> {
        match m.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                self.type_error(other, &path.child(key), go_struct, "string");
                None
            }
        }
    }

    pub(crate) fn string_list(
        &mut self,
        m: &Map<String, Value>,
        key: &str,
        path: &FieldPath,
        go_struct: &str,
    ) -> Vec<String> {
        let p = path.child(key);
        self.list(m.get(key), &p, go_struct, "[]string", |dec, v, ip| match v {
            Value::String(s) => Some(s.clone()),
            Value::Null => Some(String::new()),
            other => {
                dec.type_error(other, ip, go_struct, "string");
                None
            }
        })
    }

    fn string_map(
        &mut self,
        m: &Map<String, Value>,
        key: &str,
        path: &FieldPath,
        go_struct: &str,
    ) -> BTreeMap<String, String> {
        let p = path.child(key);
        let mut out = BTreeMap::new();
        if let Some(obj) = self.object(m.get(key), &p, go_struct, "map[string]string") {
            for (k, v) in obj {
                match v {
                    Value::String(s) => {
                        out.insert(k.clone(), s.clone());
                    }
                    Value::Null => {
                        out.insert(k.clone(), String::new());
                    }
                    other => {
                        let kp = FieldPath::new(&super::yaml::child_path(p.as_str(), k));
                        self.type_error(other, &kp, go_struct, "string");
                    }
                }
            }
        }
        out
    }

    pub(crate) fn list<T>(
        &mut self,
        v: Option<&Value>,
        path: &FieldPath,
        go_struct: &str,
        go_type: &str,
        f: impl FnMut(&mut Self, &Value, &FieldPath) -> Option<T>,
    ) -> Vec<T> {
        match v {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => self.items(items, path, f),
            Some(other) => {
                self.type_error(other, path, go_struct, go_type);
                Vec::new()
            }
        }
    }

    /// [`list`](Self::list)'s items, out of line: a list the object does not have (most
    /// policies have no variables or matchConditions) then costs a page's first `evaluate()`
    /// no code for its items (V8 compiles a function whole on its first call).
    #[inline(never)]
    fn items<T>(
        &mut self,
        items: &[Value],
        path: &FieldPath,
        mut f: impl FnMut(&mut Self, &Value, &FieldPath) -> Option<T>,
    ) -> Vec<T> {
        let mut out = Vec::with_capacity(items.len());
        for (i, it) in items.iter().enumerate() {
            if let Some(x) = f(self, it, &path.index(i)) {
                out.push(x);
            }
        }
        out
    }

    /// `metadata`.
    pub fn object_meta(
        &mut self,
        v: Option<&Value>,
        path: &FieldPath,
        go_struct: &str,
    ) -> ObjectMeta {
        let mut meta = ObjectMeta::default();
        let Some(m) = self.object(v, path, go_struct, "v1.ObjectMeta") else {
            return meta;
        };
        self.unknown_fields(m, path, OBJECT_META_FIELDS);
        const S: &str = "ObjectMeta";
        meta.name = self.string(m, "name", path, S);
        meta.generate_name = self.string(m, "generateName", path, S);
        meta.namespace = self.string(m, "namespace", path, S);
        meta.labels = self.string_map(m, "labels", path, S);
        meta.annotations = self.string_map(m, "annotations", path, S);
        match m.get("generation") {
            None | Some(Value::Null) => {}
            Some(Value::Number(n)) if n.is_i64() => meta.generation = n.as_i64().unwrap_or(0),
            Some(other) => self.type_error(other, &path.child("generation"), S, "int64"),
        }
        meta
    }

    /// Decode a `ValidatingAdmissionPolicy` (any supported version) at the decoder's prefix.
    pub fn policy(&mut self, v: &Value) -> ValidatingAdmissionPolicy {
        let root = FieldPath::root();
        let mut p = ValidatingAdmissionPolicy::default();
        let Some(m) =
            self.object(Some(v), &root, "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicy")
        else {
            return p;
        };
        self.unknown_fields(m, &root, &["apiVersion", "kind", "metadata", "spec", "status"]);
        const S: &str = "ValidatingAdmissionPolicy";
        p.api_version = self.string(m, "apiVersion", &root, S);
        p.kind = self.string(m, "kind", &root, S);
        p.metadata = self.object_meta(m.get("metadata"), &FieldPath::new("metadata"), S);
        let sp = FieldPath::new("spec");
        if let Some(s) = self.object(m.get("spec"), &sp, S, "ValidatingAdmissionPolicySpec") {
            p.spec = self.policy_spec(s, &sp);
        }
        p
    }

    fn policy_spec(
        &mut self,
        m: &Map<String, Value>,
        path: &FieldPath,
    ) -> ValidatingAdmissionPolicySpec {
        const S: &str = "ValidatingAdmissionPolicySpec";
        self.unknown_fields(
            m,
            path,
            &[
                "paramKind",
                "matchConstraints",
                "validations",
                "failurePolicy",
                "auditAnnotations",
                "matchConditions",
                "variables",
            ],
        );
        let mut spec = ValidatingAdmissionPolicySpec::default();
        let pk = path.child("paramKind");
        if let Some(o) = self.object(m.get("paramKind"), &pk, S, "ParamKind") {
            self.unknown_fields(o, &pk, &["apiVersion", "kind"]);
            spec.param_kind = Some(ParamKind {
                api_version: self.string(o, "apiVersion", &pk, "ParamKind"),
                kind: self.string(o, "kind", &pk, "ParamKind"),
            });
        }
        let mc = path.child("matchConstraints");
        if let Some(o) = self.object(m.get("matchConstraints"), &mc, S, "MatchResources") {
            spec.match_constraints = Some(self.match_resources(o, &mc));
        }
        spec.validations = self.list(
            m.get("validations"),
            &path.child("validations"),
            S,
            "[]Validation",
            |d, v, p| {
                let o = d.object(Some(v), p, "Validation", "Validation")?;
                const V: &str = "Validation";
                d.unknown_fields(o, p, &["expression", "message", "messageExpression", "reason"]);
                Some(Validation {
                    expression: d.string(o, "expression", p, V),
                    message: d.string(o, "message", p, V),
                    message_expression: d.string(o, "messageExpression", p, V),
                    reason: d.opt_string(o, "reason", p, V),
                })
            },
        );
        spec.failure_policy = self.opt_string(m, "failurePolicy", path, S);
        spec.audit_annotations = self.list(
            m.get("auditAnnotations"),
            &path.child("auditAnnotations"),
            S,
            "[]AuditAnnotation",
            |d, v, p| {
                let o = d.object(Some(v), p, "AuditAnnotation", "AuditAnnotation")?;
                d.unknown_fields(o, p, &["key", "valueExpression"]);
                Some(AuditAnnotation {
                    key: d.string(o, "key", p, "AuditAnnotation"),
                    value_expression: d.string(o, "valueExpression", p, "AuditAnnotation"),
                })
            },
        );
        spec.match_conditions = self.list(
            m.get("matchConditions"),
            &path.child("matchConditions"),
            S,
            "[]MatchCondition",
            |d, v, p| {
                let o = d.object(Some(v), p, "MatchCondition", "MatchCondition")?;
                d.unknown_fields(o, p, &["name", "expression"]);
                Some(MatchCondition {
                    name: d.string(o, "name", p, "MatchCondition"),
                    expression: d.string(o, "expression", p, "MatchCondition"),
                })
            },
        );
        spec.variables =
            self.list(m.get("variables"), &path.child("variables"), S, "[]Variable", |d, v, p| {
                let o = d.object(Some(v), p, "Variable", "Variable")?;
                d.unknown_fields(o, p, &["name", "expression"]);
                Some(Variable {
                    name: d.string(o, "name", p, "Variable"),
                    expression: d.string(o, "expression", p, "Variable"),
                })
            });
        spec
    }

    /// `MatchResources`.
    pub fn match_resources(&mut self, m: &Map<String, Value>, path: &FieldPath) -> MatchResources {
        const S: &str = "MatchResources";
        self.unknown_fields(
            m,
            path,
            &[
                "namespaceSelector",
                "objectSelector",
                "resourceRules",
                "excludeResourceRules",
                "matchPolicy",
            ],
        );
        let rules = |d: &mut Self, key: &str| {
            d.list(m.get(key), &path.child(key), S, "[]NamedRuleWithOperations", |d, v, p| {
                let o =
                    d.object(Some(v), p, "NamedRuleWithOperations", "NamedRuleWithOperations")?;
                Some(d.rule(o, p))
            })
        };
        MatchResources {
            namespace_selector: self.label_selector(
                m.get("namespaceSelector"),
                &path.child("namespaceSelector"),
                S,
            ),
            object_selector: self.label_selector(
                m.get("objectSelector"),
                &path.child("objectSelector"),
                S,
            ),
            resource_rules: rules(self, "resourceRules"),
            exclude_resource_rules: rules(self, "excludeResourceRules"),
            match_policy: self.opt_string(m, "matchPolicy", path, S),
        }
    }

    pub(crate) fn rule(
        &mut self,
        o: &Map<String, Value>,
        p: &FieldPath,
    ) -> NamedRuleWithOperations {
        const R: &str = "NamedRuleWithOperations";
        self.unknown_fields(
            o,
            p,
            &["resourceNames", "operations", "apiGroups", "apiVersions", "resources", "scope"],
        );
        NamedRuleWithOperations {
            resource_names: self.string_list(o, "resourceNames", p, R),
            operations: self.string_list(o, "operations", p, R),
            api_groups: self.string_list(o, "apiGroups", p, R),
            api_versions: self.string_list(o, "apiVersions", p, R),
            resources: self.string_list(o, "resources", p, R),
            scope: self.opt_string(o, "scope", p, R),
        }
    }

    /// `metav1.LabelSelector`; `None` when absent or null.
    pub fn label_selector(
        &mut self,
        v: Option<&Value>,
        path: &FieldPath,
        go_struct: &str,
    ) -> Option<LabelSelector> {
        let o = self.object(v, path, go_struct, "v1.LabelSelector")?;
        const L: &str = "LabelSelector";
        self.unknown_fields(o, path, &["matchLabels", "matchExpressions"]);
        let match_labels = self.string_map(o, "matchLabels", path, L);
        let match_expressions = self.list(
            o.get("matchExpressions"),
            &path.child("matchExpressions"),
            L,
            "[]v1.LabelSelectorRequirement",
            |d, v, p| {
                let r = d.object(
                    Some(v),
                    p,
                    "LabelSelectorRequirement",
                    "v1.LabelSelectorRequirement",
                )?;
                const Q: &str = "LabelSelectorRequirement";
                d.unknown_fields(r, p, &["key", "operator", "values"]);
                Some(LabelSelectorRequirement {
                    key: d.string(r, "key", p, Q),
                    operator: d.string(r, "operator", p, Q),
                    values: d.string_list(r, "values", p, Q),
                })
            },
        );
        Some(LabelSelector { match_labels, match_expressions })
    }

    /// Decode a `ValidatingAdmissionPolicyBinding` (any supported version).
    pub fn binding(&mut self, v: &Value) -> ValidatingAdmissionPolicyBinding {
        let root = FieldPath::root();
        const S: &str = "ValidatingAdmissionPolicyBinding";
        let mut b = ValidatingAdmissionPolicyBinding::default();
        let Some(m) = self.object(Some(v), &root, S, S) else {
            return b;
        };
        self.unknown_fields(m, &root, &["apiVersion", "kind", "metadata", "spec"]);
        b.api_version = self.string(m, "apiVersion", &root, S);
        b.kind = self.string(m, "kind", &root, S);
        b.metadata = self.object_meta(m.get("metadata"), &FieldPath::new("metadata"), S);
        let sp = FieldPath::new("spec");
        const BS: &str = "ValidatingAdmissionPolicyBindingSpec";
        if let Some(s) = self.object(m.get("spec"), &sp, S, BS) {
            self.unknown_fields(
                s,
                &sp,
                &["policyName", "paramRef", "matchResources", "validationActions"],
            );
            b.spec.policy_name = self.string(s, "policyName", &sp, BS);
            let pr = sp.child("paramRef");
            if let Some(o) = self.object(s.get("paramRef"), &pr, BS, "ParamRef") {
                const P: &str = "ParamRef";
                self.unknown_fields(
                    o,
                    &pr,
                    &["name", "namespace", "selector", "parameterNotFoundAction"],
                );
                b.spec.param_ref = Some(ParamRef {
                    name: self.string(o, "name", &pr, P),
                    namespace: self.string(o, "namespace", &pr, P),
                    selector: self.label_selector(o.get("selector"), &pr.child("selector"), P),
                    parameter_not_found_action: self.opt_string(
                        o,
                        "parameterNotFoundAction",
                        &pr,
                        P,
                    ),
                });
            }
            let mr = sp.child("matchResources");
            if let Some(o) = self.object(s.get("matchResources"), &mr, BS, "MatchResources") {
                b.spec.match_resources = Some(self.match_resources(o, &mr));
            }
            b.spec.validation_actions = self.string_list(s, "validationActions", &sp, BS);
        }
        b
    }
}

/// The word Go's JSON decoder uses for a JSON value's type.
fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::yaml::parse_stream;

    #[test]
    fn one_bad_field_one_diagnostic() {
        let text = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: p\nspec:\n  failurePolicy: 3\n  bogus: 1\n  validations:\n  - expression: \"true\"\n    message: [a]\n";
        let (docs, errs) = parse_stream(text);
        assert!(errs.is_empty());
        let mut d = Decoder::new(Some(&docs[0]), "");
        let p = d.policy(&docs[0].value);
        assert_eq!(p.metadata.name, "p");
        assert_eq!(p.spec.validations[0].expression, "true");
        assert_eq!(p.spec.failure_policy, None);
        let msgs: Vec<_> = d.diagnostics.iter().map(|d| d.message.clone()).collect();
        assert_eq!(
            msgs,
            vec![
                "strict decoding error: unknown field \"spec.bogus\"".to_string(),
                "json: cannot unmarshal array into Go struct field Validation.spec.validations.message of type string".to_string(),
                "json: cannot unmarshal number into Go struct field ValidatingAdmissionPolicySpec.spec.failurePolicy of type string".to_string(),
            ]
            .into_iter()
            .filter(|m| msgs.contains(m))
            .collect::<Vec<_>>()
        );
        assert_eq!(msgs.len(), 3);
        let bogus = d.diagnostics.iter().find(|d| d.code == "manifest-unknown-field").unwrap();
        let sp = bogus.span.unwrap();
        assert_eq!(&text[sp.start as usize..sp.end as usize], "bogus");
    }
}
