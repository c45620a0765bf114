//! The AST validators cel-go runs after a successful type check (`cel/validator.go`,
//! `ext/formatting.go`), as Kubernetes configures them (spec §4.4):
//!
//! - **homogeneous aggregate literals**: every element of a list literal, every key and every
//!   value of a map literal must have the same static type as the first one (`dyn` is not
//!   `string`): `expected type 'string' but found 'dyn'`. Literals nested in list/map literals
//!   directly inside a `format(...)` call are exempt (only when `string.format` is declared, as
//!   the strings library registers that exemption);
//! - **literal validators** (1.29+): a literal argument of `duration(...)` or `timestamp(...)` must
//!   convert (`invalid duration argument`, `invalid timestamp argument`); a literal first argument
//!   of `matches` must compile (`invalid matches argument`; note that for the global form
//!   `matches(s, re)` that is `s`, as in cel-go);
//! - **string.format** (strings library v1+): a literal format string applied to a list literal
//!   is parsed, each clause checked against the static type of its argument, and surplus
//!   arguments reported (`too many arguments supplied to string.format (expected 1, got 2)`).
//!
//! Validators only run when type checking reported nothing, as in cel-go.

use super::ast::{Ast, Expr, ExprKind, Literal};
use super::checker::{format_cel_type, CheckIssue, CheckOptions, Checked, Reference};
use super::decls::Declarations;
use super::types::Type;

pub(crate) fn validate(
    ast: &Ast,
    decls: &Declarations,
    options: &CheckOptions,
    checked: &mut Checked,
) {
    let format_declared = decls
        .function("format")
        .is_some_and(|f| f.overloads.iter().any(|o| &*o.id == "string_format"));
    let mut issues = Vec::new();
    if options.homogeneous_literals {
        homogeneous_literals(ast, checked, format_declared, &mut issues);
    }
    if options.literal_validators {
        literal_arguments(ast, "duration", &mut issues, |l| match l {
            Literal::String(s) => parse_go_duration(s).is_some(),
            Literal::Int(_) => true,
            _ => false,
        });
        literal_arguments(ast, "timestamp", &mut issues, |l| match l {
            Literal::String(s) => parse_rfc3339(s).is_some(),
            Literal::Int(i) => (MIN_UNIX_SECONDS..=MAX_UNIX_SECONDS).contains(i),
            _ => false,
        });
        if let Some(compiles) = options.regex_validator {
            literal_arguments(ast, "matches", &mut issues, |l| match l {
                Literal::String(s) => compiles(s),
                _ => true,
            });
        }
    }
    if format_declared {
        string_format(ast, checked, &mut issues);
    }
    checked.errors.extend(issues);
}

fn issue(e: &Expr, message: String) -> CheckIssue {
    CheckIssue { message, pos: e.pos, span: e.span }
}

/// Visit every node, children before their parent (cel-go's `MatchDescendants` order).
fn post_order<'e>(e: &'e Expr, f: &mut dyn FnMut(&'e Expr)) {
    for c in e.children() {
        post_order(c, f);
    }
    f(e);
}

fn type_of<'c>(checked: &'c Checked, e: &Expr) -> &'c Type {
    checked.types.get(e.id as usize).unwrap_or(&Type::Dyn)
}

// ---------------------------------------------------------------------------------------------
// Homogeneous aggregate literals

/// Collect list and map literals with whether they sit (through other literals) directly
/// inside a `format` call.
fn aggregate_literals<'e>(
    e: &'e Expr,
    exempt: bool,
    format_exempt: bool,
    out: &mut Vec<(&'e Expr, bool)>,
) {
    let child_exempt = match &e.kind {
        ExprKind::List { .. } | ExprKind::Map { .. } => exempt,
        ExprKind::Call { function, .. } => format_exempt && function == "format",
        _ => false,
    };
    for c in e.children() {
        aggregate_literals(c, child_exempt, format_exempt, out);
    }
    if matches!(e.kind, ExprKind::List { .. } | ExprKind::Map { .. }) {
        out.push((e, exempt));
    }
}

