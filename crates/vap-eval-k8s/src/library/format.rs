//! Kubernetes `Format` library (since Kubernetes 1.31), type `kubernetes.NamedFormat`.
//!
//! apimachinery name/label validators and kube-openapi `strfmt` checks, as the apiserver
//! wires them (`pkg/cel/library/format.go`).
//!
//! ```text
//! format.dns1123Label() <NamedFormat>            (and the other zero-arg constructors below)
//! format.named(<string>) <optional<NamedFormat>> -> NamedFormat::named
//! <NamedFormat>.validate(<string>) <optional<list<string>>> -> NamedFormat::validate (None = valid)
//! ```
//!
//! Names: `dns1123Label`, `dns1123Subdomain`, `dns1035Label`, `qualifiedName`,
//! `dns1123LabelPrefix`, `dns1123SubdomainPrefix`, `dns1035LabelPrefix`, `labelValue`, `uri`,
//! `uuid`, `byte`, `date`, `datetime`.
//!
//! Examples (apiserver `format_test.go`, spec §8.6):
//!
//! ```text
//! format.dns1123Label().validate("my-name")           // optional.none()
//! format.dns1123Label().validate("contains a space")  // optional.of(["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])
//! format.byte().validate("aGVsbG8")                   // optional.of(["invalid base64"])
//! format.named("unknown").hasValue()                  // false
//! ```
//!
//! Prefix variants replace a trailing `-` the way apimachinery's `maskTrailingDash` does (the
//! last two bytes become `a`) before validating.
//!
//! Uncertain: newer apimachinery `content.MaxLenError` (used by `qualifiedName` and
//! `labelValue`) may say "bytes" instead of "characters"; we print "characters" everywhere.
//! `datetime` follows kube-openapi `strfmt.ParseDateTime`'s layouts (RFC 3339 with or without
//! fraction/colon in the offset, local time, minute precision, space separator; `""` is valid).

use super::url::parse_request_uri;

/// The named formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamedFormat {
    Dns1123Label,
    Dns1123Subdomain,
    Dns1035Label,
    QualifiedName,
    Dns1123LabelPrefix,
    Dns1123SubdomainPrefix,
    Dns1035LabelPrefix,
    LabelValue,
    Uri,
    Uuid,
    Byte,
    Date,
    Datetime,
}

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// apimachinery `MaxLenError`.
fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// apimachinery `RegexError` (note the double space its loop produces).
fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{re}')");
    }
    let mut out = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{e}', "));
    }
    out.push_str(&format!("regex used for validation is '{re}')"));
    out
}

/// `first [inner]* last` with a single-character form allowed.
fn shaped(s: &str, first: fn(u8) -> bool, inner: fn(u8) -> bool, last: fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    match b {
        [] => false,
        [c] => first(*c) && last(*c),
        [f, mid @ .., l] => first(*f) && last(*l) && mid.iter().all(|c| inner(*c)),
    }
}

fn lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn is_label(s: &str) -> bool {
    shaped(s, lower_alnum, |c| lower_alnum(c) || c == b'-', lower_alnum)
}

fn is_subdomain(s: &str) -> bool {
    s.split('.').all(is_label)
}

fn is_label_key_name(s: &str) -> bool {
    let inner = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    shaped(s, |c| c.is_ascii_alphanumeric(), inner, |c| c.is_ascii_alphanumeric())
}

/// apimachinery `IsDNS1123Label`.
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !is_label(s) {
        if is_subdomain(s) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, &["my-name", "123-abc"]));
        }
    }
    errs
}

/// apimachinery `IsDNS1123Subdomain`.
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !is_subdomain(s) {
        errs.push(regex_error(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, &["example.com"]));
    }
    errs
}

/// apimachinery `IsDNS1035Label`.
pub fn dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !shaped(s, |c| c.is_ascii_lowercase(), |c| lower_alnum(c) || c == b'-', lower_alnum) {
        errs.push(regex_error(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, &["my-name", "abc-123"]));
    }
    errs
}

/// apimachinery `IsQualifiedName` (label key).
pub fn qualified_name(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(dns1123_subdomain(prefix).into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_MSG, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
            )]
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !is_label_key_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(LABEL_KEY_MSG, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
        ));
    }
    errs
}

