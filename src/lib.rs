//! vap-eval: evaluate Kubernetes ValidatingAdmissionPolicy offline, exactly as kube-apiserver does.

pub mod admission;
pub mod api;
pub mod cel;
pub mod diagnostic;
pub mod environment;
pub mod library;

#[cfg(target_arch = "wasm32")]
pub mod wasm;

/// IANA time zones from the host's `Intl` in wasm builds (feature `tz`).
#[cfg(all(target_arch = "wasm32", feature = "tz"))]
mod host_tz;

/// The standard benchmark's workload (cargo feature `bench`; not in the shipped package).
#[cfg(feature = "bench")]
pub mod bench;
#[cfg(all(target_arch = "wasm32", feature = "bench"))]
mod wasm_bench;
