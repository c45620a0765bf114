//! The CEL engine: parse → check → plan → evaluate.
//!
//! - [`parser`]: the `cel` crate's parser, guarded by cel-go's limits, converted into [`ast`].
//! - [`decls`]: the declaration table the checker resolves against and libraries register into.
//! - [`types`]: static types.

pub mod ast;
pub mod decls;
pub mod parser;
pub mod types;
