//! apimachinery `field.Path` / `field.Error` and Go value rendering (`%q`, `%#v`).
//!
//! API validation errors must read exactly like the apiserver's, e.g.
//! `spec.failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore"`.
//! The rendering rules are those of `k8s.io/apimachinery/pkg/util/validation/field/errors.go`
//! (`Error.Error()` = `<field>: <ErrorBody>`), spec §7.

use std::fmt;

/// A Kubernetes field path such as `spec.validations[0].expression`.
///
/// Rendering follows `field.Path.String()`: children joined with `.`, list indices and map keys
/// in brackets (`[0]`, `[app]`). The empty path renders as `""`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath(String);

impl FieldPath {
    /// A path starting at `name` (`field.NewPath`).
    pub fn new(name: &str) -> Self {
        FieldPath(name.to_string())
    }
    /// The empty path (Go's nil `*field.Path`).
    pub fn root() -> Self {
        FieldPath(String::new())
    }
    /// `p.Child(name)`.
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() {
            FieldPath(name.to_string())
        } else {
            FieldPath(format!("{}.{}", self.0, name))
        }
    }
    /// `p.Index(i)`.
    pub fn index(&self, i: usize) -> Self {
        FieldPath(format!("{}[{}]", self.0, i))
    }
    /// `p.Key(k)`.
    pub fn key(&self, k: &str) -> Self {
        FieldPath(format!("{}[{}]", self.0, k))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `field.ErrorType`, with the exact strings `ErrorType.String()` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    NotFound,
    Required,
    Duplicate,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    TooMany,
    Internal,
    TypeInvalid,
}

impl ErrorType {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
            ErrorType::TypeInvalid => "Invalid value",
        }
    }
    /// Stable kebab-case diagnostic code for this error type.
    pub fn code(self) -> &'static str {
        match self {
            ErrorType::NotFound => "api-not-found",
            ErrorType::Required => "api-required-value",
            ErrorType::Duplicate => "api-duplicate-value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "api-invalid-value",
            ErrorType::NotSupported => "api-unsupported-value",
            ErrorType::Forbidden => "api-forbidden",
            ErrorType::TooLong => "api-too-long",
            ErrorType::TooMany => "api-too-many",
            ErrorType::Internal => "api-internal-error",
        }
    }
}

/// The offending value of a [`FieldError`], already decided how Go would print it.
#[derive(Clone, Debug, PartialEq)]
pub enum BadValue {
    /// Not printed (Required, Forbidden, TooLong, Internal errors, or `omitValue`).
    Omit,
    /// A Go `string` (or named string type): printed with `%q`.
    Str(String),
    /// A Go integer: printed with `%v`.
    Int(i64),
    /// Anything else, pre-rendered in Go `%#v` syntax (e.g. `[]string{"*/*", "a"}`).
    GoSyntax(String),
}

/// One `field.Error`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    pub kind: ErrorType,
    pub field: FieldPath,
    pub bad_value: BadValue,
    /// May be empty.
    pub detail: String,
}

