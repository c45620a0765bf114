//! Kubernetes `Semver` library (since Kubernetes 1.33, library version 1), type
//! `kubernetes.Semver`.
//!
//! blang/semver v4 strict `Parse`, plus the apiserver's `normalizeAndParse`
//! (`pkg/cel/library/semverlib.go`).
//!
//! ```text
//! semver(<string>) <kubernetes.Semver>           -> Semver::parse
//! semver(<string>, <bool>) <kubernetes.Semver>   -> Semver::parse_normalized when true
//! isSemver(<string>[, <bool>]) <bool>            -> the above, .is_ok()
//! <Semver>.major()/.minor()/.patch() <int>       -> Semver::major/minor/patch (uint64 wrapped to int64, as Go does)
//! <Semver>.isGreaterThan/.isLessThan(<Semver>) <bool>, .compareTo(<Semver>) <int> -> Semver::compare
//! <Semver> == <Semver>                           -> Semver::equal (precedence; build metadata ignored)
//! ```
//!
//! Examples (apiserver `semver_test.go`, spec §8.6):
//!
//! ```text
//! semver("v1.0")                        // error: No Major.Minor.Patch elements found
//! isSemver("01.01.01")                  // false
//! isSemver("01.01.01", true)            // true
//! semver("v01.01", true) == semver("1.1.0") // true
//! semver("1.0-alpha", true)             // error: short version cannot contain PreRelease/Build meta data
//! semver("1.2.3").compareTo(semver("2.0.0")) // -1
//! ```

use std::cmp::Ordering;

use super::gostr::{parse_uint, quote};

const NUMBERS: &str = "0123456789";

/// A blang/semver v4 `Version`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Semver {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: Vec<PreRelease>,
    pub build: Vec<String>,
}

/// One dot-separated pre-release identifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreRelease {
    Num(u64),
    Alpha(String),
}

fn contains_only(s: &str, alphanum: bool) -> bool {
    s.chars().all(|c| NUMBERS.contains(c) || (alphanum && (c.is_ascii_alphabetic() || c == '-')))
}

fn has_leading_zeroes(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

fn number(s: &str, what: &str) -> Result<u64, String> {
    if !contains_only(s, false) {
        return Err(format!("Invalid character(s) found in {what} number {}", quote(s)));
    }
    if has_leading_zeroes(s) {
        // `what` is ASCII; `str::to_uppercase` would link core's Unicode table (7 KB gzip of wasm).
        let cap = what[..1].to_ascii_uppercase() + &what[1..];
        return Err(format!("{cap} number must not contain leading zeroes {}", quote(s)));
    }
    parse_uint(s)
}

impl PreRelease {
    fn parse(s: &str) -> Result<PreRelease, String> {
        if s.is_empty() {
            return Err("Prerelease is empty".to_string());
        }
        if contains_only(s, false) {
            if has_leading_zeroes(s) {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {}",
                    quote(s)
                ));
            }
            return parse_uint(s).map(PreRelease::Num);
        }
        if contains_only(s, true) {
            return Ok(PreRelease::Alpha(s.to_string()));
        }
        Err(format!("Invalid character(s) found in prerelease {}", quote(s)))
    }

    fn compare(&self, o: &PreRelease) -> Ordering {
        match (self, o) {
            (PreRelease::Num(a), PreRelease::Num(b)) => a.cmp(b),
            (PreRelease::Num(_), PreRelease::Alpha(_)) => Ordering::Less,
            (PreRelease::Alpha(_), PreRelease::Num(_)) => Ordering::Greater,
            (PreRelease::Alpha(a), PreRelease::Alpha(b)) => a.as_bytes().cmp(b.as_bytes()),
        }
    }
}

