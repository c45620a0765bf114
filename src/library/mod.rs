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
