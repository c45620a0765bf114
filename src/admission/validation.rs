//! API validation of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (§7.2,
//! §7.3), as `k/k pkg/apis/admissionregistration/validation/validation.go` does it on create,
//! with the apiserver's exact `field.Error` texts.
//!
//! Compiling CEL is delegated to an [`ExpressionCompiler`], so the checks here run without a
//! CEL engine ([`AcceptAllCompiler`]) and the CEL engine plugs in later.

use std::collections::BTreeSet;
use vap_eval_k8s::library::gostr;

use super::field::{go_quote, go_string_slice, BadValue, FieldError, FieldPath};
use super::labels::{validate_label_selector, validate_labels};
use super::names::{
    is_cel_identifier, is_dns1035_label, is_dns1123_subdomain, is_qualified_name,
    is_valid_path_segment_name, name_is_dns_subdomain,
};
use super::types::{
    MatchCondition, MatchResources, NamedRuleWithOperations, ObjectMeta, ParamKind, ParamRef,
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, Variable,
};

pub use crate::environment::ExpressionKind;

/// One expression to compile during API validation.
#[derive(Clone, Copy, Debug)]
pub struct CompileRequest<'a> {
    /// Where the expression is, e.g. `spec.validations[0].expression`.
    pub field: &'a FieldPath,
    /// The text exactly as the apiserver compiles it (matchConditions and audit
    /// valueExpressions are trimmed first; the others are not, which shifts columns).
    pub expression: &'a str,
    pub kind: ExpressionKind,
    /// `params` declared (the policy has a paramKind).
    pub has_params: bool,
    /// `authorizer` declared.
    pub has_authorizer: bool,
    /// `Some(vars)`: the composition compiler with these (earlier) variables declared;
    /// `None`: `variables` is not declared at all.
    pub variables: Option<&'a [Variable]>,
}

/// Compiles one expression for API validation. `Err(detail)` becomes
/// `<field>: Invalid value: "<expression>": <detail>`, e.g. detail
/// `compilation failed: ERROR: <input>:1:20: Syntax error: …` or `must evaluate to bool but got dyn`.
/// Expressions are compiled with the NewExpressions environment (a create).
pub trait ExpressionCompiler {
    fn compile(&self, request: &CompileRequest<'_>) -> Result<(), String>;
}

/// Accepts every expression (validation without a CEL engine).
#[derive(Clone, Copy, Debug, Default)]
pub struct AcceptAllCompiler;

impl ExpressionCompiler for AcceptAllCompiler {
    fn compile(&self, _: &CompileRequest<'_>) -> Result<(), String> {
        Ok(())
    }
}

impl<F: Fn(&CompileRequest<'_>) -> Result<(), String>> ExpressionCompiler for F {
    fn compile(&self, request: &CompileRequest<'_>) -> Result<(), String> {
        self(request)
    }
}

const MAX_AUDIT_ANNOTATIONS: usize = 20;
const MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_BYTES: usize = 5 * 1024;
const MAX_MATCH_CONDITIONS: usize = 64;
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// `genericvalidation.ValidateObjectMeta(meta, false, NameIsDNSSubdomain, "metadata")` for a
/// cluster-scoped object. A missing name with `generateName` set is accepted (the apiserver
/// generates one).
pub fn validate_object_meta(meta: &ObjectMeta) -> Vec<FieldError> {
    let p = FieldPath::new("metadata");
    let mut errs = Vec::new();
    if !meta.generate_name.is_empty() {
        for m in name_is_dns_subdomain(&meta.generate_name, true) {
            errs.push(FieldError::invalid(&p.child("generateName"), &meta.generate_name, &m));
        }
    }
    if meta.name.is_empty() {
        if meta.generate_name.is_empty() {
            errs.push(FieldError::required(&p.child("name"), "name or generateName is required"));
        }
    } else {
        for m in name_is_dns_subdomain(&meta.name, false) {
            errs.push(FieldError::invalid(&p.child("name"), &meta.name, &m));
        }
    }
    if !meta.namespace.is_empty() {
        errs.push(FieldError::forbidden(&p.child("namespace"), "not allowed on this type"));
    }
    if meta.generation < 0 {
        errs.push(FieldError::invalid_with(
            &p.child("generation"),
            BadValue::Int(meta.generation),
            "must be greater than or equal to 0",
        ));
    }
    errs.extend(validate_labels(&meta.labels, &p.child("labels")));
    let ap = p.child("annotations");
    let mut total = 0;
    for (k, v) in &meta.annotations {
        for m in is_qualified_name(&gostr::to_lower(k)) {
            errs.push(FieldError::invalid(&ap, k, &m));
        }
        total += k.len() + v.len();
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::too_long(&ap, TOTAL_ANNOTATION_SIZE_LIMIT));
    }
    errs
}

