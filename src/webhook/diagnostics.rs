//! Every diagnostic the webhook part can produce: one constructor each, with its stable code.

use crate::diagnostic::Diagnostic;

/// A webhook configuration in a version the apiserver does not serve (only v1, and v1beta1
/// read by conversion, are accepted).
pub fn unsupported_version(api_version: &str, kind: &str) -> Diagnostic {
    Diagnostic::error(
        "webhook-unsupported-version",
        format!("{kind} {api_version} is not supported: use admissionregistration.k8s.io/v1"),
    )
}

/// A v1beta1 configuration: converted to v1 after v1beta1's own defaults (which differ).
pub fn converted(api_version: &str, kind: &str) -> Diagnostic {
    Diagnostic::new(
        crate::diagnostic::Severity::Info,
        "webhook-converted-version",
        format!("{kind} {api_version} was converted to v1 after applying v1beta1's defaults (failurePolicy Ignore, matchPolicy Exact, sideEffects Unknown, timeoutSeconds 30, admissionReviewVersions [v1beta1]); kube-apiserver 1.22+ no longer serves v1beta1"),
    )
}

/// Two configurations of one kind with the same name: the later document is used.
pub fn duplicate(kind: &str, name: &str) -> Diagnostic {
    Diagnostic::warning(
        "webhook-duplicate-configuration",
        format!("{kind} {name:?} is defined more than once: the last definition is used"),
    )
}

/// A webhook matched only through `matchPolicy: Equivalent`: the apiserver would convert the
/// object to the matched version, which vap-eval cannot do.
pub fn needs_conversion(field: String, kind: &str) -> Diagnostic {
    Diagnostic::warning(
        "webhook-needs-conversion",
        format!("matched through matchPolicy: Equivalent as {kind}: kube-apiserver converts the object to that version before evaluating matchConditions and sending it; vap-eval uses the object as given"),
    )
    .with_field(field)
}

/// An admission plugin rejected the request: the plugins after it never run.
pub fn chain_stopped(plugin: &str, skipped: &str) -> Diagnostic {
    Diagnostic::new(
        crate::diagnostic::Severity::Info,
        "admission-chain-stopped",
        format!("{plugin} rejected the request: {skipped} did not run"),
    )
}

/// `caBundle` is not standard base64 (Go's `encoding/json` decoding of a `[]byte` field).
pub fn ca_bundle_not_base64(field: &crate::admission::field::FieldPath, at: usize) -> Diagnostic {
    Diagnostic::error("manifest-wrong-type", format!("illegal base64 data at input byte {at}"))
        .with_field(field.to_string())
}
