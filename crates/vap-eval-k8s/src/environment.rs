//! The apiserver's CEL environment for admission expressions, by Kubernetes version.
//!
//! kube-apiserver builds its base environment from a table of options, each tagged with the
//! Kubernetes version that introduced it (and, for a few, removed it) — apiserver
//! `pkg/cel/environment/base.go`, spec §4.1. Two environments come out of it:
//!
//! - **StoredExpressions**: every option the server knows (introduced ≤ its version, not removed).
//!   Runtime evaluation always uses it.
//! - **NewExpressions**: only options introduced ≤ the *compatibility* version (server minor − 1).
//!   API validation uses it for new or changed expressions (§7.4), so a 1.37 server rejects a
//!   new expression that calls `includes` (1.37) while it keeps evaluating stored ones.
//!
//! On top of the base, each kind of expression declares its variables (spec §4.2,
//! apiserver `pkg/admission/plugin/cel/compile.go`) and its expected result type.

use crate::cel::checker::{CheckOptions, ExpectedResult};
use crate::cel::decls::{Declarations, ObjectTypeDecl};
use crate::cel::signature;
use crate::cel::stdlib_decls::{self, LibraryVersions};
use crate::cel::types::Type;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// CEL variable names, as the apiserver spells them.
pub mod var {
    pub const OBJECT: &str = "object";
    pub const OLD_OBJECT: &str = "oldObject";
    pub const PARAMS: &str = "params";
    pub const REQUEST: &str = "request";
    pub const NAMESPACE_OBJECT: &str = "namespaceObject";
    pub const AUTHORIZER: &str = "authorizer";
    pub const REQUEST_RESOURCE_AUTHORIZER: &str = "authorizer.requestResource";
    pub const VARIABLES: &str = "variables";
}

/// Declared type names (spec §4.2).
pub mod type_name {
    pub const ADMISSION_REQUEST: &str = "kubernetes.AdmissionRequest";
    pub const GROUP_VERSION_KIND: &str = "kubernetes.GroupVersionKind";
    pub const GROUP_VERSION_RESOURCE: &str = "kubernetes.GroupVersionResource";
    pub const USER_INFO: &str = "kubernetes.UserInfo";
    pub const NAMESPACE: &str = "kubernetes.Namespace";
    pub const NAMESPACE_METADATA: &str = "kubernetes.NamespaceMetadata";
    pub const NAMESPACE_SPEC: &str = "kubernetes.NamespaceSpec";
    pub const NAMESPACE_STATUS: &str = "kubernetes.NamespaceStatus";
    pub const NAMESPACE_CONDITION: &str = "kubernetes.NamespaceCondition";
    pub const VARIABLES: &str = "kubernetes.variables";
    pub use crate::library::type_name::{AUTHORIZER, RESOURCE_CHECK};
}

/// A Kubernetes minor version (1.x) we can emulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    pub minor: u32,
}

impl KubeVersion {
    /// Oldest and newest supported targets.
    pub const OLDEST: KubeVersion = KubeVersion { minor: 30 };
    pub const NEWEST: KubeVersion = KubeVersion { minor: 37 };

    pub const fn new(minor: u32) -> Self {
        KubeVersion { minor }
    }

    /// All supported versions, oldest first.
    pub fn supported() -> impl Iterator<Item = KubeVersion> {
        (Self::OLDEST.minor..=Self::NEWEST.minor).map(KubeVersion::new)
    }

    /// Parse `1.34`, `v1.34` or `34`-style strings; errors name the supported range.
    pub fn parse(s: &str) -> Result<KubeVersion, String> {
        let t = s.trim().trim_start_matches('v');
        let minor = t.strip_prefix("1.").unwrap_or(t);
        let minor = minor.split('.').next().unwrap_or("");
        match minor.parse::<u32>() {
            Ok(m) if (Self::OLDEST.minor..=Self::NEWEST.minor).contains(&m) => {
                Ok(KubeVersion::new(m))
            }
            _ => Err(format!(
                "unsupported Kubernetes version {s:?}: supported versions are {} through {}",
                Self::OLDEST,
                Self::NEWEST
            )),
        }
    }