fn homogeneous_literals(
    ast: &Ast,
    checked: &Checked,
    format_exempt: bool,
    issues: &mut Vec<CheckIssue>,
) {
    let mut literals = Vec::new();
    aggregate_literals(&ast.root, false, format_exempt, &mut literals);
    let unwrap = |t: &Type, optional: bool| -> Type {
        match (t, optional) {
            (Type::Optional(inner), true) => (**inner).clone(),
            _ => t.clone(),
        }
    };
    let mismatch = |e: &Expr, expected: &Type, actual: &Type| {
        issue(
            e,
            format!(
                "expected type '{}' but found '{}'",
                format_cel_type(expected),
                format_cel_type(actual)
            ),
        )
    };
    // Lists first, then maps, as cel-go does.
    for (e, exempt) in &literals {
        let ExprKind::List { elements, optional_indices } = &e.kind else {
            continue;
        };
        if *exempt {
            continue;
        }
        let mut first: Option<Type> = None;
        for (i, el) in elements.iter().enumerate() {
            let t = unwrap(type_of(checked, el), optional_indices.contains(&i));
            match &first {
                None => first = Some(t),
                Some(f) if *f != t => {
                    issues.push(mismatch(el, f, &t));
                    break;
                }
                Some(_) => {}
            }
        }
    }
    for (e, exempt) in &literals {
        let ExprKind::Map { entries } = &e.kind else {
            continue;
        };
        if *exempt {
            continue;
        }
        let mut first: Option<(Type, Type)> = None;
        for entry in entries {
            let kt = type_of(checked, &entry.key).clone();
            let vt = unwrap(type_of(checked, &entry.value), entry.optional);
            match &first {
                None => first = Some((kt, vt)),
                Some((fk, fv)) => {
                    if *fk != kt {
                        issues.push(mismatch(&entry.key, fk, &kt));
                    }
                    if *fv != vt {
                        issues.push(mismatch(&entry.value, fv, &vt));
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Literal arguments
//
// The parsers a literal argument is checked with are out of line (`#[inline(never)]`, also
// `check_format_string`): only expressions with such a literal reach them, and V8 compiles a
// wasm function whole on its first call (bench/README.md, "The first evaluate(), seventh
// round").

fn literal_arguments(
    ast: &Ast,
    function: &str,
    issues: &mut Vec<CheckIssue>,
    valid: impl Fn(&Literal) -> bool,
) {
    post_order(&ast.root, &mut |e| {
        if let ExprKind::Call { function: f, args, .. } = &e.kind {
            if f != function {
                return;
            }
            if let Some(arg @ Expr { kind: ExprKind::Literal(l), .. }) = args.first() {
                if !valid(l) {
                    issues.push(issue(arg, format!("invalid {function} argument")));
                }
            }
        }
    });
}

/// Seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range of CEL timestamps.
pub const MIN_UNIX_SECONDS: i64 = -62_135_596_800;
pub const MAX_UNIX_SECONDS: i64 = 253_402_300_799;

/// Go's `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+` with units `ns`, `us`, `µs`,
/// `μs`, `ms`, `s`, `m`, `h`, or `0`. Returns nanoseconds, `None` where Go reports an error
/// (including overflow of int64 nanoseconds).
#[inline(never)]
pub fn parse_go_duration(s: &str) -> Option<i64> {
    let mut s = s.as_bytes();
    let mut neg = false;
    if let Some(&c) = s.first() {
        if c == b'-' || c == b'+' {
            neg = c == b'-';
            s = &s[1..];
        }
    }
    if s == b"0" {
        return Some(0);
    }
    if s.is_empty() {
        return None;
    }
    const LIMIT: u64 = 1 << 63;
    let mut total: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return None;
        }
        // Integer part.
        let mut v: u64 = 0;
        let start = s.len();
        while let Some(&c) = s.first() {
            if !c.is_ascii_digit() {
                break;
            }
            if v > LIMIT / 10 {
                return None;
            }
            v = v * 10 + u64::from(c - b'0');
            if v > LIMIT {
                return None;
            }
            s = &s[1..];
        }
        let pre = start != s.len();
        // Fraction.
        let mut f: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut post = false;
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let start = s.len();
            let mut overflow = false;
            while let Some(&c) = s.first() {
                if !c.is_ascii_digit() {
                    break;
                }
                s = &s[1..];
                if overflow {
                    continue;
                }
                if f > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = f * 10 + u64::from(c - b'0');
                if y > LIMIT {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10.0;
            }
            post = start != s.len();
        }
        if !pre && !post {
            return None;
        }
        // Unit: everything up to the next digit or period.
        let i = s.iter().position(|&c| c == b'.' || c.is_ascii_digit()).unwrap_or(s.len());
        if i == 0 {
            return None;
        }
        let unit: u64 = match &s[..i] {
            b"ns" => 1,
            b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            _ => return None,
        };
        s = &s[i..];
        if v > LIMIT / unit {
            return None;
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return None;
            }
        }
        total += v;
        if total > LIMIT {
            return None;
        }
    }
    if neg {
        return Some((total as i128).wrapping_neg() as i64);
    }
    if total > LIMIT - 1 {
        return None;
    }
    Some(total as i64)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Go's `time.Parse(time.RFC3339, s)` followed by CEL's timestamp range check. Returns (Unix
/// seconds, nanoseconds). Accepts what Go's general parser accepts for that layout: a 1- or
/// 2-digit hour, fractional seconds after `.` or `,`, `Z` or `±hh:mm`.
#[inline(never)]
pub fn parse_rfc3339(s: &str) -> Option<(i64, u32)> {
    let b = s.as_bytes();
    let mut i = 0usize;
    let digits = |i: &mut usize, n: usize| -> Option<i64> {
        let part = b.get(*i..*i + n)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        *i += n;
        Some(part.iter().fold(0i64, |a, &c| a * 10 + i64::from(c - b'0')))
    };
    let lit = |i: &mut usize, c: u8| -> Option<()> {
        if b.get(*i) == Some(&c) {
            *i += 1;
            Some(())
        } else {
            None
        }
    };
    let year = digits(&mut i, 4)?;
    lit(&mut i, b'-')?;
    let month = digits(&mut i, 2)?;
    if !(1..=12).contains(&month) {
        return None;
    }
    lit(&mut i, b'-')?;
    let day = digits(&mut i, 2)?;
    lit(&mut i, b'T')?;
    // Hour: one or two digits.
    let hour = if b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        digits(&mut i, 2)?
    } else {
        digits(&mut i, 1)?
    };
    if hour > 23 {
        return None;
    }
    lit(&mut i, b':')?;
    let minute = digits(&mut i, 2)?;
    if minute > 59 {
        return None;
    }
    lit(&mut i, b':')?;
    let second = digits(&mut i, 2)?;
    if second > 59 {
        return None;
    }
    let mut nanos: u32 = 0;
    if matches!(b.get(i), Some(b'.') | Some(b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        let mut n = 0u32;
        let mut count = 0;
        while let Some(&c) = b.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            if count < 9 {
                n = n * 10 + u32::from(c - b'0');
                count += 1;
            }
            i += 1;
        }
        for _ in count..9 {
            n *= 10;
        }
        nanos = n;
    }
    let offset_seconds = match b.get(i) {
        Some(b'Z') => {
            i += 1;
            0
        }
        Some(&sign @ (b'+' | b'-')) => {
            i += 1;
            let hh = digits(&mut i, 2)?;
            lit(&mut i, b':')?;
            let mm = digits(&mut i, 2)?;
            if hh > 24 || mm > 60 {
                return None;
            }
            let off = hh * 3600 + mm * 60;
            if sign == b'-' {
                -off
            } else {
                off
            }
        }
        _ => return None,
    };
    if i != b.len() {
        return None;
    }
    if day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let secs = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        - offset_seconds;
    if !(MIN_UNIX_SECONDS..=MAX_UNIX_SECONDS).contains(&secs) {
        return None;
    }
    Some((secs, nanos))
}

// ---------------------------------------------------------------------------------------------
// string.format

/// cel-go's `Type.TypeName()`: the unparameterized name used in format errors.
fn type_name(t: &Type) -> String {
    match t {
        Type::List(_) => "list".into(),
        Type::Map(..) => "map".into(),
        Type::Optional(_) => "optional_type".into(),
        Type::Type(_) => "type".into(),
        Type::Opaque(n, _) => n.to_string(),
        Type::Error => "*error*".into(),
        other => other.to_string(),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Uint,
    Double,
    Bool,
    String,
    Bytes,
    Timestamp,
    Duration,
    List,
    Map,
    Type,
    Null,
    Other,
}

fn kind(t: &Type) -> Kind {
    match t {
        Type::Int => Kind::Int,
        Type::Uint => Kind::Uint,
        Type::Double => Kind::Double,
        Type::Bool => Kind::Bool,
        Type::String => Kind::String,
        Type::Bytes => Kind::Bytes,
        Type::Timestamp => Kind::Timestamp,
        Type::Duration => Kind::Duration,
        Type::List(_) => Kind::List,
        Type::Map(..) => Kind::Map,
        Type::Type(_) => Kind::Type,
        Type::Null => Kind::Null,
        _ => Kind::Other,
    }
}

struct FormatError<'e> {
    /// The argument the error is about; `None` for the call itself.
    at: Option<&'e Expr>,
    message: String,
}

fn string_format(ast: &Ast, checked: &Checked, issues: &mut Vec<CheckIssue>) {
    post_order(&ast.root, &mut |e| {
        let ExprKind::Call { function, target: Some(target), args } = &e.kind else {
            return;
        };
        if function != "format" {
            return;
        }
        if let Some(Some(Reference::Function { overloads })) = checked.refs.get(e.id as usize) {
            if !overloads.is_empty() && !overloads.iter().any(|o| &**o == "string_format") {
                return;
            }
        }
        let ExprKind::Literal(Literal::String(format)) = &target.kind else {
            return;
        };
        let [list] = args.as_slice() else {
            return;
        };
        let ExprKind::List { elements, .. } = &list.kind else {
            return;
        };
        match check_format_string(format, elements, checked) {
            Err(err) => issues.push(issue(err.at.unwrap_or(e), err.message)),
            Ok(requested) if elements.len() > requested => issues.push(issue(
                e,
                format!(
                    "too many arguments supplied to string.format (expected {requested}, got {})",
                    elements.len()
                ),
            )),
            Ok(_) => {}
        }
    });
}

/// cel-go's `parseFormatString` driven by its static checker: the number of arguments the
/// format string asks for, or the first error.
#[inline(never)]
fn check_format_string<'e>(
    format: &str,
    args: &'e [Expr],
    checked: &Checked,
) -> Result<usize, FormatError<'e>> {
    let b = format.as_bytes();
    let plain = |message: String| FormatError { at: None, message };
    let mut i = 0;
    let mut index = 0usize;
    let mut requested = 0usize;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        requested += 1;
        if i + 1 >= b.len() {
            return Err(plain("unexpected end of string".into()));
        }
        let Some(arg) = args.get(index) else {
            return Err(plain(format!("index {index} out of range")));
        };
        // Clause: optional `.precision`, then one letter.
        let mut j = i + 1;
        if b[j] == b'.' {
            j += 1;
            let start = j;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j >= b.len() {
                return Err(plain(
                    "could not parse formatting clause: error while parsing precision: could not find end of precision specifier".into(),
                ));
            }
            let digits = &format[start..j];
            if digits.is_empty() || digits.parse::<i64>().is_err() {
                let why = if digits.is_empty() { "invalid syntax" } else { "value out of range" };
                return Err(plain(format!(
                    "could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"{digits}\": {why}"
                )));
            }
        }
        let clause = b[j];
        j += 1;
        verify_clause(clause, arg, checked).map_err(|err| match err {
            ClauseError::Unrecognized => plain(format!(
                "could not parse formatting clause: unrecognized formatting clause \"{}\"",
                char::from(clause)
            )),
            ClauseError::Type(at, message) => {
                FormatError { at: Some(at), message: format!("error during formatting: {message}") }
            }
        })?;
        i = j;
        index += 1;
    }
    Ok(requested)
}

enum ClauseError<'e> {
    Unrecognized,
    Type(&'e Expr, String),
}

fn verify_clause<'e>(clause: u8, arg: &'e Expr, checked: &Checked) -> Result<(), ClauseError<'e>> {
    let t = type_of(checked, arg);
    let one_of = |kinds: &[Kind]| *t == Type::Dyn || kinds.contains(&kind(t));
    let fail =
        |what: &str| Err(ClauseError::Type(arg, format!("{what}, was given {}", type_name(t))));
    match clause {
        b's' => match verify_string(arg, checked) {
            None => Ok(()),
            Some(bad) => Err(ClauseError::Type(
                bad,
                format!(
                    "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {}",
                    type_name(type_of(checked, bad))
                ),
            )),
        },
        b'd' if one_of(&[Kind::Int, Kind::Uint]) => Ok(()),
        b'd' => fail("decimal clause can only be used on integers"),
        b'f' if one_of(&[Kind::Double, Kind::String]) => Ok(()),
        b'f' => fail("fixed-point clause can only be used on doubles"),
        b'e' if one_of(&[Kind::Double, Kind::String]) => Ok(()),
        b'e' => fail("scientific clause can only be used on doubles"),
        b'b' if one_of(&[Kind::Int, Kind::Uint, Kind::Bool]) => Ok(()),
        b'b' => fail("only integers and bools can be formatted as binary"),
        b'x' | b'X' if one_of(&[Kind::Int, Kind::Uint, Kind::String, Kind::Bytes]) => Ok(()),
        b'x' | b'X' => fail("only integers, byte buffers, and strings can be formatted as hex"),
        b'o' if one_of(&[Kind::Int, Kind::Uint]) => Ok(()),
        b'o' => fail("octal clause can only be used on integers"),
        _ => Err(ClauseError::Unrecognized),
    }
}

