//! Parse → check → plan in one call, the way the apiserver compiles an expression
//! (`cel.Env.Compile` then `Program`): the checker's resolutions become the planner's
//! references, so calls dispatch to exactly the overloads the checker allowed.

use super::checker::{self, CheckOptions, Checked};
use super::decls::Declarations;
use super::errors::{render_check_issues, render_parse_errors};
use super::parser::{parse, ParseOptions};
use super::runtime::{self, PlanOptions, Program};
use super::stdlib::Registry;
use super::types::Type;

/// A compiled expression and its static result type.
pub struct Compiled {
    pub program: Program,
    pub output_type: Type,
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

/// The checker's references, as the planner takes them (indexed by node id).
pub fn runtime_references(checked: &Checked) -> Vec<Option<runtime::Reference>> {
    checked
        .refs
        .iter()
        .map(|r| {
            r.as_ref().map(|r| match r {
                checker::Reference::Variable(name) => {
                    runtime::Reference { name: Some(name.clone()), ..Default::default() }
                }
                checker::Reference::Function { overloads } => {
                    runtime::Reference { overload_ids: overloads.clone(), ..Default::default() }
                }
                checker::Reference::Type(t) => runtime::Reference {
                    name: Some(runtime_type_name(t)),
                    is_type: true,
                    ..Default::default()
                },
            })
        })
        .collect()
}

/// Compile `source` against `decls`. The error is the rendered issue list, as cel-go prints
/// it (`ERROR: <input>:1:5: ...`), or `program instantiation failed: ...` when planning fails.
pub fn compile(
    source: &str,
    decls: &Declarations,
    parse_options: ParseOptions,
    check_options: &CheckOptions,
    registry: &Registry,
) -> Result<Compiled, String> {
    let ast = parse(source, parse_options).map_err(|e| render_parse_errors(source, &e))?;
    let checked = checker::check(&ast, decls, check_options);
    if !checked.errors.is_empty() {
        return Err(render_check_issues(source, &checked.errors));
    }
    let output_type = checked.output_type(&ast).clone();
    let refs = runtime_references(&checked);
    let program = runtime::plan(&ast, Some(&refs), registry, PlanOptions::default())
        .map_err(|e| format!("program instantiation failed: {}", e.message))?;
    Ok(Compiled { program, output_type })
}
