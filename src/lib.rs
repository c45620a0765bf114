//! vap-eval: evaluate Kubernetes ValidatingAdmissionPolicy offline, exactly as kube-apiserver does.

pub mod admission;
pub mod api;
pub mod cel;
pub mod diagnostic;
pub mod environment;
pub mod library;

#[cfg(target_arch = "wasm32")]
pub mod wasm;
