//! vap-eval's Kubernetes CEL libraries (`library`), the version-gated environment
//! (`environment`) and the CEL checker (`cel::checker`, with `cel::compile`), on top of the CEL
//! engine (`vap-eval-cel`, re-exported as `cel`).
//!
//! A crate of its own so that the release profile builds it for size while the engine's
//! evaluator is built for speed: library functions run only when an expression calls them, the checker once per expression.
//! Use it through the `vap-eval` crate, which re-exports these modules at the same paths.

pub use vap_eval_cel::{diagnostic, sort};

pub mod cel;
pub mod environment;
pub mod library;
pub mod schema;
