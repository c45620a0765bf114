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

/// A value the Go decoder rejects (`message`: its error): `object-wrong-type` when the JSON
/// type does not fit the Go type, `object-invalid-value` when it does but does not parse (a
/// quantity, a time, base64). In a stored object (`oldObject`, params, namespace objects) the
/// value is evaluated as given; a request body is rejected (`rejected`).
pub fn not_decoded(code: &'static str, object: &str, field: &str, message: &str) -> Diagnostic {
    Diagnostic::warning(
        code,
        format!("{object}: {field}: {message}: the apiserver would reject this object; evaluated as given"),
    )
    .with_field(field.to_string())
}

/// The request's object does not decode: kube-apiserver answers 400 BadRequest before admission
/// (the diagnostic of the field it names, now an error).
pub fn rejected(d: &mut Diagnostic, message: &str) {
    d.severity = crate::diagnostic::Severity::Error;
    d.message = format!("{message} (400 BadRequest: the request never reaches admission)");
    d.help = "the request body is decoded before admission".into();
}
