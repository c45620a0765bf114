//! One expression from text to a runnable program: parse → check → expected result type → plan.
//!
//! Errors come back in two forms at once: as positioned [`Issue`]s (for diagnostics that
//! underline the sub-expression) and as the single text the apiserver would report
//! (`compilation failed: ERROR: <input>:1:5: …`, `must evaluate to bool but got dyn`,
//! `program instantiation failed: …`), which becomes the decision message at evaluation time.

use super::ast::Ast;
use super::checker::{self, CheckOptions, Checked, ExpectedResult};
use super::decls::Declarations;
use super::errors::{self, IssueRef};
use super::parser::{self, ParseOptions};
use super::runtime::{self, PlanOptions, Program, Reference as RuntimeRef};
use super::stdlib::Registry;
use super::types::Type;
use crate::diagnostic::Span;
use std::rc::Rc;

/// Switches for one compilation.
#[derive(Clone, Copy, Debug)]
pub struct CompileOptions {
    pub parse: ParseOptions,
    pub check: CheckOptions,
    /// The result type the expression must have (apiserver `ReturnTypes()`).
    pub expected: ExpectedResult,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            parse: ParseOptions::default(),
            check: CheckOptions {
                regex_validator: Some(regex_compiles),
                ..CheckOptions::default()
            },
            expected: ExpectedResult::Any,
        }
    }
}

/// Whether a `matches` pattern compiles (RE2 syntax, as the runtime's regex engine reads it).
pub fn regex_compiles(pattern: &str) -> bool {
    crate::library::regex::compile(pattern).is_ok()
}

/// A positioned compile problem. `offset` and `span` are byte positions in the expression;
/// `offset` is `None` for problems cel-go reports without a location (parser limits).
#[derive(Clone, Debug, PartialEq)]
pub struct Issue {
    pub message: String,
    pub offset: Option<u32>,
    pub span: Option<Span>,
}

/// A compiled expression. `program` is present exactly when `error` is absent.
pub struct Compiled {
    pub source: Rc<str>,
    pub ast: Option<Ast>,
    pub checked: Option<Checked>,
    /// The static type of the whole expression (`dyn` when it did not check).
    pub output_type: Type,
    pub program: Option<Program>,
    /// Every problem, with positions.
    pub issues: Vec<Issue>,
    /// The apiserver's text for the failure (without the `compilation error: ` prefix the
    /// evaluator adds).
    pub error: Option<String>,
}

impl Compiled {
    fn failed(
        source: &str,
        ast: Option<Ast>,
        checked: Option<Checked>,
        issues: Vec<Issue>,
        error: String,
    ) -> Self {
        Compiled {
            source: Rc::from(source),
            ast,
            checked,
            output_type: Type::Dyn,
            program: None,
            issues,
            error: Some(error),
        }
    }
}

/// Compile `source` against `decls`, planning with the implementations in `registry`.
pub fn compile(
    source: &str,
    decls: &Declarations,
    registry: &Registry,
    options: &CompileOptions,
) -> Compiled {
    let ast = match parser::parse(source, options.parse) {
        Ok(ast) => ast,
        Err(errs) => return parse_failed(source, errs),
    };
    let checked = checker::check(&ast, decls, &options.check);
    if !checked.errors.is_empty() {
        return check_failed(source, ast, checked);
    }
    let output_type = checked.output_type(&ast).clone();
    if let Err(reason) = checker::check_result_type(&output_type, options.expected) {
        return result_type_failed(source, ast, checked, reason);
    }
    let refs = runtime_refs(&checked);
    match runtime::plan(&ast, Some(&refs), registry, PlanOptions::default()) {
        Ok(program) => Compiled {
            source: ast.source.clone(),
            ast: Some(ast),
            checked: Some(checked),
            output_type,
            program: Some(program),
            issues: Vec::new(),
            error: None,
        },
        Err(e) => plan_failed(source, ast, checked, e),
    }
}

// The failures of `compile`, out of line: a page's first `evaluate()` compiles `compile` whole
// (V8 compiles each wasm function on its first call), and the usual expressions compile.

#[cold]
#[inline(never)]
fn parse_failed(source: &str, errs: Vec<parser::ParseError>) -> Compiled {
    let issues: Vec<Issue> = errs
        .iter()
        .map(|e| Issue {
            message: e.message.clone(),
            offset: e.offset,
            span: e.offset.map(|o| point(source, o)),
        })
        .collect();
    let text = format!("compilation failed: {}", errors::render_parse_errors(source, &errs));
    Compiled::failed(source, None, None, issues, text)
}

#[cold]
#[inline(never)]
fn check_failed(source: &str, ast: Ast, checked: Checked) -> Compiled {
    let issues: Vec<Issue> = checked
        .errors
        .iter()
        .map(|e| Issue { message: e.message.clone(), offset: Some(e.pos), span: Some(e.span) })
        .collect();
    let text =
        format!("compilation failed: {}", errors::render_check_issues(source, &checked.errors));
    Compiled::failed(source, Some(ast), Some(checked), issues, text)
}

#[cold]
#[inline(never)]
fn result_type_failed(source: &str, ast: Ast, checked: Checked, reason: String) -> Compiled {
    let issues = vec![Issue {
        message: reason.clone(),
        offset: Some(ast.root.pos),
        span: Some(ast.root.span),
    }];
    Compiled::failed(source, Some(ast), Some(checked), issues, reason)
}

#[cold]
#[inline(never)]
fn plan_failed(source: &str, ast: Ast, checked: Checked, e: runtime::PlanError) -> Compiled {
    let issues =
        vec![Issue { message: e.message.clone(), offset: Some(e.span.start), span: Some(e.span) }];
    let text = format!("program instantiation failed: {}", e.message);
    Compiled::failed(source, Some(ast), Some(checked), issues, text)
}

/// The runtime name of a type named by an identifier (what `type(x)` returns for a value of it).
pub fn runtime_type_name(t: &Type) -> String {
    match t {
        Type::List(_) => "list".into(),
        Type::Map(..) => "map".into(),
        Type::Optional(_) => "optional_type".into(),
        Type::Type(_) => "type".into(),
        Type::Null => "null_type".into(),
        other => other.to_string(),
    }
}

/// The checker's resolutions in the form the planner takes (indexed by node id), so calls
/// dispatch to exactly the overloads the checker allowed.
pub fn runtime_refs(checked: &Checked) -> Vec<Option<RuntimeRef>> {
    checked
        .refs
        .iter()
        .map(|r| {
            r.as_ref().map(|r| match r {
                checker::Reference::Variable(name) => {
                    RuntimeRef { name: Some(name.clone()), ..Default::default() }
                }
                checker::Reference::Function { overloads } => {
                    RuntimeRef { overload_ids: overloads.clone(), ..Default::default() }
                }
                checker::Reference::Type(t) => RuntimeRef {
                    name: Some(runtime_type_name(t)),
                    is_type: true,
                    ..Default::default()
                },
            })
        })
        .collect()
}

/// A one-character span at `offset` (parse errors have a point, not a range).
fn point(source: &str, offset: u32) -> Span {
    let start = (offset as usize).min(source.len());
    let end = source[start..].chars().next().map(|c| start + c.len_utf8()).unwrap_or(start);
    Span::new(start, end)
}

/// Render positioned issues in cel-go's format (used for diagnostics' text).
pub fn render_issues(source: &str, issues: &[Issue]) -> String {
    let refs: Vec<IssueRef<'_>> =
        issues.iter().map(|i| IssueRef { message: &i.message, offset: i.offset }).collect();
    errors::render(source, &refs)
}