/// apimachinery `IsValidLabelValue`.
pub fn label_value(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !(s.is_empty() || is_label_key_name(s)) {
        errs.push(regex_error(LABEL_VALUE_MSG, LABEL_VALUE_FMT, &["MyValue", "my_value", "12345"]));
    }
    errs
}

/// apimachinery `maskTrailingDash`.
fn mask_trailing_dash(s: &str) -> String {
    if s.len() > 1 && s.ends_with('-') {
        // Byte slicing as Go does; a multi-byte character before the dash is replaced lossily.
        let cut = &s.as_bytes()[..s.len() - 2];
        return String::from_utf8_lossy(cut).into_owned() + "a";
    }
    s.to_string()
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    for (n, group) in [8, 4, 4, 4, 12].iter().enumerate() {
        if n > 0 && b.get(i) == Some(&b'-') {
            i += 1;
        }
        for _ in 0..*group {
            if !b.get(i).is_some_and(u8::is_ascii_hexdigit) {
                return false;
            }
            i += 1;
        }
    }
    i == b.len()
}

/// Go `base64.StdEncoding.DecodeString(s) == nil` (CR and LF are ignored).
fn is_base64(s: &str) -> bool {
    let data: Vec<u8> = s.bytes().filter(|&c| c != b'\r' && c != b'\n').collect();
    if !data.len().is_multiple_of(4) {
        return false;
    }
    let valid = |c: u8| c.is_ascii_alphanumeric() || c == b'+' || c == b'/';
    for (q, chunk) in data.chunks(4).enumerate() {
        let last = q == data.len() / 4 - 1;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return false;
        }
        if !chunk[..4 - pad].iter().all(|&c| valid(c)) {
            return false;
        }
    }
    true
}

fn digits(s: &[u8], n: usize) -> Option<u32> {
    if s.len() < n || !s[..n].iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s[..n].iter().fold(0, |a, d| a * 10 + u32::from(d - b'0')))
}

/// `time.Parse("2006-01-02", s)`: returns the rest after a valid date.
fn parse_date(b: &[u8]) -> Option<&[u8]> {
    let year = digits(b, 4)?;
    if b.get(4) != Some(&b'-') {
        return None;
    }
    let month = digits(&b[5..], 2)?;
    if b.get(7) != Some(&b'-') {
        return None;
    }
    let day = digits(&b[8..], 2)?;
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let dim = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if day == 0 || day > dim {
        return None;
    }
    Some(&b[10..])
}

fn is_date(s: &str) -> bool {
    parse_date(s.as_bytes()).is_some_and(<[u8]>::is_empty)
}

fn is_datetime(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    let Some(rest) = parse_date(s.as_bytes()) else {
        return false;
    };
    let Some((&sep, t)) = rest.split_first() else {
        return false;
    };
    if sep != b'T' && sep != b' ' {
        return false;
    }
    let (Some(h), Some(m)) = (digits(t, 2), digits(t.get(3..).unwrap_or(&[]), 2)) else {
        return false;
    };
    if t[2] != b':' || h > 23 || m > 59 {
        return false;
    }
    let mut r = &t[5..];
    let mut has_seconds = false;
    if r.first() == Some(&b':') {
        let Some(sec) = digits(&r[1..], 2) else {
            return false;
        };
        if sec > 59 {
            return false;
        }
        r = &r[3..];
        has_seconds = true;
        if matches!(r.first(), Some(b'.') | Some(b',')) {
            let n = r[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return false;
            }
            r = &r[1 + n..];
        }
    }
    if sep == b' ' {
        return has_seconds && r.is_empty();
    }
    match r {
        [] => true,
        [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] | [b'+' | b'-', h1, h2, m1, m2] => {
            [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit())
                && (h1 - b'0') * 10 + (h2 - b'0') <= 24
                && (m1 - b'0') * 10 + (m2 - b'0') <= 60
                && (has_seconds || r.len() == 6)
        }
        _ => false,
    }
}