/// Validate a (defaulted) policy as on create.
/// `spec.variables`, each compiled seeing the earlier ones (out of line, as the error below:
/// most policies have no variables, and a page's first `evaluate()` compiles what is inlined
/// into the function it calls).
#[inline(never)]
fn validate_variables(
    variables: &[Variable],
    sp: &FieldPath,
    compiler: &dyn ExpressionCompiler,
    has_params: bool,
    errs: &mut Vec<FieldError>,
) {
    for (i, v) in variables.iter().enumerate() {
        let ip = sp.child("variables").index(i);
        if v.name.trim().is_empty() {
            errs.push(FieldError::required(&ip.child("name"), "name is not specified"));
        } else if !is_cel_identifier(&v.name) {
            errs.push(FieldError::invalid(
                &ip.child("name"),
                &v.name,
                "name is not a valid CEL identifier",
            ));
        }
        if v.expression.trim().is_empty() {
            errs.push(FieldError::required(&ip.child("expression"), "expression is not specified"));
        } else {
            errs.extend(compile(
                compiler,
                &ip.child("expression"),
                &v.expression,
                &v.expression,
                ExpressionKind::Variable,
                has_params,
                true,
                Some(&variables[..i]),
            ));
        }
    }
}

#[cold]
#[inline(never)]
fn too_many_audit_annotations(
    annotations: &[super::types::AuditAnnotation],
    ap: &FieldPath,
) -> FieldError {
    let items: Vec<String> = annotations
        .iter()
        .map(|a| {
            format!(
                "admissionregistration.AuditAnnotation{{Key:{}, ValueExpression:{}}}",
                go_quote(&a.key),
                go_quote(&a.value_expression)
            )
        })
        .collect();
    FieldError::invalid_with(
        ap,
        BadValue::GoSyntax(format!(
            "[]admissionregistration.AuditAnnotation{{{}}}",
            items.join(", ")
        )),
        &format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
    )
}

