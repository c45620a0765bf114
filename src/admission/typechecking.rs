//! Type checking a policy against the schemas of the kinds it matches, as the apiserver's
//! ValidatingAdmissionPolicy status controller does (apiserver
//! `pkg/admission/plugin/policy/validating/typechecking.go`): the result is what
//! `status.typeChecking.expressionWarnings` would hold, byte for byte. Beyond the apiserver, the
//! expressions it does not check (variables, matchConditions, auditAnnotations) are checked the
//! same way and reported as vap-eval's own diagnostics. Typing never changes evaluation: at
//! admission `object`, `oldObject` and `params` stay `dyn`.
//!
//! Rules and sources: `docs/typechecking-semantics.md`.

use super::compile::CelCompiler;
use super::diagnostics as diag;
use super::manifests::{Loaded, Manifests};
use super::resources::{GroupVersionKind, ResourceCatalog};
use super::types::ValidatingAdmissionPolicy;
use crate::cel::checker::ExpectedResult;
use crate::cel::compile::Compiled;
use crate::cel::decls::Declarations;
use crate::cel::types::Type;
use crate::diagnostic::Diagnostic;
use crate::environment::{
    base_declarations, declare_admission_variables, var, EnvironmentMode, ExpressionKind,
    KubeVersion, VariableScope,
};
use crate::schema::{self, DeclTypes, Definitions, NoDefinitions, SchemaBundle};
use serde::Serialize;
use serde_json::{Map, Value as Json};
use std::rc::Rc;

/// At most this many kinds are collected per resource rule (`maxTypesToCheck`).
pub const MAX_TYPES_TO_CHECK: usize = 10;

/// One entry of `status.typeChecking.expressionWarnings`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
pub struct ExpressionWarning {
    /// `spec.validations[0].expression` or `spec.validations[0].messageExpression`.
    pub field_ref: String,
    /// Per checked kind `"<group>/<version>, Kind=<Kind>: <cel-go issues>\n"`, joined by `"\n"`.
    pub warning: String,
}

/// The schemas type checking can use, in lookup order: the input's `schemas`
/// (`"<apiVersion>/<Kind>"` → OpenAPI v3 schema), the supplied CRDs, the built-in bundle.
pub struct SchemaSources<'a> {
    pub user: &'a Map<String, Json>,
    pub crds: &'a [Json],
    pub builtin: Option<Rc<SchemaBundle>>,
}

/// The definition names used for a CRD's `metadata` (what the apiserver publishes for it).
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

impl SchemaSources<'_> {
    /// The built-in bundle for `version`: its own, or the newest registered older one (every
    /// supported version has its own; the JavaScript side may have registered only some).
    pub fn builtin_for(version: KubeVersion) -> Option<Rc<SchemaBundle>> {
        let own = minor_of(&version.to_string());
        (30..=own).rev().find_map(|m| {
            let minor = format!("1.{m}");
            schema::embedded::ensure(&minor);
            schema::builtin(&minor)
        })
    }

    /// Whether no kind can resolve: [`resolve`](Self::resolve) is `None` for every kind.
    pub fn is_empty(&self) -> bool {
        self.user.is_empty() && self.crds.is_empty() && self.builtin.is_none()
    }

    /// The root schema of `gvk` (`ResolveSchema`), or `None` (`ErrSchemaNotFound`).
    pub fn resolve(&self, gvk: &GroupVersionKind) -> Option<Json> {
        let key = format!("{}/{}", gvk.api_version(), gvk.kind);
        if let Some(s) = self.user.get(&key) {
            return Some(s.clone());
        }
        for crd in self.crds {
            if let Some(s) = crd_schema(crd, gvk) {
                return Some(s);
            }
        }
        self.builtin.as_ref()?.kind(&key)
    }

    pub fn definitions(&self) -> &dyn Definitions {
        match &self.builtin {
            Some(b) => &**b,
            None => &NoDefinitions,
        }
    }

    /// `resolve` and convert to CEL types named `type_name`. Conversions of built-in kinds are
    /// cached per bundle (an editor converts the same kind at every keystroke).
    pub fn decl_types(&self, gvk: &GroupVersionKind, type_name: &str) -> Option<DeclTypes> {
        let root = self.resolve(gvk)?;
        let key = format!("{}/{}", gvk.api_version(), gvk.kind);
        let builtin = match &self.builtin {
            Some(b) if !self.user.contains_key(&key) && b.kind(&key).as_ref() == Some(&root) => b,
            _ => return Some(schema::decl_types(&root, self.definitions(), type_name)),
        };
        thread_local! {
            static CACHE: std::cell::RefCell<Vec<Cached>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        let key = format!("{key} {type_name}");
        let hit = CACHE.with(|c| {
            c.borrow().iter().find(|e| Rc::ptr_eq(&e.0, builtin) && e.1 == key).map(|e| e.2.clone())
        });
        // Kept beyond the call: not in the per-call arena.
        let t = hit.unwrap_or_else(|| {
            vap_eval_cel::arena_switch::outside(|| {
                let t = Rc::new(schema::decl_types(&root, self.definitions(), type_name));
                CACHE.with(|c| {
                    let mut c = c.borrow_mut();
                    if c.len() >= 64 {
                        c.remove(0);
                    }
                    // The key made here, not the one made in the arena above.
                    c.push((builtin.clone(), key.as_str().to_owned(), t.clone()));
                });
                t
            })
        });
        Some((*t).clone())
    }
}

