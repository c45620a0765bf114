//! Every diagnostic the admission pipeline can produce: one constructor each, with its code.
//!
//! Codes are stable kebab-case identifiers; messages use the wording of the upstream tool that
//! would report the same problem (kubectl / apiserver decoding, API validation).

use super::field::{FieldError, FieldPath};
use super::manifests::GROUP;
use super::yaml::YamlError;
use crate::diagnostic::{Diagnostic, Severity, SourceRef, Span};

/// A YAML/JSON syntax error (or a value JSON cannot carry, such as `.nan`) in one document.
pub fn yaml_syntax(e: &YamlError) -> Diagnostic {
    Diagnostic::error(
        "manifest-yaml-syntax",
        format!("document {}: line {}, column {}: {}", e.document, e.line, e.column, e.message),
    )
    .with_field(e.path.clone())
    .with_span(e.span, SourceRef::Manifest { document: e.document })
}

/// A field the API type does not have (apiserver strict field validation).
pub fn unknown_field(path: &FieldPath) -> Diagnostic {
    Diagnostic::error(
        "manifest-unknown-field",
        format!("strict decoding error: unknown field \"{path}\""),
    )
    .with_field(path.to_string())
}

/// A field whose JSON type does not fit the Go type (message in Go `encoding/json` form; the
/// Go form names the struct and drops list indices from the path).
pub fn wrong_type(json_type: &str, go_struct: &str, path: &FieldPath, go_type: &str) -> Diagnostic {
    let mut dotted = String::new();
    let mut depth = 0;
    for c in path.as_str().chars() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            c if depth == 0 => dotted.push(c),
            _ => {}
        }
    }
    Diagnostic::error(
        "manifest-wrong-type",
        format!("json: cannot unmarshal {json_type} into Go struct field {go_struct}.{dotted} of type {go_type}"),
    )
    .with_field(path.to_string())
}

/// A document without `apiVersion` or `kind` (apimachinery's message).
pub fn missing_type_meta(document: usize, what: &str, span: Span) -> Diagnostic {
    Diagnostic::error(
        "manifest-missing-type-meta",
        format!("Object '{what}' is missing in the document"),
    )
    .with_span(span, SourceRef::Manifest { document })
}

/// An admissionregistration kind in a version this tool does not know.
pub fn unsupported_api_version(api_version: &str, kind: &str) -> Diagnostic {
    Diagnostic::error(
        "manifest-unsupported-version",
        format!("no matches for kind \"{kind}\" in version \"{api_version}\""),
    )
    .with_field("apiVersion")
    .with_help("use admissionregistration.k8s.io/v1 (v1beta1 and v1alpha1 are converted)")
}

/// A kind that takes part in admission but that vap-eval does not evaluate (a
/// MutatingAdmissionPolicy, Kyverno's policies.kyverno.io kinds, a Gatekeeper
/// ConstraintTemplate): said, never silently left out. `None` for every other kind.
pub fn not_evaluated(group: &str, kind: &str, name: &str) -> Option<Diagnostic> {
    let why = match (group, kind) {
        (GROUP, "MutatingAdmissionPolicy" | "MutatingAdmissionPolicyBinding") => {
            "mutating admission policies are not run, so later webhooks and the validating policies see the object without their changes"
        }
        ("policies.kyverno.io", _) => {
            "Kyverno's policies.kyverno.io kinds are not read; vap-eval evaluates the CEL rules of kyverno.io ClusterPolicies and Policies"
        }
        ("templates.gatekeeper.sh", "ConstraintTemplate") => {
            "Gatekeeper's templates are not run; supply the ValidatingAdmissionPolicy Gatekeeper generates from a CEL template, with its constraint as the param"
        }
        _ => return None,
    };
    Some(not_evaluated_diagnostic(group, kind, name, why))
}

/// Out of line: most manifests hold none of those kinds (and `not_evaluated` runs for each of
/// their objects, on a page's first `evaluate()` too).
#[cold]
#[inline(never)]
fn not_evaluated_diagnostic(group: &str, kind: &str, name: &str, why: &str) -> Diagnostic {
    Diagnostic::warning(
        "manifest-not-evaluated",
        format!("{kind} \"{name}\" ({group}) is not evaluated: {why}"),
    )
}

