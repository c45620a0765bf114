//! Compiling a policy's expressions the way the apiserver does (`validating/plugin.go`
//! `compilePolicy`, `cel/compile.go`, `cel/composition.go`).
//!
//! - At evaluation time every expression is compiled with the **StoredExpressions** environment
//!   of the target version. Variables are compiled in order; each adds a field of its static
//!   output type to `kubernetes.variables` (compile failure ⇒ `dyn`), so an expression sees the
//!   variables declared before it (spec §1.12).
//! - API validation compiles new expressions with the **NewExpressions** environment (spec §7.4),
//!   through [`CelCompiler`]'s [`ExpressionCompiler`] implementation.
//!
//! Compile errors are not fatal: each failing expression keeps its error, which becomes its
//! decision message when evaluated (spec §1.3).

use super::types::{ValidatingAdmissionPolicy, Variable};
use super::validation::{CompileRequest, ExpressionCompiler};
use crate::cel::checker::{CheckOptions, ExpectedResult};
use crate::cel::compile::{compile, regex_compiles, CompileOptions, Compiled};
use crate::cel::decls::Declarations;
use crate::cel::parser::ParseOptions;
use crate::cel::stdlib::Registry;
use crate::cel::types::Type;
use crate::environment::{
    declarations, EnvironmentMode, ExpressionKind, Features, KubeVersion, VariableScope,
};
use std::cell::RefCell;
use std::rc::Rc;

/// Compiles admission expressions for one Kubernetes version and environment mode.
pub struct CelCompiler {
    pub version: KubeVersion,
    pub mode: EnvironmentMode,
    features: Features,
    registry: Rc<Registry>,
    /// API validation's variables compiled so far (see [`ExpressionCompiler`] below).
    declared: RefCell<DeclaredVariables>,
}

/// The variables API validation compiled last, in order, with their static types: the
/// expressions of one policy see the same variables, so each is compiled once per policy, not
/// once per expression that sees it. A variable's type depends only on `has_params` and the
/// variables before it, so a request whose variables start with the same names and expressions
/// reuses that prefix.
#[derive(Default)]
struct DeclaredVariables {
    has_params: bool,
    /// Name, expression and static output type.
    variables: Vec<(String, String, Type)>,
}

/// Every function implementation (standard library, cel-go extensions, Kubernetes libraries).
/// Declarations decide what a version may call; the implementations are shared.
pub fn shared_registry() -> Rc<Registry> {
    crate::library::registry()
}

impl CelCompiler {
    pub fn new(version: KubeVersion, mode: EnvironmentMode) -> Self {
        CelCompiler {
            version,
            mode,
            features: Features::for_version(version, mode),
            registry: shared_registry(),
            declared: RefCell::default(),
        }
    }

    pub fn features(&self) -> &Features {
        &self.features
    }

    fn options(&self, kind: ExpressionKind) -> CompileOptions {
        CompileOptions {
            parse: ParseOptions { backtick_identifiers: self.features.backtick_identifiers },
            check: CheckOptions {
                regex_validator: Some(regex_compiles),
                ..self.features.check_options()
            },
            expected: kind.expected_result(),
        }
    }

    /// The declarations one expression compiles against (the cached base of this version and
    /// mode, plus the variables of `kind` in `scope`).
    pub fn declarations(&self, kind: ExpressionKind, scope: &VariableScope) -> Declarations {
        declarations(self.version, self.mode, kind, scope)
    }

    /// Compile one expression of `kind` with `scope` visible.
    pub fn compile(
        &self,
        expression: &str,
        kind: ExpressionKind,
        scope: &VariableScope,
    ) -> Compiled {
        let decls = self.declarations(kind, scope);
        self.compile_in(expression, kind, &decls, kind.expected_result())
    }

    /// Compile one expression of `kind` against explicit declarations (e.g. with extra variables),
    /// requiring `expected` as its result type.
    pub fn compile_in(
        &self,
        expression: &str,
        kind: ExpressionKind,
        decls: &Declarations,
        expected: ExpectedResult,
    ) -> Compiled {
        let options = CompileOptions { expected, ..self.options(kind) };
        compile(expression, decls, &self.registry, &options)
    }

    /// `vars` compiled in order as API validation declares them (name and static type), through
    /// the cache of the variables compiled last ([`DeclaredVariables`]). Out of line: most
    /// policies have no variables.
    #[inline(never)]
    fn declare_variables(&self, vars: &[Variable], has_params: bool) -> Vec<(String, Type)> {
        let mut cache = self.declared.borrow_mut();
        if cache.has_params != has_params {
            *cache = DeclaredVariables { has_params, variables: Vec::new() };
        }
        let same = cache
            .variables
            .iter()
            .zip(vars)
            .take_while(|((name, expression, _), v)| *name == v.name && *expression == v.expression)
            .count();
        cache.variables.truncate(same);
        let mut declared: Vec<(String, Type)> =
            cache.variables.iter().map(|(n, _, t)| (n.clone(), t.clone())).collect();
        for v in &vars[same..] {
            let scope = VariableScope {
                has_params,
                variables: Some(declared.clone()),
                ..VariableScope::default()
            };
            let c = self.compile(&v.expression, ExpressionKind::Variable, &scope);
            declared.push((v.name.clone(), c.output_type.clone()));
            cache.variables.push((v.name.clone(), v.expression.clone(), c.output_type));
        }
        declared
    }
}

