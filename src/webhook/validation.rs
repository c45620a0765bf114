//! API validation of webhook configurations as on create (k/k
//! `pkg/apis/admissionregistration/validation/validation.go` `validate{Validating,Mutating}
//! WebhookConfiguration` with the create options; apiserver `pkg/util/webhook/validation.go`
//! for `clientConfig`), with the apiserver's `field.Error` texts. Contract:
//! `docs/webhook-semantics.md` §5.

use std::collections::BTreeSet;

use crate::admission::field::{go_string_slice, BadValue, FieldError, FieldPath};
use crate::admission::labels::validate_label_selector;
use crate::admission::names::{is_dns1035_label, is_dns1123_subdomain};
use crate::admission::validation::{
    validate_match_conditions, validate_named_rule, validate_object_meta, ExpressionCompiler,
};

use super::types::{ClientConfig, Webhook, WebhookConfiguration, WebhookKind};

/// The AdmissionReview versions this apiserver understands, in its order of preference.
pub const ACCEPTED_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// Validate one (defaulted) configuration.
pub fn validate_configuration(
    c: &WebhookConfiguration,
    compiler: &dyn ExpressionCompiler,
) -> Vec<FieldError> {
    let mut errs = validate_object_meta(&c.metadata);
    let mut names = BTreeSet::new();
    for (i, h) in c.webhooks.iter().enumerate() {
        let p = FieldPath::new("webhooks").index(i);
        errs.extend(validate_webhook(h, c.kind, &p, compiler));
        errs.extend(validate_review_versions(
            &h.admission_review_versions,
            &p.child("admissionReviewVersions"),
        ));
        if !h.name.is_empty() && !names.insert(h.name.as_str()) {
            errs.push(FieldError::duplicate(&p.child("name"), &h.name));
        }
    }
    errs
}

fn not_supported(errs: &mut Vec<FieldError>, p: &FieldPath, v: &Option<String>, ok: &[&str]) {
    if let Some(v) = v {
        if !ok.contains(&v.as_str()) {
            errs.push(FieldError::not_supported(p, v, ok));
        }
    }
}

fn validate_webhook(
    h: &Webhook,
    kind: WebhookKind,
    p: &FieldPath,
    compiler: &dyn ExpressionCompiler,
) -> Vec<FieldError> {
    let mut errs = is_fully_qualified_name(&p.child("name"), &h.name);
    for (i, r) in h.rules.iter().enumerate() {
        errs.extend(validate_named_rule(r, &p.child("rules").index(i)));
    }
    not_supported(&mut errs, &p.child("failurePolicy"), &h.failure_policy, &["Fail", "Ignore"]);
    not_supported(&mut errs, &p.child("matchPolicy"), &h.match_policy, &["Equivalent", "Exact"]);
    // On create only the side-effect-free classes are allowed (requireNoSideEffects).
    let allowed = ["None", "NoneOnDryRun"];
    match &h.side_effects {
        None => errs.push(FieldError::required(
            &p.child("sideEffects"),
            "must specify one of None, NoneOnDryRun",
        )),
        s => not_supported(&mut errs, &p.child("sideEffects"), s, &allowed),
    }
    if let Some(t) = h.timeout_seconds {
        if !(1..=30).contains(&t) {
            errs.push(FieldError::invalid_with(
                &p.child("timeoutSeconds"),
                BadValue::Int(t),
                "the timeout value must be between 1 and 30 seconds",
            ));
        }
    }
    for (key, sel) in
        [("namespaceSelector", &h.namespace_selector), ("objectSelector", &h.object_selector)]
    {
        if let Some(s) = sel {
            errs.extend(validate_label_selector(s, &p.child(key)));
        }
    }
    if kind == WebhookKind::Mutating {
        let rp = p.child("reinvocationPolicy");
        not_supported(&mut errs, &rp, &h.reinvocation_policy, &["IfNeeded", "Never"]);
    }
    errs.extend(validate_client_config(&h.client_config, &p.child("clientConfig")));
    errs.extend(validate_match_conditions(
        &h.match_conditions,
        &p.child("matchConditions"),
        compiler,
        false,
    ));
    errs
}

