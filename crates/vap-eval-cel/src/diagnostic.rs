//! One `Diagnostic` type for every user-facing problem, and its renderer.
//!
//! Positions inside the core are **half-open byte ranges** into the text the
//! diagnostic is about (an expression, or a manifest document). Only the wasm
//! boundary converts them to UTF-16 code units and 1-based line/column.

use serde::Serialize;

/// How bad a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub enum Severity {
    /// The thing it is about cannot be used as written (compile error, invalid manifest).
    Error,
    /// Worth knowing; evaluation is unaffected (type-check warnings, ignored fields).
    Warning,
    /// Background information (why something did not match, defaults applied).
    Info,
}

/// A half-open byte range `[start, end)` into the diagnostic's source text (defined with the
/// parser, which builds it).
pub use vap_eval_cel_parser::Span;

/// What text a span points into.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify), tsify(missing_as_null, hashmap_as_object))]
pub enum SourceRef {
    /// A CEL expression: the span indexes `expression` (as written in the manifest, untrimmed
    /// unless the apiserver trims it before compiling).
    Expression { expression: String },
    /// A document of the manifest text: the span indexes the whole input text; `document` is the
    /// 0-based index of the `---`-separated document.
    Manifest { document: usize },
    /// One of the request inputs given as text (`object`, `oldObject`, `request`): the span
    /// indexes that text.
    Input { name: String },
}

/// A problem, with enough context to show it where it happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable kebab-case identifier, e.g. `cel-undeclared-reference`, `manifest-yaml-syntax`.
    pub code: &'static str,
    /// The message, in the wording of the upstream tool where one exists (cel-go, apiserver).
    pub message: String,
    /// Kubernetes field path the problem belongs to, e.g. `spec.validations[0].expression`,
    /// prefixed by the object (`ValidatingAdmissionPolicy/name`) where relevant. May be empty.
    pub field: String,
    /// Where in `source` the problem is; `None` when the problem has no position.
    pub span: Option<Span>,
    /// The text `span` points into.
    pub source: Option<SourceRef>,
    /// A hint on how to fix it. May be empty.
    pub help: String,
}

impl Diagnostic {
    pub fn new(severity: Severity, code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code,
            message: message.into(),
            field: String::new(),
            span: None,
            source: None,
            help: String::new(),
        }
    }
    pub fn error(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }
    pub fn warning(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = field.into();
        self
    }
    pub fn with_span(mut self, span: Span, source: SourceRef) -> Self {
        self.span = Some(span);
        self.source = Some(source);
        self
    }
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = help.into();
        self
    }
}

/// (1-based line, 0-based code-point column, byte offset of the line start) of a byte offset.
pub type Location = (u32, u32, usize);

/// 1-based line and 1-based code-point column of a byte offset, as cel-go and go-yaml print them.
/// Offsets past the end (or inside a character) are clamped to the nearest preceding character
/// boundary. Lines are split on `\n` only.
pub fn line_column(text: &str, offset: u32) -> (u32, u32) {
    let (line, col0, _) = locate(text, offset);
    (line, col0 + 1)
}

/// 1-based line and 1-based column counted in UTF-16 code units (what JavaScript editors use).
pub fn line_column_utf16(text: &str, offset: u32) -> (u32, u32) {
    let (line, _, line_start) = locate(text, offset);
    let end = clamp(text, offset as usize);
    let col: usize = text[line_start..end].chars().map(char::len_utf16).sum();
    (line, col as u32 + 1)
}

/// The [`Location`] of a byte offset (clamped like [`line_column`]).
pub fn locate(text: &str, offset: u32) -> Location {
    let end = clamp(text, offset as usize);
    let head = &text[..end];
    let line_start = head.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line = head.bytes().filter(|&b| b == b'\n').count() as u32 + 1;
    let col = text[line_start..end].chars().count() as u32;
    (line, col, line_start)
}

fn clamp(text: &str, offset: usize) -> usize {
    let mut o = offset.min(text.len());
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    o
}
