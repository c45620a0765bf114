//! vap-eval's CEL engine: the parser, the checker and the evaluator (`cel`), Go RE2 regular
//! expressions and the library-binding helpers (`library`), source locations (`diagnostic`).
//!
//! A crate of its own only so that the release profile can optimise it for speed while the
//! Kubernetes libraries (`vap-eval-k8s`), the admission pipeline and the JavaScript API around
//! it are optimised for size; use it through the `vap-eval` crate, which re-exports these
//! modules at the same paths.

/// The wasm module's per-call arena: its switch.
pub mod arena_switch;
pub mod cel;
pub mod diagnostic;
pub mod hash;
pub mod library;
pub mod sort;

#[cfg(all(target_arch = "wasm32", feature = "tz"))]
mod host_tz;