pub fn validate_policy(
    p: &ValidatingAdmissionPolicy,
    compiler: &dyn ExpressionCompiler,
) -> Vec<FieldError> {
    let mut errs = validate_object_meta(&p.metadata);
    let spec = &p.spec;
    let sp = FieldPath::new("spec");
    match spec.failure_policy.as_deref() {
        None => errs.push(FieldError::required(&sp.child("failurePolicy"), "")),
        Some("Fail" | "Ignore") => {}
        Some(other) => errs.push(FieldError::not_supported(
            &sp.child("failurePolicy"),
            other,
            &["Fail", "Ignore"],
        )),
    }
    let has_params = spec.param_kind.is_some();
    if let Some(pk) = &spec.param_kind {
        errs.extend(validate_param_kind(pk, &sp.child("paramKind")));
    }
    match &spec.match_constraints {
        None => errs.push(FieldError::required(&sp.child("matchConstraints"), "")),
        Some(mc) => {
            errs.extend(validate_match_resources(mc, &sp.child("matchConstraints")));
            if mc.resource_rules.is_empty() {
                errs.push(FieldError::required(
                    &sp.child("matchConstraints").child("resourceRules"),
                    "",
                ));
            }
        }
    }
    if !spec.match_conditions.is_empty() {
        errs.extend(validate_match_conditions(
            &spec.match_conditions,
            &sp.child("matchConditions"),
            compiler,
            has_params,
        ));
    }
    // variables, compiled in order, each seeing the earlier ones
    let composition = !spec.variables.is_empty();
    let vars_for = |n: usize| {
        if composition {
            Some(&spec.variables[..n])
        } else {
            None
        }
    };
    if composition {
        validate_variables(&spec.variables, &sp, compiler, has_params, &mut errs);
    }
    let all_vars = vars_for(spec.variables.len());
    if spec.validations.is_empty() && spec.audit_annotations.is_empty() {
        let msg = "validations or auditAnnotations must contain at least one item";
        errs.push(FieldError::required(&sp.child("validations"), msg));
        errs.push(FieldError::required(&sp.child("auditAnnotations"), msg));
        return errs;
    }
    for (i, v) in spec.validations.iter().enumerate() {
        let ip = sp.child("validations").index(i);
        if v.expression.trim().is_empty() {
            errs.push(FieldError::required(&ip.child("expression"), "expression is not specified"));
        } else {
            errs.extend(compile(
                compiler,
                &ip.child("expression"),
                &v.expression,
                &v.expression,
                ExpressionKind::Validation,
                has_params,
                true,
                all_vars,
            ));
        }
        let me = v.message_expression.trim();
        if !v.message_expression.is_empty() && me.is_empty() {
            errs.push(FieldError::invalid(
                &ip.child("messageExpression"),
                &v.message_expression,
                "must be non-empty if specified",
            ));
        } else if !me.is_empty() {
            errs.extend(compile(
                compiler,
                &ip.child("messageExpression"),
                &v.message_expression,
                &v.message_expression,
                ExpressionKind::MessageExpression,
                has_params,
                false,
                all_vars,
            ));
        }
        let msg = v.message.trim();
        if !v.message.is_empty() && msg.is_empty() {
            errs.push(FieldError::invalid(
                &ip.child("message"),
                &v.message,
                "message must be non-empty if specified",
            ));
        } else if msg.contains(['\n', '\r']) {
            errs.push(FieldError::invalid(
                &ip.child("message"),
                &v.message,
                "message must not contain line breaks",
            ));
        }
        if let Some(r) = &v.reason {
            if !matches!(r.as_str(), "Forbidden" | "Invalid" | "RequestEntityTooLarge") {
                errs.push(FieldError::not_supported(
                    &ip.child("reason"),
                    r,
                    &["Forbidden", "Invalid", "RequestEntityTooLarge"],
                ));
            }
        }
    }
    let ap = sp.child("auditAnnotations");
    if spec.audit_annotations.len() > MAX_AUDIT_ANNOTATIONS {
        errs.push(too_many_audit_annotations(&spec.audit_annotations, &ap));
    }
    let mut keys = BTreeSet::new();
    for (i, a) in spec.audit_annotations.iter().enumerate() {
        let ip = ap.index(i);
        if p.metadata.name.is_empty() {
            errs.push(FieldError::invalid(
                &ip.child("key"),
                &a.key,
                "requires metadata.name be non-empty",
            ));
        } else {
            let full = format!("{}/{}", p.metadata.name, a.key);
            for m in is_qualified_name(&full) {
                errs.push(FieldError::invalid(&ip.child("key"), &full, &m));
            }
        }
        let trimmed = a.value_expression.trim();
        if trimmed.is_empty() {
            errs.push(FieldError::required(
                &ip.child("valueExpression"),
                "valueExpression is not specified",
            ));
        } else if trimmed.len() > MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_BYTES {
            errs.push(FieldError::required(
                &ip.child("valueExpression"),
                &format!(
                    "must not exceed {MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_BYTES} bytes in length"
                ),
            ));
        } else {
            errs.extend(compile(
                compiler,
                &ip.child("valueExpression"),
                trimmed,
                &a.value_expression,
                ExpressionKind::AuditAnnotation,
                has_params,
                true,
                all_vars,
            ));
        }
        if !keys.insert(a.key.as_str()) {
            errs.push(FieldError::duplicate(&ip.child("key"), &a.key));
        }
    }
    errs
}

/// `validateMatchConditions` (§7.2; webhooks share it): at most 64, each a non-empty expression
/// that compiles as a matchCondition (trimmed, `variables` undeclared) and a unique qualified name.
pub fn validate_match_conditions(
    conditions: &[MatchCondition],
    mcp: &FieldPath,
    compiler: &dyn ExpressionCompiler,
    has_params: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errs.push(FieldError::too_many(mcp, conditions.len(), MAX_MATCH_CONDITIONS));
    }
    let mut names = BTreeSet::new();
    for (i, mc) in conditions.iter().enumerate() {
        let ip = mcp.index(i);
        let trimmed = mc.expression.trim();
        if trimmed.is_empty() {
            errs.push(FieldError::required(&ip.child("expression"), ""));
        } else {
            errs.extend(compile(
                compiler,
                &ip.child("expression"),
                trimmed,
                trimmed,
                ExpressionKind::MatchCondition,
                has_params,
                true,
                None,
            ));
        }
        if mc.name.is_empty() {
            errs.push(FieldError::required(&ip.child("name"), ""));
        } else {
            for m in is_qualified_name(&mc.name) {
                errs.push(FieldError::invalid(&ip.child("name"), &mc.name, &m));
            }
        }
        if !mc.name.is_empty() && !names.insert(mc.name.as_str()) {
            errs.push(FieldError::duplicate(&ip.child("name"), &mc.name));
        }
    }
    errs
}

/// Compile `text`; on failure report `Invalid value: <shown>` (the apiserver shows the
/// untrimmed audit valueExpression but compiles the trimmed one).
#[allow(clippy::too_many_arguments)]
fn compile(
    compiler: &dyn ExpressionCompiler,
    field: &FieldPath,
    text: &str,
    shown: &str,
    kind: ExpressionKind,
    has_params: bool,
    has_authorizer: bool,
    variables: Option<&[Variable]>,
) -> Option<FieldError> {
    let req =
        CompileRequest { field, expression: text, kind, has_params, has_authorizer, variables };
    compiler.compile(&req).err().map(|detail| FieldError::invalid(field, shown, &detail))
}

