//! Kubernetes CEL extension libraries, as plain Rust semantics (no CEL values yet).
//!
//! One module per apiserver library (`k8s.io/apiserver/pkg/cel/library`); each opens with its
//! reference: CEL signatures, the Kubernetes version that introduced it, and examples. Every
//! fallible function returns `Result<_, String>` whose error text is exactly what the
//! apiserver prints, so a CEL binding layer only has to wrap values.

pub mod authz;
pub mod cidr;
pub mod format;
pub mod gostr;
pub mod ip;
pub mod quantity;
pub mod regex;
pub mod semver;
pub mod url;

// Integration seam until the CEL bindings of these libraries land: the standard
// implementations only, and no Kubernetes declarations.
use crate::cel::decls::Declarations;
use crate::cel::stdlib::Registry;
use crate::environment::Features;

/// Every implementation: the standard library and cel-go extensions.
pub fn registry() -> Registry {
    Registry::standard()
}

/// Declare the Kubernetes libraries `features` enables.
pub fn declare(_decls: &mut Declarations, _features: &Features) {}

/// The `authorizer` and `authorizer.requestResource` values for a request.
pub fn authorizer_for(
    _rbac: &[serde_json::Value],
    _request: &crate::admission::request::AdmissionRequest,
) -> Option<(crate::cel::value::Value<'static>, crate::cel::value::Value<'static>)> {
    None
}
