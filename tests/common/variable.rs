//! Shared by the library tests (`library_eval.rs`, `library_upstream.rs`): an expression
//! compiled as the apiserver compiles a policy variable.

use vap_eval::cel::checker::{CheckOptions, ExpectedResult};
use vap_eval::cel::compile::{compile, regex_compiles, CompileOptions, Compiled};
use vap_eval::cel::parser::ParseOptions;
use vap_eval::environment::{
    declarations, EnvironmentMode, ExpressionKind, Features, KubeVersion, VariableScope,
};

/// `expr` compiled as a variable expression (any result type) of the stored-expressions
/// environment at 1.`minor`, regexps checked at compile time. `homogeneous`: the base
/// environment's `HomogeneousAggregateLiterals` overridden (the upstream library tests' own
/// environments do not set it); `None` keeps the environment's.
pub fn compile_variable(expr: &str, minor: u32, homogeneous: Option<bool>) -> Compiled {
    let version = KubeVersion::new(minor);
    let mode = EnvironmentMode::StoredExpressions;
    let decls = declarations(version, mode, ExpressionKind::Variable, &VariableScope::default());
    let mut check = CheckOptions {
        regex_validator: Some(regex_compiles),
        ..Features::for_version(version, mode).check_options()
    };
    if let Some(h) = homogeneous {
        check.homogeneous_literals = h;
    }
    let options =
        CompileOptions { parse: ParseOptions::default(), check, expected: ExpectedResult::Any };
    compile(expr, &decls, &vap_eval::library::registry(), &options)
}
