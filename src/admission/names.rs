//! apimachinery name validators (`k8s.io/apimachinery/pkg/util/validation`,
//! `pkg/api/validation/path`), returning the upstream message strings.
//!
//! Each function returns the list of problems (empty = valid), exactly like the Go `Is…`
//! functions, so callers can wrap them into [`super::field::FieldError`]s.

// The apimachinery validators (`IsDNS1123Label`, `IsDNS1123Subdomain`, `IsDNS1035Label`,
// `IsQualifiedName` = `content.IsLabelKey`, `IsValidLabelValue`) are shared with the
// `format.named` CEL library, which exposes the same functions.
pub use crate::library::format::{
    dns1035_label as is_dns1035_label, dns1123_label as is_dns1123_label,
    dns1123_subdomain as is_dns1123_subdomain, label_value as is_valid_label_value,
    qualified_name as is_qualified_name,
};

/// `path.IsValidPathSegmentName` / `ValidatePathSegmentName(name, false)`.
pub fn is_valid_path_segment_name(name: &str) -> Vec<String> {
    for bad in [".", ".."] {
        if name == bad {
            return vec![format!("may not be '{bad}'")];
        }
    }
    let mut errs = Vec::new();
    for bad in ["/", "%"] {
        if name.contains(bad) {
            errs.push(format!("may not contain '{bad}'"));
        }
    }
    errs
}

/// `genericvalidation.NameIsDNSSubdomain(name, prefix)`: with `prefix`, one trailing `-` is
/// masked first (generateName).
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        if let Some(stripped) = name.strip_suffix('-') {
            return is_dns1123_subdomain(&format!("{stripped}a"));
        }
    }
    is_dns1123_subdomain(name)
}

/// CEL identifier rule for variable names: `[_a-zA-Z][_a-zA-Z0-9]*` and not a reserved word
/// (`validation.go` `isCELIdentifier`).
pub fn is_cel_identifier(name: &str) -> bool {
    let b = name.as_bytes();
    if b.is_empty() || !(b[0] == b'_' || b[0].is_ascii_alphabetic()) {
        return false;
    }
    if !b.iter().all(|&c| c == b'_' || c.is_ascii_alphanumeric()) {
        return false;
    }
    !crate::cel::parser::RESERVED_WORDS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_names() {
        assert!(is_dns1123_subdomain("a.b-c.d").is_empty());
        assert_eq!(is_dns1123_subdomain("!!!!").len(), 1);
        assert!(is_dns1123_subdomain("!!!!")[0].starts_with("a lowercase RFC 1123 subdomain"));
        assert!(is_dns1035_label("1abc").len() == 1);
        assert!(is_dns1035_label("abc-1").is_empty());
        assert_eq!(
            is_dns1123_label("contains a space")[0],
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        );
    }

    #[test]
    fn qualified_names() {
        assert!(is_qualified_name("example.com/Key_1").is_empty());
        // spec §8.4: `config/@`
        assert!(is_qualified_name("config/@")[0]
            .starts_with("name part must consist of alphanumeric characters"));
        // spec §8.4: `nope!/key`
        assert!(is_qualified_name("nope!/key")[0]
            .starts_with("prefix part a lowercase RFC 1123 subdomain"));
        assert_eq!(is_qualified_name("/a"), vec!["prefix part must be non-empty".to_string()]);
        // apimachinery `IsQualifiedName` delegates to `content.IsLabelKey`, which words the
        // more-than-one-slash case as a label key.
        assert!(is_qualified_name("a/b/c")[0].starts_with("a valid label key must consist"));
    }

    #[test]
    fn path_segments_and_identifiers() {
        assert_eq!(is_valid_path_segment_name("/./."), vec!["may not contain '/'".to_string()]);
        assert_eq!(is_valid_path_segment_name(".."), vec!["may not be '..'".to_string()]);
        assert!(is_cel_identifier("_x1"));
        assert!(!is_cel_identifier("4ever"));
        assert!(!is_cel_identifier("namespace"));
        assert!(is_valid_label_value("").is_empty());
        assert_eq!(is_valid_label_value("-a").len(), 1);
    }
}