    /// The compatibility version NewExpressions uses: one minor below.
    pub fn compatibility(self) -> KubeVersion {
        KubeVersion::new(self.minor.saturating_sub(1))
    }
}

impl Default for KubeVersion {
    fn default() -> Self {
        Self::NEWEST
    }
}

impl std::fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "1.{}", self.minor)
    }
}

/// Which environment of the pair (spec §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvironmentMode {
    /// Options introduced up to the compatibility version (API validation of new expressions).
    NewExpressions,
    /// Every option the server knows (runtime, and unchanged stored expressions).
    StoredExpressions,
}

/// The base-environment options a version enables (apiserver `environment/base.go`).
/// Each field notes the version that introduced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Features {
    /// Kubernetes lists library version: 0 (isSorted, sum, min, max, indexOf, lastIndexOf,
    /// until 1.37) or 1 (adds `includes`, 1.37).
    pub k8s_lists: u32,
    /// 1.27.
    pub authz: bool,
    /// 1.28: cross-type numeric comparisons, optional types, quantity.
    pub cross_type_numeric_comparisons: bool,
    pub optional_types: bool,
    pub quantity: bool,
    /// 1.29: duration/timestamp/regex literal validators and homogeneous aggregate literals as
    /// AST validators (homogeneous literals are also checked since 1.0).
    pub literal_validators: bool,
    /// cel-go ext.Strings version: 0 before 1.29, 2 from 1.29.
    pub strings: u32,
    /// 1.29.
    pub sets: bool,
    /// 1.30.
    pub ip_cidr: bool,
    /// 1.31: named formats, authorizer field/label selectors, keywords as field names.
    pub format: bool,
    pub authz_selectors: bool,
    /// 1.32.
    pub two_var_comprehensions: bool,
    /// 1.33.
    pub semver: bool,
    /// cel-go ext.Lists version 3 (1.34); 0 = absent.
    pub ext_lists: u32,
    /// Backtick-quoted identifiers: cel-go ≥ 0.28, Kubernetes 1.37.
    pub backtick_identifiers: bool,
}

impl Features {
    /// The options an apiserver of `server` version enables in `mode`.
    pub fn for_version(server: KubeVersion, mode: EnvironmentMode) -> Features {
        let v = match mode {
            EnvironmentMode::StoredExpressions => server.minor,
            EnvironmentMode::NewExpressions => server.compatibility().minor,
        };
        Features {
            k8s_lists: if v >= 37 { 1 } else { 0 },
            authz: v >= 27,
            cross_type_numeric_comparisons: v >= 28,
            optional_types: v >= 28,
            quantity: v >= 28,
            literal_validators: v >= 29,
            strings: if v >= 29 { 2 } else { 0 },
            sets: v >= 29,
            ip_cidr: v >= 30,
            format: v >= 31,
            authz_selectors: v >= 31,
            two_var_comprehensions: v >= 32,
            semver: v >= 33,
            ext_lists: if v >= 34 { 3 } else { 0 },
            // The parser version is the server binary's, not the compatibility version's.
            backtick_identifiers: server.minor >= 37,
        }
    }
}

impl Features {
    /// The cel-go extension libraries these features install (strings v0 → v2 at 1.29, sets
    /// 1.29, optional types 1.28, two-variable comprehensions 1.32, lists v3 1.34).
    pub fn library_versions(&self) -> LibraryVersions {
        LibraryVersions {
            strings: Some(self.strings),
            lists: (self.ext_lists > 0).then_some(self.ext_lists),
            optional: self.optional_types.then_some(LibraryVersions::LATEST),
            sets: self.sets,
            two_var_comprehensions: self.two_var_comprehensions,
        }
    }