impl NamedFormat {
    /// Every format's name (`format.named` key and constructor name), in declaration order.
    pub fn names() -> impl Iterator<Item = &'static str> {
        ctors::NAMES.iter().map(|(n, _)| *n)
    }

    /// `format.named(name)`: `None` for unknown names.
    pub fn named(name: &str) -> Option<NamedFormat> {
        ctors::NAMES.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    /// `validate(s)`: `None` when valid, else the error strings.
    pub fn validate(self, s: &str) -> Option<Vec<String>> {
        use NamedFormat::*;
        let one = |ok: bool, msg: &str| if ok { vec![] } else { vec![msg.to_string()] };
        let errs = match self {
            Dns1123Label => dns1123_label(s),
            Dns1123Subdomain => dns1123_subdomain(s),
            Dns1035Label => dns1035_label(s),
            QualifiedName => qualified_name(s),
            Dns1123LabelPrefix => dns1123_label(&mask_trailing_dash(s)),
            Dns1123SubdomainPrefix => dns1123_subdomain(&mask_trailing_dash(s)),
            Dns1035LabelPrefix => dns1035_label(&mask_trailing_dash(s)),
            LabelValue => label_value(s),
            Uri => parse_request_uri(s).err().into_iter().collect(),
            Uuid => one(is_uuid(s), "does not match the UUID format"),
            Byte => one(is_base64(s), "invalid base64"),
            Date => one(is_date(s), "invalid date"),
            Datetime => one(is_datetime(s), "invalid datetime"),
        };
        (!errs.is_empty()).then_some(errs)
    }

    /// `MaxRegexSize` used by the `validate` cost: ceil(0.1×(1+len)) × ceil(0.25×this).
    pub fn max_regex_size(self) -> u64 {
        use NamedFormat::*;
        match self {
            Dns1123Label | Dns1035Label | Dns1123LabelPrefix | Dns1035LabelPrefix => 30,
            Dns1123Subdomain | QualifiedName | Dns1123SubdomainPrefix => 60,
            LabelValue => 40,
            // len(strfmt.UUIDPattern) (kube-openapi), len(govalidator.Base64).
            Uuid => 70,
            Byte => 84,
            // len(strfmt.DateTimePattern) for both (go-openapi's pattern; kube-openapi's fork
            // is assumed identical).
            Date | Datetime => 71,
            // len(govalidator.URL): not transcribed (a long composite pattern); the `uri`
            // validate cost is therefore 0 × string cost. Known gap.
            Uri => 0,
        }
    }
}

/// Cost of `validate(s)`: ceil(0.1 × (1 + len(s))) × ceil(0.25 × max regex size).
pub fn validate_cost(format: NamedFormat, str_len: u64) -> u64 {
    (str_len + 1).div_ceil(10) * format.max_regex_size().div_ceil(4)
}

// ---------------------------------------------------------------------------------------------
// CEL declarations (apiserver overload ids, in the apiserver's declaration order)

/// Declare `validate`, `format.named` and the constructors (apiserver `formatLibraryDecls`,
/// `ConstantFormats`). Overload ids use dashes (`format-validate`), as upstream.
pub fn declare(d: &mut crate::cel::decls::Declarations) {
    crate::cel::signature::declare(d, DECLS);
}

/// The zero-argument constructors `format.<name>()` (the overload id is the function name) come
/// in [`NamedFormat::named`]'s order.
const DECLS: &[crate::cel::signature::Row] = &[
    (
        "validate",
        "format-validate",
        "kubernetes.NamedFormat.(string) -> optional_type(list(string))",
    ),
    ("format.named", "format-named", "(string) -> optional_type(kubernetes.NamedFormat)"),
    ("format.dns1123Label", "format.dns1123Label", "() -> kubernetes.NamedFormat"),
    ("format.dns1123Subdomain", "format.dns1123Subdomain", "() -> kubernetes.NamedFormat"),
    ("format.dns1035Label", "format.dns1035Label", "() -> kubernetes.NamedFormat"),
    ("format.qualifiedName", "format.qualifiedName", "() -> kubernetes.NamedFormat"),
    ("format.dns1123LabelPrefix", "format.dns1123LabelPrefix", "() -> kubernetes.NamedFormat"),
    (
        "format.dns1123SubdomainPrefix",
        "format.dns1123SubdomainPrefix",
        "() -> kubernetes.NamedFormat",
    ),
    ("format.dns1035LabelPrefix", "format.dns1035LabelPrefix", "() -> kubernetes.NamedFormat"),
    ("format.labelValue", "format.labelValue", "() -> kubernetes.NamedFormat"),
    ("format.uri", "format.uri", "() -> kubernetes.NamedFormat"),
    ("format.uuid", "format.uuid", "() -> kubernetes.NamedFormat"),
    ("format.byte", "format.byte", "() -> kubernetes.NamedFormat"),
    ("format.date", "format.date", "() -> kubernetes.NamedFormat"),
    ("format.datetime", "format.datetime", "() -> kubernetes.NamedFormat"),
];