impl FieldError {
    /// `field.Required(path, detail)`.
    pub fn required(field: &FieldPath, detail: &str) -> Self {
        Self::new(ErrorType::Required, field, BadValue::Omit, detail)
    }
    /// `field.Invalid(path, value, detail)` for a string value.
    pub fn invalid(field: &FieldPath, value: &str, detail: &str) -> Self {
        Self::new(ErrorType::Invalid, field, BadValue::Str(value.to_string()), detail)
    }
    /// `field.Invalid(path, value, detail)` for a non-string value.
    pub fn invalid_with(field: &FieldPath, value: BadValue, detail: &str) -> Self {
        Self::new(ErrorType::Invalid, field, value, detail)
    }
    /// `field.Duplicate(path, value)`.
    pub fn duplicate(field: &FieldPath, value: &str) -> Self {
        Self::new(ErrorType::Duplicate, field, BadValue::Str(value.to_string()), "")
    }
    /// `field.Forbidden(path, detail)`.
    pub fn forbidden(field: &FieldPath, detail: &str) -> Self {
        Self::new(ErrorType::Forbidden, field, BadValue::Omit, detail)
    }
    /// `field.NotSupported(path, value, validValues)`: detail `supported values: "a", "b"`.
    pub fn not_supported(field: &FieldPath, value: &str, valid: &[&str]) -> Self {
        let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
        let detail = if quoted.is_empty() {
            String::new()
        } else {
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(ErrorType::NotSupported, field, BadValue::Str(value.to_string()), &detail)
    }
    /// `field.TooMany(path, actual, max)`.
    pub fn too_many(field: &FieldPath, actual: usize, max: usize) -> Self {
        let detail = format!("must have at most {max} items");
        Self::new(ErrorType::TooMany, field, BadValue::Int(actual as i64), &detail)
    }
    /// `field.TooLong(path, value, max)` (value omitted from the message, as upstream).
    pub fn too_long(field: &FieldPath, max: usize) -> Self {
        let unit = if max == 1 { "byte" } else { "bytes" };
        let detail = format!("may not be more than {max} {unit}");
        Self::new(ErrorType::TooLong, field, BadValue::Omit, &detail)
    }
    /// `field.InternalError(path, err)`.
    pub fn internal(field: &FieldPath, err: &str) -> Self {
        Self::new(ErrorType::Internal, field, BadValue::Omit, err)
    }
    fn new(kind: ErrorType, field: &FieldPath, bad_value: BadValue, detail: &str) -> Self {
        FieldError { kind, field: field.clone(), bad_value, detail: detail.to_string() }
    }

    /// `Error.ErrorBody()`: the message without the field path.
    pub fn body(&self) -> String {
        let mut s = String::from(self.kind.as_str());
        let omitted = matches!(
            self.kind,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal
        );
        if !omitted {
            match &self.bad_value {
                BadValue::Omit => {}
                BadValue::Str(v) => {
                    s.push_str(": ");
                    s.push_str(&go_quote(v));
                }
                BadValue::Int(i) => {
                    s.push_str(&format!(": {i}"));
                }
                BadValue::GoSyntax(g) => {
                    s.push_str(": ");
                    s.push_str(g);
                }
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// `utilerrors.NewAggregate(errs).Error()`: one error as is, several as `[e1, e2]` with
/// duplicate texts removed (first occurrence kept). Empty input gives `""`.
pub fn aggregate(messages: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for m in messages {
        if !seen.contains(&m.as_str()) {
            seen.push(m);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen[0].to_string(),
        _ => format!("[{}]", seen.join(", ")),
    }
}

pub use crate::library::gostr::{is_print as go_is_print, quote as go_quote};

/// Go `%#v` of a `[]T` whose elements are strings of named type `type_name`
/// (e.g. `[]string{"a", "b"}`, `[]admissionregistration.OperationType{"*"}`).
pub fn go_string_slice(type_name: &str, items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
    format!("[]{}{{{}}}", type_name, inner.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_apimachinery() {
        let p = FieldPath::new("spec").child("failurePolicy");
        let e = FieldError::not_supported(&p, "other", &["Fail", "Ignore"]);
        assert_eq!(
            e.to_string(),
            r#"spec.failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore""#
        );
        let e = FieldError::required(
            &FieldPath::new("spec").child("matchConditions").index(0).child("name"),
            "",
        );
        assert_eq!(e.to_string(), "spec.matchConditions[0].name: Required value");
        let e = FieldError::too_many(&FieldPath::new("spec").child("matchConditions"), 65, 64);
        assert_eq!(e.to_string(), "spec.matchConditions: Too many: 65: must have at most 64 items");
        let e = FieldError::invalid_with(
            &FieldPath::new("r"),
            BadValue::GoSyntax(go_string_slice("string", &["*/*".into(), "a".into()])),
            "x",
        );
        assert_eq!(e.to_string(), r#"r: Invalid value: []string{"*/*", "a"}: x"#);
    }

    #[test]
    fn go_quote_escapes() {
        assert_eq!(
            go_quote("a\"b\\c\n\t\u{1}é\u{a0}\u{200b}😀"),
            r#""a\"b\\c\n\t\x01é\u00a0\u200b😀""#
        );
    }

    #[test]
    fn aggregate_dedupes() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
    }
}
