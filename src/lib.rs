//! vap-eval: evaluate Kubernetes ValidatingAdmissionPolicy offline, exactly as kube-apiserver does.

pub mod diagnostic;

#[cfg(target_arch = "wasm32")]
pub mod wasm;
