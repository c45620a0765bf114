//! The CEL engine: parse → check → plan → evaluate. This crate holds the parts that run per
//! evaluation, built for speed; the checker and the declaration tables, which run once per
//! expression, are in `vap-eval-k8s` (built for size), whose `cel` module re-exports these.
//!
//! - [`parser`]: our lexer and recursive-descent parser for cel-go's grammar, producing [`ast`]
//!   (the `vap-eval-cel-parser` crate, built for size).
//! - [`decls`]: the declaration table the checker resolves against and libraries register into.
//! - [`types`]: static types.
//! - [`value`]: runtime values, borrowing the input JSON.
//! - [`runtime`]: planner, evaluator and cost tracker.
//! - [`stdlib`]: function implementations keyed by cel-go overload id.

pub use vap_eval_cel_parser::{ast, parser};
pub mod decls;
pub mod runtime;
pub mod stdlib;
pub mod types;
pub mod value;