impl Semver {
    /// blang/semver v4 `Parse` (strict), with its error texts.
    pub fn parse(s: &str) -> Result<Semver, String> {
        if s.is_empty() {
            return Err("Version string empty".to_string());
        }
        let parts: Vec<&str> = s.splitn(3, '.').collect();
        if parts.len() != 3 {
            return Err("No Major.Minor.Patch elements found".to_string());
        }
        let major = number(parts[0], "major")?;
        let minor = number(parts[1], "minor")?;
        let mut patch_str = parts[2];
        let mut build = Vec::new();
        let mut pre_strs = Vec::new();
        if let Some(i) = patch_str.find('+') {
            build = patch_str[i + 1..].split('.').collect();
            patch_str = &patch_str[..i];
        }
        if let Some(i) = patch_str.find('-') {
            pre_strs = patch_str[i + 1..].split('.').collect();
            patch_str = &patch_str[..i];
        }
        let patch = number(patch_str, "patch")?;
        let pre = pre_strs.into_iter().map(PreRelease::parse).collect::<Result<Vec<_>, _>>()?;
        for b in &build {
            if b.is_empty() {
                return Err("Build meta data is empty".to_string());
            }
            if !contains_only(b, true) {
                return Err(format!("Invalid character(s) found in build meta data {}", quote(b)));
            }
        }
        let build = build.into_iter().map(str::to_string).collect();
        Ok(Semver { major, minor, patch, pre, build })
    }

    /// The apiserver's `normalizeAndParse`: drop one leading `v`, strip leading zeros of each
    /// of the first three dot parts, pad a missing minor/patch with `0`.
    pub fn parse_normalized(s: &str) -> Result<Semver, String> {
        let s = s.strip_prefix('v').unwrap_or(s);
        let mut parts: Vec<String> = s
            .splitn(3, '.')
            .map(|p| {
                if p.len() > 1 {
                    let t = p.trim_start_matches('0');
                    if t.is_empty() || !t.starts_with(|c: char| c.is_ascii_digit()) {
                        return format!("0{t}");
                    }
                    return t.to_string();
                }
                p.to_string()
            })
            .collect();
        if parts.len() < 3 {
            if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
                return Err("short version cannot contain PreRelease/Build meta data".to_string());
            }
            while parts.len() < 3 {
                parts.push("0".to_string());
            }
        }
        Semver::parse(&parts.join("."))
    }

    /// `semver(s, normalize)`.
    pub fn parse_with(s: &str, normalize: bool) -> Result<Semver, String> {
        if normalize {
            Semver::parse_normalized(s)
        } else {
            Semver::parse(s)
        }
    }

    /// `major()` as CEL sees it (Go `types.Int(uint64)`, which wraps).
    pub fn major(&self) -> i64 {
        self.major as i64
    }

    /// `minor()`.
    pub fn minor(&self) -> i64 {
        self.minor as i64
    }

    /// `patch()`.
    pub fn patch(&self) -> i64 {
        self.patch as i64
    }

    /// Semver precedence (blang `Compare`); build metadata is ignored.
    pub fn compare(&self, o: &Semver) -> Ordering {
        let core = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            _ => {}
        }
        for (a, b) in self.pre.iter().zip(&o.pre) {
            let c = a.compare(b);
            if c != Ordering::Equal {
                return c;
            }
        }
        self.pre.len().cmp(&o.pre.len())
    }

    /// `compareTo`: −1, 0, 1.
    pub fn compare_to(&self, o: &Semver) -> i64 {
        self.compare(o) as i64
    }

    /// CEL `==` (blang `Equals`).
    pub fn equal(&self, o: &Semver) -> bool {
        self.compare(o) == Ordering::Equal
    }
}

/// Cost of `semver(s)`, `isSemver(s)`: ceil(0.1 × len(s)).
pub fn semver_cost(arg_len: u64) -> u64 {
    arg_len.div_ceil(10)
}

// ---------------------------------------------------------------------------------------------
// CEL declarations (apiserver overload ids, in the apiserver's declaration order)

/// Declare the semver functions (apiserver `semverLibType.declarations`, library version 1:
/// the `normalize` overloads are included).
pub fn declare(d: &mut crate::cel::decls::Declarations) {
    crate::cel::signature::declare(d, DECLS);
}

