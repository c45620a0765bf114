//! The CEL engine (`vap_eval_cel::cel`, re-exported here) plus its once-per-expression parts,
//! built for size:
//!
//! - [`checker`]: static types and name resolution, then the AST [`validators`].
//! - [`errors`]: cel-go's rendering of parse and check issues.
//! - [`stdlib_decls`]: the standard library and cel-go's extensions in the declaration table,
//!   declared from data ([`signature`]).
//! - [`compile`]: parse → check → plan in one call, checker resolutions handed to the planner.

pub use vap_eval_cel::cel::*;

pub mod checker;
pub mod compile;
pub mod errors;
pub mod signature;
pub mod stdlib_decls;
pub mod validators;
