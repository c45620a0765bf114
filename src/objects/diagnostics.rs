//! Every diagnostic of the object normaliser: one constructor each, with its code.

use crate::diagnostic::Diagnostic;

/// A field the object's type (or CRD schema) does not declare: the apiserver's decoder drops
/// it; kubectl prints this warning (`unknown field`).
pub fn unknown_field(object: &str, field: &str) -> Diagnostic {
    Diagnostic::warning(
        "object-unknown-field",
        format!(
            "{object}: unknown field \"{field}\": the apiserver drops it, policies do not see it"
        ),
    )
    .with_field(field.to_string())
}

/// A value whose JSON type does not fit the Go type: the apiserver would reject the object
/// (400 Bad Request); the value is evaluated as given.
pub fn wrong_type(object: &str, field: &str, json_type: &str, go_type: &str) -> Diagnostic {
    Diagnostic::warning(
        "object-wrong-type",
        format!("{object}: {field}: cannot decode a JSON {json_type} into a Go {go_type}: the apiserver would reject this object; evaluated as given"),
    )
    .with_field(field.to_string())
}

/// A value of the right JSON type that does not parse (a quantity, a time): the apiserver would
/// reject the object; the value is evaluated as given.
pub fn bad_value(object: &str, field: &str, message: &str) -> Diagnostic {
    Diagnostic::warning(
        "object-invalid-value",
        format!("{object}: {field}: {message}: the apiserver would reject this object; evaluated as given"),
    )
    .with_field(field.to_string())
}
