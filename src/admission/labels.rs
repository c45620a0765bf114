//! Label selector semantics (§3.6): `metav1.LabelSelectorAsSelector` + `labels.Requirement`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::field::{aggregate, go_string_slice, BadValue, FieldError, FieldPath};
use super::names::{is_qualified_name, is_valid_label_value};
use super::types::LabelSelector;

/// A requirement operator (`selection.Operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    Equals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// One parsed requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    pub values: Vec<String>,
}

impl Requirement {
    /// `labels.NewRequirement`: validates key and values; the error text is the aggregate of
    /// `field.Error`s (`key: Invalid value: …`, `values: Invalid value: []string{}: …`).
    pub fn new(key: &str, operator: Operator, values: Vec<String>) -> Result<Self, String> {
        let mut errs: Vec<String> = Vec::new();
        let key_errs = is_qualified_name(key);
        if !key_errs.is_empty() {
            errs.push(
                FieldError::invalid(&FieldPath::new("key"), key, &key_errs.join("; ")).to_string(),
            );
        }
        let vp = FieldPath::new("values");
        let slice = || BadValue::GoSyntax(go_string_slice("string", &values));
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => errs.push(
                FieldError::invalid_with(
                    &vp,
                    slice(),
                    "for 'in', 'notin' operators, values set can't be empty",
                )
                .to_string(),
            ),
            Operator::Equals if values.len() != 1 => errs.push(
                FieldError::invalid_with(
                    &vp,
                    slice(),
                    "exact-match compatibility requires one single value",
                )
                .to_string(),
            ),
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => errs.push(
                FieldError::invalid_with(
                    &vp,
                    slice(),
                    "values set must be empty for exists and does not exist",
                )
                .to_string(),
            ),
            _ => {}
        }
        for (i, v) in values.iter().enumerate() {
            let ve = is_valid_label_value(v);
            if !ve.is_empty() {
                errs.push(
                    FieldError::invalid(&vp.index(i).key(key), v, &ve.join("; ")).to_string(),
                );
            }
        }
        if errs.is_empty() {
            Ok(Requirement { key: key.to_string(), operator, values })
        } else {
            Err(aggregate(&errs))
        }
    }

    /// `Requirement.Matches`.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let v = labels.get(&self.key);
        match self.operator {
            Operator::Equals | Operator::In => v.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => v.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => v.is_some(),
            Operator::DoesNotExist => v.is_none(),
        }
    }

    /// [`Requirement::matches`] given the value of its key's label, if any (natively: the
    /// package copies the labels, smaller).
    #[cfg(not(target_arch = "wasm32"))]
    fn matches_label(&self, v: Option<&str>) -> bool {
        match self.operator {
            Operator::Equals | Operator::In => {
                v.is_some_and(|v| self.values.iter().any(|x| x == v))
            }
            Operator::NotIn => v.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            Operator::Exists => v.is_some(),
            Operator::DoesNotExist => v.is_none(),
        }
    }
}

/// A parsed selector. `Everything` for `{}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pub requirements: Vec<Requirement>,
}

/// How many parsed selectors a thread keeps ([`Selector::with_parsed`]).
#[cfg(not(target_arch = "wasm32"))]
const PARSED_KEPT: usize = 64;

impl Selector {
    /// `metav1.LabelSelectorAsSelector`. matchLabels are processed in key order (Go iterates a
    /// map, so which error is reported first is [nondet] upstream), then matchExpressions.
    pub fn from_label_selector(s: &LabelSelector) -> Result<Selector, String> {
        let mut requirements = Vec::new();
        for (k, v) in &s.match_labels {
            requirements.push(Requirement::new(k, Operator::Equals, vec![v.clone()])?);
        }
        for e in &s.match_expressions {
            let op = match e.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(format!(
                        "{} is not a valid label selector operator",
                        super::field::go_quote(other)
                    ))
                }
            };
            requirements.push(Requirement::new(&e.key, op, e.values.clone())?);
        }
        Ok(Selector { requirements })
    }

    /// `f` of [`Selector::from_label_selector`]`(s)`. Natively (the audit evaluates one set's
    /// few selectors once per object) the parse is kept per thread, keyed by the selector's
    /// content, for at most [`PARSED_KEPT`] selectors: the same content parses the same way.
    /// The package, which evaluates one request per set, parses it each time.
    pub fn with_parsed<R>(s: &LabelSelector, f: impl FnOnce(Result<&Selector, &String>) -> R) -> R {
        #[cfg(target_arch = "wasm32")]
        return f(Selector::from_label_selector(s).as_ref());
        #[cfg(not(target_arch = "wasm32"))]
        {
            type Kept = Vec<(LabelSelector, std::rc::Rc<Result<Selector, String>>)>;
            thread_local! {
                static PARSED: std::cell::RefCell<Kept> = const { std::cell::RefCell::new(Vec::new()) };
            }
            let kept = PARSED.with(|p| {
                let mut p = p.borrow_mut();
                if let Some((_, r)) = p.iter().find(|(k, _)| k == s) {
                    return r.clone();
                }
                let r = std::rc::Rc::new(Selector::from_label_selector(s));
                if p.len() < PARSED_KEPT {
                    p.push((s.clone(), r.clone()));
                }
                r
            });
            f(kept.as_ref().as_ref())
        }
    }

    /// All requirements hold (an empty selector matches everything).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// The first requirement that fails, for "why not matched" traces.
    pub fn first_failing(&self, labels: &BTreeMap<String, String>) -> Option<&Requirement> {
        self.requirements.iter().find(|r| !r.matches(labels))
    }

    /// [`Selector::first_failing`] over [`object_labels`]`(obj)` (`None`: no labels), read in
    /// place: a label is a string member of `metadata.labels`, as `object_labels` takes them.
    /// The package copies them (`object_labels`): smaller.
    pub fn first_failing_in(&self, obj: Option<&Value>) -> Option<&Requirement> {
        #[cfg(target_arch = "wasm32")]
        return self.first_failing(&obj.map(object_labels).unwrap_or_default());
        #[cfg(not(target_arch = "wasm32"))]
        self.first_failing_in_place(obj)
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn first_failing_in_place(&self, obj: Option<&Value>) -> Option<&Requirement> {
        let map = obj.and_then(|o| o.get("metadata")).and_then(|m| m.get("labels"));
        let map = map.and_then(Value::as_object);
        let label = |k: &str| map.and_then(|m| m.get(k)).and_then(Value::as_str);
        self.requirements.iter().find(|r| !r.matches_label(label(&r.key)))
    }
}