/// `validateParamKind`.
pub fn validate_param_kind(pk: &ParamKind, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let avp = path.child("apiVersion");
    if pk.api_version.is_empty() {
        errs.push(FieldError::required(&avp, ""));
    } else {
        match super::resources::parse_group_version(&pk.api_version) {
            Err(e) => errs.push(FieldError::invalid(&avp, &pk.api_version, &e)),
            Ok((group, version)) => {
                if !group.is_empty() {
                    let e = is_dns1123_subdomain(&group);
                    if !e.is_empty() {
                        errs.push(FieldError::invalid(&avp, &group, &e.join(",")));
                    }
                }
                if version.is_empty() {
                    errs.push(FieldError::invalid(
                        &avp,
                        &pk.api_version,
                        "version must be specified",
                    ));
                } else {
                    let e = is_dns1035_label(&version);
                    if !e.is_empty() {
                        errs.push(FieldError::invalid(&avp, &version, &e.join(",")));
                    }
                }
            }
        }
    }
    if pk.kind.is_empty() {
        errs.push(FieldError::required(&path.child("kind"), ""));
    } else {
        let e = is_dns1035_label(&gostr::to_lower(&pk.kind));
        if !e.is_empty() {
            errs.push(FieldError::invalid(
                &path.child("kind"),
                &pk.kind,
                &format!("may have mixed case, but should otherwise match: {}", e.join(",")),
            ));
        }
    }
    errs
}

/// `validateMatchResources`.
pub fn validate_match_resources(mr: &MatchResources, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match mr.match_policy.as_deref() {
        None => errs.push(FieldError::required(&path.child("matchPolicy"), "")),
        Some("Exact" | "Equivalent") => {}
        Some(other) => errs.push(FieldError::not_supported(
            &path.child("matchPolicy"),
            other,
            &["Equivalent", "Exact"],
        )),
    }
    for (name, sel) in
        [("namespaceSelector", &mr.namespace_selector), ("objectSelector", &mr.object_selector)]
    {
        match sel {
            None => errs.push(FieldError::required(&path.child(name), "")),
            Some(s) => errs.extend(validate_label_selector(s, &path.child(name))),
        }
    }
    for (list, rules) in [
        ("resourceRules", &mr.resource_rules),
        ("excludeResourceRules", &mr.exclude_resource_rules),
    ] {
        for (i, r) in rules.iter().enumerate() {
            errs.extend(validate_named_rule(r, &path.child(list).index(i)));
        }
    }
    errs
}

fn has_wildcard(items: &[String]) -> bool {
    items.iter().any(|i| i == "*")
}

