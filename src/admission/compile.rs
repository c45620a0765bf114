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

use super::types::ValidatingAdmissionPolicy;
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
use std::rc::Rc;

/// Compiles admission expressions for one Kubernetes version and environment mode.
pub struct CelCompiler {
    pub version: KubeVersion,
    pub mode: EnvironmentMode,
    features: Features,
    registry: Rc<Registry>,
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
}

impl ExpressionCompiler for CelCompiler {
    fn compile(&self, r: &CompileRequest<'_>) -> Result<(), String> {
        let variables = r.variables.map(|vars| {
            // API validation compiles variables in order; each later expression sees the
            // earlier ones with their static types.
            let mut declared: Vec<(String, Type)> = Vec::new();
            for v in vars {
                let scope = VariableScope {
                    has_params: r.has_params,
                    variables: Some(declared.clone()),
                    ..VariableScope::default()
                };
                let c = CelCompiler::compile(self, &v.expression, ExpressionKind::Variable, &scope);
                declared.push((v.name.clone(), c.output_type.clone()));
            }
            declared
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
