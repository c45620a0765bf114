//! Every diagnostic the Kyverno evaluation emits (stable codes, one constructor each).

use crate::diagnostic::{Diagnostic, Severity};

/// A field of a Kyverno policy that does not have the type Kyverno's API gives it.
pub fn invalid_field(object: &str, path: &str, message: &str) -> Diagnostic {
    Diagnostic::error("kyverno-invalid-field", message.to_string())
        .with_field(format!("{object}: {path}"))
}

/// A Kyverno policy in an API version vap-eval does not read.
pub fn unsupported_api_version(api_version: &str, kind: &str) -> Diagnostic {
    Diagnostic::error(
        "kyverno-unsupported-api-version",
        format!("{kind} {api_version} is not read by vap-eval: use kyverno.io/v1 (or v2beta1)"),
    )
}

/// A `Policy` without `metadata.namespace`: taken to be in `default`, as kubectl creates it.
pub fn policy_without_namespace(object: &str) -> Diagnostic {
    Diagnostic::new(
        Severity::Info,
        "kyverno-policy-namespace-default",
        "Policy has no metadata.namespace: evaluated as if created in namespace \"default\"",
    )
    .with_field(format!("{object}: metadata.namespace"))
}

/// A matched rule that Kyverno evaluates with something vap-eval does not model.
pub fn unsupported_rule(object: &str, path: &str, rule: &str, why: &str) -> Diagnostic {
    Diagnostic::warning(
        "kyverno-unsupported-rule",
        format!("rule {rule:?} was not evaluated: {why}"),
    )
    .with_field(format!("{object}: {path}"))
    .with_help("its result is absent from kyverno.policies and it takes no part in the response; Kyverno would evaluate it")
}

/// A rule evaluated at admission could not be evaluated: the response may differ from
/// Kyverno's.
pub fn response_incomplete(webhook: &str) -> Diagnostic {
    Diagnostic::warning(
        "kyverno-response-incomplete",
        format!("webhook {webhook:?} evaluates a rule vap-eval does not evaluate: Kyverno's answer may differ from the one shown"),
    )
}

/// A policy Kyverno's policy validation rejects (so it cannot exist in a cluster): never
/// evaluated.
pub fn policy_rejected(object: &str, path: &str, message: &str) -> Diagnostic {
    Diagnostic::error("kyverno-policy-rejected", format!("Kyverno rejects this policy: {message}"))
        .with_field(format!("{object}: {path}"))
        .with_help("the policy is not evaluated (Kyverno's admission webhook refuses to create it; its CLI skips it)")
}

/// PolicyExceptions are supplied: applied as Kyverno applies them when the feature is on.
pub fn exceptions_applied(count: usize) -> Diagnostic {
    Diagnostic::new(
        Severity::Info,
        "kyverno-exceptions-applied",
        format!("{count} PolicyException(s) applied as Kyverno applies them with --enablePolicyException and --exceptionNamespace=* (the feature is off in Kyverno's default install: Helm value features.policyExceptions.enabled)"),
    )
}