/// Two objects of the same kind and name: the later document wins, as with `kubectl apply`.
pub fn duplicate_object(kind: &str, namespace: &str, name: &str) -> Diagnostic {
    let id = if namespace.is_empty() { name.to_string() } else { format!("{namespace}/{name}") };
    Diagnostic::warning(
        "manifest-duplicate-object",
        format!("{kind} \"{id}\" is defined more than once; the later definition is used"),
    )
}

/// An older API version that is converted to v1 on load.
pub fn converted_version(api_version: &str, kind: &str) -> Diagnostic {
    Diagnostic::new(
        Severity::Info,
        "manifest-converted-version",
        format!("{kind} {api_version} converted to admissionregistration.k8s.io/v1"),
    )
}

/// An apiserver API-validation error (spec §7), message exactly as `field.Error.Error()`.
pub fn api_validation(e: &FieldError) -> Diagnostic {
    Diagnostic::error(e.kind.code(), e.to_string()).with_field(e.field.to_string())
}

/// A paramKind that is neither built in nor defined by a supplied CRD, but for which param
/// objects were supplied: its scope was guessed from those objects.
pub fn param_scope_inferred(gvk: &str, namespaced: bool) -> Diagnostic {
    Diagnostic::warning(
        "params-scope-inferred",
        format!(
            "paramKind {gvk} is not a built-in kind and no CustomResourceDefinition defines it; treating it as {} because of the supplied objects",
            if namespaced { "namespaced" } else { "cluster-scoped" }
        ),
    )
    .with_help("add the CustomResourceDefinition to the input so the scope is known")
}

/// A request field could not be derived (e.g. the resource of an unknown kind).
pub fn request_underivable(field: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::error("request-underivable", message).with_field(field.to_string())
}

/// A request field was derived; background information for the trace.
pub fn request_derived(field: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Severity::Info, "request-derived", message).with_field(field.to_string())
}

/// The apiserver rejects the request for its `field` before reading the body (`message`: its
/// status message); nothing after runs.
pub fn request_rejected(field: &str, message: &str) -> Diagnostic {
    Diagnostic::error("request-rejected", message.to_string()).with_field(field.to_string())
}

/// A request field contradicts another one (e.g. `operation: CREATE` with only `oldObject`).
pub fn request_inconsistent(field: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic::warning("request-inconsistent", message).with_field(field.to_string())
}

/// The request's namespace was not supplied and is assumed to exist (`missingNamespaces:
/// assume`, the default): a namespaceSelector or `namespaceObject` read the assumed one.
pub fn namespace_assumed(namespace: &str) -> Diagnostic {
    Diagnostic::new(
        Severity::Info,
        "namespace-assumed",
        format!("namespace {namespace:?} was not supplied: assumed to exist with only the label kubernetes.io/metadata.name={namespace}"),
    )
    .with_field("namespace")
    .with_help("supply the Namespace object with the manifests to use its labels; missingNamespaces: strict answers as the apiserver would without it (404 NotFound)")
}

/// A type-checking issue the apiserver would put in the policy's
/// `status.typeChecking.expressionWarnings` (a validation or messageExpression checked against
/// the schema of a matched kind).
pub fn typecheck_warning(
    policy: &str,
    path: &str,
    gvk: &super::resources::GroupVersionKind,
    message: &str,
) -> Diagnostic {
    Diagnostic::warning("cel-typecheck", format!("{message} (type checking against {gvk})"))
        .with_field(format!("ValidatingAdmissionPolicy/{policy}: {path}"))
}

/// vap-eval's own type check of an expression the apiserver does not type check (variables,
/// matchConditions, auditAnnotations): never part of the policy's status.
pub fn typecheck_own(
    policy: &str,
    path: &str,
    gvk: &super::resources::GroupVersionKind,
    message: &str,
) -> Diagnostic {
    Diagnostic::warning(
        "cel-typecheck-vap-eval",
        format!("{message} (type checking against {gvk}; vap-eval's own check, not in the apiserver's status)"),
    )
    .with_field(format!("ValidatingAdmissionPolicy/{policy}: {path}"))
}

/// No built-in schemas are registered for the version (the npm package ships them beside the
/// wasm: `loadSchemas`): expressions are not type checked against built-in kinds.
pub fn schemas_not_loaded(version: &str) -> Diagnostic {
    Diagnostic::new(
        Severity::Info,
        "schemas-not-loaded",
        format!("no built-in schemas are loaded for Kubernetes {version}: expressions are type checked only against CRDs and the input's schemas"),
    )
    .with_help("call loadSchemas(version, text) with the package's schemas/<version>.json first (the native library embeds them)")
}
