//! The CEL engine: parse → check → plan → evaluate.
//!
//! - [`parser`]: our lexer and recursive-descent parser for cel-go's grammar, producing [`ast`].
//! - [`checker`]: static types and name resolution, then the AST [`validators`].
//! - [`errors`]: cel-go's rendering of parse and check issues.
//! - [`decls`]: the declaration table the checker resolves against and libraries register into;
//!   [`stdlib_decls`] fills it with the standard library and cel-go's extensions.
//! - [`types`]: static types.
//! - [`value`]: runtime values, borrowing the input JSON.
//! - [`runtime`]: planner, evaluator and cost tracker.
//! - [`stdlib`]: function implementations keyed by cel-go overload id.
//! - [`compile`]: parse → check → plan in one call, checker resolutions handed to the planner.

pub mod ast;
pub mod checker;
pub mod compile;
pub mod decls;
pub mod errors;
pub mod parser;
pub mod runtime;
pub mod stdlib;
pub mod stdlib_decls;
pub mod types;
pub mod validators;
pub mod value;