// ---------------------------------------------------------------------------------------------
// CEL implementations

use super::bind::{self, opaque, wrap};
use crate::cel::stdlib::{Ctx, Overload, R};
use crate::cel::value::{OpaqueValue, Value};
use std::rc::Rc;

/// A `kubernetes.NamedFormat` value.
#[derive(Debug)]
pub struct FormatValue(pub NamedFormat);

impl OpaqueValue for FormatValue {
    fn type_name(&self) -> &str {
        super::type_name::NAMED_FORMAT
    }
    /// Two formats are equal exactly when they name the same format (apiserver
    /// `format_test.go` TestFormat: `format.named("uuid").value() == format.uuid()` is true,
    /// `format.uuid() == format.byte()` false); `==` against another type is `no such overload`.
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<FormatValue>().is_some_and(|o| self.0 == o.0)
    }
    fn display(&self) -> String {
        format!("{:?}", self.0)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn validate_impl<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let f = opaque::<FormatValue>(&a[0])?.0;
    Ok(match f.validate(bind::string(&a[1])?) {
        None => Value::Optional(None),
        Some(errors) => {
            let list = errors.into_iter().map(Value::string).collect();
            Value::Optional(Some(Rc::new(Value::list(list))))
        }
    })
}
fn validate_cost_fn(a: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    match (a.first().map(opaque::<FormatValue>), a.get(1)) {
        (Some(Ok(f)), Some(s)) => validate_cost(f.0, bind::size(s)),
        _ => 1,
    }
}
fn named<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let f = NamedFormat::named(bind::string(&a[0])?);
    Ok(Value::Optional(f.map(|f| Rc::new(wrap(FormatValue(f))))))
}

macro_rules! constructors {
    ($($name:literal => $variant:ident),* $(,)?) => {
        /// Every named format by its `format.named` key (also its constructor's name).
        pub(super) const NAMES: &[(&str, NamedFormat)] = &[$(($name, NamedFormat::$variant)),*];

        $(
            fn $variant<'a>(_: &mut Ctx, _: &[Value<'a>]) -> R<'a> {
                Ok(wrap(FormatValue(NamedFormat::$variant)))
            }
        )*

        /// The constructors `format.<name>()`, in [`NAMES`]' order.
        pub(super) static OVERLOADS: &[Overload] = &[
            $(Overload::global(concat!("format.", $name), concat!("format.", $name), 0, $variant)),*
        ];
    };
}

#[allow(non_snake_case)]
mod ctors {
    use super::*;
    constructors! {
        "dns1123Label" => Dns1123Label,
        "dns1123Subdomain" => Dns1123Subdomain,
        "dns1035Label" => Dns1035Label,
        "qualifiedName" => QualifiedName,
        "dns1123LabelPrefix" => Dns1123LabelPrefix,
        "dns1123SubdomainPrefix" => Dns1123SubdomainPrefix,
        "dns1035LabelPrefix" => Dns1035LabelPrefix,
        "labelValue" => LabelValue,
        "uri" => Uri,
        "uuid" => Uuid,
        "byte" => Byte,
        "date" => Date,
        "datetime" => Datetime,
    }
}

/// The format implementations (`validate` priced by its own cost function); the constructors
/// (cost 1) are [`CONSTRUCTORS`].
pub static OVERLOADS: &[Overload] = &[
    Overload::member("validate", "format-validate", 2, validate_impl).with_cost(validate_cost_fn),
    Overload::global("format.named", "format-named", 1, named),
];

/// The constructors `format.<name>()`, registered after [`OVERLOADS`].
pub static CONSTRUCTORS: &[Overload] = ctors::OVERLOADS;

#[cfg(test)]
mod tests {
    use super::*;
    use NamedFormat::*;

    fn v(f: NamedFormat, s: &str) -> Option<Vec<String>> {
        f.validate(s)
    }