/// `utilvalidation.IsFullyQualifiedName`.
fn is_fully_qualified_name(p: &FieldPath, name: &str) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(p, "")];
    }
    let e = is_dns1123_subdomain(name);
    if !e.is_empty() {
        return vec![FieldError::invalid(p, name, &e.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![FieldError::invalid(
            p,
            name,
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

/// `validateAdmissionReviewVersions` with `requireRecognizedAdmissionReviewVersion`.
fn validate_review_versions(versions: &[String], p: &FieldPath) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if versions.is_empty() {
        errs.push(FieldError::required(p, "must specify one of v1, v1beta1"));
        return errs;
    }
    let mut seen = BTreeSet::new();
    let mut accepted = false;
    for (i, v) in versions.iter().enumerate() {
        if !seen.insert(v.as_str()) {
            errs.push(FieldError::invalid(&p.index(i), v, "duplicate version"));
            continue;
        }
        for m in is_dns1035_label(v) {
            errs.push(FieldError::invalid(&p.index(i), v, &m));
        }
        accepted |= ACCEPTED_REVIEW_VERSIONS.contains(&v.as_str());
    }
    if !accepted {
        errs.push(FieldError::invalid_with(
            p,
            BadValue::GoSyntax(go_string_slice("string", versions)),
            "must include at least one of v1, v1beta1",
        ));
    }
    errs
}

const URL_FORM: &str = "; desired format: https://host[/path]";

fn validate_client_config(cc: &ClientConfig, p: &FieldPath) -> Vec<FieldError> {
    match (&cc.url, &cc.service) {
        (None, None) | (Some(_), Some(_)) => {
            vec![FieldError::required(p, "exactly one of url or service is required")]
        }
        (Some(url), None) => validate_url(&p.child("url"), url),
        (None, Some(s)) => {
            // [quirk] validation.go passes (name, namespace) to a function declared
            // (namespace, name): a missing name is reported on `namespace` and vice versa
            // (kubernetes/kubernetes#141353).
            let sp = p.child("service");
            let mut errs = Vec::new();
            if s.namespace.is_empty() {
                errs.push(FieldError::required(&sp.child("name"), ""));
            }
            if s.name.is_empty() {
                errs.push(FieldError::required(&sp.child("namespace"), ""));
            }
            let port = s.port.unwrap_or(443);
            if !(1..=65535).contains(&port) {
                errs.push(FieldError::invalid_with(
                    &sp.child("port"),
                    BadValue::Int(port),
                    "port is not valid: must be between 1 and 65535, inclusive",
                ));
            }
            if let Some(path) = &s.path {
                errs.extend(validate_service_path(&sp.child("path"), path));
            }
            errs
        }
    }
}

/// `ValidateWebhookURL(path, url, forceHttps=true)` over Go `net/url.Parse`'s split of the URL
/// into scheme, userinfo, host, query and fragment.
fn validate_url(p: &FieldPath, url: &str) -> Vec<FieldError> {
    if url.chars().any(|c| (c as u32) < 0x20 || c == '\u{7f}') {
        return vec![FieldError::required(
            p,
            &format!(
                "url must be a valid URL: parse {}: net/url: invalid control character in URL{URL_FORM}",
                crate::admission::field::go_quote(url)
            ),
        )];
    }
    let (rest, fragment) = url.split_once('#').unwrap_or((url, ""));
    // Go's getScheme: a letter, then letters, digits, `+`, `-`, `.`, up to the first `:`.
    let (scheme, rest) = match rest.split_once(':') {
        Some((s, r))
            if s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            (s.to_ascii_lowercase(), r)
        }
        _ => (String::new(), rest),
    };
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (user, host) = match rest.strip_prefix("//") {
        Some(auth) => {
            let auth = auth.split('/').next().unwrap_or_default();
            match auth.rsplit_once('@') {
                Some((u, h)) => (Some(u.to_string()), h.to_string()),
                None => (None, auth.to_string()),
            }
        }
        None => (None, String::new()),
    };
    let mut errs = Vec::new();
    if scheme != "https" {
        errs.push(FieldError::invalid(
            p,
            &scheme,
            &format!("'https' is the only allowed URL scheme{URL_FORM}"),
        ));
    }
    if host.is_empty() {
        errs.push(FieldError::invalid(p, &host, &format!("host must be specified{URL_FORM}")));
    }
    if let Some(u) = user {
        errs.push(FieldError::invalid(p, &u, "user information is not permitted in the URL"));
    }
    if !fragment.is_empty() {
        errs.push(FieldError::invalid(p, fragment, "fragments are not permitted in the URL"));
    }
    if !query.is_empty() {
        errs.push(FieldError::invalid(p, query, "query parameters are not permitted in the URL"));
    }
    errs
}

fn validate_service_path(p: &FieldPath, path: &str) -> Vec<FieldError> {
    if path.is_empty() || path == "/" {
        return Vec::new();
    }
    if path == "//" {
        return vec![FieldError::invalid(p, path, "segment[0] may not be empty")];
    }
    let mut errs = Vec::new();
    let check = match path.strip_prefix('/') {
        Some(rest) => rest,
        None => {
            errs.push(FieldError::invalid(p, path, "must start with a '/'"));
            // Upstream drops the first byte whatever it is.
            path.get(1..).unwrap_or_default()
        }
    };
    let check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(p, path, &format!("segment[{i}] may not be empty")));
            continue;
        }
        for m in is_dns1123_subdomain(step) {
            errs.push(FieldError::invalid(p, path, &format!("segment[{i}]: {m}")));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(errs: Vec<FieldError>) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    /// W§5: `ValidateWebhookURL`.
    #[test]
    fn urls() {
        let p = FieldPath::new("webhooks").index(0).child("clientConfig").child("url");
        assert!(validate_url(&p, "https://example.com/path").is_empty());
        assert_eq!(
            msgs(validate_url(&p, "http://example.com")),
            ["webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"]
        );
        assert_eq!(
            msgs(validate_url(&p, "https:///x")),
            ["webhooks[0].clientConfig.url: Invalid value: \"\": host must be specified; desired format: https://host[/path]"]
        );
        let all = msgs(validate_url(&p, "https://u:p@h/x?a=b#f"));
        assert_eq!(all.len(), 3, "{all:?}");
        assert!(all[0].ends_with("\"u:p\": user information is not permitted in the URL"));
        assert!(all[1].ends_with("\"f\": fragments are not permitted in the URL"));
        assert!(all[2].ends_with("\"a=b\": query parameters are not permitted in the URL"));
    }

    /// W§5: `ValidateWebhookService` path rules.
    #[test]
    fn service_paths() {
        let p = FieldPath::new("path");
        assert!(validate_service_path(&p, "/").is_empty());
        assert!(validate_service_path(&p, "/foo/bar/").is_empty());
        assert_eq!(
            msgs(validate_service_path(&p, "foo")),
            ["path: Invalid value: \"foo\": must start with a '/'"]
        );
        assert_eq!(
            msgs(validate_service_path(&p, "/foo//bar")),
            ["path: Invalid value: \"/foo//bar\": segment[1] may not be empty"]
        );
        assert_eq!(
            msgs(validate_service_path(&p, "//")),
            ["path: Invalid value: \"//\": segment[0] may not be empty"]
        );
        assert!(msgs(validate_service_path(&p, "/Foo"))[0].starts_with(
            "path: Invalid value: \"/Foo\": segment[0]: a lowercase RFC 1123 subdomain"
        ));
    }

    /// W§5: `validateAdmissionReviewVersions`, `IsFullyQualifiedName`.
    #[test]
    fn review_versions_and_names() {
        let p = FieldPath::new("v");
        assert_eq!(
            msgs(validate_review_versions(&[], &p)),
            ["v: Required value: must specify one of v1, v1beta1"]
        );
        assert_eq!(
            msgs(validate_review_versions(&["v2".into()], &p)),
            ["v: Invalid value: []string{\"v2\"}: must include at least one of v1, v1beta1"]
        );
        assert_eq!(
            msgs(validate_review_versions(&["v1".into(), "v1".into()], &p)),
            ["v[1]: Invalid value: \"v1\": duplicate version"]
        );
        assert_eq!(
            msgs(is_fully_qualified_name(&p, "a.b")),
            ["v: Invalid value: \"a.b\": should be a domain with at least three segments separated by dots"]
        );
    }
}