impl ExpressionCompiler for CelCompiler {
    fn compile(&self, r: &CompileRequest<'_>) -> Result<(), String> {
        // API validation compiles variables in order; each later expression sees the earlier
        // ones with their static types.
        let variables = r.variables.map(|vars| match vars {
            [] => Vec::new(),
            _ => self.declare_variables(vars, r.has_params),
        });
        let scope =
            VariableScope { has_params: r.has_params, variables, ..VariableScope::default() };
        let c = CelCompiler::compile(self, r.expression, r.kind, &scope);
        match c.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A compiled composition variable.
pub struct CompiledVariable {
    pub name: String,
    pub compiled: Compiled,
}

/// A compiled validation: the expression and its optional messageExpression.
pub struct CompiledValidation {
    pub expression: Compiled,
    pub message_expression: Option<Compiled>,
}

/// Every expression of a policy, compiled for evaluation (StoredExpressions).
pub struct CompiledPolicy {
    pub variables: Vec<CompiledVariable>,
    pub match_conditions: Vec<(String, Compiled)>,
    pub validations: Vec<CompiledValidation>,
    pub audit_annotations: Vec<(String, Compiled)>,
}

impl CompiledPolicy {
    /// Compile `policy` as the apiserver's plugin does before evaluating it.
    pub fn new(policy: &ValidatingAdmissionPolicy, compiler: &CelCompiler) -> CompiledPolicy {
        let spec = &policy.spec;
        let has_params = spec.param_kind.is_some();
        let mut declared: Vec<(String, Type)> = Vec::new();
        let mut variables = Vec::with_capacity(spec.variables.len());
        for v in &spec.variables {
            let scope = VariableScope {
                has_params,
                variables: Some(declared.clone()),
                ..Default::default()
            };
            let compiled = compiler.compile(&v.expression, ExpressionKind::Variable, &scope);
            let t = if compiled.error.is_some() { Type::Dyn } else { compiled.output_type.clone() };
            // A later definition of the same name replaces the earlier one (spec §1.12).
            declared.retain(|(n, _)| n != &v.name);
            declared.push((v.name.clone(), t));
            variables.push(CompiledVariable { name: v.name.clone(), compiled });
        }
        // The runtime compiler always declares `variables` (spec §1.12).
        let scope = VariableScope { has_params, variables: Some(declared), ..Default::default() };
        let match_conditions = spec
            .match_conditions
            .iter()
            .map(|m| {
                (
                    m.name.clone(),
                    compiler.compile(&m.expression, ExpressionKind::MatchCondition, &scope),
                )
            })
            .collect();
        let validations = spec
            .validations
            .iter()
            .map(|v| CompiledValidation {
                expression: compiler.compile(&v.expression, ExpressionKind::Validation, &scope),
                message_expression: (!v.message_expression.is_empty()).then(|| {
                    compiler.compile(
                        &v.message_expression,
                        ExpressionKind::MessageExpression,
                        &scope,
                    )
                }),
            })
            .collect();
        let audit_annotations = spec
            .audit_annotations
            .iter()
            .map(|a| {
                (
                    a.key.clone(),
                    compiler.compile(&a.value_expression, ExpressionKind::AuditAnnotation, &scope),
                )
            })
            .collect();
        CompiledPolicy { variables, match_conditions, validations, audit_annotations }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::field::FieldPath;

    fn vars(list: &[(&str, &str)]) -> Vec<Variable> {
        list.iter()
            .map(|(n, e)| Variable { name: n.to_string(), expression: e.to_string() })
            .collect()
    }

    /// API validation's variables are compiled once per list, and a compiler that has seen one
    /// list answers for another exactly as a fresh compiler does.
    #[test]
    fn declared_variables_are_reused_only_for_the_same_prefix() {
        let field = FieldPath::new("spec.validations[0].expression");
        let ints = vars(&[("a", "1"), ("b", "variables.a + 1")]);
        let strings = vars(&[("a", "'x'"), ("b", "variables.a + 'y'")]);
        let mixed = vars(&[("a", "1"), ("b", "string(variables.a) + 'y'")]);
        let cases: Vec<(&[Variable], bool)> = vec![
            (&ints, false),
            (&strings, false),
            (&ints, false),
            (&mixed, false),
            (&ints, true),
            (&ints[..1], true),
            (&strings, true),
        ];
        let shared = CelCompiler::new(KubeVersion::default(), EnvironmentMode::NewExpressions);
        for (variables, has_params) in cases {
            for expression in ["variables.b > 0", "variables.b.startsWith('x')", "variables.a > 0"]
            {
                let r = CompileRequest {
                    field: &field,
                    expression,
                    kind: ExpressionKind::Validation,
                    has_params,
                    has_authorizer: false,
                    variables: Some(variables),
                };
                let fresh =
                    CelCompiler::new(KubeVersion::default(), EnvironmentMode::NewExpressions);
                assert_eq!(
                    ExpressionCompiler::compile(&shared, &r),
                    ExpressionCompiler::compile(&fresh, &r),
                    "{expression} with {variables:?}"
                );
            }
        }
    }
}