/// The semver library's overloads (`semverlib.go`, v1), in its declaration order.
const DECLS: &[crate::cel::signature::Row] = &[
    ("semver", "string_to_semver", "(string) -> kubernetes.Semver"),
    ("isSemver", "is_semver_string", "(string) -> bool"),
    ("isGreaterThan", "semver_is_greater_than", "kubernetes.Semver.(kubernetes.Semver) -> bool"),
    ("isLessThan", "semver_is_less_than", "kubernetes.Semver.(kubernetes.Semver) -> bool"),
    ("compareTo", "semver_compare_to", "kubernetes.Semver.(kubernetes.Semver) -> int"),
    ("major", "semver_major", "kubernetes.Semver.() -> int"),
    ("minor", "semver_minor", "kubernetes.Semver.() -> int"),
    ("patch", "semver_patch", "kubernetes.Semver.() -> int"),
    ("semver", "string_bool_to_semver", "(string, bool) -> kubernetes.Semver"),
    ("isSemver", "is_semver_string_bool", "(string, bool) -> bool"),
];

// ---------------------------------------------------------------------------------------------
// CEL implementations

use super::bind::{self, opaque, wrap};
use crate::cel::stdlib::{Ctx, Fail, Overload, R};
use crate::cel::value::{OpaqueValue, Value};

/// A `kubernetes.Semver` value.
#[derive(Debug)]
pub struct SemverValue(pub Semver);

