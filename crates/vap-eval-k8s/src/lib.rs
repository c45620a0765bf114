//! vap-eval's Kubernetes CEL libraries (`library`) and the version-gated environment
//! (`environment`), on top of the CEL engine (`vap-eval-cel`).
//!
//! A crate of its own so that the release profile builds it for size while the engine's
//! evaluator is built for speed: library functions run only when an expression calls them.
//! Use it through the `vap-eval` crate, which re-exports these modules at the same paths.

pub use vap_eval_cel::{cel, diagnostic, sort};

pub mod environment;
pub mod library;