    /// The checker switches these features set. The regex validator is the runtime's to supply.
    pub fn check_options(&self) -> CheckOptions {
        CheckOptions {
            cross_type_numeric_comparisons: self.cross_type_numeric_comparisons,
            homogeneous_literals: true,
            literal_validators: self.literal_validators,
            regex_validator: None,
        }
    }
}

/// The base declarations of an environment: the standard library, the cel-go extensions and the
/// Kubernetes libraries `features` enables, plus the request and namespace object types.
/// Built once per distinct feature set and shared (building the standard table for every
/// expression would dominate checking time in the playground).
pub fn base_declarations(features: &Features) -> Rc<Declarations> {
    thread_local! {
        static CACHE: RefCell<HashMap<Features, Rc<Declarations>>> = RefCell::new(HashMap::new());
    }
    // Kept for the thread (the table and its entries): not in the per-call arena.
    vap_eval_cel::arena_switch::outside(|| {
        CACHE.with(|cache| {
            cache
                .borrow_mut()
                .entry(*features)
                .or_insert_with(|| {
                    let mut d = Declarations::default();
                    stdlib_decls::standard(&mut d, &features.library_versions());
                    crate::library::declare(&mut d, features);
                    declare_request_and_namespace_types(&mut d);
                    Rc::new(d)
                })
                .clone()
        })
    })
}

/// Everything one expression may reference: the base environment of `version` in `mode`
/// ([`base_declarations`]) and the admission variables of `kind` in `scope`
/// ([`declare_admission_variables`]). Cheap: the base is cached and shared.
pub fn declarations(
    version: KubeVersion,
    mode: EnvironmentMode,
    kind: ExpressionKind,
    scope: &VariableScope,
) -> Declarations {
    let features = Features::for_version(version, mode);
    let mut d = Declarations::extending(base_declarations(&features));
    declare_admission_variables(&mut d, kind, scope);
    d
}

/// The kinds of expression a ValidatingAdmissionPolicy holds (apiserver `ExpressionAccessor`
/// implementations). Each declares its result types once (`ReturnTypes()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExpressionKind {
    /// `spec.validations[*].expression` → bool.
    Validation,
    /// `spec.validations[*].messageExpression` → string; no `authorizer`.
    MessageExpression,
    /// `spec.matchConditions[*].expression` → bool.
    MatchCondition,
    /// `spec.auditAnnotations[*].valueExpression` → string or null.
    AuditAnnotation,
    /// `spec.variables[*].expression` → any type.
    Variable,
}

impl ExpressionKind {
    /// The result type this kind must have (apiserver `ReturnTypes()`).
    pub fn expected_result(self) -> ExpectedResult {
        match self {
            ExpressionKind::Validation | ExpressionKind::MatchCondition => ExpectedResult::Bool,
            ExpressionKind::MessageExpression => ExpectedResult::String,
            ExpressionKind::AuditAnnotation => ExpectedResult::StringOrNull,
            ExpressionKind::Variable => ExpectedResult::Any,
        }
    }

    /// Whether `authorizer` and `authorizer.requestResource` are declared (spec §4.2:
    /// not for messageExpressions).
    pub fn has_authorizer(self) -> bool {
        !matches!(self, ExpressionKind::MessageExpression)
    }
}

/// What the policy makes visible to one expression.
#[derive(Clone, Debug, Default)]
pub struct VariableScope {
    /// `spec.paramKind` is set: `params` is declared (dyn).
    pub has_params: bool,
    /// The composition variables declared before this expression, with their static types.
    /// `None` means `variables` is not declared at all (API validation of a policy with no
    /// variables, and matchConditions: spec §1.12, §7.2).
    pub variables: Option<Vec<(String, Type)>>,
    /// Static type of `object`/`oldObject` when a schema is known (type checking); `None` = dyn.
    pub object_type: Option<Type>,
    /// Static type of `params` when a schema is known; `None` = dyn.
    pub params_type: Option<Type>,
}

