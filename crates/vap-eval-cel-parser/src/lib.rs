//! vap-eval's CEL parser: CEL source text → [`ast`] (cel-go's AST, positions and errors), and
//! the byte [`Span`] that diagnostics point with. Use it through `vap-eval-cel` (`cel::ast`,
//! `cel::parser`, `diagnostic::Span`), which re-exports these at those paths.

pub mod ast;
pub mod parser;

use serde::Serialize;

/// A half-open byte range `[start, end)` into the diagnostic's source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start: start as u32, end: end.max(start) as u32 }
    }
    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}