/// A cached conversion: (bundle, `"<apiVersion>/<Kind> <type name>"`, types).
type Cached = (Rc<SchemaBundle>, String, Rc<DeclTypes>);

fn minor_of(s: &str) -> u32 {
    s.split('.').nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// The schema the apiserver publishes for a CRD's served version `gvk`: the version's
/// `openAPIV3Schema` with `apiVersion`/`kind` strings and `metadata` the ObjectMeta definition.
/// (Out of line: most manifests hold no CRD.)
#[inline(never)]
pub fn crd_schema(crd: &Json, gvk: &GroupVersionKind) -> Option<Json> {
    let spec = crd.get("spec")?;
    if spec.get("group")?.as_str()? != gvk.group
        || spec.get("names")?.get("kind")?.as_str()? != gvk.kind
    {
        return None;
    }
    let version = spec.get("versions")?.as_array()?.iter().find(|v| {
        v.get("name").and_then(Json::as_str) == Some(gvk.version.as_str())
            && v.get("served").and_then(Json::as_bool) != Some(false)
    })?;
    let mut root = version.get("schema")?.get("openAPIV3Schema")?.as_object()?.clone();
    let mut props = root.get("properties").and_then(Json::as_object).cloned().unwrap_or_default();
    props.insert("apiVersion".into(), schema::literal(r#"{"type": "string"}"#));
    props.insert("kind".into(), schema::literal(r#"{"type": "string"}"#));
    let mut meta = Map::new();
    meta.insert("$ref".into(), Json::String(OBJECT_META.into()));
    props.insert("metadata".into(), Json::Object(meta));
    root.insert("properties".into(), Json::Object(props));
    root.entry("type").or_insert_with(|| Json::String("object".into()));
    Some(Json::Object(root))
}

/// `typesToCheck`: the kinds a policy's `matchConstraints.resourceRules` name, resolved through
/// the REST mapper (built-in table and CRDs), sorted by group, version, kind.
pub fn types_to_check(
    policy: &ValidatingAdmissionPolicy,
    catalog: &ResourceCatalog,
) -> Vec<GroupVersionKind> {
    let mut gvks: Vec<GroupVersionKind> = Vec::new();
    let Some(mc) = &policy.spec.match_constraints else { return gvks };
    'rules: for rule in &mc.resource_rules {
        // A wildcard group or version gives up on the rule; wildcard and subresource
        // resources are skipped.
        if rule.api_groups.iter().any(|g| g.contains('*'))
            || rule.api_versions.iter().any(|v| v.contains('*'))
        {
            continue;
        }
        let mut groups = rule.api_groups.clone();
        let mut versions = rule.api_versions.clone();
        let mut resources: Vec<String> =
            rule.resources.iter().filter(|r| !r.contains(['*', '/'])).cloned().collect();
        if groups.is_empty() || versions.is_empty() || resources.is_empty() {
            continue;
        }
        for list in [&mut groups, &mut versions, &mut resources] {
            vap_eval_cel::sort::sort_by(list, |a, b| a.cmp(b));
        }
        let mut count = 0;
        for g in &groups {
            for v in &versions {
                for r in &resources {
                    for gvk in catalog.kinds_for(g, v, r) {
                        if !gvks.contains(&gvk) {
                            gvks.push(gvk);
                        }
                        count += 1;
                        if count == MAX_TYPES_TO_CHECK {
                            break 'rules;
                        }
                    }
                }
            }
        }
    }
    vap_eval_cel::sort::sort_by(&mut gvks, |a, b| {
        (&a.group, &a.version, &a.kind).cmp(&(&b.group, &b.version, &b.kind))
    });
    gvks
}

/// What type checking found for one policy.
#[derive(Clone, Debug, Default)]
pub struct PolicyTypeCheck {
    /// `status.typeChecking.expressionWarnings`.
    pub expression_warnings: Vec<ExpressionWarning>,
    /// The kinds checked against, in order.
    pub kinds: Vec<GroupVersionKind>,
    /// Warning diagnostics, positioned in the manifests: the status warnings per issue, and
    /// vap-eval's own checks of the other expressions.
    pub diagnostics: Vec<Diagnostic>,
}

/// The typed environment of one checked kind: declarations holding the object (and params)
/// types, and the scope declaring `object`, `oldObject`, `params`.
pub struct TypedEnv {
    pub gvk: GroupVersionKind,
    pub decls: Rc<Declarations>,
    pub scope: VariableScope,
    pub types: Option<DeclTypes>,
    pub params: Option<DeclTypes>,
}

/// Root type names: the kind's name (the apiserver appends the current nanosecond; see
/// docs/typechecking-semantics.md §2.3). The param type gets a `1` when both names collide.
fn type_names(object: &str, params: &str) -> (String, String) {
    let p = if params == object { format!("{params}1") } else { params.to_string() };
    (object.to_string(), p)
}

/// The environments of `policy`: one per checked kind (`CreateContext`).
pub fn typed_envs(
    policy: &ValidatingAdmissionPolicy,
    catalog: &ResourceCatalog,
    sources: &SchemaSources<'_>,
    compiler: &CelCompiler,
) -> Vec<TypedEnv> {
    let param_gvk = policy
        .spec
        .param_kind
        .as_ref()
        .and_then(|p| GroupVersionKind::from_api_version(&p.api_version, &p.kind));
    let base = base_declarations(compiler.features());
    types_to_check(policy, catalog)
        .into_iter()
        .filter_map(|gvk| {
            let param_name = param_gvk.as_ref().map(|p| p.kind.as_str()).unwrap_or("");
            let (object_name, params_name) = type_names(&gvk.kind, param_name);
            let types = sources.decl_types(&gvk, &object_name)?;
            // A param schema without a CEL type is a nil DeclType upstream: `params` undeclared.
            let params = param_gvk
                .as_ref()
                .and_then(|p| sources.decl_types(p, &params_name))
                .filter(|t| t.root.is_some());
            let mut d = Declarations::extending(base.clone());
            for o in types.objects.iter().chain(params.iter().flat_map(|p| p.objects.iter())) {
                d.add_object(o.clone());
            }
            let scope = VariableScope {
                // `params` is declared only when its schema resolved (`buildEnvSet`).
                has_params: params.is_some(),
                variables: Some(Vec::new()),
                object_type: Some(types.root.clone().unwrap_or(Type::Dyn)),
                params_type: params.as_ref().map(|p| p.root.clone().unwrap_or(Type::Dyn)),
            };
            Some(TypedEnv { gvk, decls: Rc::new(d), scope, types: Some(types), params })
        })
        .collect()
}

impl TypedEnv {
    /// Declarations for one expression: `object`, `oldObject`, `request`, `namespaceObject`,
    /// `params` (when resolved), `authorizer` (every kind, but not `authorizer.requestResource`:
    /// `buildEnvSet` declares only `authorizer`), `variables` as in `scope`.
    pub fn declarations(&self, scope: &VariableScope) -> Declarations {
        let mut d = Declarations::extending(self.decls.clone());
        declare_admission_variables(&mut d, ExpressionKind::Validation, scope);
        d.variables.remove(var::REQUEST_RESOURCE_AUTHORIZER);
        d
    }

    /// Compile the policy's variables in order (`CompileAndStoreVariables`): each declares its
    /// output type, `dyn` when it does not compile. Returns the scope for later expressions and
    /// each variable's compilation.
    pub fn variables(
        &self,
        policy: &ValidatingAdmissionPolicy,
        compiler: &CelCompiler,
    ) -> (VariableScope, Vec<Compiled>) {
        let mut scope = self.scope.clone();
        let mut out = Vec::new();
        for v in &policy.spec.variables {
            let d = self.declarations(&scope);
            let c = compiler.compile_in(
                &v.expression,
                ExpressionKind::Variable,
                &d,
                ExpectedResult::Any,
            );
            let t = if c.error.is_some() { Type::Dyn } else { c.output_type.clone() };
            if let Some(vars) = scope.variables.as_mut() {
                vars.retain(|(n, _)| n != &v.name);
                vars.push((v.name.clone(), t));
            }
            out.push(c);
        }
        (scope, out)
    }
}

/// The object type of a standalone expression (`evaluateExpression`, `complete`, `hover`):
/// the schema given, or the kind's (`"<apiVersion>/<Kind>"` through `sources`). `None` when
/// neither resolves.
pub fn object_types(
    sources: &SchemaSources<'_>,
    kind: Option<&GroupVersionKind>,
    schema: Option<&Json>,
) -> Option<DeclTypes> {
    let name = kind.map(|k| k.kind.clone()).unwrap_or_else(|| "Object".to_string());
    let t = match (schema, kind) {
        (Some(s), _) => schema::decl_types(s, sources.definitions(), &name),
        (None, Some(k)) => sources.decl_types(k, &name)?,
        (None, None) => return None,
    };
    t.root.is_some().then_some(t)
}

/// Declarations layered on `base` holding `types`' object types.
pub fn with_types(base: Rc<Declarations>, types: &[&DeclTypes]) -> Rc<Declarations> {
    let mut d = Declarations::extending(base);
    for t in types {
        for o in &t.objects {
            d.add_object(o.clone());
        }
    }
    Rc::new(d)
}

/// The cel-go issue text of a failed compilation, when it failed in parse or check (the
/// apiserver's type checker does not plan programs).
fn issues_text(c: &Compiled) -> Option<&str> {
    c.error.as_deref()?.strip_prefix("compilation failed: ")
}

/// Type check `policy` (`TypeChecker.Check`) and, beyond it, its other expressions.
/// `runtime_failed(path)` says whether the evaluation compile already reported that expression
/// (then no duplicate diagnostic; the status still lists it).
pub fn check_policy(
    text: &str,
    manifests: &Manifests,
    policy: &Loaded<ValidatingAdmissionPolicy>,
    sources: &SchemaSources<'_>,
    version: KubeVersion,
    runtime_failed: &dyn Fn(&str) -> bool,
) -> PolicyTypeCheck {
    // Nothing to resolve a kind's schema from (no input schemas, no CRDs, no built-in bundle:
    // the playground's first evaluation, before it loads the schemas): no kind has a typed
    // environment, so there is nothing to check, as `typed_envs` would find. The checking
    // itself out of line, so that such a call does not compile it.
    if sources.is_empty() {
        return PolicyTypeCheck::default();
    }
    check_policy_with(text, manifests, policy, sources, version, runtime_failed)
}

#[inline(never)]
fn check_policy_with(
    text: &str,
    manifests: &Manifests,
    policy: &Loaded<ValidatingAdmissionPolicy>,
    sources: &SchemaSources<'_>,
    version: KubeVersion,
    runtime_failed: &dyn Fn(&str) -> bool,
) -> PolicyTypeCheck {
    let compiler = CelCompiler::new(version, EnvironmentMode::StoredExpressions);
    let catalog = manifests.catalog();
    let envs = typed_envs(&policy.object, &catalog, sources, &compiler);
    let mut out = PolicyTypeCheck {
        kinds: envs.iter().map(|e| e.gvk.clone()).collect(),
        ..Default::default()
    };
    if envs.is_empty() {
        return out;
    }
    let spec = &policy.object.spec;
    // Per expression path: the parts of the status text, and the diagnostics.
    let mut status: Vec<(String, String)> = Vec::new();
    let mut note = |path: String, gvk: &GroupVersionKind, c: &Compiled, own: bool| {
        let failed = match own {
            // Own checks also report a wrong result type (the kind's `ReturnTypes()`).
            true => c.error.as_deref().is_some_and(|e| !e.starts_with("program instantiation")),
            false => issues_text(c).is_some(),
        };
        if !failed {
            return;
        }
        if let (false, Some(issues)) = (own, issues_text(c)) {
            match status.iter_mut().find(|(p, _)| *p == path) {
                Some((_, w)) => w.push_str(&format!("\n{gvk}: {issues}\n")),
                None => status.push((path.clone(), format!("{gvk}: {issues}\n"))),
            }
        }
        if runtime_failed(&path) {
            return;
        }
        for issue in &c.issues {
            let d = if own {
                diag::typecheck_own(&policy.object.metadata.name, &path, gvk, &issue.message)
            } else {
                diag::typecheck_warning(&policy.object.metadata.name, &path, gvk, &issue.message)
            };
            let d = super::dispatcher::position_issue(
                text,
                manifests,
                &policy.source,
                &path,
                c,
                issue,
                d,
            );
            if !out
                .diagnostics
                .iter()
                .any(|x| x.field == d.field && x.message == d.message && x.span == d.span)
            {
                out.diagnostics.push(d);
            }
        }
    };
    for env in &envs {
        let (scope, vars) = env.variables(&policy.object, &compiler);
        for (i, c) in vars.iter().enumerate() {
            note(format!("spec.variables[{i}].expression"), &env.gvk, c, true);
        }
        let d = env.declarations(&scope);
        for (i, v) in spec.validations.iter().enumerate() {
            let c = compiler.compile_in(
                &v.expression,
                ExpressionKind::Validation,
                &d,
                ExpectedResult::Any,
            );
            note(format!("spec.validations[{i}].expression"), &env.gvk, &c, false);
            if !v.message_expression.is_empty() {
                let c = compiler.compile_in(
                    &v.message_expression,
                    ExpressionKind::MessageExpression,
                    &d,
                    ExpectedResult::Any,
                );
                note(format!("spec.validations[{i}].messageExpression"), &env.gvk, &c, false);
            }
        }
        // vap-eval's own: the expressions the apiserver does not check, with their kinds'
        // result types.
        for (i, m) in spec.match_conditions.iter().enumerate() {
            let k = ExpressionKind::MatchCondition;
            let c = compiler.compile_in(&m.expression, k, &d, k.expected_result());
            note(format!("spec.matchConditions[{i}].expression"), &env.gvk, &c, true);
        }
        for (i, a) in spec.audit_annotations.iter().enumerate() {
            let k = ExpressionKind::AuditAnnotation;
            let c = compiler.compile_in(&a.value_expression, k, &d, k.expected_result());
            note(format!("spec.auditAnnotations[{i}].valueExpression"), &env.gvk, &c, true);
        }
    }
    // `Check` walks validations in order, expression before messageExpression; `status` was
    // filled kind by kind, so order it by the policy's own order.
    let order = |p: &str| -> (usize, usize) {
        let idx = p
            .strip_prefix("spec.validations[")
            .and_then(|r| r.split(']').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(usize::MAX);
        (idx, usize::from(p.ends_with("messageExpression")))
    };
    // Out of line, and only when there is something to order: most policies have no warning,
    // and a page's first `evaluate()` compiles whatever this function holds.
    #[inline(never)]
    fn sort(status: &mut Vec<(String, String)>, order: impl Fn(&str) -> (usize, usize)) {
        vap_eval_cel::sort::sort_by_key(status, |(p, _)| order(p));
    }
    if status.len() > 1 {
        sort(&mut status, order);
    }
    out.expression_warnings = status
        .into_iter()
        .map(|(field_ref, warning)| ExpressionWarning { field_ref, warning })
        .collect();
    out
}