/// `validateNamedRuleWithOperations` → `validateRuleWithOperations` → `validateRule`.
pub fn validate_named_rule(r: &NamedRuleWithOperations, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, n) in r.resource_names.iter().enumerate() {
        let ip = path.child("resourceNames").index(i);
        for m in is_valid_path_segment_name(n) {
            errs.push(FieldError::invalid(&ip, n, &m));
        }
        if !seen.insert(n.as_str()) {
            errs.push(FieldError::duplicate(&ip, n));
        }
    }
    let op = path.child("operations");
    if r.operations.is_empty() {
        errs.push(FieldError::required(&op, ""));
    }
    if r.operations.len() > 1 && has_wildcard(&r.operations) {
        errs.push(FieldError::invalid_with(
            &op,
            BadValue::GoSyntax(go_string_slice(
                "admissionregistration.OperationType",
                &r.operations,
            )),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, o) in r.operations.iter().enumerate() {
        if !matches!(o.as_str(), "*" | "CREATE" | "UPDATE" | "DELETE" | "CONNECT") {
            errs.push(FieldError::not_supported(
                &op.index(i),
                o,
                &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"],
            ));
        }
    }
    let gp = path.child("apiGroups");
    if r.api_groups.is_empty() {
        errs.push(FieldError::required(&gp, ""));
    }
    if r.api_groups.len() > 1 && has_wildcard(&r.api_groups) {
        errs.push(FieldError::invalid_with(
            &gp,
            BadValue::GoSyntax(go_string_slice("string", &r.api_groups)),
            "if '*' is present, must not specify other API groups",
        ));
    }
    let vp = path.child("apiVersions");
    if r.api_versions.is_empty() {
        errs.push(FieldError::required(&vp, ""));
    }
    if r.api_versions.len() > 1 && has_wildcard(&r.api_versions) {
        errs.push(FieldError::invalid_with(
            &vp,
            BadValue::GoSyntax(go_string_slice("string", &r.api_versions)),
            "if '*' is present, must not specify other API versions",
        ));
    }
    for (i, v) in r.api_versions.iter().enumerate() {
        if v.is_empty() {
            errs.push(FieldError::required(&vp.index(i), ""));
        }
    }
    errs.extend(validate_resources(&r.resources, &path.child("resources")));
    if let Some(s) = &r.scope {
        if !matches!(s.as_str(), "Cluster" | "Namespaced" | "*") {
            errs.push(FieldError::not_supported(
                &path.child("scope"),
                s,
                &["*", "Cluster", "Namespaced"],
            ));
        }
    }
    errs
}

/// `validateResources`: the wildcard rules (§7.2).
pub fn validate_resources(resources: &[String], path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if resources.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    let mut res_with_wild_sub = BTreeSet::new();
    let mut sub_with_wild_res = BTreeSet::new();
    let (mut double, mut single, mut plain) = (false, false, false);
    for (i, rs) in resources.iter().enumerate() {
        if rs.is_empty() {
            errs.push(FieldError::required(&path.index(i), ""));
            continue;
        }
        if rs == "*/*" {
            double = true;
        }
        if rs == "*" {
            single = true;
        }
        let Some((res, sub)) = rs.split_once('/') else {
            plain = rs != "*";
            continue;
        };
        if res_with_wild_sub.contains(res) {
            errs.push(FieldError::invalid(
                &path.index(i),
                rs,
                &format!("if '{res}/*' is present, must not specify {rs}"),
            ));
        }
        if sub_with_wild_res.contains(sub) {
            errs.push(FieldError::invalid(
                &path.index(i),
                rs,
                &format!("if '*/{sub}' is present, must not specify {rs}"),
            ));
        }
        if sub == "*" {
            res_with_wild_sub.insert(res.to_string());
        }
        if res == "*" {
            sub_with_wild_res.insert(sub.to_string());
        }
    }
    let slice = || BadValue::GoSyntax(go_string_slice("string", resources));
    if resources.len() > 1 && double {
        errs.push(FieldError::invalid_with(
            path,
            slice(),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single && plain {
        errs.push(FieldError::invalid_with(
            path,
            slice(),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
    errs
}

/// Validate a (defaulted) binding as on create.
pub fn validate_binding(b: &ValidatingAdmissionPolicyBinding) -> Vec<FieldError> {
    let mut errs = validate_object_meta(&b.metadata);
    let sp = FieldPath::new("spec");
    let pn = sp.child("policyName");
    if b.spec.policy_name.is_empty() {
        errs.push(FieldError::required(&pn, ""));
    } else {
        for m in name_is_dns_subdomain(&b.spec.policy_name, false) {
            errs.push(FieldError::invalid(&pn, &b.spec.policy_name, &m));
        }
    }
    if let Some(pr) = &b.spec.param_ref {
        errs.extend(validate_param_ref(pr, &sp.child("paramRef")));
    }
    if let Some(mr) = &b.spec.match_resources {
        // Upstream reports these under the misspelt path `spec.matchResouces` [quirk].
        errs.extend(validate_match_resources(mr, &sp.child("matchResouces")));
    }
    let vp = sp.child("validationActions");
    let mut seen: Vec<&str> = Vec::new();
    for (i, a) in b.spec.validation_actions.iter().enumerate() {
        if !matches!(a.as_str(), "Deny" | "Warn" | "Audit") {
            errs.push(FieldError::not_supported(&vp.index(i), a, &["Audit", "Deny", "Warn"]));
        }
        if seen.contains(&a.as_str()) {
            errs.push(FieldError::duplicate(&vp.index(i), a));
        }
        seen.push(a);
    }
    if seen.contains(&"Deny") && seen.contains(&"Warn") {
        errs.push(FieldError::invalid_with(
            &vp,
            BadValue::GoSyntax(go_string_slice("admissionregistration.ValidationAction", &b.spec.validation_actions)),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(FieldError::required(&vp, "at least one validation action is required"));
    }
    errs
}

/// `validateParamRef`.
pub fn validate_param_ref(pr: &ParamRef, path: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !pr.name.is_empty() {
        for m in is_valid_path_segment_name(&pr.name) {
            errs.push(FieldError::invalid(&path.child("name"), &pr.name, &m));
        }
        if pr.selector.is_some() {
            errs.push(FieldError::forbidden(
                &path.child("name"),
                "name and selector are mutually exclusive",
            ));
        }
    }
    if let Some(sel) = &pr.selector {
        errs.extend(validate_label_selector(sel, &path.child("selector")));
        if !pr.name.is_empty() {
            errs.push(FieldError::forbidden(
                &path.child("selector"),
                "name and selector are mutually exclusive",
            ));
        }
    }
    if pr.name.is_empty() && pr.selector.is_none() {
        errs.push(FieldError::required(path, "one of name or selector must be specified"));
    }
    match pr.parameter_not_found_action.as_deref() {
        None | Some("") => {
            errs.push(FieldError::required(&path.child("parameterNotFoundAction"), ""))
        }
        Some("Deny" | "Allow") => {}
        Some(other) => errs.push(FieldError::not_supported(
            &path.child("parameterNotFoundAction"),
            other,
            &["Deny", "Allow"],
        )),
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::defaults::{default_binding, default_policy};
    use crate::admission::types::{AuditAnnotation, MatchCondition, Validation};

    fn policy() -> ValidatingAdmissionPolicy {
        let mut p = ValidatingAdmissionPolicy::default();
        p.metadata.name = "config".into();
        p.spec.match_constraints = Some(MatchResources {
            resource_rules: vec![NamedRuleWithOperations {
                operations: vec!["CREATE".into()],
                api_groups: vec!["a".into()],
                api_versions: vec!["a".into()],
                resources: vec!["a".into()],
                ..Default::default()
            }],
            ..Default::default()
        });
        p.spec.validations =
            vec![Validation { expression: "object.x < 100".into(), ..Default::default() }];
        default_policy(&mut p);
        p
    }

    fn errors(p: &ValidatingAdmissionPolicy) -> Vec<String> {
        validate_policy(p, &AcceptAllCompiler).iter().map(|e| e.to_string()).collect()
    }

    /// Table from spec §8.4 (k/k `validation_test.go` `TestValidateValidatingAdmissionPolicy`):
    /// (mutation, expected error substring).
    #[test]
    fn policy_table() {
        type Mutate = fn(&mut ValidatingAdmissionPolicy);
        let cases: Vec<(&str, Mutate, &str)> = vec![
            ("valid", |_| {}, ""),
            ("invalid name", |p| p.metadata.name = "!!!!".into(), "metadata.name: Invalid value: \"!!!!\": a lowercase RFC 1123 subdomain"),
            (
                "no validations",
                |p| p.spec.validations.clear(),
                "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
            ),
            (
                "empty expression",
                |p| p.spec.validations[0].expression = "  ".into(),
                "spec.validations[0].expression: Required value: expression is not specified",
            ),
            (
                "failure policy",
                |p| p.spec.failure_policy = Some("other".into()),
                "spec.failurePolicy: Unsupported value: \"other\": supported values: \"Fail\", \"Ignore\"",
            ),
            (
                "match policy",
                |p| p.spec.match_constraints.as_mut().unwrap().match_policy = Some("other".into()),
                "spec.matchConstraints.matchPolicy: Unsupported value: \"other\": supported values: \"Equivalent\", \"Exact\"",
            ),
            (
                "no operations",
                |p| p.spec.match_constraints.as_mut().unwrap().resource_rules[0].operations.clear(),
                "spec.matchConstraints.resourceRules[0].operations: Required value",
            ),
            (
                "PATCH",
                |p| p.spec.match_constraints.as_mut().unwrap().resource_rules[0].operations = vec!["PATCH".into()],
                "spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
            ),
            (
                "empty operation",
                |p| p.spec.match_constraints.as_mut().unwrap().resource_rules[0].operations = vec!["".into()],
                "spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: \"\"",
            ),
            (
                "a/* then a/x",
                |p| p.spec.match_constraints.as_mut().unwrap().resource_rules[0].resources = vec!["a/*".into(), "a/x".into()],
                "spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: \"a/x\": if 'a/*' is present, must not specify a/x",
            ),
            (
                "*/a then x/a",
                |p| p.spec.match_constraints.as_mut().unwrap().resource_rules[0].resources = vec!["*/a".into(), "x/a".into()],
                "spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: \"x/a\": if '*/a' is present, must not specify x/a",
            ),
            (
                "*/* with others",
                |p| p.spec.match_constraints.as_mut().unwrap().resource_rules[0].resources = vec!["*/*".into(), "a".into()],
                "spec.matchConstraints.resourceRules[0].resources: Invalid value: []string{\"*/*\", \"a\"}: if '*/*' is present, must not specify other resources",
            ),
            (
                "* with plain",
                |p| p.spec.match_constraints.as_mut().unwrap().resource_rules[0].resources = vec!["*".into(), "a".into()],
                "if '*' is present, must not specify other resources without subresources",
            ),
            (
                "duplicate resourceNames",
                |p| p.spec.match_constraints.as_mut().unwrap().resource_rules[0].resource_names = vec!["test".into(), "test".into()],
                "spec.matchConstraints.resourceRules[0].resourceNames[1]: Duplicate value: \"test\"",
            ),
            (
                "bad resourceName",
                |p| p.spec.match_constraints.as_mut().unwrap().resource_rules[0].resource_names = vec!["/./.".into()],
                "spec.matchConstraints.resourceRules[0].resourceNames[0]: Invalid value: \"/./.\": may not contain '/'",
            ),
            (
                "paramKind apiVersion",
                |p| p.spec.param_kind = Some(ParamKind { api_version: "test.example.com".into(), kind: "Foo".into() }),
                "spec.paramKind.apiVersion: Invalid value: \"test.example.com\"",
            ),
            (
                "paramKind kind",
                |p| p.spec.param_kind = Some(ParamKind { api_version: "v1".into(), kind: "".into() }),
                "spec.paramKind.kind: Required value",
            ),
            (
                "audit key",
                |p| p.spec.audit_annotations = vec![AuditAnnotation { key: "@".into(), value_expression: "'x'".into() }],
                "spec.auditAnnotations[0].key: Invalid value: \"config/@\": name part must consist of alphanumeric characters",
            ),
            (
                "audit key dup",
                |p| {
                    let a = AuditAnnotation { key: "a".into(), value_expression: "'x'".into() };
                    p.spec.audit_annotations = vec![a.clone(), a];
                },
                "spec.auditAnnotations[1].key: Duplicate value: \"a\"",
            ),
            (
                "audit key prefix",
                |p| {
                    p.spec.audit_annotations = vec![AuditAnnotation { key: "key".into(), value_expression: "'x'".into() }];
                    p.metadata.name = "nope!".into();
                },
                "spec.auditAnnotations[0].key: Invalid value: \"nope!/key\": prefix part a lowercase RFC 1123 subdomain",
            ),
            (
                "matchCondition name",
                |p| p.spec.match_conditions = vec![MatchCondition { name: "".into(), expression: "true".into() }],
                "spec.matchConditions[0].name: Required value",
            ),
            (
                "variable blank name",
                |p| p.spec.variables = vec![Variable { name: "    ".into(), expression: "1".into() }],
                "spec.variables[0].name: Required value: name is not specified",
            ),
            (
                "variable identifier",
                |p| p.spec.variables = vec![Variable { name: "4ever".into(), expression: "1".into() }],
                "spec.variables[0].name: Invalid value: \"4ever\": name is not a valid CEL identifier",
            ),
            (
                "message line breaks",
                |p| p.spec.validations[0].message = "a\nb".into(),
                "spec.validations[0].message: Invalid value: \"a\\nb\": message must not contain line breaks",
            ),
            (
                "blank messageExpression",
                |p| p.spec.validations[0].message_expression = "  ".into(),
                "spec.validations[0].messageExpression: Invalid value: \"  \": must be non-empty if specified",
            ),
            (
                "reason Unauthorized",
                |p| p.spec.validations[0].reason = Some("Unauthorized".into()),
                "spec.validations[0].reason: Unsupported value: \"Unauthorized\": supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\"",
            ),
            (
                "too many matchConditions",
                |p| {
                    p.spec.match_conditions =
                        (0..65).map(|i| MatchCondition { name: format!("c{i}"), expression: "true".into() }).collect()
                },
                "spec.matchConditions: Too many: 65: must have at most 64 items",
            ),
        ];
        for (name, mutate, want) in cases {
            let mut p = policy();
            mutate(&mut p);
            let errs = errors(&p);
            if want.is_empty() {
                assert!(errs.is_empty(), "{name}: {errs:?}");
            } else {
                assert!(errs.iter().any(|e| e.contains(want)), "{name}: want {want:?} in {errs:?}");
            }
        }
        // `["*","a/b","a/*","*/b"]` is valid.
        let mut p = policy();
        p.spec.match_constraints.as_mut().unwrap().resource_rules[0].resources =
            ["*", "a/b", "a/*", "*/b"].iter().map(|s| s.to_string()).collect();
        assert!(errors(&p).is_empty(), "{:?}", errors(&p));
    }

    /// Annotation keys are checked lowercased with Go's `strings.ToLower` (apimachinery
    /// `ValidateAnnotations`): per-rune simple mapping, so `İ` becomes `i`, a valid key, where
    /// Rust's `to_lowercase` gives `i̇`, which is not.
    #[test]
    fn annotation_keys_lowercased_as_go_does() {
        let mut p = policy();
        p.metadata.annotations.insert("example.com/İD".into(), "x".into());
        assert!(errors(&p).is_empty(), "{:?}", errors(&p));
        p.metadata.annotations.insert("example.com/ÜD".into(), "x".into());
        let errs = errors(&p);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].starts_with("metadata.annotations: Invalid value: \"example.com/ÜD\": name part must consist of alphanumeric characters"), "{errs:?}");
    }

    /// The compiler hook sees each expression with the right declarations.
    #[test]
    fn compiler_hook() {
        let mut p = policy();
        p.spec.validations[0].message_expression = "'m'".into();
        p.spec.variables = vec![Variable { name: "a".into(), expression: "1".into() }];
        p.spec.match_conditions =
            vec![MatchCondition { name: "m".into(), expression: "  params.foo  ".into() }];
        p.spec.audit_annotations = vec![AuditAnnotation {
            key: "k".into(),
            value_expression: " object.x in [1, 2, ".into(),
        }];
        let compiler = |r: &CompileRequest<'_>| -> Result<(), String> {
            match r.kind {
                ExpressionKind::MatchCondition => {
                    assert!(r.variables.is_none() && !r.has_params);
                    assert_eq!(r.expression, "params.foo");
                    Err("compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')".into())
                }
                ExpressionKind::MessageExpression => {
                    assert!(!r.has_authorizer);
                    Ok(())
                }
                ExpressionKind::Variable => {
                    assert_eq!(r.variables.map(|v| v.len()), Some(0));
                    Ok(())
                }
                ExpressionKind::Validation => {
                    assert_eq!(r.variables.map(|v| v.len()), Some(1));
                    Ok(())
                }
                ExpressionKind::AuditAnnotation => {
                    assert_eq!(r.expression, "object.x in [1, 2,");
                    Err("must evaluate to one of [string null_type]".to_string())
                }
            }
        };
        let errs: Vec<String> =
            validate_policy(&p, &compiler).iter().map(|e| e.to_string()).collect();
        assert!(errs.contains(&"spec.matchConditions[0].expression: Invalid value: \"params.foo\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')".to_string()), "{errs:?}");
        assert!(errs.contains(&"spec.auditAnnotations[0].valueExpression: Invalid value: \" object.x in [1, 2, \": must evaluate to one of [string null_type]".to_string()), "{errs:?}");
    }

    #[test]
    fn binding_table() {
        let mut b = ValidatingAdmissionPolicyBinding::default();
        b.metadata.name = "b".into();
        b.spec.policy_name = "p".into();
        b.spec.validation_actions = vec!["Deny".into()];
        default_binding(&mut b, "admissionregistration.k8s.io/v1");
        assert!(validate_binding(&b).is_empty());
        let s = |b: &ValidatingAdmissionPolicyBinding| {
            validate_binding(b).iter().map(|e| e.to_string()).collect::<Vec<_>>()
        };
        let mut x = b.clone();
        x.spec.validation_actions = vec!["Deny".into(), "Warn".into()];
        assert_eq!(s(&x), vec!["spec.validationActions: Invalid value: []admissionregistration.ValidationAction{\"Deny\", \"Warn\"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)".to_string()]);
        x.spec.validation_actions = vec![];
        assert_eq!(s(&x), vec!["spec.validationActions: Required value: at least one validation action is required".to_string()]);
        x.spec.validation_actions = vec!["Audit".into(), "Audit".into(), "Log".into()];
        assert_eq!(
            s(&x),
            vec![
                "spec.validationActions[1]: Duplicate value: \"Audit\"".to_string(),
                "spec.validationActions[2]: Unsupported value: \"Log\": supported values: \"Audit\", \"Deny\", \"Warn\"".to_string()
            ]
        );
        let mut y = b.clone();
        y.spec.param_ref = Some(ParamRef {
            name: "x".into(),
            selector: Some(Default::default()),
            ..Default::default()
        });
        assert_eq!(
            s(&y),
            vec![
                "spec.paramRef.name: Forbidden: name and selector are mutually exclusive"
                    .to_string(),
                "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive"
                    .to_string(),
                "spec.paramRef.parameterNotFoundAction: Required value".to_string(),
            ]
        );
        y.spec.param_ref = Some(ParamRef {
            parameter_not_found_action: Some("Allow".into()),
            ..Default::default()
        });
        assert_eq!(
            s(&y),
            vec!["spec.paramRef: Required value: one of name or selector must be specified"
                .to_string()]
        );
        let mut z = b.clone();
        z.spec.match_resources =
            Some(MatchResources { match_policy: Some("x".into()), ..Default::default() });
        assert!(s(&z)[0].starts_with("spec.matchResouces.matchPolicy: Unsupported value"));
    }
}
