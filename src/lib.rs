//! vap-eval: evaluate Kubernetes admission (ValidatingAdmissionPolicies, webhooks, Kyverno CEL
//! rules) offline, exactly as kube-apiserver does.

pub mod admission;
pub mod api;
/// `complete` and `hover` (cargo feature `editor`, on by default).
#[cfg(feature = "editor")]
pub mod editor;
#[cfg(feature = "kyverno")]
pub mod kyverno;
pub mod objects;
mod out_of_line;
pub mod webhook;
// Many objects against one set of policies (the CLI's `audit`), and policy test files (`test`).
pub mod audit;
pub mod testing;
// The CEL engine lives in its own crate (crates/vap-eval-cel) so the release profile can build
// it for speed and the rest for size; its modules keep their paths here.
pub use vap_eval_cel::diagnostic;
pub use vap_eval_k8s::{cel, environment, library, schema};

#[cfg(target_arch = "wasm32")]
pub mod wasm;

/// The wasm module's allocator: a per-call bump arena inside the evaluate entry points.
pub mod arena;
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ARENA: arena::Arena = arena::Arena::new();

/// How many blocks of the per-call arena are live: none between calls, unless a block made
/// in a call outlived it and keeps its chunk from being reused (`tests/wasm.rs` checks that
/// none does).
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[doc(hidden)]
pub fn arena_live() -> usize {
    ARENA.live()
}

/// The standard benchmark's workload (cargo feature `bench`; not in the shipped package).
#[cfg(feature = "bench")]
pub mod bench;
#[cfg(all(target_arch = "wasm32", feature = "bench"))]
mod wasm_bench;