/// `metadata.labels` of a JSON object (non-string values ignored); empty if absent.
pub fn object_labels(obj: &Value) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    let map = obj.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_object);
    // Inserted one by one: `collect()` into a BTreeMap brings its own sort (5 KB of wasm).
    for (k, v) in map.into_iter().flatten() {
        if let Some(s) = v.as_str() {
            labels.insert(k.clone(), s.to_string());
        }
    }
    labels
}

/// API validation of a selector (`metav1validation.ValidateLabelSelector`, strict values).
pub fn validate_label_selector(s: &LabelSelector, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = validate_labels(&s.match_labels, &path.child("matchLabels"));
    for (i, e) in s.match_expressions.iter().enumerate() {
        let p = path.child("matchExpressions").index(i);
        match e.operator.as_str() {
            "In" | "NotIn" => {
                if e.values.is_empty() {
                    errs.push(FieldError::required(
                        &p.child("values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !e.values.is_empty() {
                    errs.push(FieldError::forbidden(
                        &p.child("values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            other => errs.push(FieldError::invalid(
                &p.child("operator"),
                other,
                "not a valid selector operator",
            )),
        }
        for m in is_qualified_name(&e.key) {
            errs.push(FieldError::invalid(&p.child("key"), &e.key, &m));
        }
        for (vi, v) in e.values.iter().enumerate() {
            for m in is_valid_label_value(v) {
                errs.push(FieldError::invalid(&p.child("values").index(vi), v, &m));
            }
        }
    }
    errs
}

/// `ValidateLabels` (keys in sorted order; Go iterates a map).
pub fn validate_labels(labels: &BTreeMap<String, String>, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels {
        for m in is_qualified_name(k) {
            errs.push(FieldError::invalid(path, k, &m));
        }
        for m in is_valid_label_value(v) {
            errs.push(FieldError::invalid(path, v, &m));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::types::LabelSelectorRequirement;

    fn labels(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn req(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// spec §3.6.
    #[test]
    fn semantics() {
        let sel = |exprs: Vec<LabelSelectorRequirement>| {
            Selector::from_label_selector(&LabelSelector {
                match_labels: BTreeMap::new(),
                match_expressions: exprs,
            })
            .unwrap()
        };
        let l = labels(&[("env", "prod")]);
        assert!(sel(vec![]).matches(&l));
        assert!(sel(vec![req("env", "In", &["prod", "dev"])]).matches(&l));
        assert!(sel(vec![req("team", "NotIn", &["a"])]).matches(&l));
        assert!(!sel(vec![req("env", "NotIn", &["prod"])]).matches(&l));
        assert!(sel(vec![req("env", "Exists", &[])]).matches(&l));
        assert!(!sel(vec![req("env", "DoesNotExist", &[])]).matches(&l));
        let ml =
            LabelSelector { match_labels: labels(&[("env", "dev")]), match_expressions: vec![] };
        assert!(!Selector::from_label_selector(&ml).unwrap().matches(&l));
    }

    #[test]
    fn construction_errors() {
        let bad = |r: LabelSelectorRequirement| {
            Selector::from_label_selector(&LabelSelector {
                match_labels: BTreeMap::new(),
                match_expressions: vec![r],
            })
            .unwrap_err()
        };
        assert_eq!(bad(req("a", "Foo", &[])), "\"Foo\" is not a valid label selector operator");
        assert_eq!(
            bad(req("a", "In", &[])),
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"
        );
        assert_eq!(
            bad(req("a", "Exists", &["x"])),
            "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist"
        );
        assert!(bad(req("a b", "Exists", &[]))
            .starts_with("key: Invalid value: \"a b\": name part must consist"));
        assert!(bad(req("a", "In", &["-x"]))
            .starts_with("values[0][a]: Invalid value: \"-x\": a valid label must be"));
    }

    #[test]
    fn api_validation() {
        let s = LabelSelector {
            match_labels: BTreeMap::new(),
            match_expressions: vec![req("a", "In", &[])],
        };
        let errs = validate_label_selector(&s, &FieldPath::new("spec").child("objectSelector"));
        assert_eq!(
            errs[0].to_string(),
            "spec.objectSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
        );
    }
}