/// Declare the admission variables and their object types for one expression kind
/// (apiserver `compile.go` `createEnvForOpts`, `composition.go`).
pub fn declare_admission_variables(
    decls: &mut Declarations,
    kind: ExpressionKind,
    scope: &VariableScope,
) {
    if decls.object(type_name::ADMISSION_REQUEST).is_none() {
        declare_request_and_namespace_types(decls);
    }
    let object = scope.object_type.clone().unwrap_or(Type::Dyn);
    decls.add_variable(var::OBJECT, object.clone());
    decls.add_variable(var::OLD_OBJECT, object);
    decls.add_variable(var::REQUEST, Type::object(type_name::ADMISSION_REQUEST));
    decls.add_variable(var::NAMESPACE_OBJECT, Type::object(type_name::NAMESPACE));
    if scope.has_params {
        decls.add_variable(var::PARAMS, scope.params_type.clone().unwrap_or(Type::Dyn));
    }
    if kind.has_authorizer() {
        decls.add_variable(var::AUTHORIZER, Type::object(type_name::AUTHORIZER));
        decls.add_variable(
            var::REQUEST_RESOURCE_AUTHORIZER,
            Type::object(type_name::RESOURCE_CHECK),
        );
    }
    if let Some(vars) = &scope.variables {
        decls.add_object(ObjectTypeDecl {
            name: type_name::VARIABLES.to_string(),
            fields: vars.clone(),
        });
        decls.add_variable(var::VARIABLES, Type::object(type_name::VARIABLES));
    }
}

/// `kubernetes.AdmissionRequest` and `kubernetes.Namespace` with exactly the apiserver's fields
/// (`BuildRequestType`, `BuildNamespaceType`): no `uid`, `object`, `oldObject` on the request;
/// only the listed namespace metadata (note `UID`, declared with that capitalisation). Data, the
/// field types in the signature tables' notation ([`signature::parse_type`]): as code they were
/// 1.8 KB of wasm the first evaluation compiled (bench/README.md, "The first evaluate(), seventh
/// round").
const REQUEST_AND_NAMESPACE_TYPES: &[(&str, &[(&str, &str)])] = &[
    (
        "kubernetes.GroupVersionKind",
        &[("group", "string"), ("version", "string"), ("kind", "string")],
    ),
    (
        "kubernetes.GroupVersionResource",
        &[("group", "string"), ("version", "string"), ("resource", "string")],
    ),
    (
        "kubernetes.UserInfo",
        &[
            ("username", "string"),
            ("uid", "string"),
            ("groups", "list(string)"),
            ("extra", "map(string, list(string))"),
        ],
    ),
    (
        "kubernetes.AdmissionRequest",
        &[
            ("kind", "kubernetes.GroupVersionKind"),
            ("resource", "kubernetes.GroupVersionResource"),
            ("subResource", "string"),
            ("requestKind", "kubernetes.GroupVersionKind"),
            ("requestResource", "kubernetes.GroupVersionResource"),
            ("requestSubResource", "string"),
            ("name", "string"),
            ("namespace", "string"),
            ("operation", "string"),
            ("userInfo", "kubernetes.UserInfo"),
            ("dryRun", "bool"),
            ("options", "dyn"),
        ],
    ),
    ("kubernetes.NamespaceSpec", &[("finalizers", "list(string)")]),
    (
        "kubernetes.NamespaceCondition",
        &[
            ("status", "string"),
            ("type", "string"),
            ("lastTransitionTime", "timestamp"),
            ("message", "string"),
            ("reason", "string"),
        ],
    ),
    (
        "kubernetes.NamespaceStatus",
        &[("conditions", "list(kubernetes.NamespaceCondition)"), ("phase", "string")],
    ),
    (
        "kubernetes.NamespaceMetadata",
        &[
            ("name", "string"),
            ("generateName", "string"),
            ("namespace", "string"),
            ("labels", "map(string, string)"),
            ("annotations", "map(string, string)"),
            ("UID", "string"),
            ("creationTimestamp", "timestamp"),
            ("deletionGracePeriodSeconds", "int"),
            ("deletionTimestamp", "timestamp"),
            ("generation", "int"),
            ("resourceVersion", "string"),
            ("finalizers", "list(string)"),
        ],
    ),
    (
        "kubernetes.Namespace",
        &[
            ("metadata", "kubernetes.NamespaceMetadata"),
            ("spec", "kubernetes.NamespaceSpec"),
            ("status", "kubernetes.NamespaceStatus"),
        ],
    ),
];