    // apiserver pkg/cel/library/format_test.go TestFormat (values), spec §8.6
    #[test]
    fn library_cases() {
        assert_eq!(v(Dns1123Label, "my-name"), None);
        assert_eq!(
            v(Dns1123Label, "contains a space"),
            Some(vec!["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".to_string()])
        );
        assert_eq!(v(Dns1123Label, "a.b"), Some(vec!["must not contain dots".to_string()]));
        assert_eq!(
            v(Dns1123Label, &"a".repeat(64)),
            Some(vec!["must be no more than 63 characters".to_string()])
        );
        assert_eq!(v(Dns1123LabelPrefix, "my-name-"), None);
        assert_eq!(v(Dns1123Subdomain, "example.com"), None);
        assert_eq!(
            v(Dns1123Subdomain, "Example.com"),
            Some(vec!["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string()])
        );
        assert_eq!(v(Dns1123SubdomainPrefix, "example-"), None);
        assert_eq!(v(Dns1035Label, "my-name"), None);
        assert_eq!(
            v(Dns1035Label, "1-name"),
            Some(vec!["a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string()])
        );
        assert_eq!(v(Dns1035LabelPrefix, "my-name-"), None);
        assert_eq!(v(QualifiedName, "example.com/MyName"), None);
        assert_eq!(
            v(QualifiedName, "/simple"),
            Some(vec!["prefix part must be non-empty".to_string()])
        );
        assert_eq!(
            v(QualifiedName, "only/one/slash"),
            Some(vec!["a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".to_string()])
        );
        assert_eq!(v(LabelValue, ""), None);
        assert_eq!(v(LabelValue, "my_value"), None);
        assert!(v(LabelValue, "-starts-with-dash").is_some());
        assert_eq!(v(Uri, "http://example.com"), None);
        assert_eq!(
            v(Uri, "example"),
            Some(vec![r#"parse "example": invalid URI for request"#.to_string()])
        );
        assert_eq!(v(Uuid, "123e4567-e89b-12d3-a456-426614174000"), None);
        assert_eq!(v(Uuid, "123e4567"), Some(vec!["does not match the UUID format".to_string()]));
        assert_eq!(v(Byte, "aGVsbG8="), None);
        assert_eq!(v(Byte, "aGVsbG8"), Some(vec!["invalid base64".to_string()]));
        assert_eq!(v(Date, "2021-01-01"), None);
        assert_eq!(v(Date, "2021-02-29"), Some(vec!["invalid date".to_string()]));
        assert_eq!(v(Datetime, "2021-01-01T00:00:00Z"), None);
        assert_eq!(v(Datetime, "2021-01-01T00:00:00.123+02:00"), None);
        assert_eq!(v(Datetime, "2021-01-01"), Some(vec!["invalid datetime".to_string()]));
        assert_eq!(NamedFormat::named("unknown"), None);
        assert_eq!(NamedFormat::named("dns1123Label"), Some(Dns1123Label));
    }

    // apimachinery validation_test.go / content kube_test.go (pass/fail only)
    #[test]
    fn apimachinery_cases() {
        for ok in [
            "simple",
            "now-with-dashes",
            "1-starts-with-num",
            "1234",
            "simple/simple",
            "1.2.3.4/5678",
            "Uppercase_Is_OK_123",
        ] {
            assert!(qualified_name(ok).is_empty(), "{ok}");
        }
        for bad in [
            "nospecialchars%^=@",
            "cantendwithadash-",
            "-cantstartwithadash-",
            "only/one/slash",
            "Example.com/abc",
            "example_com/abc",
            "example.com/",
            "/simple",
        ] {
            assert!(!qualified_name(bad).is_empty(), "{bad}");
        }
        for bad in [
            "nospecialchars%^=@",
            "Tama-nui-te-rā.is.Māori.sun",
            "\\backslashes\\are\\bad",
            "-starts-with-dash",
            "ends-with-dash-",
            ".starts.with.dot",
            "ends.with.dot.",
        ] {
            assert!(!label_value(bad).is_empty(), "{bad}");
        }
        assert_eq!(mask_trailing_dash("abc-"), "aba");
        assert_eq!(mask_trailing_dash("-"), "-");
        assert_eq!(validate_cost(Dns1123Label, 9), 8);
    }
}