impl OpaqueValue for SemverValue {
    fn type_name(&self) -> &str {
        super::type_name::SEMVER
    }
    /// blang `EQ`: precedence equality, build metadata ignored.
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<SemverValue>().is_some_and(|o| self.0.equal(&o.0))
    }
    /// blang `Version.String()`.
    fn display(&self) -> String {
        let v = &self.0;
        let mut s = format!("{}.{}.{}", v.major, v.minor, v.patch);
        for (i, p) in v.pre.iter().enumerate() {
            s.push(if i == 0 { '-' } else { '.' });
            match p {
                PreRelease::Num(n) => s.push_str(&n.to_string()),
                PreRelease::Alpha(a) => s.push_str(a),
            }
        }
        for (i, b) in v.build.iter().enumerate() {
            s.push(if i == 0 { '+' } else { '.' });
            s.push_str(b);
        }
        s
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn v<'v>(x: &'v Value<'_>) -> Result<&'v Semver, Fail> {
    opaque::<SemverValue>(x).map(|x| &x.0)
}
fn normalize(a: &[Value<'_>]) -> Result<bool, Fail> {
    a.get(1).map(bind::boolean).unwrap_or(Ok(false))
}
fn semver_of<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let (s, n) = (bind::string(&a[0])?, normalize(a)?);
    Semver::parse_with(s, n).map(|x| wrap(SemverValue(x))).or_else(bind::err)
}
fn is_semver<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    let (s, n) = (bind::string(&a[0])?, normalize(a)?);
    Ok(Value::Bool(Semver::parse_with(s, n).is_ok()))
}
fn major<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Int(v(&a[0])?.major()))
}
fn minor<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Int(v(&a[0])?.minor()))
}
fn patch<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Int(v(&a[0])?.patch()))
}
fn is_greater_than<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(v(&a[0])?.compare(v(&a[1])?) == Ordering::Greater))
}
fn is_less_than<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Bool(v(&a[0])?.compare(v(&a[1])?) == Ordering::Less))
}
fn compare_to<'a>(_: &mut Ctx, a: &[Value<'a>]) -> R<'a> {
    Ok(Value::Int(v(&a[0])?.compare_to(v(&a[1])?)))
}
/// `semver`/`isSemver` cost ceil(0.1 × len(s)) (apiserver estimator; not priced by the
/// runtime's name table).
fn parse_cost(a: &[Value<'_>], _: Option<&Value<'_>>) -> u64 {
    semver_cost(a.first().map_or(1, bind::size))
}

/// The semver library's implementations (`semver`/`isSemver` priced by their own cost
/// function, the rest by the apiserver estimator, by name).
pub static OVERLOADS: &[Overload] = &[
    Overload::global("semver", "string_to_semver", 1, semver_of).with_cost(parse_cost),
    Overload::global("isSemver", "is_semver_string", 1, is_semver).with_cost(parse_cost),
    Overload::member("isGreaterThan", "semver_is_greater_than", 2, is_greater_than),
    Overload::member("isLessThan", "semver_is_less_than", 2, is_less_than),
    Overload::member("compareTo", "semver_compare_to", 2, compare_to),
    Overload::member("major", "semver_major", 1, major),
    Overload::member("minor", "semver_minor", 1, minor),
    Overload::member("patch", "semver_patch", 1, patch),
    Overload::global("semver", "string_bool_to_semver", 2, semver_of).with_cost(parse_cost),
    Overload::global("isSemver", "is_semver_string_bool", 2, is_semver).with_cost(parse_cost),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Semver {
        Semver::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    // apiserver pkg/cel/library/semver_test.go TestSemver (values), spec §8.6
    #[test]
    fn cel_library_cases() {
        assert!(Semver::parse("1.0.0").is_ok());
        assert_eq!(Semver::parse("v1.0").unwrap_err(), "No Major.Minor.Patch elements found");
        assert!(Semver::parse("1.0.0-alpha.1+build.2").is_ok());
        assert!(Semver::parse("01.01.01").is_err());
        assert!(Semver::parse_normalized("01.01.01").is_ok());
        assert!(Semver::parse_normalized("v01.01").unwrap().equal(&v("1.1.0")));
        assert!(Semver::parse_normalized("v1.0.0").unwrap().equal(&v("1.0.0")));
        assert!(Semver::parse_normalized("1").unwrap().equal(&v("1.0.0")));
        assert!(Semver::parse("hello").is_err());
        assert!(Semver::parse("1.0.0-").is_err());
        assert!(v("1.0.0").equal(&v("1.0.0+build")));
        assert!(!v("1.0.0").equal(&v("1.0.1")));
        assert_eq!(v("1.2.3").compare_to(&v("1.2.3")), 0);
        assert_eq!(v("1.2.3").compare_to(&v("2.0.0")), -1);
        assert_eq!(v("1.2.3").compare_to(&v("0.1.2")), 1);
        assert_eq!(v("1.2.3").major(), 1);
        assert_eq!(v("1.2.3").minor(), 2);
        assert_eq!(v("1.2.3").patch(), 3);
    }

    // blang/semver v4 semver_test.go (error texts and precedence)
    #[test]
    fn blang_errors_and_precedence() {
        let errors = [
            ("", "Version string empty"),
            ("1.2", "No Major.Minor.Patch elements found"),
            ("a.2.3", r#"Invalid character(s) found in major number "a""#),
            ("01.2.3", r#"Major number must not contain leading zeroes "01""#),
            ("1.02.3", r#"Minor number must not contain leading zeroes "02""#),
            ("1.2.03", r#"Patch number must not contain leading zeroes "03""#),
            ("1.2.x", r#"Invalid character(s) found in patch number "x""#),
            (".2.3", r#"strconv.ParseUint: parsing "": invalid syntax"#),
            ("1.2.3-01", r#"Numeric PreRelease version must not contain leading zeroes "01""#),
            ("1.2.3-a..b", "Prerelease is empty"),
            ("1.2.3-a_b", r#"Invalid character(s) found in prerelease "a_b""#),
            ("1.2.3+", "Build meta data is empty"),
            ("1.2.3+a_b", r#"Invalid character(s) found in build meta data "a_b""#),
            (" 1.2.3", r#"Invalid character(s) found in major number " 1""#),
        ];
        for (input, want) in errors {
            assert_eq!(Semver::parse(input).unwrap_err(), want, "{input}");
        }
        assert_eq!(
            Semver::parse_normalized("1.0-alpha").unwrap_err(),
            "short version cannot contain PreRelease/Build meta data"
        );
        // semver.org §11 precedence chain.
        let chain = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
        ];
        for w in chain.windows(2) {
            assert_eq!(v(w[0]).compare(&v(w[1])), Ordering::Less, "{} < {}", w[0], w[1]);
        }
        assert_eq!(v("18446744073709551615.0.0").major(), -1);
        assert_eq!(semver_cost(5), 1);
    }
}