fn declare_request_and_namespace_types(decls: &mut Declarations) {
    for &(name, fields) in REQUEST_AND_NAMESPACE_TYPES {
        let fields = fields
            .iter()
            // Every row is parsed by this module's tests; a bad one never ships.
            .filter_map(|&(field, ty)| Some((field.to_string(), signature::parse_type(ty)?)))
            .collect();
        decls.add_object(ObjectTypeDecl { name: name.to_string(), fields });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The request and namespace types' table is what the apiserver builds
    /// (`BuildRequestType`, `BuildNamespaceType`), written out with the type constructors.
    #[test]
    fn request_and_namespace_types_table() {
        fn object(name: &str, fields: &[(&str, Type)]) -> ObjectTypeDecl {
            ObjectTypeDecl {
                name: name.to_string(),
                fields: fields.iter().map(|(n, t)| (n.to_string(), t.clone())).collect(),
            }
        }
        let mut expected = Declarations::default();
        reference(&mut expected);
        let mut table = Declarations::default();
        declare_request_and_namespace_types(&mut table);
        for &(name, fields) in REQUEST_AND_NAMESPACE_TYPES {
            assert_eq!(table.object(name), expected.object(name), "{name}");
            assert_eq!(table.object(name).map(|o| o.fields.len()), Some(fields.len()), "{name}");
        }
        assert_eq!(REQUEST_AND_NAMESPACE_TYPES.len(), 9);

        fn reference(decls: &mut Declarations) {
            use type_name::*;
            let s = || Type::String;
            let strings = || Type::list(Type::String);
            decls.add_object(object(
                GROUP_VERSION_KIND,
                &[("group", s()), ("version", s()), ("kind", s())],
            ));
            decls.add_object(object(
                GROUP_VERSION_RESOURCE,
                &[("group", s()), ("version", s()), ("resource", s())],
            ));
            decls.add_object(object(
                USER_INFO,
                &[
                    ("username", s()),
                    ("uid", s()),
                    ("groups", strings()),
                    ("extra", Type::map(Type::String, strings())),
                ],
            ));
            decls.add_object(object(
                ADMISSION_REQUEST,
                &[
                    ("kind", Type::object(GROUP_VERSION_KIND)),
                    ("resource", Type::object(GROUP_VERSION_RESOURCE)),
                    ("subResource", s()),
                    ("requestKind", Type::object(GROUP_VERSION_KIND)),
                    ("requestResource", Type::object(GROUP_VERSION_RESOURCE)),
                    ("requestSubResource", s()),
                    ("name", s()),
                    ("namespace", s()),
                    ("operation", s()),
                    ("userInfo", Type::object(USER_INFO)),
                    ("dryRun", Type::Bool),
                    ("options", Type::Dyn),
                ],
            ));
            decls.add_object(object(NAMESPACE_SPEC, &[("finalizers", strings())]));
            decls.add_object(object(
                NAMESPACE_CONDITION,
                &[
                    ("status", s()),
                    ("type", s()),
                    ("lastTransitionTime", Type::Timestamp),
                    ("message", s()),
                    ("reason", s()),
                ],
            ));
            decls.add_object(object(
                NAMESPACE_STATUS,
                &[("conditions", Type::list(Type::object(NAMESPACE_CONDITION))), ("phase", s())],
            ));
            decls.add_object(object(
                NAMESPACE_METADATA,
                &[
                    ("name", s()),
                    ("generateName", s()),
                    ("namespace", s()),
                    ("labels", Type::map(Type::String, Type::String)),
                    ("annotations", Type::map(Type::String, Type::String)),
                    ("UID", s()),
                    ("creationTimestamp", Type::Timestamp),
                    ("deletionGracePeriodSeconds", Type::Int),
                    ("deletionTimestamp", Type::Timestamp),
                    ("generation", Type::Int),
                    ("resourceVersion", s()),
                    ("finalizers", strings()),
                ],
            ));
            decls.add_object(object(
                NAMESPACE,
                &[
                    ("metadata", Type::object(NAMESPACE_METADATA)),
                    ("spec", Type::object(NAMESPACE_SPEC)),
                    ("status", Type::object(NAMESPACE_STATUS)),
                ],
            ));
        }
    }
    use crate::cel::checker::check_result_type;

    #[test]
    fn versions_parse_and_gate_features() {
        assert_eq!(KubeVersion::parse("1.34"), Ok(KubeVersion::new(34)));
        assert_eq!(KubeVersion::parse("v1.30"), Ok(KubeVersion::new(30)));
        assert!(KubeVersion::parse("1.29").unwrap_err().contains("1.30 through 1.37"));
        // spec §4.1: lists v1 (includes) and backticks arrive in 1.37; ext lists v3 in 1.34.
        let f37 = Features::for_version(KubeVersion::new(37), EnvironmentMode::StoredExpressions);
        assert_eq!((f37.k8s_lists, f37.backtick_identifiers, f37.ext_lists), (1, true, 3));
        // A 1.37 server validates new expressions against 1.36 (spec §4.1, §7.4).
        let new37 = Features::for_version(KubeVersion::new(37), EnvironmentMode::NewExpressions);
        assert_eq!(new37.k8s_lists, 0);
        let f30 = Features::for_version(KubeVersion::new(30), EnvironmentMode::StoredExpressions);
        assert!(f30.ip_cidr && !f30.format && !f30.two_var_comprehensions && f30.ext_lists == 0);
    }

    #[test]
    fn result_type_messages_are_the_apiservers() {
        // apiserver compile.go; spec §2.3.
        assert_eq!(
            check_result_type(&Type::Dyn, ExpressionKind::Validation.expected_result()),
            Err("must evaluate to bool but got dyn".to_string())
        );
        assert_eq!(
            check_result_type(&Type::Int, ExpressionKind::AuditAnnotation.expected_result()),
            Err("must evaluate to one of [string null_type] but got int".to_string())
        );
        assert_eq!(
            check_result_type(&Type::Null, ExpressionKind::AuditAnnotation.expected_result()),
            Ok(())
        );
        assert_eq!(
            check_result_type(&Type::Dyn, ExpressionKind::Variable.expected_result()),
            Ok(())
        );
    }

    #[test]
    fn message_expressions_have_no_authorizer() {
        let mut d = Declarations::default();
        declare_admission_variables(
            &mut d,
            ExpressionKind::MessageExpression,
            &VariableScope::default(),
        );
        assert!(d.variable(var::AUTHORIZER).is_none());
        assert!(d.variable(var::PARAMS).is_none());
        let mut d = Declarations::default();
        let scope =
            VariableScope { has_params: true, variables: Some(vec![]), ..Default::default() };
        declare_admission_variables(&mut d, ExpressionKind::Validation, &scope);
        assert!(d.variable(var::AUTHORIZER).is_some() && d.variable(var::PARAMS).is_some());
        assert_eq!(
            d.object(type_name::NAMESPACE_METADATA).and_then(|o| o.field("UID")),
            Some(&Type::String)
        );
        assert!(d.object(type_name::ADMISSION_REQUEST).unwrap().field("uid").is_none());
    }
}
