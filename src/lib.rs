//! vap-eval: evaluate Kubernetes ValidatingAdmissionPolicy offline, exactly as kube-apiserver does.

pub mod admission;
pub mod diagnostic;