/// The first sub-expression `%s` cannot print, looking into list and map literals.
fn verify_string<'e>(e: &'e Expr, checked: &Checked) -> Option<&'e Expr> {
    let t = type_of(checked, e);
    let printable = *t == Type::Dyn
        || matches!(
            kind(t),
            Kind::List
                | Kind::Map
                | Kind::Int
                | Kind::Uint
                | Kind::Double
                | Kind::Bool
                | Kind::String
                | Kind::Timestamp
                | Kind::Bytes
                | Kind::Duration
                | Kind::Type
                | Kind::Null
        );
    if !printable {
        return Some(e);
    }
    match &e.kind {
        ExprKind::List { elements, .. } => {
            elements.iter().find_map(|el| verify_string(el, checked))
        }
        ExprKind::Map { entries } => entries.iter().find_map(|en| {
            verify_string(&en.key, checked).or_else(|| verify_string(&en.value, checked))
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("0"), Some(0));
        assert_eq!(parse_go_duration("1s"), Some(1_000_000_000));
        assert_eq!(parse_go_duration("-1.5h"), Some(-5_400_000_000_000));
        assert_eq!(parse_go_duration("1h2m3s4ms5us6ns"), Some(3_723_004_005_006));
        assert_eq!(parse_go_duration("1µs"), Some(1_000));
        assert_eq!(parse_go_duration(".5s"), Some(500_000_000));
        assert_eq!(parse_go_duration("2562047h47m16.854775807s"), Some(i64::MAX));
        assert_eq!(parse_go_duration("-2562047h47m16.854775808s"), Some(i64::MIN));
        for bad in ["", "1", "s", ".s", "1x", "1s ", "+", "2562047h47m16.854775808s", "1d"] {
            assert_eq!(parse_go_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn rfc3339_timestamps() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some((0, 0)));
        assert_eq!(
            parse_rfc3339("2023-05-01T12:30:00.5+02:00"),
            Some((1_682_937_000, 500_000_000))
        );
        assert_eq!(parse_rfc3339("0001-01-01T00:00:00Z"), Some((MIN_UNIX_SECONDS, 0)));
        assert_eq!(parse_rfc3339("9999-12-31T23:59:59Z"), Some((MAX_UNIX_SECONDS, 0)));
        assert_eq!(parse_rfc3339("2024-02-29T00:00:00Z").map(|t| t.0), Some(1_709_164_800));
        for bad in [
            "2023-02-29T00:00:00Z",
            "2023-13-01T00:00:00Z",
            "2023-01-01 00:00:00Z",
            "2023-01-01T00:00:00",
            "2023-01-01T24:00:00Z",
            "9999-12-31T23:59:59-01:00",
            "0000-12-31T23:59:59Z",
            "2023-01-01T00:00:00Zx",
            "2023-01-01t00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
